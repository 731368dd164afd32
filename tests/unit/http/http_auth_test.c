/* http_auth_test — the Host check that keeps DNS rebinding out when the
 * server runs without a token: loopback names, the bind address and IP
 * literals pass, any other name is refused. Token, cookie and CSRF checks
 * run against the live server in http_test.c. */
#include "http/http_auth.h"

#include "harness.h"

static void test_host_allowed(void)
{
    CHECK(http_auth_host_allowed(NULL, "127.0.0.1")); /* HTTP/1.0: no Host */
    CHECK(http_auth_host_allowed("localhost:8080", "127.0.0.1"));
    CHECK(http_auth_host_allowed("LOCALHOST", "127.0.0.1"));
    CHECK(http_auth_host_allowed("127.0.0.1:8080", "127.0.0.1"));
    CHECK(http_auth_host_allowed("10.1.2.3", "0.0.0.0"));
    CHECK(http_auth_host_allowed("[::1]:8080", "127.0.0.1"));
    CHECK(http_auth_host_allowed("node17:8080", "node17"));
    CHECK(!http_auth_host_allowed("evil.example:8080", "127.0.0.1"));
    CHECK(!http_auth_host_allowed("localhost.evil.example", "127.0.0.1"));
    CHECK(!http_auth_host_allowed("", "127.0.0.1"));
    CHECK(!http_auth_host_allowed(":8080", "127.0.0.1"));
}

int main(void)
{
    RUN(test_host_allowed);
    return harness_done("http_auth");
}

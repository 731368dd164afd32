/* http_parse_test — the HTTP layer's pure helpers: percent-decoding,
 * request targets and query parameters, Accept-Encoding and constant-time
 * token comparison. */
#include "http/http_parse.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_decode(void)
{
    char *o;
    struct err e;

    CHECK_EQ_INT(http_url_decode("a%20b+c%2Fd", 11, 1, &o, &e), 0);
    CHECK_EQ_STR(o, "a b c/d");
    free(o);
    CHECK_EQ_INT(http_url_decode("a+b", 3, 0, &o, &e), 0);
    CHECK_EQ_STR(o, "a+b");
    free(o);
    CHECK_EQ_INT(http_url_decode("%zz", 3, 0, &o, &e), ERR_INVALID);
    CHECK_EQ_INT(http_url_decode("%4", 2, 0, &o, &e), ERR_INVALID);
    CHECK_EQ_INT(http_url_decode("%", 1, 0, &o, &e), ERR_INVALID);
    CHECK_EQ_INT(http_url_decode("a%00b", 5, 0, &o, &e), ERR_INVALID);
}

static void test_target(void)
{
    char *path, *v;
    const char *q;
    struct err e;

    CHECK_EQ_INT(http_target_split("/tb/api/runs?x=1&token=a%2Bb", &path, &q, &e), 0);
    CHECK_EQ_STR(path, "/tb/api/runs");
    CHECK_EQ_STR(q, "x=1&token=a%2Bb");
    CHECK_EQ_STR(http_strip_base("/tb", path), "/api/runs");
    CHECK_EQ_INT(http_query_get(q, "token", &v), 1);
    CHECK_EQ_STR(v, "a+b");
    free(v);
    CHECK_EQ_INT(http_query_get(q, "nope", &v), 0);
    v = http_query_without(q, "token");
    CHECK_EQ_STR(v, "x=1");
    free(v);
    v = http_query_without("token=1&a=%41&token&b=2&&", "token");
    CHECK_EQ_STR(v, "a=%41&b=2");
    free(v);
    CHECK_EQ_INT(http_query_get("flag&x=1", "flag", &v), 1);
    CHECK_EQ_STR(v, "");
    free(v);
    CHECK_EQ_INT(http_query_get("x=%zz", "x", &v), ERR_INVALID);
    free(path);
    CHECK_EQ_INT(http_target_split("/a%2Fb", &path, &q, &e), 0);
    CHECK_EQ_STR(path, "/a/b");
    CHECK(q == NULL);
    free(path);
    CHECK_EQ_INT(http_target_split("http://x/", &path, &q, &e), ERR_INVALID);
    CHECK_EQ_INT(http_target_split("*", &path, &q, &e), ERR_INVALID);

    CHECK_EQ_STR(http_strip_base("", "/x"), "/x");
    CHECK_EQ_STR(http_strip_base("/tb", "/tb"), "");
    CHECK_EQ_STR(http_strip_base("/tb", "/tb/"), "/");
    CHECK(http_strip_base("/tb", "/tbx/y") == NULL);
    CHECK(http_strip_base("/tb", "/") == NULL);
}

static void test_gzip_and_tokens(void)
{
    CHECK(http_accepts_gzip("gzip, deflate, br"));
    CHECK(http_accepts_gzip("deflate, GZIP;q=0.5"));
    CHECK(http_accepts_gzip("*"));
    CHECK(!http_accepts_gzip("gzip;q=0"));
    CHECK(!http_accepts_gzip("gzip; q=0.000, *"));
    CHECK(!http_accepts_gzip("*;q=0"));
    CHECK(!http_accepts_gzip("deflate, br"));
    CHECK(!http_accepts_gzip(NULL));
    CHECK(!http_accepts_gzip("gzipx"));

    CHECK(http_token_equal("abc123", "abc123"));
    CHECK(!http_token_equal("abc12", "abc123"));
    CHECK(!http_token_equal("abc1234", "abc123"));
    CHECK(!http_token_equal("abd123", "abc123"));
    CHECK(!http_token_equal("", ""));

}

int main(void)
{
    RUN(test_decode);
    RUN(test_target);
    RUN(test_gzip_and_tokens);
    return harness_done("http_parse");
}

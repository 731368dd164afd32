/* api_analyses_test — the ns parser behind /critpath's start and end (the
 * handlers themselves are driven over HTTP by
 * tests/integration/analyses_api.test.mjs): 19-digit epoch times, both
 * int64 limits exact, one past either refused, nothing but digits. */
#include "../../server/api_analyses.c"

#include "harness.h"

static void test_parse_ns(void)
{
    int64_t ns = 7;
    CHECK_EQ_INT(parse_ns("0", &ns), 0);
    CHECK_EQ_INT(ns, 0);
    CHECK_EQ_INT(parse_ns("1795344527679083192", &ns), 0);
    CHECK(ns == 1795344527679083192LL);
    CHECK_EQ_INT(parse_ns("9223372036854775807", &ns), 0);
    CHECK(ns == INT64_MAX);
    CHECK_EQ_INT(parse_ns("-9223372036854775808", &ns), 0);
    CHECK(ns == INT64_MIN);
    CHECK_EQ_INT(parse_ns("-12", &ns), 0);
    CHECK(ns == -12);
    static const char *bad[] = { "", "-", "+1", "1.5", "1e9", " 1", "1 ", "0x10", "9223372036854775808",
                                 "-9223372036854775809", "99999999999999999999", "00000000000000000001", "--1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ns = 7;
        CHECK(parse_ns(bad[i], &ns) < 0);
        CHECK(ns == 7); /* untouched on error */
    }
}

int main(void)
{
    RUN(test_parse_ns);
    return harness_done("api_analyses");
}

/* qparam_test — the pure parsers behind the API's query parameters:
 * integers in a range, times in µs read exactly, LIKE escaping. */
#include "qparam.h"

#include <stdlib.h>

#include "harness.h"

static void test_int(void)
{
    long long x = -1;
    CHECK_EQ_INT(qparam_parse_int("42", 0, 100, &x), 0);
    CHECK_EQ_INT(x, 42);
    CHECK_EQ_INT(qparam_parse_int("-3", -5, 5, &x), 0);
    CHECK_EQ_INT(x, -3);
    static const char *bad[] = { "", "-", "1.5", "x", " 1", "1 ", "+1", "101", "-1", "1234567890123456789" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(qparam_parse_int(bad[i], 0, 100, &x) < 0);
}

static void test_us(void)
{
    int64_t ns = 0;
    CHECK_EQ_INT(qparam_parse_us("4487348861342.787", &ns), 0);
    CHECK_EQ_INT(ns, 4487348861342787LL); /* exact past 2^53 */
    CHECK_EQ_INT(qparam_parse_us("1.5", &ns), 0);
    CHECK_EQ_INT(ns, 1500);
    CHECK_EQ_INT(qparam_parse_us("0.0005", &ns), 0);
    CHECK_EQ_INT(ns, 1); /* rounds half up on the fourth decimal */
    CHECK_EQ_INT(qparam_parse_us("-2", &ns), 0);
    CHECK_EQ_INT(ns, -2000);
    CHECK_EQ_INT(qparam_parse_us("1e3", &ns), 0);
    CHECK_EQ_INT(ns, 1000000);
    static const char *bad[] = { "", "inf", "nan", "0x10", " 1", "1e30", "1.2.3", "abc", "1e" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(qparam_parse_us(bad[i], &ns) < 0);
}

static void test_like(void)
{
    char *p = qparam_like("50%_a\\b");
    CHECK_EQ_STR(p, "%50\\%\\_a\\\\b%");
    free(p);
    p = qparam_like("");
    CHECK_EQ_STR(p, "%%");
    free(p);
}

int main(void)
{
    RUN(test_int);
    RUN(test_us);
    RUN(test_like);
    return harness_done("qparam");
}

/* qparam_test — the pure parsers behind the API's query parameters:
 * integers in a range (ns times over all of int64), times in µs read
 * exactly, LIKE escaping. */
#include "http/qparam.h"

#include <stdint.h>
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

/* ns times (critpath's start and end): 19-digit epoch times, both int64
 * limits exact, one past either refused, nothing but digits. */
static void test_ns(void)
{
    long long ns = 7;
    CHECK_EQ_INT(qparam_parse_int("0", INT64_MIN, INT64_MAX, &ns), 0);
    CHECK_EQ_INT(ns, 0);
    CHECK_EQ_INT(qparam_parse_int("1795344527679083192", INT64_MIN, INT64_MAX, &ns), 0);
    CHECK(ns == 1795344527679083192LL);
    CHECK_EQ_INT(qparam_parse_int("9223372036854775807", INT64_MIN, INT64_MAX, &ns), 0);
    CHECK(ns == INT64_MAX);
    CHECK_EQ_INT(qparam_parse_int("-9223372036854775808", INT64_MIN, INT64_MAX, &ns), 0);
    CHECK(ns == INT64_MIN);
    CHECK_EQ_INT(qparam_parse_int("-12", INT64_MIN, INT64_MAX, &ns), 0);
    CHECK(ns == -12);
    static const char *bad[] = { "", "-", "+1", "1.5", "1e9", " 1", "1 ", "0x10", "9223372036854775808",
                                 "-9223372036854775809", "99999999999999999999", "00000000000000000001", "--1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ns = 7;
        CHECK(qparam_parse_int(bad[i], INT64_MIN, INT64_MAX, &ns) < 0);
        CHECK(ns == 7); /* untouched on error */
    }
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


/* Words: an array of words or a table of structs with a key member. */
static void test_word(void)
{
    static const char *const words[] = { "asc", "desc" };
    static const struct { const char *key; int v; } table[] = { { "json", 0 }, { "csv", 1 }, { "html", 2 } };
    size_t i = 9;
    CHECK_EQ_INT(qparam_parse_word("desc", words, sizeof *words, 2, &i), 0);
    CHECK_EQ_INT(i, 1);
    CHECK_EQ_INT(qparam_parse_word("html", &table[0].key, sizeof table[0], 3, &i), 0);
    CHECK_EQ_INT(i, 2);
    CHECK_EQ_INT(qparam_parse_word("DESC", words, sizeof *words, 2, &i), -1);
    CHECK_EQ_INT(qparam_parse_word("", &table[0].key, sizeof table[0], 3, &i), -1);
}

int main(void)
{
    RUN(test_int);
    RUN(test_ns);
    RUN(test_us);
    RUN(test_word);
    return harness_done("qparam");
}

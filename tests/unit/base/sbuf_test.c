/* sbuf_test — growable text: appends across reallocations, printf past the
 * stack buffer, exact µs from ns, CSV quoting and the formula guard. */
#include "base/sbuf.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_growth_and_printf(void)
{
    struct sbuf b = { 0 };
    for (int i = 0; i < 1000; i++) sbuf_add(&b, "ab");
    CHECK_EQ_INT(b.n, 2000);
    CHECK_EQ_INT(strlen(b.p), 2000);
    free(b.p);
    struct sbuf c = { 0 };
    char big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    sbuf_printf(&c, "%s|%d", big, 7);
    CHECK_EQ_INT(c.n, 299 + 2);
    CHECK_EQ_STR(c.p + 299, "|7");
    free(c.p);
}

static void test_int(void)
{
    static const struct { int64_t v; int us; const char *want; } cases[] = {
        { 0, 0, "0" }, { -42, 0, "-42" }, { 1234567, 1, "1234.567" }, { 5, 1, "0.005" }, { -5, 1, "-0.005" },
        { 1000, 1, "1.000" }, { INT64_MAX, 0, "9223372036854775807" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sbuf b = { 0 };
        sbuf_int(&b, cases[i].v, cases[i].us);
        CHECK_EQ_STR(b.p, cases[i].want);
        free(b.p);
    }
}

static void test_csv(void)
{
    static const struct { const char *in, *want; } cases[] = {
        { "aten::mm", "aten::mm" },
        { "a,b", "\"a,b\"" },
        { "say \"hi\"", "\"say \"\"hi\"\"\"" },
        { "=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\"" },
        { "-1", "\"'-1\"" },
        { "line\nbreak", "\"line\nbreak\"" },
        { "", "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sbuf b = { 0 };
        sbuf_csv(&b, cases[i].in);
        CHECK_EQ_STR(b.p ? b.p : "", cases[i].want);
        free(b.p);
    }
}

int main(void)
{
    RUN(test_growth_and_printf);
    RUN(test_int);
    RUN(test_csv);
    return harness_done("sbuf");
}

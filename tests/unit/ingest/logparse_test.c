/* logparse_test — timestamps in every documented form, JSON lines and
 * their fields, continuation lines, and the bounds that refuse a body. */
#include "ingest/logparse.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* 2026-11-26T06:00:00Z */
#define T0 1795672800LL
#define NS 1000000000LL

static int64_t ts_of(const char *s, int tz)
{
    int64_t ns = -1;
    size_t used;
    if (!logparse_timestamp(s, strlen(s), tz, &ns, &used)) return -1;
    return ns;
}

static void test_iso(void)
{
    CHECK_EQ_INT(ts_of("2026-11-26T06:00:00Z", 0), T0 * NS);
    CHECK_EQ_INT(ts_of("2026-11-26 06:00:00 INFO x", 0), T0 * NS);
    CHECK_EQ_INT(ts_of("2026-11-26T06:00:00.5", 0), T0 * NS + 500000000);
    CHECK_EQ_INT(ts_of("2026-11-26 06:00:00,123 - INFO", 0), T0 * NS + 123000000);
    CHECK_EQ_INT(ts_of("2026-11-26T08:00:00.000001+02:00", 0), T0 * NS + 1000);
    CHECK_EQ_INT(ts_of("2026-11-26T01:30:00-0430 x", 0), T0 * NS);
    CHECK_EQ_INT(ts_of("[2026-11-26 06:00:00] step 1", 0), T0 * NS);
    CHECK_EQ_INT(ts_of("2026-11-26 07:00:00 x", 3600), T0 * NS); /* zone-less, caller's offset */
    CHECK_EQ_INT(ts_of("2026-11-26T06:00:00.123456789123Z", 0), T0 * NS + 123456789);
    CHECK_EQ_INT(ts_of("2026-13-26 06:00:00", 0), -1);
    CHECK_EQ_INT(ts_of("2026-11-26 06:00", 0), -1);
    CHECK_EQ_INT(ts_of("[2026-11-26 06:00:00 no bracket", 0), -1);
    CHECK_EQ_INT(ts_of("Traceback (most recent call last):", 0), -1);
}

static void test_unix(void)
{
    CHECK_EQ_INT(ts_of("1795672800 x", 0), T0 * NS);
    CHECK_EQ_INT(ts_of("1795672800.25 loss", 0), T0 * NS + 250000000);
    CHECK_EQ_INT(ts_of("1795672800123 ms", 0), T0 * NS + 123000000);
    CHECK_EQ_INT(ts_of("1795672800123456 us", 0), T0 * NS + 123456000);
    CHECK_EQ_INT(ts_of("1795672800123456789 ns", 0), T0 * NS + 123456789);
    CHECK_EQ_INT(ts_of("1795672800123.5 ms", 0), T0 * NS + 123500000);
    CHECK_EQ_INT(ts_of("12 steps done", 0), -1);
    CHECK_EQ_INT(ts_of("17956728001 eleven digits", 0), -1);
    CHECK_EQ_INT(ts_of("1795672800abc", 0), -1);
    CHECK_EQ_INT(ts_of("99999999999999999999 too big", 0), -1);
}

static void test_json_and_continuation(void)
{
    const char *in = "banner without time\n"
                     "{\"ts\": 1795672800.12, \"step\": 12, \"loss\": 2.31, \"msg\": \"hi\", \"rank\": 3,"
                     " \"job_id\": 4242, \"phase\": \"train\", \"nested\": {\"a\": 1}}\r\n"
                     "\n"
                     "2026-11-26T06:00:01Z Traceback (most recent call last):\n"
                     "  File \"x.py\", line 1\n"
                     "{\"no_ts\": 1}\n"
                     "1795644002 bad \xff byte\n";
    struct logparse_result r;
    struct err e;
    REQUIRE(logparse_parse(in, strlen(in), 0, &r, &e) == 0);
    REQUIRE(r.n == 3);
    CHECK_EQ_INT(r.skipped, 1);
    CHECK_EQ_INT(r.v[0].ts_ns, T0 * NS + 120000000);
    CHECK_EQ_STR(r.v[0].text, "hi");
    CHECK_EQ_INT(r.v[0].rank, 3);
    CHECK_EQ_STR(r.v[0].job, "4242");
    CHECK(json_real_value(json_object_get(r.v[0].fields, "loss")) == 2.31);
    CHECK_EQ_INT(json_integer_value(json_object_get(r.v[0].fields, "step")), 12);
    CHECK_EQ_STR(json_string_value(json_object_get(r.v[0].fields, "phase")), "train");
    CHECK(json_object_get(r.v[0].fields, "nested") == NULL);
    CHECK(json_object_get(r.v[0].fields, "ts") == NULL);
    CHECK_EQ_STR(r.v[1].text, "Traceback (most recent call last):\n  File \"x.py\", line 1\n{\"no_ts\": 1}");
    CHECK_EQ_INT(r.v[1].rank, -1);
    CHECK(r.v[1].fields == NULL);
    CHECK_EQ_STR(r.v[2].text, "bad \xef\xbf\xbd byte");
    logparse_free(&r);
}

static void test_bounds(void)
{
    struct logparse_result r;
    struct err e;
    size_t n = LOGPARSE_LINE_MAX + 20;
    char *big = malloc(n + 1);
    memcpy(big, "1795672800 ", 11);
    memset(big + 11, 'x', n - 11);
    big[n] = '\0';
    CHECK(logparse_parse(big, n, 0, &r, &e) == ERR_INVALID);
    CHECK(strstr(e.msg, "line 1 is over") != NULL);
    CHECK_EQ_INT(r.n, 0);
    free(big);
    CHECK(logparse_parse("1795672800 a\0b", 14, 0, &r, &e) == ERR_INVALID);
    CHECK(strstr(e.msg, "NUL") != NULL);
    /* a long traceback stops growing, counted */
    struct { char *p; size_t n; } s = { malloc(400000), 0 };
    s.n = (size_t)sprintf(s.p, "1795672800 start\n");
    for (int i = 0; i < 10000; i++) s.n += (size_t)sprintf(s.p + s.n, "  frame %05d of a long traceback\n", i);
    REQUIRE(logparse_parse(s.p, s.n, 0, &r, &e) == 0);
    CHECK_EQ_INT(r.n, 1);
    CHECK(strlen(r.v[0].text) <= LOGPARSE_TEXT_MAX);
    CHECK(r.truncated > 0);
    logparse_free(&r);
    free(s.p);
    /* too many fields */
    struct { char p[4096]; size_t n; } f = { "{\"ts\": 1795672800", 0 };
    f.n = strlen(f.p);
    for (int i = 0; i <= LOGPARSE_FIELDS_MAX; i++) f.n += (size_t)sprintf(f.p + f.n, ", \"f%d\": %d", i, i);
    f.n += (size_t)sprintf(f.p + f.n, "}\n");
    CHECK(logparse_parse(f.p, f.n, 0, &r, &e) == ERR_INVALID);
    CHECK(strstr(e.msg, "fields") != NULL);
}

static void test_tz(void)
{
    int off;
    struct err e;
    CHECK(logparse_tz("+02:00", &off, &e) == 0 && off == 7200);
    CHECK(logparse_tz("-0530", &off, &e) == 0 && off == -19800);
    CHECK(logparse_tz("Z", &off, &e) == 0 && off == 0);
    CHECK(logparse_tz("2h", &off, &e) == ERR_INVALID);
}

int main(void)
{
    RUN(test_iso);
    RUN(test_unix);
    RUN(test_json_and_continuation);
    RUN(test_bounds);
    RUN(test_tz);
    return harness_done("logparse");
}

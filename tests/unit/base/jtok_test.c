/* jtok_test.c — the streaming JSON tokenizer: values cut across window
 * refills at every byte offset, escapes and backslash runs, nested values,
 * \u escapes and surrogates, NaN/Infinity, µs -> ns number
 * parsing, truncation, the max_value limit and empty input. */
#include <math.h>
#include <stdint.h>

#include "harness.h"
#include "base/jtok.h"
#include "base/utf8.h"
#include "base/xmalloc.h"

/* ====================================================================== */
/* fill callbacks                                                         */

/* Hands out a buffer in pieces: first `first` bytes (0 = no special first
 * piece), then `chunk` bytes per call, or random sizes when chunk == 0. */
struct feed {
    const char *d;
    size_t n, at;
    size_t first, chunk;
    unsigned seed;
    int calls;
    int fail_at; /* call number that fails with ERR_IO; 0 = never */
};

static int feed_fill(void *ctx, char *dst, size_t cap, size_t *got, struct err *e)
{
    struct feed *f = ctx;
    size_t k = f->n - f->at;

    f->calls++;
    if (f->fail_at && f->calls == f->fail_at) return err_set(e, ERR_IO, "disk read error (test)");
    if (f->first && f->at == 0) {
        if (k > f->first) k = f->first;
    } else if (f->chunk) {
        if (k > f->chunk) k = f->chunk;
    } else {
        f->seed = f->seed * 1103515245u + 12345u;
        size_t c = 1 + (f->seed >> 8) % 300;
        if (k > c) k = c;
    }
    if (k > cap) k = cap;
    memcpy(dst, f->d + f->at, k);
    f->at += k;
    *got = k;
    return 0;
}

static void feed_init(struct feed *f, const char *d, size_t n)
{
    memset(f, 0, sizeof *f);
    f->d = d;
    f->n = n;
    f->chunk = n ? n : 1;
}

/* t reading d through f in 1-byte pieces (mode 0), random ones (1) or
 * whole (2). */
static void feed_open(struct feed *f, struct jtok *t, const char *d, size_t n, int mode, unsigned seed)
{
    feed_init(f, d, n);
    if (mode < 2) f->chunk = mode == 0 ? 1 : 0;
    f->seed = seed;
    jtok_init(t, feed_fill, f, 4u << 20);
}

/* ====================================================================== */
/* a walker: the reader calls the importer makes, written as a transcript */

struct text {
    char *s;
    size_t n, cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        t->cap = (t->n + n + 1) * 2;
        t->s = xrealloc(t->s, t->cap);
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

/* Walks a document: the top-level '{' and every '[' are entered (their
 * members are read one value at a time, like the importer reads
 * traceEvents), every other value is read whole. Each value is
 * written as "<offset>:<bytes>\n". Returns the reader's final result. */
static int walk(struct feed *f, size_t max_value, struct text *out)
{
    struct jtok t;
    struct err e;
    int rc = 0, c;

    jtok_init(&t, feed_fill, f, max_value);
    for (;;) {
        if ((rc = jtok_peek(&t, &c, &e)) != 0 || c < 0) break;
        if (c == '[' || c == ']' || c == ',' || c == ':' || c == '}' || (c == '{' && jtok_offset(&t) == 0)) {
            if ((rc = jtok_expect(&t, (char)c, "punctuation", &e)) != 0) break;
            text_add(out, (const char *)&(char){ (char)c }, 1);
            continue;
        }
        const char *p;
        size_t n;
        int tr;
        char pre[32];
        uint64_t off = jtok_offset(&t);
        if ((rc = jtok_value_extent(&t, &p, &n, &tr, &e)) != 0) break;
        snprintf(pre, sizeof pre, "%llu:", (unsigned long long)off);
        text_add(out, pre, strlen(pre));
        text_add(out, p, n);
        text_add(out, "\n", 1);
    }
    jtok_free(&t);
    return rc;
}

/* A document with everything that can trip a splitter: escaped quotes and
 * braces inside strings, backslash runs before quotes, nested args, \u
 * escapes, NaN/Infinity, numbers of every shape, CRLF whitespace. */
static const char doc[] =
    "{\"traceEvents\":[\r\n"
    " {\"name\":\"a\\\"}{[\\\\\",\"args\":{\"x\":[1,2,{\"y\":\"\\\\\\\"]\"}],\"z\":{}},\"ts\":1.5},\n"
    " \"str\\\\\\\\\", \"\\\\\", \"q\\\"\", 12345, -1.5e3, true, false, null, NaN, -Infinity, Infinity,\n"
    " {\"k\":\"\\u00e9\\ud83d\\ude00 \\ud800\"}, [[[]]], {\"deep\":[[[[{\"a\":[{\"b\":\"}]\"}]}]]]]},\n"
    " \"\", {}, [], 0, 1e-3 ],\t\"after\": \"tail\"}";

static void test_split_every_offset(void)
{
    size_t n = strlen(doc);
    struct feed f;
    struct text ref = { 0 };

    feed_init(&f, doc, n);
    REQUIRE(walk(&f, 0, &ref) == 0);
    CHECK(strstr(ref.s, "\"str\\\\\\\\\"") != NULL);
    CHECK(strstr(ref.s, "{\"k\":\"\\u00e9") != NULL);
    CHECK(strstr(ref.s, "\n:") != NULL); /* the trailing member was reached */

    int mismatches = 0;
    for (size_t k = 1; k < n; k++) {
        struct text got = { 0 };
        feed_init(&f, doc, n);
        f.first = k;
        int rc = walk(&f, 0, &got);
        if (rc != 0 || got.n != ref.n || memcmp(got.s, ref.s, ref.n) != 0) {
            if (!mismatches++) fprintf(stderr, "split at %zu differs:\n%s\n---\n%s\n", k, got.s, ref.s);
        }
        free(got.s);
    }
    CHECK_EQ_INT(mismatches, 0);
    free(ref.s);
}

static void test_split_one_byte_and_random(void)
{
    size_t n = strlen(doc);
    struct feed f;
    struct text ref = { 0 }, one = { 0 };

    feed_init(&f, doc, n);
    REQUIRE(walk(&f, 0, &ref) == 0);

    feed_init(&f, doc, n);
    f.chunk = 1;
    CHECK_EQ_INT(walk(&f, 0, &one), 0);
    CHECK(one.n == ref.n && memcmp(one.s, ref.s, ref.n) == 0);
    CHECK(f.calls > (int)n); /* really one byte per call */
    free(one.s);

    for (unsigned seed = 1; seed <= 200; seed++) {
        struct text got = { 0 };
        feed_init(&f, doc, n);
        f.chunk = 0;
        f.seed = seed;
        int rc = walk(&f, 0, &got);
        CHECK(rc == 0 && got.n == ref.n && memcmp(got.s, ref.s, ref.n) == 0);
        free(got.s);
    }
    free(ref.s);
}

/* A value bigger than the initial window: the window must grow and still
 * hold the value whole, however the input arrives. */
static void test_value_larger_than_window(void)
{
    size_t big = (1u << 20) + 200000;
    char *d = xmalloc(big + 64);
    size_t n = 0;

    n += (size_t)sprintf(d, "[\"");
    for (size_t i = 0; i < big; i++) d[n++] = (char)('a' + i % 26);
    n += (size_t)sprintf(d + n, "\\\"\", 7]");

    for (int mode = 0; mode < 2; mode++) {
        struct feed f;
        struct jtok t;
        struct err e;
        const char *p;
        size_t vn;
        int tr;

        feed_open(&f, &t, d, n, mode, 42);
        CHECK_EQ_INT(jtok_expect(&t, '[', "'['", &e), 0);
        CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), 0);
        CHECK_EQ_INT(vn, big + 4);
        CHECK(vn == big + 4 && p[0] == '"' && p[vn - 1] == '"' && p[vn - 2] == '"' && p[vn - 3] == '\\');
        CHECK_EQ_INT(jtok_expect(&t, ',', "','", &e), 0);
        CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), 0);
        CHECK(vn == 1 && p[0] == '7');
        CHECK_EQ_INT(jtok_offset(&t), n - 1);
        jtok_free(&t);
    }
    free(d);
}

static void test_too_large(void)
{
    size_t big = 3u << 20;
    char *d = xmalloc(big + 16);
    struct feed f;
    struct jtok t;
    struct err e;
    const char *p;
    size_t vn;
    int tr;

    d[0] = '{';
    d[1] = '"';
    memset(d + 2, 'x', big);
    memcpy(d + 2 + big, "\":1}", 4);
    feed_init(&f, d, big + 6);
    f.chunk = 65536;
    jtok_init(&t, feed_fill, &f, 1u << 20);
    CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), ERR_TOO_LARGE);
    CHECK_EQ_INT(e.code, ERR_TOO_LARGE);
    CHECK(strstr(e.msg, "larger than 1 MiB") != NULL);
    CHECK_EQ_INT(tr, 0);
    jtok_free(&t);

    /* exactly max_value bytes still fits */
    size_t fit = 1u << 20;
    d[0] = '"';
    memset(d + 1, 'y', fit - 2);
    d[fit - 1] = '"';
    feed_init(&f, d, fit);
    f.chunk = 4096;
    jtok_init(&t, feed_fill, &f, 1u << 20);
    CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), 0);
    CHECK_EQ_INT(vn, fit);
    jtok_free(&t);
    free(d);
}

static void test_truncated(void)
{
    static const char *cases[] = { "{\"a\":[1,2", "\"abc", "\"abc\\", "[{\"x\":\"}\"", "{", "\"\\\"" };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (size_t chunk = 1; chunk <= 2; chunk++) {
            struct feed f;
            struct jtok t;
            struct err e;
            const char *p;
            size_t vn;
            int tr = 0;
            feed_init(&f, cases[i], strlen(cases[i]));
            f.chunk = chunk == 1 ? 1 : strlen(cases[i]);
            jtok_init(&t, feed_fill, &f, 0);
            CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), ERR_INVALID);
            CHECK_EQ_INT(tr, 1);
            CHECK(strstr(e.msg, "truncated") != NULL);
            jtok_free(&t);
        }
    }
    /* a number ends at the end of input: complete, not truncated */
    struct feed f;
    struct jtok t;
    struct err e;
    const char *p;
    size_t vn;
    int tr = 5, c;
    feed_init(&f, "  -12.5e3", 9);
    f.chunk = 1;
    jtok_init(&t, feed_fill, &f, 0);
    CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), 0);
    CHECK(vn == 7 && memcmp(p, "-12.5e3", 7) == 0);
    CHECK_EQ_INT(tr, 0);
    CHECK_EQ_INT(jtok_peek(&t, &c, &e), 0);
    CHECK_EQ_INT(c, -1);
    /* expect at the end of input says so */
    CHECK_EQ_INT(jtok_expect(&t, ']', "']'", &e), ERR_INVALID);
    CHECK(strstr(e.msg, "truncated") != NULL);
    jtok_free(&t);
}

static void test_empty_input(void)
{
    static const char *cases[] = { "", " \n\r\t " };
    for (int i = 0; i < 2; i++) {
        struct feed f;
        struct jtok t;
        struct err e;
        const char *p;
        size_t vn;
        int tr = 0, c = 0;
        feed_init(&f, cases[i], strlen(cases[i]));
        jtok_init(&t, feed_fill, &f, 0);
        CHECK_EQ_INT(jtok_peek(&t, &c, &e), 0);
        CHECK_EQ_INT(c, -1);
        CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), ERR_INVALID);
        CHECK_EQ_INT(tr, 1);
        CHECK_EQ_INT(jtok_offset(&t), strlen(cases[i]));
        jtok_free(&t);
    }
    /* the span side: nothing to parse */
    const char *cur = "";
    struct jtok_val v;
    struct err e;
    CHECK_EQ_INT(jtok_span_value(&cur, cur, &v, &e), ERR_INVALID);
    CHECK_EQ_INT(utf8_valid("", 0), 1);
    char out[1];
    CHECK_EQ_INT(jtok_unescape("", 0, out), 0);
}

static void test_fill_error(void)
{
    struct feed f;
    struct jtok t;
    struct err e;
    const char *p;
    size_t vn;
    int tr;
    feed_init(&f, "[1,2,3]", 7);
    f.chunk = 3;
    f.fail_at = 2;
    jtok_init(&t, feed_fill, &f, 0);
    CHECK_EQ_INT(jtok_expect(&t, '[', "'['", &e), 0);
    CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), 0); /* "1" ends at ',' in the first piece */
    CHECK_EQ_INT(jtok_expect(&t, ',', "','", &e), 0);
    CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), ERR_IO);
    CHECK(strstr(e.msg, "disk read error") != NULL);
    jtok_free(&t);
}

/* A delimiter where a value belongs is an error, never an empty value. */
static void test_missing_value(void)
{
    static const char *cases[] = { ",1]", "]", "}" };
    for (int i = 0; i < 3; i++) {
        struct feed f;
        struct jtok t;
        struct err e;
        const char *p;
        size_t vn;
        int tr = 7;
        feed_init(&f, cases[i], strlen(cases[i]));
        jtok_init(&t, feed_fill, &f, 0);
        CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), ERR_INVALID);
        CHECK_EQ_INT(tr, 0);
        CHECK(strstr(e.msg, "expected a value") != NULL);
        CHECK_EQ_INT(jtok_offset(&t), 0); /* nothing consumed */
        jtok_free(&t);
    }
}

static void test_expect_message(void)
{
    struct feed f;
    struct jtok t;
    struct err e;
    feed_init(&f, "\n  x", 4);
    jtok_init(&t, feed_fill, &f, 0);
    CHECK_EQ_INT(jtok_expect(&t, '{', "'{'", &e), ERR_INVALID);
    CHECK(strstr(e.msg, "byte 3") != NULL && strstr(e.msg, "found 'x'") != NULL);
    jtok_free(&t);
}

/* ====================================================================== */
/* spans                                                                  */

static void test_span_members(void)
{
    static const char obj[] = "{ \"a\" : 1, \"b\":\"x\\\"y}\", \"c\":{\"d\":[1,{\"e\":\"}]\"}]},\"f\":[],\"g\":NaN,"
                              "\"h\":-Infinity,\"i\":true,\"j\":null,\"k\":false,\"l\":-0.5e-3,\"\\u006d\":\"\\\\\" }";
    struct {
        const char *key;
        enum jtok_type type;
        const char *text;
        int escaped;
    } want[] = {
        { "a", JT_NUMBER, "1", 0 },           { "b", JT_STRING, "x\\\"y}", 1 },
        { "c", JT_OBJECT, "{\"d\":[1,{\"e\":\"}]\"}]}", 0 },
        { "f", JT_ARRAY, "[]", 0 },           { "g", JT_NAN, "NaN", 0 },
        { "h", JT_NAN, "-Infinity", 0 },      { "i", JT_TRUE, "true", 0 },
        { "j", JT_NULL, "null", 0 },          { "k", JT_FALSE, "false", 0 },
        { "l", JT_NUMBER, "-0.5e-3", 0 },     { "m", JT_STRING, "\\\\", 1 },
    };
    size_t n = strlen(obj);
    char *copy = xmalloc(n); /* exact size: ASan catches reads past the span */
    memcpy(copy, obj, n);
    for (int start = 0; start < 2; start++) {
        const char *cur = copy + start, *end = copy + n; /* at '{' or just after */
        struct jtok_val k, v;
        struct err e;
        size_t i = 0;
        int rc;
        while ((rc = jtok_span_next_member(&cur, end, &k, &v, &e)) == 1) {
            REQUIRE(i < sizeof want / sizeof want[0]);
            CHECK(jtok_str_eq(&k, want[i].key));
            CHECK_EQ_INT(v.type, want[i].type);
            CHECK(v.n == strlen(want[i].text) && memcmp(v.p, want[i].text, v.n) == 0);
            if (v.type == JT_STRING) CHECK_EQ_INT(v.escaped, want[i].escaped);
            i++;
        }
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT(i, sizeof want / sizeof want[0]);
        CHECK(cur == end);
    }
    free(copy);

    /* empty object */
    const char *cur = "{ }", *end = cur + 3;
    struct jtok_val k, v;
    struct err e;
    CHECK_EQ_INT(jtok_span_next_member(&cur, end, &k, &v, &e), 0);
}

/* next_key + a value read by the caller + member_end walk the members
 * next_member walks, leaving the cursor where it does; a nested value can
 * be walked in place (its end found by its own members). */
static void test_span_keys(void)
{
    static const char obj[] = "{ \"a\" : 1, \"args\" : { \"x\" : [1,{\"y\":\"}\"}], \"z\":\"q\" } ,\"b\":\"}\" }";
    size_t n = strlen(obj);
    char *copy = xmalloc(n);
    memcpy(copy, obj, n);
    const char *end = copy + n, *c1 = copy, *c2 = copy;
    struct jtok_val k1, v1, k2, v2;
    struct err e;
    int r1, members = 0, inner = 0;
    while ((r1 = jtok_span_next_member(&c1, end, &k1, &v1, &e)) == 1) {
        REQUIRE(jtok_span_next_key(&c2, end, &k2, &e) == 1);
        CHECK(k1.p == k2.p && k1.n == k2.n);
        /* at the value, past the ':' and the spaces (a string's text starts after its quote) */
        CHECK(c2 == v1.p - (v1.type == JT_STRING));
        if (jtok_str_eq(&k2, "args")) { /* walked member by member: the same end as the skip */
            const char *a0 = c2;
            while (jtok_span_next_member(&c2, end, &k2, &v2, &e) == 1) inner++;
            CHECK(c2 == a0 + v1.n);
        } else {
            REQUIRE(jtok_span_value(&c2, end, &v2, &e) == 0);
            CHECK(v2.p == v1.p && v2.n == v1.n && v2.type == v1.type);
        }
        CHECK_EQ_INT(jtok_span_member_end(&c2, end, &e), 0);
        CHECK(c2 == c1 && (*c2 == ',' || *c2 == '}'));
        members++;
    }
    CHECK_EQ_INT(r1, 0);
    CHECK_EQ_INT(jtok_span_next_key(&c2, end, &k2, &e), 0);
    CHECK(c2 == c1 && c1 == end);
    CHECK_EQ_INT(members, 3);
    CHECK_EQ_INT(inner, 2);
    /* member_end wants ',' or '}' after the value, next_key ':' after the key */
    const char *cur = "1 2", *bad_end = cur + 3;
    cur++;
    CHECK_EQ_INT(jtok_span_member_end(&cur, bad_end, &e), ERR_INVALID);
    cur = "{\"a\" 1}";
    CHECK_EQ_INT(jtok_span_next_key(&cur, cur + 7, &k1, &e), ERR_INVALID);
    free(copy);
}

/* The window holds what was read and not consumed; consuming moves the
 * cursor as a reader would. */
static void test_window(void)
{
    static const char text[] = "[{\"a\":1},{\"b\":2}]";
    struct feed f;
    struct jtok t;
    struct err e;
    const char *p, *end, *q;
    size_t n;
    int c;
    feed_open(&f, &t, text, strlen(text), 2, 1);
    REQUIRE(jtok_expect(&t, '[', "'['", &e) == 0);
    REQUIRE(jtok_peek(&t, &c, &e) == 0 && c == '{');
    jtok_window(&t, &p, &end);
    CHECK(end - p == (ptrdiff_t)strlen(text) - 1 && *p == '{');
    jtok_consume(&t, 7);
    CHECK_EQ_INT(jtok_offset(&t), 8);
    REQUIRE(jtok_expect(&t, ',', "','", &e) == 0);
    REQUIRE(jtok_value_extent(&t, &q, &n, NULL, &e) == 0);
    CHECK(n == 7 && memcmp(q, "{\"b\":2}", 7) == 0);
    jtok_free(&t);
}

static void test_span_errors(void)
{
    static const char *bad[] = { "{\"a\"}", "{\"a\":}", "{\"a\":1 \"b\":2}", "{\"a\":\"x", "{\"a\":[1,2",
                                 "{a:1}", "{\"a\":tru}", "{\"a\":{\"b\":\"\\", "{\"a\":1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = strlen(bad[i]);
        char *copy = xmalloc(n);
        memcpy(copy, bad[i], n);
        const char *cur = copy, *end = copy + n;
        struct jtok_val k, v;
        struct err e;
        int rc;
        while ((rc = jtok_span_next_member(&cur, end, &k, &v, &e)) == 1) {
        }
        if (rc != ERR_INVALID) fprintf(stderr, "case %zu: %s -> %d\n", i, bad[i], rc);
        CHECK_EQ_INT(rc, ERR_INVALID);
        CHECK(strstr(e.msg, "invalid JSON") != NULL);
        free(copy);
    }
}

/* Backslash runs before a quote: an even run ends the string, an odd one
 * escapes the quote. */
static void test_backslash_runs(void)
{
    static const struct {
        const char *json;  /* a string value with its quotes */
        size_t body;       /* body length */
        const char *decoded;
    } cases[] = {
        { "\"a\\\\\"", 3, "a\\" },
        { "\"a\\\\\\\"\"", 5, "a\\\"" },
        { "\"\\\\\\\\\"", 4, "\\\\" },
        { "\"\\\\\\\\\\\"b\"", 7, "\\\\\"b" },
        { "\"\\\"\\\\\"", 4, "\"\\" },
        { "\"x\\\\\\\\\\\\\\\\\"", 9, "x\\\\\\\\" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s,\"next\"", cases[i].json);
        size_t n = strlen(buf);
        const char *cur = buf;
        struct jtok_val v;
        struct err e;
        CHECK_EQ_INT(jtok_span_value(&cur, buf + n, &v, &e), 0);
        CHECK_EQ_INT(v.type, JT_STRING);
        CHECK_EQ_INT(v.n, cases[i].body);
        CHECK_EQ_INT(v.escaped, 1);
        CHECK(*cur == ',');
        char out[64];
        size_t m = jtok_unescape(v.p, v.n, out);
        CHECK(m == strlen(cases[i].decoded) && memcmp(out, cases[i].decoded, m) == 0);

        /* the window reader agrees on where the string ends */
        struct feed f;
        struct jtok t;
        const char *p;
        size_t vn;
        int tr;
        feed_init(&f, buf, n);
        f.chunk = 1;
        jtok_init(&t, feed_fill, &f, 0);
        CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), 0);
        CHECK_EQ_INT(vn, cases[i].body + 2);
        jtok_free(&t);
    }
}

static void test_deep_nesting(void)
{
    size_t depth = 100000, k = 0;
    char *d = xmalloc(8 * depth + 8);
    for (size_t i = 0; i < depth; i++) k += (size_t)sprintf(d + k, "{\"a\":[");
    for (size_t i = 0; i < depth; i++) k += (size_t)sprintf(d + k, "]}");
    const char *cur = d;
    struct jtok_val v;
    struct err e;
    CHECK_EQ_INT(jtok_span_value(&cur, d + k, &v, &e), 0);
    CHECK_EQ_INT(v.type, JT_OBJECT);
    CHECK_EQ_INT(v.n, k);
    cur = d;
    struct jtok_val key, val;
    CHECK_EQ_INT(jtok_span_next_member(&cur, d + k, &key, &val, &e), 1);
    CHECK(val.type == JT_ARRAY && val.n == k - 6); /* all but {"a": and } */

    struct feed f;
    struct jtok t;
    const char *p;
    size_t vn;
    int tr;
    feed_init(&f, d, k);
    f.chunk = 1000;
    jtok_init(&t, feed_fill, &f, 0);
    CHECK_EQ_INT(jtok_value_extent(&t, &p, &vn, &tr, &e), 0);
    CHECK_EQ_INT(vn, k);
    jtok_free(&t);
    free(d);
}

static void test_nan_infinity(void)
{
    static const struct {
        const char *text;
        int cls; /* 0 NaN, 1 +inf, -1 -inf */
    } cases[] = { { "NaN", 0 }, { "Infinity", 1 }, { "-Infinity", -1 } };
    for (size_t i = 0; i < 3; i++) {
        const char *cur = cases[i].text, *end = cur + strlen(cur);
        struct jtok_val v;
        struct err e;
        double d;
        int64_t x;
        CHECK_EQ_INT(jtok_span_value(&cur, end, &v, &e), 0);
        CHECK_EQ_INT(v.type, JT_NAN);
        CHECK(cur == end);
        CHECK_EQ_INT(jtok_to_double(&v, &d), 0);
        if (cases[i].cls == 0) CHECK(isnan(d));
        else CHECK(isinf(d) && (d > 0) == (cases[i].cls > 0));
        CHECK_EQ_INT(jtok_us_to_ns(v.p, v.n, &x), ERR_INVALID);
        CHECK(jtok_to_i64(&v, &x) != 0);
    }
    /* look-alikes are errors, not numbers */
    static const char *bad[] = { "Nan", "Inf", "-Inf", "nan" };
    for (size_t i = 0; i < 4; i++) {
        const char *cur = bad[i];
        struct jtok_val v;
        struct err e;
        int rc = jtok_span_value(&cur, bad[i] + strlen(bad[i]), &v, &e);
        CHECK(rc == ERR_INVALID || (v.type == JT_NUMBER && strcmp(bad[i], "-Inf") == 0));
    }
}

/* ====================================================================== */
/* strings                                                                */

static void test_unescape(void)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        { "plain", "plain" },
        { "a\\nb\\tc\\rd\\be\\ff", "a\nb\tc\rd\be\ff" },
        { "\\\"\\\\\\/", "\"\\/" },
        { "\\u00e9", "\xc3\xa9" },
        { "\\u20AC", "\xe2\x82\xac" },
        { "\\ud83d\\ude00", "\xf0\x9f\x98\x80" },       /* surrogate pair */
        { "\\uD83D\\uDE00x", "\xf0\x9f\x98\x80x" },     /* upper-case hex */
        { "\\ud800", "\xef\xbf\xbd" },                  /* lone high */
        { "\\udc00", "\xef\xbf\xbd" },                  /* lone low */
        { "\\ud800x", "\xef\xbf\xbdx" },
        { "\\ud83d\\u0041", "\xef\xbf\xbd" "A" },       /* high then non-low */
        { "\\ude00\\ud83d", "\xef\xbf\xbd\xef\xbf\xbd" }, /* reversed pair */
        { "\\u0000", "\xef\xbf\xbd" },                  /* NUL never reaches C strings */
        { "\\u0041\\u00", "A?00" },                     /* cut \u */
        { "\\uZZZZ", "?ZZZZ" },
        { "\\q", "q" },                                 /* unknown escape: the char */
        { "end\\", "end" },                             /* dangling backslash */
        { "<a&b>", "<a&b>" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].in);
        char *out = xmalloc(n ? n : 1); /* exactly n: decoding never grows */
        size_t m = jtok_unescape(cases[i].in, n, out);
        if (!(m == strlen(cases[i].out) && memcmp(out, cases[i].out, m) == 0))
            fprintf(stderr, "unescape case %zu (%s) gave %zu bytes\n", i, cases[i].in, m);
        CHECK(m == strlen(cases[i].out) && memcmp(out, cases[i].out, m) == 0);
        CHECK(m <= n);
        CHECK(utf8_valid(out, m));
        free(out);
    }
}

static void test_str_eq(void)
{
    struct jtok_val v = { JT_STRING, "n\\u0061me", 9, 1 };
    CHECK(jtok_str_eq(&v, "name"));
    CHECK(!jtok_str_eq(&v, "nam"));
    struct jtok_val w = { JT_STRING, "name", 4, 0 };
    CHECK(jtok_str_eq(&w, "name"));
    CHECK(!jtok_str_eq(&w, "names"));
    struct jtok_val num = { JT_NUMBER, "12", 2, 0 };
    CHECK(!jtok_str_eq(&num, "12"));
    /* a long escaped string that decodes to the literal */
    char lit[200], esc[1300];
    size_t k = 0;
    for (int i = 0; i < 199; i++) {
        lit[i] = (char)('a' + i % 26);
        k += (size_t)sprintf(esc + k, "\\u%04x", (unsigned)lit[i]);
    }
    lit[199] = '\0';
    struct jtok_val big = { JT_STRING, esc, k, 1 };
    CHECK(jtok_str_eq(&big, lit));
}


/* ====================================================================== */
/* numbers                                                                */

static void test_us_to_ns(void)
{
    static const struct {
        const char *s;
        int rc;
        int64_t ns;
    } cases[] = {
        { "123", 0, 123000 },
        { "123.456", 0, 123456 },
        { "123.4567", 0, 123457 },           /* rounded beyond 3 digits */
        { "123.4564", 0, 123456 },
        { "123.4565", 0, 123457 },
        { "123.45649999", 0, 123456 },
        { "123.4", 0, 123400 },
        { "0.001", 0, 1 },
        { "0.0004", 0, 0 },
        { "0.0005", 0, 1 },
        { "1.5e3", 0, 1500000 },
        { "1.5E3", 0, 1500000 },
        { "2e-3", 0, 2 },
        { "-2", 0, -2000 },
        { "-2.5", 0, -2500 },
        { "-123.4567", 0, -123457 },
        { "0", 0, 0 },
        { "-0", 0, 0 },
        /* a real epoch-µs timestamp with an ns fraction: a double would
         * lose the last digits, the integer path must not */
        { "1606910596297023.456", 0, 1606910596297023456LL },
        { "1606910596297023.457", 0, 1606910596297023457LL },
        { "4487348863622.036", 0, 4487348863622036LL },
        { "9223372036854775", 0, 9223372036854775000LL },
        { "9223372036854775.807", 0, INT64_MAX },
        { "9223372036854776", ERR_INVALID, 0 },   /* x1000 overflows */
        { "99999999999999999999", ERR_INVALID, 0 },
        { "1e400", ERR_INVALID, 0 },
        { "1e30", ERR_INVALID, 0 },
        { "-1e30", ERR_INVALID, 0 },
        { "NaN", ERR_INVALID, 0 },
        { "Infinity", ERR_INVALID, 0 },
        { "-Infinity", ERR_INVALID, 0 },
        { "", ERR_INVALID, 0 },
        { "-", ERR_INVALID, 0 },
        { "1.", ERR_INVALID, 0 },
        { "1.5x", ERR_INVALID, 0 },
        { "abc", ERR_INVALID, 0 },
        { "12 ", ERR_INVALID, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int64_t x = -777;
        int rc = jtok_us_to_ns(cases[i].s, strlen(cases[i].s), &x);
        if (rc != cases[i].rc || (rc == 0 && x != cases[i].ns))
            fprintf(stderr, "us_to_ns(\"%s\") = %d, %lld\n", cases[i].s, rc, (long long)x);
        CHECK_EQ_INT(rc, cases[i].rc);
        if (cases[i].rc == 0) CHECK_EQ_INT(x, cases[i].ns);
    }
    /* reads only n bytes: the digits after n must not count */
    int64_t x;
    CHECK_EQ_INT(jtok_us_to_ns("12345", 2, &x), 0);
    CHECK_EQ_INT(x, 12000);
}

static void test_to_i64(void)
{
    static const struct {
        enum jtok_type type;
        const char *s;
        int ok;
        int64_t v;
    } cases[] = {
        { JT_NUMBER, "0", 1, 0 },
        { JT_NUMBER, "9007199254740993", 1, 9007199254740993LL }, /* 2^53 + 1: exact */
        { JT_NUMBER, "1790857026000000001", 1, 1790857026000000001LL },
        { JT_NUMBER, "9223372036854775807", 1, INT64_MAX },
        { JT_NUMBER, "-9223372036854775808", 1, INT64_MIN },
        { JT_NUMBER, "9223372036854775808", 0, 0 },
        { JT_NUMBER, "-9223372036854775809", 0, 0 },
        { JT_NUMBER, "18446744073709551615", 0, 0 },
        { JT_NUMBER, "92233720368547758070", 0, 0 },
        { JT_NUMBER, "12.0", 1, 12 },
        { JT_NUMBER, "1e3", 1, 1000 },
        { JT_NUMBER, "12.5", 0, 0 },
        { JT_NUMBER, "1e30", 0, 0 },
        { JT_NUMBER, "-", 0, 0 },
        { JT_STRING, "42", 1, 42 },
        { JT_STRING, "4x", 0, 0 },
        { JT_TRUE, "true", 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct jtok_val v = { cases[i].type, cases[i].s, strlen(cases[i].s), 0 };
        int64_t x = 0;
        int rc = jtok_to_i64(&v, &x);
        if ((rc == 0) != cases[i].ok) fprintf(stderr, "to_i64(\"%s\") = %d\n", cases[i].s, rc);
        CHECK_EQ_INT(rc == 0, cases[i].ok);
        if (cases[i].ok) CHECK_EQ_INT(x, cases[i].v);
        else CHECK_EQ_INT(rc, ERR_INVALID);
    }
    double d;
    struct jtok_val v = { JT_NUMBER, "-1.25e2", 7, 0 };
    CHECK_EQ_INT(jtok_to_double(&v, &d), 0);
    CHECK(d == -125.0);
    struct jtok_val bad = { JT_NUMBER, "1.2.3", 5, 0 };
    CHECK_EQ_INT(jtok_to_double(&bad, &d), ERR_INVALID);
}

/* A random value the scanner must delimit exactly: nested arrays and
 * objects, strings (some longer than 16 bytes, holding brackets, commas and
 * escaped quotes and backslashes, at every alignment), numbers, literals.
 * Appends to d at *n; depth bounds the nesting. */
static void gen_value(char *d, size_t *n, unsigned *seed, int depth)
{
    *seed = *seed * 1103515245u + 12345u;
    unsigned r = (*seed >> 8) % 10;
    if (depth > 0 && r < 3) {
        int obj = r == 0;
        d[(*n)++] = obj ? '{' : '[';
        *seed = *seed * 1103515245u + 12345u;
        int k = (int)((*seed >> 8) % 5);
        for (int i = 0; i < k; i++) {
            if (i) d[(*n)++] = ',';
            if (obj) {
                *n += (size_t)sprintf(d + *n, "\"k%d\": ", i);
            }
            gen_value(d, n, seed, depth - 1);
        }
        d[(*n)++] = obj ? '}' : ']';
    } else if (r < 7) {
        static const char *const bits[] = { "a", "]", "}", "[", "{", ",", "\\\"", "\\\\", "xyzxyzxyzxyzxyzxyz", " " };
        d[(*n)++] = '"';
        *seed = *seed * 1103515245u + 12345u;
        int k = (int)((*seed >> 8) % 12);
        for (int i = 0; i < k; i++) {
            *seed = *seed * 1103515245u + 12345u;
            const char *b = bits[(*seed >> 8) % 10];
            memcpy(d + *n, b, strlen(b));
            *n += strlen(b);
        }
        d[(*n)++] = '"';
    } else {
        *n += (size_t)sprintf(d + *n, r == 9 ? "true" : "%u", *seed % 100000);
    }
}

/* The array d[0..n) read through a feed in mode (feed_open): 1 when its
 * nv values come out as written, value i at[i] bytes from the start and
 * len[i] long, and the array then ends. */
static int extents_match(const char *d, size_t n, const size_t *at, const size_t *len, int nv, int mode,
                         unsigned seed)
{
    struct feed f;
    struct jtok t;
    struct err e;
    const char *p;
    size_t vn;
    int tr, ok = 1;
    feed_open(&f, &t, d, n, mode, seed);
    ok &= jtok_expect(&t, '[', "'['", &e) == 0;
    for (int i = 0; ok && i < nv; i++) {
        if (i) ok &= jtok_expect(&t, ',', "','", &e) == 0;
        ok &= jtok_value_extent(&t, &p, &vn, &tr, &e) == 0 && vn == len[i] && memcmp(p, d + at[i], vn) == 0;
    }
    ok &= jtok_expect(&t, ']', "']'", &e) == 0;
    jtok_free(&t);
    return ok;
}

/* Generated values, each read whole (the scanner's 16-byte steps, and the
 * byte steps of a window's end, given random and 1-byte pieces): every
 * extent is exactly the value written. */
static void test_extent_generated(void)
{
    unsigned seed = 7;
    char *d = xmalloc(1u << 16);
    for (int round = 0; round < 400; round++) {
        size_t n = 0, at[8], ends[8];
        int nv = 0;
        d[n++] = '[';
        for (int i = 0; i < 8; i++) {
            if (i) d[n++] = ',';
            at[nv] = n;
            gen_value(d, &n, &seed, 4);
            ends[nv] = n - at[nv];
            nv++;
        }
        d[n++] = ']';
        for (int mode = 0; mode < 2; mode++) CHECK(extents_match(d, n, at, ends, nv, mode, (unsigned)round));
    }
    free(d);
}

/* A trace-like event of about len bytes: an object whose strings hold
 * brackets, commas and (with esc) escaped quotes and backslashes at
 * random places, nested args, numbers. */
static void gen_event(char *d, size_t *n, unsigned *seed, size_t len, int esc)
{
    static const char *const bits[] = { "ab", "]", "}", "[", "{", ",", "x{y", "::", "aten::mm", " ", "\\\"", "\\\\" };
    size_t start = *n;
    *n += (size_t)sprintf(d + *n, "{\"ph\":\"X\",\"args\":{\"a\":[1,[2,{\"b\":3}]],\"s\":\"");
    while (*n - start < len) {
        *seed = *seed * 1103515245u + 12345u;
        const char *b = bits[(*seed >> 8) % (esc ? 12 : 10)];
        memcpy(d + *n, b, strlen(b));
        *n += strlen(b);
        if ((*seed >> 20) % 7 == 0) *n += (size_t)sprintf(d + *n, "\",\"k%u\":\"", (*seed >> 4) % 100);
    }
    *n += (size_t)sprintf(d + *n, "\"},\"ts\":%u}", *seed % 100000);
}

/* Long events, each read whole from a file given in large pieces (the
 * scanner's 64-byte blocks, which take the quotes of a block at once),
 * with and without backslashes (a block holding one goes 16 bytes at a
 * time), at every alignment: every extent is exactly the event written. */
static void test_extent_blocks(void)
{
    unsigned seed = 11;
    char *d = xmalloc(1u << 20);
    for (int round = 0; round < 64; round++) {
        size_t n = 0, at[40], ends[40];
        int nv = 0, objects = 1;
        d[n++] = '[';
        for (size_t pad = 0; pad < (size_t)round % 17; pad++) d[n++] = ' ';
        for (int i = 0; i < 40; i++) {
            if (i) d[n++] = ',';
            at[nv] = n;
            gen_event(d, &n, &seed, 20 + (size_t)(i * 37 + round * 13) % 700, round & 1);
            ends[nv] = n - at[nv];
            objects &= d[at[nv]] == '{' && d[n - 1] == '}';
            nv++;
        }
        d[n++] = ']';
        CHECK(objects);
        CHECK(extents_match(d, n, at, ends, nv, 2, 0));
    }
    free(d);
}

/* A nested value's span at every length around the 16-byte windows: the
 * bytes that matter (quotes, escapes, brackets inside strings) placed at
 * each offset, and every proper prefix an error, never a shorter value. */
static void test_span_nested(void)
{
    static const char *pieces[] = { "\"a}]\\\"{[\"", "[1,{\"b\":\"\\\\\"}]", "\"\\\\\\\\\"", "{}", "\"x\\u007d\"" };
    char buf[256];
    for (int pad = 0; pad < 40; pad++) {
        for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
            int n = snprintf(buf, sizeof buf, "{\"k\":\"%.*s\",\"v\":[%s,%s]}", pad,
                             "0123456789012345678901234567890123456789", pieces[k], pieces[(k + 1) % 5]);
            const char *cur = buf;
            struct jtok_val v;
            struct err e;
            CHECK_EQ_INT(jtok_span_value(&cur, buf + n, &v, &e), 0);
            CHECK_EQ_INT(v.type, JT_OBJECT);
            CHECK_EQ_INT((long long)v.n, n);
            CHECK(cur == buf + n);
            for (int cut = 1; cut < n; cut++) {
                cur = buf;
                CHECK_EQ_INT(jtok_span_value(&cur, buf + cut, &v, &e), ERR_INVALID);
            }
        }
    }
}

/* Whitespace runs of every length around the 16-byte step between every
 * token, ending in each kind of blank, in an exact-size buffer. */
static void test_span_whitespace(void)
{
    static const char blanks[] = " \n\t\r";
    for (int run = 0; run < 40; run++) {
        for (int last = 0; last < 4; last++) {
            char ws[48], buf[512];
            for (int i = 0; i < run; i++) ws[i] = blanks[(i + last + 1) % 4];
            if (run) ws[run - 1] = blanks[last];
            ws[run] = 0;
            int n = snprintf(buf, sizeof buf, "{%s\"a\"%s:%s[1,%s2]%s,%s\"b\"%s:%strue%s}", ws, ws, ws, ws, ws, ws,
                             ws, ws, ws);
            char *copy = xmalloc((size_t)n);
            memcpy(copy, buf, (size_t)n);
            const char *cur = copy, *end = copy + n;
            struct jtok_val k, v;
            struct err e;
            CHECK_EQ_INT(jtok_span_next_member(&cur, end, &k, &v, &e), 1);
            CHECK(jtok_str_eq(&k, "a"));
            CHECK(v.type == JT_ARRAY && v.p[v.n - 1] == ']');
            CHECK_EQ_INT(jtok_span_next_member(&cur, end, &k, &v, &e), 1);
            CHECK(jtok_str_eq(&k, "b"));
            CHECK_EQ_INT(v.type, JT_TRUE);
            CHECK_EQ_INT(jtok_span_next_member(&cur, end, &k, &v, &e), 0);
            CHECK(cur == end);
            free(copy);
        }
    }
}

/* Strings of every length around the 16-byte step, plain or with an
 * escaped quote or backslash at each offset: the same extent and flag. */
static void test_span_string_lengths(void)
{
    for (int len = 0; len < 40; len++) {
        for (int at = -1; at < len; at++) {
            for (int kind = 0; kind < 2; kind++) {
                char buf[64];
                int n = 0;
                buf[n++] = '"';
                for (int i = 0; i < len; i++) {
                    if (i == at) {
                        buf[n++] = '\\';
                        buf[n++] = kind ? '"' : '\\';
                    } else {
                        buf[n++] = (char)('a' + i % 26);
                    }
                }
                buf[n++] = '"';
                char *copy = xmalloc((size_t)n);
                memcpy(copy, buf, (size_t)n);
                const char *cur = copy;
                struct jtok_val v;
                struct err e;
                CHECK_EQ_INT(jtok_span_value(&cur, copy + n, &v, &e), 0);
                CHECK_EQ_INT(v.type, JT_STRING);
                CHECK_EQ_INT((long long)v.n, n - 2);
                CHECK_EQ_INT(v.escaped, at >= 0);
                CHECK(cur == copy + n);
                cur = copy;
                CHECK_EQ_INT(jtok_span_value(&cur, copy + n - 1, &v, &e), ERR_INVALID);
                free(copy);
            }
        }
    }
}

int main(void)
{
    RUN(test_split_every_offset);
    RUN(test_extent_generated);
    RUN(test_extent_blocks);
    RUN(test_split_one_byte_and_random);
    RUN(test_value_larger_than_window);
    RUN(test_too_large);
    RUN(test_truncated);
    RUN(test_empty_input);
    RUN(test_fill_error);
    RUN(test_missing_value);
    RUN(test_expect_message);
    RUN(test_span_members);
    RUN(test_span_keys);
    RUN(test_window);
    RUN(test_span_errors);
    RUN(test_span_nested);
    RUN(test_span_whitespace);
    RUN(test_span_string_lengths);
    RUN(test_backslash_runs);
    RUN(test_deep_nesting);
    RUN(test_nan_infinity);
    RUN(test_unescape);
    RUN(test_str_eq);
    RUN(test_us_to_ns);
    RUN(test_to_i64);
    return harness_done("jtok");
}

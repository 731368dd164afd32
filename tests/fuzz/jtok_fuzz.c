/* jtok_fuzz.c — the streaming JSON tokenizer. The input is walked twice
 * through the window reader (jtok_peek / jtok_expect / jtok_value_extent):
 * once filled in one piece, once in chunks of 1..64 bytes chosen from the
 * input. Every complete value is then taken apart with the span functions
 * (members, values, strings, numbers).
 * Invariants: both walks see the same values and end with the same result;
 * an extent is a complete value (the span parser consumes it exactly or
 * reports an error, never reads past it); unescaping never grows a string;
 * utf8_copy always yields valid UTF-8 and keeps valid input as is. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jtok.h"
#include "base/utf8.h"

struct src { const uint8_t *d; size_t n, at; uint32_t seed; };

static int fill(void *ctx, char *dst, size_t cap, size_t *got, struct err *e)
{
    struct src *s = ctx;
    size_t k = s->n - s->at;
    (void)e;
    if (s->seed) {
        s->seed = s->seed * 1103515245u + 12345u;
        size_t c = 1 + (s->seed >> 16) % 64;
        if (k > c) k = c;
    }
    if (k > cap) k = cap;
    memcpy(dst, s->d + s->at, k);
    s->at += k;
    *got = k;
    return 0;
}

static void check_string(const struct jtok_val *v)
{
    char *out = malloc(v->n ? v->n : 1), *rep = malloc(v->n ? v->n : 1);
    size_t m = jtok_unescape(v->p, v->n, out);
    if (m > v->n) abort();
    if (utf8_valid(v->p, v->n) && !utf8_valid(out, m)) abort();
    if (utf8_copy(out, m, rep) != m || !utf8_valid(rep, m)) abort();
    if (utf8_valid(out, m) && memcmp(out, rep, m) != 0) abort();
    jtok_str_eq(v, "name");
    free(out);
    free(rep);
}

static void check_scalar(const struct jtok_val *v)
{
    int64_t x;
    double d;
    if (v->type == JT_STRING) check_string(v);
    if (v->type == JT_NUMBER || v->type == JT_STRING) {
        jtok_us_to_ns(v->p, v->n, &x);
        jtok_to_i64(v, &x);
    }
    jtok_to_double(v, &d);
}

/* Takes apart a complete value; depth-bounded so the harness itself cannot
 * overflow the stack (jtok's own skipping is iterative). */
static void descend(const char *p, size_t n, int depth)
{
    const char *cur = p, *end = p + n;
    struct jtok_val k, v;
    struct err e;
    int rc;

    if (jtok_span_value(&cur, end, &v, &e) != 0) return;
    if (cur > end) abort();
    check_scalar(&v);
    if (depth > 32) return;
    if (v.type == JT_OBJECT) {
        const char *c = v.p, *ve = v.p + v.n;
        while ((rc = jtok_span_next_member(&c, ve, &k, &v, &e)) == 1) {
            if (c > ve || v.p < p || v.p + v.n > end) abort();
            check_string(&k);
            descend(v.p - (v.type == JT_STRING), v.n + 2 * (v.type == JT_STRING), depth + 1);
            if (*c == ',') c++;
        }
    } else if (v.type == JT_ARRAY) {
        const char *c = v.p + 1, *ve = v.p + v.n;
        while (c < ve) {
            while (c < ve && (*c == ' ' || *c == '\n' || *c == '\r' || *c == '\t' || *c == ',')) c++;
            if (c >= ve || *c == ']') break;
            const char *s = c;
            if (jtok_span_value(&c, ve, &v, &e) != 0) break;
            if (c > ve || c <= s) abort();
            descend(s, (size_t)(c - s), depth + 1);
        }
    }
}

static uint32_t mix(uint32_t h, const void *d, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ ((const uint8_t *)d)[i]) * 16777619u;
    return h;
}

/* Walks the whole input as a stream of values and punctuation, entering
 * arrays the way the Chrome importer does. Returns a hash of what it saw. */
static uint32_t walk(const uint8_t *d, size_t n, uint32_t seed, int *rc_out, int do_spans)
{
    struct src s = { d, n, 0, seed };
    struct jtok t;
    struct err e;
    uint32_t h = 2166136261u;
    int rc = 0, c, steps = 0;

    /* The smallest window (max_value is raised to 1 MiB). One window is
     * kept across inputs and reset to jtok_init's state: allocating 1 MiB
     * per walk made the fuzzer spend most of its time in page faults. */
    static struct jtok keep;
    if (!keep.buf) jtok_init(&keep, fill, &s, 1);
    t = keep;
    t.len = t.pos = 0;
    t.base = 0;
    t.eof = 0;
    t.ctx = &s;
    for (;;) {
        if ((rc = jtok_peek(&t, &c, &e)) != 0 || c < 0) break;
        if (++steps > 100000) break;
        if (c == ',' || c == ':' || c == ']' || c == '}' || (c == '[' && (d[0] & 1))) {
            if ((rc = jtok_expect(&t, (char)c, "punctuation", &e)) != 0) break;
            h = mix(h, &c, 1);
            continue;
        }
        const char *p;
        size_t vn;
        int tr = -1;
        uint64_t off = jtok_offset(&t);
        if ((rc = jtok_value_extent(&t, &p, &vn, &tr, &e)) != 0) {
            if (tr != 0 && tr != 1) abort();
            break;
        }
        if (tr != 0 || vn == 0 || jtok_offset(&t) != off + vn) abort();
        if (memcmp(p, d + off, vn) != 0) abort(); /* the window holds the input bytes */
        h = mix(h, p, vn);
        if (do_spans) {
            /* an exact-size copy so ASan sees any read past the value */
            char *copy = malloc(vn);
            memcpy(copy, p, vn);
            descend(copy, vn, 0);
            free(copy);
        }
    }
    keep.buf = t.buf; /* the window may have moved or grown */
    keep.cap = t.cap;
    *rc_out = rc;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    int r1, r2;
    if (n == 0) {
        walk(d, n, 0, &r1, 1);
        return 0;
    }
    uint32_t h1 = walk(d, n, 0, &r1, 1);
    uint32_t h2 = walk(d, n, (uint32_t)n * 2654435761u | 1u, &r2, 0);
    if (h1 != h2 || r1 != r2) abort();

    /* Numbers and strings straight from the raw bytes, too. */
    int64_t x;
    jtok_us_to_ns((const char *)d, n, &x);
    struct jtok_val v = { JT_STRING, (const char *)d, n, 1 };
    check_scalar(&v);
    v.type = JT_NUMBER;
    check_scalar(&v);
    return 0;
}

#include "base/jtok.h"

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/xmalloc.h"

#define JTOK_MIN_CAP (1u << 20)

void jtok_init(struct jtok *t, jtok_fill_fn fill, void *ctx, size_t max_value)
{
    memset(t, 0, sizeof *t);
    t->cap = JTOK_MIN_CAP;
    t->buf = xmalloc(t->cap);
    t->fill = fill;
    t->ctx = ctx;
    t->max_value = max_value < JTOK_MIN_CAP ? JTOK_MIN_CAP : max_value;
}

void jtok_free(struct jtok *t)
{
    free(t->buf);
    t->buf = NULL;
}

uint64_t jtok_offset(const struct jtok *t)
{
    return t->base + t->pos;
}

/* Makes room and reads more input after buf[len]. keep_from: the first byte
 * that must survive (usually pos). Returns 0 and sets *more to the number of
 * bytes added (0 at end of input). */
static int refill(struct jtok *t, size_t *more, struct err *e)
{
    size_t got = 0;

    *more = 0;
    if (t->eof) return 0;
    if (t->pos > 0) {
        memmove(t->buf, t->buf + t->pos, t->len - t->pos);
        t->base += t->pos;
        t->len -= t->pos;
        t->pos = 0;
    }
    if (t->len == t->cap) {
        size_t ncap = t->cap * 2;
        if (t->cap >= t->max_value + 64)
            return err_set(e, ERR_TOO_LARGE, "a single JSON value at byte %llu is larger than %zu MiB",
                           (unsigned long long)t->base, t->max_value >> 20);
        if (ncap > t->max_value + 64) ncap = t->max_value + 64;
        t->buf = xrealloc(t->buf, ncap);
        t->cap = ncap;
    }
    if (t->fill(t->ctx, t->buf + t->len, t->cap - t->len, &got, e) != 0) return e->code;
    if (got == 0) t->eof = 1;
    t->len += got;
    *more = got;
    return 0;
}

static inline int is_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The first byte from c that is not JSON whitespace (end if none): the
 * window's between values and a span's between tokens. */
static inline const char *skip_ws(const char *c, const char *end)
{
    if (c < end && !is_ws((unsigned char)*c)) return c;
#ifdef __SSE2__
    /* pretty-printed traces indent every member: runs of 5 to 13 bytes */
    while (end - c >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)c);
        __m128i sp = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n')));
        __m128i tr = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
        __m128i w = _mm_or_si128(sp, tr);
        unsigned ws = (unsigned)_mm_movemask_epi8(w);
        if (ws != 0xFFFFu) return c + __builtin_ctz(~ws);
        c += 16;
    }
#endif
    while (c < end && is_ws((unsigned char)*c)) c++;
    return c;
}

int jtok_peek(struct jtok *t, int *c, struct err *e)
{
    for (;;) {
        t->pos = (size_t)(skip_ws(t->buf + t->pos, t->buf + t->len) - t->buf);
        if (t->pos < t->len) {
            *c = (unsigned char)t->buf[t->pos];
            return 0;
        }
        size_t more;
        if (refill(t, &more, e) != 0) return e->code;
        if (more == 0) {
            *c = -1;
            return 0;
        }
    }
}

int jtok_expect(struct jtok *t, char c, const char *what, struct err *e)
{
    int got;
    if (jtok_peek(t, &got, e) != 0) return e->code;
    if (got != (unsigned char)c) {
        if (got < 0)
            return err_set(e, ERR_INVALID, "the file is truncated: expected %s at byte %llu", what,
                           (unsigned long long)jtok_offset(t));
        return err_set(e, ERR_INVALID, "invalid JSON at byte %llu: expected %s, found '%c'",
                       (unsigned long long)jtok_offset(t), what, got >= 32 && got < 127 ? got : '?');
    }
    t->pos++;
    return 0;
}

/* Scan state kept across refills while finding a value's end. */
struct scan {
    size_t off;   /* offset from value start of the next byte to examine */
    int depth;
    int in_str;
    int done;
};

static void scan_step(const char *b, size_t n, struct scan *s)
{
    size_t i = s->off;
    char first = b[0];

    if (first != '{' && first != '[' && first != '"') {
        /* number or literal: ends at a delimiter */
        while (i < n) {
            char c = b[i];
            if (c == ',' || c == ']' || c == '}' || is_ws((unsigned char)c)) {
                s->done = 1;
                break;
            }
            i++;
        }
        s->off = i;
        return;
    }
#ifdef __SSE2__
    /* 64 bytes at a time while they hold no backslash and the value is an
     * object or an array (a trace's events): which bytes are inside
     * strings follows from the quotes alone, by a prefix XOR of their bit
     * mask, so only the brackets outside strings are taken one by one, not
     * every quote (a with_stack trace has one every 6 bytes); a block with
     * a backslash goes 16 bytes at a time below. */
    while (first != '"' && n - i >= 64) {
        uint64_t q = 0, bs = 0, op = 0, cl = 0;
        for (int k = 0; k < 4; k++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i + 16 * (size_t)k));
            __m128i f = _mm_or_si128(v, _mm_set1_epi8(0x20));
            q |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))) << (16 * k);
            bs |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))) << (16 * k);
            op |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, _mm_set1_epi8('{'))) << (16 * k);
            cl |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, _mm_set1_epi8('}'))) << (16 * k);
        }
        if (bs) break;
        /* bit k: the parity of the quotes up to k, i.e. inside a string
         * (its opening quote included) when none was open before */
        uint64_t in = q;
        in ^= in << 1;
        in ^= in << 2;
        in ^= in << 4;
        in ^= in << 8;
        in ^= in << 16;
        in ^= in << 32;
        if (s->in_str) in = ~in;
        for (uint64_t br = (op | cl) & ~in; br; br &= br - 1) {
            unsigned k = (unsigned)__builtin_ctzll(br);
            if (op >> k & 1) {
                s->depth++;
            } else if (--s->depth <= 0) {
                s->done = 1;
                s->off = i + k + 1;
                return;
            }
        }
        s->in_str = (int)(in >> 63);
        i += 64;
    }
    /* 16 bytes at a time: the bytes that can change the state (quotes,
     * backslashes, brackets; '[' and '{', ']' and '}' differ only in bit
     * 0x20) found at once, then taken in order as the byte loop below
     * would (which also takes a window's last 15 bytes). */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), low = _mm_set1_epi8(0x20),
                  open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
    while (n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i)), f = _mm_or_si128(v, low);
        unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote));
        unsigned bs = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, bslash));
        unsigned op = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, open));
        unsigned cl = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, close));
        unsigned all = q | bs | op | cl;
        size_t next = i + 16;
        while (all) {
            unsigned k = (unsigned)__builtin_ctz(all), bit = 1u << k;
            all &= all - 1;
            if (s->in_str) {
                if (bs & bit) { /* the next byte is escaped */
                    if (k < 15) all &= ~(bit << 1);
                    else if (next < n) next++;
                    else { /* escape split by the window: resume at the backslash */
                        s->off = i + k;
                        return;
                    }
                } else if (q & bit) {
                    s->in_str = 0;
                    if (s->depth == 0) {
                        s->done = 1;
                        s->off = i + k + 1;
                        return;
                    }
                }
            } else if (q & bit) {
                s->in_str = 1;
            } else if (op & bit) {
                s->depth++;
            } else if ((cl & bit) && --s->depth <= 0) {
                s->done = 1;
                s->off = i + k + 1;
                return;
            }
        }
        i = next;
    }
#endif
    while (i < n) {
        if (s->in_str) {
            /* fast path over plain string bytes */
            while (i < n && b[i] != '"' && b[i] != '\\') i++;
            if (i >= n) break;
            if (b[i] == '\\') {
                if (i + 1 >= n) break; /* escape split by the window: resume here */
                i += 2;
                continue;
            }
            s->in_str = 0;
            i++;
            if (s->depth == 0) {
                s->done = 1;
                break;
            }
            continue;
        }
        char c = b[i++];
        if (c == '"') s->in_str = 1;
        else if (c == '{' || c == '[') s->depth++;
        else if (c == '}' || c == ']') {
            if (--s->depth <= 0) {
                s->done = 1;
                break;
            }
        }
    }
    s->off = i;
}

int jtok_value_extent(struct jtok *t, const char **p, size_t *n, int *truncated, struct err *e)
{
    struct scan s = { 0, 0, 0, 0 };
    int c;

    if (truncated) *truncated = 0;
    if (jtok_peek(t, &c, e) != 0) return e->code;
    if (c < 0) {
        if (truncated) *truncated = 1;
        return err_set(e, ERR_INVALID, "the file is truncated at byte %llu: expected a value",
                       (unsigned long long)jtok_offset(t));
    }
    if (c == ',' || c == ']' || c == '}')
        /* a delimiter where a value belongs ("[1,,2]", "[,]"): never an empty value */
        return err_set(e, ERR_INVALID, "invalid JSON at byte %llu: expected a value, found '%c'",
                       (unsigned long long)jtok_offset(t), c);
    for (;;) {
        scan_step(t->buf + t->pos, t->len - t->pos, &s);
        if (s.done) break;
        size_t more;
        if (refill(t, &more, e) != 0) return e->code;
        if (more == 0) {
            if (t->buf[t->pos] != '{' && t->buf[t->pos] != '[' && t->buf[t->pos] != '"' && s.off > 0) break;
            if (truncated) *truncated = 1;
            return err_set(e, ERR_INVALID, "the file is truncated: a value starting at byte %llu never ends",
                           (unsigned long long)jtok_offset(t));
        }
    }
    *p = t->buf + t->pos;
    *n = s.off;
    t->pos += s.off;
    return 0;
}

/* --- spans ------------------------------------------------------------- */

static int span_err(const char *at, const char *end, const char *what, struct err *e)
{
    if (at >= end) return err_set(e, ERR_INVALID, "invalid JSON: value ends early, expected %s", what);
    return err_set(e, ERR_INVALID, "invalid JSON: expected %s, found '%c'", what,
                   *at >= 32 && *at < 127 ? *at : '?');
}

static int span_string(const char **cur, const char *end, struct jtok_val *v, struct err *e)
{
    const char *c = *cur + 1, *start = c;
    int esc = 0;

#ifdef __SSE2__
    /* Most strings hold no escape: their end is the first quote, found with
     * the first backslash in one pass; a backslash first takes the loop. */
    while (end - c >= 16) {
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)c);
        unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_set1_epi8('"')));
        unsigned bs = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_set1_epi8('\\')));
        if (q | bs) {
            if (bs && (!q || __builtin_ctz(bs) < __builtin_ctz(q))) break;
            const char *qp = c + __builtin_ctz(q);
            *v = (struct jtok_val){ JT_STRING, start, (size_t)(qp - start), 0 };
            *cur = qp + 1;
            return 0;
        }
        c += 16;
    }
    /* no quote before c */
#endif
    for (;;) {
        const char *q = memchr(c, '"', (size_t)(end - c));
        if (!q) return err_set(e, ERR_INVALID, "invalid JSON: unterminated string");
        /* a quote preceded by an odd number of backslashes is escaped */
        const char *b = q;
        while (b > start && b[-1] == '\\') b--;
        if ((q - b) & 1) {
            esc = 1;
            c = q + 1;
            continue;
        }
        if (!esc && memchr(start, '\\', (size_t)(q - start))) esc = 1;
        v->type = JT_STRING;
        v->p = start;
        v->n = (size_t)(q - start);
        v->escaped = esc;
        *cur = q + 1;
        return 0;
    }
}

/* A nested value's end by the extent scan's state machine (16 bytes at a
 * time): an event's args object is most of its bytes. */
static int span_skip_nested(const char **cur, const char *end, struct jtok_val *v, struct err *e)
{
    struct scan s = { 0, 0, 0, 0 };

    scan_step(*cur, (size_t)(end - *cur), &s);
    if (!s.done) {
        if (s.in_str) return err_set(e, ERR_INVALID, "invalid JSON: unterminated string");
        return err_set(e, ERR_INVALID, "invalid JSON: unterminated %s", **cur == '{' ? "object" : "array");
    }
    v->type = **cur == '{' ? JT_OBJECT : JT_ARRAY;
    v->p = *cur;
    v->n = s.off;
    v->escaped = 0;
    *cur += s.off;
    return 0;
}

static int match_lit(const char *c, const char *end, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(end - c) >= n && memcmp(c, lit, n) == 0;
}

int jtok_span_value(const char **cur, const char *end, struct jtok_val *v, struct err *e)
{
    const char *c = skip_ws(*cur, end);

    if (c >= end) return span_err(c, end, "a value", e);
    *cur = c;
    switch (*c) {
    case '"': return span_string(cur, end, v, e);
    case '{':
    case '[': return span_skip_nested(cur, end, v, e);
    case 't':
        if (!match_lit(c, end, "true")) break;
        *v = (struct jtok_val){ JT_TRUE, c, 4, 0 };
        *cur = c + 4;
        return 0;
    case 'f':
        if (!match_lit(c, end, "false")) break;
        *v = (struct jtok_val){ JT_FALSE, c, 5, 0 };
        *cur = c + 5;
        return 0;
    case 'n':
        if (!match_lit(c, end, "null")) break;
        *v = (struct jtok_val){ JT_NULL, c, 4, 0 };
        *cur = c + 4;
        return 0;
    case 'N':
        if (!match_lit(c, end, "NaN")) break;
        *v = (struct jtok_val){ JT_NAN, c, 3, 0 };
        *cur = c + 3;
        return 0;
    case 'I':
        if (!match_lit(c, end, "Infinity")) break;
        *v = (struct jtok_val){ JT_NAN, c, 8, 0 };
        *cur = c + 8;
        return 0;
    default:
        if (*c == '-' && match_lit(c, end, "-Infinity")) {
            *v = (struct jtok_val){ JT_NAN, c, 9, 0 };
            *cur = c + 9;
            return 0;
        }
        if (*c == '-' || (*c >= '0' && *c <= '9')) {
            const char *s = c;
            c++;
            while (c < end && ((*c >= '0' && *c <= '9') || *c == '.' || *c == 'e' || *c == 'E' || *c == '+' ||
                               *c == '-'))
                c++;
            *v = (struct jtok_val){ JT_NUMBER, s, (size_t)(c - s), 0 };
            *cur = c;
            return 0;
        }
    }
    return span_err(c, end, "a value", e);
}

int jtok_span_next_key(const char **cur, const char *end, struct jtok_val *key, struct err *e)
{
    const char *c = skip_ws(*cur, end);

    if (c < end && *c == '{') c = skip_ws(c + 1, end);
    if (c < end && *c == ',') c = skip_ws(c + 1, end);
    if (c < end && *c == '}') {
        *cur = c + 1;
        return 0;
    }
    if (c >= end || *c != '"') return span_err(c, end, "a member name", e);
    if (span_string(&c, end, key, e) != 0) return e->code;
    c = skip_ws(c, end);
    if (c >= end || *c != ':') return span_err(c, end, "':'", e);
    *cur = skip_ws(c + 1, end);
    return 1;
}

int jtok_span_member_end(const char **cur, const char *end, struct err *e)
{
    const char *c = skip_ws(*cur, end);
    if (c >= end || (*c != ',' && *c != '}')) return span_err(c, end, "',' or '}'", e);
    *cur = c;
    return 0;
}

int jtok_span_next_member(const char **cur, const char *end, struct jtok_val *key, struct jtok_val *val,
                          struct err *e)
{
    const char *c = *cur;
    int rc = jtok_span_next_key(&c, end, key, e);
    if (rc <= 0) {
        if (rc == 0) *cur = c;
        return rc;
    }
    if (jtok_span_value(&c, end, val, e) != 0 || jtok_span_member_end(&c, end, e) != 0) return e->code;
    *cur = c;
    return 1;
}

void jtok_window(const struct jtok *t, const char **p, const char **end)
{
    *p = t->buf + t->pos;
    *end = t->buf + t->len;
}

void jtok_consume(struct jtok *t, size_t n)
{
    t->pos += n;
}

int jtok_str_eq(const struct jtok_val *v, const char *lit)
{
    size_t n = strlen(lit);
    if (v->type != JT_STRING) return 0;
    if (!v->escaped) return v->n == n && memcmp(v->p, lit, n) == 0;
    /* every escape decodes to at least one byte per 6 written, so a longer
     * text cannot equal lit; shorter ones are decoded and compared */
    if (v->n < n || v->n > 6 * n + 6) return 0;
    char stack[256];
    char *tmp = v->n <= sizeof stack ? stack : xmalloc(v->n);
    size_t m = jtok_unescape(v->p, v->n, tmp);
    int eq = m == n && memcmp(tmp, lit, n) == 0;
    if (tmp != stack) free(tmp);
    return eq;
}

/* --- strings ------------------------------------------------------------ */

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}


size_t jtok_unescape(const char *s, size_t n, char *out)
{
    size_t i = 0, o = 0;

    while (i < n) {
        char c = s[i];
        if (c != '\\') {
            out[o++] = c;
            i++;
            continue;
        }
        if (i + 1 >= n) { /* dangling backslash */
            i++;
            continue;
        }
        char x = s[i + 1];
        i += 2;
        switch (x) {
        case 'n': out[o++] = '\n'; break;
        case 't': out[o++] = '\t'; break;
        case 'r': out[o++] = '\r'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'u': {
            unsigned cp, lo;
            if (i + 4 > n || hex4(s + i, &cp) != 0) {
                out[o++] = '?'; /* keeps the output no longer than the input */
                break;
            }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u' && hex4(s + i + 2, &lo) == 0 && lo >= 0xDC00 &&
                    lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                } else {
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
            }
            if (cp == 0) cp = 0xFFFD; /* NUL would cut C strings short */
            o += utf8_put(out + o, cp);
            break;
        }
        default: out[o++] = x; break; /* \" \\ \/ and unknown escapes */
        }
    }
    return o;
}

/* --- numbers ------------------------------------------------------------ */

int jtok_us_to_ns(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    int neg = 0;
    uint64_t ip = 0;
    int idigits = 0;

    if (i < n && (s[i] == '-' || s[i] == '+')) neg = s[i++] == '-';
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (++idigits > 16) goto slow; /* may overflow x1000: use the slow path */
        ip = ip * 10 + (uint64_t)(s[i++] - '0');
    }
    if (idigits == 0) {
        if (i < n && s[i] == '.') goto slow;
        return ERR_INVALID;
    }
    uint64_t frac = 0;
    int round_up = 0;
    if (i < n && s[i] == '.') {
        int fd = 0;
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (fd < 3) frac = frac * 10 + (uint64_t)(s[i] - '0');
            else if (fd == 3) round_up = s[i] >= '5';
            fd++;
            i++;
        }
        if (fd == 0) return ERR_INVALID;
        for (; fd < 3; fd++) frac *= 10;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) goto slow;
    if (i != n) return ERR_INVALID;
    {
        uint64_t v = ip * 1000 + frac + (uint64_t)round_up;
        if (v > (uint64_t)INT64_MAX) return ERR_INVALID;
        *out = neg ? -(int64_t)v : (int64_t)v;
        return 0;
    }
slow: {
    char tmp[64];
    char *endp;
    long double d;
    if (n >= sizeof tmp) return ERR_INVALID;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    d = strtold(tmp, &endp);
    if (*endp != '\0' || !isfinite(d)) return ERR_INVALID;
    d *= 1000.0L;
    if (d > 9.2e18L || d < -9.2e18L) return ERR_INVALID;
    *out = (int64_t)llroundl(d);
    return 0;
}
}

int jtok_to_i64(const struct jtok_val *v, int64_t *out)
{
    const char *s = v->p;
    size_t n = v->n, i = 0;
    int neg = 0;
    uint64_t x = 0;

    if (v->type != JT_NUMBER && v->type != JT_STRING) return ERR_INVALID;
    if (n == 0) return ERR_INVALID;
    if (s[0] == '-') {
        neg = 1;
        i++;
    }
    if (i >= n) return ERR_INVALID;
    for (; i < n; i++) {
        char c = s[i];
        if (c < '0' || c > '9') break;
        if (x > (UINT64_MAX - 9) / 10) return ERR_INVALID;
        x = x * 10 + (uint64_t)(c - '0');
    }
    if (i < n) {
        /* a float form like 12.0 or 1e3 */
        double d;
        if (v->type != JT_NUMBER || jtok_to_double(v, &d) != 0) return ERR_INVALID;
        if (d != floor(d) || d > 9.2e18 || d < -9.2e18) return ERR_INVALID;
        *out = (int64_t)d;
        return 0;
    }
    if (neg) {
        if (x > (uint64_t)INT64_MAX + 1) return ERR_INVALID;
        *out = (int64_t)(0 - x);
    } else {
        if (x > (uint64_t)INT64_MAX) return ERR_INVALID;
        *out = (int64_t)x;
    }
    return 0;
}

int jtok_to_double(const struct jtok_val *v, double *out)
{
    char tmp[64];
    char *endp;

    if (v->type == JT_NAN) {
        *out = v->p[0] == 'N' ? NAN : v->p[0] == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    if ((v->type != JT_NUMBER && v->type != JT_STRING) || v->n == 0 || v->n >= sizeof tmp) return ERR_INVALID;
    memcpy(tmp, v->p, v->n);
    tmp[v->n] = '\0';
    *out = strtod(tmp, &endp);
    return *endp == '\0' ? 0 : ERR_INVALID;
}

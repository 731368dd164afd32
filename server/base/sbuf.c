/* sbuf.c — growable text (see include/base/sbuf.h). */
#include "base/sbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

void sbuf_addn(struct sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->n + n + 1 > cap) cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void sbuf_add(struct sbuf *b, const char *s)
{
    sbuf_addn(b, s, strlen(s));
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        sbuf_addn(b, tmp, (size_t)n);
        return;
    }
    char *big = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sbuf_addn(b, big, (size_t)n);
    free(big);
}

/* Hand-rolled: a CSV export writes millions of numbers and printf's float
 * path dominated its time. */
void sbuf_int(struct sbuf *b, int64_t v, int ns_to_us)
{
    char tmp[32], *p = tmp + sizeof tmp;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    int digits = 0;

    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
        if (ns_to_us && ++digits == 3) *--p = '.';
    } while (u || (ns_to_us && digits < 4));
    if (v < 0) *--p = '-';
    sbuf_addn(b, p, (size_t)(tmp + sizeof tmp - p));
}

void sbuf_csv(struct sbuf *b, const char *s)
{
    int guard = s[0] != '\0' && strchr("=+-@\t\r", s[0]) != NULL;

    if (!guard && !strpbrk(s, ",\"\r\n")) {
        sbuf_add(b, s);
        return;
    }
    sbuf_add(b, guard ? "\"'" : "\"");
    for (const char *q; (q = strchr(s, '"')) != NULL; s = q + 1) {
        sbuf_addn(b, s, (size_t)(q - s));
        sbuf_add(b, "\"\"");
    }
    sbuf_add(b, s);
    sbuf_add(b, "\"");
}

/*
 * sbuf.h — growable text for answers built piece by piece (SQL from fixed
 * fragments, CSV exports, the timeline's columnar JSON).
 *
 * A struct sbuf starts zeroed ({0}); p is NULL until something is added,
 * then always NUL-terminated. The buffer owns p: free(b.p) when done, or
 * hand p on (http_send_text takes it). Appends never fail (xmalloc).
 * Numbers are written by hand where exports write millions of them.
 */
#ifndef TB_SBUF_H
#define TB_SBUF_H

#include <stddef.h>
#include <stdint.h>

struct sbuf {
    char *p; /* owned, NUL-terminated once anything was added */
    size_t n, cap;
};

void sbuf_addn(struct sbuf *b, const char *s, size_t n);
void sbuf_add(struct sbuf *b, const char *s);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* v in decimal; with ns_to_us, v is ns written exactly as µs with three
 * decimals (1234567 -> "1234.567", -5 -> "-0.005"). */
void sbuf_int(struct sbuf *b, int64_t v, int ns_to_us);

/* One CSV text field (RFC 4180 quoting). A field a spreadsheet would run as
 * a formula (leading = + - @ tab CR) is prefixed with ' (OWASP's advice):
 * trace names are untrusted text. */
void sbuf_csv(struct sbuf *b, const char *s);

#endif

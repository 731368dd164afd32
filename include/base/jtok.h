/*
 * jtok.h — a streaming JSON tokenizer built for one job: cutting a huge
 * trace into one value at a time without building a DOM.
 *
 * struct jtok holds a window buffer over a byte source (a fill callback).
 * The reader functions (jtok_peek, jtok_expect, jtok_read_string,
 * jtok_value_extent) make sure a whole token or value is inside the window,
 * refilling and growing it up to max_value bytes; a value larger than that is
 * ERR_TOO_LARGE. Pointers returned into the window stay valid until the next
 * reader call, which may move the window.
 *
 * The span functions (jtok_span_*) work on a complete value already in
 * memory (for example one event object) and never refill: they pull
 * key/value pairs, skip nested values iteratively (no recursion, so nesting
 * depth cannot overflow the stack) and decode strings and numbers.
 *
 * Accepted beyond RFC 8259, because real traces contain them: NaN,
 * Infinity and -Infinity literals. Invalid UTF-8 is not an error here;
 * jtok_utf8_copy() repairs it where text is kept (jtok_utf8_repair() where
 * a name is shown).
 *
 * One struct jtok is used by one thread; it owns its window buffer.
 */
#ifndef TB_JTOK_H
#define TB_JTOK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Fills dst with up to cap bytes; OUT *got = 0 only at end of input. */
typedef int (*jtok_fill_fn)(void *ctx, char *dst, size_t cap, size_t *got, struct err *e);

struct jtok {
    char *buf;
    size_t cap, len, pos;   /* window: buf[pos..len) unread */
    uint64_t base;          /* input offset of buf[0] */
    size_t max_value;       /* largest value that may be held whole */
    int eof;
    jtok_fill_fn fill;
    void *ctx;
};

enum jtok_type { JT_NONE = 0, JT_STRING, JT_NUMBER, JT_OBJECT, JT_ARRAY, JT_TRUE, JT_FALSE, JT_NULL, JT_NAN };

/* A value inside a complete span. For strings, p/n exclude the quotes and
 * `escaped` says whether jtok_unescape is needed. */
struct jtok_val {
    enum jtok_type type;
    const char *p;
    size_t n;
    int escaped;
};

void jtok_init(struct jtok *t, jtok_fill_fn fill, void *ctx, size_t max_value);
void jtok_free(struct jtok *t);

/* Input offset of the next unread byte (for messages). */
uint64_t jtok_offset(const struct jtok *t);

/* Skips whitespace; OUT *c = next byte, or -1 at end of input. */
int jtok_peek(struct jtok *t, int *c, struct err *e);

/* Consumes byte c after whitespace, else ERR_INVALID naming `what`. */
int jtok_expect(struct jtok *t, char c, const char *what, struct err *e);

/* Reads the complete value at the cursor (after whitespace) into the
 * window. OUT *p, *n: its bytes (borrowed until the next reader call). The
 * cursor moves past it. End of input inside the value is ERR_INVALID with
 * "truncated" in the message; *truncated is set to 1 then (may be NULL). */
int jtok_value_extent(struct jtok *t, const char **p, size_t *n, int *truncated, struct err *e);

/* The unread bytes the window holds, read no further: OUT [*p, *end).
 * For a caller that parses a value there in place with the span functions
 * and then moves the cursor past it (jtok_consume, n at most *end - *p);
 * a value that runs past *end is read with jtok_value_extent instead. */
void jtok_window(const struct jtok *t, const char **p, const char **end);
void jtok_consume(struct jtok *t, size_t n);

/* --- spans (complete values in memory) --- */

/* Iterates an object's members. *cur starts at the byte after '{' (or at
 * '{': both accepted); returns 1 with key/val filled, 0 at the closing '}',
 * or a negative error. */
int jtok_span_next_member(const char **cur, const char *end, struct jtok_val *key, struct jtok_val *val,
                          struct err *e);

/* The same in two halves, for a caller that reads some values its own
 * way: next_key returns 1 with key filled and *cur at its value (after
 * the ':' and whitespace), 0 at the closing '}' (*cur past it), or a
 * negative error; after the value, member_end checks that a ',' or '}'
 * follows (*cur at it) and returns 0, else a negative error. */
int jtok_span_next_key(const char **cur, const char *end, struct jtok_val *key, struct err *e);
int jtok_span_member_end(const char **cur, const char *end, struct err *e);

/* Parses one value at *cur (after whitespace) and advances past it. */
int jtok_span_value(const char **cur, const char *end, struct jtok_val *val, struct err *e);

/* 1 when a string value (escaped or not) equals the literal lit. */
int jtok_str_eq(const struct jtok_val *v, const char *lit);

/* Decodes a JSON string body (without quotes) into UTF-8. out must hold n
 * bytes (decoding never grows). Returns the decoded length. Invalid escapes
 * and lone surrogates become U+FFFD. */
size_t jtok_unescape(const char *s, size_t n, char *out);

/* Microseconds as written ("123", "123.456", "1.5e3", "-2") to integer
 * nanoseconds, exactly for up to 3 fraction digits (rounded beyond).
 * Returns 0, or ERR_INVALID for non-numbers, NaN/Infinity and overflow. */
int jtok_us_to_ns(const char *s, size_t n, int64_t *out);

/* Integer (also a string of digits, or a float with zero fraction); values
 * above INT64_MAX are ERR_INVALID. */
int jtok_to_i64(const struct jtok_val *v, int64_t *out);

/* Number to double (NaN/Infinity literals accepted). */
int jtok_to_double(const struct jtok_val *v, double *out);

#endif

/*
 * utf8.h — checking, repairing and writing UTF-8.
 *
 * Every string that reaches JSON output (jansson refuses invalid UTF-8) or a
 * page passes through one of these at the boundary where it enters: trace
 * names as the tokenizer reads them, file and folder names of uploads and
 * log folders, names read back from stored runs. Pure functions, no state,
 * callable from any thread; the only allocation is utf8_dup's result,
 * owned by the caller.
 */
#ifndef TB_UTF8_H
#define TB_UTF8_H

#include <stddef.h>

/* Writes code point cp (<= 0x10FFFF) as UTF-8 at o (room for 4 bytes).
 * Returns the bytes written. */
size_t utf8_put(char *o, unsigned cp);

/* Copies s[0..n) to out replacing every invalid UTF-8 sequence with '?'.
 * out must hold n bytes. Returns bytes written (== n). */
size_t utf8_copy(const char *s, size_t n, char *out);

/* 1 when s[0..n) is valid UTF-8. */
int utf8_valid(const char *s, size_t n);

/* Copies s[0..n) to out replacing each byte of an invalid UTF-8 sequence
 * with U+FFFD, as a browser shows it: for names (file and folder names)
 * that are displayed, where '?' would read as part of the name. out must
 * hold 3 * n bytes. Returns bytes written (no NUL is added). */
size_t utf8_repair(const char *s, size_t n, char *out);

/* The NUL-terminated s as valid UTF-8 (utf8_repair). Owned by caller. */
char *utf8_dup(const char *s);

#endif

/*
 * qparam.h — query-string parameters of the read APIs, checked: integers in
 * a range, times in µs or ns, LIKE patterns. A bad value is ERR_INVALID with a
 * message naming the parameter and what it must be; an absent or empty
 * parameter means "the default" (as HTML forms send it).
 *
 * The qparam_parse_* functions are pure (strings in, numbers out) and are
 * what the tests and fuzzers drive; the req-taking ones read the parameter
 * from the request (borrowed: valid while req is). Returned patterns are
 * owned by the caller.
 */
#ifndef TB_QPARAM_H
#define TB_QPARAM_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct http_req;

/* The value of query parameter name, NULL when absent or empty. */
const char *qparam_get(struct http_req *req, const char *name);

/* An optional '-' and up to 19 digits, in [min, max] (the full int64
 * range: epoch-based trace clocks reach ~1.7e18 ns). 0 or -1; *out is
 * untouched on -1. */
int qparam_parse_int(const char *v, long long min, long long max, long long *out);

/* A time in µs as ns. Plain decimals ("4487348861342.787") are read exactly
 * (a double loses ns past 2^53 ns and trace clocks can be epoch based,
 * rounding half up on a fourth decimal); exponent forms go through strtod;
 * "inf", "nan", hex and spaces are refused. 0 or -1. */
int qparam_parse_us(const char *v, int64_t *ns);

/* Parameter name as an integer in [min, max]; def when absent. */
int qparam_int(struct http_req *req, const char *name, long long def, long long min, long long max, long long *out,
               struct err *e);

/* Parameter name as a time in µs, converted to ns. OUT *given: 0 when
 * absent (then *ns is untouched). */
int qparam_us(struct http_req *req, const char *name, int64_t *ns, int *given, struct err *e);

/* Parameter name as an integer time in ns (a trace's own clock, any
 * int64). OUT *given: 0 when absent (then *ns is untouched). */
int qparam_ns(struct http_req *req, const char *name, int64_t *ns, int *given, struct err *e);

/* v among n words: keys points at the first word, each next one stride
 * bytes further (sizeof(char *) for an array of words, the entry size for a
 * table of structs whose `key` member is a word). 0 with *idx, or -1. */
int qparam_parse_word(const char *v, const char *const *keys, size_t stride, size_t n, size_t *idx);

/* Parameter name as one of those words (*out = its index); def when absent.
 * ERR_INVALID "must be one of: a, b, c" otherwise. */
int qparam_pick(struct http_req *req, const char *name, const char *const *keys, size_t stride, size_t n, size_t def,
                size_t *out, struct err *e);

/* qparam_pick over a static table of structs with a `key` member. */
#define QPARAM_PICK(req, name, table, def, out, e)                                                                 \
    qparam_pick(req, name, &(table)[0].key, sizeof(table)[0], sizeof(table) / sizeof(table)[0], def, out, e)

#endif

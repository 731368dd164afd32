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

#endif

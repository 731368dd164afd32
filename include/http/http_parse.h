/*
 * http_parse.h — the pure helpers of the HTTP layer, fuzzed (query_fuzz)
 * and unit-tested on their own: request targets split and percent-decoded,
 * query parameters found or removed, the base path stripped, Accept-Encoding
 * read, tokens compared in constant time. No state and no I/O: any thread
 * may call them. Strings returned are owned by the caller unless marked
 * borrowed (then they point into an argument).
 */
#ifndef TB_HTTP_PARSE_H
#define TB_HTTP_PARSE_H

#include <stddef.h>

#include "base/err.h"

/* Splits a raw request target "/path?query" and percent-decodes the path.
 * OUT *path: owned by caller. OUT *query: borrowed pointer into raw after
 * '?', or NULL. ERR_INVALID if raw does not start with '/', or the path
 * has a bad escape or decodes to a NUL. */
int http_target_split(const char *raw, char **path, const char **query, struct err *e);

/* Percent-decodes s[0..n) ('+' is a space when plus_space).
 * OUT *out: owned by caller. ERR_INVALID on a bad escape or a NUL. */
int http_url_decode(const char *s, size_t n, int plus_space, char **out, struct err *e);

/* Finds parameter name in a raw query ("a=1&b=%20"). Returns 1 with *out
 * (decoded, owned by caller), 0 if absent, ERR_INVALID if that parameter
 * is malformed. A parameter without '=' has the value "". */
int http_query_get(const char *query, const char *name, char **out);

/* Calls fn(ctx, rest, value) for each parameter whose decoded name starts
 * with prefix ("meta.job=7": fn(ctx, "job", "7")), in order, both decoded
 * and borrowed for the call. Stops at fn's first nonzero return and
 * returns it; ERR_INVALID for a malformed parameter; else 0. */
int http_query_prefixed(const char *query, const char *prefix, int (*fn)(void *ctx, const char *key, const char *value),
                        void *ctx);

/* The raw query without every parameter called name (other parameters
 * kept byte for byte). Returns a string owned by caller ("" if none left). */
char *http_query_without(const char *query, const char *name);

/* path with the base path removed: "/tb/x" -> "/x", "/tb" -> "" (the
 * caller redirects to "/tb/"); NULL when path is outside base. base "" keeps
 * path. Returns a pointer into path (borrowed). */
const char *http_strip_base(const char *base, const char *path);

/* 1 if an Accept-Encoding header value allows gzip (not "gzip;q=0"). */
int http_accepts_gzip(const char *accept_encoding);

/* Compares a presented token with the expected one in time independent of
 * where they differ. 0 if want is empty. */
int http_token_equal(const char *given, const char *want);

#endif

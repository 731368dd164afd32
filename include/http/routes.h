/*
 * routes.h — the API route table and the path matcher.
 *
 * server/http/routes.c holds one `static const struct route routes[]`: method,
 * path pattern, handler, upload hooks and flags. Adding an endpoint means one
 * line there plus the handler in an api_*.c file; http.c never names a
 * route. Patterns are literal segments and parameters: `{id}` is a run id
 * (checked with catalog_id_valid) and `{n}` a decimal number of 1..9 digits;
 * a parameter that fails its check makes the request invalid, so handlers
 * can build file paths from ids without further checks.
 *
 * The table is static and the matcher pure, so everything here may be
 * called from any thread. A struct route_match is a plain value filled by
 * routes_match; strings read from it are borrowed from it.
 */
#ifndef TB_ROUTES_H
#define TB_ROUTES_H

#include <stddef.h>

#include "base/err.h"

struct http_req;

enum route_flag {
    ROUTE_OPEN = 1u << 0,   /* answered without the access token (health check) */
    ROUTE_UPLOAD = 1u << 1, /* body streamed to `upload` hooks, bounded by cfg.upload_limit */
    /* May scan a whole run: the handler runs on a query worker (bounded
     * pool and queue, 503 busy when full) under cfg.query_budget_ms, and
     * stops when the client leaves (see http.h). It may not http_defer. */
    ROUTE_HEAVY = 1u << 2,
};

/* Hooks of an upload route, all called on the connection's MHD thread. */
struct route_upload {
    /* Before the first body byte, once the route and auth are settled;
     * headers and query are readable. <0 answers the error at once
     * without reading the body. */
    int (*begin)(struct http_req *req, struct err *e);
    /* Each body chunk in order (n > 0; data borrowed for the call). <0
     * stops the streaming; the error is answered once the body is over. */
    int (*chunk)(struct http_req *req, const char *data, size_t n, struct err *e);
    /* Exactly once when the request ends for any reason (answered, failed,
     * client gone), also when begin failed or was never called; must free
     * whatever http_req_data() holds and remove partial files. */
    void (*cleanup)(struct http_req *req);
};

struct route {
    const char *method;  /* "GET", "POST", "PATCH", "DELETE" (HEAD matches GET) */
    const char *pattern; /* "/api/runs/{id}" */
    /* Called once the body is complete. Returns the HTTP status it queued
     * through http_send_*, HTTP_DEFERRED after http_defer(), or 0 if
     * queueing failed (the connection is then closed). */
    int (*handler)(struct http_req *req);
    const struct route_upload *upload; /* set iff ROUTE_UPLOAD */
    unsigned flags;                    /* enum route_flag bits */
};

#define ROUTES_MAX_PARAMS 4
#define ROUTES_PARAM_MAX 400 /* bytes of one parameter value (a project name: 100 characters) */

struct route_match {
    const struct route *route; /* static table entry; NULL when none */
    int nparams;
    struct {
        const char *name; /* static, from the pattern's table of parameter kinds */
        char value[ROUTES_PARAM_MAX + 1];
    } params[ROUTES_MAX_PARAMS];
    /* When the path exists but not for this method: the methods it takes,
     * e.g. "GET, PATCH, DELETE", for a 405 Allow header; "" otherwise. */
    char allow[64];
};

/* Matches method + path (already percent-decoded, base path removed).
 * Returns 0 with m filled; ERR_NOT_FOUND when no route matches (m->allow
 * says whether the path exists for other methods); ERR_INVALID when a
 * parameter fails its check (message names it). */
int routes_match(const char *method, const char *path, struct route_match *m, struct err *e);

/* The value of a path parameter by name ("id", "n"), borrowed from m, or
 * NULL if the route has none of that name. */
const char *routes_param(const struct route_match *m, const char *name);

/* The route table (static) and its length, for tests. */
const struct route *routes_table(size_t *n);

#endif

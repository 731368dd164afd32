/*
 * http.h — the HTTP server: the libmicrohttpd daemon, per-request state,
 * URL and query parsing, token auth, request bodies, and every response.
 *
 * Owns the MHD daemon and one struct http_req per request. http.c is the
 * only file that calls MHD_queue_response: handlers answer through the
 * http_send_* helpers below, which add the security headers every response
 * carries (CSP, nosniff, no-referrer, DENY framing; no-store on API
 * answers). Every error body comes from http_send_error.
 *
 * Request states (struct http_req):
 *   created    MHD's URI callback: the raw request target is kept
 *   routed     first access call: target parsed, base path removed, token
 *              and CSRF checked, route matched, Content-Length checked,
 *              upload begin hook run; a failure is answered right here,
 *              before any body byte is read
 *   receiving  body chunks: streamed to the route's upload hooks, or
 *              buffered (≤ HTTP_BODY_MAX) for other routes
 *   draining   an error arose mid-body: the rest is read and dropped (up to
 *              HTTP_DRAIN_MAX, then the connection is cut) and the error is
 *              answered when the body ends
 *   handled    the route handler ran and queued a response ...
 *   deferred   ... or called http_defer: the connection is suspended while
 *              work runs on a helper thread, then the handler runs again
 *   pooled     ... or, for a ROUTE_HEAVY route, the connection is suspended
 *              and the handler itself runs on a query worker (workpool.h)
 *              under cfg.query_budget_ms (budget.h); its http_send_* answer
 *              is kept in the request and queued by the MHD thread once the
 *              worker resumes the connection. No free worker or queue
 *              place: 503 busy at once. Over budget: the answer is replaced
 *              by 503 over_budget. Client gone (its socket peeked while the
 *              query runs): the query stops, nothing is sent.
 *   completed  MHD's completion callback (also on disconnect or shutdown):
 *              the route's cleanup hook runs, the request is freed
 *
 * Connections: MHD's connect/close notifications register every connection
 * with conntrack.h, which cuts request heads slower than cfg.head_timeout and
 * keeps connections without the token to cfg.untrusted_connections (the
 * oldest evicted); http.c reports each complete head (trusted if the token
 * came with it, or with no_auth) and each request's end. There is no
 * per-address limit: behind ssh -L every user is 127.0.0.1.
 *
 * Threads: MHD calls handlers on its pool threads (cfg.threads, or one per
 * core), except ROUTE_HEAVY handlers, which run on the cfg.query_workers
 * query workers while their connection is suspended; one request is only
 * ever touched by one thread at a time. Strings from http_req_* are borrowed
 * until the request completes. Test hook: with TB_TEST_QUERY_SPIN set in
 * the environment, every heavy query first waits out its budget (an endless
 * query on demand, for tests/integration/heavy.test.mjs).
 *
 * The parsing helpers at the end are pure functions used by the server and
 * by tests/fuzz/query_fuzz.c.
 */
#ifndef TB_HTTP_H
#define TB_HTTP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct app;
struct http_server;
struct http_req;
struct MHD_Connection;

#define HTTP_BODY_MAX ((size_t)1 << 20)    /* buffered (non-upload) body */
#define HTTP_DRAIN_MAX ((uint64_t)64 << 20) /* bytes read after an error */
#define HTTP_DEFERRED 1                     /* handler return: see http_defer */

/* ------------------------------------------------------------------------ */
/* Server                                                                     */
/* ------------------------------------------------------------------------ */

/* Starts the daemon on app->cfg.bind:port (port 0 = a free port) with
 * cfg.threads worker threads (0 = one per core). app is borrowed and must
 * outlive the server; app->token must be set unless cfg.no_auth.
 * OUT *out: owned by caller, release with http_stop. */
int http_start(struct app *app, struct http_server **out, struct err *e);

/* The TCP port actually bound (useful after port 0). */
int http_port(const struct http_server *s);

/* Stops accepting, ends deferred requests (their waits see
 * http_req_stopping and answer 503) and heavy queries (their budget stops
 * them: 503 stopping), stops the daemon and frees s. */
void http_stop(struct http_server *s);

/* ------------------------------------------------------------------------ */
/* Request accessors for handlers                                             */
/* ------------------------------------------------------------------------ */

/* The server's context (borrowed). */
struct app *http_req_app(const struct http_req *req);

/* The MHD connection, for the http_send_* helpers (borrowed). */
struct MHD_Connection *http_req_conn(const struct http_req *req);

/* Path parameter ("id", "n") of the matched route, or NULL. Borrowed. */
const char *http_req_param(const struct http_req *req, const char *name);

/* Decoded query parameter ("a+b%21" -> "a b!"), first occurrence; NULL if
 * absent or malformed. Borrowed, owned by req. */
const char *http_req_query(struct http_req *req, const char *name);

/* http_query_prefixed (http_parse.h) over the request's query. */
int http_req_query_prefixed(struct http_req *req, const char *prefix,
                            int (*fn)(void *ctx, const char *key, const char *value), void *ctx);

/* Request header (case-insensitive name) or NULL. Borrowed from MHD. */
const char *http_req_header(const struct http_req *req, const char *name);

/* The buffered body of a non-upload route, NUL-terminated (the NUL is not
 * counted in *len). Never NULL ("" when no body). Borrowed. */
const char *http_req_body(const struct http_req *req, size_t *len);

/* Handler-private state (upload progress...), NULL until set. Owned by
 * the route's handlers: http.c never looks inside; the route's cleanup hook
 * frees it. */
void *http_req_data(const struct http_req *req);

/* Stores the handler-private state (see http_req_data). */
void http_req_set_data(struct http_req *req, void *data);

/* Stores handler-private state that http.c frees with data_free when the
 * request ends for any reason (answered, client gone, shutdown): for routes
 * without upload hooks whose state outlives one handler call (http_defer).
 * Call at most once per request. */
void http_req_own_data(struct http_req *req, void *data, void (*data_free)(void *));

/* Suspends the connection and runs work(req) on a helper thread, then
 * resumes it, and the route handler is called again (it must tell from its
 * own state that the work is done). Call only from a handler, which then
 * returns HTTP_DEFERRED. work may block but must return soon after
 * http_req_stopping(req) turns true, and must not send responses. */
void http_defer(struct http_req *req, void (*work)(struct http_req *req));

/* 1 once http_stop has begun; read by deferred work. Thread-safe. */
int http_req_stopping(const struct http_req *req);

/* ------------------------------------------------------------------------ */
/* Responses: each returns the status queued, or 0 if MHD refused it         */
/* ------------------------------------------------------------------------ */

/* Sends body as JSON; steals the reference (NULL sends a 500). Gzipped
 * when the client accepts gzip and the text is over 1 KiB. */
int http_send_json(struct MHD_Connection *conn, int status, json_t *body);

/* The one error body: {"error": {"code": code, "message": ...}}. */
int http_send_error(struct MHD_Connection *conn, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Sends text[0..len) (owned, freed here, also on failure) with the given
 * Content-Type; download_name (may be NULL) makes it an attachment with
 * that (sanitized) name. Gzipped like http_send_json. */
int http_send_text(struct MHD_Connection *conn, int status, const char *content_type, const char *download_name,
                   char *text, size_t len);

/* http_send_error with the status and code of e->code, message e->msg. */
int http_send_err(struct MHD_Connection *conn, const struct err *e);

/* Streams a file from disk. download_name (may be NULL) makes it an
 * attachment with that (sanitized) name. Missing file -> 404 error. */
int http_send_file(struct MHD_Connection *conn, const char *path, const char *content_type,
                   const char *download_name);

/* A response without a body (204 ...). */
int http_send_empty(struct MHD_Connection *conn, int status);

#endif

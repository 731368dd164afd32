/* http.c — libmicrohttpd daemon, request plumbing, auth and responses
 * (see include/http/http.h for the request state machine). */
#define LOG_MODULE "http"
#include "http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "base/log.h"
#include "base/workpool.h"
#include "base/xmalloc.h"
#include "http/app.h"
#include "http/assets.h"
#include "http/conntrack.h"
#include "http/http_auth.h"
#include "http/http_parse.h"
#include "http/http_req.h"
#include "http/http_stream.h"
#include "http/http_send.h"
#include "http/routes.h"
#include "store/budget.h"

/* Our own limits on the request target and the header block, well inside
 * the 128 KiB a connection may use: up to there we answer 414/431 in JSON
 * with the security headers. Past what fits in that memory libmicrohttpd
 * answers first with its own static page (see docs/security.md). */
#define TARGET_MAX (32 * 1024)
#define HEADERS_MAX (32 * 1024)

/* ======================================================================== */
/* The request pipeline                                                       */
/* ======================================================================== */

static enum MHD_Result answered(struct http_req *req, int status)
{
    req->answered = 1;
    req->status = status;
    return status > 0 ? MHD_YES : MHD_NO;
}

static int64_t content_length(struct http_req *req)
{
    const char *cl = http_req_header(req, MHD_HTTP_HEADER_CONTENT_LENGTH);
    char *end;
    unsigned long long v;

    if (!cl) return -1;
    errno = 0;
    v = strtoull(cl, &end, 10);
    if (errno || end == cl) return -1;
    return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* First access call: everything that can be refused before the body. */
static enum MHD_Result add_header_bytes(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    size_t *sum = cls;

    *sum += strlen(key) + (value ? strlen(value) : 0) + 4; /* "K: V\r\n" */
    return MHD_YES;
}

/* 414/431 for a request over TARGET_MAX/HEADERS_MAX; 0 when it is within. */
static int check_request_size(struct http_req *req)
{
    size_t headers = 0;

    if (strlen(req->raw) > TARGET_MAX)
        return http_send_error(req->conn, 414, "too_large", "request target over %d bytes", TARGET_MAX);
    MHD_get_connection_values(req->conn, MHD_HEADER_KIND, add_header_bytes, &headers);
    if (headers > HEADERS_MAX)
        return http_send_error(req->conn, 431, "too_large", "request headers over %d bytes", HEADERS_MAX);
    return 0;
}

static enum MHD_Result route_request(struct http_req *req)
{
    const struct app *app = req->srv->app;
    const struct config *cfg = &app->cfg;
    struct MHD_Connection *conn = req->conn;
    struct err e;
    enum http_auth_result how = HTTP_AUTH_NONE;
    int rc, is_api, status = 0;
    int64_t cl;

    if ((status = check_request_size(req)) != 0) return answered(req, status);
    if (http_target_split(req->raw, &req->path, &req->query, &e) < 0)
        return answered(req, http_send_error(conn, 400, "invalid", "%s", e.msg));
    req->rpath = http_strip_base(cfg->base_path, req->path);
    if (!req->rpath) return answered(req, http_send_not_found_page(conn));
    if (req->rpath[0] == '\0') {
        /* "/tb" -> "/tb/" so the page's relative URLs resolve under it. */
        char *loc = xasprintf("%s/%s%s", cfg->base_path, req->query ? "?" : "", req->query ? req->query : "");
        struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (resp) MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
        free(loc);
        return answered(req, http_send_queue(conn, 301, resp, HTTP_CACHE_NO_STORE));
    }
    is_api = strncmp(req->rpath, "/api/", 5) == 0 || strcmp(req->rpath, "/api") == 0;
    rc = routes_match(req->method, req->rpath, &req->m, &e);
    if (cfg->no_auth && !http_auth_host_allowed(http_req_header(req, MHD_HTTP_HEADER_HOST), cfg->bind))
        return answered(req, http_send_error(conn, 403, "forbidden",
                                             "host name not allowed without a token (use the IP address or "
                                             "localhost, or run with a token)"));

    if (!cfg->no_auth && !(rc == 0 && (req->m.route->flags & ROUTE_OPEN))) {
        how = http_auth_check(req, is_api, &status);
        if (how == HTTP_AUTH_ANSWERED) return answered(req, status);
    }
    if (!http_auth_csrf_ok(req, how))
        return answered(req, http_send_error(conn, 403, "forbidden",
                                             "changes sent from a browser need the header " HTTP_AUTH_CSRF_HEADER
                                             ": 1 (the traceboard page sends it; other sites cannot)"));
    if (rc == ERR_INVALID) return answered(req, http_send_err(conn, &e));
    if (rc == ERR_NOT_FOUND) {
        if (is_api && req->m.allow[0])
            return answered(req, http_send_error_hdr(conn, 405, "method_not_allowed", "Allow", req->m.allow, "%s", e.msg));
        if (is_api) return answered(req, http_send_error(conn, 404, "not_found", "no API endpoint %s", req->rpath));
        if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0)
            return answered(req, http_send_page(conn, 405, "Method not allowed", "<p>Pages can only be read.</p>", "Allow",
                                           "GET, HEAD"));
        req->kind = REQ_STATIC;
        cl = content_length(req);
        if (cl > (int64_t)HTTP_BODY_MAX)
            return answered(req, http_send_error(conn, 413, "too_large", "request body too large"));
        return MHD_YES;
    }

    req->kind = REQ_ROUTE;
    req->routed = 1;
    cl = content_length(req);
    if (req->m.route->upload) {
        if (cl >= 0 && (uint64_t)cl > cfg->upload_limit)
            return answered(req, http_send_error(conn, 413, "too_large",
                                                 "upload of %lld bytes is over the limit of %llu bytes "
                                                 "(setting upload_limit)",
                                                 (long long)cl, (unsigned long long)cfg->upload_limit));
        req->upload_begun = 1;
        if (req->m.route->upload->begin(req, &e) < 0) return answered(req, http_send_err(conn, &e));
    } else if (cl > (int64_t)HTTP_BODY_MAX) {
        return answered(req, http_send_error(conn, 413, "too_large", "request body over %zu bytes", HTTP_BODY_MAX));
    }
    return MHD_YES;
}

static enum MHD_Result start_draining(struct http_req *req, const struct err *e)
{
    req->draining = 1;
    req->drain_err = *e;
    return MHD_YES;
}

/* One body chunk (n > 0). */
static enum MHD_Result take_body(struct http_req *req, const char *data, size_t n)
{
    const struct config *cfg = &req->srv->app->cfg;
    struct err e;

    if (req->answered) return MHD_YES;
    if (req->draining) {
        req->drained += n;
        if (req->drained <= HTTP_DRAIN_MAX) return MHD_YES;
        LOG_WARN("%s %s: dropping the connection after %llu bytes past an error", req->method, req->path,
                 (unsigned long long)req->drained);
        return MHD_NO;
    }
    req->received += n;
    if (req->kind == REQ_ROUTE && req->m.route->upload) {
        if (req->received > cfg->upload_limit) {
            err_set(&e, ERR_TOO_LARGE, "upload is over the limit of %llu bytes (setting upload_limit)",
                    (unsigned long long)cfg->upload_limit);
            return start_draining(req, &e);
        }
        if (req->m.route->upload->chunk(req, data, n, &e) < 0) return start_draining(req, &e);
        return MHD_YES;
    }
    if (req->body_len + n > HTTP_BODY_MAX) {
        err_set(&e, ERR_TOO_LARGE, "request body over %zu bytes", HTTP_BODY_MAX);
        free(req->body);
        req->body = NULL;
        req->body_len = 0;
        return start_draining(req, &e);
    }
    if (req->body_len + n + 1 > req->body_cap) {
        req->body_cap = (req->body_len + n + 1) * 2;
        if (req->body_cap > HTTP_BODY_MAX + 1) req->body_cap = HTTP_BODY_MAX + 1;
        req->body = xrealloc(req->body, req->body_cap);
    }
    memcpy(req->body + req->body_len, data, n);
    req->body_len += n;
    req->body[req->body_len] = '\0';
    return MHD_YES;
}

static int serve_static(struct http_req *req)
{
    const struct config *cfg = &req->srv->app->cfg;
    const char *p = req->rpath;
    const char *mime = assets_mime(strcmp(p, "/") == 0 ? "/index.html" : p);
    struct err e;

    if (cfg->web_dir[0]) {
        int fd;
        uint64_t size;
        int rc = assets_open_disk(cfg->web_dir, p, strlen(p), &fd, &size, &e);
        if (rc == ERR_NOT_FOUND || rc == ERR_INVALID) return http_send_not_found_page(req->conn);
        if (rc < 0) {
            LOG_WARN("web_dir: %s", e.msg);
            return http_send_page(req->conn, 500, "Server error", "<p>The page could not be read.</p>", NULL, NULL);
        }
        return http_send_fd(req->conn, fd, size, mime, NULL, HTTP_CACHE_REVALIDATE);
    } else {
        const struct asset *a = assets_find(p);
        struct MHD_Response *resp;
        if (!a) return http_send_not_found_page(req->conn);
        resp = MHD_create_response_from_buffer(a->len, (void *)(uintptr_t)a->data, MHD_RESPMEM_PERSISTENT);
        if (resp) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, mime);
        return http_send_queue(req->conn, 200, resp, HTTP_CACHE_REVALIDATE);
    }
}

/* ======================================================================== */
/* Heavy routes on the query workers                                          */
/* ======================================================================== */

/* Runs on a query worker while the connection is suspended: the handler
 * under a time budget, its answer kept in req; then hands req back. */
static void heavy_main(void *arg)
{
    struct http_req *req = arg;
    struct http_server *s = req->srv;
    struct MHD_Connection *conn = req->conn;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int budget_ms = s->app->cfg.query_budget_ms;
    struct budget b;
    int status;

    budget_begin(&b, budget_ms, ci ? ci->connect_fd : -1, &s->stop_queries);
    req->pool.conn = req->conn;
    http_send_capture(&req->pool);
    if (s->test_spin)
        while (!budget_check()) nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    status = b.state == BUDGET_RUNNING ? req->m.route->handler(req) : 0;
    budget_end();
    if (status == HTTP_DEFERRED) {
        /* Heavy routes answer from the worker; a wait belongs on http_defer. */
        LOG_ERROR("%s %s: a heavy route may not defer", req->method, req->path);
        status = http_send_error(conn, 500, "internal", "heavy route deferred");
    }
    /* A statement stopped by the budget ends like an error or a short
     * result: neither may pass for the answer. */
    if (b.state == BUDGET_OVER)
        status = http_send_error(conn, 503, "over_budget",
                                 "this query ran longer than its budget of %d ms and was stopped; ask for less "
                                 "(a shorter time window, one rank, a filter) or raise query_budget_ms",
                                 budget_ms);
    else if (b.state == BUDGET_STOPPED)
        status = http_send_error(conn, 503, "stopping", "the server is shutting down");
    http_send_capture(NULL);
    if (b.state == BUDGET_GONE) req->pool_gone = 1;
    if (!status && req->pool.resp) {
        MHD_destroy_response(req->pool.resp);
        req->pool.resp = NULL;
    }
    req->pooled = 2;
    /* As in defer_main: from the resume on, req is MHD's again. */
    pthread_mutex_lock(&s->mu);
    MHD_resume_connection(conn);
    s->deferred--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* A ROUTE_HEAVY request whose body is complete: first call sends it to a
 * query worker (or answers 503 busy at once when they and their queue are
 * full); the call after the worker resumed the connection sends the
 * answer. */
static enum MHD_Result run_heavy(struct http_req *req)
{
    struct http_server *s = req->srv;
    struct MHD_Response *resp;

    if (req->pooled == 0) {
        int rc = ERR_CONFLICT, stopping;
        /* Reserved under mu with the stopping check: http_stop frees the
         * pool once no job is left, and none may come after. */
        pthread_mutex_lock(&s->mu);
        stopping = s->stopping;
        if (!stopping && (rc = workpool_reserve(s->pool)) == 0) s->deferred++;
        pthread_mutex_unlock(&s->mu);
        if (stopping) return answered(req, http_send_error(req->conn, 503, "stopping", "the server is shutting down"));
        if (rc < 0) {
            struct workpool_stats st;
            workpool_get_stats(s->pool, &st);
            return answered(req, http_send_error(req->conn, 503, "busy",
                                                 "the server is busy with other heavy queries (%d running, %d "
                                                 "waiting); try again in a moment",
                                                 st.running, st.queued));
        }
        req->pooled = 1;
        MHD_suspend_connection(req->conn);
        workpool_push(s->pool, heavy_main, req);
        return MHD_YES;
    }
    resp = req->pool.resp;
    req->pool.resp = NULL;
    if (req->pool_gone || !resp) {
        if (resp) MHD_destroy_response(resp);
        return answered(req, 0); /* closes the connection */
    }
    return answered(req, http_send_now(req->conn, req->pool.status, resp));
}

/* The body is complete (or there was none). */
static enum MHD_Result finish(struct http_req *req)
{
    int status;

    if (req->answered) return MHD_YES;
    if (req->draining) return answered(req, http_send_err(req->conn, &req->drain_err));
    if (req->kind == REQ_STATIC) return answered(req, serve_static(req));
    if (req->m.route->flags & ROUTE_HEAVY) return run_heavy(req);
    status = req->m.route->handler(req);
    if (status == HTTP_DEFERRED) return MHD_YES;
    return answered(req, status);
}

/* ======================================================================== */
/* Connection tracking (see conntrack.h)                                      */
/* ======================================================================== */

/* The record conntrack_open gave the connection, or NULL (a connection
 * MHD accepted before the notify callback was set cannot exist, but a NULL
 * costs nothing to tolerate). */
static struct conntrack_conn *conn_record(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return ci ? ci->socket_context : NULL;
}

/* The request head is complete: the connection leaves the head deadline,
 * and is trusted from now on when it showed the token (with no_auth, any
 * whole head will do: the deadline and the share still bound the rest). */
static void track_head_done(struct http_req *req)
{
    struct conntrack_conn *cc = conn_record(req->conn);

    if (cc) conntrack_head_done(req->srv->ct, cc, req->srv->app->cfg.no_auth || http_auth_token_shown(req));
}

static void track_request_done(struct http_server *s, struct MHD_Connection *conn)
{
    struct conntrack_conn *cc = conn_record(conn);

    if (cc) conntrack_request_done(s->ct, cc);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct http_server *s = cls;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (ci) *socket_context = conntrack_open(s->ct, ci->connect_fd);
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        conntrack_close(s->ct, *socket_context);
        *socket_context = NULL;
    }
}

/* ======================================================================== */
/* MHD callbacks                                                              */
/* ======================================================================== */

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct http_req *req = xcalloc(1, sizeof *req);

    req->srv = cls;
    req->conn = conn;
    req->raw = xstrdup(uri ? uri : "");
    clock_gettime(CLOCK_MONOTONIC, &req->t0);
    return req;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_size,
                                 void **con_cls)
{
    struct http_req *req = *con_cls;

    if (!req) *con_cls = req = on_uri(cls, url, conn);
    if (!req->started) {
        enum MHD_Result r;
        req->started = 1;
        req->conn = conn;
        req->method = method;
        r = route_request(req);
        track_head_done(req);
        return r;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        return take_body(req, upload_data, n);
    }
    return finish(req);
}

static const char *termination_name(enum MHD_RequestTerminationCode toe)
{
    switch (toe) {
    case MHD_REQUEST_TERMINATED_COMPLETED_OK: return "ok";
    case MHD_REQUEST_TERMINATED_WITH_ERROR: return "error";
    case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED: return "timeout";
    case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return "shutdown";
    case MHD_REQUEST_TERMINATED_READ_ERROR: return "client disconnected";
    case MHD_REQUEST_TERMINATED_CLIENT_ABORT: return "client aborted";
    default: return "other";
    }
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct http_req *req = *con_cls;
    struct timespec t1;
    double ms;

    if (!req) return;
    *con_cls = NULL;
    track_request_done(req->srv, conn);
    if (req->routed && req->m.route->upload && req->m.route->upload->cleanup) req->m.route->upload->cleanup(req);
    if (req->data_free) req->data_free(req->data);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ms = (double)(t1.tv_sec - req->t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - req->t0.tv_nsec) / 1e6;
    /* The path only: the query may hold the token. */
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK && req->upload_begun)
        LOG_WARN("%s %s: ended early (%s) after %llu body bytes; upload discarded", req->method ? req->method : "-",
                 req->path ? req->path : "-", termination_name(toe), (unsigned long long)req->received);
    else if (req->status >= 500 || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        LOG_WARN("%s %s -> %d (%s) %.1f ms", req->method ? req->method : "-", req->path ? req->path : "-",
                 req->status, termination_name(toe), ms);
    else if (req->kind == REQ_STATIC || (req->method && strcmp(req->method, "GET") == 0))
        LOG_DEBUG("%s %s -> %d %.1f ms", req->method, req->path ? req->path : "-", req->status, ms);
    else
        LOG_INFO("%s %s -> %d %.1f ms", req->method ? req->method : "-", req->path ? req->path : "-", req->status,
                 ms);
    while (req->qvals) {
        struct qval *q = req->qvals;
        req->qvals = q->next;
        free(q->name);
        free(q->value);
        free(q);
    }
    if (req->pool.resp) MHD_destroy_response(req->pool.resp);
    free(req->body);
    free(req->path);
    free(req->raw);
    free(req);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    size_t n;

    vsnprintf(msg, sizeof msg, fmt, ap);
    n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r')) msg[--n] = '\0';
    LOG_WARN("libmicrohttpd: %s", msg);
}

/* ======================================================================== */
/* Start / stop                                                               */
/* ======================================================================== */

int http_start(struct app *app, struct http_server **out, struct err *e)
{
    const struct config *cfg = &app->cfg;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    struct sockaddr *sa;
    /* poll(), not epoll: with libmicrohttpd 0.9.75's edge-triggered epoll a
     * client that sends part of an upload and closes at once is not seen
     * until conn_timeout, keeping its temp files that long. poll() notices
     * at once and is cheap at our connection counts. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    unsigned threads, untrusted, maxc = (unsigned)cfg->max_connections;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    struct http_server *s;
    const union MHD_DaemonInfo *info;

    if (!cfg->no_auth && !app->token[0]) return err_set(e, ERR_INVALID, "no access token set (and no_auth is off)");
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, cfg->bind, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons((uint16_t)cfg->port);
        sa = (struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, cfg->bind, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons((uint16_t)cfg->port);
        sa = (struct sockaddr *)&v6;
        flags |= MHD_USE_DUAL_STACK;
    } else {
        return err_set(e, ERR_INVALID, "bind address '%s' is not an IPv4 or IPv6 literal", cfg->bind);
    }
    threads = cfg->threads > 0 ? (unsigned)cfg->threads : (unsigned)(cores > 0 ? cores : 1);
    /* No per-address limit: behind `ssh -L` or a reverse proxy every user
     * is one address, so such a limit locks them all out together. Slow and
     * anonymous clients are bounded by conntrack instead, below MHD's own
     * limit, so that limit is never reached by them. */
    untrusted = cfg->untrusted_connections > 0 ? (unsigned)cfg->untrusted_connections : maxc / 4;
    if (untrusted < 1) untrusted = 1;
    if (untrusted >= maxc && maxc > 1)
        return err_set(e, ERR_INVALID, "untrusted_connections (%u) must be below max_connections (%u)", untrusted,
                       maxc);

    s = xcalloc(1, sizeof *s);
    s->app = app;
    if (conntrack_start(cfg->head_timeout, (int)untrusted, &s->ct, e) < 0) {
        free(s);
        return e->code;
    }
    if (workpool_start(cfg->query_workers > 0 ? cfg->query_workers : (int)(cores > 0 ? cores : 1), cfg->query_queue,
                       &s->pool, e) < 0) {
        conntrack_stop(s->ct);
        free(s);
        return e->code;
    }
    if (http_stream_hub_start(cfg->live_streams, cfg->live_heartbeat, &s->streams, e) < 0) {
        workpool_stop(s->pool);
        conntrack_stop(s->ct);
        free(s);
        return e->code;
    }
    s->test_spin = getenv("TB_TEST_QUERY_SPIN") != NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    /* MHD wants its logger first, or early messages bypass it. */
    s->d = MHD_start_daemon(flags, (uint16_t)cfg->port, NULL, NULL, on_access, s,
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                            MHD_OPTION_SOCK_ADDR, sa,
                            MHD_OPTION_THREAD_POOL_SIZE, threads > 1 ? threads : 0u,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->conn_timeout,
                            MHD_OPTION_CONNECTION_LIMIT, maxc,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
                            MHD_OPTION_URI_LOG_CALLBACK, on_uri, s,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                            MHD_OPTION_END);
    if (!s->d) {
        int errsv = errno;
        pthread_mutex_destroy(&s->mu);
        pthread_cond_destroy(&s->cv);
        conntrack_stop(s->ct);
        workpool_stop(s->pool);
        http_stream_hub_quiesce(s->streams);
        http_stream_hub_stop(s->streams);
        free(s);
        return err_set(e, ERR_IO, "cannot listen on %s port %d: %s", cfg->bind, cfg->port,
                       errsv ? strerror(errsv) : "libmicrohttpd refused to start");
    }
    info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : cfg->port;
    snprintf(s->cookie_name, sizeof s->cookie_name, "tb_token_%d", s->port);
    LOG_INFO("listening on %s port %d (%u threads, %s)", cfg->bind, s->port, threads,
             cfg->no_auth ? "no auth" : "token auth");
    *out = s;
    return 0;
}

int http_port(const struct http_server *s)
{
    return s->port;
}

void http_stop(struct http_server *s)
{
    MHD_socket lfd;

    if (!s) return;
    lfd = MHD_quiesce_daemon(s->d);
    atomic_store(&s->stop_queries, 1);
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    while (s->deferred > 0) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    workpool_stop(s->pool);
    http_stream_hub_quiesce(s->streams);
    MHD_stop_daemon(s->d);
    http_stream_hub_stop(s->streams);
    conntrack_stop(s->ct);
    if (lfd != MHD_INVALID_SOCKET) close(lfd);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}


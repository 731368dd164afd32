/* http_req.c — a request's accessors for handlers and deferred work on a
 * helper thread (see include/http/http.h and include/http/http_req.h). */
#define LOG_MODULE "http"
#include "http/http_req.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "http/app.h"
#include "http/http_parse.h"

/* ======================================================================== */
/* Request accessors                                                          */
/* ======================================================================== */

struct app *http_req_app(const struct http_req *req)
{
    return req->srv->app;
}

struct MHD_Connection *http_req_conn(const struct http_req *req)
{
    return req->conn;
}

const char *http_req_param(const struct http_req *req, const char *name)
{
    return routes_param(&req->m, name);
}

const char *http_req_query(struct http_req *req, const char *name)
{
    struct qval *q;
    char *v;

    for (q = req->qvals; q; q = q->next)
        if (strcmp(q->name, name) == 0) return q->value;
    if (http_query_get(req->query, name, &v) != 1) return NULL;
    q = xmalloc(sizeof *q);
    q->name = xstrdup(name);
    q->value = v;
    q->next = req->qvals;
    req->qvals = q;
    return v;
}

int http_req_query_prefixed(struct http_req *req, const char *prefix,
                            int (*fn)(void *ctx, const char *key, const char *value), void *ctx)
{
    return http_query_prefixed(req->query, prefix, fn, ctx);
}

const char *http_req_header(const struct http_req *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *http_req_body(const struct http_req *req, size_t *len)
{
    *len = req->body_len;
    return req->body ? req->body : "";
}

void *http_req_data(const struct http_req *req)
{
    return req->data;
}

void http_req_set_data(struct http_req *req, void *data)
{
    req->data = data;
}

void http_req_own_data(struct http_req *req, void *data, void (*data_free)(void *))
{
    req->data = data;
    req->data_free = data_free;
}

int http_req_stopping(const struct http_req *req)
{
    struct http_server *s = req->srv;
    int r;

    pthread_mutex_lock(&s->mu);
    r = s->stopping;
    pthread_mutex_unlock(&s->mu);
    return r;
}

/* ======================================================================== */
/* Deferred work                                                              */
/* ======================================================================== */

struct defer_job {
    struct http_req *req;
    void (*work)(struct http_req *req);
};

static void *defer_main(void *arg)
{
    struct defer_job *j = arg;
    struct http_server *s = j->req->srv;
    struct MHD_Connection *conn = j->req->conn;

    j->work(j->req);
    free(j);
    /* From the resume on, req belongs to MHD's thread again (and may be
     * freed at any moment): touch only s and conn. Resuming under the lock
     * keeps http_stop from stopping the daemon in between. */
    pthread_mutex_lock(&s->mu);
    MHD_resume_connection(conn);
    s->deferred--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

void http_defer(struct http_req *req, void (*work)(struct http_req *req))
{
    struct defer_job *j = xmalloc(sizeof *j);
    pthread_attr_t attr;
    pthread_t t;
    int rc;

    j->req = req;
    j->work = work;
    MHD_suspend_connection(req->conn);
    pthread_mutex_lock(&req->srv->mu);
    req->srv->deferred++;
    pthread_mutex_unlock(&req->srv->mu);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&t, &attr, defer_main, j);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        /* Out of threads: wait here instead; slower, still correct. */
        LOG_WARN("pthread_create: %s; waiting on the HTTP thread", strerror(rc));
        defer_main(j);
    }
}


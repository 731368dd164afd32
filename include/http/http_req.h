/*
 * http_req.h — the state behind the opaque struct http_server and struct
 * http_req of http.h, shared by the modules of the HTTP layer (http.c's
 * pipeline, http_auth.c, http_req.c's accessors and deferred work); nothing
 * outside server/http/ includes it.
 *
 * A struct http_req lives from MHD's first access call on a request (on_uri
 * creates it) to the request-completed callback (on_completed frees it and
 * everything it owns: raw, path, body, qvals, data via data_free). The
 * MHD thread that runs the connection uses it, except while a ROUTE_HEAVY
 * handler runs on a query worker (see run_heavy in http.c). struct
 * http_server fields marked "under mu" are shared between threads.
 */
#ifndef TB_HTTP_REQ_H
#define TB_HTTP_REQ_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "base/err.h"
#include "http/http.h"
#include "http/http_send.h"
#include "http/routes.h"

struct http_server {
    struct MHD_Daemon *d;
    struct app *app;
    int port;
    /* tb_token_<port>: several users' servers on one login node all live on
     * "localhost", and cookies do not distinguish ports */
    char cookie_name[32];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int deferred; /* helper threads of http_defer still running; under mu */
    int stopping; /* http_stop has begun; under mu */
    struct conntrack *ct; /* head deadline and untrusted share (thread-safe) */
    struct workpool *pool; /* query workers for ROUTE_HEAVY handlers (thread-safe) */
    struct http_stream_hub *streams; /* live event streams (thread-safe, http_stream.h) */
    atomic_int stop_queries; /* set by http_stop: running heavy queries end now */
    int test_spin; /* test hook TB_TEST_QUERY_SPIN: heavy queries first wait out their budget */
};

/* A decoded query value, kept so http_req_query can lend it out. */
struct qval {
    struct qval *next;
    char *name, *value;
};

enum req_kind { REQ_ROUTE, REQ_STATIC };

struct http_req {
    struct http_server *srv;
    struct MHD_Connection *conn;
    const char *method; /* MHD's, valid for the request */
    char *raw;          /* raw request target, owned */
    char *path;         /* percent-decoded path, owned */
    const char *rpath;  /* path after the base path (points into path) */
    const char *query;  /* raw query (points into raw) or NULL */
    enum req_kind kind;
    struct route_match m;
    int started;      /* first access call done */
    int routed;       /* m.route is set and auth passed: cleanup is due */
    int upload_begun; /* the route's upload begin hook ran */
    int answered;     /* a response was queued (status below) */
    int status;
    char *body; /* buffered body of non-upload routes, NUL-terminated */
    size_t body_len, body_cap;
    uint64_t received;
    int draining; /* an error arose mid-body; see drain_err */
    struct err drain_err;
    uint64_t drained;
    void *data; /* handler-private */
    void (*data_free)(void *); /* frees data when the request ends (http_req_own_data) */
    struct qval *qvals;
    struct timespec t0;
    /* A ROUTE_HEAVY request on a query worker (see run_heavy): */
    int pooled;                  /* 0, 1 = on a worker (suspended), 2 = back */
    struct http_send_capture pool; /* its answer, queued by the MHD thread */
    int pool_gone;               /* the client left: close without answering */
};

#endif

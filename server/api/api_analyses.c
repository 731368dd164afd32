/* api_analyses.c — GET /api/runs/{id}/analyses and /critpath (see
 * include/api/api_analyses.h). */
#define LOG_MODULE "api"
#include "api/api_analyses.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/analyses.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/rundb_stage.h"
#include "store/rundb.h"

/* The stored documents of `rank` (< 0: all) as {"<rank>": doc}. A run
 * imported before the analyses is ERR_CONFLICT, like the other read APIs
 * for a run older than their tables (the pages offer to re-import); a rank
 * it lacks is ERR_NOT_FOUND.
 * OUT *docs: owned by caller. */
static int read_docs(struct http_req *req, sqlite3 *db, int rank, json_t **docs, struct err *e)
{
    const char *id = http_req_param(req, "id");

    if (rundb_stage_check(db, "analyses", e) < 0 || analyses_read(db, rank, docs, e) < 0) return e->code;
    if (!*docs)
        return err_set(e, ERR_CONFLICT, "run %s was imported before the GPU analyses existed; re-import it to get them",
                       id);
    if (rank >= 0 && json_object_size(*docs) == 0) {
        json_decref(*docs);
        *docs = NULL;
        return err_set(e, ERR_NOT_FOUND, "run %s has no rank %d", id, rank);
    }
    return 0;
}

int api_analyses_get(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct err e;
    sqlite3 *db = NULL;
    json_t *docs = NULL;
    long long rank;

    err_clear(&e);
    if (qparam_int(req, "rank", -1, 0, INT32_MAX, &rank, &e) < 0) return http_send_err(conn, &e);
    if (catalog_open_run(http_req_app(req)->cat, http_req_param(req, "id"), &db, &e) == 0)
        read_docs(req, db, (int)rank, &docs, &e);
    sqlite3_close(db);
    if (e.code < 0) return http_send_err(conn, &e);
    return http_send_json(conn, 200, json_pack("{s:s,s:o}", "run", http_req_param(req, "id"), "ranks", docs));
}

/* The lowest rank among the keys of docs (each a decimal rank). */
static int lowest_rank(json_t *docs)
{
    const char *k;
    json_t *v;
    long lo = -1;

    json_object_foreach(docs, k, v) {
        long r = strtol(k, NULL, 10);
        if (lo < 0 || r < lo) lo = r;
    }
    return (int)lo;
}

int api_analyses_critpath(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    const char *id = http_req_param(req, "id");
    struct err e;
    sqlite3 *db = NULL;
    json_t *docs = NULL, *out = NULL;
    long long rank, step;
    int64_t t0 = INT64_MIN, t1 = INT64_MAX;
    int has0, has1;

    err_clear(&e);
    if (qparam_int(req, "rank", -1, 0, INT32_MAX, &rank, &e) < 0 ||
        qparam_int(req, "step", -1, 0, INT32_MAX, &step, &e) < 0 || qparam_ns(req, "start", &t0, &has0, &e) < 0 ||
        qparam_ns(req, "end", &t1, &has1, &e) < 0)
        return http_send_err(conn, &e);
    if (has0 && has1 && t0 >= t1) {
        err_set(&e, ERR_INVALID, "parameter 'start' (%lld) must be before 'end' (%lld)", (long long)t0,
                (long long)t1);
        return http_send_err(conn, &e);
    }
    if (catalog_open_run(http_req_app(req)->cat, id, &db, &e) < 0 || read_docs(req, db, (int)rank, &docs, &e) < 0)
        goto out;
    if (rank < 0) rank = lowest_rank(docs);
    if (rank < 0) {
        err_set(&e, ERR_NOT_FOUND, "run %s has no ranks", id);
        goto out;
    }
    if (step >= 0) {
        char key[24];
        snprintf(key, sizeof key, "%lld", rank);
        /* "steps" counts the rank's steps; segments are stored per step index */
        json_t *n = json_object_get(json_object_get(docs, key), "steps");
        if (json_is_integer(n) && step >= json_integer_value(n)) {
            err_set(&e, ERR_NOT_FOUND, "rank %lld of run %s has no step %lld (it has %lld)", rank, id, step,
                    (long long)json_integer_value(n));
            goto out;
        }
    }
    if (analyses_critpath(db, (int)rank, (int)step, t0, t1, &out, &e) < 0) goto out;
    json_object_set_new(out, "run", json_string(id));
    json_object_set_new(out, "rank", json_integer(rank));
out:
    json_decref(docs);
    sqlite3_close(db);
    if (e.code < 0) {
        json_decref(out);
        return http_send_err(conn, &e);
    }
    return http_send_json(conn, 200, out);
}

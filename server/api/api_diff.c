/* api_diff.c — /api/diff, /api/diff/operators, /api/diff/kernels: two runs
 * (or two ranks) compared (see include/api/api_diff.h and server/derive/diff.c). */
#define LOG_MODULE "api"
#include "api/api_diff.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/sbuf.h"
#include "base/xmalloc.h"
#include "derive/diff.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"

#define LIMIT_DEFAULT 100
#define LIMIT_MAX 1000
#define OFFSET_MAX 1000000000LL
#define CSV_TYPE "text/csv; charset=utf-8"

/* ======================================================================== */
/* Parameters                                                                 */
/* ======================================================================== */



/* ?threshold= in percent (decimal, 0..1000) as a fraction; 5 % by default. */
static int param_threshold(struct http_req *req, double *out, struct err *e)
{
    const char *v = qparam_get(req, "threshold");
    char *end;
    double x;

    *out = DIFF_THRESHOLD_DEFAULT;
    if (!v) return 0;
    if (strspn(v, "0123456789.") != strlen(v)) goto bad;
    x = strtod(v, &end);
    if (end == v || *end || !isfinite(x) || x < 0 || x > 1000) goto bad;
    *out = x / 100.0;
    return 0;
bad:
    return err_set(e, ERR_INVALID, "parameter 'threshold' must be a percentage from 0 to 1000");
}

/* One of the words in keys[0..n) (index in *out), def when absent; the
 * diff API's own wording of a bad value. */
static int param_word(struct http_req *req, const char *name, const char *const *keys, int n, int def, int *out,
                      struct err *e)
{
    const char *v = qparam_get(req, name);
    size_t i;

    *out = def;
    if (!v) return 0;
    if (qparam_parse_word(v, keys, sizeof *keys, (size_t)n, &i) == 0) {
        *out = (int)i;
        return 0;
    }
    if (n == 2) return err_set(e, ERR_INVALID, "parameter '%s' must be %s or %s", name, keys[0], keys[1]);
    return err_set(e, ERR_INVALID, "parameter '%s' has an unknown value", name);
}

/* ======================================================================== */
/* The two runs of a request                                                  */
/* ======================================================================== */

/* Looks up run a or b (param name), returns its run.db path (owned) and
 * {id, name} in *meta (owned). */
static int run_lookup(struct http_req *req, const char *name, char **db_path, json_t **meta, struct err *e)
{
    struct app *app = http_req_app(req);
    const char *id = qparam_get(req, name);
    json_t *run;
    char *dir;

    if (!id) return err_set(e, ERR_INVALID, "parameter '%s' is required (a run id)", name);
    if (!catalog_id_valid(id)) return err_set(e, ERR_INVALID, "parameter '%s' must be a run id", name);
    if (catalog_get(app->cat, id, &run, e) < 0) return e->code;
    /* the comparison reads every derived table: it waits for them all */
    if (catalog_row_deriving(run)) {
        json_decref(run);
        return err_set(e, ERR_COMPUTING, "computing… (run %s is still being derived)", id);
    }
    *meta = json_pack("{s:s,s:O}", "id", id, "name", json_object_get(run, "name"));
    json_decref(run);
    dir = catalog_run_dir(app->cat, id);
    *db_path = xasprintf("%s/run.db", dir);
    free(dir);
    return 0;
}

/* Opens the pair: OUT *d (owned, diff_close), meta[2] (owned). */
static int pair_open(struct http_req *req, struct diff **d, json_t *meta[2], struct err *e)
{
    static const char *const names[2] = { "a", "b" }, *const rank_names[2] = { "rank_a", "rank_b" };
    char *path[2] = { NULL, NULL };
    long long rank[2];
    int rc = 0;

    *d = NULL;
    meta[0] = meta[1] = NULL;
    for (int s = 0; s < 2 && rc == 0; s++) {
        if ((rc = qparam_int(req, rank_names[s], -1, 0, INT32_MAX, &rank[s], e)) < 0) break;
        rc = run_lookup(req, names[s], &path[s], &meta[s], e);
    }
    if (rc == 0) rc = diff_open(path[0], (int)rank[0], path[1], (int)rank[1], d, e);
    free(path[0]);
    free(path[1]);
    return rc;
}

static void pair_close(struct diff *d, json_t *meta[2])
{
    diff_close(d);
    json_decref(meta[0]);
    json_decref(meta[1]);
}

/* ======================================================================== */
/* Handlers                                                                   */
/* ======================================================================== */

int api_diff_overview(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct diff *d = NULL;
    json_t *meta[2] = { NULL, NULL }, *out;
    struct err e;
    double thr;

    if (param_threshold(req, &thr, &e) < 0 || pair_open(req, &d, meta, &e) < 0 || diff_overview(d, thr, &out, &e) < 0) {
        pair_close(d, meta);
        return http_send_err(conn, &e);
    }
    json_object_update(json_object_get(out, "a"), meta[0]);
    json_object_update(json_object_get(out, "b"), meta[1]);
    pair_close(d, meta);
    return http_send_json(conn, 200, out);
}




static void csv_num(struct sbuf *b, json_t *v)
{
    char tmp[64];

    if (!json_is_number(v)) return;
    snprintf(tmp, sizeof tmp, "%.3f", json_number_value(v));
    sbuf_add(b, tmp);
}

static int send_csv(struct MHD_Connection *conn, json_t *t, int kernels, const char *kind)
{
    static const char *const nums[] = { "a_calls", "b_calls", "a_us", "b_us", "delta_us", "ratio" };
    struct sbuf b = { 0 };
    json_t *row;
    size_t i;

    sbuf_add(&b, "name,status,a_calls,b_calls,a_us,b_us,delta_us,ratio");
    sbuf_add(&b, kernels ? ",tensor_cores\r\n" : "\r\n");
    json_array_foreach(json_object_get(t, "rows"), i, row) {
        sbuf_csv(&b, json_string_value(json_object_get(row, "name")));
        sbuf_add(&b, ",");
        sbuf_add(&b, json_string_value(json_object_get(row, "status")));
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
            sbuf_add(&b, ",");
            csv_num(&b, json_object_get(row, nums[k]));
        }
        if (kernels) sbuf_add(&b, json_is_true(json_object_get(row, "tensor_cores")) ? ",true" : ",false");
        sbuf_add(&b, "\r\n");
    }
    json_decref(t);
    char name[64];
    snprintf(name, sizeof name, "diff-%s.csv", kind);
    return http_send_text(conn, 200, CSV_TYPE, name, b.p, b.n);
}

static int table_handler(struct http_req *req, enum diff_kind kind)
{
    static const char *const formats[] = { "json", "csv" }, *const orders[] = { "asc", "desc" },
                             *const pers[] = { "step", "total" }, *const groups[] = { "name", "family" };
    struct MHD_Connection *conn = http_req_conn(req);
    struct diff_query q = { .kind = kind };
    struct diff *d = NULL;
    json_t *meta[2] = { NULL, NULL }, *out = NULL;
    struct err e;
    const char *v;
    int fmt, ord, per, grp;

    if (qparam_int(req, "offset", 0, 0, OFFSET_MAX, &q.offset, &e) < 0 ||
        qparam_int(req, "limit", LIMIT_DEFAULT, 1, LIMIT_MAX, &q.limit, &e) < 0 ||
        param_word(req, "format", formats, 2, 0, &fmt, &e) < 0 || param_word(req, "order", orders, 2, 1, &ord, &e) < 0 ||
        param_word(req, "per", pers, 2, 0, &per, &e) < 0 ||
        param_word(req, "group", groups, kind == DIFF_KERNELS ? 2 : 1, 0, &grp, &e) < 0 ||
        param_threshold(req, &q.threshold, &e) < 0)
        goto fail;
    if ((v = qparam_get(req, "status")) && diff_parse_status(v, "status", &q.status_mask, &e) < 0) goto fail;
    if ((v = qparam_get(req, "sort")) && diff_parse_sort(v, "sort", &q.sort, &e) < 0) goto fail;
    if ((v = qparam_get(req, "q")) && strlen(v) > 256) {
        err_set(&e, ERR_INVALID, "parameter 'q' is longer than 256 bytes");
        goto fail;
    }
    /* Names sort A to Z unless asked otherwise; figures largest first. */
    if (!qparam_get(req, "order")) ord = q.sort == 3 ? 0 : 1;
    q.q = v;
    q.desc = ord;
    q.per_step = per == 0;
    q.family = grp == 1;
    if (fmt == 1) {
        q.offset = 0;
        q.limit = -1;
    }
    if (pair_open(req, &d, meta, &e) < 0 || diff_table(d, &q, &out, &e) < 0) goto fail;
    if (fmt == 1) {
        pair_close(d, meta);
        return send_csv(conn, out, kind == DIFF_KERNELS, kind == DIFF_KERNELS ? "kernels" : "operators");
    }
    json_object_set_new(meta[0], "rank", json_integer(diff_rank(d, 0)));
    json_object_set_new(meta[1], "rank", json_integer(diff_rank(d, 1)));
    json_object_set(out, "a", meta[0]);
    json_object_set(out, "b", meta[1]);
    pair_close(d, meta);
    return http_send_json(conn, 200, out);
fail:
    pair_close(d, meta);
    return http_send_err(conn, &e);
}

int api_diff_operators(struct http_req *req)
{
    return table_handler(req, DIFF_OPERATORS);
}

int api_diff_kernels(struct http_req *req)
{
    return table_handler(req, DIFF_KERNELS);
}

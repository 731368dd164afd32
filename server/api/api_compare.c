/* api_compare.c — GET /api/compare: N runs side by side (see
 * include/api/api_compare.h; each run's figures are diff_side's). */
#define LOG_MODULE "api"
#include "api/api_compare.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/diff.h"
#include "derive/summary.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"

#define NCATS 8 /* breakdown parts, summary_categories[0..7] */

/* Splits ?runs= into ids[0..*n) (each owned): 2..COMPARE_MAX_RUNS
 * well-formed, distinct run ids. */
static int parse_runs(struct http_req *req, char *ids[COMPARE_MAX_RUNS], int *n, struct err *e)
{
    const char *v = qparam_get(req, "runs"), *p;

    *n = 0;
    if (!v || !*v) return err_set(e, ERR_INVALID, "parameter 'runs' is required (run ids, comma-separated)");
    for (p = v;; p++) {
        size_t len = strcspn(p, ",");
        if (*n == COMPARE_MAX_RUNS)
            return err_set(e, ERR_INVALID, "parameter 'runs' names more than %d runs", COMPARE_MAX_RUNS);
        ids[(*n)++] = xstrndup(p, len);
        if (!catalog_id_valid(ids[*n - 1]))
            return err_set(e, ERR_INVALID, "parameter 'runs' must be run ids separated by commas");
        for (int i = 0; i < *n - 1; i++)
            if (strcmp(ids[i], ids[*n - 1]) == 0)
                return err_set(e, ERR_INVALID, "parameter 'runs' names run %s twice", ids[i]);
        p += len;
        if (!*p) break;
    }
    if (*n < 2) return err_set(e, ERR_INVALID, "parameter 'runs' must name at least 2 runs");
    return 0;
}

/* Run id's SIDE with {id, name, created} added; errors name the run. */
static int run_side(struct app *app, const char *id, int rank, json_t **out, struct err *e)
{
    json_t *run;
    char *dir, *db;
    int rc;

    *out = NULL;
    if (catalog_get(app->cat, id, &run, e) < 0) return e->code;
    /* as the two-run diff: the figures come from every derived table */
    if (catalog_row_deriving(run)) {
        json_decref(run);
        return err_set(e, ERR_COMPUTING, "computing… (run %s is still being derived)", id);
    }
    dir = catalog_run_dir(app->cat, id);
    db = xasprintf("%s/run.db", dir);
    free(dir);
    rc = diff_side(db, rank, out, e);
    free(db);
    if (rc == ERR_NOT_FOUND && rank >= 0) err_set(e, ERR_NOT_FOUND, "run %s has no rank %d", id, rank);
    else if (rc == ERR_NOT_FOUND) err_set(e, ERR_NOT_FOUND, "run %s has no ranks", id);
    else if (rc == ERR_CONFLICT) err_set(e, ERR_CONFLICT, "run %s was imported before analysis existed; re-import it", id);
    if (rc == 0) {
        json_object_set_new(*out, "id", json_string(id));
        json_object_set(*out, "name", json_object_get(run, "name"));
        json_object_set(*out, "created", json_object_get(run, "created"));
    }
    json_decref(run);
    return rc;
}

int api_compare_get(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    char *ids[COMPARE_MAX_RUNS];
    json_t *runs = json_array(), *cats = json_array(), *side;
    long long rank = -1;
    int n = 0, rc;
    struct err e;

    rc = parse_runs(req, ids, &n, &e);
    if (rc == 0) rc = qparam_int(req, "rank", -1, 0, INT32_MAX, &rank, &e);
    for (int i = 0; i < n && rc == 0; i++)
        if ((rc = run_side(http_req_app(req), ids[i], (int)rank, &side, &e)) == 0) json_array_append_new(runs, side);
    for (int i = 0; i < n; i++) free(ids[i]);
    if (rc < 0) {
        json_decref(runs);
        json_decref(cats);
        return http_send_err(conn, &e);
    }
    for (int k = 0; k < NCATS; k++) json_array_append_new(cats, json_string(summary_categories[k]));
    return http_send_json(conn, 200,
                          json_pack("{s:o,s:o,s:o}", "categories", cats, "rank",
                                    rank >= 0 ? json_integer(rank) : json_null(), "runs", runs));
}

#define LOG_MODULE "api"
#include "api/api_run.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/timeline.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/rundb.h"
#include "store/rundb_stage.h"

#define LIST_MAX 4096 /* ids in ?tracks= / ?counters= */

/* Whether the run has the analysis tables: 0, or ERR_CONFLICT. */
static int summary_present(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (rundb_prepare(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'step'", &st, e) < 0)
        return e->code;
    rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc < 0) return rundb_db_error(db, e, "run database (schema)");
    if (rc == 0) return err_set(e, ERR_CONFLICT, "this run was imported before analysis existed; re-import it");
    return 0;
}

static int load_tracks(struct api_run *r, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (rundb_prepare(r->db, "SELECT id FROM track WHERE rank = ? ORDER BY id", &st, e) < 0) return e->code;
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        r->tracks = xrealloc(r->tracks, (r->ntracks + 1) * sizeof *r->tracks);
        r->tracks[r->ntracks++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (tracks)");
}

int api_run_open(struct http_req *req, struct api_run *r, enum api_run_needs needs, struct err *e)
{
    struct app *app = http_req_app(req);
    long long want;
    int rc, have_rank = qparam_get(req, "rank") != NULL;

    memset(r, 0, sizeof *r);
    r->id = http_req_param(req, "id");
    r->ranks = json_array();
    if (qparam_int(req, "rank", 0, 0, INT32_MAX, &want, e) < 0) return e->code;
    if ((rc = catalog_open_run(app->cat, r->id, &r->db, e)) < 0) return rc;
    /* a run still deriving is answered "computing" until its stage is in */
    if ((rc = rundb_stage_check(r->db, needs == API_RUN_SUMMARY ? "summary" : "timeline", e)) < 0) return rc;
    if (needs == API_RUN_SUMMARY) {
        if ((rc = summary_present(r->db, e)) < 0) return rc;
    } else {
        rc = timeline_present(r->db, e);
        if (rc < 0) return rc;
        if (rc == 0)
            return err_set(e, ERR_CONFLICT, "this run was imported before the timeline existed; re-import it");
    }
    if ((rc = rundb_pick_rank(r->db, r->id, have_rank, want, &r->rank, &r->t0, &r->t1, r->ranks, e)) < 0) return rc;
    return needs == API_RUN_TIMELINE ? load_tracks(r, e) : 0;
}

void api_run_close(struct api_run *r)
{
    sqlite3_close(r->db);
    json_decref(r->ranks);
    free(r->tracks);
    memset(r, 0, sizeof *r);
}

int api_run_has_track(const struct api_run *r, int64_t id)
{
    size_t lo = 0, hi = r->ntracks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->tracks[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->ntracks && r->tracks[lo] == id;
}

int api_run_param_ids(struct http_req *req, const char *name, int64_t **out, size_t *n, struct err *e)
{
    const char *v = qparam_get(req, name);

    *out = NULL;
    *n = 0;
    if (!v) return 0;
    for (const char *p = v;;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char tmp[24];
        long long x;
        if (len == 0 || len >= sizeof tmp || *n == LIST_MAX) goto bad;
        memcpy(tmp, p, len);
        tmp[len] = '\0';
        if (qparam_parse_int(tmp, 1, INT64_MAX, &x) < 0) goto bad;
        *out = xrealloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = x;
        if (!c) break;
        p = c + 1;
    }
    return 0;
bad:
    free(*out);
    *out = NULL;
    *n = 0;
    return err_set(e, ERR_INVALID, "parameter '%s' must be a comma-separated list of at most %d ids", name, LIST_MAX);
}

/* ?tracks= checked against the rank; absent: every track of the rank.
 * OUT *out owned by caller. */
int api_run_param_tracks(struct http_req *req, const struct api_run *r, int64_t **out, size_t *n, struct err *e)
{
    if (api_run_param_ids(req, "tracks", out, n, e) < 0) return e->code;
    if (!*out) {
        *n = r->ntracks;
        *out = xmalloc((*n ? *n : 1) * sizeof **out);
        if (*n) memcpy(*out, r->tracks, *n * sizeof **out);
        return 0;
    }
    for (size_t i = 0; i < *n; i++)
        if (!api_run_has_track(r, (*out)[i]))
            return err_set(e, ERR_INVALID, "parameter 'tracks': track %lld is not a track of rank %d",
                           (long long)(*out)[i], r->rank);
    return 0;
}

/* ?start= and ?end= (µs); absent ones default to the rank's span. */
int api_run_param_window(struct http_req *req, const struct api_run *r, int required, int64_t *start, int64_t *end,
                        struct err *e)
{
    int hs, he;

    if (qparam_us(req, "start", start, &hs, e) < 0 || qparam_us(req, "end", end, &he, e) < 0) return e->code;
    if (required && !hs) return err_set(e, ERR_INVALID, "parameter 'start' is required (µs)");
    if (required && !he) return err_set(e, ERR_INVALID, "parameter 'end' is required (µs)");
    if (!hs) *start = r->t0;
    if (!he) *end = r->t1 > *start ? r->t1 : *start + 1;
    if (*end <= *start) return err_set(e, ERR_INVALID, "parameter 'end' must be greater than start");
    return 0;
}

/* The text of str id (borrowed until the next use of st), "" when none. */
const char *api_run_str(sqlite3_stmt *st, int64_t id, size_t *n)
{
    const char *s = NULL;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW) s = (const char *)sqlite3_column_text(st, 0);
    *n = s ? (size_t)sqlite3_column_bytes(st, 0) : 0;
    return s ? s : "";
}

json_t *api_run_jstr(sqlite3_stmt *st, int64_t id)
{
    size_t n;
    const char *s = api_run_str(st, id, &n);
    json_t *j = json_stringn(s, n);
    return j ? j : json_string("?");
}

json_t *api_run_jus(int64_t ns)
{
    return json_real((double)ns / 1000.0);
}

json_t *api_run_text_or_null(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    json_t *j = s ? json_stringn(s, (size_t)sqlite3_column_bytes(st, i)) : NULL;
    return j ? j : json_null();
}


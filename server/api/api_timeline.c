/* api_timeline.c — the timeline read API: /api/runs/{id}/timeline/tracks,
 * /timeline, /timeline/slice, /timeline/search, /timeline/aggregate (see
 * include/api/api_timeline.h). */
#define LOG_MODULE "api"
#include "api/api_timeline.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/sbuf.h"
#include "base/xmalloc.h"
#include "derive/timeline.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/model.h"
#include "store/rundb.h"

#define LIST_MAX 4096     /* ids in ?tracks= / ?counters= */
#define Q_MAX 256         /* bytes of a search text */
#define NAMES_MAX 5000    /* str ids a search looks at */
#define AGG_ROWS 500      /* rows of an aggregate */
#define SCAN_MAX 20000000 /* slices one details or aggregate request reads */
#define JSON_TYPE "application/json"

/* ======================================================================== */
/* JSON text (the viewport answer is large and all numbers)                  */
/* ======================================================================== */

static void sb_real(struct sbuf *b, double v)
{
    char tmp[40];
    if (!isfinite(v)) {
        sbuf_add(b, "null");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) { /* byte counts: most counter values */
        sbuf_int(b, (int64_t)v, 0);
        return;
    }
    snprintf(tmp, sizeof tmp, "%.17g", v);
    sbuf_add(b, tmp);
}

/* A JSON string; < > & are escaped too, so the text is inert in HTML. */
static void sb_str(struct sbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, run = 0;

    sbuf_add(b, "\"");
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') continue;
        sbuf_addn(b, s + run, i - run);
        run = i + 1;
        if (c == '"') sbuf_add(b, "\\\"");
        else if (c == '\\') sbuf_add(b, "\\\\");
        else {
            char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
            sbuf_add(b, u);
        }
    }
    sbuf_addn(b, s + run, n - run);
    sbuf_add(b, "\"");
}

/* ======================================================================== */
/* Parameters                                                                 */
/* ======================================================================== */

/* ?name=1,2,3 -> ids (owned by caller). *n = 0 and *out = NULL when absent. */
static int param_ids(struct http_req *req, const char *name, int64_t **out, size_t *n, struct err *e)
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

/* ======================================================================== */
/* The run database of a request                                              */
/* ======================================================================== */

struct run {
    const char *id;   /* borrowed from the request */
    sqlite3 *db;      /* owned, read-only */
    int rank;
    json_t *ranks;    /* owned array of rank numbers */
    int64_t t0, t1;   /* the rank's span in ns */
    int64_t *tracks;  /* owned: the rank's track ids, ascending */
    size_t ntracks;
};

static void run_close(struct run *r)
{
    sqlite3_close(r->db);
    json_decref(r->ranks);
    free(r->tracks);
    memset(r, 0, sizeof *r);
}

/* Opens the request's run read-only, settles ?rank= and loads its tracks.
 * Errors: ERR_NOT_FOUND (run, rank), ERR_INVALID (rank), ERR_CONFLICT (no
 * LOD tables). run_close(r) in every case. */
static int run_open(struct http_req *req, struct run *r, struct err *e)
{
    struct app *app = http_req_app(req);
    sqlite3_stmt *st = NULL;
    long long want;
    int rc, have_rank = qparam_get(req, "rank") != NULL;

    memset(r, 0, sizeof *r);
    r->id = http_req_param(req, "id");
    r->ranks = json_array();
    if (qparam_int(req, "rank", 0, 0, INT32_MAX, &want, e) < 0) return e->code;
    if ((rc = catalog_open_run(app->cat, r->id, &r->db, e)) < 0) return rc;
    rc = timeline_present(r->db, e);
    if (rc < 0) return rc;
    if (rc == 0) return err_set(e, ERR_CONFLICT, "this run was imported before the timeline existed; re-import it");
    if ((rc = rundb_pick_rank(r->db, r->id, have_rank, want, &r->rank, &r->t0, &r->t1, r->ranks, e)) < 0) return rc;
    if (rundb_prepare(r->db, "SELECT id FROM track WHERE rank = ? ORDER BY id", &st, e) < 0) return e->code;
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        r->tracks = xrealloc(r->tracks, (r->ntracks + 1) * sizeof *r->tracks);
        r->tracks[r->ntracks++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (tracks)");
}

static int has_track(const struct run *r, int64_t id)
{
    size_t lo = 0, hi = r->ntracks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->tracks[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->ntracks && r->tracks[lo] == id;
}

/* ?tracks= checked against the rank; absent: every track of the rank.
 * OUT *out owned by caller. */
static int param_tracks(struct http_req *req, const struct run *r, int64_t **out, size_t *n, struct err *e)
{
    if (param_ids(req, "tracks", out, n, e) < 0) return e->code;
    if (!*out) {
        *n = r->ntracks;
        *out = xmalloc((*n ? *n : 1) * sizeof **out);
        if (*n) memcpy(*out, r->tracks, *n * sizeof **out);
        return 0;
    }
    for (size_t i = 0; i < *n; i++)
        if (!has_track(r, (*out)[i]))
            return err_set(e, ERR_INVALID, "parameter 'tracks': track %lld is not a track of rank %d",
                           (long long)(*out)[i], r->rank);
    return 0;
}

/* ?start= and ?end= (µs); absent ones default to the rank's span. */
static int param_window(struct http_req *req, const struct run *r, int required, int64_t *start, int64_t *end,
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
static const char *str_of(sqlite3_stmt *st, int64_t id, size_t *n)
{
    const char *s = NULL;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW) s = (const char *)sqlite3_column_text(st, 0);
    *n = s ? (size_t)sqlite3_column_bytes(st, 0) : 0;
    return s ? s : "";
}

static json_t *jstr_of(sqlite3_stmt *st, int64_t id)
{
    size_t n;
    const char *s = str_of(st, id, &n);
    json_t *j = json_stringn(s, n);
    return j ? j : json_string("?");
}

static json_t *jus(int64_t ns)
{
    return json_real((double)ns / 1000.0);
}

/* ======================================================================== */
/* GET /api/runs/{id}/timeline/tracks                                         */
/* ======================================================================== */

static json_t *text_or_null(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    json_t *j = s ? json_stringn(s, (size_t)sqlite3_column_bytes(st, i)) : NULL;
    return j ? j : json_null();
}

static json_t *int_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_integer(sqlite3_column_int64(st, i));
}

static int tracks_list(struct run *r, json_t *out, struct err *e)
{
    /* processes then their threads; GPU devices then their streams */
    static const char sql[] =
        "SELECT id, kind, pid, tid, name, pname, device, stream, max_depth, nslices FROM track WHERE rank = ?"
        " ORDER BY kind = 1, CASE WHEN kind = 1 THEN device END, CASE WHEN kind = 1 THEN stream END,"
        " CAST(pid AS INTEGER), pid, sort IS NULL, sort, CAST(tid AS INTEGER), tid, id";
    sqlite3_stmt *st;
    json_t *arr = json_array();
    int rc;

    json_object_set_new(out, "tracks", arr);
    if (rundb_prepare(r->db, sql, &st, e) < 0) return e->code;
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int gpu = sqlite3_column_int(st, 1) == TB_TRACK_GPU;
        json_t *t = json_object();
        json_t *name = text_or_null(st, 4);
        if (json_is_null(name)) {
            char buf[96];
            const char *tid = (const char *)sqlite3_column_text(st, 3);
            snprintf(buf, sizeof buf, "%s %s", gpu ? "stream" : "thread", tid ? tid : "?");
            json_decref(name);
            name = json_string(buf);
            if (!name) name = json_string("?");
        }
        json_object_set_new(t, "id", json_integer(sqlite3_column_int64(st, 0)));
        json_object_set_new(t, "kind", json_string(gpu ? "gpu" : "cpu"));
        json_object_set_new(t, "pid", text_or_null(st, 2));
        json_object_set_new(t, "tid", text_or_null(st, 3));
        json_object_set_new(t, "name", name);
        json_object_set_new(t, "process", text_or_null(st, 5));
        json_object_set_new(t, "device", int_or_null(st, 6));
        json_object_set_new(t, "stream", int_or_null(st, 7));
        json_object_set_new(t, "max_depth", json_integer(sqlite3_column_int64(st, 8)));
        json_object_set_new(t, "nslices", json_integer(sqlite3_column_int64(st, 9)));
        json_array_append_new(arr, t);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (tracks)");
}

static int counters_list(struct run *r, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *arr = json_array();
    int rc;

    json_object_set_new(out, "counters", arr);
    if (rundb_prepare(r->db, "SELECT id, name, unit FROM cseries WHERE rank = ? ORDER BY id", &st, e) < 0)
        return e->code;
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:I,s:o,s:o}", "id", (json_int_t)sqlite3_column_int64(st, 0), "name",
                                             text_or_null(st, 1), "unit", text_or_null(st, 2)));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (counters)");
}

static int steps_list(struct run *r, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *arr = json_array();
    int rc;

    json_object_set_new(out, "steps", arr);
    if (sqlite3_prepare_v2(r->db, "SELECT name, ts, ts + dur FROM step WHERE rank = ? ORDER BY idx", -1, &st, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(st);
        return 0; /* a run without the analysis tables has no steps to show */
    }
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:o,s:o,s:o}", "name", text_or_null(st, 0), "start_us",
                                             jus(sqlite3_column_int64(st, 1)), "end_us",
                                             jus(sqlite3_column_int64(st, 2))));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (steps)");
}

int api_timeline_tracks(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct run r = { 0 };
    struct err e;
    json_t *out = NULL;

    err_clear(&e);
    if (run_open(req, &r, &e) < 0) goto fail;
    out = json_object();
    json_object_set_new(out, "rank", json_integer(r.rank));
    json_object_set(out, "ranks", r.ranks);
    json_object_set_new(out, "t0_us", jus(r.t0));
    json_object_set_new(out, "t1_us", jus(r.t1));
    json_object_set_new(out, "strings", json_array()); /* reserved: names here are plain strings */
    if (tracks_list(&r, out, &e) < 0 || counters_list(&r, out, &e) < 0 || steps_list(&r, out, &e) < 0) goto fail;
    run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    json_decref(out);
    run_close(&r);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* GET /api/runs/{id}/timeline                                                */
/* ======================================================================== */

/* str id -> index in the answer's string table (open addressing). */
struct strtab {
    uint32_t *key; /* str id + 1; 0 = empty */
    uint32_t *idx;
    uint32_t *order; /* ids by index */
    size_t cap, n;
};

static uint32_t strtab_index(struct strtab *t, uint32_t id)
{
    uint32_t key = id + 1; /* 0 marks an empty slot; a name may be id 0 (none) */

    if ((t->n + 1) * 2 > t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 256;
        uint32_t *nk = xcalloc(ncap, sizeof *nk), *ni = xcalloc(ncap, sizeof *ni);
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->key[i]) continue;
            size_t j = (t->key[i] * 2654435761u) & (ncap - 1);
            while (nk[j]) j = (j + 1) & (ncap - 1);
            nk[j] = t->key[i];
            ni[j] = t->idx[i];
        }
        free(t->key);
        free(t->idx);
        t->key = nk;
        t->idx = ni;
        t->cap = ncap;
        t->order = xrealloc(t->order, ncap * sizeof *t->order);
    }
    size_t j = (key * 2654435761u) & (t->cap - 1);
    while (t->key[j]) {
        if (t->key[j] == key) return t->idx[j];
        j = (j + 1) & (t->cap - 1);
    }
    t->key[j] = key;
    t->idx[j] = (uint32_t)t->n;
    t->order[t->n] = id;
    return (uint32_t)t->n++;
}

static void strtab_free(struct strtab *t)
{
    free(t->key);
    free(t->idx);
    free(t->order);
}

static void write_view(struct sbuf *b, const struct timeline_view *v, struct strtab *names)
{
    sbuf_add(b, ",\"tracks\":[");
    for (size_t i = 0; i < v->ntracks; i++) {
        const struct timeline_track *t = &v->tracks[i];
        sbuf_add(b, i ? ",{\"id\":" : "{\"id\":");
        sbuf_int(b, t->id, 0);
        sbuf_add(b, ",\"depths\":[");
        for (int d = 0; d < t->ndepths; d++) {
            const struct timeline_depth *dp = &t->depths[d];
            sbuf_add(b, d ? ",{\"depth\":" : "{\"depth\":");
            sbuf_int(b, dp->depth, 0);
            static const char *const cols[] = { "ts", "dur", "name", "n", "id" };
            for (int c = 0; c < 5; c++) {
                sbuf_add(b, ",\"");
                sbuf_add(b, cols[c]);
                sbuf_add(b, "\":[");
                for (size_t k = 0; k < dp->nitems; k++) {
                    const struct timeline_item *it = &dp->items[k];
                    if (k) sbuf_add(b, ",");
                    switch (c) {
                    case 0: sbuf_int(b, it->ts, 1); break;
                    case 1: sbuf_int(b, it->dur, 1); break;
                    case 2: sbuf_int(b, strtab_index(names, it->name), 0); break;
                    case 3: sbuf_int(b, it->n, 0); break;
                    default: sbuf_int(b, it->id, 0); break;
                    }
                }
                sbuf_add(b, "]");
            }
            sbuf_add(b, "}");
        }
        sbuf_add(b, "]}");
    }
    sbuf_add(b, "],\"counters\":[");
    for (size_t i = 0; i < v->ncounters; i++) {
        const struct timeline_counter *c = &v->counters[i];
        sbuf_add(b, i ? ",{\"id\":" : "{\"id\":");
        sbuf_int(b, c->id, 0);
        static const char *const cols[] = { "ts", "min", "max", "last" };
        for (int k = 0; k < 4; k++) {
            sbuf_add(b, ",\"");
            sbuf_add(b, cols[k]);
            sbuf_add(b, "\":[");
            for (size_t j = 0; j < c->npoints; j++) {
                const struct timeline_cpoint *p = &c->points[j];
                if (j) sbuf_add(b, ",");
                if (k == 0) sbuf_int(b, p->ts, 1);
                else sb_real(b, k == 1 ? p->min : k == 2 ? p->max : p->last);
            }
            sbuf_add(b, "]");
        }
        sbuf_add(b, "}");
    }
    sbuf_add(b, "]");
}

int api_timeline_view(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct run r = { 0 };
    struct err e;
    int64_t start, end, *tracks = NULL, *series = NULL;
    size_t ntracks = 0, nseries = 0;
    long long width;
    struct timeline_view *v = NULL;
    struct strtab names = { 0 };
    struct sbuf b = { 0 };
    sqlite3_stmt *st = NULL;

    err_clear(&e);
    if (qparam_int(req, "width", 1000, 1, TIMELINE_WIDTH_MAX, &width, &e) < 0 || run_open(req, &r, &e) < 0 ||
        param_window(req, &r, 0, &start, &end, &e) < 0 || param_tracks(req, &r, &tracks, &ntracks, &e) < 0 ||
        param_ids(req, "counters", &series, &nseries, &e) < 0)
        goto fail;
    if (!qparam_get(req, "counters")) {
        /* every counter series of the rank */
        int rc;
        if (rundb_prepare(r.db, "SELECT id FROM cseries WHERE rank = ? ORDER BY id", &st, &e) < 0) goto fail;
        sqlite3_bind_int(st, 1, r.rank);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            series = xrealloc(series, (nseries + 1) * sizeof *series);
            series[nseries++] = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        st = NULL;
        if (rc != SQLITE_DONE) {
            rundb_db_error(r.db, &e, "run database (counters)");
            goto fail;
        }
    }
    if (timeline_query(r.db, start, end, (int)width, tracks, ntracks, series, nseries, &v, &e) < 0) goto fail;
    sbuf_add(&b, "{\"start_us\":");
    sbuf_int(&b, start, 1);
    sbuf_add(&b, ",\"end_us\":");
    sbuf_int(&b, end, 1);
    sbuf_add(&b, ",\"width\":");
    sbuf_int(&b, width, 0);
    sbuf_add(&b, ",\"bucket_us\":");
    sbuf_int(&b, (int64_t)llround((double)(end - start) / (double)width), 1);
    sbuf_add(&b, ",\"rank\":");
    sbuf_int(&b, r.rank, 0);
    write_view(&b, v, &names);
    sbuf_add(&b, ",\"strings\":[");
    if (rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &st, &e) < 0) goto fail;
    for (size_t i = 0; i < names.n; i++) {
        size_t n;
        const char *s = str_of(st, names.order[i], &n);
        if (i) sbuf_add(&b, ",");
        sb_str(&b, s, n);
    }
    sqlite3_finalize(st);
    sbuf_add(&b, "]}");
    timeline_view_free(v);
    strtab_free(&names);
    free(tracks);
    free(series);
    run_close(&r);
    return http_send_text(conn, 200, JSON_TYPE, NULL, b.p, b.n);
fail:
    sqlite3_finalize(st);
    timeline_view_free(v);
    strtab_free(&names);
    free(b.p);
    free(tracks);
    free(series);
    run_close(&r);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* GET /api/runs/{id}/timeline/slice                                          */
/* ======================================================================== */

struct srow {
    int64_t id, track, ts, dur, parent, corr;
    int depth, kind;
    uint32_t name, cat;
};

#define SLICE_COLS "id, track, ts, dur, depth, coalesce(parent, 0), name, coalesce(cat, 0), kind, corr"

static void srow_read(sqlite3_stmt *st, struct srow *s)
{
    s->id = sqlite3_column_int64(st, 0);
    s->track = sqlite3_column_int64(st, 1);
    s->ts = sqlite3_column_int64(st, 2);
    s->dur = sqlite3_column_int64(st, 3);
    s->depth = sqlite3_column_int(st, 4);
    s->parent = sqlite3_column_int64(st, 5);
    s->name = (uint32_t)sqlite3_column_int64(st, 6);
    s->cat = (uint32_t)sqlite3_column_int64(st, 7);
    s->kind = sqlite3_column_int(st, 8);
    s->corr = sqlite3_column_int64(st, 9);
}

/* Row id into *s; 0 found, 1 not found. */
static int slice_get(sqlite3 *db, sqlite3_stmt *one, int64_t id, struct srow *s, struct err *e)
{
    sqlite3_reset(one);
    sqlite3_bind_int64(one, 1, id);
    int rc = sqlite3_step(one);
    if (rc == SQLITE_ROW) srow_read(one, s);
    else if (rc != SQLITE_DONE)
        return rundb_db_error(db, e, "run database (slice)");
    return rc == SQLITE_ROW ? 0 : 1;
}

static int track_is_gpu(sqlite3 *db, int64_t track)
{
    sqlite3_stmt *st;
    int gpu = 0;
    if (sqlite3_prepare_v2(db, "SELECT kind FROM track WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, track);
        if (sqlite3_step(st) == SQLITE_ROW) gpu = sqlite3_column_int(st, 0) == TB_TRACK_GPU;
    }
    sqlite3_finalize(st);
    return gpu;
}

static json_t *ref_json(sqlite3_stmt *strq, const struct srow *s)
{
    return json_pack("{s:I,s:I,s:o,s:o,s:o}", "id", (json_int_t)s->id, "track", (json_int_t)s->track, "name",
                     jstr_of(strq, s->name), "ts_us", jus(s->ts), "dur_us", jus(s->dur));
}

struct span {
    int64_t ts, end;
};

/* self time and the direct children's spans (for flow binding). */
static int slice_children(sqlite3 *db, const struct srow *s, int64_t *self, struct span **kids, size_t *nkids,
                          struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    int64_t n = 0;

    *self = s->dur;
    *kids = NULL;
    *nkids = 0;
    if (rundb_prepare(
            db,
            "SELECT ts, dur, parent FROM slice WHERE id > ?1 AND id <= (SELECT last_slice FROM track WHERE id = ?2)"
            " ORDER BY id",
            &st, e) < 0)
        return e->code;
    sqlite3_bind_int64(st, 1, s->id);
    sqlite3_bind_int64(st, 2, s->track);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n++ < SCAN_MAX) {
        int64_t ts = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 1);
        if (ts >= s->ts + s->dur && !(dur == 0 && ts == s->ts)) break;
        if (sqlite3_column_int64(st, 2) != s->id) continue;
        int64_t end = ts + dur > s->ts + s->dur ? s->ts + s->dur : ts + dur;
        *self -= end - ts;
        *kids = xrealloc(*kids, (*nkids + 1) * sizeof **kids);
        (*kids)[(*nkids)++] = (struct span){ ts, ts + dur };
    }
    sqlite3_finalize(st);
    if (*self < 0) *self = 0;
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "run database (children)");
}

/* Flow endpoints on s's track inside s and in none of its children. */
static int slice_flows(struct run *r, const struct srow *s, const struct span *kids, size_t nkids,
                       sqlite3_stmt *strq, json_t *flows, struct err *e)
{
    sqlite3_stmt *mine = NULL, *other = NULL;
    int rc;

    if (rundb_prepare(r->db,
                      "SELECT id, coalesce(cat, 0), fid, ph, ts FROM flow WHERE track = ? AND ts >= ? AND ts <= ? "
                      "ORDER BY ts, id",
                      &mine, e) < 0 ||
        rundb_prepare(
            r->db,
            "SELECT ph, track, ts, cat FROM flow WHERE rank = ? AND fid = ? AND coalesce(cat, 0) = ? AND id != ?"
            " ORDER BY ts LIMIT 64",
            &other, e) < 0)
        goto out;
    sqlite3_bind_int64(mine, 1, s->track);
    sqlite3_bind_int64(mine, 2, s->ts);
    sqlite3_bind_int64(mine, 3, s->ts + s->dur);
    while ((rc = sqlite3_step(mine)) == SQLITE_ROW && json_array_size(flows) < 256) {
        const char *ph = (const char *)sqlite3_column_text(mine, 3);
        int out_dir = ph && ph[0] == 's';
        int64_t pts = sqlite3_column_int64(mine, 4);
        int in_child = 0;
        for (size_t k = 0; k < nkids && !in_child; k++)
            in_child = pts >= kids[k].ts && (pts < kids[k].end || (kids[k].end == kids[k].ts && pts == kids[k].ts));
        if (in_child) continue;
        sqlite3_reset(other);
        sqlite3_bind_int(other, 1, r->rank);
        sqlite3_bind_value(other, 2, sqlite3_column_value(mine, 2));
        sqlite3_bind_int64(other, 3, sqlite3_column_int64(mine, 1));
        sqlite3_bind_int64(other, 4, sqlite3_column_int64(mine, 0));
        while (sqlite3_step(other) == SQLITE_ROW) {
            const char *oph = (const char *)sqlite3_column_text(other, 0);
            if (out_dir && oph && oph[0] == 's') continue;
            if (!out_dir && !(oph && oph[0] == 's')) continue;
            json_array_append_new(flows, json_pack("{s:s,s:o,s:I,s:o}", "dir", out_dir ? "out" : "in", "cat",
                                                   jstr_of(strq, sqlite3_column_int64(other, 3)), "track",
                                                   (json_int_t)sqlite3_column_int64(other, 1), "ts_us",
                                                   jus(sqlite3_column_int64(other, 2))));
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) rundb_db_error(r->db, e, "run database (flows)");
out:
    sqlite3_finalize(mine);
    sqlite3_finalize(other);
    return e->code;
}

/* Slices of the rank sharing s's correlation id on the other side (GPU when
 * gpu is 0, CPU when 1). */
static int corr_peers(struct run *r, const struct srow *s, int gpu_side, struct srow *peers, int max, int *n,
                      struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    *n = 0;
    if (!s->corr) return 0;
    if (rundb_prepare(r->db,
                      "SELECT s.id, s.track, s.ts, s.dur, s.depth, coalesce(s.parent, 0), s.name, coalesce(s.cat, 0),"
                      " s.kind, s.corr FROM slice s JOIN track t ON t.id = s.track WHERE s.corr = ? AND s.corr != 0 "
                      "AND t.rank = ?"
                      " AND (t.kind = 1) = ? AND s.id != ? ORDER BY s.ts, s.id LIMIT ?",
                      &st, e) < 0)
        return e->code;
    sqlite3_bind_int64(st, 1, s->corr);
    sqlite3_bind_int(st, 2, r->rank);
    sqlite3_bind_int(st, 3, gpu_side);
    sqlite3_bind_int64(st, 4, s->id);
    sqlite3_bind_int(st, 5, max);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) srow_read(st, &peers[(*n)++]);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (correlation)");
}

/* Finds the slice of track with start ts and duration dur (id: fast path,
 * checked). 1 when there is none. */
static int slice_find(struct run *r, sqlite3_stmt *one, int64_t track, int64_t ts, int64_t dur, long long id,
                      struct srow *s, struct err *e)
{
    int64_t lo, hi;
    int rc;

    if (id > 0) {
        rc = slice_get(r->db, one, id, s, e);
        if (rc < 0) return rc;
        if (rc == 0 && s->track == track && s->ts == ts && s->dur == dur) return 0;
    }
    /* ts as a client read it from a JSON double may be off by the double's
     * rounding when the clock is large: match the nearest within it */
    int64_t tol = ts > ((int64_t)1 << 52) || ts < -((int64_t)1 << 52) ? 1024 : 0;
    struct srow best;
    int found = 0;
    if (timeline_slice_range(r->db, track, ts - tol, ts + tol + 1, &lo, &hi, e) < 0) return e->code;
    for (int64_t i = lo; i < hi && i < lo + 100000; i++) {
        rc = slice_get(r->db, one, i, s, e);
        if (rc < 0) return rc;
        if (rc || s->dur != dur) continue;
        if (!found || llabs(s->ts - ts) < llabs(best.ts - ts)) best = *s;
        found = 1;
    }
    if (found) *s = best;
    return found ? 0 : 1;
}

int api_timeline_slice(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct run r = { 0 };
    struct err e;
    sqlite3_stmt *one = NULL, *strq = NULL, *args = NULL;
    long long track, id;
    int64_t ts, dur, self;
    int given, rc;
    struct srow s, p, peers[64];
    struct span *kids = NULL;
    size_t nkids = 0;
    json_t *out = NULL;

    err_clear(&e);
    if (run_open(req, &r, &e) < 0 || qparam_int(req, "track", 0, 1, INT64_MAX, &track, &e) < 0 ||
        qparam_int(req, "id", 0, 1, INT64_MAX, &id, &e) < 0)
        goto fail;
    if (!qparam_get(req, "track")) {
        err_set(&e, ERR_INVALID, "parameter 'track' is required");
        goto fail;
    }
    if (qparam_us(req, "ts", &ts, &given, &e) < 0) goto fail;
    if (!given) {
        err_set(&e, ERR_INVALID, "parameter 'ts' is required (µs)");
        goto fail;
    }
    if (qparam_us(req, "dur", &dur, &given, &e) < 0) goto fail;
    if (!given || dur < 0) {
        err_set(&e, ERR_INVALID, "parameter 'dur' is required (µs, >= 0)");
        goto fail;
    }
    if (!has_track(&r, track)) {
        err_set(&e, ERR_NOT_FOUND, "rank %d has no track %lld", r.rank, track);
        goto fail;
    }
    if (rundb_prepare(r.db, "SELECT " SLICE_COLS " FROM slice WHERE id = ?", &one, &e) < 0 ||
        rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &strq, &e) < 0 ||
        rundb_prepare(r.db, "SELECT args FROM slice WHERE id = ?", &args, &e) < 0)
        goto fail;
    rc = slice_find(&r, one, track, ts, dur, id, &s, &e);
    if (rc < 0) goto fail;
    if (rc > 0) {
        err_set(&e, ERR_NOT_FOUND, "track %lld has no slice starting at %.3f µs lasting %.3f µs", track,
                (double)ts / 1000.0, (double)dur / 1000.0);
        goto fail;
    }
    if (slice_children(r.db, &s, &self, &kids, &nkids, &e) < 0) goto fail;
    out = json_object();
    json_object_set_new(out, "id", json_integer(s.id));
    json_object_set_new(out, "track", json_integer(s.track));
    json_object_set_new(out, "name", jstr_of(strq, s.name));
    json_object_set_new(out, "cat", s.cat ? jstr_of(strq, s.cat) : json_null());
    json_object_set_new(out, "kind", json_string(tb_kind_name((enum tb_kind)s.kind)));
    json_object_set_new(out, "ts_us", jus(s.ts));
    json_object_set_new(out, "dur_us", jus(s.dur));
    json_object_set_new(out, "self_us", jus(self));
    json_object_set_new(out, "depth", json_integer(s.depth));
    sqlite3_bind_int64(args, 1, s.id);
    json_t *aj = NULL;
    if (sqlite3_step(args) == SQLITE_ROW && sqlite3_column_text(args, 0))
        aj = json_loads((const char *)sqlite3_column_text(args, 0), JSON_DECODE_ANY, NULL);
    json_object_set_new(out, "args", aj ? aj : json_object());

    json_t *parents = json_array();
    json_object_set_new(out, "parents", parents);
    for (int64_t pid = s.parent, k = 0; pid > 0 && k < 1000; k++) {
        if ((rc = slice_get(r.db, one, pid, &p, &e)) < 0) goto fail;
        if (rc) break;
        json_array_append_new(parents, ref_json(strq, &p));
        pid = p.parent;
    }

    int gpu = track_is_gpu(r.db, s.track), npeers = 0;
    json_t *launched = json_array(), *launcher = json_null(), *flows = json_array();
    json_object_set_new(out, "launched", launched);
    json_object_set_new(out, "flows", flows);
    if (corr_peers(&r, &s, !gpu, peers, 64, &npeers, &e) < 0) {
        json_decref(launcher);
        goto fail;
    }
    if (!gpu) {
        for (int i = 0; i < npeers; i++) json_array_append_new(launched, ref_json(strq, &peers[i]));
    } else if (npeers) {
        /* the runtime call, and the operator around it */
        json_decref(launcher);
        launcher = ref_json(strq, &peers[0]);
        json_t *op = json_null();
        for (int64_t pid = peers[0].parent, k = 0; pid > 0 && k < 1000; k++) {
            if ((rc = slice_get(r.db, one, pid, &p, &e)) < 0) {
                json_decref(launcher);
                goto fail;
            }
            if (rc) break;
            if (p.kind == TB_K_CPU_OP) {
                json_decref(op);
                op = ref_json(strq, &p);
                break;
            }
            pid = p.parent;
        }
        json_object_set_new(launcher, "op", op);
    }
    json_object_set_new(out, "launcher", launcher);
    if (slice_flows(&r, &s, kids, nkids, strq, flows, &e) < 0) goto fail;
    if (json_array_size(flows) == 0) {
        /* no flow events bound here: the correlation id stands in */
        for (int i = 0; i < npeers; i++)
            json_array_append_new(flows, json_pack("{s:s,s:s,s:I,s:o}", "dir", gpu ? "in" : "out", "cat", "ac2g",
                                                   "track", (json_int_t)peers[i].track, "ts_us", jus(peers[i].ts)));
    }
    free(kids);
    sqlite3_finalize(one);
    sqlite3_finalize(strq);
    sqlite3_finalize(args);
    run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    free(kids);
    json_decref(out);
    sqlite3_finalize(one);
    sqlite3_finalize(strq);
    sqlite3_finalize(args);
    run_close(&r);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* GET /api/runs/{id}/timeline/search                                         */
/* ======================================================================== */

struct hit {
    int64_t ts, id;
};

static int hit_cmp(const void *a, const void *b)
{
    const struct hit *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int api_timeline_search(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct run r = { 0 };
    struct err e;
    const char *q = qparam_get(req, "q");
    long long limit;
    int64_t start = INT64_MIN, end = INT64_MAX, total = 0;
    int hs, he, rc;
    char *pat = NULL;
    sqlite3_stmt *names = NULL, *cnt = NULL, *top = NULL, *one = NULL, *strq = NULL;
    struct hit *hits = NULL;
    size_t nhits = 0;
    json_t *out = NULL;

    err_clear(&e);
    if (run_open(req, &r, &e) < 0 || qparam_int(req, "limit", 100, 1, 1000, &limit, &e) < 0 ||
        qparam_us(req, "start", &start, &hs, &e) < 0 || qparam_us(req, "end", &end, &he, &e) < 0)
        goto fail;
    if (!q || strlen(q) > Q_MAX) {
        err_set(&e, ERR_INVALID, "parameter 'q' is required (1 to %d bytes)", Q_MAX);
        goto fail;
    }
    if (end <= start) {
        err_set(&e, ERR_INVALID, "parameter 'end' must be greater than start");
        goto fail;
    }
    pat = rundb_like_pattern(q);
    if (rundb_prepare(r.db,
                      "SELECT id FROM str WHERE s LIKE ? ESCAPE '\\' LIMIT "
                      "5000",
                      &names, &e) < 0 ||
        rundb_prepare(r.db, "SELECT track, count(*) FROM slice WHERE name = ? AND ts >= ? AND ts < ? GROUP BY track",
                      &cnt, &e) < 0 ||
        rundb_prepare(
            r.db, "SELECT ts, id FROM slice WHERE name = ? AND track = ? AND ts >= ? AND ts < ? ORDER BY ts LIMIT ?",
            &top, &e) < 0 ||
        rundb_prepare(r.db, "SELECT " SLICE_COLS " FROM slice WHERE id = ?", &one, &e) < 0 ||
        rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &strq, &e) < 0)
        goto fail;
    sqlite3_bind_text(names, 1, pat, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(names)) == SQLITE_ROW) {
        int64_t nid = sqlite3_column_int64(names, 0);
        sqlite3_reset(cnt);
        sqlite3_bind_int64(cnt, 1, nid);
        sqlite3_bind_int64(cnt, 2, start);
        sqlite3_bind_int64(cnt, 3, end);
        while (sqlite3_step(cnt) == SQLITE_ROW) {
            int64_t track = sqlite3_column_int64(cnt, 0);
            if (!has_track(&r, track)) continue;
            total += sqlite3_column_int64(cnt, 1);
            sqlite3_reset(top);
            sqlite3_bind_int64(top, 1, nid);
            sqlite3_bind_int64(top, 2, track);
            sqlite3_bind_int64(top, 3, start);
            sqlite3_bind_int64(top, 4, end);
            sqlite3_bind_int64(top, 5, limit);
            while (sqlite3_step(top) == SQLITE_ROW) {
                hits = xrealloc(hits, (nhits + 1) * sizeof *hits);
                hits[nhits].ts = sqlite3_column_int64(top, 0);
                hits[nhits++].id = sqlite3_column_int64(top, 1);
            }
            if (nhits > (size_t)limit * 4) {
                if (nhits) xqsort(hits, nhits, sizeof *hits, hit_cmp);
                nhits = (size_t)limit;
            }
        }
    }
    if (rc != SQLITE_DONE) {
        rundb_db_error(r.db, &e, "run database (search)");
        goto fail;
    }
    if (nhits) xqsort(hits, nhits, sizeof *hits, hit_cmp);
    if (nhits > (size_t)limit) nhits = (size_t)limit;
    out = json_object();
    json_t *arr = json_array();
    json_object_set_new(out, "total", json_integer(total));
    json_object_set_new(out, "hits", arr);
    for (size_t i = 0; i < nhits; i++) {
        struct srow s;
        if ((rc = slice_get(r.db, one, hits[i].id, &s, &e)) < 0) goto fail;
        if (rc) continue;
        json_array_append_new(arr, json_pack("{s:I,s:I,s:o,s:o,s:o}", "id", (json_int_t)s.id, "track",
                                             (json_int_t)s.track, "ts_us", jus(s.ts), "dur_us", jus(s.dur), "name",
                                             jstr_of(strq, s.name)));
    }
    sqlite3_finalize(names);
    sqlite3_finalize(cnt);
    sqlite3_finalize(top);
    sqlite3_finalize(one);
    sqlite3_finalize(strq);
    free(pat);
    free(hits);
    run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    json_decref(out);
    sqlite3_finalize(names);
    sqlite3_finalize(cnt);
    sqlite3_finalize(top);
    sqlite3_finalize(one);
    sqlite3_finalize(strq);
    free(pat);
    free(hits);
    run_close(&r);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* GET /api/runs/{id}/timeline/aggregate                                      */
/* ======================================================================== */

struct arow {
    uint32_t name; /* 0 = empty slot */
    int64_t count, total, self;
};

struct amap {
    struct arow *rows;
    size_t cap, n;
};

static struct arow *amap_get(struct amap *m, uint32_t name)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 256;
        struct arow *nr = xcalloc(ncap, sizeof *nr);
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->rows[i].name) continue;
            size_t j = (m->rows[i].name * 2654435761u) & (ncap - 1);
            while (nr[j].name) j = (j + 1) & (ncap - 1);
            nr[j] = m->rows[i];
        }
        free(m->rows);
        m->rows = nr;
        m->cap = ncap;
    }
    size_t j = (name * 2654435761u) & (m->cap - 1);
    while (m->rows[j].name && m->rows[j].name != name) j = (j + 1) & (m->cap - 1);
    if (!m->rows[j].name) {
        m->rows[j].name = name;
        m->n++;
    }
    return &m->rows[j];
}

static int arow_cmp(const void *a, const void *b)
{
    const struct arow *x = a, *y = b;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

struct open_slice {
    int64_t id;
    uint32_t name;
};

/* Adds one slice: clipped time to its name, minus from its parent's self. */
static void agg_add(struct amap *m, struct open_slice **stack, size_t *sp, size_t *cap, int64_t start, int64_t end,
                    int64_t id, int64_t parent, int64_t ts, int64_t dur, uint32_t name)
{
    int64_t lo = ts > start ? ts : start, hi = ts + dur < end ? ts + dur : end;
    int64_t clip = hi > lo ? hi - lo : 0;
    struct arow *a = amap_get(m, name ? name : UINT32_MAX);

    a->count++;
    a->total += clip;
    a->self += clip;
    size_t k = *sp;
    while (k > 0 && (*stack)[k - 1].id != parent) k--;
    if (k > 0) {
        amap_get(m, (*stack)[k - 1].name ? (*stack)[k - 1].name : UINT32_MAX)->self -= clip;
        *sp = k;
    } else {
        *sp = 0;
    }
    if (*sp == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *stack = xrealloc(*stack, *cap * sizeof **stack);
    }
    (*stack)[(*sp)++] = (struct open_slice){ id, name };
}

static int aggregate_track(struct run *r, sqlite3_stmt *one, sqlite3_stmt *range, int64_t track, int64_t start,
                           int64_t end, struct amap *m, int64_t *scanned, struct err *e)
{
    int64_t lo, hi, chain[256];
    int nchain = 0, rc;
    struct open_slice *stack = NULL;
    size_t sp = 0, cap = 0;
    struct srow s;

    if (timeline_slice_range(r->db, track, start, end, &lo, &hi, e) < 0) return e->code;
    /* the slices open at start: the last one before it and its parents */
    for (int64_t pid = lo - 1; pid > 0 && nchain < 256;) {
        if ((rc = slice_get(r->db, one, pid, &s, e)) < 0) return rc;
        if (rc || s.track != track) break;
        if (s.ts + s.dur > start) chain[nchain++] = pid;
        pid = s.parent;
    }
    for (int i = nchain - 1; i >= 0; i--) {
        if ((rc = slice_get(r->db, one, chain[i], &s, e)) < 0) {
            free(stack);
            return rc;
        }
        agg_add(m, &stack, &sp, &cap, start, end, s.id, s.parent, s.ts, s.dur, s.name);
    }
    sqlite3_reset(range);
    sqlite3_bind_int64(range, 1, lo);
    sqlite3_bind_int64(range, 2, hi);
    while ((rc = sqlite3_step(range)) == SQLITE_ROW) {
        if (++*scanned > SCAN_MAX) {
            free(stack);
            return err_set(e, ERR_TOO_LARGE, "the window holds more than %d slices; narrow it", SCAN_MAX);
        }
        agg_add(m, &stack, &sp, &cap, start, end, sqlite3_column_int64(range, 0), sqlite3_column_int64(range, 1),
                sqlite3_column_int64(range, 2), sqlite3_column_int64(range, 3),
                (uint32_t)sqlite3_column_int64(range, 4));
    }
    free(stack);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (aggregate)");
}

static int aggregate_counters(struct run *r, int64_t start, int64_t end, json_t *arr, struct err *e)
{
    sqlite3_stmt *ser = NULL;
    int rc;

    if (rundb_prepare(r->db, "SELECT id, name FROM cseries WHERE rank = ? ORDER BY id", &ser, e) < 0) return e->code;
    sqlite3_bind_int(ser, 1, r->rank);
    while ((rc = sqlite3_step(ser)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(ser, 0), n;
        double mn, mx, avg;
        if (timeline_counter_stats(r->db, id, start, end, &mn, &mx, &avg, &n, e) < 0) break;
        json_t *c = json_object();
        json_object_set_new(c, "id", json_integer(id));
        json_object_set_new(c, "name", text_or_null(ser, 1));
        json_object_set_new(c, "min", n ? json_real(mn) : json_null());
        json_object_set_new(c, "max", n ? json_real(mx) : json_null());
        json_object_set_new(c, "avg", n ? json_real(avg) : json_null());
        json_array_append_new(arr, c);
    }
    if (!e->code && rc != SQLITE_DONE) rundb_db_error(r->db, e, "run database (counters)");
    sqlite3_finalize(ser);
    return e->code;
}

int api_timeline_aggregate(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct run r = { 0 };
    struct err e;
    int64_t start, end, *tracks = NULL, scanned = 0;
    size_t ntracks = 0;
    sqlite3_stmt *one = NULL, *range = NULL, *strq = NULL;
    struct amap m = { 0 };
    json_t *out = NULL;

    err_clear(&e);
    if (run_open(req, &r, &e) < 0 || param_window(req, &r, 1, &start, &end, &e) < 0 ||
        param_tracks(req, &r, &tracks, &ntracks, &e) < 0)
        goto fail;
    if (rundb_prepare(r.db, "SELECT " SLICE_COLS " FROM slice WHERE id = ?", &one, &e) < 0 ||
        rundb_prepare(r.db, "SELECT id, coalesce(parent, 0), ts, dur, name FROM slice WHERE id >= ? AND id < ?", &range,
                      &e) < 0 ||
        rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &strq, &e) < 0)
        goto fail;
    for (size_t i = 0; i < ntracks; i++)
        if (aggregate_track(&r, one, range, tracks[i], start, end, &m, &scanned, &e) < 0) goto fail;
    /* compact, sort by total, keep the top rows */
    size_t n = 0;
    for (size_t i = 0; i < m.cap; i++)
        if (m.rows[i].name) m.rows[n++] = m.rows[i];
    xqsort(m.rows, n, sizeof *m.rows, arow_cmp);
    out = json_object();
    json_t *rows = json_array(), *counters = json_array();
    json_object_set_new(out, "start_us", jus(start));
    json_object_set_new(out, "end_us", jus(end));
    json_object_set_new(out, "rows", rows);
    json_object_set_new(out, "counters", counters);
    for (size_t i = 0; i < n && i < AGG_ROWS; i++) {
        struct arow *a = &m.rows[i];
        json_array_append_new(rows, json_pack("{s:o,s:I,s:o,s:o,s:o}", "name",
                                              a->name == UINT32_MAX ? json_string("") : jstr_of(strq, a->name),
                                              "count", (json_int_t)a->count, "total_us", jus(a->total), "self_us",
                                              jus(a->self > 0 ? a->self : 0), "avg_us",
                                              json_real((double)a->total / (double)a->count / 1000.0)));
    }
    if (aggregate_counters(&r, start, end, counters, &e) < 0) goto fail;
    free(m.rows);
    free(tracks);
    sqlite3_finalize(one);
    sqlite3_finalize(range);
    sqlite3_finalize(strq);
    run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    json_decref(out);
    free(m.rows);
    free(tracks);
    sqlite3_finalize(one);
    sqlite3_finalize(range);
    sqlite3_finalize(strq);
    run_close(&r);
    return http_send_err(conn, &e);
}

/* api_search.c — /api/runs/{id}/timeline/search and /timeline/aggregate
 * (see include/api/api_search.h). */
#define LOG_MODULE "api"
#include "api/api_search.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_run.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "base/xmalloc.h"
#include "derive/timeline.h"
#include "derive/timeline_agg.h"
#include "derive/timeline_query.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/model.h"
#include "store/rundb.h"
#include "api/api_slice.h"

#define Q_MAX 256         /* bytes of a search text */
#define NAMES_MAX 5000    /* str ids a search looks at */
#define AGG_ROWS 500      /* rows of an aggregate */

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
    struct api_run r = { 0 };
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
    if (api_run_open(req, &r, API_RUN_TIMELINE, &e) < 0 || qparam_int(req, "limit", 100, 1, 1000, &limit, &e) < 0 ||
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
        rundb_prepare(r.db, "SELECT " API_SLICE_COLS " FROM slice WHERE id = ?", &one, &e) < 0 ||
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
            if (!api_run_has_track(&r, track)) continue;
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
        struct api_slice_row s;
        if ((rc = api_slice_get(r.db, one, hits[i].id, &s, &e)) < 0) goto fail;
        if (rc) continue;
        json_array_append_new(arr, json_pack("{s:I,s:I,s:o,s:o,s:o}", "id", (json_int_t)s.id, "track",
                                             (json_int_t)s.track, "ts_us", api_run_jus(s.ts), "dur_us", api_run_jus(s.dur), "name",
                                             api_run_jstr(strq, s.name)));
    }
    sqlite3_finalize(names);
    sqlite3_finalize(cnt);
    sqlite3_finalize(top);
    sqlite3_finalize(one);
    sqlite3_finalize(strq);
    free(pat);
    free(hits);
    api_run_close(&r);
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
    api_run_close(&r);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* GET /api/runs/{id}/timeline/aggregate                                      */
/* ======================================================================== */

struct arow {
    uint32_t name; /* 0 = empty slot */
    int64_t count, total, self;
};

/* name -> struct arow (name UINT32_MAX: slices without a name). */
struct amap {
    struct hmap map;
};

static struct arow *amap_get(struct amap *m, uint32_t name)
{
    int fresh;
    struct arow *a = hmap_put(&m->map, hmap_hash_u64(name), &name, sizeof name, &fresh);
    if (fresh) a->name = name;
    return a;
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

/* Adds one slice (counted when count): clipped time to its name, minus
 * from its parent's self. */
static void agg_add(struct amap *m, struct open_slice **stack, size_t *sp, size_t *cap, int64_t start, int64_t end,
                    int64_t id, int64_t parent, int64_t ts, int64_t dur, uint32_t name, int count)
{
    int64_t lo = ts > start ? ts : start, hi = ts + dur < end ? ts + dur : end;
    int64_t clip = hi > lo ? hi - lo : 0;
    struct arow *a = amap_get(m, name ? name : UINT32_MAX);

    a->count += count;
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

/* The slices of track overlapping [start, end), read one by one; the ones
 * open at start are counted only when count_open (a right edge: they were
 * counted where they start). */
static int aggregate_track(struct api_run *r, sqlite3_stmt *one, sqlite3_stmt *range, int64_t track, int64_t start,
                           int64_t end, int count_open, struct amap *m, int64_t *scanned, struct err *e)
{
    int64_t lo, hi, chain[256];
    int nchain = 0, rc;
    struct open_slice *stack = NULL;
    size_t sp = 0, cap = 0;
    struct api_slice_row s;

    if (timeline_slice_range(r->db, track, start, end, &lo, &hi, e) < 0) return e->code;
    /* the slices open at start: the last one before it and its parents */
    for (int64_t pid = lo - 1; pid > 0 && nchain < 256;) {
        if ((rc = api_slice_get(r->db, one, pid, &s, e)) < 0) return rc;
        if (rc || s.track != track) break;
        if (s.ts + s.dur > start) chain[nchain++] = pid;
        pid = s.parent;
    }
    for (int i = nchain - 1; i >= 0; i--) {
        if ((rc = api_slice_get(r->db, one, chain[i], &s, e)) < 0) {
            free(stack);
            return rc;
        }
        agg_add(m, &stack, &sp, &cap, start, end, s.id, s.parent, s.ts, s.dur, s.name, count_open);
    }
    sqlite3_reset(range);
    sqlite3_bind_int64(range, 1, lo);
    sqlite3_bind_int64(range, 2, hi);
    while ((rc = sqlite3_step(range)) == SQLITE_ROW) {
        if (++*scanned > API_SCAN_MAX) {
            free(stack);
            return err_set(e, ERR_TOO_LARGE, "the window holds more than %d slices; narrow it", API_SCAN_MAX);
        }
        agg_add(m, &stack, &sp, &cap, start, end, sqlite3_column_int64(range, 0), sqlite3_column_int64(range, 1),
                sqlite3_column_int64(range, 2), sqlite3_column_int64(range, 3),
                (uint32_t)sqlite3_column_int64(range, 4), 1);
    }
    free(stack);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (aggregate)");
}

/* add() of timeline_agg_slices: a stored row into the map. */
static void agg_stored(void *ctx, uint32_t name, int64_t n, int64_t total, int64_t self)
{
    struct arow *a = amap_get(ctx, name ? name : UINT32_MAX);
    a->count += n;
    a->total += total;
    a->self += self;
}

/* One track over [start, end): the whole precomputed buckets inside it,
 * and the slices of its two edges read one by one. */
static int aggregate_window(struct api_run *r, sqlite3_stmt *one, sqlite3_stmt *range, int64_t track, int64_t start,
                            int64_t end, struct amap *m, int64_t *scanned, struct err *e)
{
    int64_t a, b;

    if (timeline_agg_slices(r->db, track, start, end, &a, &b, agg_stored, m, e) < 0) return e->code;
    if (a >= b) return aggregate_track(r, one, range, track, start, end, 1, m, scanned, e);
    if (a > start && aggregate_track(r, one, range, track, start, a, 1, m, scanned, e) < 0) return e->code;
    return b < end ? aggregate_track(r, one, range, track, b, end, 0, m, scanned, e) : 0;
}

static int aggregate_counters(struct api_run *r, int64_t start, int64_t end, json_t *arr, struct err *e)
{
    sqlite3_stmt *ser = NULL;
    int rc;

    if (rundb_prepare(r->db, "SELECT id, name FROM cseries WHERE rank = ? ORDER BY id", &ser, e) < 0) return e->code;
    sqlite3_bind_int(ser, 1, r->rank);
    while ((rc = sqlite3_step(ser)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(ser, 0);
        struct timeline_cstats cs;
        if (timeline_agg_counter(r->db, id, start, end, &cs, e) < 0) break;
        json_t *c = json_object();
        json_object_set_new(c, "id", json_integer(id));
        json_object_set_new(c, "name", api_run_text_or_null(ser, 1));
        json_object_set_new(c, "min", cs.n ? json_real(cs.min) : json_null());
        json_object_set_new(c, "max", cs.n ? json_real(cs.max) : json_null());
        json_object_set_new(c, "avg", cs.covered ? json_real(cs.area / (double)cs.covered) : json_null());
        json_array_append_new(arr, c);
    }
    if (!e->code && rc != SQLITE_DONE) rundb_db_error(r->db, e, "run database (counters)");
    sqlite3_finalize(ser);
    return e->code;
}

int api_timeline_aggregate(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct err e;
    int64_t start, end, *tracks = NULL, scanned = 0;
    size_t ntracks = 0;
    sqlite3_stmt *one = NULL, *range = NULL, *strq = NULL;
    struct amap m;
    struct arow *rows = NULL;
    json_t *out = NULL;

    err_clear(&e);
    hmap_init(&m.map, sizeof(struct arow), 256);
    if (api_run_open(req, &r, API_RUN_TIMELINE, &e) < 0 || api_run_param_window(req, &r, 1, &start, &end, &e) < 0 ||
        api_run_param_tracks(req, &r, &tracks, &ntracks, &e) < 0)
        goto fail;
    if (rundb_prepare(r.db, "SELECT " API_SLICE_COLS " FROM slice WHERE id = ?", &one, &e) < 0 ||
        rundb_prepare(r.db, "SELECT id, coalesce(parent, 0), ts, dur, name FROM slice WHERE id >= ? AND id < ?", &range,
                      &e) < 0 ||
        rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &strq, &e) < 0)
        goto fail;
    for (size_t i = 0; i < ntracks; i++)
        if (aggregate_window(&r, one, range, tracks[i], start, end, &m, &scanned, &e) < 0) goto fail;
    /* compact, sort by total, keep the top rows */
    size_t n = 0, pos = 0;
    const struct arow *row;
    rows = xmalloc((m.map.n ? m.map.n : 1) * sizeof *rows);
    while ((row = hmap_next(&m.map, &pos, NULL, NULL))) rows[n++] = *row;
    xqsort(rows, n, sizeof *rows, arow_cmp);
    out = json_object();
    json_t *jrows = json_array(), *counters = json_array();
    json_object_set_new(out, "start_us", api_run_jus(start));
    json_object_set_new(out, "end_us", api_run_jus(end));
    json_object_set_new(out, "rows", jrows);
    json_object_set_new(out, "counters", counters);
    for (size_t i = 0; i < n && i < AGG_ROWS; i++) {
        struct arow *a = &rows[i];
        json_array_append_new(jrows, json_pack("{s:o,s:I,s:o,s:o,s:o}", "name",
                                              a->name == UINT32_MAX ? json_string("") : api_run_jstr(strq, a->name),
                                              "count", (json_int_t)a->count, "total_us", api_run_jus(a->total), "self_us",
                                              api_run_jus(a->self > 0 ? a->self : 0), "avg_us",
                                              json_real((double)a->total / (double)a->count / 1000.0)));
    }
    if (aggregate_counters(&r, start, end, counters, &e) < 0) goto fail;
    free(rows);
    hmap_free(&m.map, NULL);
    free(tracks);
    sqlite3_finalize(one);
    sqlite3_finalize(range);
    sqlite3_finalize(strq);
    api_run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    json_decref(out);
    free(rows);
    hmap_free(&m.map, NULL);
    free(tracks);
    sqlite3_finalize(one);
    sqlite3_finalize(range);
    sqlite3_finalize(strq);
    api_run_close(&r);
    return http_send_err(conn, &e);
}


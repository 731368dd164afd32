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
#include "store/nameids.h"
#include "store/rundb.h"
#include "api/api_slice.h"

#define Q_MAX 256         /* bytes of a search text */
#define FEW_NAMES 64      /* up to this many matching names a page seeks by name */
#define SEARCH_SCAN 200000 /* slices a page reads in time order per track before seeking by name */
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

/* A search: the matching names, the window, the cursor and the page. */
struct search {
    struct api_run *r;
    struct hmap names; /* str id -> nothing */
    uint32_t *ids;     /* the same, in an array */
    size_t nids;
    int64_t start, end, cts, cid; /* hits: start <= ts < end and (ts, id) > (cts, cid) */
    size_t limit;
    struct hit *hits;
    size_t nhits;
    sqlite3_stmt *ts, *first, *scan;
    struct nameids *byname;
    int64_t total;
};

static int name_in(const struct search *s, uint32_t name)
{
    return hmap_get(&s->names, hmap_hash_u64(name), &name, sizeof name) != NULL;
}

static void add_hit(struct search *s, int64_t ts, int64_t id)
{
    s->hits = xrealloc(s->hits, (s->nhits + 1) * sizeof *s->hits);
    s->hits[s->nhits++] = (struct hit){ ts, id };
}

static int cmp_id(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The first `need` hits of track after (cts, cid), through name_ids. In
 * one track id order is (ts, id) order, so the hits are the `need` least
 * ids of the names in the track's id range past the cursor: merged as ids,
 * and only those read from the slices for their ts. */
static int page_seek(struct search *s, int64_t track, int64_t cts, int64_t cid, size_t need, struct err *e)
{
    int64_t lo, hi, id, *cand = NULL;
    size_t n = 0, cap = 0;
    int rc;
    if (timeline_slice_range(s->r->db, track, cts, s->end, &lo, &hi, e) < 0) return e->code;
    if (lo >= hi) return 0;
    /* past the cursor: a few slices at ts == cts may not be */
    sqlite3_reset(s->first);
    sqlite3_bind_int64(s->first, 1, lo);
    sqlite3_bind_int64(s->first, 2, hi);
    sqlite3_bind_int64(s->first, 3, cts);
    sqlite3_bind_int64(s->first, 4, cid);
    if ((rc = sqlite3_step(s->first)) != SQLITE_ROW)
        return rc == SQLITE_DONE ? 0 : rundb_db_error(s->r->db, e, "run database (search)");
    lo = sqlite3_column_int64(s->first, 0);
    hi--; /* inclusive from here */
    rc = 0;
    for (size_t i = 0; i < s->nids && rc >= 0; i++) {
        size_t got = 0;
        nameids_begin(s->byname, s->ids[i], lo, hi);
        while (got < need && (rc = nameids_next(s->byname, &id, e)) == 1) {
            if (n == cap) cand = xrealloc(cand, (cap = cap ? cap * 2 : 256) * sizeof *cand);
            cand[n++] = id;
            got++;
        }
        /* keep the least `need`: later names need go no further */
        if (n > need * 4) {
            xqsort(cand, n, sizeof *cand, cmp_id);
            n = need;
            hi = cand[need - 1];
        }
    }
    xqsort(cand, n, sizeof *cand, cmp_id);
    if (n > need) n = need;
    for (size_t i = 0; i < n && rc >= 0; i++) {
        sqlite3_reset(s->ts);
        sqlite3_bind_int64(s->ts, 1, cand[i]);
        if (sqlite3_step(s->ts) == SQLITE_ROW) add_hit(s, sqlite3_column_int64(s->ts, 0), cand[i]);
        else rc = rundb_db_error(s->r->db, e, "run database (search)");
    }
    free(cand);
    return rc < 0 ? rc : 0;
}

/* The first `limit` hits of one track after the cursor: read in time order
 * (ids follow (track, ts)) while matches are dense, else by name. */
static int page_track(struct search *s, int64_t track, struct err *e)
{
    int64_t lo, hi, cts = s->cts > s->start ? s->cts : s->start, cid = s->cts >= s->start ? s->cid : 0;
    size_t found = 0, read = 0;
    int rc;

    if (s->nids <= FEW_NAMES) return page_seek(s, track, cts, cid, s->limit, e);
    if (timeline_slice_range(s->r->db, track, cts, s->end, &lo, &hi, e) < 0) return e->code;
    sqlite3_reset(s->scan);
    sqlite3_bind_int64(s->scan, 1, lo);
    sqlite3_bind_int64(s->scan, 2, hi);
    while (found < s->limit && read < SEARCH_SCAN && (rc = sqlite3_step(s->scan)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s->scan, 0), ts = sqlite3_column_int64(s->scan, 1);
        read++;
        cts = ts;
        cid = id;
        if ((ts == s->cts && id <= s->cid) || !name_in(s, (uint32_t)sqlite3_column_int64(s->scan, 2))) continue;
        add_hit(s, ts, id);
        found++;
    }
    if (found < s->limit && read == SEARCH_SCAN) return page_seek(s, track, cts, cid, s->limit - found, e);
    return 0;
}

static void count_stored(void *ctx, uint32_t name, int64_t n, int64_t total, int64_t self)
{
    struct search *s = ctx;
    (void)total;
    (void)self;
    if (name_in(s, name)) s->total += n;
}

/* Matches of track starting in [lo, hi), read in time order. */
static int count_scan(struct search *s, int64_t track, int64_t lo_t, int64_t hi_t, struct err *e)
{
    int64_t lo, hi;
    int rc;

    if (lo_t >= hi_t) return 0;
    if (timeline_slice_range(s->r->db, track, lo_t, hi_t, &lo, &hi, e) < 0) return e->code;
    sqlite3_reset(s->scan);
    sqlite3_bind_int64(s->scan, 1, lo);
    sqlite3_bind_int64(s->scan, 2, hi);
    while ((rc = sqlite3_step(s->scan)) == SQLITE_ROW)
        if (name_in(s, (uint32_t)sqlite3_column_int64(s->scan, 2))) s->total++;
    return rc == SQLITE_DONE ? 0 : rundb_db_error(s->r->db, e, "run database (search)");
}

/* Matches of track in the window: the whole stored buckets, the edges read;
 * name by name through name_ids on a run without the buckets. */
static int count_track(struct search *s, int64_t track, struct err *e)
{
    int64_t a, b;

    if (timeline_agg_slices(s->r->db, track, s->start, s->end, &a, &b, count_stored, s, e) < 0) return e->code;
    if (a < b) {
        if (count_scan(s, track, s->start, a, e) < 0) return e->code;
        return count_scan(s, track, b, s->end, e);
    }
    if (s->nids > FEW_NAMES && count_scan(s, track, s->start, s->end, e) == 0) return 0;
    if (e->code) return e->code;
    if (timeline_slice_range(s->r->db, track, s->start, s->end, &a, &b, e) < 0) return e->code;
    for (size_t i = 0; i < s->nids; i++) {
        int64_t n;
        if (nameids_count(s->byname, s->ids[i], a, b - 1, &n, e) < 0) return e->code;
        s->total += n;
    }
    return 0;
}

/* ?after=TS:ID (µs as in a hit, its id): hits strictly after it in (ts, id)
 * order. */
static int param_after(struct http_req *req, int64_t *cts, int64_t *cid, struct err *e)
{
    const char *v = qparam_get(req, "after"), *colon;
    char tmp[64];
    long long id;

    *cts = INT64_MIN;
    *cid = 0;
    if (!v) return 0;
    colon = strchr(v, ':');
    if (!colon || (size_t)(colon - v) >= sizeof tmp) goto bad;
    memcpy(tmp, v, (size_t)(colon - v));
    tmp[colon - v] = '\0';
    if (qparam_parse_us(tmp, cts) < 0 || qparam_parse_int(colon + 1, 0, INT64_MAX, &id) < 0) goto bad;
    *cid = id;
    return 0;
bad:
    return err_set(e, ERR_INVALID, "parameter 'after' must be TS:ID (the ts_us and id of a hit)");
}

int api_timeline_search(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct err e;
    const char *q = qparam_get(req, "q");
    long long limit;
    int hs, he, rc;
    char *pat = NULL;
    sqlite3_stmt *names = NULL, *one = NULL, *strq = NULL;
    struct search s;
    json_t *out = NULL;

    err_clear(&e);
    memset(&s, 0, sizeof s);
    hmap_init(&s.names, 1, 256);
    s.r = &r;
    s.start = INT64_MIN;
    s.end = INT64_MAX;
    if (api_run_open(req, &r, API_RUN_TIMELINE, &e) < 0 || qparam_int(req, "limit", 100, 1, 1000, &limit, &e) < 0 ||
        qparam_us(req, "start", &s.start, &hs, &e) < 0 || qparam_us(req, "end", &s.end, &he, &e) < 0 ||
        param_after(req, &s.cts, &s.cid, &e) < 0)
        goto fail;
    s.limit = (size_t)limit;
    if (!q || strlen(q) > Q_MAX) {
        err_set(&e, ERR_INVALID, "parameter 'q' is required (1 to %d bytes)", Q_MAX);
        goto fail;
    }
    if (s.end <= s.start) {
        err_set(&e, ERR_INVALID, "parameter 'end' must be greater than start");
        goto fail;
    }
    pat = rundb_like_pattern(q);
    if (rundb_prepare(r.db, "SELECT id FROM str WHERE s LIKE ? ESCAPE '\\'", &names, &e) < 0 ||
        rundb_prepare(r.db, "SELECT ts FROM slice WHERE id = ?", &s.ts, &e) < 0 ||
        rundb_prepare(r.db, "SELECT id FROM slice WHERE id >= ?1 AND id < ?2 AND (ts > ?3 OR id > ?4) ORDER BY id LIMIT 1",
                      &s.first, &e) < 0 ||
        rundb_prepare(r.db, "SELECT id, ts, name FROM slice WHERE id >= ? AND id < ?", &s.scan, &e) < 0 ||
        nameids_open(r.db, &s.byname, &e) < 0 ||
        rundb_prepare(r.db, "SELECT " API_SLICE_COLS " FROM slice WHERE id = ?", &one, &e) < 0 ||
        rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &strq, &e) < 0)
        goto fail;
    sqlite3_bind_text(names, 1, pat, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(names)) == SQLITE_ROW) {
        uint32_t nid = (uint32_t)sqlite3_column_int64(names, 0);
        hmap_put(&s.names, hmap_hash_u64(nid), &nid, sizeof nid, NULL);
        s.ids = xrealloc(s.ids, (s.nids + 1) * sizeof *s.ids);
        s.ids[s.nids++] = nid;
    }
    if (rc != SQLITE_DONE) {
        rundb_db_error(r.db, &e, "run database (search)");
        goto fail;
    }
    for (size_t i = 0; i < r.ntracks && s.nids; i++)
        if (page_track(&s, r.tracks[i], &e) < 0 || count_track(&s, r.tracks[i], &e) < 0) goto fail;
    if (s.nhits) xqsort(s.hits, s.nhits, sizeof *s.hits, hit_cmp);
    if (s.nhits > s.limit) s.nhits = s.limit;
    out = json_object();
    json_t *arr = json_array();
    json_object_set_new(out, "total", json_integer(s.total));
    json_object_set_new(out, "hits", arr);
    for (size_t i = 0; i < s.nhits; i++) {
        struct api_slice_row row;
        if ((rc = api_slice_get(r.db, one, s.hits[i].id, &row, &e)) < 0) goto fail;
        if (rc) continue;
        json_array_append_new(arr, json_pack("{s:I,s:I,s:o,s:o,s:o}", "id", (json_int_t)row.id, "track",
                                             (json_int_t)row.track, "ts_us", api_run_jus(row.ts), "dur_us",
                                             api_run_jus(row.dur), "name", api_run_jstr(strq, row.name)));
    }
    if (s.nhits == s.limit) {
        /* a full page: the cursor of its last hit asks for the next */
        struct sbuf b = { 0 };
        sbuf_int(&b, s.hits[s.nhits - 1].ts, 1);
        sbuf_add(&b, ":");
        sbuf_int(&b, s.hits[s.nhits - 1].id, 0);
        json_object_set_new(out, "next", json_stringn(b.p, b.n));
        free(b.p);
    } else {
        json_object_set_new(out, "next", json_null());
    }
fail:
    sqlite3_finalize(names);
    sqlite3_finalize(s.ts);
    sqlite3_finalize(s.first);
    sqlite3_finalize(s.scan);
    nameids_close(s.byname);
    sqlite3_finalize(one);
    sqlite3_finalize(strq);
    hmap_free(&s.names, NULL);
    free(s.ids);
    free(s.hits);
    free(pat);
    api_run_close(&r);
    if (e.code) {
        json_decref(out);
        return http_send_err(conn, &e);
    }
    return http_send_json(conn, 200, out);
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
    int64_t lo, hi, first, last, *open = NULL;
    size_t nopen = 0;
    int rc;
    struct open_slice *stack = NULL;
    size_t sp = 0, cap = 0;
    struct api_slice_row s;

    if (timeline_slice_range(r->db, track, start, end, &lo, &hi, e) < 0 ||
        timeline_slice_range(r->db, track, INT64_MIN, INT64_MAX, &first, &last, e) < 0 ||
        timeline_open_at(r->db, track, start, lo - 1, first, &open, &nopen, e) < 0)
        return e->code;
    /* the slices open at start, parents first */
    for (size_t i = 0; i < nopen; i++) {
        if ((rc = api_slice_get(r->db, one, open[i], &s, e)) < 0) {
            free(open);
            free(stack);
            return rc;
        }
        if (!rc) agg_add(m, &stack, &sp, &cap, start, end, s.id, s.parent, s.ts, s.dur, s.name, count_open);
    }
    free(open);
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


/* timeline_query.c — viewports read from the level-of-detail tables (see
 * include/derive/timeline_query.h). */
#define LOG_MODULE "timeline"
#include "derive/timeline_query.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/gpuscan.h"
#include "store/rundb.h"
#include "store/scan.h"

#include "derive/timeline.h"
#include "derive/timeline_agg.h"
#include "derive/timeline_counters.h"
#include "derive/timeline_lod.h"

/* ====================================================================== */
/* Query                                                                  */
/* ====================================================================== */

/* The first id in [lo, hi) whose ts >= t (hi when none). */
static int lower_bound(sqlite3 *db, sqlite3_stmt *tsq, int64_t lo, int64_t hi, int64_t t, int64_t *out,
                       struct err *e)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        sqlite3_bind_int64(tsq, 1, mid);
        int rc = sqlite3_step(tsq);
        int64_t ts = rc == SQLITE_ROW ? sqlite3_column_int64(tsq, 0) : INT64_MAX;
        sqlite3_reset(tsq);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) return rundb_db_error(db, e, "timeline (slice ts)");
        if (ts < t) lo = mid + 1;
        else hi = mid;
    }
    *out = lo;
    return 0;
}

static int track_bounds(sqlite3 *db, int64_t track, int64_t *first, int64_t *last, int *ndepth, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    *first = 1;
    *last = 0;
    *ndepth = 0;
    if (rundb_prepare(db, "SELECT first_slice, last_slice, coalesce(max_depth, 0) FROM track WHERE id = ?", &st, e) < 0)
        return e->code;
    sqlite3_bind_int64(st, 1, track);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        *first = sqlite3_column_int64(st, 0);
        *last = sqlite3_column_int64(st, 1);
        *ndepth = sqlite3_column_int(st, 2) + 1;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (track)");
}

int timeline_slice_range(sqlite3 *db, int64_t track, int64_t t_lo, int64_t t_hi, int64_t *lo, int64_t *hi,
                         struct err *e)
{
    sqlite3_stmt *tsq;
    int64_t first, last;
    int nd;

    if (track_bounds(db, track, &first, &last, &nd, e) < 0) return e->code;
    if (rundb_prepare(db, "SELECT ts FROM slice WHERE id = ?", &tsq, e) < 0) return e->code;
    int rc = lower_bound(db, tsq, first, last + 1, t_lo, lo, e);
    if (rc == 0) rc = lower_bound(db, tsq, *lo, last + 1, t_hi, hi, e);
    sqlite3_finalize(tsq);
    return rc;
}

/* Per depth pixel merging: an item claims the key column; a row that
 * reaches past it starts the next item, anything else merges in. A column
 * is 2^shift pixels (coarse for deep levels). */
struct lane {
    struct timeline_depth d;
    int64_t key;   /* column of the open item; -1: none */
    int64_t ldur;  /* longest member of the open item */
    int shift;
};

struct qstate {
    int64_t start, end;
    int width;
    double scale; /* pixels per ns */
    struct lane *lanes;
    int nlanes;
    /* the current track's request: depths dmin..dmax itemized, deeper ones
     * fed to `deep`; depths >= fine merged per TIMELINE_COARSE_PX pixels */
    int dmin, dmax, fine;
    struct lane deep;
    int clod_packed; /* clod is clodpack's chunks, else the rows of a run stored before it */
};

static int64_t col_of(const struct qstate *q, int64_t t)
{
    double c = floor((double)(t - q->start) * q->scale);
    if (c < 0) return 0;
    if (c >= q->width) return q->width - 1;
    return (int64_t)c;
}

static int coarse_shift(void)
{
    int sh = 0;
    while ((1 << sh) < TIMELINE_COARSE_PX) sh++;
    return sh;
}

static void lane_feed(struct qstate *q, struct lane *l, int64_t ts, int64_t end, int64_t n, int64_t ldur,
                      uint32_t name, int64_t id)
{
    int64_t c0 = col_of(q, ts) >> l->shift, c1 = col_of(q, end > ts ? end - 1 : ts) >> l->shift;
    if (l->key < 0 || c1 > l->key) {
        if (l->d.nitems == l->d.cap) {
            l->d.cap = l->d.cap ? l->d.cap * 2 : 16;
            l->d.items = xrealloc(l->d.items, l->d.cap * sizeof *l->d.items);
        }
        struct timeline_item *it = &l->d.items[l->d.nitems++];
        it->ts = ts;
        it->dur = end - ts;
        it->id = n == 1 ? id : 0;
        it->name = name;
        it->n = (uint32_t)n;
        l->key = l->key < 0 || c0 > l->key ? c0 : l->key + 1;
        l->ldur = ldur;
        return;
    }
    struct timeline_item *it = &l->d.items[l->d.nitems - 1];
    int64_t iend = it->ts + it->dur;
    if (end > iend) iend = end;
    if (ts < it->ts) it->ts = ts;
    it->dur = iend - it->ts;
    it->n += (uint32_t)n;
    it->id = 0;
    if (ldur > l->ldur) {
        l->ldur = ldur;
        it->name = name;
    }
}

static void feed(struct qstate *q, int depth, int64_t ts, int64_t end, int64_t n, int64_t ldur, uint32_t name,
                 int64_t id)
{
    if (depth < q->dmin) return;
    if (depth > q->dmax) {
        lane_feed(q, &q->deep, ts, end, n, ldur, name, id);
        return;
    }
    if (depth >= q->nlanes) {
        int nn = depth + 1;
        q->lanes = xrealloc(q->lanes, (size_t)nn * sizeof *q->lanes);
        for (int i = q->nlanes; i < nn; i++) {
            memset(&q->lanes[i], 0, sizeof q->lanes[i]);
            q->lanes[i].d.depth = i;
            q->lanes[i].key = -1;
        }
        q->nlanes = nn;
    }
    struct lane *l = &q->lanes[depth];
    l->shift = depth >= q->fine ? coarse_shift() : 0;
    lane_feed(q, l, ts, end, n, ldur, name, id);
}

/* Feeds the slices with ids in [lo, hi) (time order) of depths dlo..dhi. */
static int feed_raw(sqlite3 *db, sqlite3_stmt *raw, struct qstate *q, int64_t lo, int64_t hi, int dlo, int dhi,
                    uint64_t *nread, struct err *e)
{
    int rc;

    if (lo >= hi) return 0;
    sqlite3_bind_int64(raw, 1, lo);
    sqlite3_bind_int64(raw, 2, hi);
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(raw, 1), dur = sqlite3_column_int64(raw, 2);
        int depth = sqlite3_column_int(raw, 3);
        (*nread)++;
        if (depth < dlo || depth > dhi) continue;
        feed(q, depth, ts, ts + dur, 1, dur, (uint32_t)sqlite3_column_int64(raw, 4), sqlite3_column_int64(raw, 0));
    }
    sqlite3_reset(raw);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (slices)");
}

static int item_cmp(const void *x, const void *y)
{
    const struct timeline_item *a = x, *b = y;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

struct qstmts {
    sqlite3_stmt *tsq, *raw, *one, *lvl, *lod;
    int packed; /* lod is lodpack's chunks, else the rows of a run stored before it */
};

/* The lod rows of track at level in buckets [b0, b1) and depths dlo..dhi,
 * from the chunks that hold them, in key order. */
static int feed_packed(sqlite3 *db, struct qstmts *s, struct qstate *q, int level, int64_t b0, int64_t b1, int dlo,
                       int dhi, uint64_t *nread, struct err *e)
{
    int rc;
    while ((rc = sqlite3_step(s->lod)) == SQLITE_ROW) {
        struct timeline_lod_chunk c;
        struct timeline_lod_row r;
        int got;
        timeline_lod_chunk_begin(&c, level, sqlite3_column_int64(s->lod, 0), sqlite3_column_int64(s->lod, 1),
                                 sqlite3_column_blob(s->lod, 2), (size_t)sqlite3_column_bytes(s->lod, 2));
        while ((got = timeline_lod_chunk_next(&c, &r)) == 1) {
            if (r.bucket >= b1) break;
            if (r.bucket < b0 || r.depth < dlo || r.depth > dhi) continue;
            feed(q, r.depth, r.ts, r.te, r.n, r.ldur, r.name, r.fid);
            (*nread)++;
        }
        if (got < 0) return rundb_damaged(db, e, "timeline (lod chunk)");
    }
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (lod)");
}

/* Feeds depths dlo..dhi of track between slice ids lo_s and lo_e: the
 * whole buckets of the coarsest kept level no wider than bw ns from the
 * LOD, the two edges from the slices. */
static int feed_part(sqlite3 *db, struct qstmts *s, struct qstate *q, int64_t track, int64_t lo_s, int64_t lo_e,
                     double bw, int dlo, int dhi, uint64_t *nread, struct err *e)
{
    int level = -1, rc;

    sqlite3_bind_int64(s->lvl, 1, track);
    sqlite3_bind_int(s->lvl, 2, bw >= 1 ? (int)floor(log2(bw)) : -1);
    if (sqlite3_step(s->lvl) == SQLITE_ROW) level = sqlite3_column_int(s->lvl, 0);
    sqlite3_reset(s->lvl);

    int64_t b0 = 0, b1 = 0;
    if (level > 0) {
        b0 = timeline_bucket_ceil(q->start, level);
        b1 = timeline_bucket_of(q->end, level);
    }
    if (level <= 0 || b0 >= b1) return feed_raw(db, s->raw, q, lo_s, lo_e, dlo, dhi, nread, e);
    int64_t lo_a, lo_b;
    int64_t ta = b0 * ((int64_t)1 << level), tb = b1 * ((int64_t)1 << level);
    if (lower_bound(db, s->tsq, lo_s, lo_e, ta, &lo_a, e) < 0 || lower_bound(db, s->tsq, lo_a, lo_e, tb, &lo_b, e) < 0)
        return e->code;
    if (feed_raw(db, s->raw, q, lo_s, lo_a, dlo, dhi, nread, e) < 0) return e->code;
    sqlite3_bind_int64(s->lod, 1, track);
    sqlite3_bind_int(s->lod, 2, level);
    sqlite3_bind_int64(s->lod, 3, b0);
    sqlite3_bind_int64(s->lod, 4, b1);
    if (s->packed) {
        rc = feed_packed(db, s, q, level, b0, b1, dlo, dhi, nread, e);
        sqlite3_reset(s->lod);
        if (rc) return rc;
    } else {
        sqlite3_bind_int(s->lod, 5, dlo);
        sqlite3_bind_int(s->lod, 6, dhi);
        while ((rc = sqlite3_step(s->lod)) == SQLITE_ROW) {
            feed(q, sqlite3_column_int(s->lod, 0), sqlite3_column_int64(s->lod, 3), sqlite3_column_int64(s->lod, 4),
                 sqlite3_column_int64(s->lod, 2), sqlite3_column_int64(s->lod, 5),
                 (uint32_t)sqlite3_column_int64(s->lod, 6), sqlite3_column_int64(s->lod, 1));
            (*nread)++;
        }
        sqlite3_reset(s->lod);
        if (rc != SQLITE_DONE) return rundb_db_error(db, e, "timeline (lod)");
    }
    return feed_raw(db, s->raw, q, lo_b, lo_e, dlo, dhi, nread, e);
}

static int query_track(sqlite3 *db, struct qstmts *s, struct qstate *q, const struct timeline_treq *req,
                       struct timeline_track *out, uint64_t *nread, struct err *e)
{
    int64_t first, last, lo_s, lo_e, track = req->id;
    int nd, rc;
    double bw = (double)(q->end - q->start) / q->width;

    out->id = track;
    q->dmin = req->dmin;
    q->dmax = req->dmax;
    memset(&q->deep, 0, sizeof q->deep);
    q->deep.key = -1;
    q->deep.shift = coarse_shift();
    if (track_bounds(db, track, &first, &last, &nd, e) < 0) return e->code;
    if (first > last) return 0;
    if (lower_bound(db, s->tsq, first, last + 1, q->start, &lo_s, e) < 0 ||
        lower_bound(db, s->tsq, lo_s, last + 1, q->end, &lo_e, e) < 0)
        return e->code;

    /* the slices open at start */
    int64_t *open = NULL;
    size_t nopen = 0;
    if (timeline_open_at(db, track, q->start, lo_s - 1, first, &open, &nopen, e) < 0) return e->code;
    for (size_t i = 0; i < nopen; i++) {
        sqlite3_bind_int64(s->one, 1, open[i]);
        rc = sqlite3_step(s->one);
        if (rc == SQLITE_ROW) {
            int64_t ts = sqlite3_column_int64(s->one, 0), dur = sqlite3_column_int64(s->one, 1);
            if (ts < q->end)
                feed(q, sqlite3_column_int(s->one, 2), ts, ts + dur, 1, dur, (uint32_t)sqlite3_column_int64(s->one, 4),
                     open[i]);
        }
        sqlite3_reset(s->one);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            free(open);
            return rundb_db_error(db, e, "timeline (open slices)");
        }
        (*nread)++;
    }
    free(open);

    /* the top levels per pixel, the deep ones (and the deep lane) from a
     * level about TIMELINE_COARSE_PX times coarser: fewer rows to read */
    int split = req->dmax < INT_MAX && req->dmax + 1 < q->fine ? req->dmax + 1 : q->fine;
    if (split < req->dmin) split = req->dmin;
    rc = 0;
    if (split > req->dmin) rc = feed_part(db, s, q, track, lo_s, lo_e, bw, req->dmin, split - 1, nread, e);
    if (rc == 0 && split < INT_MAX)
        rc = feed_part(db, s, q, track, lo_s, lo_e, bw * TIMELINE_COARSE_PX, split, INT_MAX, nread, e);
    if (rc) {
        free(q->deep.d.items);
        return rc;
    }
    out->deep = q->deep.d;
    out->deep.depth = req->dmax < INT_MAX ? req->dmax + 1 : 0;
    memset(&q->deep, 0, sizeof q->deep);
    /* several depths feed the deep lane, the open parents innermost first */
    if (out->deep.nitems > 1) qsort(out->deep.items, out->deep.nitems, sizeof *out->deep.items, item_cmp);
    for (int i = 0; i < q->nlanes; i++) {
        struct lane *l = &q->lanes[i];
        if (!l->d.nitems) continue;
        out->depths = xrealloc(out->depths, (size_t)(out->ndepths + 1) * sizeof *out->depths);
        out->depths[out->ndepths++] = l->d;
        memset(&l->d, 0, sizeof l->d);
        l->d.depth = i;
        l->key = -1;
    }
    return 0;
}

/* Raw samples of a series (src 0: counter, 1/2: mem totals, 3: GPU busy,
 * 4: an analyses series): ?1 rank, ?2 key1, ?3 key2, ?4 ?5 the time range;
 * "before": the last one < ?4. GPU busy's packed chunks (src 3 in a run
 * with gpubusypack) instead: the chunk holding ?4 (the last to start at or
 * before it) and those after up to ?5, and the last chunk starting before
 * ?4 (its samples before ?4 are read through). */
#define NSRC 5
#define BUSY_PACKED NSRC
static const char *const raw_sql[NSRC + 1][2] = {
    { "SELECT ts, value FROM counter WHERE rank = ?1 AND name = ?2 AND ?3 = ?3 AND ts >= ?4 AND ts < ?5"
      " ORDER BY ts, id",
      "SELECT ts, value FROM counter WHERE rank = ?1 AND name = ?2 AND ?3 = ?3 AND ts < ?4"
      " ORDER BY ts DESC, id DESC LIMIT 1" },
    { "SELECT ts, total_alloc FROM mem WHERE rank = ?1 AND dev_type = ?2 AND dev_id = ?3"
      " AND total_alloc IS NOT NULL AND ts >= ?4 AND ts < ?5 ORDER BY ts, id",
      "SELECT ts, total_alloc FROM mem WHERE rank = ?1 AND dev_type = ?2 AND dev_id = ?3"
      " AND total_alloc IS NOT NULL AND ts < ?4 ORDER BY ts DESC, id DESC LIMIT 1" },
    { "SELECT ts, total_reserved FROM mem WHERE rank = ?1 AND dev_type = ?2 AND dev_id = ?3"
      " AND total_reserved IS NOT NULL AND ts >= ?4 AND ts < ?5 ORDER BY ts, id",
      "SELECT ts, total_reserved FROM mem WHERE rank = ?1 AND dev_type = ?2 AND dev_id = ?3"
      " AND total_reserved IS NOT NULL AND ts < ?4 ORDER BY ts DESC, id DESC LIMIT 1" },
    { "SELECT ts, value FROM gpubusy WHERE rank = ?1 AND ?2 = ?2 AND dev = ?3 AND ts >= ?4 AND ts < ?5 ORDER BY ts",
      "SELECT ts, value FROM gpubusy WHERE rank = ?1 AND ?2 = ?2 AND dev = ?3 AND ts < ?4 ORDER BY ts DESC LIMIT 1" },
    { "SELECT ts, value FROM ansample WHERE series = ?2 AND ?1 = ?1 AND ?3 = ?3 AND ts >= ?4 AND ts < ?5 ORDER BY ts",
      "SELECT ts, value FROM ansample WHERE series = ?2 AND ?1 = ?1 AND ?3 = ?3 AND ts < ?4 ORDER BY ts DESC LIMIT 1" },
    { "SELECT ts, n, rows FROM gpubusypack WHERE rank = ?1 AND ?2 = ?2 AND dev = ?3 AND ts < ?5 AND last >= ?4"
      " AND ts >= coalesce((SELECT max(ts) FROM gpubusypack WHERE rank = ?1 AND dev = ?3 AND ts <= ?4), ?4)"
      " ORDER BY ts",
      "SELECT ts, n, rows FROM gpubusypack WHERE rank = ?1 AND ?2 = ?2 AND dev = ?3 AND ts < ?4"
      " ORDER BY ts DESC LIMIT 1" },
};

struct timeline_series {
    sqlite3 *db;
    sqlite3_stmt *raw, *before;
    int packed;
    int64_t lo, hi;
    /* packed: the chunk of the range being read (open 0: the next row's) */
    struct timeline_busy_chunk c;
    int open, done;
};

int timeline_series_open(sqlite3 *db, int64_t series, struct timeline_series **out, struct err *e)
{
    sqlite3_stmt *st;
    int rc, src = -1;
    int64_t rank = 0, k1 = 0, k2 = 0;

    *out = NULL;
    if (rundb_prepare(db, "SELECT src, rank, key1, key2 FROM cseries WHERE id = ?", &st, e) < 0) return e->code;
    sqlite3_bind_int64(st, 1, series);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        src = sqlite3_column_int(st, 0);
        rank = sqlite3_column_int64(st, 1);
        k1 = sqlite3_column_int64(st, 2);
        k2 = sqlite3_column_int64(st, 3);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return rundb_db_error(db, e, "timeline (series)");
    if (src < 0 || src >= NSRC) return 1;
    struct timeline_series *s = xcalloc(1, sizeof *s);
    s->db = db;
    s->done = 1;
    /* gpubusy: the samples as rows, in a run stored before gpubusypack */
    if (src == 3 && (s->packed = scan_has_table(db, "gpubusypack", e)) < 0) goto fail;
    if (s->packed) src = BUSY_PACKED;
    if (rundb_prepare(db, raw_sql[src][0], &s->raw, e) < 0 || rundb_prepare(db, raw_sql[src][1], &s->before, e) < 0)
        goto fail;
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *x = i ? s->before : s->raw;
        sqlite3_bind_int64(x, 1, rank);
        sqlite3_bind_int64(x, 2, k1);
        sqlite3_bind_int64(x, 3, k2);
    }
    *out = s;
    return 0;
fail:
    timeline_series_close(s);
    return e->code;
}

void timeline_series_close(struct timeline_series *s)
{
    if (!s) return;
    sqlite3_finalize(s->raw);
    sqlite3_finalize(s->before);
    free(s);
}

int timeline_series_range(struct timeline_series *s, int64_t lo, int64_t hi, struct err *e)
{
    (void)e;
    sqlite3_reset(s->raw);
    sqlite3_bind_int64(s->raw, 4, lo);
    sqlite3_bind_int64(s->raw, 5, hi);
    s->lo = lo;
    s->hi = hi;
    s->open = 0;
    s->done = 0;
    return 0;
}

/* The packed chunk's current row as its samples' reader. */
static void chunk_of(struct timeline_busy_chunk *c, sqlite3_stmt *st)
{
    timeline_busy_chunk_begin(c, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_blob(st, 2),
                              (size_t)sqlite3_column_bytes(st, 2));
}

int timeline_series_next(struct timeline_series *s, int64_t *ts, double *v, struct err *e)
{
    int rc;
    if (s->done) return 0;
    if (!s->packed) {
        rc = sqlite3_step(s->raw);
        if (rc == SQLITE_ROW) {
            *ts = sqlite3_column_int64(s->raw, 0);
            *v = sqlite3_column_double(s->raw, 1);
            return 1;
        }
        s->done = 1;
        return rc == SQLITE_DONE ? 0 : rundb_db_error(s->db, e, "timeline (counter samples)");
    }
    for (;;) {
        if (!s->open) {
            rc = sqlite3_step(s->raw);
            if (rc != SQLITE_ROW) {
                s->done = 1;
                return rc == SQLITE_DONE ? 0 : rundb_db_error(s->db, e, "timeline (counter samples)");
            }
            chunk_of(&s->c, s->raw);
            s->open = 1;
        }
        int64_t t, x;
        int got = timeline_busy_chunk_next(&s->c, &t, &x);
        if (got < 0) {
            s->done = 1;
            return rundb_damaged(s->db, e, "timeline (GPU busy chunk)");
        }
        if (got == 0) {
            s->open = 0;
            continue;
        }
        if (t < s->lo) continue;
        if (t >= s->hi) {
            s->done = 1;
            return 0;
        }
        *ts = t;
        *v = (double)x;
        return 1;
    }
}

int timeline_series_before(struct timeline_series *s, int64_t t, int64_t *ts, double *v, struct err *e)
{
    int rc, found = 0;
    sqlite3_reset(s->before);
    sqlite3_bind_int64(s->before, 4, t);
    rc = sqlite3_step(s->before);
    if (rc == SQLITE_ROW && !s->packed) {
        *ts = sqlite3_column_int64(s->before, 0);
        *v = sqlite3_column_double(s->before, 1);
        found = 1;
    } else if (rc == SQLITE_ROW) {
        struct timeline_busy_chunk c;
        int64_t ct, cx;
        int got;
        chunk_of(&c, s->before);
        while ((got = timeline_busy_chunk_next(&c, &ct, &cx)) == 1 && ct < t) {
            *ts = ct;
            *v = (double)cx;
            found = 1;
        }
        if (got < 0) {
            sqlite3_reset(s->before);
            return rundb_damaged(s->db, e, "timeline (GPU busy chunk)");
        }
    }
    sqlite3_reset(s->before);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return rundb_db_error(s->db, e, "timeline (counter samples)");
    return found;
}

/* Adds a sample or bucket to the counter's points, one per pixel. */
static void cpoint(struct qstate *q, struct timeline_counter *out, int64_t *lastcol, int64_t ts, double mn, double mx,
                   double la)
{
    int64_t c = col_of(q, ts);
    if (c == *lastcol && out->npoints) {
        struct timeline_cpoint *p = &out->points[out->npoints - 1];
        if (mn < p->min) p->min = mn;
        if (mx > p->max) p->max = mx;
        p->last = la;
        return;
    }
    out->points = xrealloc(out->points, (out->npoints + 1) * sizeof *out->points);
    out->points[out->npoints++] = (struct timeline_cpoint){ ts, mn, mx, la };
    *lastcol = c;
}

static int query_counter(sqlite3 *db, struct qstate *q, int64_t series, struct timeline_counter *out,
                         uint64_t *nread, struct err *e)
{
    sqlite3_stmt *lv = NULL, *rows = NULL;
    struct timeline_series *ser = NULL;
    double bw = (double)(q->end - q->start) / q->width;
    int level = 0, rc;
    int64_t lastcol = -1;

    out->id = series;
    rc = timeline_series_open(db, series, &ser, e);
    if (rc) return rc < 0 ? rc : 0;
    int packed = q->clod_packed;
    if (rundb_prepare(db,
                      packed ? "SELECT level FROM clodpack WHERE series = ? AND level <= ? ORDER BY level DESC LIMIT 1"
                             : "SELECT level FROM clod WHERE series = ? AND level <= ? ORDER BY level DESC LIMIT 1",
                      &lv, e) < 0 ||
        rundb_prepare(db,
                      packed
                          /* the chunk holding b0 (the last to start at or before it) and those after, up to b1 */
                          ? "SELECT bucket, n, rows FROM clodpack WHERE series = ?1 AND level = ?2 AND bucket < ?4"
                            " AND last >= ?3 AND bucket >= coalesce((SELECT max(bucket) FROM clodpack"
                            " WHERE series = ?1 AND level = ?2 AND bucket <= ?3), ?3) ORDER BY bucket"
                          : "SELECT fts, min, max, last FROM clod WHERE series = ? AND level = ? AND bucket >= ?"
                            " AND bucket < ? ORDER BY bucket",
                      &rows, e) < 0)
        goto out;
    sqlite3_bind_int64(lv, 1, series);
    sqlite3_bind_int(lv, 2, bw >= 1 ? (int)floor(log2(bw)) : 0);
    if (sqlite3_step(lv) == SQLITE_ROW) level = sqlite3_column_int(lv, 0);
    int64_t sts;
    double sv;
    if ((rc = timeline_series_before(ser, q->start, &sts, &sv, e)) < 0) goto out;
    if (rc == 1) {
        cpoint(q, out, &lastcol, q->start, sv, sv, sv);
        (*nread)++;
    }
    /* edges from the samples, the inside from `level` */
    int64_t b0 = level ? timeline_bucket_ceil(q->start, level) : 0, b1 = level ? timeline_bucket_of(q->end, level) : 0;
    int64_t w = (int64_t)1 << level;
    struct {
        int lvl;
        int64_t lo, hi;
    } parts[3];
    int np = 0;
    if (level == 0 || b0 >= b1) {
        parts[np].lvl = 0, parts[np].lo = q->start, parts[np].hi = q->end, np++;
    } else {
        parts[np].lvl = 0, parts[np].lo = q->start, parts[np].hi = b0 * w, np++;
        parts[np].lvl = level, parts[np].lo = b0, parts[np].hi = b1, np++;
        parts[np].lvl = 0, parts[np].lo = b1 * w, parts[np].hi = q->end, np++;
    }
    for (int i = 0; i < np; i++) {
        if (!parts[i].lvl) {
            timeline_series_range(ser, parts[i].lo, parts[i].hi, e);
            while ((rc = timeline_series_next(ser, &sts, &sv, e)) == 1) {
                (*nread)++;
                cpoint(q, out, &lastcol, sts, sv, sv, sv);
            }
            if (rc < 0) goto out;
            continue;
        }
        sqlite3_stmt *st = rows;
        sqlite3_reset(st);
        sqlite3_bind_int64(rows, 1, series);
        sqlite3_bind_int(rows, 2, parts[i].lvl);
        sqlite3_bind_int64(rows, 3, parts[i].lo);
        sqlite3_bind_int64(rows, 4, parts[i].hi);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            if (packed) {
                struct timeline_clod_chunk c;
                struct timeline_clod_row r;
                int got;
                timeline_clod_chunk_begin(&c, parts[i].lvl, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                          sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2));
                while ((got = timeline_clod_chunk_next(&c, &r)) == 1 && r.bucket < parts[i].hi) {
                    if (r.bucket < parts[i].lo) continue;
                    (*nread)++;
                    cpoint(q, out, &lastcol, r.fts, r.min, r.max, r.last);
                }
                if (got < 0) {
                    rundb_damaged(db, e, "timeline (clod chunk)");
                    goto out;
                }
                continue;
            }
            (*nread)++;
            cpoint(q, out, &lastcol, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1),
                   sqlite3_column_double(st, 2), sqlite3_column_double(st, 3));
        }
        if (rc != SQLITE_DONE) {
            rundb_db_error(db, e, "timeline (counter rows)");
            goto out;
        }
    }
out:
    sqlite3_finalize(lv);
    timeline_series_close(ser);
    sqlite3_finalize(rows);
    return e->code;
}

int timeline_query(sqlite3 *db, int64_t start, int64_t end, int width, const int64_t *tracks, size_t ntracks,
                   const int64_t *series, size_t nseries, struct timeline_view **out, struct err *e)
{
    struct timeline_treq *req = xcalloc(ntracks ? ntracks : 1, sizeof *req);
    for (size_t i = 0; i < ntracks; i++) req[i] = (struct timeline_treq){ tracks[i], 0, INT_MAX };
    int rc = timeline_query_lanes(db, start, end, width, req, ntracks, series, nseries, INT_MAX, out, e);
    free(req);
    return rc;
}

int timeline_query_lanes(sqlite3 *db, int64_t start, int64_t end, int width, const struct timeline_treq *tracks,
                         size_t ntracks, const int64_t *series, size_t nseries, int fine, struct timeline_view **out,
                         struct err *e)
{
    struct timeline_view *v;
    struct qstmts s;
    struct qstate q;

    err_clear(e);
    *out = NULL;
    if (width < 1 || width > TIMELINE_WIDTH_MAX)
        return err_set(e, ERR_INVALID, "width must be 1..%d", TIMELINE_WIDTH_MAX);
    if (end <= start) return err_set(e, ERR_INVALID, "end must be greater than start");
    memset(&s, 0, sizeof s);
    memset(&q, 0, sizeof q);
    v = xcalloc(1, sizeof *v);
    v->start = start;
    v->end = end;
    v->width = width;
    v->tracks = xcalloc(ntracks ? ntracks : 1, sizeof *v->tracks);
    v->counters = xcalloc(nseries ? nseries : 1, sizeof *v->counters);
    q.start = start;
    q.end = end;
    q.width = width;
    q.scale = (double)width / (double)(end - start);
    q.fine = fine;
    /* one read transaction: one snapshot, and the file lock taken once
     * rather than per statement */
    int in_txn = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    if (rundb_prepare(db, "SELECT ts FROM slice WHERE id = ?", &s.tsq, e) < 0 ||
        rundb_prepare(db, "SELECT id, ts, dur, depth, name FROM slice WHERE id >= ? AND id < ?", &s.raw, e) < 0 ||
        rundb_prepare(db, "SELECT ts, dur, depth, parent, name FROM slice WHERE id = ?", &s.one, e) < 0 ||
        rundb_prepare(db, "SELECT level FROM lod_level WHERE track = ? AND level <= ? ORDER BY level DESC LIMIT 1",
                      &s.lvl, e) < 0 ||
        (s.packed = scan_has_table(db, "lodpack", e)) < 0 ||
        rundb_prepare(db,
                      s.packed
                          /* the chunk holding b0 (the last to start at or before it) and those after,
                           * up to b1 */
                          ? "SELECT bucket, n, rows FROM lodpack WHERE track = ?1 AND level = ?2 AND bucket < ?4"
                            " AND last >= ?3 AND bucket >= coalesce((SELECT max(bucket) FROM lodpack"
                            " WHERE track = ?1 AND level = ?2 AND bucket <= ?3), ?3) ORDER BY bucket"
                          : "SELECT depth, fid, n, ts, te, ldur, name FROM lod WHERE track = ? AND level = ?"
                            " AND bucket >= ? AND bucket < ? AND depth >= ? AND depth <= ? ORDER BY bucket, depth, fid",
                      &s.lod, e) < 0)
        goto out;
    for (size_t i = 0; i < ntracks; i++) {
        v->ntracks++;
        if (query_track(db, &s, &q, &tracks[i], &v->tracks[i], &v->rows_read, e) < 0) goto out;
    }
    if (nseries && (q.clod_packed = scan_has_table(db, "clodpack", e)) < 0) goto out;
    for (size_t i = 0; i < nseries; i++) {
        v->ncounters++;
        if (query_counter(db, &q, series[i], &v->counters[i], &v->rows_read, e) < 0) goto out;
    }
out:
    for (int i = 0; i < q.nlanes; i++) free(q.lanes[i].d.items);
    free(q.lanes);
    sqlite3_finalize(s.tsq);
    sqlite3_finalize(s.raw);
    sqlite3_finalize(s.one);
    sqlite3_finalize(s.lvl);
    sqlite3_finalize(s.lod);
    if (in_txn) sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (e->code) {
        timeline_view_free(v);
        return e->code;
    }
    *out = v;
    return 0;
}

void timeline_view_free(struct timeline_view *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->ntracks; i++) {
        for (int d = 0; d < v->tracks[i].ndepths; d++) free(v->tracks[i].depths[d].items);
        free(v->tracks[i].depths);
        free(v->tracks[i].deep.items);
    }
    for (size_t i = 0; i < v->ncounters; i++) free(v->counters[i].points);
    free(v->tracks);
    free(v->counters);
    free(v);
}


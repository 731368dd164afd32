/* timeline.c — the timeline's level-of-detail tables: built at ingest,
 * read per viewport (see include/derive/timeline.h for the design). */
#define LOG_MODULE "timeline"
#include "derive/timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/gpuscan.h"
#include "store/rundb.h"

#define NLEV 48 /* levels 1..47: 2 ns .. 1.6 days per bucket */

static const char schema_sql[] =
    "CREATE TABLE lod_level(track INTEGER, level INTEGER, PRIMARY KEY(track, level)) WITHOUT ROWID;"
    "CREATE TABLE lod(track INTEGER, level INTEGER, bucket INTEGER, depth INTEGER, fid INTEGER, n INTEGER,"
    " ts INTEGER, te INTEGER, ldur INTEGER, name INTEGER,"
    " PRIMARY KEY(track, level, bucket, depth, fid)) WITHOUT ROWID;"
    "CREATE TABLE cseries(id INTEGER PRIMARY KEY, rank INTEGER, src INTEGER, key1 INTEGER, key2 INTEGER,"
    " name TEXT, unit TEXT);"
    "CREATE TABLE clod(series INTEGER, level INTEGER, bucket INTEGER, n INTEGER, fts INTEGER, min REAL,"
    " max REAL, last REAL, lts INTEGER, PRIMARY KEY(series, level, bucket)) WITHOUT ROWID;"
    "CREATE TABLE gpubusy(rank INTEGER, dev INTEGER, ts INTEGER, value INTEGER, PRIMARY KEY(rank, dev, ts))"
    " WITHOUT ROWID;";

/* floor(t / 2^L) for any sign of t. */
static int64_t bucket_of(int64_t t, int level)
{
    return t >= 0 ? t >> level : -((-(t + 1)) >> level) - 1;
}

/* ceil(t / 2^L). */
static int64_t bucket_ceil(int64_t t, int level)
{
    int64_t b = bucket_of(t, level);
    return (b * ((int64_t)1 << level) == t) ? b : b + 1;
}

/* ====================================================================== */
/* Build: slices                                                          */
/* ====================================================================== */

struct agg {
    int64_t bucket, fid, n, ts, end, ldur;
    uint32_t name;
};

/* One track's build state: per kept level and depth the open bucket. */
struct tstate {
    int64_t id;
    int ndepth;        /* max_depth + 1 */
    int nkept;
    int kept[NLEV];    /* kept levels, ascending */
    struct agg *open;  /* [depth * nkept + k]; n == 0: none */
    /* pass 1 */
    int64_t *last;     /* [depth * NLEV + L]: last small bucket seen */
    int64_t rows[NLEV];
};

static int emit_row(sqlite3 *db, sqlite3_stmt *ins, int64_t track, int level, int depth, const struct agg *a,
                    struct err *e)
{
    sqlite3_bind_int64(ins, 1, track);
    sqlite3_bind_int(ins, 2, level);
    sqlite3_bind_int64(ins, 3, a->bucket);
    sqlite3_bind_int(ins, 4, depth);
    sqlite3_bind_int64(ins, 5, a->fid);
    sqlite3_bind_int64(ins, 6, a->n);
    sqlite3_bind_int64(ins, 7, a->ts);
    sqlite3_bind_int64(ins, 8, a->end);
    sqlite3_bind_int64(ins, 9, a->ldur);
    sqlite3_bind_int64(ins, 10, a->name);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (lod insert)");
}

static int flush_track(sqlite3 *db, sqlite3_stmt *ins, struct tstate *t, struct err *e)
{
    for (int d = 0; d < t->ndepth; d++)
        for (int k = 0; k < t->nkept; k++) {
            struct agg *a = &t->open[d * t->nkept + k];
            if (a->n && emit_row(db, ins, t->id, t->kept[k], d, a, e) != 0) return e->code;
            a->n = 0;
        }
    return 0;
}

/* Track ids with their depth count, in id order. */
struct tinfo {
    int64_t id;
    int ndepth;
    int64_t nslices;
};

static int load_tracks(sqlite3 *db, struct tinfo **out, size_t *n, struct err *e)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc;

    *out = NULL;
    *n = 0;
    if (rundb_prepare(db, "SELECT id, coalesce(max_depth, 0), coalesce(nslices, 0) FROM track ORDER BY id", &st, e) < 0)
        return e->code;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            *out = xrealloc(*out, cap * sizeof **out);
        }
        (*out)[*n].id = sqlite3_column_int64(st, 0);
        (*out)[*n].ndepth = sqlite3_column_int(st, 1) + 1;
        (*out)[*n].nslices = sqlite3_column_int64(st, 2);
        (*n)++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (tracks)");
}

static struct tinfo *find_tinfo(struct tinfo *ti, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ti[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && ti[lo].id == id ? &ti[lo] : NULL;
}

/* Pass 1: rows each level would have, per track; picks the kept levels. */
static int count_levels(sqlite3 *db, struct tinfo *ti, size_t nti, int (*kept)[NLEV + 1], struct err *e)
{
    sqlite3_stmt *st;
    int64_t *last = NULL, rows[NLEV];
    int64_t cur = -1;
    struct tinfo *t = NULL;
    int rc;

    if (rundb_prepare(db, "SELECT track, ts, dur, depth FROM slice ORDER BY id", &st, e) < 0) return e->code;
    for (;;) {
        rc = sqlite3_step(st);
        int64_t track = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -2;
        if (track != cur && t) {
            /* choose levels for the finished track */
            int nk = 0, lastk = 0;
            /* the first level must merge 4 slices into a row on average:
             * finer windows read the slices themselves at the same cost */
            int64_t prev = t->nslices / 2;
            for (int L = 2; L < NLEV; L++) {
                if (rows[L] * 2 > prev || L < lastk + 2) continue;
                kept[t - ti][++nk] = L;
                prev = rows[L];
                lastk = L;
                if (rows[L] <= t->ndepth) break;
            }
            kept[t - ti][0] = nk;
            t = NULL;
        }
        if (rc != SQLITE_ROW) break;
        if (track != cur) {
            cur = track;
            t = find_tinfo(ti, nti, track);
            if (!t) continue;
            free(last);
            last = xmalloc((size_t)t->ndepth * NLEV * sizeof *last);
            for (size_t i = 0; i < (size_t)t->ndepth * NLEV; i++) last[i] = INT64_MIN;
            memset(rows, 0, sizeof rows);
        }
        if (!t) continue;
        int64_t ts = sqlite3_column_int64(st, 1), dur = sqlite3_column_int64(st, 2);
        int d = sqlite3_column_int(st, 3);
        if (d < 0 || d >= t->ndepth) continue;
        int64_t *ld = last + (size_t)d * NLEV;
        for (int L = 2; L < NLEV; L++) {
            if (dur >= ((int64_t)1 << L)) {
                rows[L]++;
                continue;
            }
            int64_t b = bucket_of(ts, L);
            if (b != ld[L]) {
                rows[L]++;
                ld[L] = b;
            }
        }
    }
    free(last);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (lod count)");
}

static int build_slices(sqlite3 *db, struct err *e)
{
    struct tinfo *ti = NULL;
    size_t nti = 0;
    int(*kept)[NLEV + 1] = NULL;
    sqlite3_stmt *st = NULL, *ins = NULL, *lvl = NULL;
    struct tstate t;
    int rc = 0;
    uint64_t nrows = 0;

    memset(&t, 0, sizeof t);
    if (load_tracks(db, &ti, &nti, e) < 0) goto out;
    kept = xcalloc(nti ? nti : 1, sizeof *kept);
    if (count_levels(db, ti, nti, kept, e) < 0) goto out;
    if (rundb_prepare(db, "INSERT INTO lod_level(track, level) VALUES(?,?)", &lvl, e) < 0) goto out;
    for (size_t i = 0; i < nti; i++)
        for (int k = 1; k <= kept[i][0]; k++) {
            sqlite3_bind_int64(lvl, 1, ti[i].id);
            sqlite3_bind_int(lvl, 2, kept[i][k]);
            rc = sqlite3_step(lvl);
            sqlite3_reset(lvl);
            if (rc != SQLITE_DONE) {
                rundb_db_error(db, e, "timeline (lod_level insert)");
                goto out;
            }
        }
    if (rundb_prepare(db,
                      "INSERT INTO lod(track, level, bucket, depth, fid, n, ts, te, ldur, name)"
                      " VALUES(?,?,?,?,?,?,?,?,?,?)",
                      &ins, e) < 0 ||
        rundb_prepare(db, "SELECT id, track, ts, dur, depth, name FROM slice ORDER BY id", &st, e) < 0)
        goto out;
    t.id = -1;
    for (;;) {
        rc = sqlite3_step(st);
        int64_t track = rc == SQLITE_ROW ? sqlite3_column_int64(st, 1) : -2;
        if (track != t.id) {
            if (t.id >= 0 && flush_track(db, ins, &t, e) != 0) goto out;
            if (rc != SQLITE_ROW) break;
            struct tinfo *tf = find_tinfo(ti, nti, track);
            free(t.open);
            memset(&t, 0, sizeof t);
            t.id = track;
            if (tf) {
                t.ndepth = tf->ndepth;
                t.nkept = kept[tf - ti][0];
                memcpy(t.kept, &kept[tf - ti][1], (size_t)t.nkept * sizeof(int));
            }
            t.open = xcalloc((size_t)(t.ndepth ? t.ndepth : 1) * (size_t)(t.nkept ? t.nkept : 1), sizeof *t.open);
        }
        if (rc != SQLITE_ROW) break;
        int64_t id = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 2),
                dur = sqlite3_column_int64(st, 3);
        int d = sqlite3_column_int(st, 4);
        uint32_t name = (uint32_t)sqlite3_column_int64(st, 5);
        if (d < 0 || d >= t.ndepth) continue;
        for (int k = 0; k < t.nkept; k++) {
            int L = t.kept[k];
            int64_t b = bucket_of(ts, L);
            if (dur >= ((int64_t)1 << L)) {
                struct agg big = { b, id, 1, ts, ts + dur, dur, name };
                if (emit_row(db, ins, t.id, L, d, &big, e) != 0) goto out;
                nrows++;
                continue;
            }
            struct agg *a = &t.open[d * t.nkept + k];
            if (a->n && a->bucket != b) {
                if (emit_row(db, ins, t.id, L, d, a, e) != 0) goto out;
                nrows++;
                a->n = 0;
            }
            if (!a->n) {
                a->bucket = b;
                a->fid = id;
                a->ts = ts;
                a->end = ts + dur;
                a->ldur = dur;
                a->name = name;
            } else {
                if (ts + dur > a->end) a->end = ts + dur;
                if (dur > a->ldur) {
                    a->ldur = dur;
                    a->name = name;
                }
            }
            a->n++;
        }
    }
    if (rc != SQLITE_DONE) {
        rundb_db_error(db, e, "timeline (lod scan)");
        goto out;
    }
    rc = 0;
    LOG_DEBUG("lod: %llu rows for %zu tracks", (unsigned long long)nrows, nti);
out:
    if (e->code) rc = e->code;
    free(t.open);
    free(ti);
    free(kept);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    sqlite3_finalize(lvl);
    return rc;
}

/* ====================================================================== */
/* Build: counters                                                        */
/* ====================================================================== */

struct cagg {
    int64_t bucket, n, fts, lts;
    double min, max, last;
};

static int cemit(sqlite3 *db, sqlite3_stmt *ins, int64_t series, int level, const struct cagg *a, struct err *e)
{
    sqlite3_bind_int64(ins, 1, series);
    sqlite3_bind_int(ins, 2, level);
    sqlite3_bind_int64(ins, 3, a->bucket);
    sqlite3_bind_int64(ins, 4, a->n);
    sqlite3_bind_int64(ins, 5, a->fts);
    sqlite3_bind_double(ins, 6, a->min);
    sqlite3_bind_double(ins, 7, a->max);
    sqlite3_bind_double(ins, 8, a->last);
    sqlite3_bind_int64(ins, 9, a->lts);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (clod insert)");
}

/* Two passes over one series' samples (st yields ts, value in time order):
 * counts per level, then rows for level 0 and the kept levels. */
static int build_series(sqlite3 *db, sqlite3_stmt *st, sqlite3_stmt *ins, int64_t series, struct err *e)
{
    int64_t rows[NLEV], lastb[NLEV];
    int kept[NLEV], nkept = 0, rc;
    struct cagg open[NLEV];

    memset(rows, 0, sizeof rows);
    for (int L = 0; L < NLEV; L++) lastb[L] = INT64_MIN;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(st, 0);
        for (int L = 0; L < NLEV; L++) {
            int64_t b = bucket_of(ts, L);
            if (b != lastb[L]) {
                rows[L]++;
                lastb[L] = b;
            }
        }
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return rundb_db_error(db, e, "timeline (counter scan)");
    /* the samples themselves stay in their table (level 0 is read there) */
    for (int L = 2, last = 0, prev = 0; L < NLEV; L++) {
        int64_t pr = prev ? rows[prev] : rows[0] / 2;
        if (rows[L] * 2 > pr || L < last + 2) continue;
        kept[nkept++] = L;
        prev = last = L;
        if (rows[L] <= 1) break;
    }
    if (!nkept) return 0;
    memset(open, 0, sizeof open);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(st, 0);
        double v = sqlite3_column_double(st, 1);
        for (int k = 0; k < nkept; k++) {
            struct cagg *a = &open[k];
            int64_t b = bucket_of(ts, kept[k]);
            if (a->n && a->bucket != b) {
                if (cemit(db, ins, series, kept[k], a, e) != 0) {
                    sqlite3_reset(st);
                    return e->code;
                }
                a->n = 0;
            }
            if (!a->n) {
                a->bucket = b;
                a->fts = ts;
                a->min = a->max = v;
            }
            if (v < a->min) a->min = v;
            if (v > a->max) a->max = v;
            a->last = v;
            a->lts = ts;
            a->n++;
        }
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return rundb_db_error(db, e, "timeline (counter scan)");
    for (int k = 0; k < nkept; k++)
        if (open[k].n && cemit(db, ins, series, kept[k], &open[k], e) != 0) return e->code;
    return 0;
}

static const char *dev_label(int dev_type, int dev_id, char *buf, size_t n)
{
    if (dev_type == 0) snprintf(buf, n, "CPU");
    else if (dev_type == 1) snprintf(buf, n, "GPU %d", dev_id);
    else snprintf(buf, n, "device %d:%d", dev_type, dev_id);
    return buf;
}

/* ---- GPU busy: ops running per device, a step function ---------------- */

/* A min-heap of the end times of the ops running. */
struct endheap {
    int64_t *v;
    size_t n, cap;
};

static void heap_push(struct endheap *h, int64_t x)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->v = xrealloc(h->v, h->cap * sizeof *h->v);
    }
    size_t i = h->n++;
    while (i > 0 && h->v[(i - 1) / 2] > x) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
}

static int64_t heap_pop(struct endheap *h)
{
    int64_t top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->v[c + 1] < h->v[c]) c++;
        if (h->v[c] >= x) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n) h->v[i] = x;
    return top;
}

/* The samples of one (rank, dev): the value at pt waits until time moves
 * on (changes at one instant collapse into one sample), and is written only
 * when it differs from the last one written. */
struct busyw {
    sqlite3 *db;
    sqlite3_stmt *ins;
    int64_t pt, pv, lastv, nrows;
    int pending;
};

static int busy_flush(struct busyw *w, struct err *e)
{
    if (!w->pending) return 0;
    w->pending = 0;
    if (w->pv == w->lastv) return 0;
    sqlite3_bind_int64(w->ins, 3, w->pt);
    sqlite3_bind_int64(w->ins, 4, w->pv);
    int rc = sqlite3_step(w->ins);
    sqlite3_reset(w->ins);
    if (rc != SQLITE_DONE) return rundb_db_error(w->db, e, "timeline (gpubusy insert)");
    w->lastv = w->pv;
    w->nrows++;
    return 0;
}

static int busy_set(struct busyw *w, int64_t t, int64_t v, struct err *e)
{
    if (!w->pending || w->pt != t) {
        if (busy_flush(w, e) != 0) return e->code;
        w->pending = 1;
        w->pt = t;
    }
    w->pv = v;
    return 0;
}

/* Fills gpubusy and registers a cseries (src 3) per (rank, device) whose
 * streams hold GPU ops; devices are those of the rank's GPU tracks (a rank
 * whose streams name none: device 0; streams without a device count for
 * every device of their rank, as in gpuscan). Memory: one heap of the end
 * times of the ops running at once. */

static int build_gpubusy(sqlite3 *db, struct err *e)
{
    double t0s = log_now_s();
    sqlite3_stmt *devs = NULL, *ins = NULL, *t0q = NULL, *ser = NULL;
    struct endheap h = { NULL, 0, 0 };
    struct gpuscan_lanes *L = NULL;
    struct busyw w;
    int64_t nops = 0, nrows = 0;
    int rc;

    if (rundb_prepare(db,
                      "SELECT rank, device FROM track WHERE kind = 1 AND nslices > 0 AND device IS NOT NULL"
                      " GROUP BY rank, device UNION SELECT rank, 0 FROM track WHERE kind = 1 AND nslices > 0"
                      " GROUP BY rank HAVING max(device IS NOT NULL) = 0 ORDER BY 1, 2",
                      &devs, e) < 0 ||
        rundb_prepare(db, "INSERT INTO gpubusy(rank, dev, ts, value) VALUES(?,?,?,?)", &ins, e) < 0 ||
        rundb_prepare(db, "SELECT t0 FROM rank WHERE rank = ? AND t0 IS NOT NULL", &t0q, e) < 0 ||
        rundb_prepare(db, "INSERT INTO cseries(rank, src, key1, key2, name, unit) VALUES(?, 3, 1, ?, ?, 'ops')", &ser,
                      e) < 0)
        goto out;
    while ((rc = sqlite3_step(devs)) == SQLITE_ROW) {
        int rank = sqlite3_column_int(devs, 0), dev = sqlite3_column_int(devs, 1);
        struct gpuscan_op op;
        int64_t t0 = INT64_MAX, count = 0;
        int any = 0;

        sqlite3_bind_int(t0q, 1, rank);
        if (sqlite3_step(t0q) == SQLITE_ROW) t0 = sqlite3_column_int64(t0q, 0);
        sqlite3_reset(t0q);
        memset(&w, 0, sizeof w);
        w.db = db;
        w.ins = ins;
        w.lastv = -1; /* the first sample is always written */
        sqlite3_bind_int(ins, 1, rank);
        sqlite3_bind_int(ins, 2, dev);
        h.n = 0;
        if (gpuscan_lanes_open(db, rank, dev, INT64_MIN, INT64_MAX, &L, e) != 0) goto out;
        while ((rc = gpuscan_lanes_next(L, &op, e)) > 0) {
            if (op.end < op.ts) op.end = op.ts;
            /* idle from the capture's start to the first op */
            if (!any++ && t0 < op.ts && busy_set(&w, t0, 0, e) != 0) goto out;
            while (h.n && h.v[0] <= op.ts) {
                int64_t t = heap_pop(&h);
                if (busy_set(&w, t, --count, e) != 0) goto out;
            }
            heap_push(&h, op.end);
            if (busy_set(&w, op.ts, ++count, e) != 0) goto out;
            nops++;
        }
        if (rc < 0) goto out;
        while (h.n) {
            int64_t t = heap_pop(&h);
            if (busy_set(&w, t, --count, e) != 0) goto out;
        }
        if (busy_flush(&w, e) != 0) goto out;
        gpuscan_lanes_close(L);
        L = NULL;
        nrows += w.nrows;
        if (!w.nrows) continue;
        char name[64];
        snprintf(name, sizeof name, "GPU busy (GPU %d)", dev);
        sqlite3_bind_int(ser, 1, rank);
        sqlite3_bind_int(ser, 2, dev);
        sqlite3_bind_text(ser, 3, name, -1, SQLITE_TRANSIENT);
        int r2 = sqlite3_step(ser);
        sqlite3_reset(ser);
        if (r2 != SQLITE_DONE) {
            rundb_db_error(db, e, "timeline (busy series)");
            goto out;
        }
    }
    if (rc != SQLITE_DONE) {
        rundb_db_error(db, e, "timeline (GPU devices)");
        goto out;
    }
    LOG_DEBUG("gpu busy: %lld ops, %lld samples, %.2f s", (long long)nops, (long long)nrows, log_now_s() - t0s);
out:
    gpuscan_lanes_close(L);
    free(h.v);
    sqlite3_finalize(devs);
    sqlite3_finalize(ins);
    sqlite3_finalize(t0q);
    sqlite3_finalize(ser);
    return e->code;
}

/* 1 when db holds the analyses' series tables (anseries, ansample); a run
 * imported before the analyses existed has neither, and its timeline is
 * rebuilt without their lanes. <0 on error. */
static int anseries_present(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    if (rundb_prepare(db,
                      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('anseries', 'ansample')",
                      &st, e) < 0)
        return e->code;
    rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc < 0) return rundb_db_error(db, e, "timeline (schema)");
    return rc == 2;
}

/* Registers the analyses' series (queue depth per stream, copy bandwidth per
 * kind) as src 4 lanes: key1 = anseries.id, key2 = its kind; per rank in
 * kind then key order, so a rank's queue lanes sit together. Series without
 * samples get no lane. */
static int register_anseries(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    if (rundb_prepare(
            db,
            "INSERT INTO cseries(rank, src, key1, key2, name, unit)"
            " SELECT a.rank, 4, a.id, a.kind, a.name, coalesce(a.unit, '') FROM anseries a"
            " WHERE EXISTS (SELECT 1 FROM ansample s WHERE s.series = a.id) ORDER BY a.rank, a.kind, a.key, a.id",
            &st, e) < 0)
        return e->code;
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (analyses series)");
}

static int build_counters(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *list = NULL, *ser = NULL, *ins = NULL, *cs = NULL, *gb = NULL, *ms[2] = { NULL, NULL }, *an = NULL;
    int rc, has_an;

    /* GPU busy first: the counter lanes list it on top */
    if (build_gpubusy(db, e) != 0) goto out;
    if (rundb_prepare(db,
                      "INSERT INTO cseries(rank, src, key1, key2, name, unit)"
                      " SELECT c.rank, 0, c.name, 0, s.s, '' FROM (SELECT DISTINCT rank, name FROM counter) c"
                      " JOIN str s ON s.id = c.name ORDER BY c.rank, s.s",
                      &ser, e) < 0)
        goto out;
    rc = sqlite3_step(ser);
    sqlite3_finalize(ser);
    ser = NULL;
    if (rc != SQLITE_DONE) {
        rundb_db_error(db, e, "timeline (counter series)");
        goto out;
    }
    /* memory totals: one series per device for allocated and reserved */
    if (rundb_prepare(db,
                      "SELECT rank, dev_type, dev_id, max(total_alloc IS NOT NULL), max(total_reserved IS NOT NULL)"
                      " FROM mem GROUP BY rank, dev_type, dev_id ORDER BY rank, dev_type, dev_id",
                      &list, e) < 0 ||
        rundb_prepare(db, "INSERT INTO cseries(rank, src, key1, key2, name, unit) VALUES(?,?,?,?,?,'bytes')", &ser, e) <
            0)
        goto out;
    while ((rc = sqlite3_step(list)) == SQLITE_ROW) {
        for (int src = 1; src <= 2; src++) {
            char dev[48], name[96];
            if (!sqlite3_column_int(list, 2 + src)) continue;
            dev_label(sqlite3_column_int(list, 1), sqlite3_column_int(list, 2), dev, sizeof dev);
            snprintf(name, sizeof name, "Memory %s (%s)", src == 1 ? "allocated" : "reserved", dev);
            sqlite3_bind_int(ser, 1, sqlite3_column_int(list, 0));
            sqlite3_bind_int(ser, 2, src);
            sqlite3_bind_int(ser, 3, sqlite3_column_int(list, 1));
            sqlite3_bind_int(ser, 4, sqlite3_column_int(list, 2));
            sqlite3_bind_text(ser, 5, name, -1, SQLITE_TRANSIENT);
            int r2 = sqlite3_step(ser);
            sqlite3_reset(ser);
            if (r2 != SQLITE_DONE) {
                rundb_db_error(db, e, "timeline (memory series)");
                goto out;
            }
        }
    }
    if (rc != SQLITE_DONE) {
        rundb_db_error(db, e, "timeline (memory series)");
        goto out;
    }
    sqlite3_finalize(list);
    list = NULL;
    /* the analyses' series last: they derive from the trace, its own counters come first */
    if ((has_an = anseries_present(db, e)) < 0 || (has_an && register_anseries(db, e) != 0)) goto out;
    if (has_an &&
        rundb_prepare(db, "SELECT ts, value FROM ansample WHERE series = ?2 AND ?1 = ?1 AND ?3 = ?3 ORDER BY ts", &an,
                      e) < 0)
        goto out;
    if (rundb_prepare(db, "SELECT id, rank, src, key1, key2 FROM cseries ORDER BY id", &list, e) < 0 ||
        rundb_prepare(db,
                      "INSERT INTO clod(series, level, bucket, n, fts, min, max, last, lts) VALUES(?,?,?,?,?,?,?,?,?)",
                      &ins, e) < 0 ||
        rundb_prepare(db, "SELECT ts, value FROM counter WHERE rank = ? AND name = ? ORDER BY ts, id", &cs, e) < 0 ||
        rundb_prepare(db,
                      "SELECT ts, total_alloc FROM mem WHERE rank = ? AND dev_type = ? AND dev_id = ?"
                      " AND total_alloc IS NOT NULL ORDER BY ts, id",
                      &ms[0], e) < 0 ||
        rundb_prepare(db,
                      "SELECT ts, total_reserved FROM mem WHERE rank = ? AND dev_type = ? AND dev_id = ?"
                      " AND total_reserved IS NOT NULL ORDER BY ts, id",
                      &ms[1], e) < 0 ||
        rundb_prepare(db, "SELECT ts, value FROM gpubusy WHERE rank = ?1 AND ?2 = ?2 AND dev = ?3 ORDER BY ts", &gb,
                      e) < 0)
        goto out;
    while ((rc = sqlite3_step(list)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(list, 0);
        int src = sqlite3_column_int(list, 2);
        sqlite3_stmt *q = src == 0 ? cs : src == 3 ? gb : src == 4 ? an : ms[src - 1];
        sqlite3_bind_int(q, 1, sqlite3_column_int(list, 1));
        sqlite3_bind_int64(q, 2, sqlite3_column_int64(list, 3));
        if (src) sqlite3_bind_int64(q, 3, sqlite3_column_int64(list, 4));
        if (build_series(db, q, ins, id, e) != 0) goto out;
    }
    if (rc != SQLITE_DONE) rundb_db_error(db, e, "timeline (series)");
out:
    sqlite3_finalize(list);
    sqlite3_finalize(ser);
    sqlite3_finalize(ins);
    sqlite3_finalize(cs);
    sqlite3_finalize(gb);
    sqlite3_finalize(ms[0]);
    sqlite3_finalize(ms[1]);
    sqlite3_finalize(an);
    return e->code;
}

int timeline_build(sqlite3 *db, struct err *e)
{
    double t0 = log_now_s(), t1, t2;

    err_clear(e);
    if (sqlite3_exec(db, "PRAGMA cache_size=-16384; BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "DROP TABLE IF EXISTS lod; DROP TABLE IF EXISTS lod_level; DROP TABLE IF EXISTS clod;"
                         "DROP TABLE IF EXISTS cseries; DROP TABLE IF EXISTS gpubusy;",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline (tables)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    if (build_slices(db, e) != 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    t1 = log_now_s();
    if (build_counters(db, e) != 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    t2 = log_now_s();
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline (commit)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    LOG_INFO("level of detail built: slices %.2f s, counters %.2f s, commit %.2f s", t1 - t0, t2 - t1,
             log_now_s() - t2);
    return 0;
}

int timeline_present(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    if (rundb_prepare(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('lod', 'clod')", &st,
                      e) < 0)
        return e->code;
    rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc < 0) return rundb_db_error(db, e, "timeline (schema)");
    return rc == 2;
}

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
 * reaches past it starts the next item, anything else merges in. */
struct lane {
    struct timeline_depth d;
    int64_t key;   /* column of the open item; -1: none */
    int64_t ldur;  /* longest member of the open item */
};

struct qstate {
    int64_t start, end;
    int width;
    double scale; /* columns per ns */
    struct lane *lanes;
    int nlanes;
};

static int64_t col_of(const struct qstate *q, int64_t t)
{
    double c = floor((double)(t - q->start) * q->scale);
    if (c < 0) return 0;
    if (c >= q->width) return q->width - 1;
    return (int64_t)c;
}

static void feed(struct qstate *q, int depth, int64_t ts, int64_t end, int64_t n, int64_t ldur, uint32_t name,
                 int64_t id)
{
    if (depth < 0) return;
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
    int64_t c0 = col_of(q, ts), c1 = col_of(q, end > ts ? end - 1 : ts);
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

/* Feeds the slices with ids in [lo, hi) (all depths, time order). */
static int feed_raw(sqlite3 *db, sqlite3_stmt *raw, struct qstate *q, int64_t lo, int64_t hi, uint64_t *nread,
                    struct err *e)
{
    int rc;

    if (lo >= hi) return 0;
    sqlite3_bind_int64(raw, 1, lo);
    sqlite3_bind_int64(raw, 2, hi);
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(raw, 1), dur = sqlite3_column_int64(raw, 2);
        feed(q, sqlite3_column_int(raw, 3), ts, ts + dur, 1, dur, (uint32_t)sqlite3_column_int64(raw, 4),
             sqlite3_column_int64(raw, 0));
        (*nread)++;
    }
    sqlite3_reset(raw);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (slices)");
}

struct qstmts {
    sqlite3_stmt *tsq, *raw, *one, *lvl, *lod;
};

static int query_track(sqlite3 *db, struct qstmts *s, struct qstate *q, int64_t track, struct timeline_track *out,
                       uint64_t *nread, struct err *e)
{
    int64_t first, last, lo_s, lo_e;
    int nd, level = -1, rc;
    double bw = (double)(q->end - q->start) / q->width;

    out->id = track;
    if (track_bounds(db, track, &first, &last, &nd, e) < 0) return e->code;
    if (first > last) return 0;
    if (lower_bound(db, s->tsq, first, last + 1, q->start, &lo_s, e) < 0 ||
        lower_bound(db, s->tsq, lo_s, last + 1, q->end, &lo_e, e) < 0)
        return e->code;

    /* the slices open at start: the last one before it and its parents */
    int64_t pid = lo_s - 1;
    for (int guard = 0; pid >= first && guard <= nd; guard++) {
        sqlite3_bind_int64(s->one, 1, pid);
        rc = sqlite3_step(s->one);
        if (rc != SQLITE_ROW) {
            sqlite3_reset(s->one);
            if (rc != SQLITE_DONE) return rundb_db_error(db, e, "timeline (parents)");
            break;
        }
        int64_t ts = sqlite3_column_int64(s->one, 0), dur = sqlite3_column_int64(s->one, 1);
        int depth = sqlite3_column_int(s->one, 2);
        int64_t parent = sqlite3_column_type(s->one, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(s->one, 3);
        uint32_t name = (uint32_t)sqlite3_column_int64(s->one, 4);
        sqlite3_reset(s->one);
        (*nread)++;
        if (ts + dur > q->start && ts < q->end) feed(q, depth, ts, ts + dur, 1, dur, name, pid);
        pid = parent;
    }

    /* the coarsest kept level whose buckets are no wider than a pixel */
    sqlite3_bind_int64(s->lvl, 1, track);
    sqlite3_bind_int(s->lvl, 2, bw >= 1 ? (int)floor(log2(bw)) : -1);
    if (sqlite3_step(s->lvl) == SQLITE_ROW) level = sqlite3_column_int(s->lvl, 0);
    sqlite3_reset(s->lvl);

    int64_t b0 = 0, b1 = 0;
    if (level > 0) {
        b0 = bucket_ceil(q->start, level);
        b1 = bucket_of(q->end, level);
    }
    if (level <= 0 || b0 >= b1) {
        rc = feed_raw(db, s->raw, q, lo_s, lo_e, nread, e);
    } else {
        int64_t lo_a, lo_b;
        int64_t ta = b0 * ((int64_t)1 << level), tb = b1 * ((int64_t)1 << level);
        if (lower_bound(db, s->tsq, lo_s, lo_e, ta, &lo_a, e) < 0 ||
            lower_bound(db, s->tsq, lo_a, lo_e, tb, &lo_b, e) < 0)
            return e->code;
        rc = feed_raw(db, s->raw, q, lo_s, lo_a, nread, e);
        if (rc == 0) {
            sqlite3_bind_int64(s->lod, 1, track);
            sqlite3_bind_int(s->lod, 2, level);
            sqlite3_bind_int64(s->lod, 3, b0);
            sqlite3_bind_int64(s->lod, 4, b1);
            while ((rc = sqlite3_step(s->lod)) == SQLITE_ROW) {
                feed(q, sqlite3_column_int(s->lod, 0), sqlite3_column_int64(s->lod, 3),
                     sqlite3_column_int64(s->lod, 4), sqlite3_column_int64(s->lod, 2), sqlite3_column_int64(s->lod, 5),
                     (uint32_t)sqlite3_column_int64(s->lod, 6), sqlite3_column_int64(s->lod, 1));
                (*nread)++;
            }
            sqlite3_reset(s->lod);
            rc = rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "timeline (lod)");
        }
        if (rc == 0) rc = feed_raw(db, s->raw, q, lo_b, lo_e, nread, e);
    }
    if (rc) return rc;
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
 * "before": the last one < ?4. */
#define NSRC 5
static const char *const raw_sql[NSRC][2] = {
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
};

/* The raw statements of series (prepared and bound but for the range).
 * 1 when the series does not exist. */
static int series_open(sqlite3 *db, int64_t series, sqlite3_stmt **raw, sqlite3_stmt **before, struct err *e)
{
    sqlite3_stmt *st;
    int rc, src = -1;
    int64_t rank = 0, k1 = 0, k2 = 0;

    *raw = *before = NULL;
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
    if (rundb_prepare(db, raw_sql[src][0], raw, e) < 0 || rundb_prepare(db, raw_sql[src][1], before, e) < 0) {
        sqlite3_finalize(*raw);
        *raw = NULL;
        return e->code;
    }
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *x = i ? *before : *raw;
        sqlite3_bind_int64(x, 1, rank);
        sqlite3_bind_int64(x, 2, k1);
        sqlite3_bind_int64(x, 3, k2);
    }
    return 0;
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
    sqlite3_stmt *lv = NULL, *raw = NULL, *before = NULL, *rows = NULL;
    double bw = (double)(q->end - q->start) / q->width;
    int level = 0, rc;
    int64_t lastcol = -1;

    out->id = series;
    rc = series_open(db, series, &raw, &before, e);
    if (rc) return rc < 0 ? rc : 0;
    if (rundb_prepare(db, "SELECT level FROM clod WHERE series = ? AND level <= ? ORDER BY level DESC LIMIT 1", &lv,
                      e) < 0 ||
        rundb_prepare(
            db,
            "SELECT fts, min, max, last FROM clod WHERE series = ? AND level = ? AND bucket >= ? AND bucket < ?"
            " ORDER BY bucket",
            &rows, e) < 0)
        goto out;
    sqlite3_bind_int64(lv, 1, series);
    sqlite3_bind_int(lv, 2, bw >= 1 ? (int)floor(log2(bw)) : 0);
    if (sqlite3_step(lv) == SQLITE_ROW) level = sqlite3_column_int(lv, 0);
    sqlite3_bind_int64(before, 4, q->start);
    if (sqlite3_step(before) == SQLITE_ROW) {
        double v = sqlite3_column_double(before, 1);
        cpoint(q, out, &lastcol, q->start, v, v, v);
        (*nread)++;
    }
    /* edges from the samples, the inside from `level` */
    int64_t b0 = level ? bucket_ceil(q->start, level) : 0, b1 = level ? bucket_of(q->end, level) : 0;
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
        sqlite3_stmt *st = parts[i].lvl ? rows : raw;
        sqlite3_reset(st);
        if (parts[i].lvl) {
            sqlite3_bind_int64(rows, 1, series);
            sqlite3_bind_int(rows, 2, parts[i].lvl);
            sqlite3_bind_int64(rows, 3, parts[i].lo);
            sqlite3_bind_int64(rows, 4, parts[i].hi);
        } else {
            sqlite3_bind_int64(raw, 4, parts[i].lo);
            sqlite3_bind_int64(raw, 5, parts[i].hi);
        }
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            (*nread)++;
            if (parts[i].lvl)
                cpoint(q, out, &lastcol, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1),
                       sqlite3_column_double(st, 2), sqlite3_column_double(st, 3));
            else {
                double v = sqlite3_column_double(st, 1);
                cpoint(q, out, &lastcol, sqlite3_column_int64(st, 0), v, v, v);
            }
        }
        if (rc != SQLITE_DONE) {
            rundb_db_error(db, e, "timeline (counter rows)");
            goto out;
        }
    }
out:
    sqlite3_finalize(lv);
    sqlite3_finalize(raw);
    sqlite3_finalize(before);
    sqlite3_finalize(rows);
    return e->code;
}

int timeline_counter_stats(sqlite3 *db, int64_t series, int64_t start, int64_t end, double *min, double *max,
                           double *avg, int64_t *n, struct err *e)
{
    sqlite3_stmt *raw = NULL, *before = NULL;
    double sum = 0;
    int rc;

    err_clear(e);
    *n = 0;
    *min = INFINITY;
    *max = -INFINITY;
    *avg = 0;
    rc = series_open(db, series, &raw, &before, e);
    if (rc) return rc < 0 ? rc : 0;
    sqlite3_bind_int64(before, 4, start);
    sqlite3_bind_int64(raw, 4, start);
    sqlite3_bind_int64(raw, 5, end);
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st = i ? raw : before;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            double v = sqlite3_column_double(st, 1);
            if (v < *min) *min = v;
            if (v > *max) *max = v;
            sum += v;
            (*n)++;
        }
        if (rc != SQLITE_DONE) rundb_db_error(db, e, "timeline (counter samples)");
    }
    if (*n) *avg = sum / (double)*n;
    sqlite3_finalize(raw);
    sqlite3_finalize(before);
    return e->code;
}

int timeline_query(sqlite3 *db, int64_t start, int64_t end, int width, const int64_t *tracks, size_t ntracks,
                   const int64_t *series, size_t nseries, struct timeline_view **out, struct err *e)
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
    /* one read transaction: one snapshot, and the file lock taken once
     * rather than per statement */
    int in_txn = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
    if (rundb_prepare(db, "SELECT ts FROM slice WHERE id = ?", &s.tsq, e) < 0 ||
        rundb_prepare(db, "SELECT id, ts, dur, depth, name FROM slice WHERE id >= ? AND id < ?", &s.raw, e) < 0 ||
        rundb_prepare(db, "SELECT ts, dur, depth, parent, name FROM slice WHERE id = ?", &s.one, e) < 0 ||
        rundb_prepare(db, "SELECT level FROM lod_level WHERE track = ? AND level <= ? ORDER BY level DESC LIMIT 1",
                      &s.lvl, e) < 0 ||
        rundb_prepare(db,
                      "SELECT depth, fid, n, ts, te, ldur, name FROM lod WHERE track = ? AND level = ? AND bucket >= ?"
                      " AND bucket < ? ORDER BY bucket, depth, fid",
                      &s.lod, e) < 0)
        goto out;
    for (size_t i = 0; i < ntracks; i++) {
        v->ntracks++;
        if (query_track(db, &s, &q, tracks[i], &v->tracks[i], &v->rows_read, e) < 0) goto out;
    }
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
    }
    for (size_t i = 0; i < v->ncounters; i++) free(v->counters[i].points);
    free(v->tracks);
    free(v->counters);
    free(v);
}

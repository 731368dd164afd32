/* timeline_counters.c — the counter series of the level-of-detail build
 * (see include/derive/timeline_counters.h). */
#define LOG_MODULE "timeline"
#include "derive/timeline_counters.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/tmheap.h"
#include "base/varint.h"
#include "base/xmalloc.h"
#include "derive/gpuscan.h"
#include "derive/timeline_query.h"
#include "derive/timeline_rows.h"
#include "store/rundb.h"

#include "derive/timeline.h"

/* ====================================================================== */
/* Build: counters                                                        */
/* ====================================================================== */

struct cagg {
    int64_t bucket, n, fts, lts;
    double min, max, last;
};

/* A sample held until its series' levels are known. */
struct sample {
    int64_t ts;
    double v;
};

/* The open chunk of one level of the series being built. */
struct cpack {
    int64_t bucket, last, n; /* bucket: the first row's; last: the last row's */
    struct varint_buf rows;
};

/* What one series' build keeps between series: the samples it holds (up to
 * hold of them) and the clodpack writer, a chunk open per level (a series
 * read again feeds every kept level at once). */
struct cbuild {
    sqlite3 *db;
    sqlite3_stmt *ins;
    struct cpack pk[TIMELINE_NLEV];
    struct timeline_rows_held held; /* struct sample */
};

static int cflush(struct cbuild *cb, int64_t series, int level, struct err *e)
{
    struct cpack *p = &cb->pk[level];
    if (!p->n) return 0;
    const int64_t keys[2] = { series, level };
    int rc = timeline_rows_chunk(cb->db, cb->ins, keys, 2, p->bucket, p->last, p->n, &p->rows, "timeline (clod insert)",
                                 e);
    p->n = 0;
    p->rows.len = 0;
    return rc;
}

/* The series' last chunks, at its end. */
static int cflush_all(struct cbuild *cb, int64_t series, struct err *e)
{
    for (int L = 0; L < TIMELINE_NLEV; L++)
        if (cflush(cb, series, L, e) != 0) return e->code;
    return 0;
}

/* d's 8 bytes, low byte first. */
static void put_double(struct varint_buf *b, double d)
{
    uint64_t u;
    uint8_t *o = varint_buf_room(b, 8);
    memcpy(&u, &d, sizeof u);
    for (int i = 0; i < 8; i++) o[i] = (uint8_t)(u >> (8 * i));
    b->len += 8;
}

/* A finished bucket of level, appended to its chunk (the buckets of a
 * level come in order). */
static int cemit(struct cbuild *cb, int64_t series, int level, const struct cagg *a, struct err *e)
{
    struct cpack *p = &cb->pk[level];
    if (p->n >= TIMELINE_CLOD_CHUNK_ROWS && cflush(cb, series, level, e) != 0) return e->code;
    if (!p->n) p->bucket = p->last = a->bucket;
    varint_buf_put(&p->rows, (uint64_t)(a->bucket - p->last));
    varint_buf_put(&p->rows, (uint64_t)a->n);
    varint_buf_put(&p->rows, (uint64_t)(a->fts - a->bucket * ((int64_t)1 << level))); /* in the bucket */
    varint_buf_put(&p->rows, varint_zigzag(a->lts - a->fts));
    put_double(&p->rows, a->min);
    put_double(&p->rows, a->max);
    put_double(&p->rows, a->last);
    p->last = a->bucket;
    p->n++;
    return 0;
}

void timeline_clod_chunk_begin(struct timeline_clod_chunk *c, int level, int64_t bucket, int64_t n, const void *blob,
                               size_t size)
{
    varint_rows_begin(&c->rows, blob, size, level >= 0 && level < 62 ? n : -1);
    c->level = level;
    c->bucket = bucket;
}

static double get_double(const uint8_t *p)
{
    uint64_t u = 0;
    double d;
    for (int i = 0; i < 8; i++) u |= (uint64_t)p[i] << (8 * i);
    memcpy(&d, &u, sizeof d);
    return d;
}

int timeline_clod_chunk_next(struct timeline_clod_chunk *c, struct timeline_clod_row *r)
{
    uint64_t v[4];
    int64_t start;
    const uint8_t *d;
    int rc = varint_rows_next(&c->rows);
    if (rc != 1) return rc;
    if (!varint_rows_get(&c->rows, v, 4) || !(d = varint_rows_take(&c->rows, 24)) || v[0] > INT64_MAX ||
        v[1] > INT64_MAX || v[2] >> c->level || __builtin_add_overflow(c->bucket, (int64_t)v[0], &r->bucket) ||
        __builtin_mul_overflow(r->bucket, (int64_t)1 << c->level, &start) ||
        __builtin_add_overflow(start, (int64_t)v[2], &r->fts) ||
        __builtin_add_overflow(r->fts, varint_unzigzag(v[3]), &r->lts))
        return varint_rows_fail(&c->rows);
    r->n = (int64_t)v[1];
    r->min = get_double(d);
    r->max = get_double(d + 8);
    r->last = get_double(d + 16);
    c->bucket = r->bucket;
    return 1;
}

/* One sample into the open bucket a of level L. */
static int clod_sample(struct cbuild *cb, int64_t series, int L, struct cagg *a, int64_t ts, double v, struct err *e)
{
    int64_t b = timeline_bucket_of(ts, L);
    if (a->n && a->bucket != b) {
        if (cemit(cb, series, L, a, e) != 0) return e->code;
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
    return 0;
}

/* One series' samples (st yields ts, value in time order): counts the rows
 * of every level while holding the samples, then writes the kept levels
 * from them; a series of more than hold samples is read again instead. */
static int build_series(struct timeline_series *st, struct cbuild *cb, int64_t series, struct err *e)
{
    int64_t rows[TIMELINE_NLEV], lastb[TIMELINE_NLEV], ts;
    int kept[TIMELINE_NLEV], nkept = 0, rc;
    struct cagg open[TIMELINE_NLEV];
    double v;

    memset(rows, 0, sizeof rows);
    for (int L = 0; L < TIMELINE_NLEV; L++) lastb[L] = INT64_MIN;
    timeline_rows_held_reset(&cb->held);
    timeline_series_range(st, INT64_MIN, INT64_MAX, e);
    while ((rc = timeline_series_next(st, &ts, &v, e)) == 1) {
        /* a bucket at L is the same as the last sample's at every coarser
         * level too (each is the finer one shifted right) */
        for (int L = 0; L < TIMELINE_NLEV; L++) {
            int64_t b = timeline_bucket_of(ts, L);
            if (b == lastb[L]) break;
            rows[L]++;
            lastb[L] = b;
        }
        struct sample *smp = timeline_rows_held_add(&cb->held);
        if (smp) *smp = (struct sample){ ts, v };
    }
    if (rc < 0) return rc;
    /* the samples themselves stay in their table (level 0 is read there) */
    for (int L = 2, last = 0, prev = 0; L < TIMELINE_NLEV; L++) {
        int64_t pr = prev ? rows[prev] : rows[0] / 2;
        if (rows[L] * 2 > pr || L < last + 2) continue;
        kept[nkept++] = L;
        prev = last = L;
        if (rows[L] <= 1) break;
    }
    if (!nkept) return 0;
    memset(open, 0, sizeof open);
    if (!cb->held.spilled) {
        /* level by level: each level's rows come in key order, appended to
         * the b-tree rather than searched for */
        const struct sample *smp = cb->held.v;
        for (int k = 0; k < nkept; k++) {
            for (size_t i = 0; i < cb->held.n; i++)
                if (clod_sample(cb, series, kept[k], &open[k], smp[i].ts, smp[i].v, e) != 0) return e->code;
            if (open[k].n && cemit(cb, series, kept[k], &open[k], e) != 0) return e->code;
        }
        return 0;
    }
    timeline_series_range(st, INT64_MIN, INT64_MAX, e);
    while ((rc = timeline_series_next(st, &ts, &v, e)) == 1)
        for (int k = 0; k < nkept; k++)
            if (clod_sample(cb, series, kept[k], &open[k], ts, v, e) != 0) return e->code;
    if (rc < 0) return rc;
    for (int k = 0; k < nkept; k++)
        if (open[k].n && cemit(cb, series, kept[k], &open[k], e) != 0) return e->code;
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

/* The samples of one (rank, dev): the value at pt waits until time moves
 * on (changes at one instant collapse into one sample), and is written only
 * when it differs from the last one written, into the open chunk (cts..clast,
 * cn samples) of gpubusypack. */
struct busyw {
    sqlite3 *db;
    sqlite3_stmt *ins;
    int64_t rank, dev, pt, pv, lastv, nrows;
    int pending;
    int64_t cts, clast, cn;
    struct varint_buf rows; /* kept from device to device */
};

static int busy_chunk_flush(struct busyw *w, struct err *e)
{
    if (!w->cn) return 0;
    const int64_t keys[2] = { w->rank, w->dev };
    int rc = timeline_rows_chunk(w->db, w->ins, keys, 2, w->cts, w->clast, w->cn, &w->rows,
                                 "timeline (gpubusy insert)", e);
    w->cn = 0;
    w->rows.len = 0;
    return rc;
}

static int busy_flush(struct busyw *w, struct err *e)
{
    if (!w->pending) return 0;
    w->pending = 0;
    if (w->pv == w->lastv) return 0;
    if (w->cn == TIMELINE_BUSY_CHUNK_ROWS && busy_chunk_flush(w, e) != 0) return e->code;
    if (!w->cn) w->cts = w->clast = w->pt;
    varint_buf_put(&w->rows, (uint64_t)(w->pt - w->clast)); /* times only grow */
    varint_buf_put(&w->rows, varint_zigzag(w->pv));
    w->clast = w->pt;
    w->cn++;
    w->lastv = w->pv;
    w->nrows++;
    return 0;
}

void timeline_busy_chunk_begin(struct timeline_busy_chunk *c, int64_t ts, int64_t n, const void *blob, size_t size)
{
    varint_rows_begin(&c->rows, blob, size, n);
    c->ts = ts;
}

int timeline_busy_chunk_next(struct timeline_busy_chunk *c, int64_t *ts, int64_t *v)
{
    uint64_t x[2];
    int rc = varint_rows_next(&c->rows);
    if (rc != 1) return rc;
    if (!varint_rows_get(&c->rows, x, 2) || x[0] > INT64_MAX || __builtin_add_overflow(c->ts, (int64_t)x[0], &c->ts))
        return varint_rows_fail(&c->rows);
    *ts = c->ts;
    *v = varint_unzigzag(x[1]);
    return 1;
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
    sqlite3_stmt *devs = NULL, *t0q = NULL, *ser = NULL;
    struct tmheap h = { NULL, 0, 0 }; /* the running ops' ends */
    struct gpuscan_lanes *L = NULL;
    struct busyw w = { .db = db };
    int64_t nops = 0, nrows = 0;
    int rc;

    if (rundb_prepare(db,
                      "SELECT rank, device FROM track WHERE kind = 1 AND nslices > 0 AND device IS NOT NULL"
                      " GROUP BY rank, device UNION SELECT rank, 0 FROM track WHERE kind = 1 AND nslices > 0"
                      " GROUP BY rank HAVING max(device IS NOT NULL) = 0 ORDER BY 1, 2",
                      &devs, e) < 0 ||
        rundb_prepare(db, "INSERT INTO gpubusypack(rank, dev, ts, last, n, rows) VALUES(?,?,?,?,?,?)", &w.ins, e) <
            0 ||
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
        w.rank = rank;
        w.dev = dev;
        w.pt = w.pv = w.nrows = w.cn = 0;
        w.pending = 0;
        w.lastv = -1; /* the first sample is always written */
        h.n = 0;
        if (gpuscan_lanes_open(db, rank, dev, INT64_MIN, INT64_MAX, &L, e) != 0) goto out;
        while ((rc = gpuscan_lanes_next(L, &op, e)) > 0) {
            if (op.end < op.ts) op.end = op.ts;
            /* idle from the capture's start to the first op */
            if (!any++ && t0 < op.ts && busy_set(&w, t0, 0, e) != 0) goto out;
            while (h.n && h.v[0].t <= op.ts) {
                int64_t t = tmheap_pop(&h).t;
                if (busy_set(&w, t, --count, e) != 0) goto out;
            }
            tmheap_push(&h, op.end, 0);
            if (busy_set(&w, op.ts, ++count, e) != 0) goto out;
            nops++;
        }
        if (rc < 0) goto out;
        while (h.n) {
            int64_t t = tmheap_pop(&h).t;
            if (busy_set(&w, t, --count, e) != 0) goto out;
        }
        if (busy_flush(&w, e) != 0 || busy_chunk_flush(&w, e) != 0) goto out;
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
    tmheap_free(&h);
    sqlite3_finalize(devs);
    sqlite3_finalize(w.ins);
    varint_buf_free(&w.rows);
    sqlite3_finalize(t0q);
    sqlite3_finalize(ser);
    return e->code;
}

/* 1 when db holds the analyses' series tables (anseries, ansample), in
 * any schema (a scratch database sees the run's attached); a run imported
 * before the analyses existed has neither, and its timeline is rebuilt
 * without their lanes. <0 on error. */
static int anseries_present(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    if (rundb_prepare(db,
                      "SELECT count(DISTINCT name) FROM pragma_table_list WHERE type = 'table'"
                      " AND name IN ('anseries', 'ansample')",
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

/* The trace's own series: GPU busy, the trace's counters, memory totals. */
static int register_trace_series(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *list = NULL, *ser = NULL;
    int rc;

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
out:
    sqlite3_finalize(list);
    sqlite3_finalize(ser);
    return e->code;
}

int timeline_counters_build(sqlite3 *db, int analyses, size_t hold, struct err *e)
{
    sqlite3_stmt *list = NULL;
    struct cbuild cb = { .db = db, .held = { .hold = hold, .size = sizeof(struct sample) } };
    struct timeline_series *ser = NULL;
    int rc, has_an = 0;

    if (!analyses && register_trace_series(db, e) != 0) return e->code;
    /* the analyses' series last: they derive from the trace, its own counters come first */
    if (analyses && ((has_an = anseries_present(db, e)) < 0 || (has_an && register_anseries(db, e) != 0))) goto out;
    if (analyses && !has_an) return 0;
    if (rundb_prepare(db, "SELECT id FROM cseries WHERE (src = 4) = ? ORDER BY id", &list, e) < 0 ||
        rundb_prepare(db, "INSERT INTO clodpack(series, level, bucket, last, n, rows) VALUES(?,?,?,?,?,?)", &cb.ins,
                      e) < 0)
        goto out;
    sqlite3_bind_int(list, 1, analyses != 0);
    while ((rc = sqlite3_step(list)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(list, 0);
        /* its samples, whatever table holds them (timeline_query.h) */
        if ((rc = timeline_series_open(db, id, &ser, e)) < 0) goto out;
        if (rc == 0 && (build_series(ser, &cb, id, e) != 0 || cflush_all(&cb, id, e) != 0)) goto out;
        timeline_series_close(ser);
        ser = NULL;
    }
    if (rc != SQLITE_DONE) rundb_db_error(db, e, "timeline (series)");
out:
    timeline_series_close(ser);
    sqlite3_finalize(cb.ins);
    for (int L = 0; L < TIMELINE_NLEV; L++) varint_buf_free(&cb.pk[L].rows);
    timeline_rows_held_free(&cb.held);
    sqlite3_finalize(list);
    return e->code;
}

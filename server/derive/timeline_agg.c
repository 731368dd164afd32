/* timeline_agg.c — precomputed window aggregates: built at ingest, read by
 * the timeline's area selection (see include/derive/timeline_agg.h). */
#define LOG_MODULE "timeline"
#include "derive/timeline_agg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "base/log.h"
#include "base/varint.h"
#include "base/xmalloc.h"
#include "derive/timeline.h"
#include "derive/timeline_query.h"
#include "derive/timeline_rows.h"
#include "store/scan.h"
#include "store/rundb.h"

/* The slices' tables, in main (a scratch database's when built aside):
 * what timeline_agg_build_begin creates and timeline_agg_adopt_slices copies. */
static const char slices_schema_sql[] =
    "DROP TABLE IF EXISTS main.tagg; DROP TABLE IF EXISTS main.taggpack; DROP TABLE IF EXISTS main.tagg_level;"
    "DROP TABLE IF EXISTS main.topen;"
    "CREATE TABLE main.tagg_level(track INTEGER PRIMARY KEY, level INTEGER);"
    "CREATE TABLE main.taggpack(track INTEGER, bucket INTEGER, last INTEGER, n INTEGER, rows BLOB,"
    " PRIMARY KEY(track, bucket)) WITHOUT ROWID;"
    "CREATE TABLE main.topen(track INTEGER, bucket INTEGER, id INTEGER, PRIMARY KEY(track, bucket, id)) WITHOUT ROWID;";

/* main.: built on a scratch database (the analyses' lanes aside) a bare
 * name would reach the attached run's table. The tables when missing (the
 * series added to them); anew after the drop. */
#define COUNTERS_TABLES \
    "CREATE TABLE IF NOT EXISTS main.cagg_level(series INTEGER PRIMARY KEY, level INTEGER, last INTEGER);" \
    "CREATE TABLE IF NOT EXISTS main.cagg(series INTEGER, bucket INTEGER, n INTEGER, min REAL, max REAL," \
    " area REAL, covered INTEGER, PRIMARY KEY(series, bucket)) WITHOUT ROWID;"
static const char counters_add_schema_sql[] = COUNTERS_TABLES;
static const char counters_schema_sql[] =
    "DROP TABLE IF EXISTS main.cagg; DROP TABLE IF EXISTS main.cagg_level;" COUNTERS_TABLES;

/* The bucket level for a span: under TIMELINE_AGG_BUCKETS buckets. */
static int level_for(int64_t t0, int64_t t1)
{
    int L = 10;
    while (L < 62 && ((t1 - t0) >> L) >= TIMELINE_AGG_BUCKETS - 1) L++;
    return L;
}

static int64_t bucket_start(int64_t b, int L)
{
    return b * ((int64_t)1 << L);
}

/* ====================================================================== */
/* Build: slices                                                          */
/* ====================================================================== */

struct skey {
    int64_t bucket;
    uint64_t name;
};

struct sval {
    struct skey k;
    int64_t n, total, self;
};

static struct sval *sval_at(struct hmap *m, int64_t bucket, uint32_t name)
{
    struct skey k = { bucket, name };
    int fresh;
    struct sval *v = hmap_put(m, hmap_hash_u64((uint64_t)bucket * 0x9E3779B97F4A7C15ull ^ name), &k, sizeof k, &fresh);
    if (fresh) v->k = k;
    return v;
}

/* Adds sign × the time of [lo, hi) in each bucket to total (with_total) and
 * to self, and count to the first bucket's n: a slice's own count and
 * time start in the same bucket, found once (a lookup fewer a slice). */
static void spread(struct hmap *m, int L, int64_t lo, int64_t hi, uint32_t name, int with_total, int64_t sign,
                   int64_t count)
{
    for (int64_t b = timeline_bucket_of(lo, L); lo < hi; b++) {
        int64_t be = bucket_start(b + 1, L), part = (hi < be ? hi : be) - lo;
        struct sval *v = sval_at(m, b, name);
        if (with_total) v->total += sign * part;
        v->self += sign * part;
        v->n += count;
        count = 0;
        lo = be;
    }
}

static int sval_cmp(const void *x, const void *y)
{
    const struct sval *a = x, *b = y;
    if (a->k.bucket != b->k.bucket) return a->k.bucket < b->k.bucket ? -1 : 1;
    return a->k.name < b->k.name ? -1 : a->k.name > b->k.name;
}

/* Writes a track's sums, in key order (bucket, name), as chunks of whole
 * buckets of at least TIMELINE_AGG_CHUNK_ROWS rows: each row its gap from
 * the bucket before (from the chunk's first for the first), its name, n,
 * then total and self (zigzag), LEB128 varints. */
static int flush_track(sqlite3 *db, sqlite3_stmt *ins, int64_t track, struct hmap *m, struct err *e)
{
    size_t n = 0, pos = 0;
    struct sval *rows = xmalloc((m->n ? m->n : 1) * sizeof *rows), *v;
    struct varint_buf buf = { NULL, 0, 0 };
    int64_t first = 0, last = 0, nrows = 0;
    while ((v = hmap_next(m, &pos, NULL, NULL))) rows[n++] = *v;
    xqsort(rows, n, sizeof *rows, sval_cmp);
    for (size_t i = 0; i <= n && !e->code; i++) {
        /* a chunk ends between buckets once it holds enough, and at the end */
        if (nrows && (i == n || (nrows >= TIMELINE_AGG_CHUNK_ROWS && rows[i].k.bucket != last))) {
            timeline_rows_chunk(db, ins, &track, 1, first, last, nrows, &buf, "timeline aggregates (insert)", e);
            nrows = 0;
            buf.len = 0;
        }
        if (i == n || e->code) break;
        if (!nrows) first = last = rows[i].k.bucket;
        varint_buf_put(&buf, (uint64_t)(rows[i].k.bucket - last));
        varint_buf_put(&buf, rows[i].k.name);
        varint_buf_put(&buf, varint_zigzag(rows[i].n));
        varint_buf_put(&buf, varint_zigzag(rows[i].total));
        varint_buf_put(&buf, varint_zigzag(rows[i].self));
        last = rows[i].k.bucket;
        nrows++;
    }
    varint_buf_free(&buf);
    free(rows);
    hmap_free(m, NULL);
    hmap_init(m, sizeof(struct sval), 1024);
    return e->code;
}

void timeline_agg_chunk_begin(struct timeline_agg_chunk *c, int64_t bucket, int64_t n, const void *blob, size_t size)
{
    varint_rows_begin(&c->rows, blob, size, n);
    c->bucket = bucket;
}

int timeline_agg_chunk_next(struct timeline_agg_chunk *c, struct timeline_agg_row *r)
{
    uint64_t v[5];
    int rc = varint_rows_next(&c->rows);
    if (rc != 1) return rc;
    if (!varint_rows_get(&c->rows, v, 5) || v[0] > INT64_MAX || v[1] > UINT32_MAX ||
        __builtin_add_overflow(c->bucket, (int64_t)v[0], &r->bucket))
        return varint_rows_fail(&c->rows);
    r->name = (uint32_t)v[1];
    r->n = varint_unzigzag(v[2]);
    r->total = varint_unzigzag(v[3]);
    r->self = varint_unzigzag(v[4]);
    c->bucket = r->bucket;
    return 1;
}

struct open_slice {
    int64_t id;
    uint32_t name;
};

/* The slices open on a track's drawing levels (at most one each), to write
 * topen at each bucket boundary the pass crosses. */
struct levels {
    int64_t *id, *end;
    int n;
    int64_t next; /* the next boundary's bucket */
};

/* Writes the slices open at each boundary before t (open at T: ts < T <
 * end). */
static int emit_open(sqlite3 *db, sqlite3_stmt *ins, int64_t track, int L, struct levels *lv, int64_t t, struct err *e)
{
    /* after the last slice: until nothing is open (the rank's span bounds
     * the buckets; the cap guards a clock cut at the largest time) */
    for (int tail = 0; bucket_start(lv->next, L) <= t && tail <= 4 * TIMELINE_AGG_BUCKETS; tail += t == INT64_MAX) {
        int64_t T = bucket_start(lv->next, L), any = 0;
        for (int d = 0; d < lv->n; d++) {
            if (lv->end[d] <= T) continue;
            any = 1;
            sqlite3_bind_int64(ins, 1, track);
            sqlite3_bind_int64(ins, 2, lv->next);
            sqlite3_bind_int64(ins, 3, lv->id[d]);
            if (sqlite3_step(ins) != SQLITE_DONE) return rundb_db_error(db, e, "timeline aggregates (open)");
            sqlite3_reset(ins);
        }
        lv->next++;
        if (!any && t == INT64_MAX) break;
    }
    return 0;
}

static void levels_set(struct levels *lv, int depth, int64_t id, int64_t end)
{
    if (depth < 0) return;
    if (depth >= lv->n) {
        lv->id = xrealloc(lv->id, (size_t)(depth + 1) * sizeof *lv->id);
        lv->end = xrealloc(lv->end, (size_t)(depth + 1) * sizeof *lv->end);
        for (int d = lv->n; d <= depth; d++) lv->end[d] = INT64_MIN;
        lv->n = depth + 1;
    }
    lv->id[depth] = id;
    lv->end[depth] = end;
}

/* The slices' builder: the parent's name from a stack of the open slices,
 * as the window scan of the area selection keeps it. */
struct timeline_agg_build {
    sqlite3 *db;
    sqlite3_stmt *lv, *setl, *iop;
    sqlite3_stmt *ins; /* INSERT INTO taggpack */
    struct levels open;
    struct hmap m;
    struct open_slice *stk;
    size_t sp, cap;
    int64_t cur;
    int L;
    /* fed from the import's stream: the rank's span comes with it, not
     * from the rank table (lv NULL) */
    int stream, has_span;
    int64_t t0, t1;
};

static int begin(sqlite3 *db, int stream, struct timeline_agg_build **out, struct err *e)
{
    struct timeline_agg_build *b = xcalloc(1, sizeof *b);

    err_clear(e);
    *out = b;
    b->db = db;
    b->cur = -1;
    b->stream = stream;
    hmap_init(&b->m, sizeof(struct sval), 1024);
    if (sqlite3_exec(db, slices_schema_sql, NULL, NULL, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "timeline aggregates (tables)");
    if ((!stream &&
         rundb_prepare(db, "SELECT r.t0, r.t1 FROM track t JOIN rank r ON r.rank = t.rank WHERE t.id = ?", &b->lv, e) <
             0) ||
        rundb_prepare(db, "INSERT INTO topen(track, bucket, id) VALUES (?, ?, ?)", &b->iop, e) < 0 ||
        rundb_prepare(db, "INSERT INTO taggpack(track, bucket, last, n, rows) VALUES (?, ?, ?, ?, ?)", &b->ins, e) <
            0 ||
        rundb_prepare(db, "INSERT INTO tagg_level(track, level) VALUES (?, ?)", &b->setl, e) < 0)
        return e->code;
    return 0;
}

int timeline_agg_build_begin(sqlite3 *db, struct timeline_agg_build **out, struct err *e)
{
    return begin(db, 0, out, e);
}

int timeline_agg_build_begin_stream(sqlite3 *db, struct timeline_agg_build **out, struct err *e)
{
    return begin(db, 1, out, e);
}

void timeline_agg_build_span(struct timeline_agg_build *b, int has_span, int64_t t0, int64_t t1)
{
    b->has_span = has_span;
    b->t0 = t0;
    b->t1 = t1;
}

/* The current track's rows (the slices still open, then its sums), if any. */
static int end_track(struct timeline_agg_build *b, struct err *e)
{
    if (b->cur < 0) return 0;
    if (emit_open(b->db, b->iop, b->cur, b->L, &b->open, INT64_MAX, e) != 0 ||
        flush_track(b->db, b->ins, b->cur, &b->m, e) != 0)
        return e->code;
    return 0;
}

/* A new track: its bucket level from its rank's span. */
static int start_track(struct timeline_agg_build *b, const struct timeline_slice *s, struct err *e)
{
    if (end_track(b, e) != 0) return e->code;
    b->cur = s->track;
    b->sp = 0;
    b->open.n = 0;
    if (b->stream) {
        b->L = b->has_span ? level_for(b->t0, b->t1) : level_for(s->ts, s->ts + s->dur);
    } else {
        sqlite3_bind_int64(b->lv, 1, s->track);
        b->L = sqlite3_step(b->lv) == SQLITE_ROW && sqlite3_column_type(b->lv, 0) != SQLITE_NULL
                   ? level_for(sqlite3_column_int64(b->lv, 0), sqlite3_column_int64(b->lv, 1))
                   : level_for(s->ts, s->ts + s->dur);
        sqlite3_reset(b->lv);
    }
    sqlite3_bind_int64(b->setl, 1, s->track);
    sqlite3_bind_int(b->setl, 2, b->L);
    int rc = sqlite3_step(b->setl);
    sqlite3_reset(b->setl);
    if (rc != SQLITE_DONE) return rundb_db_error(b->db, e, "timeline aggregates (level)");
    b->open.next = timeline_bucket_of(s->ts, b->L) + 1;
    return 0;
}

int timeline_agg_build_push(struct timeline_agg_build *b, const struct timeline_slice *s, struct err *e)
{
    int64_t ts = s->ts, dur = s->dur;
    int L;

    if (s->track != b->cur && start_track(b, s, e) != 0) return e->code;
    L = b->L;
    if (emit_open(b->db, b->iop, s->track, L, &b->open, ts, e) != 0) return e->code;
    levels_set(&b->open, s->depth, s->id, ts + dur);
    while (b->sp && b->stk[b->sp - 1].id != s->parent) b->sp--;
    if (dur > 0) {
        spread(&b->m, L, ts, ts + dur, s->name, 1, 1, 1);
        if (b->sp) spread(&b->m, L, ts, ts + dur, b->stk[b->sp - 1].name, 0, -1, 0);
    } else {
        sval_at(&b->m, timeline_bucket_of(ts, L), s->name)->n++;
    }
    if (b->sp == b->cap) b->stk = xrealloc(b->stk, (b->cap = b->cap ? b->cap * 2 : 64) * sizeof *b->stk);
    b->stk[b->sp++] = (struct open_slice){ s->id, s->name };
    return 0;
}

int timeline_agg_build_end(struct timeline_agg_build *b, struct err *e)
{
    if (end_track(b, e) != 0) return e->code;
    b->cur = -1;
    return 0;
}

void timeline_agg_build_free(struct timeline_agg_build *b)
{
    if (!b) return;
    hmap_free(&b->m, NULL);
    free(b->stk);
    free(b->open.id);
    free(b->open.end);
    sqlite3_finalize(b->iop);
    sqlite3_finalize(b->lv);
    sqlite3_finalize(b->setl);
    sqlite3_finalize(b->ins);
    free(b);
}

/* ====================================================================== */
/* Build: counters                                                        */
/* ====================================================================== */

struct cbucket {
    int64_t n, covered;
    double min, max, area;
};

/* The step function of one series integrated per bucket. */
static int build_series(sqlite3 *db, sqlite3_stmt *ins, sqlite3_stmt *setl, int64_t series, int64_t rank_t1,
                        struct err *e)
{
    struct timeline_series *ser;
    int rc = timeline_series_open(db, series, &ser, e);
    int64_t first, last, t;
    double x;

    if (rc) return rc < 0 ? rc : 0;
    rc = timeline_series_before(ser, INT64_MAX, &last, &x, e);
    if (rc != 1) {
        timeline_series_close(ser);
        return rc < 0 ? rc : 0;
    }
    timeline_series_range(ser, INT64_MIN, INT64_MAX, e);
    rc = timeline_series_next(ser, &t, &x, e);
    first = rc == 1 ? t : last;
    int64_t end = last > rank_t1 ? last : rank_t1;
    int L = level_for(first, end);
    int64_t b0 = timeline_bucket_of(first, L), b1 = timeline_bucket_of(end, L);
    size_t nb = (size_t)(b1 - b0 + 1);
    struct cbucket *bk = xcalloc(nb, sizeof *bk);
    int64_t cur_t = 0;
    double v = 0;
    int has = 0;

    for (; rc == 1; rc = timeline_series_next(ser, &t, &x, e)) {
        for (int64_t lo = cur_t, b = timeline_bucket_of(lo, L); has && lo < t; b++) {
            int64_t be = bucket_start(b + 1, L), part = (t < be ? t : be) - lo;
            bk[b - b0].area += v * (double)part;
            bk[b - b0].covered += part;
            lo = be;
        }
        struct cbucket *c = &bk[timeline_bucket_of(t, L) - b0];
        if (!c->n || x < c->min) c->min = x;
        if (!c->n || x > c->max) c->max = x;
        c->n++;
        cur_t = t;
        v = x;
        has = 1;
    }
    /* rc < 0: e holds the samples' error */
    for (int64_t lo = cur_t, b = timeline_bucket_of(lo, L), hi = bucket_start(b1 + 1, L); has && lo < hi; b++) {
        int64_t be = bucket_start(b + 1, L), part = (hi < be ? hi : be) - lo;
        bk[b - b0].area += v * (double)part;
        bk[b - b0].covered += part;
        lo = be;
    }
    sqlite3_bind_int64(setl, 1, series);
    sqlite3_bind_int(setl, 2, L);
    sqlite3_bind_int64(setl, 3, b1);
    if (!e->code && sqlite3_step(setl) != SQLITE_DONE) rundb_db_error(db, e, "timeline aggregates (series level)");
    sqlite3_reset(setl);
    for (size_t i = 0; i < nb && !e->code; i++) {
        sqlite3_bind_int64(ins, 1, series);
        sqlite3_bind_int64(ins, 2, b0 + (int64_t)i);
        sqlite3_bind_int64(ins, 3, bk[i].n);
        if (bk[i].n) {
            sqlite3_bind_double(ins, 4, bk[i].min);
            sqlite3_bind_double(ins, 5, bk[i].max);
        } else {
            sqlite3_bind_null(ins, 4);
            sqlite3_bind_null(ins, 5);
        }
        sqlite3_bind_double(ins, 6, bk[i].area);
        sqlite3_bind_int64(ins, 7, bk[i].covered);
        if (sqlite3_step(ins) != SQLITE_DONE) rundb_db_error(db, e, "timeline aggregates (series insert)");
        sqlite3_reset(ins);
    }
    free(bk);
    timeline_series_close(ser);
    return e->code;
}

/* The series of cseries without aggregates yet (none in cagg_level). */
static int build_counters(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *ser = NULL, *ins = NULL, *setl = NULL;
    int rc;

    if (rundb_prepare(db,
                      "SELECT s.id, coalesce(r.t1, 0) FROM cseries s LEFT JOIN rank r ON r.rank = s.rank"
                      " WHERE s.id NOT IN (SELECT series FROM cagg_level) ORDER BY s.id",
                      &ser, e) < 0 ||
        rundb_prepare(db, "INSERT INTO cagg(series, bucket, n, min, max, area, covered) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      &ins, e) < 0 ||
        rundb_prepare(db, "INSERT INTO cagg_level(series, level, last) VALUES (?, ?, ?)", &setl, e) < 0)
        goto out;
    while ((rc = sqlite3_step(ser)) == SQLITE_ROW)
        if (build_series(db, ins, setl, sqlite3_column_int64(ser, 0), sqlite3_column_int64(ser, 1), e) < 0) goto out;
    if (rc != SQLITE_DONE) rundb_db_error(db, e, "timeline aggregates (series list)");
out:
    sqlite3_finalize(ser);
    sqlite3_finalize(ins);
    sqlite3_finalize(setl);
    return e->code;
}

int timeline_agg_adopt_slices(sqlite3 *db, struct err *e)
{
    err_clear(e);
    /* identical tables: SQLite copies the records without re-encoding them */
    if (sqlite3_exec(db, slices_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "INSERT INTO main.tagg_level SELECT * FROM " RUNDB_ASIDE ".tagg_level;"
                         "INSERT INTO main.taggpack SELECT * FROM " RUNDB_ASIDE ".taggpack;"
                         "INSERT INTO main.topen SELECT * FROM " RUNDB_ASIDE ".topen",
                     NULL, NULL, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "timeline aggregates (adopt)");
    return 0;
}

int timeline_agg_adopt_counters(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *st;
    err_clear(e);
    if (rundb_prepare(db, "SELECT count(*) FROM " RUNDB_ASIDE ".sqlite_master WHERE name = 'cagg'", &st, e) < 0)
        return e->code;
    int rc = sqlite3_step(st), has = rc == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return rundb_db_error(db, e, "timeline aggregates (adopt)");
    if (has && (sqlite3_exec(db, counters_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
                sqlite3_exec(db, "INSERT INTO main.cagg_level SELECT * FROM " RUNDB_ASIDE ".cagg_level;"
                                 "INSERT INTO main.cagg SELECT * FROM " RUNDB_ASIDE ".cagg",
                             NULL, NULL, NULL) != SQLITE_OK))
        return rundb_db_error(db, e, "timeline aggregates (adopt)");
    return 0;
}

static int build_counters_in_txn(sqlite3 *db, const char *schema, struct err *e)
{
    double t0 = log_now_s();

    err_clear(e);
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline aggregates (tables)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    if (build_counters(db, e) != 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline aggregates (commit)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    LOG_DEBUG("window aggregates of the counters built: %.2f s", log_now_s() - t0);
    return 0;
}

int timeline_agg_build_counters(sqlite3 *db, struct err *e)
{
    return build_counters_in_txn(db, counters_schema_sql, e);
}

int timeline_agg_add_counters(sqlite3 *db, struct err *e)
{
    return build_counters_in_txn(db, counters_add_schema_sql, e);
}

/* ====================================================================== */
/* Queries                                                                */
/* ====================================================================== */

/* The level of a track or series from its level table; -1: none (a run
 * imported before the tables). *last: cagg_level's last bucket. */
static int stored_level(sqlite3 *db, const char *sql, int64_t id, int64_t *last, struct err *e)
{
    sqlite3_stmt *st;
    int L = -1, rc;

    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1; /* no such table */
    sqlite3_bind_int64(st, 1, id);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        L = sqlite3_column_int(st, 0);
        if (last) *last = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) rundb_db_error(db, e, "timeline aggregates (level)");
    return L;
}

int timeline_agg_slices(sqlite3 *db, int64_t track, int64_t start, int64_t end, int64_t *lo, int64_t *hi,
                        void (*add)(void *ctx, uint32_t name, int64_t n, int64_t total, int64_t self), void *ctx,
                        struct err *e)
{
    sqlite3_stmt *st;
    int L, rc;

    err_clear(e);
    *lo = *hi = start;
    L = stored_level(db, "SELECT level, 0 FROM tagg_level WHERE track = ?", track, NULL, e);
    if (e->code) return e->code;
    if (L < 0) return 0;
    int64_t b0 = timeline_bucket_ceil(start, L), b1 = timeline_bucket_of(end, L);
    if (b0 >= b1) return 0;
    /* tagg: the rows unpacked, as a run stored before taggpack has them */
    int packed = scan_has_table(db, "taggpack", e);
    if (packed < 0 ||
        rundb_prepare(db,
                      packed
                          /* the chunk holding b0 (the last to start at or before it) and those after, up to b1 */
                          ? "SELECT bucket, n, rows FROM taggpack WHERE track = ?1 AND bucket < ?3 AND last >= ?2"
                            " AND bucket >= coalesce((SELECT max(bucket) FROM taggpack WHERE track = ?1"
                            " AND bucket <= ?2), ?2) ORDER BY bucket"
                          : "SELECT name, n, total, self FROM tagg WHERE track = ? AND bucket >= ? AND bucket < ?",
                      &st, e) < 0)
        return e->code;
    sqlite3_bind_int64(st, 1, track);
    sqlite3_bind_int64(st, 2, b0);
    sqlite3_bind_int64(st, 3, b1);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!packed) {
            add(ctx, (uint32_t)sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                sqlite3_column_int64(st, 3));
            continue;
        }
        struct timeline_agg_chunk c;
        struct timeline_agg_row r;
        int got;
        timeline_agg_chunk_begin(&c, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                 sqlite3_column_blob(st, 2), (size_t)sqlite3_column_bytes(st, 2));
        while ((got = timeline_agg_chunk_next(&c, &r)) == 1 && r.bucket < b1)
            if (r.bucket >= b0) add(ctx, r.name, r.n, r.total, r.self);
        if (got < 0) {
            sqlite3_finalize(st);
            return rundb_damaged(db, e, "timeline aggregates (chunk)");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return rundb_db_error(db, e, "timeline aggregates (rows)");
    *lo = bucket_start(b0, L);
    *hi = bucket_start(b1, L);
    return 0;
}

static int id_cmp(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}

static void cstats_sample(struct timeline_cstats *o, double x)
{
    if (!o->n || x < o->min) o->min = x;
    if (!o->n || x > o->max) o->max = x;
    o->n++;
}

/* The samples of [lo, hi) into o, the value in force at lo first (counted
 * as a sample when count_before). */
static int raw_part(struct timeline_series *ser, int64_t lo, int64_t hi, int count_before, struct timeline_cstats *o,
                    struct err *e)
{
    int64_t cur_t = lo, t;
    double v = 0, x;
    int has = 0, rc;

    if ((rc = timeline_series_before(ser, lo, &t, &x, e)) < 0) return rc;
    if (rc == 1) {
        v = x;
        has = 1;
        if (count_before) cstats_sample(o, v);
    }
    timeline_series_range(ser, lo, hi, e);
    while ((rc = timeline_series_next(ser, &t, &x, e)) == 1) {
        if (has) {
            o->area += v * (double)(t - cur_t);
            o->covered += t - cur_t;
        }
        v = x;
        cur_t = t;
        has = 1;
        cstats_sample(o, v);
    }
    if (rc < 0) return rc;
    if (has) {
        o->area += v * (double)(hi - cur_t);
        o->covered += hi - cur_t;
    }
    return 0;
}

int timeline_agg_counter(sqlite3 *db, int64_t series, int64_t start, int64_t end, struct timeline_cstats *out,
                         struct err *e)
{
    sqlite3_stmt *rows = NULL;
    struct timeline_series *ser = NULL;
    int64_t last = 0, a = end, b = end;
    int L, rc;

    err_clear(e);
    memset(out, 0, sizeof *out);
    rc = timeline_series_open(db, series, &ser, e);
    if (rc) return rc < 0 ? rc : 0;
    L = stored_level(db, "SELECT level, last FROM cagg_level WHERE series = ?", series, &last, e);
    if (e->code) goto out;
    if (L >= 0) {
        int64_t b0 = timeline_bucket_ceil(start, L), b1 = timeline_bucket_of(end, L);
        if (b1 > last + 1) b1 = last + 1;
        if (b0 < b1) {
            a = bucket_start(b0, L);
            b = bucket_start(b1, L);
        }
    }
    /* the left edge (and the value in force at start), the whole buckets,
     * the right edge from the value in force at its start */
    if (raw_part(ser, start, a, 1, out, e) < 0) goto out;
    if (a < b) {
        if (rundb_prepare(db,
                          "SELECT n, min, max, area, covered FROM cagg WHERE series = ? AND bucket >= ? AND bucket < ?",
                          &rows, e) < 0)
            goto out;
        sqlite3_bind_int64(rows, 1, series);
        sqlite3_bind_int64(rows, 2, timeline_bucket_of(a, L));
        sqlite3_bind_int64(rows, 3, timeline_bucket_of(b, L));
        while ((rc = sqlite3_step(rows)) == SQLITE_ROW) {
            int64_t n = sqlite3_column_int64(rows, 0);
            if (n) {
                double mn = sqlite3_column_double(rows, 1), mx = sqlite3_column_double(rows, 2);
                cstats_sample(out, mn);
                cstats_sample(out, mx);
                out->n += n - 2;
            }
            out->area += sqlite3_column_double(rows, 3);
            out->covered += sqlite3_column_int64(rows, 4);
        }
        if (rc != SQLITE_DONE) {
            rundb_db_error(db, e, "timeline aggregates (series rows)");
            goto out;
        }
        if (raw_part(ser, b, end, 0, out, e) < 0) goto out;
    }
out:
    timeline_series_close(ser);
    sqlite3_finalize(rows);
    return e->code;
}

int timeline_open_at(sqlite3 *db, int64_t track, int64_t t, int64_t before, int64_t first, int64_t **ids, size_t *n,
                     struct err *e)
{
    sqlite3_stmt *one = NULL, *op = NULL;
    int64_t T = INT64_MIN;
    size_t cap = 0;
    int L, rc = SQLITE_DONE;

    err_clear(e);
    *ids = NULL;
    *n = 0;
    L = stored_level(db, "SELECT level, 0 FROM tagg_level WHERE track = ?", track, NULL, e);
    if (e->code) return e->code;
    if (rundb_prepare(db, "SELECT ts, dur, parent FROM slice WHERE id = ?", &one, e) < 0) return e->code;
    /* the ones started since the boundary: along the parent chain (each
     * slice's parent is the latest-started one open at its start) */
    if (L >= 0) T = bucket_start(timeline_bucket_of(t, L), L);
    for (int64_t pid = before, hops = 0; pid >= first && (L >= 0 || hops < TIMELINE_OPEN_WALK); hops++) {
        sqlite3_reset(one);
        sqlite3_bind_int64(one, 1, pid);
        if ((rc = sqlite3_step(one)) != SQLITE_ROW) break;
        int64_t ts = sqlite3_column_int64(one, 0), dur = sqlite3_column_int64(one, 1);
        if (ts < T) break;
        if (ts < t && ts + dur > t) {
            if (*n == cap) *ids = xrealloc(*ids, (cap = cap ? cap * 2 : 32) * sizeof **ids);
            (*ids)[(*n)++] = pid;
        }
        pid = sqlite3_column_type(one, 2) == SQLITE_NULL ? 0 : sqlite3_column_int64(one, 2);
        rc = SQLITE_DONE;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        rundb_db_error(db, e, "timeline (open slices)");
        goto out;
    }
    /* the ones open at the boundary, stored */
    if (L >= 0) {
        if (rundb_prepare(db, "SELECT id FROM topen WHERE track = ? AND bucket = ?", &op, e) < 0) goto out;
        sqlite3_bind_int64(op, 1, track);
        sqlite3_bind_int64(op, 2, timeline_bucket_of(t, L));
        while ((rc = sqlite3_step(op)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(op, 0);
            sqlite3_reset(one);
            sqlite3_bind_int64(one, 1, id);
            if (sqlite3_step(one) == SQLITE_ROW && sqlite3_column_int64(one, 0) + sqlite3_column_int64(one, 1) > t) {
                if (*n == cap) *ids = xrealloc(*ids, (cap = cap ? cap * 2 : 32) * sizeof **ids);
                (*ids)[(*n)++] = id;
            }
        }
        if (rc != SQLITE_DONE) rundb_db_error(db, e, "timeline (open slices)");
    }
    if (*n > 1) xqsort(*ids, *n, sizeof **ids, id_cmp);
out:
    sqlite3_finalize(one);
    sqlite3_finalize(op);
    if (e->code) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return e->code;
}

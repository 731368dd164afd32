/* timeline_lod.c — the slices' level of detail, built from slices pushed in
 * id order (see include/derive/timeline_lod.h). */
#define LOG_MODULE "timeline"
#include "derive/timeline_lod.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/varint.h"
#include "base/xmalloc.h"
#include "derive/timeline_rows.h"
#include "store/rundb.h"


struct agg {
    int64_t bucket, fid, n, ts, end, ldur;
    uint32_t name;
};

/* A row of one level, collected to be written in key order. */
struct lrow {
    struct agg a;
    int depth;
};

/* Track ids with their depth count, in id order. */
struct tinfo {
    int64_t id;
    int ndepth;
    int64_t nslices;
};

/* A slice held until its track's levels are known: the i-th of its track,
 * id first + i (the track's ids are contiguous, else it is read again);
 * depth -1 for one out of the track's range, not drawn. */
struct held {
    int64_t ts, dur;
    uint32_t name;
    int32_t depth;
};

/* The chunk being packed: rows of one track and level, in key order. */
struct pack {
    sqlite3_stmt *ins;                        /* INSERT INTO lodpack */
    int64_t track, bucket, last, fid, n;      /* bucket: the first row's; last, fid: the last row's */
    int level;
    struct varint_buf rows;
};

struct timeline_lod {
    sqlite3 *db;
    struct pack pk;
    /* a re-read track's rows come in slice order: sorted in a temp table
     * (its disk, not RAM: such a track has millions of rows) */
    sqlite3_stmt *sort_ins, *sort_out, *sort_clear;
    sqlite3_stmt *lvl, *reread;
    struct tinfo *ti;
    size_t nti;
    /* the track being pushed: t NULL when the track table lacks it */
    int64_t track, first, last;
    struct tinfo *t;
    int64_t *lastb;    /* [depth * TIMELINE_NLEV + L]: last small bucket seen */
    size_t nlastb;     /* depths lastb has room for */
    /* fed from the import's stream (timeline_lod_begin_stream): the
     * track's row comes after its slices (timeline_lod_track), and a track
     * too long to hold is left to the scan (deferred) */
    int stream, st_known;
    struct tinfo st;
    int64_t *deferred;
    size_t ndeferred, defcap;
    int64_t rows[TIMELINE_NLEV];
    /* struct held; spilled: more than hold slices (or ids not contiguous),
     * read again at the end */
    struct timeline_rows_held held;
    /* the write: per kept level and depth the open bucket */
    int nkept;
    int kept[TIMELINE_NLEV];
    struct agg *open;  /* [depth * nkept + k]; n == 0: none */
    /* the rows of one level, sorted before they are written: an INSERT in
     * key order appends to the b-tree instead of searching it */
    struct lrow *lrows;
    size_t nlrows, lrowcap;
    int collect;
    uint64_t nrows;
};

static int load_tracks(struct timeline_lod *b, struct err *e)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc;

    if (rundb_prepare(b->db, "SELECT id, coalesce(max_depth, 0), coalesce(nslices, 0) FROM track ORDER BY id", &st,
                      e) < 0)
        return e->code;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (b->nti == cap) {
            cap = cap ? cap * 2 : 64;
            b->ti = xrealloc(b->ti, cap * sizeof *b->ti);
        }
        b->ti[b->nti].id = sqlite3_column_int64(st, 0);
        b->ti[b->nti].ndepth = sqlite3_column_int(st, 1) + 1;
        b->ti[b->nti].nslices = sqlite3_column_int64(st, 2);
        b->nti++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(b->db, e, "timeline (tracks)");
}

static struct tinfo *find_tinfo(struct timeline_lod *b, int64_t id)
{
    size_t lo = 0, hi = b->nti;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (b->ti[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < b->nti && b->ti[lo].id == id ? &b->ti[lo] : NULL;
}

static int begin(sqlite3 *db, size_t hold, int stream, struct timeline_lod **out, struct err *e)
{
    struct timeline_lod *b = xcalloc(1, sizeof *b);

    err_clear(e);
    *out = b;
    b->db = db;
    b->held = (struct timeline_rows_held){ .hold = hold, .size = sizeof(struct held) };
    b->track = -1;
    b->stream = stream;
    if (stream && sqlite3_exec(db, TIMELINE_LOD_SCHEMA, NULL, NULL, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "timeline (lod tables)");
    if ((!stream && load_tracks(b, e) < 0) ||
        rundb_prepare(db, "INSERT INTO lodpack(track, level, bucket, last, n, rows) VALUES(?,?,?,?,?,?)", &b->pk.ins,
                      e) < 0 ||
        rundb_prepare(db, "INSERT INTO lod_level(track, level) VALUES(?,?)", &b->lvl, e) < 0 ||
        (!stream &&
         (rundb_prepare(db, "SELECT id, ts, dur, depth, name FROM slice WHERE id BETWEEN ? AND ? AND track = ? ORDER BY id",
                        &b->reread, e) < 0 ||
          sqlite3_exec(db,
                       "CREATE TEMP TABLE IF NOT EXISTS lodsort(level INTEGER, bucket INTEGER, depth INTEGER,"
                       " fid INTEGER, n INTEGER, ts INTEGER, te INTEGER, ldur INTEGER, name INTEGER,"
                       " PRIMARY KEY(level, bucket, depth, fid)) WITHOUT ROWID; DELETE FROM temp.lodsort",
                       NULL, NULL, NULL) != SQLITE_OK ||
          rundb_prepare(db, "INSERT INTO temp.lodsort VALUES(?,?,?,?,?,?,?,?,?)", &b->sort_ins, e) < 0 ||
          rundb_prepare(db, "SELECT * FROM temp.lodsort ORDER BY level, bucket, depth, fid", &b->sort_out, e) < 0 ||
          rundb_prepare(db, "DELETE FROM temp.lodsort", &b->sort_clear, e) < 0)))
        return e->code ? e->code : rundb_db_error(db, e, "timeline (lod sort table)");
    return 0;
}

int timeline_lod_begin(sqlite3 *db, size_t hold, struct timeline_lod **out, struct err *e)
{
    return begin(db, hold, 0, out, e);
}

int timeline_lod_begin_stream(sqlite3 *db, size_t hold, struct timeline_lod **out, struct err *e)
{
    return begin(db, hold, 1, out, e);
}

void timeline_lod_track(struct timeline_lod *b, int64_t track, int present, int max_depth, int64_t nslices)
{
    if (!b->stream || track != b->track || !b->t) return;
    b->st.ndepth = max_depth + 1;
    b->st.nslices = nslices;
    b->st_known = 1;
    if (!present) b->t = NULL;
}

const int64_t *timeline_lod_deferred(const struct timeline_lod *b, size_t *n)
{
    *n = b->ndeferred;
    return b->deferred;
}

/* Writes the open chunk (if any) as a lodpack row. */
static int pack_flush(struct timeline_lod *b, struct err *e)
{
    struct pack *p = &b->pk;
    if (!p->n) return 0;
    const int64_t keys[2] = { p->track, p->level };
    int rc = timeline_rows_chunk(b->db, p->ins, keys, 2, p->bucket, p->last, p->n, &p->rows, "timeline (lod insert)", e);
    p->n = 0;
    p->rows.len = 0;
    return rc;
}

/* Appends a row of the track's level: rows come in key order (bucket,
 * depth, fid) within a level; a chunk ends between buckets, never inside
 * one, so that each chunk's first bucket is its key. */
static int write_row(struct timeline_lod *b, int level, int depth, const struct agg *a, struct err *e)
{
    struct pack *p = &b->pk;
    if (p->n && (p->track != b->track || p->level != level ||
                 (p->n >= TIMELINE_LOD_CHUNK_ROWS && a->bucket != p->last))) {
        if (pack_flush(b, e) != 0) return e->code;
    }
    if (!p->n) {
        p->track = b->track;
        p->level = level;
        p->bucket = p->last = a->bucket;
        p->fid = 0;
    } else if (a->bucket < p->last) {
        return err_set(e, ERR_INTERNAL, "timeline (lod): rows out of order in track %lld",
                       (long long)b->track);
    }
    int64_t start = a->bucket * ((int64_t)1 << level);
    varint_buf_put(&p->rows, (uint64_t)(a->bucket - p->last));
    varint_buf_put(&p->rows, (uint64_t)depth);
    varint_buf_put(&p->rows, varint_zigzag(a->fid - p->fid));
    varint_buf_put(&p->rows, (uint64_t)a->n);
    varint_buf_put(&p->rows, (uint64_t)(a->ts - start)); /* in the bucket: [0, 2^level) */
    varint_buf_put(&p->rows, varint_zigzag(a->end - a->ts));
    varint_buf_put(&p->rows, varint_zigzag(a->ldur));
    varint_buf_put(&p->rows, a->name);
    p->last = a->bucket;
    p->fid = a->fid;
    p->n++;
    b->nrows++;
    return 0;
}

void timeline_lod_chunk_begin(struct timeline_lod_chunk *c, int level, int64_t bucket, int64_t n, const void *blob,
                              size_t size)
{
    /* a level no bucket width fits is a damaged row: nothing is read */
    varint_rows_begin(&c->rows, blob, size, level >= 0 && level < 62 ? n : -1);
    c->level = level;
    c->bucket = bucket;
    c->fid = 0;
}

int timeline_lod_chunk_next(struct timeline_lod_chunk *c, struct timeline_lod_row *r)
{
    uint64_t v[8];
    int64_t start;
    int rc = varint_rows_next(&c->rows);
    if (rc != 1) return rc;
    if (!varint_rows_get(&c->rows, v, 8) || v[0] > INT64_MAX || v[1] > INT_MAX || v[3] > INT64_MAX ||
        v[4] >> c->level || v[7] > UINT32_MAX || __builtin_add_overflow(c->bucket, (int64_t)v[0], &r->bucket) ||
        __builtin_add_overflow(c->fid, varint_unzigzag(v[2]), &r->fid) ||
        __builtin_mul_overflow(r->bucket, (int64_t)1 << c->level, &start) ||
        __builtin_add_overflow(start, (int64_t)v[4], &r->ts) ||
        __builtin_add_overflow(r->ts, varint_unzigzag(v[5]), &r->te))
        return varint_rows_fail(&c->rows);
    r->depth = (int)v[1];
    r->n = (int64_t)v[3];
    r->ldur = varint_unzigzag(v[6]);
    r->name = (uint32_t)v[7];
    c->bucket = r->bucket;
    c->fid = r->fid;
    return 1;
}

/* A finished row: collected while one level is written from the held
 * slices, else written at once. */
static int emit_row(struct timeline_lod *b, int level, int depth, const struct agg *a, struct err *e)
{
    if (!b->collect) {
        sqlite3_stmt *st = b->sort_ins;
        const int64_t v[9] = { level, a->bucket, depth, a->fid, a->n, a->ts, a->end, a->ldur, a->name };
        for (int i = 0; i < 9; i++) sqlite3_bind_int64(st, i + 1, v[i]);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        return rc == SQLITE_DONE ? 0 : rundb_db_error(b->db, e, "timeline (lod sort)");
    }
    if (b->nlrows == b->lrowcap) {
        b->lrowcap = b->lrowcap ? b->lrowcap * 2 : 1024;
        b->lrows = xrealloc(b->lrows, b->lrowcap * sizeof *b->lrows);
    }
    b->lrows[b->nlrows++] = (struct lrow){ *a, depth };
    return 0;
}

/* lod's key order within one track and level: bucket, depth, fid. */
static int lrow_cmp(const void *x, const void *y)
{
    const struct lrow *p = x, *q = y;
    if (p->a.bucket != q->a.bucket) return p->a.bucket < q->a.bucket ? -1 : 1;
    if (p->depth != q->depth) return p->depth < q->depth ? -1 : 1;
    return p->a.fid < q->a.fid ? -1 : p->a.fid > q->a.fid;
}

/* One slice into the open bucket of kept level k (a long one alone). */
static int write_slice(struct timeline_lod *b, int k, int64_t id, int64_t ts, int64_t dur, int d, uint32_t name,
                       struct err *e)
{
    int L = b->kept[k];
    int64_t bk = timeline_bucket_of(ts, L);
    if (dur >= ((int64_t)1 << L)) {
        struct agg big = { bk, id, 1, ts, ts + dur, dur, name };
        return emit_row(b, L, d, &big, e);
    }
    struct agg *a = &b->open[d * b->nkept + k];
    if (a->n && a->bucket != bk) {
        if (emit_row(b, L, d, a, e) != 0) return e->code;
        a->n = 0;
    }
    if (!a->n) {
        *a = (struct agg){ bk, id, 0, ts, ts + dur, dur, name };
    } else {
        if (ts + dur > a->end) a->end = ts + dur;
        if (dur > a->ldur) {
            a->ldur = dur;
            a->name = name;
        }
    }
    a->n++;
    return 0;
}

/* The buckets still open at the track's end, of kept level k. */
static int close_level(struct timeline_lod *b, int k, struct err *e)
{
    for (int d = 0; d < b->t->ndepth; d++) {
        struct agg *a = &b->open[d * b->nkept + k];
        if (a->n && emit_row(b, b->kept[k], d, a, e) != 0) return e->code;
    }
    return 0;
}

/* Level by level from the held slices, each level's rows in key order. */
static int write_held(struct timeline_lod *b, struct err *e)
{
    const struct held *held = b->held.v;
    int rc = 0;

    b->collect = 1;
    for (int k = 0; k < b->nkept && rc == 0; k++) {
        b->nlrows = 0;
        for (size_t i = 0; i < b->held.n && rc == 0; i++) {
            const struct held *h = &held[i];
            /* a streamed track's depth bound is known only now: as the re-read does */
            if (h->depth >= 0 && h->depth < b->t->ndepth)
                rc = write_slice(b, k, b->first + (int64_t)i, h->ts, h->dur, h->depth, h->name, e);
        }
        if (rc == 0) rc = close_level(b, k, e);
        if (rc == 0) xqsort(b->lrows, b->nlrows, sizeof *b->lrows, lrow_cmp);
        for (size_t i = 0; i < b->nlrows && rc == 0; i++)
            rc = write_row(b, b->kept[k], b->lrows[i].depth, &b->lrows[i].a, e);
    }
    b->collect = 0;
    return rc;
}

/* The kept levels of the finished track: each at most half the rows of the
 * previous kept one and at least 4x coarser. */
static void choose_levels(struct timeline_lod *b)
{
    int lastk = 0;
    /* the first level must merge 4 slices into a row on average: finer
     * windows read the slices themselves at the same cost */
    int64_t prev = b->t->nslices / 2;

    b->nkept = 0;
    for (int L = 2; L < TIMELINE_NLEV; L++) {
        if (b->rows[L] * 2 > prev || L < lastk + 2) continue;
        b->kept[b->nkept++] = L;
        prev = b->rows[L];
        lastk = L;
        if (b->rows[L] <= b->t->ndepth) break;
    }
}

/* The slices of the finished track again from the table: it had more than
 * the builder holds. */
static int write_reread(struct timeline_lod *b, struct err *e)
{
    sqlite3_stmt *st = b->reread;
    int rc;

    sqlite3_bind_int64(st, 1, b->first);
    sqlite3_bind_int64(st, 2, b->last);
    sqlite3_bind_int64(st, 3, b->track);
    int fail = 0;
    while (!fail && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        int d = sqlite3_column_int(st, 3);
        if (d < 0 || d >= b->t->ndepth) continue;
        for (int k = 0; k < b->nkept && !fail; k++)
            fail = write_slice(b, k, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                               sqlite3_column_int64(st, 2), d, (uint32_t)sqlite3_column_int64(st, 4), e);
    }
    sqlite3_reset(st);
    if (fail) return fail;
    if (rc != SQLITE_DONE) return rundb_db_error(b->db, e, "timeline (lod scan)");
    for (int k = 0; k < b->nkept; k++)
        if (close_level(b, k, e) != 0) return e->code;
    /* the rows back in key order, packed */
    st = b->sort_out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct agg a = { sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
                         sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 7),
                         (uint32_t)sqlite3_column_int64(st, 8) };
        if (write_row(b, sqlite3_column_int(st, 0), sqlite3_column_int(st, 2), &a, e) != 0) {
            sqlite3_reset(st);
            return e->code;
        }
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return rundb_db_error(b->db, e, "timeline (lod sort)");
    rc = sqlite3_step(b->sort_clear);
    sqlite3_reset(b->sort_clear);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(b->db, e, "timeline (lod sort)");
}

/* A streamed track the builder cannot write: too long to hold (the slice
 * table is read again once committed), or its row never came. */
static void defer_track(struct timeline_lod *b)
{
    if (b->ndeferred == b->defcap)
        b->deferred = xrealloc(b->deferred, (b->defcap = b->defcap ? b->defcap * 2 : 16) * sizeof *b->deferred);
    b->deferred[b->ndeferred++] = b->track;
}

static int end_track(struct timeline_lod *b, struct err *e)
{
    if (!b->t) return 0;
    if (b->stream && (b->held.spilled || !b->st_known)) {
        defer_track(b);
        return 0;
    }
    choose_levels(b);
    for (int k = 0; k < b->nkept; k++) {
        sqlite3_bind_int64(b->lvl, 1, b->track);
        sqlite3_bind_int(b->lvl, 2, b->kept[k]);
        int rc = sqlite3_step(b->lvl);
        sqlite3_reset(b->lvl);
        if (rc != SQLITE_DONE) return rundb_db_error(b->db, e, "timeline (lod_level insert)");
    }
    if (!b->nkept) return 0;
    b->open = xcalloc((size_t)b->t->ndepth * (size_t)b->nkept, sizeof *b->open);
    if ((b->held.spilled ? write_reread(b, e) : write_held(b, e)) != 0) return e->code;
    free(b->open);
    b->open = NULL;
    return 0;
}

/* Room in lastb for depths [0, n): the table's count up front, or as a
 * streamed track's slices reach them. */
static void grow_lastb(struct timeline_lod *b, size_t n)
{
    if (n <= b->nlastb) return;
    size_t cap = b->nlastb ? b->nlastb : 4;
    while (cap < n) cap *= 2;
    b->lastb = xrealloc(b->lastb, cap * TIMELINE_NLEV * sizeof *b->lastb);
    for (size_t i = b->nlastb * TIMELINE_NLEV; i < cap * TIMELINE_NLEV; i++) b->lastb[i] = INT64_MIN;
    b->nlastb = cap;
}

static int start_track(struct timeline_lod *b, int64_t track, int64_t id, struct err *e)
{
    if (end_track(b, e) != 0) return e->code;
    b->track = track;
    b->first = id;
    timeline_rows_held_reset(&b->held);
    memset(b->rows, 0, sizeof b->rows);
    b->nlastb = 0;
    if (b->stream) {
        /* the depths and the count come with the track's row, after it */
        b->st = (struct tinfo){ track, INT_MAX, 0 };
        b->st_known = 0;
        b->t = &b->st;
        return 0;
    }
    b->t = find_tinfo(b, track);
    if (!b->t) return 0;
    /* a track the track table says is too long is not held at all */
    if (b->t->nslices > (int64_t)b->held.hold) timeline_rows_held_spill(&b->held);
    grow_lastb(b, (size_t)b->t->ndepth);
    return 0;
}

/* Holds s, the next slice of the track: its id is implied by its place,
 * so one that skips ids ends the holding as one too many does. */
static void hold_slice(struct timeline_lod *b, const struct timeline_slice *s, int valid)
{
    if (s->id != b->first + (int64_t)b->held.n) {
        timeline_rows_held_spill(&b->held);
        return;
    }
    struct held *h = timeline_rows_held_add(&b->held);
    if (h) *h = (struct held){ s->ts, s->dur, s->name, valid ? s->depth : -1 };
}

int timeline_lod_push(struct timeline_lod *b, const struct timeline_slice *s, struct err *e)
{
    if (s->track != b->track && start_track(b, s->track, s->id, e) != 0) return e->code;
    b->last = s->id;
    if (!b->t) return 0;
    int valid = s->depth >= 0 && s->depth < b->t->ndepth;
    if (!b->held.spilled) hold_slice(b, s, valid);
    /* a streamed track too long to hold is built again whole from the
     * slice table (defer_track): counting its rows here would be lost */
    if (!valid || (b->stream && b->held.spilled)) return 0;
    /* the rows each level would have: a new small bucket, or a long slice */
    grow_lastb(b, (size_t)s->depth + 1);
    int64_t *ld = b->lastb + (size_t)s->depth * TIMELINE_NLEV, ts = s->ts;
    int L = 2;
    for (; L < TIMELINE_NLEV && s->dur >= ((int64_t)1 << L); L++) b->rows[L]++;
    /* the first level whose bucket is the last small slice's ends the
     * count: a depth's slices come in time order, so every coarser bucket
     * is the last one's too (as a counter sample's in timeline_counters.c) */
    for (; L < TIMELINE_NLEV; L++) {
        int64_t bk = timeline_bucket_of(ts, L);
        if (bk == ld[L]) break;
        b->rows[L]++;
        ld[L] = bk;
    }
    return 0;
}

int timeline_lod_end(struct timeline_lod *b, struct err *e)
{
    if (end_track(b, e) != 0 || pack_flush(b, e) != 0) return e->code;
    b->t = NULL;
    LOG_DEBUG("lod: %llu rows", (unsigned long long)b->nrows);
    return 0;
}

void timeline_lod_free(struct timeline_lod *b)
{
    if (!b) return;
    sqlite3_finalize(b->pk.ins);
    varint_buf_free(&b->pk.rows);
    sqlite3_finalize(b->sort_ins);
    sqlite3_finalize(b->sort_out);
    sqlite3_finalize(b->sort_clear);
    sqlite3_finalize(b->lvl);
    sqlite3_finalize(b->reread);
    free(b->ti);
    free(b->lastb);
    free(b->deferred);
    timeline_rows_held_free(&b->held);
    free(b->open);
    free(b->lrows);
    free(b);
}

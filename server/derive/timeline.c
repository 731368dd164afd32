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
#include "derive/timeline_agg.h"
#include "derive/timeline_counters.h"
#include "base/xmalloc.h"
#include "derive/gpuscan.h"
#include "store/rundb.h"

/* Every LOD table, in main (a scratch database's when built aside): what
 * timeline_build_trace fills and timeline_adopt copies. */
static const char schema_sql[] =
    "DROP TABLE IF EXISTS main.lod; DROP TABLE IF EXISTS main.lod_level; DROP TABLE IF EXISTS main.clod;"
    "DROP TABLE IF EXISTS main.cseries; DROP TABLE IF EXISTS main.gpubusy;"
    "CREATE TABLE main.lod_level(track INTEGER, level INTEGER, PRIMARY KEY(track, level)) WITHOUT ROWID;"
    "CREATE TABLE main.lod(track INTEGER, level INTEGER, bucket INTEGER, depth INTEGER, fid INTEGER, n INTEGER,"
    " ts INTEGER, te INTEGER, ldur INTEGER, name INTEGER,"
    " PRIMARY KEY(track, level, bucket, depth, fid)) WITHOUT ROWID;"
    "CREATE TABLE main.cseries(id INTEGER PRIMARY KEY, rank INTEGER, src INTEGER, key1 INTEGER, key2 INTEGER,"
    " name TEXT, unit TEXT);"
    "CREATE TABLE main.clod(series INTEGER, level INTEGER, bucket INTEGER, n INTEGER, fts INTEGER, min REAL,"
    " max REAL, last REAL, lts INTEGER, PRIMARY KEY(series, level, bucket)) WITHOUT ROWID;"
    "CREATE TABLE main.gpubusy(rank INTEGER, dev INTEGER, ts INTEGER, value INTEGER, PRIMARY KEY(rank, dev, ts))"
    " WITHOUT ROWID;";

/* floor(t / 2^L) for any sign of t. */
int64_t timeline_bucket_of(int64_t t, int level)
{
    return t >= 0 ? t >> level : -((-(t + 1)) >> level) - 1;
}

/* ceil(t / 2^L). */
int64_t timeline_bucket_ceil(int64_t t, int level)
{
    int64_t b = timeline_bucket_of(t, level);
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
    int kept[TIMELINE_NLEV];    /* kept levels, ascending */
    struct agg *open;  /* [depth * nkept + k]; n == 0: none */
    /* pass 1 */
    int64_t *last;     /* [depth * TIMELINE_NLEV + L]: last small bucket seen */
    int64_t rows[TIMELINE_NLEV];
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
static int count_levels(sqlite3 *db, struct tinfo *ti, size_t nti, int (*kept)[TIMELINE_NLEV + 1], struct err *e)
{
    sqlite3_stmt *st;
    int64_t *last = NULL, rows[TIMELINE_NLEV];
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
            for (int L = 2; L < TIMELINE_NLEV; L++) {
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
            last = xmalloc((size_t)t->ndepth * TIMELINE_NLEV * sizeof *last);
            for (size_t i = 0; i < (size_t)t->ndepth * TIMELINE_NLEV; i++) last[i] = INT64_MIN;
            memset(rows, 0, sizeof rows);
        }
        if (!t) continue;
        int64_t ts = sqlite3_column_int64(st, 1), dur = sqlite3_column_int64(st, 2);
        int d = sqlite3_column_int(st, 3);
        if (d < 0 || d >= t->ndepth) continue;
        int64_t *ld = last + (size_t)d * TIMELINE_NLEV;
        for (int L = 2; L < TIMELINE_NLEV; L++) {
            if (dur >= ((int64_t)1 << L)) {
                rows[L]++;
                continue;
            }
            int64_t b = timeline_bucket_of(ts, L);
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
    int(*kept)[TIMELINE_NLEV + 1] = NULL;
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
            int64_t b = timeline_bucket_of(ts, L);
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

/* Runs body(db, e) inside one transaction that first runs schema. */
static int in_txn(sqlite3 *db, const char *schema, int (*body)(sqlite3 *, struct err *), const char *what,
                  struct err *e)
{
    err_clear(e);
    if (sqlite3_exec(db, "PRAGMA cache_size=-16384; BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, what);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    if (body(db, e) != 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, what);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    return 0;
}

static int build_trace(sqlite3 *db, struct err *e)
{
    double t0 = log_now_s();
    if (build_slices(db, e) != 0) return e->code;
    double t1 = log_now_s();
    if (timeline_counters_build(db, 0, e) != 0) return e->code;
    double t2 = log_now_s();
    /* the slices' window aggregates need nothing derived: they go aside too */
    if (timeline_agg_build_slices(db, e) != 0) return e->code;
    LOG_DEBUG("level of detail of the trace: slices %.2f s, counters %.2f s, window aggregates %.2f s", t1 - t0,
              t2 - t1, log_now_s() - t2);
    return 0;
}

static int build_analyses(sqlite3 *db, struct err *e)
{
    return timeline_counters_build(db, 1, e);
}

int timeline_build_trace(sqlite3 *db, struct err *e)
{
    return in_txn(db, schema_sql, build_trace, "timeline (tables)", e);
}

int timeline_build_analyses(sqlite3 *db, struct err *e)
{
    int rc = in_txn(db, "", build_analyses, "timeline (analyses' series)", e);
    /* the counters' window aggregates sum every series, the analyses' too */
    return rc ? rc : timeline_agg_build_counters(db, e);
}

int timeline_build(sqlite3 *db, struct err *e)
{
    int rc = timeline_build_trace(db, e);
    return rc ? rc : timeline_build_analyses(db, e);
}

int timeline_adopt(sqlite3 *db, struct err *e)
{
    err_clear(e);
    /* identical tables: SQLite copies the records without re-encoding them */
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "INSERT INTO main.lod_level SELECT * FROM " RUNDB_ASIDE ".lod_level;"
                         "INSERT INTO main.lod SELECT * FROM " RUNDB_ASIDE ".lod;"
                         "INSERT INTO main.cseries SELECT * FROM " RUNDB_ASIDE ".cseries;"
                         "INSERT INTO main.clod SELECT * FROM " RUNDB_ASIDE ".clod;"
                         "INSERT INTO main.gpubusy SELECT * FROM " RUNDB_ASIDE ".gpubusy",
                     NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline (adopt)");
    } else if (timeline_agg_adopt_slices(db, e) == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline (adopt)");
    }
    if (e->code) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return e->code;
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


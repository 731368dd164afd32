/* timeline.c — the timeline's level-of-detail tables: built at ingest,
 * read per viewport (see include/derive/timeline.h for the design). */
#define LOG_MODULE "timeline"
#include "derive/timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "derive/timeline_agg.h"
#include "derive/timeline_counters.h"
#include "derive/timeline_lod.h"
#include "base/xmalloc.h"
#include "derive/gpuscan.h"
#include "store/rundb.h"

/* Every LOD table, in main (a scratch database's when built aside): what
 * timeline_build_trace fills and timeline_adopt copies; the counters' alone
 * when the slices' came from the import's stream (timeline_stream.h). */
#define COUNTERS_SCHEMA \
    "DROP TABLE IF EXISTS main.clod; DROP TABLE IF EXISTS main.clodpack; DROP TABLE IF EXISTS main.cseries;" \
    "DROP TABLE IF EXISTS main.gpubusy; DROP TABLE IF EXISTS main.gpubusypack;" \
    "CREATE TABLE main.cseries(id INTEGER PRIMARY KEY, rank INTEGER, src INTEGER, key1 INTEGER, key2 INTEGER," \
    " name TEXT, unit TEXT);" \
    "CREATE TABLE main.clodpack(series INTEGER, level INTEGER, bucket INTEGER, last INTEGER, n INTEGER," \
    " rows BLOB, PRIMARY KEY(series, level, bucket)) WITHOUT ROWID;" \
    "CREATE TABLE main.gpubusypack(rank INTEGER, dev INTEGER, ts INTEGER, last INTEGER, n INTEGER, rows BLOB," \
    " PRIMARY KEY(rank, dev, ts)) WITHOUT ROWID;"
static const char schema_sql[] = TIMELINE_LOD_SCHEMA COUNTERS_SCHEMA;

/* ceil(t / 2^L). */
int64_t timeline_bucket_ceil(int64_t t, int level)
{
    int64_t b = timeline_bucket_of(t, level);
    return (b * ((int64_t)1 << level) == t) ? b : b + 1;
}

/* ====================================================================== */
/* Build: slices                                                          */
/* ====================================================================== */

/* The slice st stands on (columns id, track, ts, dur, parent, name, depth). */
static struct timeline_slice slice_at(sqlite3_stmt *st)
{
    /* a NULL parent reads as 0 */
    return (struct timeline_slice){ sqlite3_column_int64(st, 0),           sqlite3_column_int64(st, 1),
                                    sqlite3_column_int64(st, 2),           sqlite3_column_int64(st, 3),
                                    sqlite3_column_int64(st, 4),           (uint32_t)sqlite3_column_int64(st, 5),
                                    sqlite3_column_int(st, 6) };
}

/* One scan of the slices in id order feeds both of their builders: the
 * level of detail and the window aggregates. */
static int build_slices(sqlite3 *db, struct err *e)
{
    struct timeline_lod *lod = NULL;
    struct timeline_agg_build *agg = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    if (timeline_lod_begin(db, TIMELINE_LOD_HOLD, &lod, e) < 0 || timeline_agg_build_begin(db, &agg, e) < 0 ||
        rundb_prepare(db, "SELECT id, track, ts, dur, parent, name, depth FROM slice ORDER BY id", &st, e) < 0)
        goto out;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct timeline_slice s = slice_at(st);
        if (timeline_lod_push(lod, &s, e) != 0 || timeline_agg_build_push(agg, &s, e) != 0) goto out;
    }
    if (rc != SQLITE_DONE) rundb_db_error(db, e, "timeline (slice scan)");
    else if (timeline_lod_end(lod, e) == 0) timeline_agg_build_end(agg, e);
out:
    sqlite3_finalize(st);
    timeline_lod_free(lod);
    timeline_agg_build_free(agg);
    return e->code;
}

/* The level of detail of the tracks the import's stream left out (too long
 * to hold), from the slice table: each track's slices by id range, through
 * the builder the scan uses, so their rows are the scan's. */
static int build_long_tracks(sqlite3 *db, const int64_t *tracks, size_t n, struct err *e)
{
    struct timeline_lod *lod = NULL;
    sqlite3_stmt *st = NULL;
    int rc = SQLITE_DONE;

    if (timeline_lod_begin(db, TIMELINE_LOD_HOLD, &lod, e) < 0 ||
        rundb_prepare(db,
                      "SELECT id, track, ts, dur, parent, name, depth FROM slice WHERE id BETWEEN"
                      " (SELECT first_slice FROM track WHERE id = ?1) AND (SELECT last_slice FROM track WHERE id = ?1)"
                      " AND track = ?1 ORDER BY id",
                      &st, e) < 0)
        goto out;
    for (size_t i = 0; i < n && rc == SQLITE_DONE; i++) {
        sqlite3_bind_int64(st, 1, tracks[i]);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            struct timeline_slice s = slice_at(st);
            if (timeline_lod_push(lod, &s, e) != 0) goto out;
        }
        sqlite3_reset(st);
    }
    if (rc != SQLITE_DONE) rundb_db_error(db, e, "timeline (long tracks)");
    else timeline_lod_end(lod, e);
out:
    sqlite3_finalize(st);
    timeline_lod_free(lod);
    return e->code;
}

/* Runs body(db, arg, e) inside one transaction that first runs schema. */
static int in_txn(sqlite3 *db, const char *schema, int (*body)(sqlite3 *, const void *, struct err *),
                  const void *arg, const char *what, struct err *e)
{
    err_clear(e);
    if (sqlite3_exec(db, "PRAGMA cache_size=-16384; BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, what);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return e->code;
    }
    if (body(db, arg, e) != 0) {
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

static int build_trace(sqlite3 *db, const void *arg, struct err *e)
{
    (void)arg;
    double t0 = log_now_s(), c0 = log_thread_cpu_s();
    /* the slices' window aggregates need nothing derived: they go aside too */
    if (build_slices(db, e) != 0) return e->code;
    double t1 = log_now_s(), c1 = log_thread_cpu_s();
    if (timeline_counters_build(db, 0, TIMELINE_COUNTERS_HOLD, e) != 0) return e->code;
    LOG_DEBUG("level of detail of the trace: slices and window aggregates %.2f s (CPU %.2f s), counters %.2f s"
              " (CPU %.2f s)",
              t1 - t0, c1 - c0, log_now_s() - t1, log_thread_cpu_s() - c1);
    return 0;
}

/* The tracks timeline_build_trace_rest builds. */
struct long_tracks {
    const int64_t *id;
    size_t n;
};

static int build_rest(sqlite3 *db, const void *arg, struct err *e)
{
    const struct long_tracks *lt = arg;
    double t0 = log_now_s(), c0 = log_thread_cpu_s();
    if (lt->n && build_long_tracks(db, lt->id, lt->n, e) != 0) return e->code;
    double t1 = log_now_s(), c1 = log_thread_cpu_s();
    if (timeline_counters_build(db, 0, TIMELINE_COUNTERS_HOLD, e) != 0) return e->code;
    LOG_DEBUG("level of detail of the trace: slices from the import's stream, %zu long track(s) %.2f s (CPU %.2f s),"
              " counters %.2f s (CPU %.2f s)",
              lt->n, t1 - t0, c1 - c0, log_now_s() - t1, log_thread_cpu_s() - c1);
    return 0;
}

static int build_analyses(sqlite3 *db, const void *arg, struct err *e)
{
    (void)arg;
    return timeline_counters_build(db, 1, TIMELINE_COUNTERS_HOLD, e);
}

/* The counters' window aggregates are per series: the trace's built with
 * its counters, the analyses' with their lanes, the import's last stage. */
int timeline_build_trace(sqlite3 *db, struct err *e)
{
    int rc = in_txn(db, schema_sql, build_trace, NULL, "timeline (tables)", e);
    return rc ? rc : timeline_agg_build_counters(db, e);
}

int timeline_build_trace_rest(sqlite3 *db, const int64_t *tracks, size_t n, struct err *e)
{
    struct long_tracks lt = { tracks, n };
    int rc = in_txn(db, COUNTERS_SCHEMA, build_rest, &lt, "timeline (tables)", e);
    return rc ? rc : timeline_agg_build_counters(db, e);
}

int timeline_build_analyses(sqlite3 *db, struct err *e)
{
    int rc = in_txn(db, "", build_analyses, NULL, "timeline (analyses' series)", e);
    return rc ? rc : timeline_agg_add_counters(db, e);
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
                         "INSERT INTO main.lodpack SELECT * FROM " RUNDB_ASIDE ".lodpack;"
                         "INSERT INTO main.cseries SELECT * FROM " RUNDB_ASIDE ".cseries;"
                         "INSERT INTO main.clodpack SELECT * FROM " RUNDB_ASIDE ".clodpack;"
                         "INSERT INTO main.gpubusypack SELECT * FROM " RUNDB_ASIDE ".gpubusypack",
                     NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline (adopt)");
    } else if (timeline_agg_adopt_slices(db, e) == 0 && timeline_agg_adopt_counters(db, e) == 0 &&
               sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline (adopt)");
    }
    if (e->code) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return e->code;
}

int timeline_present(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    /* lod, clod: the rows unpacked, as a run stored before the packs has them */
    if (rundb_prepare(db,
                      "SELECT count(DISTINCT name IN ('clodpack', 'clod')) FROM sqlite_master WHERE type = 'table'"
                      " AND name IN ('lodpack', 'lod', 'clodpack', 'clod')",
                      &st, e) < 0)
        return e->code;
    rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (rc < 0) return rundb_db_error(db, e, "timeline (schema)");
    return rc == 2;
}


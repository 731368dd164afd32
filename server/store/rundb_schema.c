#define LOG_MODULE "rundb"
#include "store/rundb_schema.h"

#include <stdio.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "store/rundb.h"

static const char schema_sql[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
    "CREATE TABLE rank(rank INTEGER PRIMARY KEY, file TEXT, bytes INTEGER, format TEXT, base_ns INTEGER,"
    " t0 INTEGER, t1 INTEGER, device TEXT, distributed TEXT, header TEXT, stats TEXT);"
    "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT NOT NULL);"
    "CREATE TABLE track(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, pid TEXT, tid TEXT, name TEXT,"
    " pname TEXT, device INTEGER, stream INTEGER, sort INTEGER, max_depth INTEGER, nslices INTEGER,"
    " first_slice INTEGER, last_slice INTEGER);"
    "CREATE TABLE slice(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, dur INTEGER, depth INTEGER,"
    " parent INTEGER, name INTEGER, cat INTEGER, kind INTEGER, corr INTEGER, ext INTEGER, args TEXT);"
    "CREATE TABLE flow(id INTEGER PRIMARY KEY, rank INTEGER, cat INTEGER, name INTEGER, fid TEXT, ph TEXT,"
    " bp TEXT, track INTEGER, ts INTEGER);"
    "CREATE TABLE instant(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, name INTEGER, cat INTEGER,"
    " scope TEXT, args TEXT);"
    "CREATE TABLE counter(id INTEGER PRIMARY KEY, rank INTEGER, track INTEGER, name INTEGER, ts INTEGER,"
    " value REAL);"
    "CREATE TABLE mem(id INTEGER PRIMARY KEY, rank INTEGER, track INTEGER, ts INTEGER, dev_type INTEGER,"
    " dev_id INTEGER, addr INTEGER, bytes INTEGER, total_alloc INTEGER, total_reserved INTEGER);"
    "CREATE TABLE note(rank INTEGER, level TEXT, reason TEXT, count INTEGER, example TEXT);"
    /* each name's slice ids, in chunks (store/nameids.h) */
    "CREATE TABLE name_ids(name INTEGER, first INTEGER, last INTEGER, n INTEGER, ids BLOB,"
    " PRIMARY KEY(name, first)) WITHOUT ROWID;";

/* The slices' indexes are built after the bulk load: building an index once
 * is far cheaper than maintaining it row by row, and the slices' rows are
 * inserted by the writer's thread after the parse, when it is the import's
 * bottleneck. */
/* No (track, ts) index on slice: ids already follow (track, ts), and
 * track.first_slice/last_slice bound each track's id range, so a time range
 * is found by binary search on id (rundb_slice_at). The slices of a
 * correlation id are looked up in corr_ids, filled in order from the pairs
 * the writer kept as it drained the slices: an index on slice(corr) read
 * the 145 MB of tiled33's slice table back (0.10-0.14 s on the import's
 * path, where corr_ids takes ~0.05 s); it is built when the pairs were too
 * many to keep. */
static const char index_sql[] = "CREATE INDEX slice_corr ON slice(corr) WHERE corr != 0;";
static const char corr_sql[] =
    "CREATE TABLE corr_ids(corr INTEGER, id INTEGER, PRIMARY KEY(corr, id)) WITHOUT ROWID;";
#define CORR_ROW "(?,?)"
#define CORR_ROWS8 CORR_ROW "," CORR_ROW "," CORR_ROW "," CORR_ROW "," CORR_ROW "," CORR_ROW "," CORR_ROW "," CORR_ROW
#define CORR_INSERT "INSERT INTO corr_ids(corr, id) VALUES"
/* No index on slice(name) either: name_ids holds each name's ids, written
 * as the slices are numbered (store/nameids.h). Runs stored before have
 * slice_name(name, track, ts), which the readers use. */

/* The other tables' indexes exist from the start: their rows are inserted
 * in file order during the parse, when the writer's thread has time to
 * spare (30-60 % busy), so maintaining them there takes the 0.2 s their
 * builds took after the load off the import's path (tiled33: 182 k flows
 * and 120 k memory events). */
static const char early_index_sql[] =
    "CREATE INDEX flow_fid ON flow(rank, fid);"
    "CREATE INDEX flow_track_ts ON flow(track, ts);"
    "CREATE INDEX mem_rank_ts ON mem(rank, ts);"
    /* one device's memory totals in time order (the timeline's counters:
     * a host series is a few hundred samples among a GPU's hundred thousand) */
    "CREATE INDEX mem_dev_ts ON mem(rank, dev_type, dev_id, ts);"
    "CREATE INDEX instant_track_ts ON instant(track, ts);"
    "CREATE INDEX counter_rank_name_ts ON counter(rank, name, ts);";

int rundb_schema_create(sqlite3 *db, struct err *e)
{
    char *msg = NULL;
    if (sqlite3_exec(db, schema_sql, NULL, NULL, &msg) == SQLITE_OK &&
        sqlite3_exec(db, early_index_sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    err_set(e, ERR_DB, "cannot initialise the run database: %s", msg ? msg : "?");
    sqlite3_free(msg);
    return e->code;
}

static int cmp_corr(const void *a, const void *b)
{
    const struct rundb_corr *x = a, *y = b;
    if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* corr_ids from pairs (sorted here), 32 rows a statement. */
static int corr_fill(sqlite3 *db, struct rundb_corr *corr, size_t n, struct err *e)
{
    sqlite3_stmt *one = NULL, *many = NULL;
    double t0 = log_now_s();
    if (n) xqsort(corr, n, sizeof *corr, cmp_corr);
    int rc = sqlite3_exec(db, corr_sql, NULL, NULL, NULL) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, CORR_INSERT CORR_ROW, -1, &one, NULL) == SQLITE_OK &&
                     sqlite3_prepare_v2(db, CORR_INSERT CORR_ROWS8 "," CORR_ROWS8 "," CORR_ROWS8 "," CORR_ROWS8, -1,
                                        &many, NULL) == SQLITE_OK
                 ? 0
                 : -1;
    size_t i = 0;
    for (; rc == 0 && i + 32 <= n; i += 32) {
        for (int k = 0; k < 32; k++) {
            sqlite3_bind_int64(many, 2 * k + 1, corr[i + (size_t)k].corr);
            sqlite3_bind_int64(many, 2 * k + 2, corr[i + (size_t)k].id);
        }
        rc = sqlite3_step(many) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(many);
    }
    for (; rc == 0 && i < n; i++) {
        sqlite3_bind_int64(one, 1, corr[i].corr);
        sqlite3_bind_int64(one, 2, corr[i].id);
        rc = sqlite3_step(one) == SQLITE_DONE ? 0 : -1;
        sqlite3_reset(one);
    }
    if (rc) rundb_db_error(db, e, "cannot finish the run database");
    sqlite3_finalize(one);
    sqlite3_finalize(many);
    if (rc == 0) LOG_DEBUG("corr_ids: %zu slices took %.3f s", n, log_now_s() - t0);
    return rc ? e->code : 0;
}

int rundb_schema_finish(sqlite3 *db, int kept, struct rundb_corr *corr, size_t n, struct err *e)
{
    char ver[32];
    sqlite3_stmt *st;
    snprintf(ver, sizeof ver, "%d", RUNDB_SCHEMA_VERSION);
    if (sqlite3_prepare_v2(db, "INSERT INTO meta(key, value) VALUES('schema_version', ?)", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, ver, -1, SQLITE_STATIC);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    if (kept) return corr_fill(db, corr, n, e);
    /* one statement at a time, each timed: the build of the indexes is a
     * phase of every import (`--log-level debug` says where it goes) */
    for (const char *sql = index_sql; *sql;) {
        sqlite3_stmt *ix = NULL;
        double t0 = log_now_s();
        if (sqlite3_prepare_v2(db, sql, -1, &ix, &sql) != SQLITE_OK || (ix && sqlite3_step(ix) != SQLITE_DONE)) {
            sqlite3_finalize(ix);
            return rundb_db_error(db, e, "cannot finish the run database");
        }
        if (ix) LOG_DEBUG("%.40s took %.3f s", sqlite3_sql(ix), log_now_s() - t0);
        sqlite3_finalize(ix);
    }
    return 0;
}

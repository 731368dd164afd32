/* import_fuzz.h — shared by the importer fuzz targets (header only): the
 * invariants of a run database an import finished, checked by query; any
 * breach aborts, which the fuzzer (or the corpus replay) reports. */
#ifndef TB_IMPORT_FUZZ_H
#define TB_IMPORT_FUZZ_H

#include <sqlite3.h>
#include <stdlib.h>

#include "store/rundb.h"

/* The first column of the first row of sql (-1: no row); aborts on SQL errors. */
static inline long fuzz_q(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) abort();
    if (sqlite3_step(st) == SQLITE_ROW) v = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The run db at path against the rank's stats s: one row per slice,
 * instant, flow, counter sample and memory event counted (and the events
 * stored in the rank's stats); no slice with a negative duration; every
 * child on its parent's track, starting inside it, at another level (a
 * deeper one when it lies wholly inside); no two slices of one level
 * overlap. */
static inline void fuzz_check_run(const char *path, const struct tb_rank_stats *s)
{
    sqlite3 *db;
    struct err e;
    if (rundb_open_ro(path, &db, &e) != 0) abort();
    if (fuzz_q(db, "SELECT count(*) FROM slice") != (long)s->slices ||
        fuzz_q(db, "SELECT count(*) FROM flow") != (long)s->flows ||
        fuzz_q(db, "SELECT count(*) FROM instant") != (long)s->instants ||
        fuzz_q(db, "SELECT count(*) FROM counter") != (long)s->counters ||
        fuzz_q(db, "SELECT count(*) FROM mem") != (long)s->mems)
        abort();
    if (fuzz_q(db, "SELECT json_extract(stats,'$.events') FROM rank") != (long)s->events) abort();
    if (fuzz_q(db, "SELECT count(*) FROM slice WHERE dur < 0") != 0) abort();
    if (fuzz_q(db, "SELECT count(*) FROM slice c JOIN slice p ON p.id=c.parent WHERE p.track != c.track"
                   " OR c.depth = p.depth OR (c.depth < p.depth AND c.ts + c.dur <= p.ts + p.dur)"
                   " OR c.ts < p.ts OR c.ts >= p.ts + p.dur") != 0)
        abort();
    if (fuzz_q(db, "SELECT count(*) FROM (SELECT ts, lag(ts + dur) OVER (PARTITION BY track, depth ORDER BY ts, id)"
                   " AS pe FROM slice) WHERE pe > ts") != 0)
        abort();
    sqlite3_close(db);
}

#endif

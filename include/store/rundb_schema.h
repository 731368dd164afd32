/*
 * rundb_schema.h — the tables of one run's database and their indexes: the
 * slices' built after the bulk load, the others' kept from the start.
 *
 * Schema (times are integer nanoseconds on the rank's own trace clock, i.e.
 * the file's `ts` x 1000; rank.base_ns aligns ranks; names and categories are
 * ids into `str`):
 *   meta(key, value)                      run-level facts (schema version ...)
 *   rank(rank, file, bytes, format, base_ns, t0, t1, device, distributed,
 *        header, stats)                   one row per trace file
 *   str(id, s)                            interned strings
 *   track(id, rank, kind, pid, tid, name, device, stream, sort, max_depth,
 *         nslices)                        CPU thread or GPU stream lanes
 *   slice(id, track, ts, dur, depth, parent, name, cat, kind, corr, ext, args)
 *                                         ids follow (track, ts, -dur): the
 *                                         table is clustered for range scans
 *   flow(id, rank, cat, fid, ph, track, ts, bp)  flow endpoints, bound lazily
 *   instant(id, track, ts, name, cat, scope, args)
 *   counter(id, rank, name, pid, ts, value)
 *   mem(id, rank, ts, dev_type, dev_id, addr, bytes, total_alloc,
 *       total_reserved, track)            `[memory]` events
 *   note(rank, level, reason, count, example)  what ingest dropped/repaired
 *   corr_ids(corr, id)                    the slices with a correlation id,
 *                                         by it (a run stored before, or one
 *                                         with more of them than the
 *                                         writer's budget: index slice_corr
 *                                         on slice(corr) instead)
 *
 *
 * The numbers stored in slice.kind and track.kind are enum tb_kind and enum
 * tb_track_kind (store/model.h); SQL never spells them: readers bind them
 * (scan.h). Called by the writer only, on its own connection.
 */
#ifndef TB_RUNDB_SCHEMA_H
#define TB_RUNDB_SCHEMA_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Stamped into meta(schema_version) when a run is finished. */
#define RUNDB_SCHEMA_VERSION 1

/* Creates the empty tables on db (a new, empty file), with the indexes of
 * the tables filled in file order during the parse. An error is ERR_DB
 * "cannot initialise the run database: ...". */
int rundb_schema_create(sqlite3 *db, struct err *e);

/* A slice's correlation id and its id: the rows of corr_ids. */
struct rundb_corr {
    int64_t corr, id;
};

/* After the bulk load, inside its transaction: records the schema version
 * and builds the slices' lookups (cheaper once than row by row), one
 * statement each, logging each one's time at debug level: with kept,
 * corr_ids from the n pairs corr (sorted here; every slice with a
 * correlation id, as the writer kept them; corr may be NULL when n is 0),
 * else index slice_corr (the writer kept none: too many), which reads the
 * whole table. An error is rundb_db_error's "cannot finish the run
 * database". */
int rundb_schema_finish(sqlite3 *db, int kept, struct rundb_corr *corr, size_t n, struct err *e);

#endif

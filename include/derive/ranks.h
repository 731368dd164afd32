/*
 * ranks.h — the cross-rank comparison of a multi-rank run (the Ranks page):
 * read from a run's stored tables (rank, step, kernel_stat, finding, and
 * the communication slices), never from the trace files.
 *
 * Owns no state and no tables: ranks_build() reads through the caller's
 * read-only handle and returns one JSON document (shape in README.md, HTTP
 * API, /api/runs/{id}/ranks):
 *   - per rank: file, clock alignment (Kineto's baseTimeNanoseconds), the
 *     average step breakdown, communication / compute / overlap per step;
 *   - a rank x step heat map (steps matched by name across ranks, by
 *     position when no name is common to every rank);
 *   - the collectives table: instances matched across ranks by order within
 *     (collective, process group); transfer = the shortest rank's duration
 *     of an instance, waiting = a rank's duration minus it;
 *   - the top kernels with their per-rank time and min/median/max spread;
 *   - the stored `straggler` finding plus per-step evidence.
 *
 * Invariants: wait + transfer = duration for every matched instance; an
 * instance found on one rank only is unmatched (no wait, no transfer), so
 * unequal operator counts never misalign more than the tail. Memory is
 * bounded: at most RANKS_MAX_INSTANCES collective instances over all ranks
 * are kept (the answer says when it stopped), steps per rank as stored,
 * compute kernels streamed in time order. Callable from any thread with
 * its own handle. OUT JSON is owned by the caller.
 */
#ifndef TB_RANKS_H
#define TB_RANKS_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* Collective instances kept over all ranks (about 48 bytes each). */
#define RANKS_MAX_INSTANCES 262144
/* Heat-map columns (steps) kept. */
#define RANKS_MAX_STEPS 1000

/* Builds the comparison of every rank of db (an open handle on a run with
 * the analysis tables), with the top_n kernels (1..100).
 * Errors: ERR_CONFLICT when db predates the analysis tables, ERR_DB.
 * OUT *out: owned by caller. */
int ranks_build(sqlite3 *db, int top_n, json_t **out, struct err *e);

#endif

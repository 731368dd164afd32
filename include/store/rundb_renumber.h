/*
 * rundb_renumber.h — moving the ranks of a run: by what each trace file says
 * it is (after ingest), or as a user asks (PATCH of a run's ranks, on a copy
 * of run.db that is swapped in afterwards).
 *
 * Only the raw tables carry ranks the renumbering moves (rank, track, flow,
 * counter, mem, note); the derived tables are the caller's to rebuild. The
 * handle is read-write and used by one thread; each call is one
 * transaction, so a failure leaves the numbering as it was.
 */
#ifndef TB_RUNDB_RENUMBER_H
#define TB_RUNDB_RENUMBER_H

#include <sqlite3.h>

#include "base/err.h"

/* Renumbers the ranks of a finished multi-file run by the rank each trace
 * says it is (distributedInfo.rank), when every file says one and no two
 * say the same; otherwise leaves the numbering (from file names, else the
 * order of the files) alone. Only the raw tables exist at that point
 * (rank, track, flow, counter, mem, note): call it before the analyses.
 * OUT map[i]: the new rank of old rank i, for i < n (n = number of ranks;
 * old ranks are 0..n-1 as ingest assigns them); *changed: 1 if any moved.
 * db: read-write handle. */
int rundb_ranks_from_headers(sqlite3 *db, int *map, int n, int *changed, struct err *e);

/* Moves rank from[i] to to[i] (i < n) in the raw tables (rank, track, flow,
 * counter, mem, note) in one transaction; the to[] must be distinct and
 * >= 0, and every rank of the run must be in from[]. Derived tables are the
 * caller's to rebuild. */
int rundb_renumber_ranks(sqlite3 *db, const int *from, const int *to, int n, struct err *e);

#endif

/*
 * rundb_stage.h — which derived stages of a run are done: the table
 * derive_stage of run.db, so that a run can be served while it derives.
 *
 * A run becomes visible once its raw tables are committed; its derived
 * stages (summary, analyses, rules, timeline) then fill in. Each stage
 * commits its tables in its own transaction(s) and only after that is
 * marked "done" here, in a later transaction: a reader that sees "done"
 * sees every table of the stage, and a reader that does not is answered
 * ERR_COMPUTING (rundb_stage_check) instead of reading half a stage.
 * A run.db without the table was derived whole before it was published
 * (older runs, renumbered copies swapped in): every stage counts as done.
 *
 * The writer (one ingest thread, read-write handle) calls begin and mark;
 * readers (any thread, their own read-only handle) check and list. Strings
 * passed in are copied by SQLite; json_t * returned are owned by the caller.
 */
#ifndef TB_RUNDB_STAGE_H
#define TB_RUNDB_STAGE_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* Creates (or resets) the table with names[0..n-1] pending, in that order,
 * in one transaction. */
int rundb_stage_begin(sqlite3 *db, const char *const *names, int n, struct err *e);

/* Sets stage name's state ("running" or "done") and, for "done", the
 * seconds it took. ERR_NOT_FOUND for a name begin did not list. */
int rundb_stage_mark(sqlite3 *db, const char *name, const char *state, double took, struct err *e);

/* 0 when stage name is done (or the run has no stage table), else
 * ERR_COMPUTING with a message naming the stage and how many are done. */
int rundb_stage_check(sqlite3 *db, const char *name, struct err *e);

/* OUT *out: [{name, state, seconds}] in order, or JSON null for a run
 * without the table. */
int rundb_stage_json(sqlite3 *db, json_t **out, struct err *e);

#endif

/*
 * rank_read.h — the store's read layer for the cross-rank comparison (the
 * Ranks page, derive/ranks.c): the ranks of a run with the slice id range
 * of each, the steps the summary stage stored per rank, and the kernels
 * with the most time over all ranks, each kernel's time and calls per
 * rank. Every statement is fixed, with its numbers and names bound.
 *
 * Every function returns 0 (or 1 for a row, 0 at the end) and < 0 (an enum
 * err_code, e filled by rundb_db_error: a missing table names it) on an
 * error, so a caller never takes a failed query for "no rows".
 * Memory: the rank array belongs to the caller (rank_read_ranks_free);
 * cursors to their caller (..._close), borrowing the connection, which
 * must outlive them and be used by one thread at a time. A cursor's text
 * is borrowed until its next step.
 */
#ifndef TB_RANK_READ_H
#define TB_RANK_READ_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* The breakdown columns of a step row, in summary_categories order. */
#define RANK_READ_NPARTS 8

/* One rank of the run. lo > hi when it has no slices. */
struct rank_read_rank {
    int rank;
    char *file, *format, *dist; /* owned by the array; NULL for a NULL column */
    int64_t base_ns, t0, t1;
    int64_t lo, hi;
};

/* Every rank, in rank order. OUT *out: owned by caller (rank_read_ranks_free). */
int rank_read_ranks(sqlite3 *db, struct rank_read_rank **out, size_t *n, struct err *e);
void rank_read_ranks_free(struct rank_read_rank *r, size_t n);

/* One stored step; name borrowed until the next step ("" for NULL). */
struct rank_read_step {
    int rank;
    const char *name;
    int64_t ts, dur;
    int64_t part[RANK_READ_NPARTS];
};

/* A walk over every rank's steps, in (rank, index) order. */
struct rank_read_steps;
int rank_read_steps_open(sqlite3 *db, struct rank_read_steps **out, struct err *e);
int rank_read_steps_next(struct rank_read_steps *c, struct rank_read_step *row, struct err *e);
void rank_read_steps_close(struct rank_read_steps *c);

/* A walk over the top_n kernel names by time over all ranks, most first
 * (rank_read_kernels_next: *name NULL for a NULL name, *comm 1 when any row
 * flags it a collective), and for the current kernel its time and calls
 * per rank (rank_read_kernel_ranks_next, ranks absent that never ran it). */
struct rank_read_kernels;
int rank_read_kernels_open(sqlite3 *db, int top_n, struct rank_read_kernels **out, struct err *e);
int rank_read_kernels_next(struct rank_read_kernels *c, const char **name, int64_t *total, int *comm, struct err *e);
int rank_read_kernel_ranks_next(struct rank_read_kernels *c, int *rank, int64_t *total, int64_t *calls,
                                struct err *e);
void rank_read_kernels_close(struct rank_read_kernels *c);

#endif

/*
 * comm_read.h — the store's read layer for the collectives of the
 * cross-rank comparison (derive/ranks_comm.c): a scan of one rank's slices
 * that may be collectives (kernels, host ops and annotations, with their
 * args, where Kineto writes the message facts), and the walk from a
 * collective kernel up its launching runtime call to the ops around it.
 * Kinds and track kinds are bound as parameters, never written in the SQL;
 * the names of collectives are stats_read_comm_names_open's.
 *
 * Every step returns 1 for a row, 0 at the end (or when nothing matches)
 * and < 0 (an enum err_code, e filled by rundb_db_error) on an error, so a
 * scan never takes a database error for the end of the rows.
 * Memory: cursors belong to their caller (..._close); they borrow the
 * connection, which must outlive them and be used by one thread at a
 * time. Text (args) is borrowed until the cursor's next call.
 */
#ifndef TB_COMM_READ_H
#define TB_COMM_READ_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"

/* One slice that may be a collective. */
struct comm_read_slice {
    int64_t ts, dur, corr;
    uint32_t name;    /* str id */
    int kernel;       /* a GPU kernel; else a host op or annotation */
    int on_cpu;       /* on a CPU thread of the rank (not a GPU-side copy) */
    const char *args; /* borrowed; NULL when none */
};

/* A scan of the kernels, CPU ops and user annotations with slice ids in
 * [lo, hi] (one rank's range), in id order; rank tells its CPU threads. */
struct comm_read_scan;
int comm_read_scan_open(sqlite3 *db, int rank, int64_t lo, int64_t hi, struct comm_read_scan **out, struct err *e);
int comm_read_scan_next(struct comm_read_scan *c, struct comm_read_slice *row, struct err *e);
void comm_read_scan_close(struct comm_read_scan *c);

/* Point lookups from a kernel to the host calls above its launch, prepared
 * once. */
struct comm_read_launch;
int comm_read_launch_open(sqlite3 *db, struct comm_read_launch **out, struct err *e);
/* OUT *parent: the parent slice of a runtime or driver call with
 * correlation id corr (0 never matches) and slice id in [lo, hi]: 1, 0
 * when there is none. */
int comm_read_launch_parent(struct comm_read_launch *l, int64_t corr, int64_t lo, int64_t hi, int64_t *parent,
                            struct err *e);
/* The slice id: OUT *name (str id), *args (borrowed until the next call
 * or comm_read_launch_release; NULL when none) and *parent: 1, 0 when
 * there is no such slice. */
int comm_read_launch_slice(struct comm_read_launch *l, int64_t id, uint32_t *name, const char **args,
                           int64_t *parent, struct err *e);
/* Ends the last lookup's read, so that no statement stays active. */
void comm_read_launch_release(struct comm_read_launch *l);
void comm_read_launch_close(struct comm_read_launch *l);

#endif

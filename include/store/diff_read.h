/*
 * diff_read.h — the store's read layer for comparing two runs or two ranks
 * (derive/diff.c): one connection on run A with run B attached, the
 * figures of one side (ranks, steps, the step averages, the busiest GPU,
 * kernel time, the stored summary) and the table of kernels or operators
 * of A against B, grouped, filtered, sorted and paged in SQL.
 *
 * A side is 0 (A, schema main) or 1 (B, schema bdb); each side has its own
 * fixed statements. The table statement is put together from fixed
 * fragments chosen by the query (kernels or operators, by name or by
 * tb_kfamily(name), the time column, a sort key from a fixed list); every
 * value (ranks, divisors, threshold, filter, page) is bound. tb_kfamily is
 * the caller's SQL function, registered on the connection before a table
 * by family is read.
 *
 * Every function returns 0 (or 1 for a row, 0 when none or at the end) and
 * < 0 (an enum err_code, e filled) on an error. Memory: the connection and
 * cursors belong to the caller (sqlite3_close, ..._close); text of a
 * cursor row is borrowed until its next step; strings of a filled struct
 * are owned by the caller. Threads: one at a time on a connection.
 */
#ifndef TB_DIFF_READ_H
#define TB_DIFF_READ_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Opens db_a read-only with db_b attached (both checked for damage first).
 * Errors: rundb_open_ro's; ERR_NOT_FOUND when B cannot be attached.
 * OUT *out: owned by caller (sqlite3_close), NULL on failure. */
int diff_read_open(const char *db_a, const char *db_b, sqlite3 **out, struct err *e);

/* 1 when side s has the step table (analysis ran), 0 when not. */
int diff_read_has_steps(sqlite3 *db, int s, struct err *e);
/* OUT *out: every rank of side s, in order (caller frees). */
int diff_read_ranks(sqlite3 *db, int s, int **out, size_t *n, struct err *e);
/* OUT *n: the steps of rank on side s. */
int diff_read_step_count(sqlite3 *db, int s, int rank, int64_t *n, struct err *e);
/* 1 when an operator of rank on side s has device time, else 0. */
int diff_read_op_device(sqlite3 *db, int s, int rank, struct err *e);
/* OUT v[9]: the average step duration, then the 8 breakdown parts (in
 * summary_categories order), ns: 1, 0 when there is no row. */
int diff_read_step_avg(sqlite3 *db, int s, int rank, double v[9], struct err *e);

/* The GPU of a rank with the most kernel time. A NULL column: its bit in
 * nulls (1 << column: 0 name, 1 memory, 2 cc, 3 util, 4 sm_eff, 5 tc). */
struct diff_read_gpu {
    char *name, *cc; /* owned; NULL for NULL */
    int64_t memory_bytes;
    double share[3]; /* utilization, SM efficiency, tensor-core share */
    unsigned nulls;
};
/* 1 (g filled; free g->name and g->cc), 0 when the rank has no GPU row. */
int diff_read_gpu(sqlite3 *db, int s, int rank, struct diff_read_gpu *g, struct err *e);
/* OUT *ns: the kernel time of rank on side s (0 when none). */
int diff_read_kernel_ns(sqlite3 *db, int s, int rank, int64_t *ns, struct err *e);
/* OUT *json: the stored summary document of rank on side s, owned by the
 * caller; NULL when none. */
int diff_read_summary(sqlite3 *db, int s, int rank, char **json, struct err *e);

/* Sort keys, in the order of diff_sort_names. */
#define DIFF_READ_NSORT 9

/* A table of A against B; status numbers are enum diff_status's order
 * (added, removed, faster, slower, same). */
struct diff_read_q {
    int kernels;       /* kernel_stat; else op_stat */
    int family;        /* kernels: grouped by tb_kfamily(name) */
    int op_device;     /* operators: device self time; else host self */
    int ra, rb;        /* the ranks compared */
    double diva, divb; /* each side's times and calls are divided by it */
    double thr, minabs; /* a change is one over thr (share) and minabs (ns) */
    const char *like;  /* a LIKE pattern with '\' escapes over names; NULL: all */
    int64_t mask;      /* statuses kept (bit per status) */
    int sort, desc;    /* 0 .. DIFF_READ_NSORT - 1 */
    int64_t limit, offset; /* limit < 0: no limit */
};
/* OUT c[nstatus]: the rows per status (filter applied, mask not). */
int diff_read_counts(sqlite3 *db, const struct diff_read_q *q, int64_t *c, int nstatus, struct err *e);

/* One row: a NULL number (a side without the name, a ratio without both
 * sides) has its bit in nulls (1 << its index in v). */
enum { DIFF_READ_A_CALLS, DIFF_READ_B_CALLS, DIFF_READ_A_T, DIFF_READ_B_T, DIFF_READ_DELTA, DIFF_READ_RATIO,
       DIFF_READ_NUMS };
struct diff_read_row {
    const char *name; /* borrowed */
    double v[DIFF_READ_NUMS]; /* by the enum above; times in ns */
    unsigned nulls;
    int status, tc;
};
struct diff_read_rows;
int diff_read_rows_open(sqlite3 *db, const struct diff_read_q *q, struct diff_read_rows **out, struct err *e);
int diff_read_rows_next(struct diff_read_rows *c, struct diff_read_row *row, struct err *e);
void diff_read_rows_close(struct diff_read_rows *c);

#endif

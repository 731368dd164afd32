/*
 * stats_read.h — the store's read layer over the per-rank statistics the
 * derive stage writes (kernel_stat, op_stat) and the memory tables (mem,
 * mem_alloc), for the rules: sums and groupings a rule weighs, each one
 * fixed statement with the rank, device and times bound, never spelled in
 * the SQL. Which kernel names mean what (layout conversions, attention)
 * is a LIKE over kernel and operator names, kept here beside its query.
 *
 * Every function returns 0 (or 1 / 0 where a row may be missing) and < 0
 * (an enum err_code, e filled by rundb_db_error: a missing table names it)
 * on an error, so a rule never takes a failed query for "nothing found".
 * Memory: group arrays belong to the caller (stats_read_groups_free); a
 * names cursor to its caller (stats_read_names_close), borrowing the
 * connection, which must outlive it and be used by one thread at a time.
 */
#ifndef TB_STATS_READ_H
#define TB_STATS_READ_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"

/* mem.dev_type and mem_alloc.dev_type of a CUDA device, as Kineto writes it. */
#define STATS_DEV_CUDA 1

/* One group of a GROUP BY: its key's id and name (NULL: none), a sum and a
 * count. */
struct stats_read_group {
    int64_t id;
    char *name;
    double total;
    int64_t count;
};
void stats_read_groups_free(struct stats_read_group *g, size_t n);

/* The collective kernel of rank with the most time: OUT name (into a
 * buffer of n; "" when the rank has none), calls and total ns. */
int stats_read_top_comm_kernel(sqlite3 *db, int rank, char *name, size_t n, long long *calls, double *total,
                               struct err *e);

/* OUT *calls, *total: the collective kernels of rank, all together (0 when
 * none). */
int stats_read_comm_totals(sqlite3 *db, int rank, double *calls, double *total, struct err *e);

/* Whether rank ran a collective kernel: 1 yes, 0 no, < 0 on an error. */
int stats_read_has_comm_kernel(sqlite3 *db, int rank, struct err *e);

/* The NCHW <-> NHWC conversion kernels of rank against all its kernels. */
struct stats_read_transposes {
    double kernel_ns;    /* every kernel */
    double transpose_ns; /* conversions either way */
    double back_ns;      /* NHWC -> NCHW conversions */
    int64_t calls;       /* conversions */
};
/* 1 (t filled), 0 when rank has no kernel_stat row, < 0 on an error. */
int stats_read_transposes(sqlite3 *db, int rank, struct stats_read_transposes *t, struct err *e);
/* The operators around the conversions, most time first, at most 3 (name
 * "(no operator)" for kernels outside any). OUT *out: owned by caller. */
int stats_read_transposes_by_op(sqlite3 *db, int rank, struct stats_read_group **out, size_t *n, struct err *e);

/* Attention done by hand against fused attention kernels, among the
 * compute (not collective) kernels of rank. */
struct stats_read_attention {
    double kernel_ns, softmax_ns, bmm_ns, fused_ns;
    int64_t softmax_calls, bmm_calls;
};
/* 1 (a filled), 0 when rank has no compute kernel row, < 0 on an error. */
int stats_read_attention(sqlite3 *db, int rank, struct stats_read_attention *a, struct err *e);

/* Device time of rank's tensor-core-eligible operators (OUT *ns), the part
 * of it on tensor cores (*tc_ns) and the operator with the most (top, a
 * buffer of n; "" when none). */
int stats_read_amp_eligible(sqlite3 *db, int rank, double *ns, double *tc_ns, char *top, size_t n, struct err *e);

/* A walk over the names (str) of collective kernels and of spans that may
 * be collectives (a ':' in their first 6 bytes, as nccl:all_reduce), in id
 * order: 1 (OUT *id, *s borrowed until the next call, *kernel 1 for a
 * kernel kernel_stat flags as a collective), 0 at the end, < 0 on an
 * error. */
struct stats_read_names;
int stats_read_comm_names_open(sqlite3 *db, struct stats_read_names **out, struct err *e);
/* The same with record_param_comms too, the op that carries a collective's
 * message facts (for the Ranks page, derive/ranks_comm.c). */
int stats_read_comm_names_rpc_open(sqlite3 *db, struct stats_read_names **out, struct err *e);
int stats_read_comm_names_next(struct stats_read_names *c, uint32_t *id, const char **s, int *kernel, struct err *e);
void stats_read_names_close(struct stats_read_names *c);

/* OUT *v: memory allocated on CUDA device dev of rank just before the
 * first mem sample at or after ts with a total; -1 when there is none. */
int stats_read_alloc_at(sqlite3 *db, int rank, int dev, int64_t ts, int64_t *v, struct err *e);

/* Tensors on CUDA device dev of rank allocated at or before ts and not
 * freed by then, by allocating operator (id 0 / name NULL: none), most
 * bytes first (total: bytes, count: tensors). OUT *out: owned by caller. */
int stats_read_live_at(sqlite3 *db, int rank, int dev, int64_t ts, struct stats_read_group **out, size_t *n,
                       struct err *e);

/* Tensors on CUDA device dev of rank allocated in [a0, a1) and alive at
 * end (not freed before it), by allocating operator, most bytes first, at
 * most 3. OUT *out: owned by caller. */
int stats_read_kept(sqlite3 *db, int rank, int dev, int64_t a0, int64_t a1, int64_t end, struct stats_read_group **out,
                    size_t *n, struct err *e);

#endif

/*
 * diff.h — comparing two runs (or two ranks of one run): "A" is the
 * baseline, "B" the changed run. Reads the analysis tables of both run
 * databases (step, gpu, op_stat, kernel_stat, analysis; written at ingest by
 * server/derive/summary.c) and never writes.
 *
 * Owns one read-only SQLite connection per struct diff: A's run.db is the
 * main schema and B's is ATTACHed as schema `bdb` (the same file twice when
 * two ranks of one run are compared), so each comparison is one SQL
 * statement whose memory is SQLite's (sorts and groups spill to temporary
 * files): nothing here grows with the number of operators or kernels except
 * the JSON page asked for.
 *
 * Invariants:
 *   - no request text reaches SQL text: values (ranks, divisors, threshold,
 *     status mask, LIKE pattern, limit/offset) are bound parameters, and
 *     sort, kind, grouping and metric pick fixed fragments from tables in
 *     the store's reader (store/diff_read.h), which holds every statement;
 *   - rows are joined by name (kernels optionally by diff_kernel_family(),
 *     registered on the connection as the SQL function tb_kfamily); a row is
 *     `added` (only in B), `removed` (only in A), `faster` / `slower` (time
 *     changed by more than the threshold, relative, and by at least 1 µs per
 *     unit), or `same`;
 *   - per=step (the default) divides counts and times by each side's number
 *     of steps, so runs profiled over different step counts compare fairly;
 *     a side without steps divides by 1;
 *   - the speedup is A's average step over B's (> 1: B is faster).
 *
 * A struct diff is used by one thread at a time (any thread); every json_t
 * returned is a new reference owned by the caller.
 */
#ifndef TB_DIFF_H
#define TB_DIFF_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

struct diff;

enum diff_kind { DIFF_OPERATORS, DIFF_KERNELS };

/* Row statuses; bit (1u << status) in a status mask. */
enum diff_status { DIFF_ADDED, DIFF_REMOVED, DIFF_FASTER, DIFF_SLOWER, DIFF_SAME, DIFF_NSTATUS };

/* "added", "removed", "faster", "slower", "same" (static). */
extern const char *const diff_status_names[DIFF_NSTATUS];

/* Sort keys of diff_table, in the order of diff_sort_names (static):
 * change (|delta|), delta, ratio, name, a_time, b_time, a_calls, b_calls,
 * status. */
#define DIFF_NSORT 9
extern const char *const diff_sort_names[DIFF_NSORT];

#define DIFF_THRESHOLD_DEFAULT 0.05 /* 5 % */

/* One table request. */
struct diff_query {
    enum diff_kind kind;
    int family;           /* kernels only: join by diff_kernel_family(name) */
    int per_step;         /* 1: figures per step; 0: totals of the trace */
    double threshold;     /* relative change that counts, e.g. 0.05 */
    unsigned status_mask; /* statuses kept; 0 = all */
    const char *q;        /* case-insensitive name substring, or NULL */
    int sort;             /* index into diff_sort_names */
    int desc;             /* 1: descending */
    long long offset;     /* rows skipped */
    long long limit;      /* rows returned; < 0: every row */
};

/* Opens A's and B's run databases read-only. rank_a / rank_b: a rank of
 * each, or -1 for its lowest. ERR_NOT_FOUND (a database cannot be opened,
 * or has no such rank), ERR_CONFLICT (a run without analysis tables).
 * OUT *out: owned by caller, release with diff_close (also after errors:
 * *out is NULL then). */
int diff_open(const char *db_a, int rank_a, const char *db_b, int rank_b, struct diff **out, struct err *e);

/* Closes the connection and frees d (NULL is fine). */
void diff_close(struct diff *d);

/* The rank compared on side 0 (A) or 1 (B). */
int diff_rank(const struct diff *d, int side);

/* Both sides' overview and the deltas:
 * {a: SIDE, b: SIDE, categories: [..8], speedup, threshold,
 *  delta: {dur_us, breakdown_us: {cat: B-A}, kernel_us, gpu_utilization,
 *          tensor_core_share},
 *  kernels: COUNTS, kernel_families: COUNTS, operators: COUNTS}
 * SIDE = {rank, ranks: [..], steps, device: {name, memory_bytes,
 *   compute_capability} | null, average: {dur_us, breakdown_us: {cat}},
 *   kernel_us (per step), gpu_utilization, sm_efficiency,
 *   tensor_core_share, peak_memory_bytes} (null where unknown);
 * COUNTS = {added, removed, faster, slower, same} (per-step join by name).
 * speedup is null when B has no steps. OUT *out: owned by caller. */
int diff_overview(struct diff *d, double threshold, json_t **out, struct err *e);

/* One run's SIDE of diff_overview on its own (the N-way comparison reads
 * one per run): db is the run.db path, rank a rank or -1 for its lowest.
 * Errors as diff_open. OUT *out: owned by caller. */
int diff_side(const char *db, int rank, json_t **out, struct err *e);

/* One page of the operator or kernel comparison:
 * {kind, group: "name"|"family", per: "step"|"total", metric:
 *  "device_self"|"host_self"|"kernel", threshold, counts: COUNTS (q applied,
 *  status filter not), total (rows matching both), offset, limit, sort,
 *  order, rows: [{name, a_calls, b_calls, a_us, b_us, delta_us, ratio,
 *  status, tensor_cores (kernels: some kernel of the row runs on tensor
 *  cores, on either side)}]}; a side's calls and time are null
 *  where the name is absent there; ratio = b_us / a_us (null unless both
 *  > 0). Operators are timed by device self time when either run has
 *  device time, else by host self time. OUT *out: owned by caller. */
int diff_table(struct diff *d, const struct diff_query *q, json_t **out, struct err *e);

/* What `traceboard diff --json` prints: diff_overview plus
 * top_kernels and top_operators (the top_n rows by |delta|, per step).
 * OUT *out: owned by caller. */
int diff_report(struct diff *d, int top_n, json_t **out, struct err *e);

/* Parses a comma-separated status list ("added,slower") into a mask.
 * ERR_INVALID naming parameter `name` on an unknown word. */
int diff_parse_status(const char *list, const char *name, unsigned *mask, struct err *e);

/* Index of s in diff_sort_names, or ERR_INVALID naming parameter `name`. */
int diff_parse_sort(const char *s, const char *name, int *out, struct err *e);

/* The family of a kernel name: "GEMM", "GEMV", "convolution",
 * "attention", "NCCL <collective>", "softmax", "layer norm", ... or the
 * name without return type, namespaces and template/argument lists
 * ("void at::native::foo<...>(...)" -> "foo"). Owned by caller. */
char *diff_kernel_family(const char *name);

/* Registers diff_kernel_family() on db as the SQL function tb_kfamily(name)
 * (the kernels table's family column and filter use it too). */
void diff_register_kfamily(sqlite3 *db);

#endif

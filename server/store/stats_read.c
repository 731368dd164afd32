#include "store/stats_read.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/xmalloc.h"
#include "store/rundb.h"
#include "store/scan.h"

#define TRANSPOSE_WHERE                                                                                     \
    "(name LIKE '%nchwToNhwc%' OR name LIKE '%nhwcToNchw%' OR name LIKE '%nchw2nhwc%'"                     \
    " OR name LIKE '%nhwc2nchw%')"
#define SOFTMAX_OPS "('aten::_softmax', 'aten::softmax', 'aten::_masked_softmax', 'aten::_safe_softmax')"
#define BMM_OPS "('aten::bmm', 'aten::baddbmm')"
#define FUSED_WHERE                                                                                         \
    "(op LIKE '%scaled_dot_product%' OR op LIKE '%flash_attention%' OR op LIKE '%efficient_attention%'"     \
    " OR op LIKE '%cudnn_attention%' OR name LIKE '%fmha%' OR name LIKE '%flash%' OR name LIKE '%attn_fwd%')"

/* The statements, each with the rank as ?1; what follows it is bound in
 * the order the function names. */
enum q { Q_TOP_COMM, Q_COMM_TOTALS, Q_HAS_COMM, Q_TRANSPOSES, Q_TRANSPOSES_BY_OP, Q_ATTENTION, Q_AMP, Q_ALLOC_AT,
         Q_LIVE_AT, Q_KEPT, Q_N };

static const struct {
    const char *sql, *what;
} queries[Q_N] = {
    [Q_TOP_COMM] = { "SELECT name, sum(calls), sum(total) FROM kernel_stat WHERE rank = ?1 AND comm"
                     " GROUP BY name ORDER BY sum(total) DESC LIMIT 1",
                     "communication_heavy (kernels)" },
    [Q_COMM_TOTALS] = { "SELECT sum(calls), sum(total) FROM kernel_stat WHERE rank = ?1 AND comm",
                        "many_small_collectives" },
    [Q_HAS_COMM] = { "SELECT EXISTS(SELECT 1 FROM kernel_stat WHERE rank = ?1 AND comm)", "rules (probe)" },
    /* every kernel of the rank: comm kernels are not compute but still GPU
     * time the conversions are measured against */
    [Q_TRANSPOSES] = { "SELECT sum(total), sum(CASE WHEN " TRANSPOSE_WHERE " THEN total ELSE 0 END),"
                       " sum(CASE WHEN name LIKE '%nhwcToNchw%' OR name LIKE '%nhwc2nchw%' THEN total ELSE 0 END),"
                       " sum(CASE WHEN " TRANSPOSE_WHERE " THEN calls ELSE 0 END)"
                       " FROM kernel_stat WHERE rank = ?1",
                       "layout_transposes" },
    [Q_TRANSPOSES_BY_OP] = { "SELECT 0, CASE WHEN op = '' THEN '(no operator)' ELSE op END, sum(total), sum(calls)"
                             " FROM kernel_stat WHERE rank = ?1 AND " TRANSPOSE_WHERE
                             " GROUP BY 2 ORDER BY 3 DESC LIMIT 3",
                             "layout_transposes" },
    [Q_ATTENTION] = { "SELECT sum(total), sum(CASE WHEN op IN " SOFTMAX_OPS " THEN total ELSE 0 END),"
                      " sum(CASE WHEN op IN " BMM_OPS " THEN total ELSE 0 END),"
                      " sum(CASE WHEN " FUSED_WHERE " THEN total ELSE 0 END),"
                      " sum(CASE WHEN op IN " SOFTMAX_OPS " THEN calls ELSE 0 END),"
                      " sum(CASE WHEN op IN " BMM_OPS " THEN calls ELSE 0 END)"
                      " FROM kernel_stat WHERE rank = ?1 AND NOT comm",
                      "unfused_attention" },
    [Q_AMP] = { "SELECT name, sum(dev_self), sum(tc_self) FROM op_stat WHERE rank = ?1 AND tc_eligible"
                " GROUP BY name ORDER BY sum(dev_self) DESC",
                "enable_amp" },
    /* ?2 device, ?3 time, ?4 the CUDA device type */
    [Q_ALLOC_AT] = { "SELECT total_alloc, bytes FROM mem WHERE rank = ?1 AND ts >= ?3 AND dev_type = ?4"
                     " AND dev_id = ?2 AND total_alloc >= 0 ORDER BY ts, id LIMIT 1",
                     "memory_growth (samples)" },
    [Q_LIVE_AT] = { "SELECT a.op, (SELECT s FROM str WHERE id = a.op), sum(a.bytes), count(*) FROM mem_alloc a"
                    " WHERE a.rank = ?1 AND a.dev_type = ?4 AND a.dev_id = ?2 AND a.alloc_ts <= ?3"
                    " AND (a.free_ts IS NULL OR a.free_ts > ?3) AND a.bytes > 0"
                    " GROUP BY a.op ORDER BY 3 DESC",
                    "memory_near_limit" },
    /* ?2 device, ?3 and ?4 the window of allocation, ?5 its end, ?6 CUDA */
    [Q_KEPT] = { "SELECT a.op, (SELECT s FROM str WHERE id = a.op), sum(a.bytes), count(*) FROM mem_alloc a"
                 " WHERE a.rank = ?1 AND a.dev_type = ?6 AND a.dev_id = ?2 AND a.alloc_ts >= ?3"
                 " AND a.alloc_ts < ?4 AND (a.free_ts IS NULL OR a.free_ts >= ?5) AND a.bytes > 0"
                 " GROUP BY a.op ORDER BY 3 DESC LIMIT 3",
                 "memory_growth (kept tensors)" },
};

static int open_q(sqlite3 *db, enum q q, const int64_t *args, size_t n, sqlite3_stmt **st, struct err *e)
{
    return scan_prepare_args(db, queries[q].sql, args, n, st, e);
}

/* The first row of q over rank as n numbers: 1, 0 when none (v zeroed),
 * < 0 on an error. */
static int nums(sqlite3 *db, enum q q, int rank, double *v, int n, struct err *e)
{
    sqlite3_stmt *st;
    const int64_t arg = rank;
    int rc = open_q(db, q, &arg, 1, &st, e);
    for (int i = 0; rc && i < n; i++) v[i] = 0;
    return rc ? rc : scan_row_nums(st, queries[q].what, v, n, e);
}

static void group_drop(void *elem)
{
    free(((struct stats_read_group *)elem)->name);
}

void stats_read_groups_free(struct stats_read_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++) group_drop(&g[i]);
    free(g);
}

static void group_fill(sqlite3_stmt *st, void *elem)
{
    struct stats_read_group *g = elem;
    const char *s = (const char *)sqlite3_column_text(st, 1);
    g->id = sqlite3_column_int64(st, 0);
    g->name = s ? xstrdup(s) : NULL;
    g->total = sqlite3_column_double(st, 2);
    g->count = sqlite3_column_int64(st, 3);
}

/* The rows (id, name, total, count) of q over args. */
static int groups(sqlite3 *db, enum q q, const int64_t *args, size_t nargs, struct stats_read_group **out, size_t *n,
                  struct err *e)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = open_q(db, q, args, nargs, &st, e);
    if (rc) return rc;
    return scan_collect(st, queries[q].what, sizeof **out, group_fill, group_drop, (void **)out, n, e);
}

int stats_read_top_comm_kernel(sqlite3 *db, int rank, char *name, size_t n, long long *calls, double *total,
                               struct err *e)
{
    sqlite3_stmt *st;
    const int64_t arg = rank;
    name[0] = '\0';
    *calls = 0;
    *total = 0;
    int rc = open_q(db, Q_TOP_COMM, &arg, 1, &st, e);
    if (rc) return rc;
    if ((rc = scan_step(st, e, queries[Q_TOP_COMM].what)) == 1 && sqlite3_column_text(st, 0)) {
        snprintf(name, n, "%s", (const char *)sqlite3_column_text(st, 0));
        *calls = sqlite3_column_int64(st, 1);
        *total = sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

int stats_read_comm_totals(sqlite3 *db, int rank, double *calls, double *total, struct err *e)
{
    double v[2];
    int rc = nums(db, Q_COMM_TOTALS, rank, v, 2, e);
    *calls = v[0];
    *total = v[1];
    return rc < 0 ? rc : 0;
}

int stats_read_has_comm_kernel(sqlite3 *db, int rank, struct err *e)
{
    double yes;
    int rc = nums(db, Q_HAS_COMM, rank, &yes, 1, e);
    return rc < 0 ? rc : yes != 0;
}

int stats_read_transposes(sqlite3 *db, int rank, struct stats_read_transposes *t, struct err *e)
{
    double v[4];
    int rc = nums(db, Q_TRANSPOSES, rank, v, 4, e);
    *t = (struct stats_read_transposes){ v[0], v[1], v[2], (int64_t)v[3] };
    return rc;
}

int stats_read_transposes_by_op(sqlite3 *db, int rank, struct stats_read_group **out, size_t *n, struct err *e)
{
    const int64_t arg = rank;
    return groups(db, Q_TRANSPOSES_BY_OP, &arg, 1, out, n, e);
}

int stats_read_attention(sqlite3 *db, int rank, struct stats_read_attention *a, struct err *e)
{
    double v[6];
    int rc = nums(db, Q_ATTENTION, rank, v, 6, e);
    *a = (struct stats_read_attention){ v[0], v[1], v[2], v[3], (int64_t)v[4], (int64_t)v[5] };
    return rc;
}

int stats_read_amp_eligible(sqlite3 *db, int rank, double *ns, double *tc_ns, char *top, size_t n, struct err *e)
{
    sqlite3_stmt *st;
    const int64_t arg = rank;
    *ns = *tc_ns = 0;
    top[0] = '\0';
    int rc = open_q(db, Q_AMP, &arg, 1, &st, e);
    if (rc) return rc;
    while ((rc = scan_step(st, e, queries[Q_AMP].what)) == 1) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!top[0]) snprintf(top, n, "%s", name ? name : "");
        *ns += sqlite3_column_double(st, 1);
        *tc_ns += sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

struct stats_read_names {
    sqlite3_stmt *st;
    const char *what;
};

static int names_open(sqlite3 *db, const char *sql, const char *what, struct stats_read_names **out, struct err *e)
{
    struct stats_read_names *c = xcalloc(1, sizeof *c);
    int rc;
    *out = NULL;
    if ((rc = rundb_prepare(db, sql, &c->st, e))) {
        free(c);
        return rc;
    }
    c->what = what;
    *out = c;
    return 0;
}

int stats_read_comm_names_open(sqlite3 *db, struct stats_read_names **out, struct err *e)
{
    return names_open(db,
                      "SELECT id, s, s IN (SELECT name FROM kernel_stat WHERE comm) FROM str"
                      " WHERE instr(substr(s, 1, 6), ':') > 0 OR s IN (SELECT name FROM kernel_stat WHERE comm)",
                      "comm_not_overlapped (names)", out, e);
}

int stats_read_comm_names_rpc_open(sqlite3 *db, struct stats_read_names **out, struct err *e)
{
    return names_open(db,
                      "SELECT id, s, s IN (SELECT name FROM kernel_stat WHERE comm) FROM str"
                      " WHERE instr(substr(s, 1, 6), ':') > 0 OR s = 'record_param_comms'"
                      " OR s IN (SELECT name FROM kernel_stat WHERE comm)",
                      "run database (names)", out, e);
}

int stats_read_comm_names_next(struct stats_read_names *c, uint32_t *id, const char **s, int *kernel, struct err *e)
{
    int rc = scan_step(c->st, e, c->what);
    if (rc == 1) {
        *id = (uint32_t)sqlite3_column_int64(c->st, 0);
        *s = (const char *)sqlite3_column_text(c->st, 1);
        *kernel = sqlite3_column_int(c->st, 2) != 0;
    }
    return rc;
}

void stats_read_names_close(struct stats_read_names *c)
{
    if (!c) return;
    sqlite3_finalize(c->st);
    free(c);
}

int stats_read_alloc_at(sqlite3 *db, int rank, int dev, int64_t ts, int64_t *v, struct err *e)
{
    sqlite3_stmt *st;
    const int64_t args[] = { rank, dev, ts, STATS_DEV_CUDA };
    *v = -1;
    int rc = open_q(db, Q_ALLOC_AT, args, 4, &st, e);
    if (rc) return rc;
    rc = scan_step(st, e, queries[Q_ALLOC_AT].what);
    *v = rc == 1 ? sqlite3_column_int64(st, 0) - sqlite3_column_int64(st, 1) : -1;
    if (*v < 0) *v = -1;
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

int stats_read_live_at(sqlite3 *db, int rank, int dev, int64_t ts, struct stats_read_group **out, size_t *n,
                       struct err *e)
{
    const int64_t args[] = { rank, dev, ts, STATS_DEV_CUDA };
    return groups(db, Q_LIVE_AT, args, 4, out, n, e);
}

int stats_read_kept(sqlite3 *db, int rank, int dev, int64_t a0, int64_t a1, int64_t end, struct stats_read_group **out,
                    size_t *n, struct err *e)
{
    const int64_t args[] = { rank, dev, a0, a1, end, STATS_DEV_CUDA };
    return groups(db, Q_KEPT, args, 6, out, n, e);
}

#include "store/stats_read.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/xmalloc.h"
#include "store/rundb.h"
#include "store/scan.h"

/* Prepares sql with rank bound as ?1. */
static int prepare_rank(sqlite3 *db, const char *sql, int rank, sqlite3_stmt **st, struct err *e)
{
    int rc = rundb_prepare(db, sql, st, e);
    if (rc == 0) sqlite3_bind_int(*st, 1, rank);
    return rc;
}

void stats_read_groups_free(struct stats_read_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++) free(g[i].name);
    free(g);
}

/* Reads the rows (id, name, total, count) of st into a new array and
 * finalizes st. */
static int groups(sqlite3_stmt *st, const char *what, struct stats_read_group **out, size_t *n, struct err *e)
{
    struct stats_read_group *v = NULL;
    size_t cap = 0, k = 0;
    int rc;
    while ((rc = scan_step(st, e, what)) == 1) {
        if (k == cap) v = xrealloc(v, (cap = cap ? cap * 2 : 8) * sizeof *v);
        const char *s = (const char *)sqlite3_column_text(st, 1);
        v[k].id = sqlite3_column_int64(st, 0);
        v[k].name = s ? xstrdup(s) : NULL;
        v[k].total = sqlite3_column_double(st, 2);
        v[k].count = sqlite3_column_int64(st, 3);
        k++;
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        stats_read_groups_free(v, k);
        v = NULL, k = 0;
    }
    *out = v;
    *n = k;
    return rc < 0 ? rc : 0;
}

int stats_read_top_comm_kernel(sqlite3 *db, int rank, char *name, size_t n, long long *calls, double *total,
                               struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    name[0] = '\0';
    *calls = 0;
    *total = 0;
    if ((rc = prepare_rank(db,
                           "SELECT name, sum(calls), sum(total) FROM kernel_stat WHERE rank = ?1 AND comm"
                           " GROUP BY name ORDER BY sum(total) DESC LIMIT 1",
                           rank, &st, e)))
        return rc;
    if ((rc = scan_step(st, e, "communication_heavy (kernels)")) == 1 && sqlite3_column_text(st, 0)) {
        snprintf(name, n, "%s", (const char *)sqlite3_column_text(st, 0));
        *calls = sqlite3_column_int64(st, 1);
        *total = sqlite3_column_double(st, 2);
    }
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

int stats_read_comm_totals(sqlite3 *db, int rank, double *calls, double *total, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *calls = *total = 0;
    if ((rc = prepare_rank(db, "SELECT sum(calls), sum(total) FROM kernel_stat WHERE rank = ?1 AND comm", rank, &st,
                           e)))
        return rc;
    if ((rc = scan_step(st, e, "many_small_collectives")) == 1) {
        *calls = sqlite3_column_double(st, 0);
        *total = sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

int stats_read_has_comm_kernel(sqlite3 *db, int rank, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = prepare_rank(db, "SELECT EXISTS(SELECT 1 FROM kernel_stat WHERE rank = ?1 AND comm)", rank, &st, e)))
        return rc;
    rc = scan_step(st, e, "rules (probe)");
    if (rc == 1) rc = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    return rc;
}

#define TRANSPOSE_WHERE                                                                                     \
    "(name LIKE '%nchwToNhwc%' OR name LIKE '%nhwcToNchw%' OR name LIKE '%nchw2nhwc%'"                     \
    " OR name LIKE '%nhwc2nchw%')"

int stats_read_transposes(sqlite3 *db, int rank, struct stats_read_transposes *t, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *t = (struct stats_read_transposes){ 0 };
    /* every kernel of the rank: comm kernels are not compute but still GPU
     * time the conversions are measured against */
    if ((rc = prepare_rank(db,
                           "SELECT sum(total), sum(CASE WHEN " TRANSPOSE_WHERE " THEN total ELSE 0 END),"
                           " sum(CASE WHEN " TRANSPOSE_WHERE " THEN calls ELSE 0 END),"
                           " sum(CASE WHEN name LIKE '%nhwcToNchw%' OR name LIKE '%nhwc2nchw%' THEN total ELSE 0 END)"
                           " FROM kernel_stat WHERE rank = ?1",
                           rank, &st, e)))
        return rc;
    if ((rc = scan_step(st, e, "layout_transposes")) == 1) {
        t->kernel_ns = sqlite3_column_double(st, 0);
        t->transpose_ns = sqlite3_column_double(st, 1);
        t->calls = sqlite3_column_int64(st, 2);
        t->back_ns = sqlite3_column_double(st, 3);
    }
    sqlite3_finalize(st);
    return rc;
}

int stats_read_transposes_by_op(sqlite3 *db, int rank, struct stats_read_group **out, size_t *n, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *out = NULL;
    *n = 0;
    if ((rc = prepare_rank(db,
                           "SELECT 0, CASE WHEN op = '' THEN '(no operator)' ELSE op END, sum(total), sum(calls)"
                           " FROM kernel_stat WHERE rank = ?1 AND " TRANSPOSE_WHERE
                           " GROUP BY 2 ORDER BY 3 DESC LIMIT 3",
                           rank, &st, e)))
        return rc;
    return groups(st, "layout_transposes", out, n, e);
}

#define SOFTMAX_OPS "('aten::_softmax', 'aten::softmax', 'aten::_masked_softmax', 'aten::_safe_softmax')"
#define BMM_OPS "('aten::bmm', 'aten::baddbmm')"
#define FUSED_WHERE                                                                                         \
    "(op LIKE '%scaled_dot_product%' OR op LIKE '%flash_attention%' OR op LIKE '%efficient_attention%'"     \
    " OR op LIKE '%cudnn_attention%' OR name LIKE '%fmha%' OR name LIKE '%flash%' OR name LIKE '%attn_fwd%')"

int stats_read_attention(sqlite3 *db, int rank, struct stats_read_attention *a, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *a = (struct stats_read_attention){ 0 };
    if ((rc = prepare_rank(db,
                           "SELECT sum(total), sum(CASE WHEN op IN " SOFTMAX_OPS " THEN total ELSE 0 END),"
                           " sum(CASE WHEN op IN " SOFTMAX_OPS " THEN calls ELSE 0 END),"
                           " sum(CASE WHEN op IN " BMM_OPS " THEN total ELSE 0 END),"
                           " sum(CASE WHEN op IN " BMM_OPS " THEN calls ELSE 0 END),"
                           " sum(CASE WHEN " FUSED_WHERE " THEN total ELSE 0 END)"
                           " FROM kernel_stat WHERE rank = ?1 AND NOT comm",
                           rank, &st, e)))
        return rc;
    if ((rc = scan_step(st, e, "unfused_attention")) == 1) {
        a->kernel_ns = sqlite3_column_double(st, 0);
        a->softmax_ns = sqlite3_column_double(st, 1);
        a->softmax_calls = sqlite3_column_int64(st, 2);
        a->bmm_ns = sqlite3_column_double(st, 3);
        a->bmm_calls = sqlite3_column_int64(st, 4);
        a->fused_ns = sqlite3_column_double(st, 5);
    }
    sqlite3_finalize(st);
    return rc;
}

int stats_read_amp_eligible(sqlite3 *db, int rank, double *ns, double *tc_ns, char *top, size_t n, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *ns = *tc_ns = 0;
    top[0] = '\0';
    if ((rc = prepare_rank(db,
                           "SELECT name, sum(dev_self), sum(tc_self) FROM op_stat WHERE rank = ?1 AND tc_eligible"
                           " GROUP BY name ORDER BY sum(dev_self) DESC",
                           rank, &st, e)))
        return rc;
    while ((rc = scan_step(st, e, "enable_amp")) == 1) {
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
};

int stats_read_comm_names_open(sqlite3 *db, struct stats_read_names **out, struct err *e)
{
    struct stats_read_names *c = xcalloc(1, sizeof *c);
    int rc;
    *out = NULL;
    if ((rc = rundb_prepare(db,
                            "SELECT id, s, s IN (SELECT name FROM kernel_stat WHERE comm) FROM str"
                            " WHERE instr(substr(s, 1, 6), ':') > 0 OR s IN (SELECT name FROM kernel_stat WHERE comm)",
                            &c->st, e))) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int stats_read_comm_names_next(struct stats_read_names *c, uint32_t *id, const char **s, int *kernel, struct err *e)
{
    int rc = scan_step(c->st, e, "comm_not_overlapped (names)");
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
    int rc;
    *v = -1;
    if ((rc = prepare_rank(db,
                           "SELECT total_alloc, bytes FROM mem WHERE rank = ?1 AND ts >= ?2 AND dev_type = ?4"
                           " AND dev_id = ?3 AND total_alloc >= 0 ORDER BY ts, id LIMIT 1",
                           rank, &st, e)))
        return rc;
    sqlite3_bind_int64(st, 2, ts);
    sqlite3_bind_int(st, 3, dev);
    sqlite3_bind_int(st, 4, STATS_DEV_CUDA);
    rc = scan_step(st, e, "memory_growth (samples)");
    *v = rc == 1 ? sqlite3_column_int64(st, 0) - sqlite3_column_int64(st, 1) : -1;
    if (*v < 0) *v = -1;
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

int stats_read_live_at(sqlite3 *db, int rank, int dev, int64_t ts, struct stats_read_group **out, size_t *n,
                       struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *out = NULL;
    *n = 0;
    if ((rc = prepare_rank(db,
                           "SELECT a.op, (SELECT s FROM str WHERE id = a.op), sum(a.bytes), count(*) FROM mem_alloc a"
                           " WHERE a.rank = ?1 AND a.dev_type = ?4 AND a.dev_id = ?2 AND a.alloc_ts <= ?3"
                           " AND (a.free_ts IS NULL OR a.free_ts > ?3) AND a.bytes > 0"
                           " GROUP BY a.op ORDER BY 3 DESC",
                           rank, &st, e)))
        return rc;
    sqlite3_bind_int(st, 2, dev);
    sqlite3_bind_int64(st, 3, ts);
    sqlite3_bind_int(st, 4, STATS_DEV_CUDA);
    return groups(st, "memory_near_limit", out, n, e);
}

int stats_read_kept(sqlite3 *db, int rank, int dev, int64_t a0, int64_t a1, int64_t end, struct stats_read_group **out,
                    size_t *n, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *out = NULL;
    *n = 0;
    if ((rc = prepare_rank(db,
                           "SELECT a.op, (SELECT s FROM str WHERE id = a.op), sum(a.bytes), count(*) FROM mem_alloc a"
                           " WHERE a.rank = ?1 AND a.dev_type = ?6 AND a.dev_id = ?2 AND a.alloc_ts >= ?3"
                           " AND a.alloc_ts < ?4 AND (a.free_ts IS NULL OR a.free_ts >= ?5) AND a.bytes > 0"
                           " GROUP BY a.op ORDER BY 3 DESC LIMIT 3",
                           rank, &st, e)))
        return rc;
    sqlite3_bind_int(st, 2, dev);
    sqlite3_bind_int64(st, 3, a0);
    sqlite3_bind_int64(st, 4, a1);
    sqlite3_bind_int64(st, 5, end);
    sqlite3_bind_int(st, 6, STATS_DEV_CUDA);
    return groups(st, "memory_growth (kept tensors)", out, n, e);
}

/* diff_read.c — the two sides of a comparison and their table (see
 * include/store/diff_read.h). */
#include "store/diff_read.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "store/rundb.h"
#include "store/scan.h"

/* ====================================================================== */
/* Connection                                                             */
/* ====================================================================== */

int diff_read_open(const char *db_a, const char *db_b, sqlite3 **out, struct err *e)
{
    sqlite3 *db = NULL, *probe_b = NULL;
    sqlite3_stmt *st;
    int rc;

    *out = NULL;
    if ((rc = rundb_open_ro(db_a, &db, e)) < 0) goto fail;
    /* B is attached below, which skips rundb_open_ro's damage checks:
     * run them on their own first. */
    rc = rundb_open_ro(db_b, &probe_b, e);
    sqlite3_close(probe_b);
    if (rc < 0) goto fail;
    if ((rc = rundb_prepare(db, "ATTACH DATABASE ?1 AS bdb", &st, e)) < 0) goto fail;
    sqlite3_bind_text(st, 1, db_b, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        rc = err_set(e, ERR_NOT_FOUND, "cannot open run database B: %s", sqlite3_errmsg(db));
        goto fail;
    }
    *out = db;
    return 0;
fail:
    sqlite3_close(db);
    return rc;
}

/* ====================================================================== */
/* One side                                                               */
/* ====================================================================== */

enum side_q { Q_HAS_STEPS, Q_RANKS, Q_STEP_COUNT, Q_OP_DEVICE, Q_STEP_AVG, Q_GPU, Q_KERNEL_NS, Q_SUMMARY, Q_N };

/* The statements of one side, each with the rank as ?1 where it has one. */
#define SIDE_QUERIES(S)                                                                                          \
    {                                                                                                            \
        [Q_HAS_STEPS] = "SELECT count(*) FROM " S ".sqlite_master WHERE type = 'table' AND name = 'step'",       \
        [Q_RANKS] = "SELECT rank FROM " S ".rank ORDER BY rank",                                                 \
        [Q_STEP_COUNT] = "SELECT count(*) FROM " S ".step WHERE rank = ?1",                                      \
        [Q_OP_DEVICE] = "SELECT EXISTS(SELECT 1 FROM " S ".op_stat WHERE rank = ?1 AND dev_self > 0)",           \
        [Q_STEP_AVG] = "SELECT avg(dur), avg(kernel), avg(memcpy), avg(memset), avg(comm), avg(runtime),"        \
                       " avg(dataloader), avg(cpu_exec), avg(other) FROM " S ".step WHERE rank = ?1",            \
        [Q_GPU] = "SELECT name, memory_bytes, cc, util, sm_eff, tc_share FROM " S ".gpu WHERE rank = ?1"         \
                  " ORDER BY kernel_ns DESC, device LIMIT 1",                                                    \
        [Q_KERNEL_NS] = "SELECT coalesce(sum(total), 0) FROM " S ".kernel_stat WHERE rank = ?1",                 \
        [Q_SUMMARY] = "SELECT summary FROM " S ".analysis WHERE rank = ?1",                                      \
    }

static const char *const side_sql[2][Q_N] = { SIDE_QUERIES("main"), SIDE_QUERIES("bdb") };

static int side_open(sqlite3 *db, int s, enum side_q q, int rank, sqlite3_stmt **st, struct err *e)
{
    const int64_t arg = rank;
    const char *sql = side_sql[s ? 1 : 0][q];
    return scan_prepare_args(db, sql, &arg, strstr(sql, "?1") ? 1 : 0, st, e);
}

/* The one integer of a one-row query. */
static int side_int(sqlite3 *db, int s, enum side_q q, int rank, int64_t *out, struct err *e)
{
    sqlite3_stmt *st;
    int rc = side_open(db, s, q, rank, &st, e);
    *out = 0;
    if (rc) return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : rundb_db_error(db, e, "run database (diff)");
}

int diff_read_has_steps(sqlite3 *db, int s, struct err *e)
{
    int64_t v;
    int rc = side_int(db, s, Q_HAS_STEPS, 0, &v, e);
    return rc < 0 ? rc : v != 0;
}

static void rank_fill(sqlite3_stmt *st, void *elem)
{
    *(int *)elem = sqlite3_column_int(st, 0);
}

int diff_read_ranks(sqlite3 *db, int s, int **out, size_t *n, struct err *e)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = side_open(db, s, Q_RANKS, 0, &st, e);
    return rc ? rc : scan_collect(st, "run database (ranks)", sizeof **out, rank_fill, NULL, (void **)out, n, e);
}

int diff_read_step_count(sqlite3 *db, int s, int rank, int64_t *n, struct err *e)
{
    return side_int(db, s, Q_STEP_COUNT, rank, n, e);
}

int diff_read_op_device(sqlite3 *db, int s, int rank, struct err *e)
{
    int64_t v;
    int rc = side_int(db, s, Q_OP_DEVICE, rank, &v, e);
    return rc < 0 ? rc : v != 0;
}

int diff_read_step_avg(sqlite3 *db, int s, int rank, double v[9], struct err *e)
{
    sqlite3_stmt *st;
    int rc = side_open(db, s, Q_STEP_AVG, rank, &st, e);
    if (rc) return rc;
    return scan_row_nums(st, "diff (steps)", v, 9, e);
}

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? xstrdup((const char *)t) : NULL;
}

int diff_read_gpu(sqlite3 *db, int s, int rank, struct diff_read_gpu *g, struct err *e)
{
    sqlite3_stmt *st;
    memset(g, 0, sizeof *g);
    int rc = side_open(db, s, Q_GPU, rank, &st, e);
    if (rc) return rc;
    if ((rc = scan_step(st, e, "diff (GPU)")) == 1) {
        for (int i = 0; i < 6; i++)
            if (sqlite3_column_type(st, i) == SQLITE_NULL) g->nulls |= 1u << i;
        g->name = col_dup(st, 0);
        g->memory_bytes = sqlite3_column_int64(st, 1);
        g->cc = col_dup(st, 2);
        for (int i = 0; i < 3; i++) g->share[i] = sqlite3_column_double(st, 3 + i);
    }
    sqlite3_finalize(st);
    return rc;
}

int diff_read_kernel_ns(sqlite3 *db, int s, int rank, int64_t *ns, struct err *e)
{
    return side_int(db, s, Q_KERNEL_NS, rank, ns, e);
}

int diff_read_summary(sqlite3 *db, int s, int rank, char **json, struct err *e)
{
    sqlite3_stmt *st;
    *json = NULL;
    int rc = side_open(db, s, Q_SUMMARY, rank, &st, e);
    if (rc) return rc;
    if ((rc = scan_step(st, e, "diff (summary)")) == 1) *json = col_dup(st, 0);
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

/* ====================================================================== */
/* The table                                                              */
/* ====================================================================== */

/* Sort keys' expressions over the `s` CTE, in diff_sort_names order. */
static const char *const sort_sql[DIFF_READ_NSORT] = { "abs(delta)", "delta",   "ratio",   "name", "a_t",
                                                       "b_t",        "a_calls", "b_calls", "st" };

/* The CTEs shared by the count and the row queries: sa / sb are each side
 * grouped by key, s the full join with delta, ratio and status (st = enum
 * diff_status), filtered by :q. Built from fixed fragments only. */
static char *cte_sql(const struct diff_read_q *q)
{
    const char *key, *tbl, *tim, *tc;

    if (q->kernels) {
        tbl = "kernel_stat";
        key = q->family ? "tb_kfamily(name)" : "name";
        tim = "sum(total)";
        tc = "max(tc)";
    } else {
        tbl = "op_stat";
        key = "name";
        tim = q->op_device ? "sum(dev_self)" : "sum(host_self)";
        tc = "0";
    }
    return xasprintf(
        "WITH sa AS (SELECT %s AS k, sum(calls) AS c, %s AS t, %s AS tc FROM main.%s WHERE rank = :ra GROUP BY 1),"
        " sb AS (SELECT %s AS k, sum(calls) AS c, %s AS t, %s AS tc FROM bdb.%s WHERE rank = :rb GROUP BY 1),"
        " j AS (SELECT coalesce(sa.k, sb.k) AS name, sa.c * 1.0 / :diva AS a_calls, sb.c * 1.0 / :divb AS b_calls,"
        " sa.t * 1.0 / :diva AS a_t, sb.t * 1.0 / :divb AS b_t, max(coalesce(sa.tc, 0), coalesce(sb.tc, 0)) AS tc"
        " FROM sa FULL JOIN sb ON sa.k = sb.k),"
        " s AS (SELECT *, coalesce(b_t, 0) - coalesce(a_t, 0) AS delta,"
        " CASE WHEN a_t > 0 AND b_t > 0 THEN b_t / a_t END AS ratio,"
        " CASE WHEN a_t IS NULL THEN 0 WHEN b_t IS NULL THEN 1"
        " WHEN b_t < a_t * (1 - :thr) AND a_t - b_t >= :minabs THEN 2"
        " WHEN b_t > a_t * (1 + :thr) AND b_t - a_t >= :minabs THEN 3 ELSE 4 END AS st"
        " FROM j WHERE :q IS NULL OR name LIKE :q ESCAPE '\\')",
        key, tim, tc, tbl, key, tim, tc, tbl);
}

static void bind_named_i64(sqlite3_stmt *st, const char *name, int64_t v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i) sqlite3_bind_int64(st, i, v);
}

static void bind_named_double(sqlite3_stmt *st, const char *name, double v)
{
    int i = sqlite3_bind_parameter_index(st, name);
    if (i) sqlite3_bind_double(st, i, v);
}

/* Prepares the CTE followed by tail and binds q. */
static int table_open(sqlite3 *db, const struct diff_read_q *q, const char *tail, sqlite3_stmt **st, struct err *e)
{
    char *cte = cte_sql(q), *sql = xasprintf("%s %s", cte, tail);
    int rc = rundb_prepare(db, sql, st, e);
    free(cte);
    free(sql);
    if (rc < 0) return rc;
    bind_named_i64(*st, ":ra", q->ra);
    bind_named_i64(*st, ":rb", q->rb);
    bind_named_double(*st, ":diva", q->diva);
    bind_named_double(*st, ":divb", q->divb);
    bind_named_double(*st, ":thr", q->thr);
    bind_named_double(*st, ":minabs", q->minabs);
    bind_named_i64(*st, ":mask", q->mask);
    bind_named_i64(*st, ":lim", q->limit < 0 ? -1 : q->limit);
    bind_named_i64(*st, ":off", q->offset);
    int i = sqlite3_bind_parameter_index(*st, ":q");
    if (i && q->like) sqlite3_bind_text(*st, i, q->like, -1, SQLITE_TRANSIENT);
    else if (i) sqlite3_bind_null(*st, i);
    return 0;
}

int diff_read_counts(sqlite3 *db, const struct diff_read_q *q, int64_t *c, int nstatus, struct err *e)
{
    sqlite3_stmt *st;
    int rc = table_open(db, q, "SELECT st, count(*) FROM s GROUP BY st", &st, e);
    if (rc < 0) return rc;
    memset(c, 0, sizeof *c * (size_t)nstatus);
    while ((rc = scan_step(st, e, "run database (diff counts)")) == 1) {
        int k = sqlite3_column_int(st, 0);
        if (k >= 0 && k < nstatus) c[k] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

struct diff_read_rows {
    sqlite3_stmt *st;
};

int diff_read_rows_open(sqlite3 *db, const struct diff_read_q *q, struct diff_read_rows **out, struct err *e)
{
    struct diff_read_rows *c = xcalloc(1, sizeof *c);
    int sort = q->sort >= 0 && q->sort < DIFF_READ_NSORT ? q->sort : 0;
    char *tail = xasprintf("SELECT name, a_calls, b_calls, a_t, b_t, delta, ratio, st, tc FROM s"
                           " WHERE (:mask >> st) & 1 ORDER BY (%s) IS NULL, %s %s, name ASC LIMIT :lim OFFSET :off",
                           sort_sql[sort], sort_sql[sort], q->desc ? "DESC" : "ASC");
    int rc = table_open(db, q, tail, &c->st, e);
    free(tail);
    if (rc < 0) {
        free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int diff_read_rows_next(struct diff_read_rows *c, struct diff_read_row *row, struct err *e)
{
    sqlite3_stmt *st = c->st;
    int rc = scan_step(st, e, "run database (diff rows)");
    if (rc != 1) return rc;
    row->nulls = 0;
    row->name = (const char *)sqlite3_column_text(st, 0);
    for (int i = 0; i < DIFF_READ_NUMS; i++) {
        row->v[i] = sqlite3_column_double(st, 1 + i);
        if (sqlite3_column_type(st, 1 + i) == SQLITE_NULL) row->nulls |= 1u << i;
    }
    row->status = sqlite3_column_int(st, 7);
    row->tc = sqlite3_column_int(st, 8);
    return 1;
}

void diff_read_rows_close(struct diff_read_rows *c)
{
    if (!c) return;
    sqlite3_finalize(c->st);
    free(c);
}

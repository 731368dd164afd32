/* diff.c — comparing two runs or two ranks over their analysis tables (see
 * include/derive/diff.h). */
#define LOG_MODULE "diff"
#include "derive/diff.h"

#include <ctype.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/summary.h"
#include "store/rundb.h"
#include "store/scan.h"

#define NCATS 8          /* breakdown parts, summary_categories[0..7] */
#define MIN_ABS_NS 1000.0 /* a change under 1 µs per unit is "same" */
#define Q_MAX 256

const char *const diff_status_names[DIFF_NSTATUS] = { "added", "removed", "faster", "slower", "same" };

/* Sort keys and their fixed SQL expressions over the `s` CTE below. */
const char *const diff_sort_names[DIFF_NSORT] = { "change", "delta",   "ratio",   "name",  "a_time",
                                                  "b_time", "a_calls", "b_calls", "status" };
static const char *const sort_sql[DIFF_NSORT] = { "abs(delta)", "delta",   "ratio",   "name", "a_t",
                                                  "b_t",        "a_calls", "b_calls", "st" };

/* The two schemas of the connection: A is main, B is attached. */
static const char *const schema[2] = { "main", "bdb" };

struct diff {
    sqlite3 *db;     /* owned, read-only; B attached as bdb */
    int rank[2];     /* the ranks compared */
    json_t *ranks[2]; /* owned arrays of every rank of each run */
    int64_t steps[2]; /* steps of each compared rank */
    int op_device;   /* 1: some operator has device time on either side */
};

/* ====================================================================== */
/* Kernel families                                                        */
/* ====================================================================== */

static int has(const char *lower, const char *word)
{
    return strstr(lower, word) != NULL;
}

char *diff_kernel_family(const char *name)
{
    size_t n = strlen(name);
    char *lo = xmalloc(n + 1);
    const char *fam = NULL;

    for (size_t i = 0; i <= n; i++) lo[i] = (char)tolower((unsigned char)name[i]);
    if (has(lo, "nccl") || has(lo, "rccl")) {
        static const struct {
            const char *word, *label;
        } coll[] = { { "allreduce", "NCCL AllReduce" },         { "all_reduce", "NCCL AllReduce" },
                     { "allgather", "NCCL AllGather" },         { "all_gather", "NCCL AllGather" },
                     { "reducescatter", "NCCL ReduceScatter" }, { "reduce_scatter", "NCCL ReduceScatter" },
                     { "alltoall", "NCCL AllToAll" },           { "sendrecv", "NCCL SendRecv" },
                     { "broadcast", "NCCL Broadcast" },         { "reduce", "NCCL Reduce" } };
        fam = "NCCL";
        for (size_t i = 0; i < sizeof coll / sizeof coll[0]; i++)
            if (has(lo, coll[i].word)) {
                fam = coll[i].label;
                break;
            }
    } else if (has(lo, "gemv")) fam = "GEMV";
    else if (has(lo, "conv") || has(lo, "wgrad") || has(lo, "dgrad") || has(lo, "fprop")) fam = "convolution";
    else if (has(lo, "flash") || has(lo, "fmha") || has(lo, "attention") || has(lo, "sdpa")) fam = "attention";
    else if (has(lo, "gemm") || has(lo, "nvjet") || has(lo, "cublas") || has(lo, "wgmma") || has(lo, "matmul"))
        fam = "GEMM";
    else if (has(lo, "softmax")) fam = "softmax";
    else if (has(lo, "layer_norm") || has(lo, "layernorm")) fam = "layer norm";
    else if (has(lo, "batch_norm") || has(lo, "batchnorm") || has(lo, "bn_fw") || has(lo, "bn_bw"))
        fam = "batch norm";
    free(lo);
    if (fam) return xstrdup(fam);

    /* Strip "void ", cut at the first template or argument list (but not at
     * "(anonymous namespace)"), keep the last "::" component. */
    const char *p = name, *start, *end;
    static const char anon[] = "(anonymous namespace)";
    if (strncmp(p, "void ", 5) == 0) p += 5;
    start = p;
    for (end = p; *end; end++) {
        if (strncmp(end, anon, sizeof anon - 1) == 0) {
            end += sizeof anon - 2;
            continue;
        }
        if (*end == '<' || *end == '(') break;
        if (end[0] == ':' && end[1] == ':') start = end + 2;
    }
    if (end <= start) return xstrdup(name);
    return xstrndup(start, (size_t)(end - start));
}

/* tb_kfamily(name) for the SQL below. */
static void sql_kfamily(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const unsigned char *s = sqlite3_value_text(argv[0]);
    char *f;

    (void)argc;
    if (!s) {
        sqlite3_result_null(ctx);
        return;
    }
    f = diff_kernel_family((const char *)s);
    sqlite3_result_text(ctx, f, -1, free);
}

void diff_register_kfamily(sqlite3 *db)
{
    sqlite3_create_function_v2(db, "tb_kfamily", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, sql_kfamily, NULL, NULL,
                               NULL);
}

/* ====================================================================== */
/* Parameters                                                             */
/* ====================================================================== */

int diff_parse_status(const char *list, const char *name, unsigned *mask, struct err *e)
{
    const char *p = list;

    *mask = 0;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int i = 0; i < DIFF_NSTATUS; i++)
            if (n && strlen(diff_status_names[i]) == n && strncmp(p, diff_status_names[i], n) == 0) {
                *mask |= 1u << i;
                found = 1;
            }
        if (!found && n)
            return err_set(e, ERR_INVALID,
                           "parameter '%s' must be a comma-separated list of added, removed, faster, slower, same",
                           name);
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

int diff_parse_sort(const char *s, const char *name, int *out, struct err *e)
{
    for (int i = 0; i < DIFF_NSORT; i++)
        if (strcmp(s, diff_sort_names[i]) == 0) {
            *out = i;
            return 0;
        }
    return err_set(e, ERR_INVALID,
                   "parameter '%s' must be one of: change, delta, ratio, name, a_time, b_time, a_calls, b_calls, "
                   "status",
                   name);
}

/* ====================================================================== */
/* Connection                                                             */
/* ====================================================================== */

/* One integer from a one-row query on schema s with ?1 = rank (ignored when
 * the query has no parameter). */
static int query_int(sqlite3 *db, const char *fmt, int s, int rank, int64_t *out, struct err *e)
{
    sqlite3_stmt *st;
    char *sql = xasprintf(fmt, schema[s], schema[s]);
    int rc = rundb_prepare(db, sql, &st, e);

    free(sql);
    if (rc < 0) return rc;
    if (sqlite3_bind_parameter_count(st) > 0) sqlite3_bind_int(st, 1, rank);
    rc = sqlite3_step(st);
    *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : rundb_db_error(db, e, "run database (diff)");
}

static int pick_rank(struct diff *d, int s, int want, struct err *e)
{
    sqlite3_stmt *st;
    char *sql = xasprintf("SELECT rank FROM %s.rank ORDER BY rank", schema[s]);
    int rc = rundb_prepare(d->db, sql, &st, e), found = 0;

    free(sql);
    if (rc < 0) return rc;
    d->ranks[s] = json_array();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int k = sqlite3_column_int(st, 0);
        json_array_append_new(d->ranks[s], json_integer(k));
        if (!found && (want < 0 || want == k)) {
            found = 1;
            d->rank[s] = k;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return rundb_db_error(d->db, e, "run database (ranks)");
    if (!found && want >= 0) return err_set(e, ERR_NOT_FOUND, "run %s has no rank %d", s ? "B" : "A", want);
    if (!found) return err_set(e, ERR_NOT_FOUND, "run %s has no ranks", s ? "B" : "A");
    return 0;
}

/* Reads what the queries need of side s (schema[s] of d->db): its rank
 * (want, or its lowest when -1), its step count and whether operators have
 * device time. */
static int side_prepare(struct diff *d, int s, int want, struct err *e)
{
    int64_t v;
    int rc;

    rc = query_int(d->db, "SELECT count(*) FROM %s.sqlite_master WHERE type = 'table' AND name = 'step'", s, 0, &v, e);
    if (rc < 0) return err_set(e, ERR_NOT_FOUND, "run %s: not a run database", s ? "B" : "A");
    if (v == 0)
        return err_set(e, ERR_CONFLICT, "run %s was imported before analysis existed; re-import it", s ? "B" : "A");
    if ((rc = pick_rank(d, s, want, e)) < 0) return rc;
    if ((rc = query_int(d->db, "SELECT count(*) FROM %s.step WHERE rank = ?1", s, d->rank[s], &d->steps[s], e)) < 0)
        return rc;
    if ((rc = query_int(d->db, "SELECT EXISTS(SELECT 1 FROM %s.op_stat WHERE rank = ?1 AND dev_self > 0)", s,
                        d->rank[s], &v, e)) < 0)
        return rc;
    d->op_device |= v != 0;
    return 0;
}

int diff_open(const char *db_a, int rank_a, const char *db_b, int rank_b, struct diff **out, struct err *e)
{
    struct diff *d = xcalloc(1, sizeof *d);
    sqlite3_stmt *st = NULL;
    int rc;

    *out = NULL;
    if ((rc = rundb_open_ro(db_a, &d->db, e)) < 0) goto fail;
    /* B is attached below, which skips rundb_open_ro's damage checks:
     * run them on their own first. */
    sqlite3 *probe_b = NULL;
    rc = rundb_open_ro(db_b, &probe_b, e);
    sqlite3_close(probe_b);
    if (rc < 0) goto fail;
    diff_register_kfamily(d->db);
    if ((rc = rundb_prepare(d->db, "ATTACH DATABASE ?1 AS bdb", &st, e)) < 0) goto fail;
    sqlite3_bind_text(st, 1, db_b, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        rc = err_set(e, ERR_NOT_FOUND, "cannot open run database B: %s", sqlite3_errmsg(d->db));
        goto fail;
    }
    for (int s = 0; s < 2; s++)
        if ((rc = side_prepare(d, s, s ? rank_b : rank_a, e)) < 0) goto fail;
    *out = d;
    return 0;
fail:
    diff_close(d);
    return rc;
}

void diff_close(struct diff *d)
{
    if (!d) return;
    sqlite3_close(d->db);
    json_decref(d->ranks[0]);
    json_decref(d->ranks[1]);
    free(d);
}

int diff_rank(const struct diff *d, int side)
{
    return d->rank[side ? 1 : 0];
}

/* ====================================================================== */
/* Tables                                                                 */
/* ====================================================================== */

/* The CTEs shared by the count and the row queries: sa / sb are each side
 * grouped by key, s the full join with delta, ratio and status (st = enum
 * diff_status), filtered by :q. Built from fixed fragments only. */
static char *cte_sql(const struct diff *d, const struct diff_query *q)
{
    const char *key, *tbl, *tim, *tc;

    if (q->kind == DIFF_KERNELS) {
        tbl = "kernel_stat";
        key = q->family ? "tb_kfamily(name)" : "name";
        tim = "sum(total)";
        tc = "max(tc)";
    } else {
        tbl = "op_stat";
        key = "name";
        tim = d->op_device ? "sum(dev_self)" : "sum(host_self)";
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

static void bind_query(const struct diff *d, sqlite3_stmt *st, const struct diff_query *q, const char *like)
{
    int i = sqlite3_bind_parameter_index(st, ":q");

    bind_named_i64(st, ":ra", d->rank[0]);
    bind_named_i64(st, ":rb", d->rank[1]);
    bind_named_double(st, ":diva", q->per_step && d->steps[0] > 0 ? (double)d->steps[0] : 1.0);
    bind_named_double(st, ":divb", q->per_step && d->steps[1] > 0 ? (double)d->steps[1] : 1.0);
    bind_named_double(st, ":thr", q->threshold);
    bind_named_double(st, ":minabs", MIN_ABS_NS);
    bind_named_i64(st, ":mask", q->status_mask ? q->status_mask : (1u << DIFF_NSTATUS) - 1);
    bind_named_i64(st, ":lim", q->limit < 0 ? -1 : q->limit);
    bind_named_i64(st, ":off", q->offset);
    if (i && like) sqlite3_bind_text(st, i, like, -1, SQLITE_STATIC);
    else if (i) sqlite3_bind_null(st, i);
}

/* Counts by status (q applied) into c[DIFF_NSTATUS]. */
static int table_counts(struct diff *d, const struct diff_query *q, const char *like, int64_t c[DIFF_NSTATUS],
                        struct err *e)
{
    char *cte = cte_sql(d, q), *sql = xasprintf("%s SELECT st, count(*) FROM s GROUP BY st", cte);
    sqlite3_stmt *st;
    int rc = rundb_prepare(d->db, sql, &st, e);

    free(cte);
    free(sql);
    if (rc < 0) return rc;
    bind_query(d, st, q, like);
    memset(c, 0, sizeof(int64_t) * DIFF_NSTATUS);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int k = sqlite3_column_int(st, 0);
        if (k >= 0 && k < DIFF_NSTATUS) c[k] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(d->db, e, "run database (diff counts)");
}

static json_t *counts_json(const int64_t c[DIFF_NSTATUS])
{
    json_t *o = json_object();
    for (int i = 0; i < DIFF_NSTATUS; i++) json_object_set_new(o, diff_status_names[i], json_integer(c[i]));
    return o;
}

static json_t *num_or_null(sqlite3_stmt *st, int i, double scale)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                      : json_real(sqlite3_column_double(st, i) / scale);
}

int diff_table(struct diff *d, const struct diff_query *q, json_t **out, struct err *e)
{
    int64_t c[DIFF_NSTATUS], total = 0;
    unsigned mask = q->status_mask ? q->status_mask : (1u << DIFF_NSTATUS) - 1;
    char *like = NULL, *cte, *sql;
    sqlite3_stmt *st;
    json_t *rows;
    int rc, sort = q->sort >= 0 && q->sort < DIFF_NSORT ? q->sort : 0;

    *out = NULL;
    if (q->q && strlen(q->q) > Q_MAX) return err_set(e, ERR_INVALID, "parameter 'q' is longer than %d bytes", Q_MAX);
    if (q->q && *q->q) like = rundb_like_pattern(q->q);
    if ((rc = table_counts(d, q, like, c, e)) < 0) goto done;
    for (int i = 0; i < DIFF_NSTATUS; i++)
        if (mask & (1u << i)) total += c[i];

    cte = cte_sql(d, q);
    sql = xasprintf("%s SELECT name, a_calls, b_calls, a_t, b_t, delta, ratio, st, tc FROM s"
                    " WHERE (:mask >> st) & 1 ORDER BY (%s) IS NULL, %s %s, name ASC LIMIT :lim OFFSET :off",
                    cte, sort_sql[sort], sort_sql[sort], q->desc ? "DESC" : "ASC");
    rc = rundb_prepare(d->db, sql, &st, e);
    free(cte);
    free(sql);
    if (rc < 0) goto done;
    bind_query(d, st, q, like);
    rows = json_array();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int k = sqlite3_column_int(st, 7);
        json_t *r = json_pack("{s:s,s:o,s:o,s:o,s:o,s:f,s:o,s:s}", "name",
                              (const char *)sqlite3_column_text(st, 0), "a_calls", num_or_null(st, 1, 1.0),
                              "b_calls", num_or_null(st, 2, 1.0), "a_us", num_or_null(st, 3, 1000.0), "b_us",
                              num_or_null(st, 4, 1000.0), "delta_us", sqlite3_column_double(st, 5) / 1000.0,
                              "ratio", num_or_null(st, 6, 1.0), "status",
                              k >= 0 && k < DIFF_NSTATUS ? diff_status_names[k] : "same");
        if (!r) continue; /* a name that is not UTF-8: ingest cleans names, so never */
        if (q->kind == DIFF_KERNELS) json_object_set_new(r, "tensor_cores", json_boolean(sqlite3_column_int(st, 8)));
        json_array_append_new(rows, r);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(rows);
        rc = rundb_db_error(d->db, e, "run database (diff rows)");
        goto done;
    }
    rc = 0;
    *out = json_pack("{s:s,s:s,s:s,s:s,s:f,s:o,s:I,s:I,s:I,s:s,s:s,s:o}", "kind",
                     q->kind == DIFF_KERNELS ? "kernels" : "operators", "group", q->family ? "family" : "name", "per",
                     q->per_step ? "step" : "total", "metric",
                     q->kind == DIFF_KERNELS ? "kernel" : d->op_device ? "device_self" : "host_self", "threshold",
                     q->threshold, "counts", counts_json(c), "total", (json_int_t)total, "offset",
                     (json_int_t)q->offset, "limit", (json_int_t)q->limit, "sort", diff_sort_names[sort], "order",
                     q->desc ? "desc" : "asc", "rows", rows);
done:
    free(like);
    return rc;
}

/* ====================================================================== */
/* Overview                                                               */
/* ====================================================================== */

static json_t *real_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_real(sqlite3_column_double(st, i));
}

/* One side of the overview. */
static int side_json(struct diff *d, int s, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    char *sql;
    int rc;
    json_t *o = json_pack("{s:i,s:O,s:I}", "rank", d->rank[s], "ranks", d->ranks[s], "steps",
                          (json_int_t)d->steps[s]);
    json_t *bd = json_object();
    double avg = 0;

    *out = NULL;
    sql = xasprintf("SELECT avg(dur), avg(kernel), avg(memcpy), avg(memset), avg(comm), avg(runtime),"
                    " avg(dataloader), avg(cpu_exec), avg(other) FROM %s.step WHERE rank = ?1",
                    schema[s]);
    rc = rundb_prepare(d->db, sql, &st, e);
    free(sql);
    if (rc < 0) goto fail;
    sqlite3_bind_int(st, 1, d->rank[s]);
    if ((rc = scan_step(st, e, "diff (steps)")) < 0) goto fail_st;
    if (rc == 1) {
        avg = sqlite3_column_double(st, 0) / 1000.0;
        for (int k = 0; k < NCATS; k++)
            json_object_set_new(bd, summary_categories[k], json_real(sqlite3_column_double(st, 1 + k) / 1000.0));
    }
    sqlite3_finalize(st);
    json_object_set_new(o, "average", json_pack("{s:f,s:O}", "dur_us", avg, "breakdown_us", bd));

    sql = xasprintf("SELECT name, memory_bytes, cc, util, sm_eff, tc_share FROM %s.gpu WHERE rank = ?1"
                    " ORDER BY kernel_ns DESC, device LIMIT 1",
                    schema[s]);
    rc = rundb_prepare(d->db, sql, &st, e);
    free(sql);
    if (rc < 0) goto fail;
    sqlite3_bind_int(st, 1, d->rank[s]);
    if ((rc = scan_step(st, e, "diff (GPU)")) < 0) goto fail_st;
    if (rc == 1) {
        json_object_set_new(o, "device",
                            json_pack("{s:s?,s:o,s:s?}", "name", (const char *)sqlite3_column_text(st, 0),
                                      "memory_bytes",
                                      sqlite3_column_type(st, 1) == SQLITE_NULL
                                          ? json_null()
                                          : json_integer(sqlite3_column_int64(st, 1)),
                                      "compute_capability", (const char *)sqlite3_column_text(st, 2)));
        json_object_set_new(o, "gpu_utilization", real_or_null(st, 3));
        json_object_set_new(o, "sm_efficiency", real_or_null(st, 4));
        json_object_set_new(o, "tensor_core_share", real_or_null(st, 5));
    } else {
        json_object_set_new(o, "device", json_null());
        json_object_set_new(o, "gpu_utilization", json_null());
        json_object_set_new(o, "sm_efficiency", json_null());
        json_object_set_new(o, "tensor_core_share", json_null());
    }
    sqlite3_finalize(st);

    int64_t kns = 0;
    if ((rc = query_int(d->db, "SELECT coalesce(sum(total), 0) FROM %s.kernel_stat WHERE rank = ?1", s,
                        d->rank[s], &kns, e)) < 0)
        goto fail;
    json_object_set_new(o, "kernel_us",
                        json_real((double)kns / 1000.0 / (double)(d->steps[s] > 0 ? d->steps[s] : 1)));

    json_t *peak = json_null();
    sql = xasprintf("SELECT summary FROM %s.analysis WHERE rank = ?1", schema[s]);
    rc = rundb_prepare(d->db, sql, &st, e);
    free(sql);
    if (rc < 0) goto fail;
    sqlite3_bind_int(st, 1, d->rank[s]);
    if ((rc = scan_step(st, e, "diff (summary)")) < 0) goto fail_st;
    if (rc == 1 && sqlite3_column_text(st, 0)) {
        json_t *sum = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL), *v;
        const char *k;
        json_int_t best = -1;
        json_object_foreach(json_object_get(sum, "peak_memory"), k, v) {
            json_int_t b = json_integer_value(json_object_get(v, "bytes"));
            if (strcmp(k, "cpu") != 0 && b > best) best = b;
        }
        if (best >= 0) peak = json_integer(best);
        json_decref(sum);
    }
    sqlite3_finalize(st);
    json_object_set_new(o, "peak_memory_bytes", peak);
    json_decref(bd);
    *out = o;
    return 0;
fail_st:
    sqlite3_finalize(st);
fail:
    json_decref(bd);
    json_decref(o);
    return rc;
}

int diff_side(const char *db, int rank, json_t **out, struct err *e)
{
    struct diff *d = xcalloc(1, sizeof *d);
    int rc;

    *out = NULL;
    if ((rc = rundb_open_ro(db, &d->db, e)) == 0 && (rc = side_prepare(d, 0, rank, e)) == 0)
        rc = side_json(d, 0, out, e);
    diff_close(d);
    return rc;
}

/* b - a of two numbers, null unless both are numbers. */
static json_t *num_delta(json_t *a, json_t *b)
{
    if (!json_is_number(a) || !json_is_number(b)) return json_null();
    return json_real(json_number_value(b) - json_number_value(a));
}

static int counts_of(struct diff *d, enum diff_kind kind, int family, double thr, json_t **out, struct err *e)
{
    struct diff_query q = { .kind = kind, .family = family, .per_step = 1, .threshold = thr };
    int64_t c[DIFF_NSTATUS];
    int rc = table_counts(d, &q, NULL, c, e);

    *out = rc < 0 ? NULL : counts_json(c);
    return rc;
}

int diff_overview(struct diff *d, double threshold, json_t **out, struct err *e)
{
    json_t *side[2] = { NULL, NULL }, *cats, *dbd, *kc = NULL, *fc = NULL, *oc = NULL;
    int rc;

    *out = NULL;
    for (int s = 0; s < 2; s++)
        if ((rc = side_json(d, s, &side[s], e)) < 0) goto fail;
    if ((rc = counts_of(d, DIFF_KERNELS, 0, threshold, &kc, e)) < 0 ||
        (rc = counts_of(d, DIFF_KERNELS, 1, threshold, &fc, e)) < 0 ||
        (rc = counts_of(d, DIFF_OPERATORS, 0, threshold, &oc, e)) < 0)
        goto fail;

    json_t *aa = json_object_get(side[0], "average"), *ba = json_object_get(side[1], "average");
    double ad = json_number_value(json_object_get(aa, "dur_us")),
           bdur = json_number_value(json_object_get(ba, "dur_us"));
    cats = json_array();
    dbd = json_object();
    for (int k = 0; k < NCATS; k++) {
        json_array_append_new(cats, json_string(summary_categories[k]));
        json_object_set_new(dbd, summary_categories[k],
                            num_delta(json_object_get(json_object_get(aa, "breakdown_us"), summary_categories[k]),
                                      json_object_get(json_object_get(ba, "breakdown_us"), summary_categories[k])));
    }
    *out = json_pack(
        "{s:o,s:o,s:o,s:o,s:f,s:{s:f,s:o,s:o,s:o,s:o},s:o,s:o,s:o}", "a", side[0], "b", side[1], "categories", cats,
        "speedup", ad > 0 && bdur > 0 && d->steps[0] > 0 && d->steps[1] > 0 ? json_real(ad / bdur) : json_null(),
        "threshold", threshold, "delta", "dur_us", bdur - ad, "breakdown_us", dbd, "kernel_us",
        num_delta(json_object_get(side[0], "kernel_us"), json_object_get(side[1], "kernel_us")), "gpu_utilization",
        num_delta(json_object_get(side[0], "gpu_utilization"), json_object_get(side[1], "gpu_utilization")),
        "tensor_core_share",
        num_delta(json_object_get(side[0], "tensor_core_share"), json_object_get(side[1], "tensor_core_share")),
        "kernels", kc, "kernel_families", fc, "operators", oc);
    return *out ? 0 : err_set(e, ERR_INTERNAL, "diff: cannot build the overview");
fail:
    json_decref(side[0]);
    json_decref(side[1]);
    json_decref(kc);
    json_decref(fc);
    json_decref(oc);
    return rc;
}

int diff_report(struct diff *d, int top_n, json_t **out, struct err *e)
{
    static const struct {
        const char *key;
        enum diff_kind kind;
        int family;
    } parts[] = { { "top_kernels", DIFF_KERNELS, 0 },
                  { "top_kernel_families", DIFF_KERNELS, 1 },
                  { "top_operators", DIFF_OPERATORS, 0 } };
    json_t *rep, *t;
    int rc;

    if ((rc = diff_overview(d, DIFF_THRESHOLD_DEFAULT, &rep, e)) < 0) return rc;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        struct diff_query q = { .kind = parts[i].kind, .family = parts[i].family, .per_step = 1,
                                .threshold = DIFF_THRESHOLD_DEFAULT, .sort = 0, .desc = 1, .limit = top_n };
        if ((rc = diff_table(d, &q, &t, e)) < 0) {
            json_decref(rep);
            *out = NULL;
            return rc;
        }
        json_object_set(rep, parts[i].key, json_object_get(t, "rows"));
        json_decref(t);
    }
    *out = rep;
    return 0;
}

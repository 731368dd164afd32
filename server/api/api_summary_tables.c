/* api_summary_tables.c — GET /api/runs/{id}/operators and /kernels: the
 * operator and kernel tables, grouped and sorted through allow-lists (see
 * include/api/api_summary_tables.h). */
#define LOG_MODULE "api"
#include "api/api_summary_tables.h"

#include <assert.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_run.h"
#include "api/api_table.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "base/xmalloc.h"
#include "derive/diff.h"
#include "derive/rules.h"
#include "derive/summary.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/rundb.h"

/* ======================================================================== */
/* GET /api/runs/{id}/operators                                               */
/* ======================================================================== */

static const struct api_group_opt op_groups[] = {
    { "name", "GROUP BY name", { NULL, NULL, COL_TEXT }, "name ASC" },
    { "shape", "GROUP BY name, shape", { "shape", "shape", COL_TEXT }, "name ASC, shape ASC" },
    { "stack", "GROUP BY name, stack", { "stack", "stack", COL_TEXT }, "name ASC, stack ASC" },
};

enum { OP_SORT_HOST_SELF = 1, OP_SORT_DEVICE_SELF = 3 };
static const struct api_sort_opt op_sorts[] = {
    { "calls", "sum(calls)", 1 },
    { "host_self", "sum(host_self)", 1 },
    { "host_total", "sum(host_total)", 1 },
    { "device_self", "sum(dev_self)", 1 },
    { "device_total", "sum(dev_total)", 1 },
    { "name", "name", 0 },
};

static const struct api_col op_cols[] = {
    { "calls", "sum(calls)", COL_INT },
    { "host_self_us", "sum(host_self)", COL_US },
    { "host_total_us", "sum(host_total)", COL_US },
    { "device_self_us", "sum(dev_self)", COL_US },
    { "device_total_us", "sum(dev_total)", COL_US },
    { "tc_eligible", "max(tc_eligible)", COL_BOOL },
    { "tc_self_share", "CASE WHEN sum(dev_self) > 0 THEN CAST(sum(tc_self) AS REAL) / sum(dev_self) END", COL_REAL },
};

int api_summary_operators(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct api_binds b = { 0 };
    struct api_page pg;
    struct api_table t = { 0 };
    struct err e;
    size_t g, s;
    char *q = NULL;
    int64_t flags[4], totals[3], nsys = 0;
    json_t *out;
    int status;

    if (api_table_param_page(req, &pg, &e) < 0 || QPARAM_PICK(req, "group", op_groups, 0, &g, &e) < 0 ||
        QPARAM_PICK(req, "sort", op_sorts, SIZE_MAX, &s, &e) < 0 || api_table_param_like(req, &q, &e) < 0 ||
        api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0)
        goto fail;
    b.rank = r.rank;
    b.q = q;
    if (api_table_query_i64(&r,
                  "SELECT count(*), coalesce(max(dev_total > 0), 0), coalesce(max(shape <> ''), 0),"
                  " coalesce(max(stack <> ''), 0) FROM op_stat WHERE rank = :rank",
                  &b, flags, 4, &e) < 0 ||
        api_table_query_i64(&r, "SELECT coalesce((SELECT format = 'nsys' FROM rank WHERE rank = :rank), 0)", &b,
                            &nsys, 1, &e) < 0)
        goto fail;
    t.from_where = "FROM op_stat WHERE rank = :rank AND (:q IS NULL OR name LIKE :q ESCAPE '\\')";
    if (s == SIZE_MAX) s = flags[1] ? OP_SORT_DEVICE_SELF : OP_SORT_HOST_SELF;
    api_table_grouped(&t, &op_groups[g], op_cols, sizeof op_cols / sizeof op_cols[0], &op_sorts[s], &pg);

    out = api_table_head(&r, op_groups[g].key, op_sorts[s].key, &pg);
    json_object_set_new(out, "has_device", json_boolean(flags[1]));
    json_object_set_new(out, "has_shapes", json_boolean(flags[2]));
    json_object_set_new(out, "has_stacks", json_boolean(flags[3]));
    /* an Nsight export records no framework operators: its rows are the
     * CUDA API calls and NVTX ranges (derive/summary_walk.c) */
    json_object_set_new(out, "source", json_string(nsys ? "cuda_api_nvtx" : "operators"));
    if (!pg.csv) {
        if (api_table_query_i64(&r,
                      "SELECT coalesce(sum(calls), 0), coalesce(sum(host_self), 0), coalesce(sum(dev_self), 0)"
                      " FROM op_stat WHERE rank = :rank AND (:q IS NULL OR name LIKE :q ESCAPE '\\')",
                      &b, totals, 3, &e) < 0) {
            json_decref(out);
            goto fail;
        }
        json_object_set_new(out, "totals",
                            json_pack("{s:I,s:f,s:f}", "calls", (json_int_t)totals[0], "host_self_us",
                                      (double)totals[1] / 1000.0, "device_self_us", (double)totals[2] / 1000.0));
    }
    status = api_table_send(req, &r, &t, &b, &pg, "operators", out);
    api_run_close(&r);
    free(q);
    return status;
fail:
    api_run_close(&r);
    free(q);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* GET /api/runs/{id}/kernels                                                 */
/* ======================================================================== */

static const struct api_group_opt kernel_groups[] = {
    { "name", "GROUP BY name", { NULL, NULL, COL_TEXT }, "name ASC" },
    { "op", "GROUP BY name, op", { "op", "NULLIF(op, '')", COL_TEXT }, "name ASC, op ASC" },
};

#define K_MEAN "CAST(sum(total) AS REAL) / sum(calls)"
#define K_BPS "CASE WHEN sum(bps_dur) > 0 THEN sum(bps_w) / sum(bps_dur) END"
#define K_OCC "CASE WHEN sum(occ_dur) > 0 THEN sum(occ_w) / sum(occ_dur) / 100.0 END"

static const struct api_sort_opt kernel_sorts[] = {
    { "total", "sum(total)", 1 }, { "calls", "sum(calls)", 1 },    { "mean", K_MEAN, 1 },
    { "min", "min(min)", 1 },     { "max", "max(max)", 1 },        { "name", "name", 0 },
    { "share", "sum(total)", 1 }, { "occupancy", K_OCC, 1 },       { "blocks_per_sm", K_BPS, 1 },
};

static const struct api_col kernel_cols[] = {
    { "calls", "sum(calls)", COL_INT },
    { "total_us", "sum(total)", COL_US },
    { "mean_us", K_MEAN, COL_US },
    { "min_us", "min(min)", COL_US },
    { "max_us", "max(max)", COL_US },
    { "share", "CASE WHEN :ktotal > 0 THEN CAST(sum(total) AS REAL) / :ktotal END", COL_REAL },
    { "tensor_cores", "max(tc)", COL_BOOL },
    { "communication", "max(comm)", COL_BOOL },
    { "blocks_per_sm", K_BPS, COL_REAL },
    { "achieved_occupancy", K_OCC, COL_REAL },
    { "limiter", "max(NULLIF(limiter, ''))", COL_TEXT },
    { "family", "tb_kfamily(name)", COL_TEXT },
};

/* The rank's kernel families, most kernel time first: [{family, total_us}]
 * for the family filter (the compare page's families, diff_kernel_family). */
static int kernel_families(struct api_run *r, const struct api_binds *b, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    rc = rundb_prepare(r->db,
                       "SELECT tb_kfamily(name) AS f, sum(total) FROM kernel_stat WHERE rank = :rank"
                       " GROUP BY f ORDER BY 2 DESC, f ASC",
                       &st, e);
    if (rc < 0) return rc;
    api_table_bind(st, b);
    *out = json_array();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(*out, json_pack("{s:s?,s:f}", "family", (const char *)sqlite3_column_text(st, 0),
                                              "total_us", sqlite3_column_double(st, 1) / 1000.0));
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return 0;
    json_decref(*out);
    *out = NULL;
    return rundb_db_error(r->db, e, "run database (kernel families)");
}

int api_summary_kernels(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct api_binds b = { 0 };
    struct api_page pg;
    struct api_table t = { 0 };
    struct err e;
    size_t g, s;
    char *q = NULL;
    int64_t sums[2];
    json_t *out;
    int status;

    if (api_table_param_page(req, &pg, &e) < 0 || QPARAM_PICK(req, "group", kernel_groups, 0, &g, &e) < 0 ||
        QPARAM_PICK(req, "sort", kernel_sorts, 0, &s, &e) < 0 || api_table_param_like(req, &q, &e) < 0 ||
        api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0)
        goto fail;
    b.rank = r.rank;
    b.q = q;
    b.family = qparam_get(req, "family");
    if (b.family && !*b.family) b.family = NULL;
    diff_register_kfamily(r.db);
    if (api_table_query_i64(&r,
                  "SELECT coalesce(sum(total), 0), coalesce(sum(CASE WHEN tc THEN total ELSE 0 END), 0)"
                  " FROM kernel_stat WHERE rank = :rank",
                  &b, sums, 2, &e) < 0)
        goto fail;
    b.ktotal = sums[0];
    /* q matches the family too: cuBLAS GEMMs on H100 are nvjet_*, found by "gemm" */
    t.from_where = "FROM kernel_stat WHERE rank = :rank AND (:q IS NULL OR name LIKE :q ESCAPE '\\'"
                   " OR op LIKE :q ESCAPE '\\' OR tb_kfamily(name) LIKE :q ESCAPE '\\')"
                   " AND (:family IS NULL OR tb_kfamily(name) = :family)";
    api_table_grouped(&t, &kernel_groups[g], kernel_cols, sizeof kernel_cols / sizeof kernel_cols[0], &kernel_sorts[s],
                  &pg);

    out = api_table_head(&r, kernel_groups[g].key, kernel_sorts[s].key, &pg);
    json_object_set_new(out, "kernel_us", json_real((double)sums[0] / 1000.0));
    json_object_set_new(out, "tc_us", json_real((double)sums[1] / 1000.0));
    if (!pg.csv) {
        json_t *fams;
        if (kernel_families(&r, &b, &fams, &e) < 0) {
            json_decref(out);
            goto fail;
        }
        json_object_set_new(out, "families", fams);
    }
    status = api_table_send(req, &r, &t, &b, &pg, "kernels", out);
    api_run_close(&r);
    free(q);
    return status;
fail:
    api_run_close(&r);
    free(q);
    return http_send_err(conn, &e);
}


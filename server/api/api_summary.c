/* api_summary.c — GET /api/runs/{id}/overview: a rank's steps with their
 * time breakdown, GPUs, peak memory and notes (see
 * include/api/api_summary.h). */
#define LOG_MODULE "api"
#include "api/api_summary.h"

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
#include "derive/rules.h"
#include "derive/summary.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/rundb_stage.h"
#include "store/rundb.h"

#define NCATS 8 /* breakdown parts, summary_categories[0..7] */

/* ======================================================================== */
/* GET /api/runs/{id}/overview                                                */
/* ======================================================================== */

static int overview_steps(struct api_run *r, const struct api_binds *b, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *steps = json_array(), *avg = json_object();
    int64_t sum[NCATS] = { 0 }, sum_dur = 0, n = 0;
    int rc;

    json_object_set_new(out, "steps", steps);
    if (rundb_prepare(r->db,
                      "SELECT idx, name, ts, dur, host_ts, host_dur, kernel, memcpy, memset, comm, runtime, dataloader,"
                      " cpu_exec, other FROM step WHERE rank = :rank ORDER BY idx",
                      &st, e) < 0) {
        json_decref(avg);
        return e->code;
    }
    api_table_bind(st, b);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *bd = json_object(), *s;
        for (int k = 0; k < NCATS; k++) {
            int64_t v = sqlite3_column_int64(st, 6 + k);
            json_object_set_new(bd, summary_categories[k], json_real((double)v / 1000.0));
            sum[k] += v;
        }
        sum_dur += sqlite3_column_int64(st, 3);
        n++;
        s = json_object();
        json_object_set_new(s, "idx", json_integer(sqlite3_column_int64(st, 0)));
        json_object_set_new(s, "name", api_table_text_or_null(st, 1));
        json_object_set_new(s, "start_us", api_table_us_or_null(st, 2));
        json_object_set_new(s, "dur_us", api_table_us_or_null(st, 3));
        json_object_set_new(s, "host_start_us", api_table_us_or_null(st, 4));
        json_object_set_new(s, "host_dur_us", api_table_us_or_null(st, 5));
        json_object_set_new(s, "breakdown_us", bd);
        json_array_append_new(steps, s);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(avg);
        return rundb_db_error(r->db, e, "run database (steps)");
    }
    json_t *abd = json_object();
    for (int k = 0; k < NCATS; k++)
        json_object_set_new(abd, summary_categories[k], json_real(n ? (double)sum[k] / (double)n / 1000.0 : 0.0));
    json_object_set_new(avg, "dur_us", json_real(n ? (double)sum_dur / (double)n / 1000.0 : 0.0));
    json_object_set_new(avg, "breakdown_us", abd);
    json_object_set_new(out, "average", avg);
    return 0;
}

static int overview_gpus(struct api_run *r, const struct api_binds *b, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *gpus = json_array();
    int rc;

    json_object_set_new(out, "gpus", gpus);
    if (rundb_prepare(r->db,
                      "SELECT device, name, memory_bytes, cc, util, sm_eff, occupancy, tc_share, kernel_ns FROM gpu"
                      " WHERE rank = :rank ORDER BY device",
                      &st, e) < 0)
        return e->code;
    api_table_bind(st, b);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *g = json_object();
        json_object_set_new(g, "device", json_integer(sqlite3_column_int64(st, 0)));
        json_object_set_new(g, "name", api_table_text_or_null(st, 1));
        json_object_set_new(g, "memory_bytes", sqlite3_column_type(st, 2) == SQLITE_NULL
                                                   ? json_null()
                                                   : json_integer(sqlite3_column_int64(st, 2)));
        json_object_set_new(g, "compute_capability", api_table_text_or_null(st, 3));
        json_object_set_new(g, "utilization", api_table_real_or_null(st, 4));
        json_object_set_new(g, "sm_efficiency", api_table_real_or_null(st, 5));
        json_object_set_new(g, "achieved_occupancy", api_table_real_or_null(st, 6));
        json_object_set_new(g, "tensor_core_share", api_table_real_or_null(st, 7));
        json_object_set_new(g, "kernel_us", json_real((double)sqlite3_column_int64(st, 8) / 1000.0));
        json_array_append_new(gpus, g);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (gpus)");
}

int api_summary_overview(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r;
    struct api_binds b = { 0 };
    struct err e;
    json_t *out, *cats, *sum, *peaks, *notes, *v;
    const char *k;

    /* the overview leads with the findings: it waits for the rules too */
    if (api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0 || rundb_stage_check(r.db, "rules", &e) < 0) {
        api_run_close(&r);
        return http_send_err(conn, &e);
    }
    b.rank = r.rank;
    out = json_object();
    json_object_set_new(out, "rank", json_integer(r.rank));
    json_object_set(out, "ranks", r.ranks);
    json_object_set_new(out, "t0_us", r.t0 || r.t1 ? json_real((double)r.t0 / 1000.0) : json_null());
    cats = json_array();
    for (int i = 0; i < NCATS; i++) json_array_append_new(cats, json_string(summary_categories[i]));
    json_object_set_new(out, "categories", cats);
    if (overview_gpus(&r, &b, out, &e) < 0 || overview_steps(&r, &b, out, &e) < 0 ||
        api_table_summary_json(&r, &b, &sum, &e) < 0) {
        json_decref(out);
        api_run_close(&r);
        return http_send_err(conn, &e);
    }
    /* this rank's findings and the run's; null for a run stored before the
     * rules existed (the page says to re-import it) */
    json_t *recs = NULL;
    if (rules_findings(r.db, r.rank, &recs, &e) < 0 && e.code != ERR_INVALID) {
        json_decref(sum);
        json_decref(out);
        api_run_close(&r);
        return http_send_err(conn, &e);
    }
    json_object_set_new(out, "recommendations", recs ? recs : json_null());
    api_run_close(&r);
    peaks = json_object();
    json_object_set_new(out, "peak_memory_cpu_bytes", json_null());
    json_object_foreach(json_object_get(sum, "peak_memory"), k, v) {
        json_t *bytes = json_object_get(v, "bytes");
        if (!json_is_integer(bytes)) continue;
        if (strcmp(k, "cpu") == 0) json_object_set(out, "peak_memory_cpu_bytes", bytes);
        else json_object_set(peaks, k, bytes);
    }
    json_object_set_new(out, "peak_memory_bytes", peaks);
    /* compute utilization (collectives left out) beside each GPU's busy time */
    size_t gi;
    json_t *gpu;
    json_array_foreach(json_object_get(out, "gpus"), gi, gpu) {
        char key[16];
        snprintf(key, sizeof key, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(gpu, "device")));
        json_t *cu = json_object_get(json_object_get(sum, "compute_utilization"), key);
        json_object_set_new(gpu, "compute_utilization", cu ? json_copy(cu) : json_null());
    }
    notes = json_array();
    if (json_is_array(json_object_get(sum, "notes"))) json_array_extend(notes, json_object_get(sum, "notes"));
    json_object_set_new(out, "notes", notes);
    json_decref(sum);
    return http_send_json(conn, 200, out);
}


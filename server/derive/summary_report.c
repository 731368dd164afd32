#define LOG_MODULE "analysis"
#include "derive/summary_report.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "store/model.h"
#include "store/rundb.h"
#include "derive/rules.h"
#include "derive/summary.h"


/* Adds each GPU's compute utilization (without collectives; summary's
 * "compute_utilization" by device) to report r's gpus, null when the run
 * predates it. */
static void summary_report_compute(json_t *r, json_t *by_dev)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(r, "gpus"), i, g) {
        char key[16];
        snprintf(key, sizeof key, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(g, "device")));
        json_t *v = json_object_get(by_dev, key);
        json_object_set_new(g, "compute_utilization", v ? json_copy(v) : json_null());
    }
}

static json_t *col_num_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_real(sqlite3_column_double(st, i));
}

static int report_rank(sqlite3 *db, int rank, int top_n, json_t *r, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, n = 0;
    double avg[9] = { 0 }, avg_dur = 0;
    json_t *steps = json_array();
    json_object_set_new(r, "steps", steps);

#define PREP(sql)                                                                                                      \
    do {                                                                                                               \
        sqlite3_finalize(st);                                                                                          \
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)                                                   \
            return rundb_db_error(db, e, "analysis (report)");                                                         \
        sqlite3_bind_int(st, 1, rank);                                                                                 \
    } while (0)

    PREP("SELECT name, ts, dur, host_ts, host_dur, kernel, memcpy, memset, comm, runtime, dataloader, cpu_exec,"
         " other FROM step WHERE rank = ? ORDER BY idx");
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *bd = json_object();
        for (int k = 0; k < 8; k++) {
            double v = (double)sqlite3_column_int64(st, 5 + k) / 1000.0;
            json_object_set_new(bd, summary_categories[k], json_real(v));
            avg[k] += v;
        }
        avg_dur += (double)sqlite3_column_int64(st, 2) / 1000.0;
        json_array_append_new(steps, json_pack("{s:s,s:f,s:f,s:f,s:f,s:o}", "name",
                                               (const char *)sqlite3_column_text(st, 0), "start_us",
                                               (double)sqlite3_column_int64(st, 1) / 1000.0, "dur_us",
                                               (double)sqlite3_column_int64(st, 2) / 1000.0, "host_start_us",
                                               (double)sqlite3_column_int64(st, 3) / 1000.0, "host_dur_us",
                                               (double)sqlite3_column_int64(st, 4) / 1000.0, "breakdown_us", bd));
        n++;
    }
    json_t *abd = json_object();
    for (int k = 0; k < 8; k++) json_object_set_new(abd, summary_categories[k], json_real(n ? avg[k] / n : 0));
    json_object_set_new(r, "average", json_pack("{s:f,s:o}", "dur_us", n ? avg_dur / n : 0.0, "breakdown_us", abd));

    json_t *gpus = json_array(), *best = NULL;
    int64_t best_k = -1;
    PREP("SELECT device, name, memory_bytes, cc, util, sm_eff, occupancy, tc_share, kernel_ns FROM gpu"
         " WHERE rank = ? ORDER BY device");
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1), *cc = (const char *)sqlite3_column_text(st, 3);
        json_t *g = json_pack("{s:i,s:s?,s:o,s:s?,s:o,s:o,s:o,s:o,s:f}", "device", sqlite3_column_int(st, 0),
                              "name", name, "memory_bytes",
                              sqlite3_column_type(st, 2) == SQLITE_NULL ? json_null()
                                                                        : json_integer(sqlite3_column_int64(st, 2)),
                              "compute_capability", cc, "utilization", col_num_or_null(st, 4), "sm_efficiency",
                              col_num_or_null(st, 5), "achieved_occupancy", col_num_or_null(st, 6),
                              "tensor_core_share", col_num_or_null(st, 7), "kernel_us",
                              (double)sqlite3_column_int64(st, 8) / 1000.0);
        json_array_append_new(gpus, g);
        if (sqlite3_column_int64(st, 8) > best_k) {
            best_k = sqlite3_column_int64(st, 8);
            best = g;
        }
    }
    json_object_set_new(r, "gpus", gpus);
    if (best) {
        json_object_set_new(r, "device",
                            json_pack("{s:O,s:O,s:O}", "name", json_object_get(best, "name"), "memory_bytes",
                                      json_object_get(best, "memory_bytes"), "compute_capability",
                                      json_object_get(best, "compute_capability")));
        json_object_set(r, "gpu_utilization", json_object_get(best, "utilization"));
        json_object_set(r, "sm_efficiency", json_object_get(best, "sm_efficiency"));
        json_object_set(r, "achieved_occupancy", json_object_get(best, "achieved_occupancy"));
        json_object_set(r, "tensor_core_share", json_object_get(best, "tensor_core_share"));
    } else {
        json_object_set_new(r, "device", json_null());
        json_object_set_new(r, "gpu_utilization", json_null());
        json_object_set_new(r, "sm_efficiency", json_null());
        json_object_set_new(r, "achieved_occupancy", json_null());
        json_object_set_new(r, "tensor_core_share", json_null());
    }

    json_t *peaks = json_object(), *notes = json_array();
    PREP("SELECT summary FROM analysis WHERE rank = ?");
    if (sqlite3_step(st) == SQLITE_ROW) {
        json_t *sum = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(sum, "peak_memory"), k, v) {
            if (strcmp(k, "cpu") == 0) json_object_set(r, "peak_memory_cpu_bytes", json_object_get(v, "bytes"));
            else json_object_set(peaks, k, json_object_get(v, "bytes"));
        }
        json_array_extend(notes, json_object_get(sum, "notes"));
        summary_report_compute(r, json_object_get(sum, "compute_utilization"));
        json_decref(sum);
    }
    /* the rank's figure is its busiest GPU's, as gpu_utilization */
    json_t *cu = best ? json_object_get(best, "compute_utilization") : NULL;
    json_object_set_new(r, "compute_utilization", cu ? json_copy(cu) : json_null());
    json_object_set_new(r, "peak_memory_bytes", peaks);
    json_object_set_new(r, "notes", notes);

    json_t *tk = json_array();
    PREP("SELECT name, sum(calls), sum(total), max(tc), max(comm) FROM kernel_stat WHERE rank = ?"
         " GROUP BY name ORDER BY sum(total) DESC LIMIT ?");
    sqlite3_bind_int(st, 2, top_n);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(tk, json_pack("{s:s,s:I,s:f,s:b,s:b}", "name", (const char *)sqlite3_column_text(st, 0),
                                            "calls", (json_int_t)sqlite3_column_int64(st, 1), "total_us",
                                            (double)sqlite3_column_int64(st, 2) / 1000.0, "tensor_cores",
                                            sqlite3_column_int(st, 3), "communication", sqlite3_column_int(st, 4)));
    json_object_set_new(r, "top_kernels", tk);

    json_t *to = json_array();
    PREP("SELECT name, sum(calls), sum(host_self), sum(host_total), sum(dev_self), sum(dev_total) FROM op_stat"
         " WHERE rank = ? GROUP BY name ORDER BY sum(dev_self) DESC, sum(host_self) DESC LIMIT ?");
    sqlite3_bind_int(st, 2, top_n);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(to, json_pack("{s:s,s:I,s:f,s:f,s:f,s:f}", "name",
                                            (const char *)sqlite3_column_text(st, 0), "calls",
                                            (json_int_t)sqlite3_column_int64(st, 1), "host_self_us",
                                            (double)sqlite3_column_int64(st, 2) / 1000.0, "host_total_us",
                                            (double)sqlite3_column_int64(st, 3) / 1000.0, "device_self_us",
                                            (double)sqlite3_column_int64(st, 4) / 1000.0, "device_total_us",
                                            (double)sqlite3_column_int64(st, 5) / 1000.0));
    json_object_set_new(r, "top_operators", to);
#undef PREP
    sqlite3_finalize(st);
    return rc;
}

int summary_report(sqlite3 *db, const char *run_name, int top_n, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT rank FROM analysis ORDER BY rank", -1, &st, NULL) != SQLITE_OK)
        return err_set(e, ERR_INVALID, "this run has no analysis tables (imported by an older version; import it "
                                      "again)");
    json_t *ranks = json_array();
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        json_t *r = json_pack("{s:i}", "rank", sqlite3_column_int(st, 0));
        json_array_append_new(ranks, r);
        rc = report_rank(db, sqlite3_column_int(st, 0), top_n, r, e);
    }
    sqlite3_finalize(st);
    if (rc) {
        json_decref(ranks);
        return rc;
    }
    *out = json_pack("{s:{s:s,s:I},s:o,s:[]}", "run", "name", run_name ? run_name : "", "ranks",
                     (json_int_t)json_array_size(ranks), "ranks", ranks, "recommendations");
    return 0;
}


/* The largest number in a report's peak_memory_bytes ({"<dev>": bytes}). */
static double peak_of(json_t *peaks)
{
    const char *k;
    json_t *v;
    double best = -1;
    json_object_foreach(peaks, k, v) {
        double b = json_is_number(v) ? json_number_value(v) : json_number_value(json_object_get(v, "bytes"));
        if (b > best) best = b;
    }
    return best;
}

/* The mean of a rank-level figure over the ranks that have it; null when none does. */
static json_t *mean_of(json_t *ranks, const char *key)
{
    size_t i, n = 0;
    json_t *r;
    double sum = 0;
    json_array_foreach(ranks, i, r) {
        json_t *v = json_object_get(r, key);
        if (json_is_number(v)) sum += json_number_value(v), n++;
    }
    return n ? json_real(sum / (double)n) : json_null();
}

static json_t *figures_of(json_t *rep, json_t *findings)
{
    json_t *ranks = json_object_get(rep, "ranks"), *r, *slow = NULL;
    size_t i;
    double peak = -1, slow_us = -1;
    json_array_foreach(ranks, i, r) {
        double d = json_number_value(json_object_get(json_object_get(r, "average"), "dur_us"));
        if (json_array_size(json_object_get(r, "steps")) && d > slow_us) slow_us = d, slow = r;
        double p = peak_of(json_object_get(r, "peak_memory_bytes"));
        if (p > peak) peak = p;
    }
    json_t *avg = slow ? json_object_get(slow, "average") : NULL, *top = json_array_get(findings, 0);
    json_t *f = json_object();
    /* the slowest rank sets the pace of a synchronous step */
    json_object_set_new(f, "avg_step_us", slow ? json_real(slow_us) : json_null());
    json_object_set_new(f, "breakdown_us", avg ? json_deep_copy(json_object_get(avg, "breakdown_us")) : json_null());
    json_object_set_new(f, "steps", json_integer(slow ? (json_int_t)json_array_size(json_object_get(slow, "steps")) : 0));
    json_object_set_new(f, "ranks", json_integer((json_int_t)json_array_size(ranks)));
    json_object_set_new(f, "gpu_utilization", mean_of(ranks, "gpu_utilization"));
    json_object_set_new(f, "tensor_core_share", mean_of(ranks, "tensor_core_share"));
    json_object_set_new(f, "peak_memory_bytes", peak >= 0 ? json_integer((json_int_t)peak) : json_null());
    json_object_set_new(f, "findings", json_integer((json_int_t)json_array_size(findings)));
    json_object_set_new(f, "top_finding",
                        top ? json_pack("{s:O?,s:O?,s:O?,s:O?}", "id", json_object_get(top, "id"), "title",
                                        json_object_get(top, "title"), "severity", json_object_get(top, "severity"),
                                        "saving_us", json_object_get(top, "saving_us"))
                            : json_null());
    return f;
}

/* Copies header key from (when present) to to[as]. */
static void copy_key(json_t *to, const char *as, json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);
    if (v && !json_is_null(v)) json_object_set(to, as, v);
}

/* Kineto writes CUDA versions as 1000 x major + 10 x minor (13000 = "13.0"). */
static void cuda_version(json_t *to, const char *as, json_t *header, const char *key)
{
    json_t *v = json_object_get(header, key);
    if (json_is_integer(v) && json_integer_value(v) > 0) {
        json_int_t n = json_integer_value(v);
        json_object_set_new(to, as, json_sprintf("%d.%d", (int)(n / 1000), (int)(n % 1000 / 10)));
    }
}

/* The trace's own facts from rank 0's stored header (rank.header, device,
 * distributed) and the number of ranks and GPUs. */
static int trace_facts(sqlite3 *db, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *t = json_object();
    int nranks = 0;
    if (sqlite3_prepare_v2(db, "SELECT format, device, distributed, header FROM rank ORDER BY rank", -1, &st, NULL) !=
        SQLITE_OK) {
        json_decref(t);
        return rundb_db_error(db, e, "analysis (trace facts)");
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (nranks++) continue;
        const char *fmt = (const char *)sqlite3_column_text(st, 0);
        json_t *dev = json_loads(sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "", 0, NULL);
        json_t *dist = json_loads(sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "", 0, NULL);
        json_t *hdr = json_loads(sqlite3_column_text(st, 3) ? (const char *)sqlite3_column_text(st, 3) : "", 0, NULL);
        if (fmt) json_object_set_new(t, "format", json_string(fmt));
        copy_key(t, "schema_version", hdr, "schemaVersion");
        cuda_version(t, "cuda_runtime", hdr, "cuda_runtime_version");
        cuda_version(t, "cuda_driver", hdr, "cuda_driver_version");
        copy_key(t, "cupti_version", hdr, "cupti_version");
        copy_key(t, "gpu", dev, "name");
        copy_key(t, "gpu_memory_bytes", dev, "totalGlobalMem");
        json_t *props = json_object_get(hdr, "deviceProperties");
        if (json_array_size(props)) json_object_set_new(t, "gpus", json_integer((json_int_t)json_array_size(props)));
        copy_key(t, "world_size", dist, "world_size");
        copy_key(t, "backend", dist, "backend");
        static const char *const flags[] = { "with_stack", "record_shapes", "profile_memory", "with_flops" };
        for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
            json_t *v = json_object_get(hdr, flags[i]);
            if (v) json_object_set_new(t, flags[i], json_boolean(json_is_true(v) || json_integer_value(v) != 0));
        }
        json_decref(dev);
        json_decref(dist);
        json_decref(hdr);
    }
    sqlite3_finalize(st);
    json_object_set_new(t, "ranks", json_integer(nranks));
    if (!json_object_get(t, "world_size")) json_object_set_new(t, "world_size", json_integer(nranks));
    *out = t;
    return 0;
}

int summary_report_catalog(sqlite3 *db, json_t **figures, json_t **trace, struct err *e)
{
    json_t *rep = NULL, *findings = NULL;
    *figures = *trace = NULL;
    int rc = summary_report(db, NULL, 0, &rep, e);
    if (rc == 0 && rules_findings(db, -1, &findings, e) != 0) {
        findings = json_array(); /* a run imported before recommendations: figures without them */
        err_clear(e);
    }
    if (rc == 0) rc = trace_facts(db, trace, e);
    if (rc == 0) *figures = figures_of(rep, findings);
    json_decref(rep);
    json_decref(findings);
    return rc;
}

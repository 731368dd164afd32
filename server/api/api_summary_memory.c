/* api_summary_memory.c — GET /api/runs/{id}/memory and /memory/events:
 * one device's downsampled curve and the allocations of a window (see
 * include/api/api_summary_memory.h). */
#define LOG_MODULE "api"
#include "api/api_summary_memory.h"

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
#include "store/rundb.h"

#define POINTS_DEFAULT 800
#define POINTS_MIN 10
#define POINTS_MAX 5000

/* ======================================================================== */
/* Memory: devices, the curve, allocations                                    */
/* ======================================================================== */

#define DEVICE_MAX 4096

/* A memory device: the CPU (dev_type 0, any dev_id) or GPU N: dev_id N of
 * any other device type (CUDA 1, HIP 6 ...), as analysis.c keys its peaks.
 * In SQL: dev_type BETWEEN :dt_lo AND :dt_hi. */
struct device {
    int dev_type, dev_id; /* dev_id -1 for the CPU */
};

static void device_key(const struct device *d, char *out, size_t n)
{
    if (d->dev_type == 0) snprintf(out, n, "cpu");
    else snprintf(out, n, "%d", d->dev_id);
}

static int param_device(struct http_req *req, struct device *d, int *given, struct err *e)
{
    const char *v = qparam_get(req, "device");
    long long id;

    *given = v != NULL;
    if (!v) return 0;
    if (strcmp(v, "cpu") == 0) {
        d->dev_type = 0;
        d->dev_id = -1;
        return 0;
    }
    if (qparam_int(req, "device", 0, 0, DEVICE_MAX, &id, e) < 0)
        return err_set(e, ERR_INVALID, "parameter 'device' must be 'cpu' or a GPU number from 0 to %d", DEVICE_MAX);
    d->dev_type = 1;
    d->dev_id = (int)id;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The devices that have memory samples on the rank, from its analysis
 * summary (peak_memory keys: GPU numbers, then "cpu"), as the JSON list
 * of the /memory answer. OUT *first: the default device (the first GPU,
 * else the CPU). */
static int memory_devices(struct api_run *r, const struct api_binds *b, json_t **out, struct device *first, struct err *e)
{
    json_t *sum, *peaks, *v, *list;
    sqlite3_stmt *cap = NULL;
    int ids[64], nids = 0, has_cpu;
    const char *k;

    if (api_table_summary_json(r, b, &sum, e) < 0) return e->code;
    list = json_array();
    peaks = json_object_get(sum, "peak_memory");
    json_object_foreach(peaks, k, v) {
        if (strcmp(k, "cpu") == 0 || !*k || strspn(k, "0123456789") != strlen(k) || strlen(k) > 4) continue;
        if (nids < (int)(sizeof ids / sizeof ids[0])) ids[nids++] = atoi(k);
    }
    xqsort(ids, (size_t)nids, sizeof ids[0], cmp_int);
    has_cpu = json_object_get(peaks, "cpu") != NULL;
    first->dev_type = nids ? 1 : 0;
    first->dev_id = nids ? ids[0] : -1;
    if (rundb_prepare(r->db, "SELECT memory_bytes FROM gpu WHERE rank = :rank AND device = :di", &cap, e) < 0) {
        json_decref(sum);
        json_decref(list);
        return e->code;
    }
    for (int i = 0; i <= nids; i++) {
        char key[16];
        json_t *p, *d;
        if (i == nids && !has_cpu) break;
        if (i < nids) snprintf(key, sizeof key, "%d", ids[i]);
        else snprintf(key, sizeof key, "cpu");
        p = json_object_get(peaks, key);
        d = json_object();
        json_object_set_new(d, "id", json_string(key));
        json_object_set_new(d, "label", i < nids ? json_sprintf("GPU %d", ids[i]) : json_string("CPU"));
        json_object_set(d, "peak_bytes", json_is_integer(json_object_get(p, "bytes")) ? json_object_get(p, "bytes")
                                                                                       : json_null());
        json_object_set_new(d, "peak_us", json_is_integer(json_object_get(p, "ts"))
                                              ? json_real((double)json_integer_value(json_object_get(p, "ts")) /
                                                          1000.0)
                                              : json_null());
        json_object_set_new(d, "memory_bytes", json_null());
        if (i < nids) {
            sqlite3_reset(cap);
            sqlite3_bind_int(cap, sqlite3_bind_parameter_index(cap, ":rank"), r->rank);
            sqlite3_bind_int(cap, sqlite3_bind_parameter_index(cap, ":di"), ids[i]);
            if (sqlite3_step(cap) == SQLITE_ROW && sqlite3_column_type(cap, 0) != SQLITE_NULL)
                json_object_set_new(d, "memory_bytes", json_integer(sqlite3_column_int64(cap, 0)));
        }
        json_array_append_new(list, d);
    }
    sqlite3_finalize(cap);
    json_decref(sum);
    *out = list;
    return 0;
}

/* 1 if the device list of memory_devices names d. */
static int device_listed(json_t *devices, const struct device *d)
{
    char key[16];
    size_t i;
    json_t *v;

    device_key(d, key, sizeof key);
    json_array_foreach(devices, i, v) {
        if (strcmp(json_string_value(json_object_get(v, "id")), key) == 0) return 1;
    }
    return 0;
}

/* Settles ?device= (default: the first GPU, else the CPU) for /memory and
 * /memory/events. ERR_NOT_FOUND when an explicit device has no samples.
 * OUT *devices (may be NULL): the device list, owned by caller. */
static int memory_device(struct http_req *req, struct api_run *r, struct api_binds *b, json_t **devices, struct err *e)
{
    struct device d = { 0, -1 }, first = { 0, -1 };
    int given;
    json_t *list;
    char key[16];

    if (param_device(req, &d, &given, e) < 0 || memory_devices(r, b, &list, &first, e) < 0) return e->code;
    if (!given) d = first;
    if (given && !device_listed(list, &d)) {
        json_decref(list);
        device_key(&d, key, sizeof key);
        return err_set(e, ERR_NOT_FOUND, "rank %d has no memory events for device '%s'", r->rank, key);
    }
    b->dev_type = d.dev_type;
    b->dev_id = d.dev_id;
    if (devices) *devices = list;
    else json_decref(list);
    return 0;
}

/* The window [start, end] in ns from ?start_us= and ?end_us=; when absent
 * they default to the rank's span (for the curve) or stay open (for the
 * allocation list, where def is 0). */
static int param_window(struct http_req *req, struct api_run *r, struct api_binds *b, int def, struct err *e)
{
    if (qparam_us(req, "start_us", &b->start, &b->has_start, e) < 0 ||
        qparam_us(req, "end_us", &b->end, &b->has_end, e) < 0)
        return e->code;
    if (b->has_start && b->has_end && b->end <= b->start)
        return err_set(e, ERR_INVALID, "parameter 'end_us' must be greater than start_us");
    if (!def) return 0;
    if (!b->has_start) b->start = b->has_end && b->end < r->t0 ? b->end - 1 : r->t0;
    if (!b->has_end) b->end = r->t1 > b->start ? r->t1 : b->start + 1;
    b->has_start = b->has_end = 1;
    return 0;
}

/* One memory sample; seq orders samples that share a timestamp. */
struct sample {
    int64_t ts, alloc, reserved;
    int64_t seq;
};

struct curve {
    json_t *ts, *alloc, *reserved; /* borrowed from the answer */
    int have;                      /* a bucket is open */
    int64_t bucket;
    struct sample first, max, last;
};

static void curve_put(struct curve *c, const struct sample *s)
{
    json_array_append_new(c->ts, json_real((double)s->ts / 1000.0));
    json_array_append_new(c->alloc, json_integer(s->alloc));
    json_array_append_new(c->reserved, s->reserved >= 0 ? json_integer(s->reserved) : json_null());
}

/* Emits the open bucket's first, max and last samples, in time order and
 * each once (first.seq <= max.seq <= last.seq). */
static void curve_flush(struct curve *c)
{
    if (!c->have) return;
    curve_put(c, &c->first);
    if (c->max.seq != c->first.seq && c->max.seq != c->last.seq) curve_put(c, &c->max);
    if (c->last.seq != c->first.seq) curve_put(c, &c->last);
    c->have = 0;
}

static void curve_add(struct curve *c, const struct sample *s, int64_t bucket)
{
    if (c->have && bucket != c->bucket) curve_flush(c);
    if (!c->have) {
        c->have = 1;
        c->bucket = bucket;
        c->first = c->max = *s;
    } else if (s->alloc > c->max.alloc) {
        c->max = *s;
    }
    c->last = *s;
}

/* Reads the curve of b's device over [b->start, b->end] into points
 * buckets; the sample in force at start (the last one before it) opens the
 * curve at start. Fills curve arrays and *peak (bytes < 0: no sample). */
static int memory_curve(struct api_run *r, const struct api_binds *b, long long points, struct curve *c, struct sample *peak,
                        struct err *e)
{
    static const char before_sql[] =
        "SELECT ts, total_alloc, total_reserved FROM mem WHERE rank = :rank AND ts < :start"
        " AND dev_type BETWEEN :dt_lo AND :dt_hi AND (:di IS NULL OR dev_id = :di) AND total_alloc >= 0"
        " ORDER BY ts DESC, id DESC LIMIT 1";
    static const char range_sql[] =
        "SELECT ts, total_alloc, total_reserved FROM mem WHERE rank = :rank AND ts >= :start AND ts <= :end"
        " AND dev_type BETWEEN :dt_lo AND :dt_hi AND (:di IS NULL OR dev_id = :di) AND total_alloc >= 0"
        " ORDER BY ts, id";
    sqlite3_stmt *st;
    struct sample s;
    double span = (double)(b->end - b->start);
    int64_t seq = 0;
    int rc;

    peak->alloc = -1;
    peak->ts = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (rundb_prepare(r->db, pass == 0 ? before_sql : range_sql, &st, e) < 0) return e->code;
        api_table_bind(st, b);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t bucket;
            s.ts = pass == 0 ? b->start : sqlite3_column_int64(st, 0);
            s.alloc = sqlite3_column_int64(st, 1);
            s.reserved = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
            s.seq = seq++;
            bucket = span > 0 ? (int64_t)((double)(s.ts - b->start) / span * (double)points) : 0;
            if (bucket >= points) bucket = points - 1;
            if (bucket < 0) bucket = 0;
            curve_add(c, &s, bucket);
            if (s.alloc > peak->alloc) *peak = s;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return rundb_db_error(r->db, e, "run database (memory)");
    }
    curve_flush(c);
    return 0;
}

static int memory_steps(struct api_run *r, const struct api_binds *b, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *steps = json_array();
    int rc;

    json_object_set_new(out, "steps", steps);
    if (rundb_prepare(r->db,
                      "SELECT name, host_ts, host_ts + host_dur FROM step WHERE rank = :rank AND host_ts <= :end"
                      " AND host_ts + host_dur >= :start ORDER BY idx",
                      &st, e) < 0)
        return e->code;
    api_table_bind(st, b);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *s = json_object();
        json_object_set_new(s, "name", api_table_text_or_null(st, 0));
        json_object_set_new(s, "start_us", api_table_us_or_null(st, 1));
        json_object_set_new(s, "end_us", api_table_us_or_null(st, 2));
        json_array_append_new(steps, s);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (steps)");
}

int api_summary_memory(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct api_binds b = { 0 };
    struct curve c = { 0 };
    struct sample peak;
    struct err e;
    long long points;
    json_t *out = NULL, *devices = NULL, *curve;
    char key[16];

    if (qparam_int(req, "points", POINTS_DEFAULT, POINTS_MIN, POINTS_MAX, &points, &e) < 0 ||
        api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0)
        goto fail;
    b.rank = r.rank;
    if (param_window(req, &r, &b, 1, &e) < 0 || memory_device(req, &r, &b, &devices, &e) < 0) goto fail;
    out = json_object();
    device_key(&(struct device){ b.dev_type, b.dev_id }, key, sizeof key);
    json_object_set_new(out, "rank", json_integer(r.rank));
    json_object_set_new(out, "device", json_string(key));
    json_object_set_new(out, "devices", devices);
    json_object_set_new(out, "start_us", json_real((double)b.start / 1000.0));
    json_object_set_new(out, "end_us", json_real((double)b.end / 1000.0));
    curve = json_object();
    c.ts = json_array();
    c.alloc = json_array();
    c.reserved = json_array();
    json_object_set_new(curve, "ts_us", c.ts);
    json_object_set_new(curve, "allocated", c.alloc);
    json_object_set_new(curve, "reserved", c.reserved);
    json_object_set_new(out, "curve", curve);
    if (memory_curve(&r, &b, points, &c, &peak, &e) < 0 || memory_steps(&r, &b, out, &e) < 0) goto fail;
    json_object_set_new(out, "peak",
                        peak.alloc >= 0 ? json_pack("{s:I,s:f}", "bytes", (json_int_t)peak.alloc, "ts_us",
                                                    (double)peak.ts / 1000.0)
                                        : json_pack("{s:n,s:n}", "bytes", "ts_us"));
    api_run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    json_decref(out);
    api_run_close(&r);
    return http_send_err(conn, &e);
}

/* ------------------------------------------------------------------------ */

static const struct api_sort_opt event_sorts[] = {
    { "bytes", "a.bytes", 1 },
    { "alloc", "a.alloc_ts", 1 },
    { "free", "a.free_ts", 1 },
    { "lifetime", "a.free_ts - a.alloc_ts", 1 },
    { "op", "s.s", 0 },
};

static const struct api_col event_cols[] = {
    { "op", "s.s", COL_TEXT },
    { "bytes", "a.bytes", COL_INT },
    { "addr", "a.addr", COL_INT },
    { "alloc_us", "a.alloc_ts", COL_US },
    { "free_us", "a.free_ts", COL_US },
    { "lifetime_us", "a.free_ts - a.alloc_ts", COL_US },
};

int api_summary_memory_events(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct api_binds b = { 0 };
    struct api_page pg;
    struct api_table t = { 0 };
    struct err e;
    size_t s;
    char *q = NULL, key[16];
    long long min_bytes;
    struct sbuf where = { 0 }, from = { 0 }, count = { 0 };
    json_t *out;
    int status;

    if (api_table_param_page(req, &pg, &e) < 0 || QPARAM_PICK(req, "sort", event_sorts, 0, &s, &e) < 0 ||
        qparam_int(req, "min_bytes", 0, 0, INT64_MAX / 2, &min_bytes, &e) < 0 || api_table_param_like(req, &q, &e) < 0 ||
        api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0)
        goto fail;
    b.rank = r.rank;
    b.q = q;
    b.min_bytes = min_bytes;
    if (param_window(req, &r, &b, 0, &e) < 0 || memory_device(req, &r, &b, NULL, &e) < 0) goto fail;
    /* Allocations of the device whose lifetimes overlap [start, end]: one
     * never freed lives to the end, a free never allocated since the
     * beginning. Only the conditions asked for are added (fixed fragments),
     * so that the plain count reads the index alone. */
    sbuf_add(&where, " WHERE a.rank = :rank AND a.dev_type BETWEEN :dt_lo AND :dt_hi");
    if (b.dev_id >= 0) sbuf_add(&where, " AND a.dev_id = :di");
    if (b.has_end) sbuf_add(&where, " AND (a.alloc_ts IS NULL OR a.alloc_ts <= :end)");
    if (b.has_start) sbuf_add(&where, " AND (a.free_ts IS NULL OR a.free_ts >= :start)");
    if (min_bytes > 0) sbuf_add(&where, " AND abs(a.bytes) >= :min_bytes");
    sbuf_add(&from, "FROM mem_alloc a LEFT JOIN str s ON s.id = a.op AND a.op <> 0");
    sbuf_add(&from, where.p);
    if (q) sbuf_add(&from, " AND s.s LIKE :q ESCAPE '\\'");
    sbuf_add(&count, "FROM mem_alloc a");
    sbuf_add(&count, where.p);
    t.from_where = from.p;
    t.count_from = q ? from.p : count.p;
    t.group_by = "";
    api_table_add_cols(&t, event_cols, sizeof event_cols / sizeof event_cols[0]);
    if (!pg.order_given) pg.desc = event_sorts[s].desc;
    api_table_order(&t, event_sorts[s].expr, pg.desc, "a.id ASC");

    out = api_table_head(&r, NULL, event_sorts[s].key, &pg);
    device_key(&(struct device){ b.dev_type, b.dev_id }, key, sizeof key);
    json_object_set_new(out, "device", json_string(key));
    status = api_table_send(req, &r, &t, &b, &pg, "memory", out);
    goto out;
fail:
    status = http_send_err(conn, &e);
out:
    api_run_close(&r);
    free(q);
    free(where.p);
    free(from.p);
    free(count.p);
    return status;
}


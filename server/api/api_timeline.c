/* api_timeline.c — the timeline read API's track list and viewport:
 * /api/runs/{id}/timeline/tracks and /timeline (see
 * include/api/api_timeline.h). */
#define LOG_MODULE "api"
#include "api/api_timeline.h"

#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_run.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "base/xmalloc.h"
#include "derive/timeline.h"
#include "derive/timeline_query.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/model.h"
#include "store/rundb.h"

#define JSON_TYPE "application/json"

/* ======================================================================== */
/* JSON text (the viewport answer is large and all numbers)                  */
/* ======================================================================== */

/* digits: significant digits of a non-integer (17: exact; fewer where the
 * value only sets a pixel). */
static void sb_real(struct sbuf *b, double v, int digits)
{
    char tmp[40];
    if (!isfinite(v)) {
        sbuf_add(b, "null");
        return;
    }
    if (v == floor(v) && fabs(v) < 1e15) { /* byte counts: most counter values */
        sbuf_int(b, (int64_t)v, 0);
        return;
    }
    snprintf(tmp, sizeof tmp, "%.*g", digits, v);
    sbuf_add(b, tmp);
}

/* A bucket this wide (ns) or wider is coarse: a counter point stands for a
 * pixel, so its time is sent in whole µs rounded to at most a thousandth
 * of the bucket, and its values with 7 significant digits (the whole-run
 * answer of a 10 M-event run: 301 → 256 kB gzipped). */
#define COARSE_BUCKET_NS 1000000

/* A JSON string; < > & are escaped too, so the text is inert in HTML. */
static void sb_str(struct sbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t i, run = 0;

    sbuf_add(b, "\"");
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') continue;
        sbuf_addn(b, s + run, i - run);
        run = i + 1;
        if (c == '"') sbuf_add(b, "\\\"");
        else if (c == '\\') sbuf_add(b, "\\\\");
        else {
            char u[7] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0 };
            sbuf_add(b, u);
        }
    }
    sbuf_addn(b, s + run, n - run);
    sbuf_add(b, "\"");
}

/* ======================================================================== */
/* GET /api/runs/{id}/timeline/tracks                                         */
/* ======================================================================== */

static json_t *int_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_integer(sqlite3_column_int64(st, i));
}

static int tracks_list(struct api_run *r, json_t *out, struct err *e)
{
    /* processes then their threads; GPU devices then their streams */
    static const char sql[] =
        "SELECT id, kind, pid, tid, name, pname, device, stream, max_depth, nslices FROM track WHERE rank = ?"
        " ORDER BY kind = 1, CASE WHEN kind = 1 THEN device END, CASE WHEN kind = 1 THEN stream END,"
        " CAST(pid AS INTEGER), pid, sort IS NULL, sort, CAST(tid AS INTEGER), tid, id";
    sqlite3_stmt *st;
    json_t *arr = json_array();
    int rc;

    json_object_set_new(out, "tracks", arr);
    if (rundb_prepare(r->db, sql, &st, e) < 0) return e->code;
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int gpu = sqlite3_column_int(st, 1) == TB_TRACK_GPU;
        json_t *t = json_object();
        json_t *name = api_run_text_or_null(st, 4);
        if (json_is_null(name)) {
            char buf[96];
            const char *tid = (const char *)sqlite3_column_text(st, 3);
            snprintf(buf, sizeof buf, "%s %s", gpu ? "stream" : "thread", tid ? tid : "?");
            json_decref(name);
            name = json_string(buf);
            if (!name) name = json_string("?");
        }
        json_object_set_new(t, "id", json_integer(sqlite3_column_int64(st, 0)));
        json_object_set_new(t, "kind", json_string(gpu ? "gpu" : "cpu"));
        json_object_set_new(t, "pid", api_run_text_or_null(st, 2));
        json_object_set_new(t, "tid", api_run_text_or_null(st, 3));
        json_object_set_new(t, "name", name);
        json_object_set_new(t, "process", api_run_text_or_null(st, 5));
        json_object_set_new(t, "device", int_or_null(st, 6));
        json_object_set_new(t, "stream", int_or_null(st, 7));
        json_object_set_new(t, "max_depth", json_integer(sqlite3_column_int64(st, 8)));
        json_object_set_new(t, "nslices", json_integer(sqlite3_column_int64(st, 9)));
        json_array_append_new(arr, t);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (tracks)");
}

static int counters_list(struct api_run *r, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *arr = json_array();
    int rc;

    json_object_set_new(out, "counters", arr);
    if (rundb_prepare(r->db, "SELECT id, name, unit FROM cseries WHERE rank = ? ORDER BY id", &st, e) < 0)
        return e->code;
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:I,s:o,s:o}", "id", (json_int_t)sqlite3_column_int64(st, 0), "name",
                                             api_run_text_or_null(st, 1), "unit", api_run_text_or_null(st, 2)));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (counters)");
}

static int steps_list(struct api_run *r, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *arr = json_array();
    int rc;

    json_object_set_new(out, "steps", arr);
    if (sqlite3_prepare_v2(r->db, "SELECT name, ts, ts + dur FROM step WHERE rank = ? ORDER BY idx", -1, &st, NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(st);
        return 0; /* a run without the analysis tables has no steps to show */
    }
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:o,s:o,s:o}", "name", api_run_text_or_null(st, 0), "start_us",
                                             api_run_jus(sqlite3_column_int64(st, 1)), "end_us",
                                             api_run_jus(sqlite3_column_int64(st, 2))));
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (steps)");
}

int api_timeline_tracks(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct err e;
    json_t *out = NULL;

    err_clear(&e);
    if (api_run_open(req, &r, API_RUN_TIMELINE, &e) < 0) goto fail;
    out = json_object();
    json_object_set_new(out, "rank", json_integer(r.rank));
    json_object_set(out, "ranks", r.ranks);
    json_object_set_new(out, "t0_us", api_run_jus(r.t0));
    json_object_set_new(out, "t1_us", api_run_jus(r.t1));
    json_object_set_new(out, "strings", json_array()); /* reserved: names here are plain strings */
    if (tracks_list(&r, out, &e) < 0 || counters_list(&r, out, &e) < 0 || steps_list(&r, out, &e) < 0) goto fail;
    api_run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    json_decref(out);
    api_run_close(&r);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* GET /api/runs/{id}/timeline                                                */
/* ======================================================================== */

/* str id -> index in the answer's string table, ids kept in index order. */
struct strtab {
    struct hmap map;  /* str id -> uint32_t index */
    uint32_t *order;  /* ids by index */
    size_t cap, n;
};

static uint32_t strtab_index(struct strtab *t, uint32_t id)
{
    int fresh;
    uint32_t *idx = hmap_put(&t->map, hmap_hash_u64(id), &id, sizeof id, &fresh);

    if (!fresh) return *idx;
    if (t->n == t->cap) t->order = xrealloc(t->order, (t->cap = t->cap ? t->cap * 2 : 256) * sizeof *t->order);
    t->order[t->n] = id;
    *idx = (uint32_t)t->n;
    return (uint32_t)t->n++;
}

static void strtab_free(struct strtab *t)
{
    hmap_free(&t->map, NULL);
    free(t->order);
}

/* Opens a column: ,"name":[ */
static void col_open(struct sbuf *b, const char *name)
{
    sbuf_add(b, ",\"");
    sbuf_add(b, name);
    sbuf_add(b, "\":[");
}

/* The item columns of one lane: ,"ts":[..],"dur":..,"name":..,"n":..,"id":.. */
static void write_items(struct sbuf *b, const struct timeline_depth *dp, struct strtab *names)
{
    static const char *const cols[] = { "ts", "dur", "name", "n", "id" };
    for (int c = 0; c < 5; c++) {
        col_open(b, cols[c]);
        for (size_t k = 0; k < dp->nitems; k++) {
            const struct timeline_item *it = &dp->items[k];
            if (k) sbuf_add(b, ",");
            switch (c) {
            case 0: sbuf_int(b, it->ts, 1); break;
            case 1: sbuf_int(b, it->dur, 1); break;
            case 2: sbuf_int(b, strtab_index(names, it->name), 0); break;
            case 3: sbuf_int(b, it->n, 0); break;
            default: sbuf_int(b, it->id, 0); break;
            }
        }
        sbuf_add(b, "]");
    }
}

static void write_view(struct sbuf *b, const struct timeline_view *v, struct strtab *names, int64_t bucket_ns)
{
    int coarse = bucket_ns >= COARSE_BUCKET_NS;
    int64_t quantum = 1000; /* ns: a power of ten, <= bucket / 1000 when coarse */
    while (coarse && quantum * 10 * 1000 <= bucket_ns) quantum *= 10;

    sbuf_add(b, ",\"tracks\":[");
    for (size_t i = 0; i < v->ntracks; i++) {
        const struct timeline_track *t = &v->tracks[i];
        sbuf_add(b, i ? ",{\"id\":" : "{\"id\":");
        sbuf_int(b, t->id, 0);
        sbuf_add(b, ",\"depths\":[");
        for (int d = 0; d < t->ndepths; d++) {
            const struct timeline_depth *dp = &t->depths[d];
            sbuf_add(b, d ? ",{\"depth\":" : "{\"depth\":");
            sbuf_int(b, dp->depth, 0);
            write_items(b, dp, names);
            sbuf_add(b, "}");
        }
        sbuf_add(b, "]");
        if (t->deep.nitems) {
            sbuf_add(b, ",\"deep\":{\"from\":");
            sbuf_int(b, t->deep.depth, 0);
            write_items(b, &t->deep, names);
            sbuf_add(b, "}");
        }
        sbuf_add(b, "}");
    }
    sbuf_add(b, "],\"counters\":[");
    for (size_t i = 0; i < v->ncounters; i++) {
        const struct timeline_counter *c = &v->counters[i];
        sbuf_add(b, i ? ",{\"id\":" : "{\"id\":");
        sbuf_int(b, c->id, 0);
        static const char *const cols[] = { "ts", "min", "max", "last" };
        for (int k = 0; k < 4; k++) {
            col_open(b, cols[k]);
            for (size_t j = 0; j < c->npoints; j++) {
                const struct timeline_cpoint *p = &c->points[j];
                if (j) sbuf_add(b, ",");
                if (k == 0 && coarse) sbuf_int(b, (int64_t)llround((double)p->ts / (double)quantum) * (quantum / 1000), 0);
                else if (k == 0) sbuf_int(b, p->ts, 1);
                else sb_real(b, k == 1 ? p->min : k == 2 ? p->max : p->last, coarse ? 7 : 17);
            }
            sbuf_add(b, "]");
        }
        sbuf_add(b, "}");
    }
    sbuf_add(b, "]");
}

/* ?depths=: entries "TRACK:LO-HI" for one track or "LO-HI" for every
 * track not named (HI may be left out: to the deepest). OUT req[i]'s depth
 * window for tracks[i]. */
static int param_depths(struct http_req *req, const int64_t *tracks, size_t ntracks, struct timeline_treq *out,
                        struct err *e)
{
    const char *v = qparam_get(req, "depths");
    int all_lo = 0, all_hi = INT_MAX;

    for (size_t i = 0; i < ntracks; i++) out[i] = (struct timeline_treq){ tracks[i], -1, -1 };
    for (const char *p = v; p && *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        char tmp[64], *dash, *colon, *lo_s;
        long long id = -1, lo, hi = INT_MAX;
        if (len == 0 || len >= sizeof tmp) goto bad;
        memcpy(tmp, p, len);
        tmp[len] = '\0';
        colon = strchr(tmp, ':');
        lo_s = tmp;
        if (colon) {
            *colon = '\0';
            if (qparam_parse_int(tmp, 1, INT64_MAX, &id) < 0) goto bad;
            lo_s = colon + 1;
        }
        dash = strchr(lo_s, '-');
        if (!dash) goto bad;
        *dash = '\0';
        if (qparam_parse_int(lo_s, 0, INT_MAX - 1, &lo) < 0) goto bad;
        if (dash[1] && qparam_parse_int(dash + 1, lo, INT_MAX - 1, &hi) < 0) goto bad;
        if (id < 0) {
            all_lo = (int)lo;
            all_hi = (int)hi;
        }
        for (size_t i = 0; i < ntracks && id >= 0; i++)
            if (tracks[i] == id) out[i].dmin = (int)lo, out[i].dmax = (int)hi;
        p = c ? c + 1 : NULL;
    }
    for (size_t i = 0; i < ntracks; i++)
        if (out[i].dmin < 0) out[i].dmin = all_lo, out[i].dmax = all_hi;
    return 0;
bad:
    return err_set(e, ERR_INVALID, "parameter 'depths' must be a comma-separated list of TRACK:LO-HI or LO-HI"
                                   " (HI optional)");
}

int api_timeline_view(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct err e;
    int64_t start, end, *tracks = NULL, *series = NULL;
    size_t ntracks = 0, nseries = 0;
    long long width, fine;
    struct timeline_treq *treq = NULL;
    struct timeline_view *v = NULL;
    struct strtab names = { 0 };
    hmap_init(&names.map, sizeof(uint32_t), 256);
    struct sbuf b = { 0 };
    sqlite3_stmt *st = NULL;

    err_clear(&e);
    if (qparam_int(req, "width", 1000, 1, TIMELINE_WIDTH_MAX, &width, &e) < 0 || api_run_open(req, &r, API_RUN_TIMELINE, &e) < 0 ||
        api_run_param_window(req, &r, 0, &start, &end, &e) < 0 || api_run_param_tracks(req, &r, &tracks, &ntracks, &e) < 0 ||
        api_run_param_ids(req, "counters", &series, &nseries, &e) < 0 ||
        qparam_int(req, "fine", TIMELINE_FINE_DEPTHS, 0, INT_MAX, &fine, &e) < 0)
        goto fail;
    treq = xcalloc(ntracks ? ntracks : 1, sizeof *treq);
    if (param_depths(req, tracks, ntracks, treq, &e) < 0) goto fail;
    if (!qparam_get(req, "counters")) {
        /* every counter series of the rank */
        int rc;
        if (rundb_prepare(r.db, "SELECT id FROM cseries WHERE rank = ? ORDER BY id", &st, &e) < 0) goto fail;
        sqlite3_bind_int(st, 1, r.rank);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            series = xrealloc(series, (nseries + 1) * sizeof *series);
            series[nseries++] = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        st = NULL;
        if (rc != SQLITE_DONE) {
            rundb_db_error(r.db, &e, "run database (counters)");
            goto fail;
        }
    }
    if (timeline_query_lanes(r.db, start, end, (int)width, treq, ntracks, series, nseries, (int)fine, &v, &e) < 0)
        goto fail;
    sbuf_add(&b, "{\"start_us\":");
    sbuf_int(&b, start, 1);
    sbuf_add(&b, ",\"end_us\":");
    sbuf_int(&b, end, 1);
    sbuf_add(&b, ",\"width\":");
    sbuf_int(&b, width, 0);
    int64_t bucket_ns = (int64_t)llround((double)(end - start) / (double)width);
    sbuf_add(&b, ",\"bucket_us\":");
    sbuf_int(&b, bucket_ns, 1);
    sbuf_add(&b, ",\"rank\":");
    sbuf_int(&b, r.rank, 0);
    write_view(&b, v, &names, bucket_ns);
    sbuf_add(&b, ",\"strings\":[");
    if (rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &st, &e) < 0) goto fail;
    for (size_t i = 0; i < names.n; i++) {
        size_t n;
        const char *s = api_run_str(st, names.order[i], &n);
        if (i) sbuf_add(&b, ",");
        sb_str(&b, s, n);
    }
    sqlite3_finalize(st);
    sbuf_add(&b, "]}");
    timeline_view_free(v);
    strtab_free(&names);
    free(tracks);
    free(treq);
    free(series);
    api_run_close(&r);
    return http_send_text(conn, 200, JSON_TYPE, NULL, b.p, b.n);
fail:
    sqlite3_finalize(st);
    timeline_view_free(v);
    strtab_free(&names);
    free(b.p);
    free(tracks);
    free(treq);
    free(series);
    api_run_close(&r);
    return http_send_err(conn, &e);
}


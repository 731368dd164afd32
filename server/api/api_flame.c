/* api_flame.c — /api/runs/{id}/timeline/flame (see include/api/api_flame.h). */
#define LOG_MODULE "api"
#include "api/api_flame.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>

#include "api/api_run.h"
#include "derive/timeline_flame.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/rundb.h"

/* Slices a flame graph reads at most: each is held in memory (24 bytes)
 * while its track is sorted, so the bound is lower than the aggregate's. */
#define FLAME_SCAN_MAX 4000000

/* One group row: {<key>: id, count, total_us, self_us}; `named` writes the
 * key as the str text (categories). */
static json_t *group_rows(const struct hmap *m, const char *key, sqlite3_stmt *strq)
{
    size_t n;
    struct tflame_group *g = timeline_flame_groups(m, &n);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:o,s:I,s:o,s:o}", key,
                                             strq ? api_run_jstr(strq, g[i].key) : json_integer(g[i].key), "count",
                                             (json_int_t)g[i].count, "total_us", api_run_jus(g[i].total), "self_us",
                                             api_run_jus(g[i].self)));
    free(g);
    return arr;
}

int api_timeline_flame(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct err e;
    int64_t start, end, *tracks = NULL;
    size_t ntracks = 0;
    long long contained;
    sqlite3_stmt *strq = NULL;
    struct tflame f;
    json_t *out = NULL;

    err_clear(&e);
    timeline_flame_init(&f);
    if (api_run_open(req, &r, API_RUN_TIMELINE, &e) < 0 || api_run_param_window(req, &r, 1, &start, &end, &e) < 0 ||
        api_run_param_tracks(req, &r, &tracks, &ntracks, &e) < 0 ||
        qparam_int(req, "contained", 0, 0, 1, &contained, &e) < 0)
        goto fail;
    if (rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &strq, &e) < 0) goto fail;
    for (size_t i = 0; i < ntracks; i++)
        if (timeline_flame_track(r.db, &f, tracks[i], start, end, (int)contained, FLAME_SCAN_MAX, &e) < 0) goto fail;
    out = json_object();
    json_t *nodes = json_array();
    json_object_set_new(out, "start_us", api_run_jus(start));
    json_object_set_new(out, "end_us", api_run_jus(end));
    json_object_set_new(out, "nodes", nodes);
    for (size_t i = 0; i < f.n; i++) {
        const struct tflame_node *nd = &f.nodes[i];
        json_array_append_new(nodes, json_pack("{s:i,s:o,s:I,s:o,s:o}", "parent", (int)nd->parent, "name",
                                               nd->name == TFLAME_STEP ? json_string("ProfilerStep#*") : api_run_jstr(strq, nd->name), "count", (json_int_t)nd->count, "total_us",
                                               api_run_jus(nd->total), "self_us", api_run_jus(nd->self)));
    }
    json_object_set_new(out, "lanes", group_rows(&f.lanes, "track", NULL));
    json_object_set_new(out, "cats", group_rows(&f.cats, "cat", strq));
    json_object_set_new(out, "dropped", json_integer(f.dropped));
    timeline_flame_free(&f);
    free(tracks);
    sqlite3_finalize(strq);
    api_run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    json_decref(out);
    timeline_flame_free(&f);
    free(tracks);
    sqlite3_finalize(strq);
    api_run_close(&r);
    return http_send_err(conn, &e);
}

/* api_slice.c — /api/runs/{id}/timeline/slice: one slice's details, its
 * children, flows and correlated peers (see include/api/api_slice.h). */
#define LOG_MODULE "api"
#include "api/api_slice.h"

#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_run.h"
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
#include "store/scan.h"

void api_slice_read(sqlite3_stmt *st, struct api_slice_row *s)
{
    s->id = sqlite3_column_int64(st, 0);
    s->track = sqlite3_column_int64(st, 1);
    s->ts = sqlite3_column_int64(st, 2);
    s->dur = sqlite3_column_int64(st, 3);
    s->depth = sqlite3_column_int(st, 4);
    s->parent = sqlite3_column_int64(st, 5);
    s->name = (uint32_t)sqlite3_column_int64(st, 6);
    s->cat = (uint32_t)sqlite3_column_int64(st, 7);
    s->kind = sqlite3_column_int(st, 8);
    s->corr = sqlite3_column_int64(st, 9);
}

int api_slice_get(sqlite3 *db, sqlite3_stmt *one, int64_t id, struct api_slice_row *s, struct err *e)
{
    sqlite3_reset(one);
    sqlite3_bind_int64(one, 1, id);
    int rc = sqlite3_step(one);
    if (rc == SQLITE_ROW) api_slice_read(one, s);
    else if (rc != SQLITE_DONE)
        return rundb_db_error(db, e, "run database (slice)");
    return rc == SQLITE_ROW ? 0 : 1;
}

static int track_is_gpu(sqlite3 *db, int64_t track)
{
    sqlite3_stmt *st;
    int gpu = 0;
    if (sqlite3_prepare_v2(db, "SELECT kind FROM track WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, track);
        if (sqlite3_step(st) == SQLITE_ROW) gpu = sqlite3_column_int(st, 0) == TB_TRACK_GPU;
    }
    sqlite3_finalize(st);
    return gpu;
}

static json_t *ref_json(sqlite3_stmt *strq, const struct api_slice_row *s)
{
    return json_pack("{s:I,s:I,s:o,s:o,s:o}", "id", (json_int_t)s->id, "track", (json_int_t)s->track, "name",
                     api_run_jstr(strq, s->name), "ts_us", api_run_jus(s->ts), "dur_us", api_run_jus(s->dur));
}

struct span {
    int64_t ts, end;
};

/* self time and the direct children's spans (for flow binding). */
static int slice_children(sqlite3 *db, const struct api_slice_row *s, int64_t *self, struct span **kids, size_t *nkids,
                          struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    int64_t n = 0;

    *self = s->dur;
    *kids = NULL;
    *nkids = 0;
    if (rundb_prepare(
            db,
            "SELECT ts, dur, parent FROM slice WHERE id > ?1 AND id <= (SELECT last_slice FROM track WHERE id = ?2)"
            " ORDER BY id",
            &st, e) < 0)
        return e->code;
    sqlite3_bind_int64(st, 1, s->id);
    sqlite3_bind_int64(st, 2, s->track);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n++ < API_SCAN_MAX) {
        int64_t ts = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 1);
        if (ts >= s->ts + s->dur && !(dur == 0 && ts == s->ts)) break;
        if (sqlite3_column_int64(st, 2) != s->id) continue;
        int64_t end = ts + dur > s->ts + s->dur ? s->ts + s->dur : ts + dur;
        *self -= end - ts;
        *kids = xrealloc(*kids, (*nkids + 1) * sizeof **kids);
        (*kids)[(*nkids)++] = (struct span){ ts, ts + dur };
    }
    sqlite3_finalize(st);
    if (*self < 0) *self = 0;
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "run database (children)");
}

/* Flow endpoints on s's track inside s and in none of its children. */
static int slice_flows(struct api_run *r, const struct api_slice_row *s, const struct span *kids, size_t nkids,
                       sqlite3_stmt *strq, json_t *flows, struct err *e)
{
    sqlite3_stmt *mine = NULL, *other = NULL;
    int rc;

    if (rundb_prepare(r->db,
                      "SELECT id, coalesce(cat, 0), fid, ph, ts FROM flow WHERE track = ? AND ts >= ? AND ts <= ? "
                      "ORDER BY ts, id",
                      &mine, e) < 0 ||
        rundb_prepare(
            r->db,
            "SELECT ph, track, ts, cat FROM flow WHERE rank = ? AND fid = ? AND coalesce(cat, 0) = ? AND id != ?"
            " ORDER BY ts LIMIT 64",
            &other, e) < 0)
        goto out;
    sqlite3_bind_int64(mine, 1, s->track);
    sqlite3_bind_int64(mine, 2, s->ts);
    sqlite3_bind_int64(mine, 3, s->ts + s->dur);
    while ((rc = sqlite3_step(mine)) == SQLITE_ROW && json_array_size(flows) < 256) {
        const char *ph = (const char *)sqlite3_column_text(mine, 3);
        int out_dir = ph && ph[0] == 's';
        int64_t pts = sqlite3_column_int64(mine, 4);
        int in_child = 0;
        for (size_t k = 0; k < nkids && !in_child; k++)
            in_child = pts >= kids[k].ts && (pts < kids[k].end || (kids[k].end == kids[k].ts && pts == kids[k].ts));
        if (in_child) continue;
        sqlite3_reset(other);
        sqlite3_bind_int(other, 1, r->rank);
        sqlite3_bind_value(other, 2, sqlite3_column_value(mine, 2));
        sqlite3_bind_int64(other, 3, sqlite3_column_int64(mine, 1));
        sqlite3_bind_int64(other, 4, sqlite3_column_int64(mine, 0));
        while (sqlite3_step(other) == SQLITE_ROW) {
            const char *oph = (const char *)sqlite3_column_text(other, 0);
            if (out_dir && oph && oph[0] == 's') continue;
            if (!out_dir && !(oph && oph[0] == 's')) continue;
            json_array_append_new(flows, json_pack("{s:s,s:o,s:I,s:o}", "dir", out_dir ? "out" : "in", "cat",
                                                   api_run_jstr(strq, sqlite3_column_int64(other, 3)), "track",
                                                   (json_int_t)sqlite3_column_int64(other, 1), "ts_us",
                                                   api_run_jus(sqlite3_column_int64(other, 2))));
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) rundb_db_error(r->db, e, "run database (flows)");
out:
    sqlite3_finalize(mine);
    sqlite3_finalize(other);
    return e->code;
}

/* Slices of the rank sharing s's correlation id on the other side (GPU when
 * gpu is 0, CPU when 1). */
static int corr_peers(struct api_run *r, const struct api_slice_row *s, int gpu_side, struct api_slice_row *peers, int max, int *n,
                      struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    *n = 0;
    if (!s->corr) return 0;
    int by_ids = scan_has_table(r->db, "corr_ids", e);
    if (by_ids < 0) return by_ids;
    /* corr_ids, or a run stored before it (index slice_corr) */
    if (rundb_prepare(r->db,
                      by_ids ? "SELECT s.id, s.track, s.ts, s.dur, s.depth, coalesce(s.parent, 0), s.name,"
                               " coalesce(s.cat, 0), s.kind, s.corr FROM corr_ids c JOIN slice s ON s.id = c.id"
                               " JOIN track t ON t.id = s.track WHERE c.corr = ? AND t.rank = ?"
                               " AND (t.kind = 1) = ? AND s.id != ? ORDER BY s.ts, s.id LIMIT ?"
                             : "SELECT s.id, s.track, s.ts, s.dur, s.depth, coalesce(s.parent, 0), s.name,"
                               " coalesce(s.cat, 0), s.kind, s.corr FROM slice s JOIN track t ON t.id = s.track"
                               " WHERE s.corr = ? AND s.corr != 0 AND t.rank = ?"
                               " AND (t.kind = 1) = ? AND s.id != ? ORDER BY s.ts, s.id LIMIT ?",
                      &st, e) < 0)
        return e->code;
    sqlite3_bind_int64(st, 1, s->corr);
    sqlite3_bind_int(st, 2, r->rank);
    sqlite3_bind_int(st, 3, gpu_side);
    sqlite3_bind_int64(st, 4, s->id);
    sqlite3_bind_int(st, 5, max);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) api_slice_read(st, &peers[(*n)++]);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (correlation)");
}

/* Finds the slice of track with start ts and duration dur (id: fast path,
 * checked). 1 when there is none. */
static int slice_find(struct api_run *r, sqlite3_stmt *one, int64_t track, int64_t ts, int64_t dur, long long id,
                      struct api_slice_row *s, struct err *e)
{
    int64_t lo, hi;
    int rc;

    if (id > 0) {
        rc = api_slice_get(r->db, one, id, s, e);
        if (rc < 0) return rc;
        if (rc == 0 && s->track == track && s->ts == ts && s->dur == dur) return 0;
    }
    /* ts as a client read it from a JSON double may be off by the double's
     * rounding when the clock is large: match the nearest within it */
    int64_t tol = ts > ((int64_t)1 << 52) || ts < -((int64_t)1 << 52) ? 1024 : 0;
    struct api_slice_row best;
    int found = 0;
    if (timeline_slice_range(r->db, track, ts - tol, ts + tol + 1, &lo, &hi, e) < 0) return e->code;
    for (int64_t i = lo; i < hi && i < lo + 100000; i++) {
        rc = api_slice_get(r->db, one, i, s, e);
        if (rc < 0) return rc;
        if (rc || s->dur != dur) continue;
        if (!found || llabs(s->ts - ts) < llabs(best.ts - ts)) best = *s;
        found = 1;
    }
    if (found) *s = best;
    return found ? 0 : 1;
}

int api_timeline_slice(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct err e;
    sqlite3_stmt *one = NULL, *strq = NULL, *args = NULL;
    long long track, id;
    int64_t ts, dur, self;
    int given, rc;
    struct api_slice_row s, p, peers[64];
    struct span *kids = NULL;
    size_t nkids = 0;
    json_t *out = NULL;

    err_clear(&e);
    if (api_run_open(req, &r, API_RUN_TIMELINE, &e) < 0 || qparam_int(req, "track", 0, 1, INT64_MAX, &track, &e) < 0 ||
        qparam_int(req, "id", 0, 1, INT64_MAX, &id, &e) < 0)
        goto fail;
    if (!qparam_get(req, "track")) {
        err_set(&e, ERR_INVALID, "parameter 'track' is required");
        goto fail;
    }
    if (qparam_us(req, "ts", &ts, &given, &e) < 0) goto fail;
    if (!given) {
        err_set(&e, ERR_INVALID, "parameter 'ts' is required (µs)");
        goto fail;
    }
    if (qparam_us(req, "dur", &dur, &given, &e) < 0) goto fail;
    if (!given || dur < 0) {
        err_set(&e, ERR_INVALID, "parameter 'dur' is required (µs, >= 0)");
        goto fail;
    }
    if (!api_run_has_track(&r, track)) {
        err_set(&e, ERR_NOT_FOUND, "rank %d has no track %lld", r.rank, track);
        goto fail;
    }
    if (rundb_prepare(r.db, "SELECT " API_SLICE_COLS " FROM slice WHERE id = ?", &one, &e) < 0 ||
        rundb_prepare(r.db, "SELECT s FROM str WHERE id = ?", &strq, &e) < 0 ||
        rundb_prepare(r.db, "SELECT args FROM slice WHERE id = ?", &args, &e) < 0)
        goto fail;
    rc = slice_find(&r, one, track, ts, dur, id, &s, &e);
    if (rc < 0) goto fail;
    if (rc > 0) {
        err_set(&e, ERR_NOT_FOUND, "track %lld has no slice starting at %.3f µs lasting %.3f µs", track,
                (double)ts / 1000.0, (double)dur / 1000.0);
        goto fail;
    }
    if (slice_children(r.db, &s, &self, &kids, &nkids, &e) < 0) goto fail;
    out = json_object();
    json_object_set_new(out, "id", json_integer(s.id));
    json_object_set_new(out, "track", json_integer(s.track));
    json_object_set_new(out, "name", api_run_jstr(strq, s.name));
    json_object_set_new(out, "cat", s.cat ? api_run_jstr(strq, s.cat) : json_null());
    json_object_set_new(out, "kind", json_string(tb_kind_name((enum tb_kind)s.kind)));
    json_object_set_new(out, "ts_us", api_run_jus(s.ts));
    json_object_set_new(out, "dur_us", api_run_jus(s.dur));
    json_object_set_new(out, "self_us", api_run_jus(self));
    json_object_set_new(out, "depth", json_integer(s.depth));
    sqlite3_bind_int64(args, 1, s.id);
    json_t *aj = NULL;
    if (sqlite3_step(args) == SQLITE_ROW && sqlite3_column_text(args, 0))
        aj = json_loads((const char *)sqlite3_column_text(args, 0), JSON_DECODE_ANY, NULL);
    json_object_set_new(out, "args", aj ? aj : json_object());

    json_t *parents = json_array();
    json_object_set_new(out, "parents", parents);
    for (int64_t pid = s.parent, k = 0; pid > 0 && k < 1000; k++) {
        if ((rc = api_slice_get(r.db, one, pid, &p, &e)) < 0) goto fail;
        if (rc) break;
        json_array_append_new(parents, ref_json(strq, &p));
        pid = p.parent;
    }

    int gpu = track_is_gpu(r.db, s.track), npeers = 0;
    json_t *launched = json_array(), *launcher = json_null(), *flows = json_array();
    json_object_set_new(out, "launched", launched);
    json_object_set_new(out, "flows", flows);
    if (corr_peers(&r, &s, !gpu, peers, 64, &npeers, &e) < 0) {
        json_decref(launcher);
        goto fail;
    }
    if (!gpu) {
        for (int i = 0; i < npeers; i++) json_array_append_new(launched, ref_json(strq, &peers[i]));
    } else if (npeers) {
        /* the runtime call, and the operator around it */
        json_decref(launcher);
        launcher = ref_json(strq, &peers[0]);
        json_t *op = json_null();
        for (int64_t pid = peers[0].parent, k = 0; pid > 0 && k < 1000; k++) {
            if ((rc = api_slice_get(r.db, one, pid, &p, &e)) < 0) {
                json_decref(launcher);
                goto fail;
            }
            if (rc) break;
            if (p.kind == TB_K_CPU_OP) {
                json_decref(op);
                op = ref_json(strq, &p);
                break;
            }
            pid = p.parent;
        }
        json_object_set_new(launcher, "op", op);
    }
    json_object_set_new(out, "launcher", launcher);
    if (slice_flows(&r, &s, kids, nkids, strq, flows, &e) < 0) goto fail;
    if (json_array_size(flows) == 0) {
        /* no flow events bound here: the correlation id stands in */
        for (int i = 0; i < npeers; i++)
            json_array_append_new(flows, json_pack("{s:s,s:s,s:I,s:o}", "dir", gpu ? "in" : "out", "cat", "ac2g",
                                                   "track", (json_int_t)peers[i].track, "ts_us", api_run_jus(peers[i].ts)));
    }
    free(kids);
    sqlite3_finalize(one);
    sqlite3_finalize(strq);
    sqlite3_finalize(args);
    api_run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    free(kids);
    json_decref(out);
    sqlite3_finalize(one);
    sqlite3_finalize(strq);
    sqlite3_finalize(args);
    api_run_close(&r);
    return http_send_err(conn, &e);
}


/* analyses.c — the driver of the deeper GPU analyses (see include/derive/analyses.h):
 * loads one rank's context (steps, GPU streams and ops, launch calls with
 * the operator and annotation around each), runs the analyses of
 * ANALYSES_LIST on it, and stores their documents, series and critical-path
 * segments.
 */
#define LOG_MODULE "analyses"
#include "derive/analyses.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/corrix.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "store/analyses_read.h"
#include "store/model.h"
#include "store/scan.h"
#include "store/rundb.h"

const char *const an_cp_names[AN_CP_NCAT] = { "cpu", "dataloader", "gpu_compute", "communication",
                                              "launch_overhead", "kernel_gap" };
const char *const an_copy_names[AN_NCOPY] = { "kernel", "HtoD", "DtoH", "DtoD", "PtoP", "Memset", "Memcpy" };
const char *const an_type_names[AN_NTYPES] = { "compute", "communication", "memory" };

/* main.: with a scratch database attached (analyses_adopt) a bare name
 * missing from main would drop the scratch's table. */
static const char drop_sql[] =
    "DROP TABLE IF EXISTS main.analyses; DROP TABLE IF EXISTS main.anseries; DROP TABLE IF EXISTS main.ansample;"
    "DROP TABLE IF EXISTS main.critpath;";

/* Without the drops: on a scratch database (analyses_run_rank) a DROP would
 * reach the attached run's table of that name. */
static const char schema_sql[] =
    "CREATE TABLE analyses(rank INTEGER PRIMARY KEY, doc TEXT);"
    "CREATE TABLE anseries(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, key INTEGER, name TEXT,"
    " unit TEXT);"
    "CREATE TABLE ansample(series INTEGER, ts INTEGER, value REAL, PRIMARY KEY(series, ts)) WITHOUT ROWID;"
    "CREATE TABLE critpath(rank INTEGER, step INTEGER, ts INTEGER, dur INTEGER, cat INTEGER, track INTEGER,"
    " slice INTEGER);";

/* ====================================================================== */
/* Output helpers for the analyses                                        */
/* ====================================================================== */

const char *an_name(struct an_ctx *c, uint32_t id)
{
    char *buf = c->namebuf[c->nameslot];
    c->nameslot = (c->nameslot + 1) % 4;
    return gpuscan_names_text(c->names, id, buf, sizeof c->namebuf[0]);
}

#define NAME_KNOWN 0x80

int an_name_class(struct an_ctx *c, uint32_t id)
{
    if (c->ncache_n * 2 >= c->ncache_cap) {
        size_t ncap = c->ncache_cap ? c->ncache_cap * 2 : 1024;
        uint32_t *nid = xcalloc(ncap, sizeof *nid);
        uint8_t *nb = xcalloc(ncap, 1);
        for (size_t i = 0; i < c->ncache_cap; i++) {
            if (!c->ncache_bits[i]) continue;
            size_t k = (c->ncache_id[i] * 2654435761u) & (ncap - 1);
            while (nb[k]) k = (k + 1) & (ncap - 1);
            nid[k] = c->ncache_id[i];
            nb[k] = c->ncache_bits[i];
        }
        free(c->ncache_id);
        free(c->ncache_bits);
        c->ncache_id = nid;
        c->ncache_bits = nb;
        c->ncache_cap = ncap;
    }
    size_t k = (id * 2654435761u) & (c->ncache_cap - 1);
    while (c->ncache_bits[k]) {
        if (c->ncache_id[k] == id) return c->ncache_bits[k] & ~NAME_KNOWN;
        k = (k + 1) & (c->ncache_cap - 1);
    }
    const char *nm = an_name(c, id);
    int bits = (kclass_comm_kernel(nm) ? AN_NAME_COMM : 0) | (kclass_profiler_step(nm) ? AN_NAME_STEP : 0) |
               (strncmp(nm, "nn.Module: ", 11) == 0 ? AN_NAME_MODULE : 0);
    c->ncache_id[k] = id;
    c->ncache_bits[k] = (uint8_t)(bits | NAME_KNOWN);
    c->ncache_n++;
    return bits;
}

size_t an_ops_from(const struct an_ctx *c, int64_t t)
{
    size_t lo = 0, hi = c->nops;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->ops[mid].ts < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int an_stream_ix(const struct an_ctx *c, uint32_t track)
{
    size_t lo = 0, hi = c->nstreams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->streams[mid].track < track) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->nstreams && c->streams[lo].track == track ? (int)lo : -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

void an_sort_i64(int64_t *v, size_t n)
{
    if (n) xqsort(v, n, sizeof *v, cmp_i64);
}

double an_quantile(const int64_t *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n) return (double)v[n - 1];
    return (double)v[i] + (pos - (double)i) * (double)(v[i + 1] - v[i]);
}

int an_series(struct an_ctx *c, int kind, int64_t key, const char *name, const char *unit, int64_t *series,
              struct err *e)
{
    sqlite3_stmt *st = c->ins_series;
    sqlite3_reset(st);
    sqlite3_bind_int(st, 1, c->rank);
    sqlite3_bind_int(st, 2, kind);
    sqlite3_bind_int64(st, 3, key);
    sqlite3_bind_text(st, 4, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 5, unit, -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE) return rundb_db_error(c->db, e, "analyses (series insert)");
    *series = sqlite3_last_insert_rowid(c->db);
    return 0;
}

/* Samples and segments are written AN_BATCH rows per statement: the
 * critical path alone stores ~5 k segments a step (556 k for tiled33), and
 * one row per sqlite3_step cost more than the walk. Rows keep their order,
 * so rowids and the sample that wins at one ts are the same as row by row.
 * The statements are literals: only their placeholders repeat. */
#define AN_BATCH 32
#define AN_ROWS4(r) r "," r "," r "," r
#define AN_ROWS32(r) AN_ROWS4(AN_ROWS4(r)) "," AN_ROWS4(AN_ROWS4(r))
#define AN_SAMPLE_SQL "INSERT OR REPLACE INTO ansample(series, ts, value) VALUES"
#define AN_SEG_SQL "INSERT INTO critpath(rank, step, ts, dur, cat, track, slice) VALUES"

struct an_wbuf {
    struct {
        int64_t series, ts;
        double value;
    } smp[AN_BATCH];
    size_t nsmp;
    struct {
        int64_t ts, dur, slice;
        int step, cat;
        uint32_t track;
    } seg[AN_BATCH];
    size_t nseg;
    sqlite3_stmt *smp_n, *seg_n; /* AN_BATCH rows each */
};

/* Writes the buffered samples: AN_BATCH at once when full, else one by one. */
static int flush_samples(struct an_ctx *c, struct err *e)
{
    struct an_wbuf *b = c->wbuf;
    int full = b->nsmp == AN_BATCH;
    sqlite3_stmt *st = full ? b->smp_n : c->ins_sample;
    if (full) sqlite3_reset(st); /* binding needs a reset statement */
    for (size_t i = 0; i < b->nsmp; i++) {
        int k = full ? 3 * (int)i : 0;
        if (!full) sqlite3_reset(st);
        sqlite3_bind_int64(st, k + 1, b->smp[i].series);
        sqlite3_bind_int64(st, k + 2, b->smp[i].ts);
        sqlite3_bind_double(st, k + 3, b->smp[i].value);
        if (!full && sqlite3_step(st) != SQLITE_DONE) return rundb_db_error(c->db, e, "analyses (sample insert)");
    }
    if (full && sqlite3_step(st) != SQLITE_DONE) return rundb_db_error(c->db, e, "analyses (sample insert)");
    b->nsmp = 0;
    return 0;
}

static int flush_segments(struct an_ctx *c, struct err *e)
{
    struct an_wbuf *b = c->wbuf;
    int full = b->nseg == AN_BATCH;
    sqlite3_stmt *st = full ? b->seg_n : c->ins_seg;
    if (full) sqlite3_reset(st);
    for (size_t i = 0; i < b->nseg; i++) {
        int k = full ? 7 * (int)i : 0;
        if (!full) sqlite3_reset(st);
        sqlite3_bind_int(st, k + 1, c->rank);
        sqlite3_bind_int(st, k + 2, b->seg[i].step);
        sqlite3_bind_int64(st, k + 3, b->seg[i].ts);
        sqlite3_bind_int64(st, k + 4, b->seg[i].dur);
        sqlite3_bind_int(st, k + 5, b->seg[i].cat);
        sqlite3_bind_int64(st, k + 6, b->seg[i].track);
        sqlite3_bind_int64(st, k + 7, b->seg[i].slice);
        if (!full && sqlite3_step(st) != SQLITE_DONE)
            return rundb_db_error(c->db, e, "analyses (critical path insert)");
    }
    if (full && sqlite3_step(st) != SQLITE_DONE) return rundb_db_error(c->db, e, "analyses (critical path insert)");
    b->nseg = 0;
    return 0;
}

int an_sample(struct an_ctx *c, int64_t series, int64_t ts, double value, struct err *e)
{
    struct an_wbuf *b = c->wbuf;
    b->smp[b->nsmp].series = series;
    b->smp[b->nsmp].ts = ts;
    b->smp[b->nsmp++].value = value;
    return b->nsmp == AN_BATCH ? flush_samples(c, e) : 0;
}

int an_segment(struct an_ctx *c, int step, int64_t ts, int64_t dur, int cat, uint32_t track, int64_t slice,
               struct err *e)
{
    struct an_wbuf *b = c->wbuf;
    b->seg[b->nseg].ts = ts;
    b->seg[b->nseg].dur = dur;
    b->seg[b->nseg].slice = slice;
    b->seg[b->nseg].step = step;
    b->seg[b->nseg].cat = cat;
    b->seg[b->nseg++].track = track;
    return b->nseg == AN_BATCH ? flush_segments(c, e) : 0;
}

/* ====================================================================== */
/* Loading a rank                                                         */
/* ====================================================================== */

static int copy_kind(const char *name, int kind)
{
    if (kind == TB_K_MEMSET) return AN_COPY_MEMSET;
    if (strstr(name, "HtoD") || strstr(name, "H2D")) return AN_COPY_HTOD;
    if (strstr(name, "DtoH") || strstr(name, "D2H")) return AN_COPY_DTOH;
    if (strstr(name, "PtoP") || strstr(name, "P2P")) return AN_COPY_PTOP;
    if (strstr(name, "DtoD") || strstr(name, "D2D")) return AN_COPY_DTOD;
    return AN_COPY_OTHER;
}

/* Kineto names a copy "Memcpy HtoD (Pageable -> Device)"; device-to-device
 * copies need no staging, so they count as pinned. */
static int pinned_of(const char *name, int copy)
{
    if (strstr(name, "Pageable")) return 0;
    if (strstr(name, "Pinned") || copy == AN_COPY_DTOD || copy == AN_COPY_PTOP || copy == AN_COPY_MEMSET)
        return 1;
    return 2;
}

static int64_t bytes_of(const char *args, int n)
{
    if (!args || n <= 0) return -1;
    json_error_t je;
    json_t *o = json_loadb(args, (size_t)n, 0, &je);
    int64_t b = -1;
    json_t *v = o ? json_object_get(o, "bytes") : NULL;
    if (json_is_integer(v)) b = json_integer_value(v);
    else if (json_is_real(v)) b = (int64_t)json_real_value(v);
    json_decref(o);
    return b < 0 ? -1 : b;
}

static int cmp_op(const void *a, const void *b)
{
    const struct an_op *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* A launch call while loading: its correlation id pairs it with its ops
 * and is dropped once they are loaded. */
struct lrec {
    struct an_launch l;
    int64_t corr;
};

static int cmp_lrec(const void *a, const void *b)
{
    const struct an_launch *x = &((const struct lrec *)a)->l, *y = &((const struct lrec *)b)->l;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The launch of correlation id corr through ix (key: corr, idx: launch
 * index, corrix.h): the first partner of a repeated id is the earliest
 * launch. -1 when none. */
static int32_t corr_find(const struct corrix *ix, size_t n, int64_t corr)
{
    size_t k = corrix_first(ix, n, corr);
    return k < n ? (int32_t)ix[k].idx : -1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The compact records hold slice ids in 32 bits and host track ids in 30. */
static int id_fits(int64_t id, struct err *e)
{
    if (id >= 0 && id <= (int64_t)UINT32_MAX) return 0;
    return err_set(e, ERR_TOO_LARGE, "analyses: slice id %lld does not fit 32 bits", (long long)id);
}

static int load_steps(struct an_ctx *c, struct err *e)
{
    struct analyses_read_steps *st;
    struct analyses_read_step row;
    int rc = analyses_read_steps_open(c->db, c->rank, &st, e);
    if (rc) return rc;
    size_t cap = 0;
    while ((rc = analyses_read_steps_next(st, &row, e)) == 1) {
        if (c->nsteps == cap) c->steps = xrealloc(c->steps, (cap = cap ? cap * 2 : 16) * sizeof *c->steps);
        struct an_step *s = &c->steps[c->nsteps++];
        memset(s, 0, sizeof *s);
        s->idx = row.idx;
        snprintf(s->name, sizeof s->name, "%s", row.name);
        s->ts = row.ts;
        s->end = row.ts + row.dur;
        s->host_ts = row.host_ts;
        s->host_end = row.host_ts + row.host_dur;
    }
    analyses_read_steps_close(st);
    return rc < 0 ? rc : 0;
}

/* Loads the GPU streams and their ops (in stream, id order), each op paired
 * with its launch call through ix (op->launch). */
static int load_gpu(struct an_ctx *c, const struct corrix *ix, size_t nix, struct err *e)
{
    struct analyses_read_gpu *g;
    struct analyses_read_stream tr;
    struct analyses_read_op op;
    int rc = analyses_read_gpu_open(c->db, c->rank, &g, e);
    if (rc) return rc;
    size_t cap = 0, scap = 0, mcap = 0;
    while ((rc = analyses_read_streams_next(g, &tr, e)) == 1) {
        if (c->nstreams == scap)
            c->streams = xrealloc(c->streams, (scap = scap ? scap * 2 : 8) * sizeof *c->streams);
        struct an_stream *s = &c->streams[c->nstreams++];
        s->track = (uint32_t)tr.track;
        s->device = tr.device;
        snprintf(s->name, sizeof s->name, "%s", tr.name ? tr.name : "");
        /* Kineto writes "stream 7 " (a trailing space) */
        for (size_t k = strlen(s->name); k > 0 && s->name[k - 1] == ' '; k--) s->name[k - 1] = '\0';
        while ((rc = analyses_read_ops_next(g, &op, e)) == 1) {
            if ((rc = id_fits(op.id, e))) break;
            if (c->nops == cap) c->ops = xrealloc(c->ops, (cap = cap ? cap * 2 : 1024) * sizeof *c->ops);
            struct an_op *o = &c->ops[c->nops++];
            memset(o, 0, sizeof *o);
            o->id = (uint32_t)op.id;
            o->ts = op.ts;
            o->end = o->ts + (op.dur > 0 ? op.dur : 0);
            o->name = op.name;
            o->kind = (uint8_t)op.kind;
            o->sx = (uint32_t)(c->nstreams - 1);
            o->launch = op.corr ? corr_find(ix, nix, op.corr) : -1;
            if (o->kind == TB_K_KERNEL) {
                o->type = an_name_class(c, o->name) & AN_NAME_COMM ? AN_COMM : AN_COMPUTE;
                o->copy = AN_COPY_NONE;
                o->pinned = 2;
            } else {
                const char *nm = an_name(c, o->name);
                o->type = AN_MEMORY;
                o->copy = (uint8_t)copy_kind(nm, o->kind);
                o->pinned = (uint8_t)pinned_of(nm, o->copy);
                if (c->nmem == mcap)
                    c->mem_bytes = xrealloc(c->mem_bytes, (mcap = mcap ? mcap * 2 : 256) * sizeof *c->mem_bytes);
                o->mem = (uint32_t)c->nmem;
                c->mem_bytes[c->nmem++] = bytes_of(op.args, op.nargs);
            }
        }
        if (rc < 0) break;
    }
    analyses_read_gpu_close(g);
    return rc < 0 ? rc : 0;
}

/* The ops in (ts, id) order, and launch->gpu: the first partner wins, the
 * earliest op of a launch. */
static void sort_ops(struct an_ctx *c)
{
    if (c->nops) xqsort(c->ops, c->nops, sizeof *c->ops, cmp_op);
    for (size_t i = 0; i < c->nops; i++) {
        int32_t l = c->ops[i].launch;
        if (l >= 0 && c->launches[l].gpu < 0) c->launches[l].gpu = (int32_t)i;
    }
}

/* c->by_stream and c->stream_ofs: a counting sort of the ops by op->sx,
 * stable, so each group keeps the (ts, id) order of c->ops. */
static void group_streams(struct an_ctx *c)
{
    size_t *ofs = xcalloc(c->nstreams + 1, sizeof *ofs);
    uint32_t *by = xmalloc((c->nops ? c->nops : 1) * sizeof *by);
    for (size_t i = 0; i < c->nops; i++) ofs[c->ops[i].sx + 1]++;
    for (size_t k = 0; k < c->nstreams; k++) ofs[k + 1] += ofs[k];
    size_t *fill = xmalloc((c->nstreams + 1) * sizeof *fill);
    memcpy(fill, ofs, (c->nstreams + 1) * sizeof *fill);
    for (size_t i = 0; i < c->nops; i++) by[fill[c->ops[i].sx]++] = (uint32_t)i;
    free(fill);
    c->by_stream = by;
    c->stream_ofs = ofs;
}

/* An open host slice while walking a thread. */
struct hframe {
    int64_t id, end;
    uint32_t name;
    uint8_t kind;
};

static int annot_of(struct an_ctx *c, const struct hframe *f)
{
    if (f->kind == TB_K_USER_ANNOTATION) return an_name_class(c, f->name) & AN_NAME_STEP ? 0 : 1;
    if (f->kind == TB_K_PYTHON) return an_name_class(c, f->name) & AN_NAME_MODULE ? 2 : 0;
    return 0;
}

/* Keeps row as one of the host slices of the thread last added to
 * c->hthreads (none past c->host_rows_max, or for ids past 32 bits: the
 * cursors and the critical path then read run.db). */
static void keep_hrow(struct an_ctx *c, const struct scan_slice *row, size_t *cap, int *over)
{
    if (*over) return;
    if (c->nhrows == c->host_rows_max || row->id > (int64_t)UINT32_MAX || row->parent > (int64_t)UINT32_MAX) {
        *over = 1;
        return;
    }
    if (c->nhrows == *cap) c->hrows = xrealloc(c->hrows, (*cap = *cap ? *cap * 2 : 4096) * sizeof *c->hrows);
    struct an_hrow *h = &c->hrows[c->nhrows++];
    memset(h, 0, sizeof *h);
    h->b = (struct scan_brief){ row->ts, row->dur, row->name, (uint8_t)row->kind };
    h->corr = row->corr;
    h->id = (uint32_t)row->id;
    h->parent = (uint32_t)row->parent;
    c->hthreads[c->nhthreads - 1].n++;
}

struct gpuscan_hosts *an_hosts_open(struct an_ctx *c)
{
    struct gpuscan_hosts *H = gpuscan_hosts_open(c->db, c->names);
    for (size_t i = 0; i < c->nhthreads; i++)
        gpuscan_hosts_hold(H, c->hthreads[i].track, &c->hrows[c->hthreads[i].first].b, c->hthreads[i].n,
                           sizeof *c->hrows);
    return H;
}

const struct an_hthread *an_hthread_of(const struct an_ctx *c, uint32_t track)
{
    size_t lo = 0, hi = c->nhthreads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->hthreads[mid].track < track) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->nhthreads && c->hthreads[lo].track == track ? &c->hthreads[lo] : NULL;
}

/* Walks each host thread of the rank once, in id order (= time order per
 * track), keeping the stack of open slices, and records every runtime or
 * driver call that carries a correlation id with what was open around it.
 * *out receives the calls in (ts, id) order with their correlation ids.
 * The same walk keeps the slices for the host cursors and the critical
 * path (keep_hrow). */
static int walk_launches(struct an_ctx *c, struct lrec **out, size_t *nout, struct err *e)
{
    struct scan_slices *cur;
    struct scan_slice row;
    int64_t track64;
    int rc;
    *out = NULL;
    *nout = 0;
    if ((rc = scan_slices_open(c->db, c->rank, SCAN_TRACKS_HOST, SCAN_KINDS_ALL, &cur, e))) return rc;
    struct hframe *stk = NULL;
    struct lrec *v = NULL;
    size_t ns = 0, scap = 0, cap = 0, n = 0, hcap = 0;
    int hover = 0;
    while ((rc = scan_slices_track(cur, &track64, e)) == 1) {
        if (track64 < 0 || track64 >= (1 << 30)) {
            rc = err_set(e, ERR_TOO_LARGE, "analyses: track id %lld does not fit 30 bits", (long long)track64);
            break;
        }
        uint32_t track = (uint32_t)track64;
        ns = 0;
        c->hthreads = xrealloc(c->hthreads, (c->nhthreads + 1) * sizeof *c->hthreads);
        c->hthreads[c->nhthreads++] = (struct an_hthread){ track, c->nhrows, 0 };
        int64_t first, last; /* room for the thread's rows at once: no copies as they grow */
        scan_slices_range(cur, &first, &last);
        size_t want = c->nhrows + (size_t)(last >= first ? last - first + 1 : 0);
        if (!hover && want > hcap && want <= c->host_rows_max)
            c->hrows = xrealloc(c->hrows, (hcap = want) * sizeof *c->hrows);
        while ((rc = scan_slices_step(cur, &row, e)) == 1) {
            keep_hrow(c, &row, &hcap, &hover);
            /* a top-level slice has parent 0, which no slice id is */
            int64_t id = row.id, ts = row.ts, dur = row.dur, parent = row.parent, corr = row.corr;
            uint32_t name = row.name;
            int kind = (int)row.kind;
            while (ns && stk[ns - 1].id != parent) ns--;
            if ((kind == TB_K_RUNTIME || kind == TB_K_DRIVER) && corr != 0) {
                if ((rc = id_fits(id, e))) break;
                if (n == cap) v = xrealloc(v, (cap = cap ? cap * 2 : 1024) * sizeof *v);
                struct lrec *r = &v[n++];
                struct an_launch *l = &r->l;
                memset(r, 0, sizeof *r);
                r->corr = corr;
                l->id = (uint32_t)id;
                l->ts = ts;
                l->end = ts + (dur > 0 ? dur : 0);
                l->name = name;
                l->thread = track;
                l->gpu = -1;
                for (size_t i = ns; i-- > 0;) {
                    if (stk[i].kind == TB_K_CPU_OP) {
                        if (!l->op) l->op = stk[i].name;
                        l->top_op = stk[i].name;
                        l->top_id = (uint32_t)stk[i].id; /* an ancestor: a smaller id */
                    } else if (!l->annot) {
                        int src = annot_of(c, &stk[i]);
                        if (src) {
                            l->annot = stk[i].name;
                            l->annot_src = (unsigned)src;
                        }
                    }
                }
            }
            if (ns == scap) stk = xrealloc(stk, (scap = scap ? scap * 2 : 64) * sizeof *stk);
            stk[ns++] = (struct hframe){ id, ts + (dur > 0 ? dur : 0), name, (uint8_t)kind };
        }
        if (rc < 0) break;
    }
    free(stk);
    scan_slices_close(cur);
    if (hover) { /* too many to hold: the cursors and the critical path read run.db */
        free(c->hrows);
        free(c->hthreads);
        c->hrows = NULL;
        c->hthreads = NULL;
        c->nhrows = c->nhthreads = 0;
    }
    if (rc < 0) {
        free(v);
        return rc;
    }
    if (n) xqsort(v, n, sizeof *v, cmp_lrec);
    *out = v;
    *nout = n;
    return 0;
}

/* The launch calls (c->launches) and, in *ix, their correlation index; the
 * loading records shrink in place into the context's. */
static int load_launches(struct an_ctx *c, struct corrix **ix, struct err *e)
{
    struct lrec *v;
    size_t n;
    *ix = NULL;
    int rc = walk_launches(c, &v, &n, e);
    if (rc) return rc;
    struct corrix *x = xmalloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = (struct corrix){ v[i].corr, (uint32_t)i };
    /* an_launch is smaller than lrec: element i moves down, never over one not yet moved */
    struct an_launch *l = (struct an_launch *)v;
    for (size_t i = 0; i < n; i++) memmove(&l[i], &v[i].l, sizeof *l);
    c->launches = n ? xrealloc(l, n * sizeof *l) : (free(l), NULL);
    c->nlaunches = n;
    corrix_sort(x, n);
    *ix = x;
    return 0;
}

/* The host thread that launches most (of the launches that reached the GPU). */
static void find_main_thread(struct an_ctx *c)
{
    if (!c->nlaunches || !c->nops) return;
    uint32_t *th = xmalloc(c->nlaunches * sizeof *th);
    size_t n = 0, best_n = 0;
    for (size_t i = 0; i < c->nlaunches; i++)
        if (c->launches[i].gpu >= 0) th[n++] = c->launches[i].thread;
    xqsort(th, n, sizeof *th, cmp_u32);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && th[j] == th[i]; j++) {}
        if (j - i > best_n) {
            best_n = j - i;
            c->main_thread = th[i];
        }
    }
    free(th);
}

struct gpu_peak {
    const char *match;
    double mem_gbps, link_gbps;
};

/* Published peaks: memory bandwidth of the board and the host link per
 * direction (PCIe x16: Gen3 15.75, Gen4 31.5, Gen5 63 GB/s; GH200's
 * NVLink-C2C 450). First match wins, so specific names come first. */
static const struct gpu_peak peaks[] = {
    { "GH200", 4000, 450 },   { "H200", 4800, 63 },     { "H100 PCIe", 2000, 63 }, { "H100 NVL", 3900, 63 },
    { "H100", 3350, 63 },     { "H800", 3350, 63 },     { "A100-SXM4-80GB", 2039, 31.5 },
    { "A100 80GB PCIe", 1935, 31.5 }, { "A100", 1555, 31.5 }, { "A800", 2039, 31.5 },
    { "L40S", 864, 31.5 },    { "L40", 864, 31.5 },     { "L4", 300, 31.5 },       { "A10", 600, 31.5 },
    { "A30", 933, 31.5 },     { "RTX 4090", 1008, 31.5 }, { "RTX 3090", 936, 31.5 }, { "V100", 900, 15.75 },
    { "T4", 320, 15.75 },     { "MI300X", 5300, 63 },   { "MI250", 3277, 31.5 },
};

static int load_gpu_peak(struct an_ctx *c, struct err *e)
{
    char name[sizeof c->gpu_name];
    int rc = analyses_read_gpu_name(c->db, c->rank, name, sizeof name, e);
    if (rc == 1) snprintf(c->gpu_name, sizeof c->gpu_name, "%s", name);
    if (rc == 1)
        for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
            if (strstr(c->gpu_name, peaks[i].match)) {
                c->gpu_mem_gbps = peaks[i].mem_gbps;
                c->link_gbps = peaks[i].link_gbps;
                break;
            }
    return rc < 0 ? rc : 0;
}

static void ctx_free(struct an_ctx *c)
{
    free(c->ops);
    free(c->mem_bytes);
    free(c->launches);
    free(c->steps);
    free(c->streams);
    free(c->by_stream);
    free(c->stream_ofs);
    free(c->ncache_id);
    free(c->ncache_bits);
    free(c->hrows);
    free(c->hthreads);
    c->hrows = NULL;
    c->hthreads = NULL;
    c->nhrows = c->nhthreads = 0;
    c->ncache_id = NULL;
    c->ncache_bits = NULL;
    c->ncache_cap = c->ncache_n = 0;
    c->ops = NULL;
    c->mem_bytes = NULL;
    c->nmem = 0;
    c->launches = NULL;
    c->steps = NULL;
    c->streams = NULL;
    c->by_stream = NULL;
    c->stream_ofs = NULL;
    c->nops = c->nlaunches = c->nsteps = c->nstreams = 0;
}

static int load_rank(struct an_ctx *c, struct err *e)
{
    int rc;
    double t = log_now_s();
    struct corrix *ix = NULL;
    /* the launches first, so that each op finds its launch as it is read */
    if ((rc = load_steps(c, e)) || (rc = load_launches(c, &ix, e))) return rc;
    LOG_LAP(c->rank, "launch calls", &t);
    rc = load_gpu(c, ix, c->nlaunches, e);
    free(ix);
    if (rc) return rc;
    sort_ops(c);
    group_streams(c);
    find_main_thread(c);
    LOG_LAP(c->rank, "steps and GPU ops", &t);
    if ((rc = load_gpu_peak(c, e))) return rc;
    if (c->nsteps) {
        c->w0 = c->steps[0].ts;
        c->w1 = c->steps[0].end;
        for (size_t i = 0; i < c->nsteps; i++) {
            if (c->steps[i].ts < c->w0) c->w0 = c->steps[i].ts;
            if (c->steps[i].end > c->w1) c->w1 = c->steps[i].end;
        }
    } else if (c->nops) {
        c->w0 = c->ops[0].ts;
        c->w1 = c->ops[0].end;
        for (size_t i = 0; i < c->nops; i++)
            if (c->ops[i].end > c->w1) c->w1 = c->ops[i].end;
    } else {
        c->w0 = c->w1 = 0;
    }
    return 0;
}

/* ====================================================================== */
/* Driver                                                                 */
/* ====================================================================== */

typedef int (*an_fn)(struct an_ctx *, json_t *, struct err *);
static const struct {
    const char *name;
    an_fn fn;
} registry[] = {
#define AN_ENTRY(n) { #n, an_##n },
    ANALYSES_LIST(AN_ENTRY)
#undef AN_ENTRY
};

static int run_rank(struct an_ctx *c, sqlite3_stmt *ins_doc, struct err *e)
{
    int rc = load_rank(c, e);
    if (rc) return rc;
    json_t *doc = json_object();
    json_object_set_new(doc, "window_ns", json_pack("[I,I]", (json_int_t)c->w0, (json_int_t)c->w1));
    json_object_set_new(doc, "steps", json_integer((json_int_t)c->nsteps));
    json_object_set_new(doc, "gpu", json_pack("{s:s,s:f,s:f}", "name", c->gpu_name, "memory_gbps",
                                              c->gpu_mem_gbps, "link_gbps", c->link_gbps));
    double t = log_now_s();
    for (size_t i = 0; i < sizeof registry / sizeof registry[0] && rc == 0; i++) {
        json_t *o = json_object();
        rc = registry[i].fn(c, o, e);
        json_object_set_new(doc, registry[i].name, o);
        LOG_LAP(c->rank, registry[i].name, &t);
    }
    if (rc == 0) rc = flush_samples(c, e);
    if (rc == 0) rc = flush_segments(c, e);
    if (rc == 0) {
        char *text = json_dumps(doc, JSON_COMPACT);
        sqlite3_reset(ins_doc);
        sqlite3_bind_int(ins_doc, 1, c->rank);
        sqlite3_bind_text(ins_doc, 2, text, -1, free);
        if (sqlite3_step(ins_doc) != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analyses (document insert)");
    }
    json_decref(doc);
    ctx_free(c);
    return rc;
}

/* analyses_run over every rank (rank < 0) or one, on a scratch database
 * (scratch: no drops, no index). */
static int run_ranks(sqlite3 *db, int rank, int scratch, size_t host_rows, struct err *e)
{
    struct an_ctx c;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.host_rows_max = host_rows;
    c.wbuf = xcalloc(1, sizeof *c.wbuf);
    sqlite3_stmt *ranks = NULL, *ins_doc = NULL;
    int rc = 0;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return rundb_db_error(db, e, "analyses (begin)");
    if ((!scratch && sqlite3_exec(db, drop_sql, NULL, NULL, NULL) != SQLITE_OK) ||
        sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "analyses (schema)");
        goto out;
    }
    if ((rc = rundb_prepare(db, "INSERT INTO anseries(rank, kind, key, name, unit) VALUES(?,?,?,?,?)", &c.ins_series,
                            e)) ||
        (rc =
             rundb_prepare(db, AN_SAMPLE_SQL "(?,?,?)", &c.ins_sample, e)) ||
        (rc = rundb_prepare(db, AN_SEG_SQL "(?,?,?,?,?,?,?)", &c.ins_seg, e)) ||
        (rc = rundb_prepare(db, AN_SAMPLE_SQL AN_ROWS32("(?,?,?)"), &c.wbuf->smp_n, e)) ||
        (rc = rundb_prepare(db, AN_SEG_SQL AN_ROWS32("(?,?,?,?,?,?,?)"), &c.wbuf->seg_n, e)) ||
        (rc = rundb_prepare(db, "INSERT INTO analyses(rank, doc) VALUES(?,?)", &ins_doc, e)) ||
        (rc = rundb_prepare(db, "SELECT rank FROM rank WHERE ?1 < 0 OR rank = ?1 ORDER BY rank", &ranks, e)))
        goto out;
    sqlite3_bind_int(ranks, 1, rank);
    if ((rc = gpuscan_names_open(db, &c.names, e))) goto out;
    int src;
    while (rc == 0 && (src = sqlite3_step(ranks)) == SQLITE_ROW) {
        c.rank = sqlite3_column_int(ranks, 0);
        rc = run_rank(&c, ins_doc, e);
    }
    if (rc == 0 && src != SQLITE_DONE) rc = rundb_db_error(db, e, "analyses (ranks)");
    if (rc == 0 && gpuscan_names_error(c.names, e) < 0) rc = err_prefix(e, "analyses");
    if (rc == 0 && !scratch && sqlite3_exec(db, "CREATE INDEX critpath_rank_ts ON critpath(rank, ts)", NULL, NULL, NULL))
        rc = rundb_db_error(db, e, "analyses (index)");
out:
    ctx_free(&c);
    gpuscan_names_close(c.names);
    sqlite3_finalize(ranks);
    sqlite3_finalize(ins_doc);
    sqlite3_finalize(c.ins_series);
    sqlite3_finalize(c.ins_sample);
    sqlite3_finalize(c.ins_seg);
    sqlite3_finalize(c.wbuf->smp_n);
    sqlite3_finalize(c.wbuf->seg_n);
    free(c.wbuf);
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "analyses (commit)");
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int analyses_run(sqlite3 *db, struct err *e)
{
    return run_ranks(db, -1, 0, AN_HOST_ROWS, e);
}

int analyses_run_held(sqlite3 *db, size_t host_rows, struct err *e)
{
    return run_ranks(db, -1, 0, host_rows, e);
}

int analyses_run_rank(sqlite3 *db, int rank, struct err *e)
{
    return run_ranks(db, rank, 1, AN_HOST_ROWS, e);
}

/* The scratch's documents copied into the run's, their queue series ids
 * (queue.c) moved by base like the anseries rows; JSON written back as
 * run_rank writes it. */
static int adopt_docs(sqlite3 *db, int64_t base, struct err *e)
{
    sqlite3_stmt *rd = NULL, *ins = NULL;
    int rc = rundb_prepare(db, "SELECT rank, doc FROM " RUNDB_ASIDE ".analyses ORDER BY rank", &rd, e);
    if (rc == 0) rc = rundb_prepare(db, "INSERT INTO main.analyses(rank, doc) VALUES(?,?)", &ins, e);
    int src = SQLITE_DONE;
    while (rc == 0 && (src = sqlite3_step(rd)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(rd, 1);
        json_t *doc = base && text ? json_loads(text, 0, NULL) : NULL;
        json_t *streams = json_object_get(json_object_get(doc, "queue"), "streams"), *st;
        size_t k;
        json_array_foreach(streams, k, st) {
            json_t *id = json_object_get(st, "series");
            if (json_is_integer(id)) json_integer_set(id, json_integer_value(id) + base);
        }
        sqlite3_reset(ins);
        sqlite3_bind_int(ins, 1, sqlite3_column_int(rd, 0));
        if (doc) sqlite3_bind_text(ins, 2, json_dumps(doc, JSON_COMPACT), -1, free);
        else sqlite3_bind_value(ins, 2, sqlite3_column_value(rd, 1));
        json_decref(doc);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = rundb_db_error(db, e, "analyses (adopt)");
    }
    if (rc == 0 && src != SQLITE_DONE) rc = rundb_db_error(db, e, "analyses (adopt)");
    sqlite3_finalize(rd);
    sqlite3_finalize(ins);
    return rc;
}

/* The rows of analyses_adopt, inside its transaction. */
static int adopt_rows(sqlite3 *db, int first, int last, struct err *e)
{
    if (first && (sqlite3_exec(db, drop_sql, NULL, NULL, NULL) != SQLITE_OK ||
                  sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK))
        return rundb_db_error(db, e, "analyses (adopt)");
    /* series ids go on from the ranks adopted before, as analyses_run numbers them */
    static const char *const copy[] = {
        "SELECT coalesce(max(id), 0) FROM main.anseries",
        "INSERT INTO main.anseries SELECT id + ?1, rank, kind, key, name, unit FROM " RUNDB_ASIDE ".anseries"
        " ORDER BY id",
        "INSERT INTO main.ansample SELECT series + ?1, ts, value FROM " RUNDB_ASIDE ".ansample",
        "INSERT INTO main.critpath SELECT * FROM " RUNDB_ASIDE ".critpath",
    };
    int64_t base = 0;
    int rc = 0;
    for (size_t i = 0; i < sizeof copy / sizeof copy[0] && rc == 0; i++) {
        sqlite3_stmt *st;
        if ((rc = rundb_prepare(db, copy[i], &st, e)) != 0) break;
        if (sqlite3_bind_parameter_count(st) > 0) sqlite3_bind_int64(st, 1, base);
        int step = sqlite3_step(st);
        if (i == 0 && step == SQLITE_ROW) base = sqlite3_column_int64(st, 0);
        else if (step != SQLITE_DONE) rc = rundb_db_error(db, e, "analyses (adopt)");
        sqlite3_finalize(st);
        if (i == 0 && rc == 0) rc = adopt_docs(db, base, e);
    }
    if (rc == 0 && last && sqlite3_exec(db, "CREATE INDEX critpath_rank_ts ON critpath(rank, ts)", NULL, NULL, NULL))
        rc = rundb_db_error(db, e, "analyses (index)");
    return rc;
}

int analyses_adopt(sqlite3 *db, int first, int last, struct err *e)
{
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return rundb_db_error(db, e, "analyses (adopt)");
    int rc = adopt_rows(db, first, last, e);
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "analyses (commit)");
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* ====================================================================== */
/* Readers                                                                */
/* ====================================================================== */

int analyses_read(sqlite3 *db, int rank, json_t **out, struct err *e)
{
    *out = NULL;
    int rc = scan_has_table(db, "analyses", e);
    if (rc <= 0) return rc;
    sqlite3_stmt *st;
    if (rundb_prepare(db, "SELECT rank, doc FROM analyses WHERE ?1 < 0 OR rank = ?1 ORDER BY rank", &st, e))
        return e->code;
    sqlite3_bind_int(st, 1, rank);
    json_t *all = json_object();
    char key[16];
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_error_t je;
        json_t *doc = json_loadb((const char *)sqlite3_column_blob(st, 1), (size_t)sqlite3_column_bytes(st, 1), 0,
                                 &je);
        snprintf(key, sizeof key, "%d", sqlite3_column_int(st, 0));
        json_object_set_new(all, key, doc ? doc : json_null());
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(all);
        return rundb_db_error(db, e, "analyses (read)");
    }
    *out = all;
    return 0;
}

int analyses_critpath(sqlite3 *db, int rank, int step, int64_t t0, int64_t t1, json_t **out, struct err *e)
{
    *out = NULL;
    int rc = scan_has_table(db, "critpath", e);
    if (rc < 0) return rc;
    if (!rc) return err_set(e, ERR_NOT_FOUND, "this run has no critical path (imported before the analyses existed)");
    sqlite3_stmt *st;
    if (rundb_prepare(db,
                      "SELECT ts, dur, cat, track, slice FROM critpath WHERE rank = ?1 AND (?2 < 0 OR step = ?2)"
                      " AND ts < ?4 AND ts + dur > ?3 ORDER BY ts LIMIT 200000",
                      &st, e))
        return e->code;
    sqlite3_bind_int(st, 1, rank);
    sqlite3_bind_int(st, 2, step);
    sqlite3_bind_int64(st, 3, t0);
    sqlite3_bind_int64(st, 4, t1);
    json_t *segs = json_array();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(segs, json_pack("[I,I,i,I,I]", (json_int_t)sqlite3_column_int64(st, 0),
                                              (json_int_t)sqlite3_column_int64(st, 1), sqlite3_column_int(st, 2),
                                              (json_int_t)sqlite3_column_int64(st, 3),
                                              (json_int_t)sqlite3_column_int64(st, 4)));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(segs);
        return rundb_db_error(db, e, "analyses (critical path)");
    }
    json_t *cats = json_array();
    for (int i = 0; i < AN_CP_NCAT; i++) json_array_append_new(cats, json_string(an_cp_names[i]));
    *out = json_pack("{s:i,s:o,s:o}", "step", step, "categories", cats, "segments", segs);
    return 0;
}

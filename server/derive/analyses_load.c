/* analyses_load.c — one rank's context for the GPU analyses (see
 * include/derive/analyses_load.h): steps, GPU streams and ops, launch calls
 * with what was open around each, and the host threads' slices held for
 * the host cursors and the critical path.
 */
#define LOG_MODULE "analyses"
#include "derive/analyses_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/corrix.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "derive/slice_feed.h"
#include "store/analyses_read.h"
#include "store/model.h"
#include "store/scan.h"

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
static void keep_hrow(struct an_ctx *c, const struct analyses_read_hslice *row, size_t *cap, int *over)
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
    struct analyses_read_hosts *cur;
    struct analyses_read_hslice row;
    int64_t track64, first, last;
    int rc;
    *out = NULL;
    *nout = 0;
    int64_t total;
    /* past the limit none are held: known before the walk, so it never
     * holds the limit's rows only to drop them */
    if ((rc = scan_slices_count(c->db, c->rank, SCAN_TRACKS_HOST, &total, e)) ||
        (rc = analyses_read_hosts_open(c->db, c->rank, &cur, e)))
        return rc;
    struct hframe *stk = NULL;
    struct lrec *v = NULL;
    size_t ns = 0, scap = 0, cap = 0, n = 0, hcap = 0;
    int hover = total > (int64_t)c->host_rows_max;
    while ((rc = analyses_read_hosts_next(cur, &track64, &first, &last, e)) == 1) {
        if (track64 < 0 || track64 >= (1 << 30)) {
            rc = err_set(e, ERR_TOO_LARGE, "analyses: track id %lld does not fit 30 bits", (long long)track64);
            break;
        }
        uint32_t track = (uint32_t)track64;
        ns = 0;
        c->hthreads = xrealloc(c->hthreads, (c->nhthreads + 1) * sizeof *c->hthreads);
        c->hthreads[c->nhthreads++] = (struct an_hthread){ track, c->nhrows, 0 };
        /* room for the thread's rows at once: no copies as they grow */
        size_t want = c->nhrows + (size_t)(last >= first ? last - first + 1 : 0);
        if (!hover && want > hcap && want <= c->host_rows_max)
            c->hrows = xrealloc(c->hrows, (hcap = want) * sizeof *c->hrows);
        /* the thread's slices as the import's stream held them, or read */
        const struct slice_feed_row *fr = slice_feed_track(c->feed, track64, first, last);
        for (int64_t next = first;;) {
            if (!fr) {
                if ((rc = analyses_read_hslices_next(cur, &row, e)) != 1) break;
            } else if (next > last) {
                rc = 0;
                break;
            } else {
                const struct slice_feed_row *r = &fr[next - first];
                row = (struct analyses_read_hslice){ next, r->ts, r->dur, r->parent, r->corr, r->name, r->kind };
                next++;
            }
            keep_hrow(c, &row, &hcap, &hover);
            /* a top-level slice has parent 0, which no slice id is */
            int64_t id = row.id, ts = row.ts, dur = row.dur, parent = row.parent, corr = row.corr;
            uint32_t name = row.name;
            int kind = row.kind;
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
    analyses_read_hosts_close(cur);
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

void analyses_load_free(struct an_ctx *c)
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

int analyses_preload(sqlite3 *db, int rank, const struct slice_feed *feed, struct analyses_pre **out, struct err *e)
{
    struct an_ctx c;
    struct corrix *ix = NULL;
    double t = log_now_s();
    memset(&c, 0, sizeof c);
    c.db = db;
    c.rank = rank;
    c.feed = feed;
    c.host_rows_max = AN_HOST_ROWS;
    *out = NULL;
    int rc = gpuscan_names_open(db, &c.names, e);
    if (rc == 0) rc = load_launches(&c, &ix, e);
    if (rc == 0) rc = load_gpu(&c, ix, c.nlaunches, e);
    if (rc == 0) {
        sort_ops(&c);
        group_streams(&c);
        find_main_thread(&c);
    }
    if (rc == 0 && gpuscan_names_error(c.names, e) < 0) rc = err_prefix(e, "analyses");
    gpuscan_names_close(c.names);
    c.names = NULL;
    if (rc == 0) {
        struct analyses_pre *p = xcalloc(1, sizeof *p);
        *p = (struct analyses_pre){ rank,  c.host_rows_max, c.launches, c.nlaunches, ix,
                                    c.hrows, c.nhrows,       c.hthreads,  c.nhthreads, NULL };
        c.launches = NULL;
        c.hrows = NULL;
        c.hthreads = NULL;
        c.nlaunches = c.nhrows = c.nhthreads = 0;
        ix = NULL;
        p->gpu = xmalloc(sizeof *p->gpu);
        *p->gpu = c; /* the GPU's arrays move with it */
        memset(&c, 0, sizeof c);
        *out = p;
        LOG_LAP(rank, "launch calls and GPU ops (read ahead)", &t);
    }
    free(ix);
    analyses_load_free(&c);
    return rc;
}

void analyses_pre_free(struct analyses_pre *pre)
{
    if (!pre) return;
    free(pre->launches);
    free(pre->ix);
    free(pre->hrows);
    free(pre->hthreads);
    if (pre->gpu) analyses_load_free(pre->gpu);
    free(pre->gpu);
    free(pre);
}

/* pre's launch calls, host slices, GPU streams and ops moved into c (whose
 * are empty) and *ix given pre's correlation index; pre emptied. */
static void take_pre(struct an_ctx *c, struct analyses_pre *pre, struct corrix **ix)
{
    c->launches = pre->launches;
    c->nlaunches = pre->nlaunches;
    c->hrows = pre->hrows;
    c->nhrows = pre->nhrows;
    c->hthreads = pre->hthreads;
    c->nhthreads = pre->nhthreads;
    *ix = pre->ix;
    pre->launches = NULL;
    pre->hrows = NULL;
    pre->hthreads = NULL;
    pre->ix = NULL;
    pre->nlaunches = pre->nhrows = pre->nhthreads = 0;
    pre->rank = -1;
    struct an_ctx *g = pre->gpu;
    c->ops = g->ops;
    c->nops = g->nops;
    c->mem_bytes = g->mem_bytes;
    c->nmem = g->nmem;
    c->streams = g->streams;
    c->nstreams = g->nstreams;
    c->by_stream = g->by_stream;
    c->stream_ofs = g->stream_ofs;
    c->main_thread = g->main_thread;
    c->ncache_id = g->ncache_id;
    c->ncache_bits = g->ncache_bits;
    c->ncache_cap = g->ncache_cap;
    c->ncache_n = g->ncache_n;
    memset(g, 0, sizeof *g);
    free(g);
    pre->gpu = NULL;
}

int analyses_load_rank(struct an_ctx *c, struct analyses_pre *pre, struct err *e)
{
    int rc;
    double t = log_now_s();
    struct corrix *ix = NULL;
    if ((rc = load_steps(c, e))) return rc;
    if (pre && pre->rank == c->rank && pre->host_rows_max == c->host_rows_max && pre->gpu) {
        take_pre(c, pre, &ix);
        free(ix);
        LOG_LAP(c->rank, "steps", &t);
    } else {
        /* the launches before the ops, so that each op finds its launch as it is read */
        if ((rc = load_launches(c, &ix, e))) return rc;
        LOG_LAP(c->rank, "launch calls", &t);
        rc = load_gpu(c, ix, c->nlaunches, e);
        free(ix);
        if (rc) return rc;
        sort_ops(c);
        group_streams(c);
        find_main_thread(c);
        LOG_LAP(c->rank, "steps and GPU ops", &t);
    }
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

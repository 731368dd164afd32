/* analyses/critical_path.c — the critical path of each step (HTA's critical-
 * path analysis, see include/derive/analyses.h), as time bound by category and as
 * stored segments for the timeline.
 *
 * Model. Every host slice, launch call and GPU op is a node of a DAG whose
 * edges say "cannot start (or end) before": a GPU op waits for its launch
 * call (launch edge) and for the previous op on its stream (kernel→kernel
 * edge); host work on a thread is sequential; a blocking call (a sync, a
 * synchronous copy) ends after the GPU op it waits for (sync edge). In such
 * a max-plus DAG each node starts when its last predecessor ends, so walking
 * BACKWARDS from the step's end and always following the predecessor that
 * ended last yields the longest path — the critical path — without building
 * the graph: one pass per step, time decreasing monotonically from the
 * step's end to its start. Every nanosecond of [ts, end) is attributed to
 * exactly one segment, so the categories add up to the step's duration.
 *
 * The walk:
 *  - At the step's end: the op that ended last, if the GPU finished no
 *    earlier than the host; else the main (launching) thread.
 *  - On a GPU op [ts, end): the op itself (gpu_compute, communication for
 *    collective kernels). Its launch "arrives" at min(call end, op start) —
 *    a kernel may start before its launch call returns, and a blocking copy
 *    runs inside its call. Later of that and the stream's previous op's end
 *    wins (ties: the stream): the gap to the previous op is kernel_gap, the
 *    gap to the launch call launch_overhead, and the walk goes on at the
 *    previous op or on the launching thread. No predecessor: the main
 *    thread at the op's start.
 *  - On a host thread at time t: the stretch [a, t) where the set of open
 *    slices is constant (a: the latest slice start or end before t). Inside
 *    a blocking call that did wait (some GPU op ended within it, before t)
 *    the walk jumps to the op that ended last (a stream sync: that stream,
 *    when the trace's cuda_sync events say which); the wait is not on the
 *    path, only the call's tail after the op's end (launch_overhead). Else
 *    the stretch is dataloader (inside a DataLoader call), launch_overhead
 *    (inside a runtime/driver call) or cpu (ops, Python, annotations,
 *    unrecorded host time). A non-main thread with nothing open (autograd's
 *    backward thread between ops) hands over to the main thread.
 *  - A cpu stretch running no operator (only step spans, annotations,
 *    Python frames open) under a host collective (gloo:, nccl: ...) of
 *    another thread of the rank waits for it — the main thread blocked in
 *    backward() while DDP's gloo thread all-reduces: the walk follows the
 *    collective on its thread (communication), back to main at its start.
 *  - The walk stops at the step's start; GPU ops and calls from before it
 *    are clipped there.
 * Not modelled: cross-stream event waits (cudaStreamWaitEvent): such a wait
 * shows as kernel_gap or launch_overhead before the waiting op.
 *
 * Output ("critical_path" of the analyses document):
 *   {"steps": [{"idx", "name", "ts", "dur", "by": {"cpu_ns", "dataloader_ns",
 *     "gpu_compute_ns", "communication_ns", "launch_overhead_ns",
 *     "kernel_gap_ns"}, "bound_by": largest category, "segments": stored,
 *     "truncated": true when more than CP_MAX_SEGS were cut}],
 *    "totals": {"<cat>_ns"}, "shares": {"<cat>": fraction of all steps},
 *    "bound_by": largest total category (null without steps)}
 * Segments go to the critpath table in time order, adjacent pieces of one
 * slice (same category and track) merged.
 *
 * Memory: per rank the op links (one int32 per op: its predecessor on its
 * stream; the stream groups are the context's) and the stream-sync
 * table; per step the host slices of the threads the walk visits (loaded on
 * first visit from the rows the context holds, an_hthread_of, or past
 * AN_HOST_ROWS by id range of the track from run.db: the same rows) and at
 * most CP_MAX_SEGS segments.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/analyses.h"
#include "derive/cp_chain.h"
#include "derive/cp_waits.h"
#include "store/model.h"
#include "store/scan.h"
#include "store/slice_read.h"


/* Segments stored per step; the category times stay exact beyond it. */
#define CP_MAX_SEGS 50000
/* Parent levels read to find the slices open at a step's start, as many as
 * a stretch looks at. */
#define CP_MAX_DEPTH CP_CHAIN_DEPTH
/* Ops looked back on one stream for one that ended before a time (ops on a
 * stream overlap only by clock rounding). */
#define CP_SCAN_BACK 64
/* Moves without progress in time before jumps are refused (a guard: each
 * jump needs a strictly earlier time than the previous one anyway). */
#define CP_MAX_STALL 8

struct cp_slice {
    struct cp_node node;  /* end; parent: index in the thread's array, -1
                           * none; may end before its child (cp_chain.h) */
    int64_t id, ts;
    int32_t target;       /* blocking copy: index of the op it waits for, -1 */
    uint32_t stream;      /* stream sync: the stream track waited on, 0 any */
    int8_t act;           /* enum gpuscan_act, -1 says nothing */
    uint8_t sync;         /* blocks the host until the GPU is done */
};

/* A host thread as the walk sees it in the current step. */
struct cp_thread {
    uint32_t track;
    int known;             /* first/last read */
    int64_t first, last;   /* its slice id range */
    int loaded_step;       /* the step (index + 1) whose slices s holds */
    int32_t before;        /* started_before() of the latest time asked (the walk's
                            * time only decreases, so the answer only moves back) */
    struct cp_slice *s;    /* ascending id = start order, parents first */
    size_t n, cap;
    struct cp_chain chain; /* the slices open at the walk's time (cp_chain.h) */
};

struct cp_seg {
    int64_t ts, dur, slice;
    uint32_t track;
    uint8_t cat;
};

struct cp_walk {
    struct an_ctx *c;
    struct slice_read_ids *ids; /* the store's walks by id inside a track */
    uint32_t main;        /* the thread holding the step spans (else the one launching most), 0 none */
    int32_t *prev;        /* previous op on the same stream, -1 */
    struct cp_waits waits; /* stream syncs and host collectives (cp_waits.h) */
    struct cp_thread *th;
    size_t nth;
    const struct an_step *step;
    int stepno;           /* index + 1 of the current step in c->steps */
    struct cp_seg *seg;   /* the current step's segments, latest first */
    size_t nseg;
    int truncated;
    int64_t by[AN_CP_NCAT];
};

/* ====================================================================== */
/* Per-rank indexes                                                       */
/* ====================================================================== */

/* Each op's predecessor on its stream, from the context's stream groups. */
static void index_prev(struct cp_walk *w)
{
    const struct an_ctx *c = w->c;
    w->prev = xmalloc((c->nops ? c->nops : 1) * sizeof *w->prev);
    for (size_t k = 0; k < c->nstreams; k++)
        for (size_t at = c->stream_ofs[k]; at < c->stream_ofs[k + 1]; at++)
            w->prev[c->by_stream[at]] = at > c->stream_ofs[k] ? (int32_t)c->by_stream[at - 1] : -1;
}

/* A cpu stretch of h (no runtime, DataLoader or collective call open) that
 * runs no operator either: it may be a wait (cp_waits_collective). */
static int runs_no_op(const struct cp_thread *h, const int32_t *open, int n)
{
    for (int i = 0; i < n; i++)
        if (h->s[open[i]].act == GPUSCAN_OP) return 0;
    return 1;
}

/* The op of the launch call that is host slice id (starting at ts), -1. */
static int32_t launched_op(const struct an_ctx *c, int64_t id, int64_t ts)
{
    size_t lo = 0, hi = c->nlaunches;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->launches[mid].ts < ts) lo = mid + 1;
        else hi = mid;
    }
    for (; lo < c->nlaunches && c->launches[lo].ts == ts; lo++)
        if (c->launches[lo].id == id) return c->launches[lo].gpu;
    return -1;
}

/* The op on stream k (an index into c->streams; all streams when k < 0)
 * that ended last in (after, t], -1 none. */
static int32_t last_ended(const struct an_ctx *c, int k, int64_t after, int64_t t)
{
    int32_t best = -1;
    size_t k0 = k < 0 ? 0 : (size_t)k, k1 = k < 0 ? c->nstreams : (size_t)k + 1;
    const uint32_t *by = c->by_stream;
    for (size_t s = k0; s < k1 && s < c->nstreams; s++) {
        size_t lo = c->stream_ofs[s], hi = c->stream_ofs[s + 1];
        while (lo < hi) { /* first op of the group starting after t */
            size_t mid = lo + (hi - lo) / 2;
            if (c->ops[by[mid]].ts <= t) lo = mid + 1;
            else hi = mid;
        }
        for (size_t n = 0; lo > c->stream_ofs[s] && n < CP_SCAN_BACK; n++) {
            const struct an_op *o = &c->ops[by[--lo]];
            if (o->end > t) continue;
            if (o->end > after && (best < 0 || o->end > c->ops[best].end)) best = (int32_t)by[lo];
            break;
        }
    }
    return best;
}

/* ====================================================================== */
/* Host threads of a step                                                 */
/* ====================================================================== */

static struct cp_thread *thread_get(struct cp_walk *w, uint32_t track)
{
    for (size_t i = 0; i < w->nth; i++)
        if (w->th[i].track == track) return &w->th[i];
    w->th = xrealloc(w->th, (w->nth + 1) * sizeof *w->th);
    struct cp_thread *h = &w->th[w->nth++];
    memset(h, 0, sizeof *h);
    h->track = track;
    return h;
}

static int32_t index_of(const struct cp_thread *h, int64_t id)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->s[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < h->n && h->s[lo].id == id ? (int32_t)lo : -1;
}

/* Appends the slice row; parent_id receives its parent's id (0 none). */
static void push_row(struct cp_walk *w, struct cp_thread *h, const struct scan_slice *row, int64_t *parent_id)
{
    struct an_ctx *c = w->c;
    int kind = (int)row->kind;
    int64_t ts = row->ts, dur = row->dur;
    int64_t corr = row->corr;
    *parent_id = row->parent;
    if (h->n == h->cap) h->s = xrealloc(h->s, (h->cap = h->cap ? h->cap * 2 : 256) * sizeof *h->s);
    struct cp_slice *s = &h->s[h->n++];
    memset(s, 0, sizeof *s);
    s->id = row->id;
    s->ts = ts;
    s->node.end = ts + (dur > 0 ? dur : 0);
    s->node.parent = -1;
    s->target = -1;
    if (kind == TB_K_SYNC) {
        /* a cuda_sync event on the host's own track: the host is blocked */
        s->act = GPUSCAN_SYNC;
        s->sync = 1;
    } else {
        s->act = (int8_t)gpuscan_names_act(c->names, row->name, kind);
        s->sync = s->act == GPUSCAN_SYNC;
    }
    if ((kind == TB_K_RUNTIME || kind == TB_K_DRIVER) && corr) {
        if (s->sync) s->stream = cp_waits_sync_stream(&w->waits, corr);
        /* cudaMemcpyAsync into pageable memory returns only after its copy:
         * a copy that ran inside its own call blocked it. (A kernel ending
         * before its launch call returns did not: the call is async.) */
        int32_t op = launched_op(c, s->id, ts);
        if (op >= 0) {
            const struct an_op *o = &c->ops[op];
            if (o->kind == TB_K_MEMCPY && o->pinned != 1 && o->end > s->ts && o->end <= s->node.end) {
                s->sync = 1;
                s->target = op;
            }
        }
    }
}

/* The first slice id of [first, last] starting at or after t (last + 1:
 * none); the clustered ids of a track are in start order. */
static int first_from(struct cp_walk *w, int64_t first, int64_t last, int64_t t, int64_t *out, struct err *e)
{
    int64_t lo = first, hi = last + 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        int64_t id, ts;
        int rc = slice_read_ids_first(w->ids, mid, last, &id, &ts, e);
        if (rc < 0) return rc;
        if (rc == 1 && ts < t) lo = id + 1;
        else hi = mid;
    }
    *out = lo;
    return 0;
}

/* A held host slice (an_hrow) as run.db would give it (track not read: 0). */
static void hrow_slice(const struct an_hrow *r, struct scan_slice *row)
{
    *row = (struct scan_slice){ r->id, 0, r->b.ts, r->b.dur, r->parent, r->corr, r->b.name, (enum tb_kind)r->b.kind };
}

/* The index in r[0..n) (ascending ids) of slice id, -1 none. */
static ptrdiff_t hrow_at(const struct an_hrow *r, size_t n, int64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && r[lo].id == id ? (ptrdiff_t)lo : -1;
}

/* After the open chain (h->s[0 .. h->n), innermost first): reversed, each
 * the parent of the next. */
static void chain_order(struct cp_thread *h)
{
    for (size_t i = 0; i < h->n / 2; i++) {
        struct cp_slice t = h->s[i];
        h->s[i] = h->s[h->n - 1 - i];
        h->s[h->n - 1 - i] = t;
    }
    for (size_t i = 1; i < h->n; i++) h->s[i].node.parent = (int32_t)(i - 1);
}

/* thread_load from the slices the context holds (t): the same rows, read
 * as thread_load reads them from run.db, by the same ids. */
static void thread_load_held(struct cp_walk *w, struct cp_thread *h, const struct an_hthread *t)
{
    const struct an_step *s = w->step;
    const struct an_hrow *r = w->c->hrows + t->first;
    struct scan_slice row;
    int64_t pid;
    if (!t->n) return;
    size_t lo = 0, hi = t->n; /* the first starting at or after the step */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].b.ts < s->ts) lo = mid + 1;
        else hi = mid;
    }
    int64_t first = lo < t->n ? r[lo].id : (int64_t)r[t->n - 1].id + 1;
    ptrdiff_t k = hrow_at(r, t->n, first - 1);
    for (int depth = 0; k >= 0 && depth < CP_MAX_DEPTH; depth++) {
        hrow_slice(&r[k], &row);
        if (row.kind != TB_K_TRACE) push_row(w, h, &row, &pid);
        if (!row.parent) break;
        k = hrow_at(r, t->n, row.parent);
    }
    chain_order(h);
    for (size_t i = lo; i < t->n; i++) {
        if (r[i].b.kind == TB_K_TRACE) continue;
        if (r[i].b.ts >= s->end) break;
        hrow_slice(&r[i], &row);
        push_row(w, h, &row, &pid);
        struct cp_slice *x = &h->s[h->n - 1];
        x->node.parent = pid ? index_of(h, pid) : -1;
    }
}

/* Loads h's slices that overlap the current step: those starting in it (the
 * clustered ids of a track are in start order, so a binary search over ids
 * finds the first) and the ones open at its start (the parent chain of the
 * last slice starting before it). */
static int thread_load(struct cp_walk *w, struct cp_thread *h, struct err *e)
{
    const struct an_step *s = w->step;
    struct scan_slice row;
    int rc;
    h->n = 0;
    h->before = -1;
    h->loaded_step = w->stepno;
    const struct an_hthread *t = an_hthread_of(w->c, h->track);
    if (t) { /* held by the context: no read */
        thread_load_held(w, h, t);
        cp_chain_reset(&h->chain, h->n);
        h->before = (int32_t)h->n - 1;
        return 0;
    }
    if (!h->known) {
        if ((rc = slice_read_ids_track(w->ids, h->track, &h->first, &h->last, e)) < 0) return rc;
        h->known = 1;
    }
    if (h->first <= 0 || h->last < h->first) return 0;
    int64_t first;
    if ((rc = first_from(w, h->first, h->last, s->ts, &first, e))) return rc;
    /* the chain open at the step's start, innermost first, then reversed */
    int64_t id = first - 1, pid;
    for (int depth = 0; id >= h->first && depth < CP_MAX_DEPTH; depth++) {
        if ((rc = slice_read_ids_get(w->ids, id, &row, e)) < 0) return rc;
        if (rc == 0) break;
        if (row.kind == TB_K_TRACE) { /* the profiler's own range says nothing */
            pid = row.parent;
            if (!pid) break;
            id = pid;
            continue;
        }
        push_row(w, h, &row, &pid);
        if (!pid) break;
        id = pid;
    }
    chain_order(h);
    slice_read_ids_begin(w->ids, first, h->last);
    while ((rc = slice_read_ids_next(w->ids, &row, e)) == 1) {
        if (row.ts >= s->end) break;
        push_row(w, h, &row, &pid);
        struct cp_slice *x = &h->s[h->n - 1];
        x->node.parent = pid ? index_of(h, pid) : -1;
    }
    slice_read_ids_end(w->ids);
    if (rc < 0) return rc;
    cp_chain_reset(&h->chain, h->n);
    h->before = (int32_t)h->n - 1;
    return 0;
}

/* The thread holding the step spans: the path's host side follows it when
 * a helper thread idles. It is not always the one launching most — in a
 * small model autograd's backward thread may launch more than the Python
 * thread that runs the loop. Found by the first step's host span (all steps
 * come from one thread); without one, the launching thread. */
static int find_main(struct cp_walk *w, struct err *e)
{
    struct an_ctx *c = w->c;
    w->main = c->main_thread;
    if (!c->nsteps || c->steps[0].host_end <= c->steps[0].host_ts) return 0;
    const struct an_step *s0 = &c->steps[0];
    struct scan_slices *tr;
    struct scan_slice row;
    int64_t track;
    int rc, found = 0;
    /* kinds 0: the cursor only walks the host tracks, the rows come by id */
    if ((rc = scan_slices_open(c->db, c->rank, SCAN_TRACKS_HOST, 0, &tr, e))) return rc;
    while (!found && (rc = scan_slices_track(tr, &track, e)) == 1) {
        int64_t first, last, id;
        scan_slices_range(tr, &first, &last);
        if ((rc = first_from(w, first, last, s0->host_ts, &id, e))) break;
        slice_read_ids_begin(w->ids, id, last);
        for (int n = 0; n < 16 && (rc = slice_read_ids_next(w->ids, &row, e)) == 1; n++) {
            if (row.ts != s0->host_ts) break;
            if (row.kind == TB_K_USER_ANNOTATION && row.dur == s0->host_end - s0->host_ts) {
                w->main = (uint32_t)track;
                found = 1;
                break;
            }
        }
        slice_read_ids_end(w->ids);
        if (rc < 0) break;
    }
    scan_slices_close(tr);
    return rc < 0 ? rc : 0;
}

/* The last slice starting before t, -1 none. t never grows within a step,
 * so the search steps back from the previous answer: each slice is passed
 * once a step, where a binary search per stretch cost more. */
static int32_t started_before(struct cp_thread *h, int64_t t)
{
    int32_t k = h->before;
    while (k >= 0 && h->s[k].ts >= t) k--;
    return h->before = k;
}

/* ====================================================================== */
/* The walk                                                               */
/* ====================================================================== */

/* Attributes [a, b) (b: the walk's time) to cat; segments come latest
 * first and merge with the previous one when they continue it. */
static void emit(struct cp_walk *w, int64_t a, int64_t b, int cat, uint32_t track, int64_t slice)
{
    if (b <= a) return;
    w->by[cat] += b - a;
    if (w->nseg) {
        struct cp_seg *p = &w->seg[w->nseg - 1];
        if (p->ts == b && p->cat == cat && p->track == track && p->slice == slice) {
            p->dur += b - a;
            p->ts = a;
            return;
        }
    }
    if (w->nseg == CP_MAX_SEGS) {
        w->truncated = 1;
        return;
    }
    w->seg[w->nseg++] = (struct cp_seg){ a, b - a, slice, track, (uint8_t)cat };
}

static int op_cat(const struct an_op *o)
{
    return o->type == AN_COMM ? AN_CP_COMM : AN_CP_GPU_COMPUTE;
}

/* The category of a stretch with the n slices open[] of h open (innermost
 * first) and, in *by, the slice that decides it — the outermost DataLoader
 * call, the innermost runtime call, else the innermost op or annotation
 * (Python frames only when nothing else is open) — so the many stretches
 * inside one DataLoader call or one op merge into one stored segment. */
static int host_cat(const struct cp_thread *h, const int32_t *open, int n, int64_t *by)
{
    int act = GPUSCAN_NACT;
    int32_t dec = -1;
    *by = n ? h->s[open[0]].id : 0;
    for (int i = 0; i < n; i++) {
        int a = h->s[open[i]].act;
        if (a < 0) continue;
        if (a < act || (a == GPUSCAN_DATALOADER && act == GPUSCAN_DATALOADER)) dec = open[i];
        if (a < act) act = a;
    }
    if (dec >= 0) *by = h->s[dec].id;
    if (act == GPUSCAN_DATALOADER) return AN_CP_DATALOADER;
    /* a host-side collective (gloo) waits for the other ranks: that is
     * communication on the path, not CPU work */
    if (act == GPUSCAN_COMM) return AN_CP_COMM;
    if (act == GPUSCAN_SYNC || act == GPUSCAN_LAUNCH) return AN_CP_LAUNCH;
    return AN_CP_CPU;
}

/* The stretch of h ending at t: *a receives where it starts (the latest
 * slice start or end before t, lo at the earliest) and open[] the slices
 * open over it, innermost first (cp_chain.h); returns how many. */
static int stretch(struct cp_thread *h, int64_t t, int64_t lo, int64_t *a, int32_t *open)
{
    int32_t k = started_before(h, t);
    *a = k >= 0 && h->s[k].ts > lo ? h->s[k].ts : lo;
    return k >= 0 ? cp_chain_open(&h->chain, h->s, sizeof *h->s, k, t, a, open) : 0;
}

enum where { AT_GPU, AT_HOST, AT_NONE };

static int walk_step(struct cp_walk *w, struct err *e)
{
    struct an_ctx *c = w->c;
    const struct an_step *s = w->step;
    const int64_t lo = s->ts;
    int64_t t = s->end, last_sync = INT64_MAX;
    int stall = 0, rc;
    int32_t open[CP_MAX_DEPTH];
    enum where at;
    int32_t op = last_ended(c, -1, lo, t);
    struct cp_thread *h = NULL;
    if (op >= 0 && c->ops[op].end == t && c->ops[op].end >= s->host_end) {
        at = AT_GPU;
    } else {
        at = w->main ? AT_HOST : AT_NONE;
        if (w->main) h = thread_get(w, w->main);
    }
    while (t > lo) {
        int64_t t_before = t;
        if (at == AT_NONE) { /* no host thread known: unrecorded host time */
            emit(w, lo, t, AN_CP_CPU, 0, 0);
            t = lo;
            break;
        }
        if (at == AT_GPU) {
            const struct an_op *o = &c->ops[op];
            int64_t a = o->ts > lo ? o->ts : lo;
            emit(w, a, t, op_cat(o), an_op_stream(c, o), o->id);
            t = a;
            if (t <= lo) break;
            const struct an_launch *l = o->launch >= 0 ? &c->launches[o->launch] : NULL;
            int64_t arrive = l ? (l->end < o->ts ? l->end : o->ts) : INT64_MIN;
            int32_t p = w->prev[op];
            if (p >= 0 && c->ops[p].end >= arrive) { /* kernel→kernel */
                int64_t g = c->ops[p].end > lo ? c->ops[p].end : lo;
                if (g < t) {
                    emit(w, g, t, AN_CP_KERNEL_GAP, an_op_stream(c, o), 0);
                    t = g;
                }
                op = p;
            } else if (l) { /* launch edge */
                int64_t g = arrive > lo ? arrive : lo;
                emit(w, g, t, AN_CP_LAUNCH, an_op_stream(c, o), 0);
                t = g;
                h = thread_get(w, l->thread);
                at = AT_HOST;
            } else if (w->main) {
                h = thread_get(w, w->main);
                at = AT_HOST;
            } else {
                at = AT_NONE;
            }
        } else {
            if (h->loaded_step != w->stepno && (rc = thread_load(w, h, e))) return rc;
            int64_t a;
            int nopen = stretch(h, t, lo, &a, open);
            int jumps = stall < CP_MAX_STALL;
            if (!nopen && h->track != w->main && w->main && jumps) {
                h = thread_get(w, w->main); /* idle helper thread: the main thread drives it */
                stall++;
                continue;
            }
            int32_t sy = -1;
            for (int i = 0; i < nopen && sy < 0; i++)
                if (h->s[open[i]].sync) sy = open[i];
            if (sy >= 0 && jumps && t < last_sync) {
                const struct cp_slice *S = &h->s[sy];
                int32_t j = -1;
                if (S->target >= 0 && c->ops[S->target].end <= t) j = S->target;
                else j = last_ended(c, S->stream ? an_stream_ix(c, S->stream) : -1, S->ts, t);
                if (S->stream && j < 0) j = last_ended(c, -1, S->ts, t);
                if (j >= 0) { /* sync edge: the call's tail after the op's end is runtime time */
                    int64_t g = c->ops[j].end > lo ? c->ops[j].end : lo;
                    emit(w, g, t, AN_CP_LAUNCH, h->track, S->id);
                    t = last_sync = g;
                    op = j;
                    at = AT_GPU;
                    stall = t < t_before ? 0 : stall + 1;
                    continue;
                }
            }
            int64_t by = 0;
            int cat = host_cat(h, open, nopen, &by);
            int32_t k = w->waits.ncolls && cat == AN_CP_CPU && jumps && runs_no_op(h, open, nopen)
                            ? cp_waits_collective(&w->waits, h->track, a, t)
                            : -1;
            if (k >= 0 && w->waits.colls[k].end >= t) { /* the wait follows the collective */
                h = thread_get(w, w->waits.colls[k].track);
                stall++;
                continue;
            }
            if (k >= 0) a = w->waits.colls[k].end;
            emit(w, a, t, cat, h->track, by);
            t = a;
        }
        stall = t < t_before ? 0 : stall + 1;
    }
    return 0;
}

/* ====================================================================== */
/* Output                                                                 */
/* ====================================================================== */

static json_t *by_object(const int64_t *by)
{
    json_t *o = json_object();
    char key[48];
    for (int k = 0; k < AN_CP_NCAT; k++) {
        snprintf(key, sizeof key, "%s_ns", an_cp_names[k]);
        json_object_set_new(o, key, json_integer((json_int_t)by[k]));
    }
    return o;
}

static int largest(const int64_t *by)
{
    int best = 0;
    for (int k = 1; k < AN_CP_NCAT; k++)
        if (by[k] > by[best]) best = k;
    return best;
}

static int store_step(struct cp_walk *w, json_t *steps, struct err *e)
{
    const struct an_step *s = w->step;
    int rc;
    for (size_t i = w->nseg; i-- > 0;) { /* in time order */
        const struct cp_seg *g = &w->seg[i];
        if ((rc = an_segment(w->c, s->idx, g->ts, g->dur, g->cat, g->track, g->slice, e))) return rc;
    }
    int64_t sum = 0;
    for (int k = 0; k < AN_CP_NCAT; k++) sum += w->by[k];
    assert(sum == s->end - s->ts); /* every ns of the step on exactly one segment */
    json_t *o = json_pack("{s:i,s:s,s:I,s:I,s:o,s:s,s:I}", "idx", s->idx, "name", s->name, "ts", (json_int_t)s->ts,
                          "dur", (json_int_t)(s->end - s->ts), "by", by_object(w->by), "bound_by",
                          an_cp_names[largest(w->by)], "segments", (json_int_t)w->nseg);
    if (w->truncated) json_object_set_new(o, "truncated", json_true());
    json_array_append_new(steps, o);
    return 0;
}

static int prepare(struct cp_walk *w, struct err *e)
{
    /* the profiler's own range says nothing about the path */
    return slice_read_ids_open(w->c->db, TB_K_TRACE, &w->ids, e);
}

int an_critical_path(struct an_ctx *c, json_t *out, struct err *e)
{
    struct cp_walk w;
    memset(&w, 0, sizeof w);
    w.c = c;
    int64_t totals[AN_CP_NCAT] = { 0 };
    json_t *steps = json_array();
    int rc = prepare(&w, e);
    if (rc == 0) rc = cp_waits_load(c, &w.waits, e);
    if (rc == 0) rc = find_main(&w, e);
    if (rc == 0) {
        index_prev(&w);
        w.seg = xmalloc(CP_MAX_SEGS * sizeof *w.seg);
    }
    for (size_t i = 0; rc == 0 && i < c->nsteps; i++) {
        w.step = &c->steps[i];
        w.stepno = (int)i + 1;
        w.nseg = 0;
        w.truncated = 0;
        memset(w.by, 0, sizeof w.by);
        if ((rc = walk_step(&w, e)) || (rc = store_step(&w, steps, e))) break;
        for (int k = 0; k < AN_CP_NCAT; k++) totals[k] += w.by[k];
    }
    if (rc == 0) {
        int64_t all = 0;
        for (int k = 0; k < AN_CP_NCAT; k++) all += totals[k];
        json_t *shares = json_object();
        for (int k = 0; k < AN_CP_NCAT; k++)
            json_object_set_new(shares, an_cp_names[k], json_real(all ? (double)totals[k] / (double)all : 0.0));
        json_object_set_new(out, "steps", steps);
        json_object_set_new(out, "totals", by_object(totals));
        json_object_set_new(out, "shares", shares);
        json_object_set_new(out, "bound_by", all ? json_string(an_cp_names[largest(totals)]) : json_null());
        steps = NULL;
    }
    json_decref(steps);
    for (size_t i = 0; i < w.nth; i++) {
        free(w.th[i].s);
        cp_chain_free(&w.th[i].chain);
    }
    free(w.th);
    free(w.seg);
    free(w.prev);
    cp_waits_free(&w.waits);
    slice_read_ids_close(w.ids);
    return rc;
}

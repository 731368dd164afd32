/* analyses/idle.c — idle time by cause per GPU stream (see include/derive/analyses.h).
 *
 * HTA's idle time breakdown, then one step further. Each stream's ops are
 * taken in start order; a gap is [prev_end, next.ts) where prev_end is the
 * latest end seen so far on the stream (HTA takes the previous op's end;
 * they differ only when ops overlap on one stream, which clock rounding
 * can cause). Only the part of each gap inside the steps' window
 * [c->w0, c->w1) counts. A gap is:
 *   host_wait   the next op's launch call began after prev_end (the host
 *               enqueued it too late);
 *   kernel_wait otherwise, when the whole gap is < 30 µs (back-to-back
 *               work with the GPU's own launch latency between);
 *   other       anything else (event waits, other streams, copies);
 * an op without a launch partner can only be kernel_wait or other, as in
 * HTA. Going further, each host_wait gap is split by what the launching
 * host thread did over [gap start, launch.ts): launching (runtime calls,
 * framework ops, record_function regions), sync (blocking runtime calls),
 * dataloader, comm (collective ops) or none (nothing the profiler saw:
 * Python, sleeps). The rest of the gap, [launch.ts, gap end), is the launch
 * itself in flight and counts as launching, so host_wait_by adds up to
 * host_wait_ns.
 *
 * Output object (times integer ns):
 *   {"kernel_wait_threshold_ns": 30000,
 *    "streams": [{"stream": track id, "name": "stream 7", "device": n|-1,
 *                 "busy_ns": union of its ops inside the window,
 *                 "idle_ns": its gaps inside the window (= the three below),
 *                 "host_wait_ns", "kernel_wait_ns", "other_ns",
 *                 "host_wait_by": {"launching_ns", "sync_ns", "dataloader_ns",
 *                                  "comm_ns", "none_ns"},
 *                 "counts": {"host_wait", "kernel_wait", "other"},
 *                 "stats": {"host_wait"|"kernel_wait"|"other": {"count",
 *                           "mean_ns", "min_ns", "p50_ns", "max_ns"}}}],
 *    "totals": {the same fields summed over the streams, less the stream's
 *               name, device and stats},
 *    "ratios": {"host_wait", "kernel_wait", "other"}: shares of total idle,
 *    "histogram": {"edges_ns": [1000, 2000, ..., 65536000],
 *                  "host_wait"|"kernel_wait"|"other": counts of gaps, one
 *                  more than edges: [i] holds edges[i-1] <= len < edges[i],
 *                  the first < edges[0], the last >= the last edge}}
 * Streams with neither busy nor idle time in the window are left out. Gap
 * lengths in stats and the histogram are the parts inside the window;
 * p50 interpolates linearly between order statistics (as pandas does).
 *
 * Cost: the gap lengths of one stream (the ops come grouped by stream in
 * the context), and one record per host-wait gap. What the host did is read in
 * one forward pass per launching thread: the gaps of all streams, sorted by
 * start, are swept over their union once and each stretch is shared out to
 * the gaps it overlaps (a cursor per stream would re-read the thread once
 * per stream: 64 streams cost 64 passes over the host slices).
 */
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/analyses.h"

/* HTA's consecutive_kernel_delay (30 µs). */
#define KERNEL_WAIT_NS 30000
/* Histogram edges: 1 µs doubling up to 2^16 µs (about 65 ms). */
#define NEDGES 17
#define EDGE0_NS 1000

enum { CAT_HOST, CAT_KERNEL, CAT_OTHER, NCAT };
static const char *const cat_names[NCAT] = { "host_wait", "kernel_wait", "other" };

/* What the host did during host waits. */
enum { BY_LAUNCHING, BY_SYNC, BY_DATALOADER, BY_COMM, BY_NONE, NBY };
static const char *const by_names[NBY] = { "launching_ns", "sync_ns", "dataloader_ns", "comm_ns", "none_ns" };

struct tally {
    int64_t busy, cat[NCAT], by[NBY], count[NCAT];
};

/* Gap lengths of one stream and category, for its stats. */
struct lens {
    int64_t *v;
    size_t n, cap;
};

static int by_of_act(int act)
{
    switch (act) {
    case GPUSCAN_SYNC: return BY_SYNC;
    case GPUSCAN_DATALOADER: return BY_DATALOADER;
    case GPUSCAN_COMM: return BY_COMM;
    case GPUSCAN_NONE: return BY_NONE;
    default: return BY_LAUNCHING; /* GPUSCAN_LAUNCH, GPUSCAN_OP, GPUSCAN_REGION */
    }
}

/* A host-wait gap's host part [a, until) on thread, owed to stream s. */
struct hreq {
    uint32_t thread;
    int s;
    int64_t a, until;
};

struct hreqs {
    struct hreq *v;
    size_t n, cap;
};

static int cmp_hreq(const void *x, const void *y)
{
    const struct hreq *p = x, *q = y;
    if (p->thread != q->thread) return p->thread < q->thread ? -1 : 1;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->until > q->until) - (p->until < q->until);
}

/* The sweep of one thread's union of gaps: pos is where the next stretch
 * starts; r[0..next) have begun (r sorted by a), and act[0..nact) are those
 * not yet over — at most one per stream, as one stream's gaps never
 * overlap, so a stretch costs O(streams) however long the gaps. */
struct share {
    const struct hreq *r;
    size_t n, next;
    size_t *act, nact;
    int64_t pos;
    struct tally *T;
};

static void on_stretch(void *arg, int act, const struct gpuscan_frame *stack, int n, int64_t ns)
{
    (void)stack;
    (void)n;
    struct share *sh = arg;
    int64_t s0 = sh->pos, s1 = sh->pos + ns;
    int by = by_of_act(act);
    while (sh->next < sh->n && sh->r[sh->next].a < s1) sh->act[sh->nact++] = sh->next++;
    for (size_t i = 0; i < sh->nact;) {
        const struct hreq *q = &sh->r[sh->act[i]];
        int64_t a = q->a > s0 ? q->a : s0, b = q->until < s1 ? q->until : s1;
        if (b > a) sh->T[q->s].by[by] += b - a;
        if (q->until <= s1) sh->act[i] = sh->act[--sh->nact]; /* over: swap-remove */
        else i++;
    }
    sh->pos = s1;
}

/* Shares out what each launching thread did over the host-wait gaps in q
 * (sorted here) to the streams' tallies T: one forward sweep per thread
 * over the union of its gaps. */
static int sweep_hosts(struct an_ctx *c, struct hreqs *q, struct tally *T, struct err *e)
{
    xqsort(q->v, q->n, sizeof *q->v, cmp_hreq);
    struct gpuscan_hosts *H = an_hosts_open(c);
    int rc = 0;
    for (size_t i = 0, j; i < q->n && rc == 0; i = j) {
        for (j = i; j < q->n && q->v[j].thread == q->v[i].thread; j++) {}
        struct gpuscan_host *h;
        if ((rc = gpuscan_hosts_get(H, q->v[i].thread, &h, e)) != 0) break;
        struct share sh = { q->v + i, j - i, 0, xmalloc((j - i) * sizeof(size_t)), 0, 0, T };
        for (size_t k = i; k < j && rc == 0;) {
            /* one piece of the union: gaps chained by overlap */
            int64_t ua = q->v[k].a, ub = q->v[k].until;
            size_t m = k + 1;
            for (; m < j && q->v[m].a < ub; m++)
                if (q->v[m].until > ub) ub = q->v[m].until;
            sh.pos = ua;
            rc = gpuscan_host_sweep(h, ua, ub, on_stretch, &sh, e);
            k = m;
        }
        free(sh.act);
    }
    gpuscan_hosts_close(H);
    return rc;
}

static json_t *stats_of(struct lens *l)
{
    if (l->n == 0) return json_pack("{s:i,s:i,s:i,s:i,s:i}", "count", 0, "mean_ns", 0, "min_ns", 0, "p50_ns", 0,
                                    "max_ns", 0);
    an_sort_i64(l->v, l->n);
    double sum = 0;
    for (size_t i = 0; i < l->n; i++) sum += (double)l->v[i];
    return json_pack("{s:I,s:f,s:I,s:f,s:I}", "count", (json_int_t)l->n, "mean_ns", sum / (double)l->n, "min_ns",
                     (json_int_t)l->v[0], "p50_ns", an_quantile(l->v, l->n, 0.5), "max_ns",
                     (json_int_t)l->v[l->n - 1]);
}

static json_t *tally_json(const struct tally *t, int64_t *idle_out)
{
    json_t *o = json_object(), *by = json_object(), *counts = json_object();
    int64_t idle = t->cat[CAT_HOST] + t->cat[CAT_KERNEL] + t->cat[CAT_OTHER];
    json_object_set_new(o, "busy_ns", json_integer(t->busy));
    json_object_set_new(o, "idle_ns", json_integer(idle));
    json_object_set_new(o, "host_wait_ns", json_integer(t->cat[CAT_HOST]));
    json_object_set_new(o, "kernel_wait_ns", json_integer(t->cat[CAT_KERNEL]));
    json_object_set_new(o, "other_ns", json_integer(t->cat[CAT_OTHER]));
    for (int i = 0; i < NBY; i++) json_object_set_new(by, by_names[i], json_integer(t->by[i]));
    json_object_set_new(o, "host_wait_by", by);
    for (int i = 0; i < NCAT; i++) json_object_set_new(counts, cat_names[i], json_integer(t->count[i]));
    json_object_set_new(o, "counts", counts);
    if (idle_out) *idle_out = idle;
    return o;
}

static int bin_of(int64_t len)
{
    int b = 0;
    for (int64_t edge = EDGE0_NS; b < NEDGES && len >= edge; edge *= 2) b++;
    return b;
}

/* ====================================================================== */
/* One stream                                                             */
/* ====================================================================== */

/* Scans the ops ix[0..n) of stream s (in start order) into t, the gap
 * lengths into l[] and the histogram hist[][]; the host part of each host
 * wait goes to q, for sweep_hosts. */
static void scan_stream(struct an_ctx *c, int s, const uint32_t *ix, size_t n, struct hreqs *q, struct tally *t,
                        struct lens *l, int64_t hist[NCAT][NEDGES + 1])
{
    int64_t w0 = c->w0, w1 = c->w1, prev_end = 0;
    for (size_t k = 0; k < n; k++) {
        const struct an_op *o = &c->ops[ix[k]];
        /* busy: the part of the op not covered by earlier ones, in the window */
        int64_t from = k && o->ts < prev_end ? prev_end : o->ts;
        int64_t bs = from > w0 ? from : w0, be = o->end < w1 ? o->end : w1;
        if (be > bs) t->busy += be - bs;
        if (k && o->ts > prev_end) {
            int64_t a = prev_end > w0 ? prev_end : w0, b = o->ts < w1 ? o->ts : w1;
            if (b > a) {
                const struct an_launch *la = o->launch >= 0 ? &c->launches[o->launch] : NULL;
                int cat = la && la->ts > prev_end          ? CAT_HOST
                          : o->ts - prev_end < KERNEL_WAIT_NS ? CAT_KERNEL
                                                              : CAT_OTHER;
                int64_t len = b - a;
                t->cat[cat] += len;
                t->count[cat]++;
                hist[cat][bin_of(len)]++;
                if (l[cat].n == l[cat].cap)
                    l[cat].v = xrealloc(l[cat].v, (l[cat].cap = l[cat].cap ? l[cat].cap * 2 : 64) * sizeof *l[cat].v);
                l[cat].v[l[cat].n++] = len;
                if (cat == CAT_HOST) {
                    int64_t until = la->ts < b ? la->ts : b;
                    if (until > a) {
                        if (q->n == q->cap) q->v = xrealloc(q->v, (q->cap = q->cap ? q->cap * 2 : 256) * sizeof *q->v);
                        q->v[q->n++] = (struct hreq){ la->thread, s, a, until };
                    } else {
                        until = a;
                    }
                    t->by[BY_LAUNCHING] += b - until;
                }
            }
        }
        if (k == 0 || o->end > prev_end) prev_end = o->end;
    }
}

/* ====================================================================== */
/* The analysis                                                           */
/* ====================================================================== */

int an_idle(struct an_ctx *c, json_t *out, struct err *e)
{
    int rc = 0;
    int64_t hist[NCAT][NEDGES + 1];
    memset(hist, 0, sizeof hist);
    struct tally tot;
    memset(&tot, 0, sizeof tot);
    struct lens l[NCAT];
    memset(l, 0, sizeof l);
    json_t *streams = json_array();
    const size_t *start = c->stream_ofs;

    struct tally *T = xcalloc(c->nstreams + 1, sizeof *T);
    json_t **stats = xcalloc(c->nstreams + 1, sizeof *stats);
    struct hreqs q = { NULL, 0, 0 };
    for (size_t s = 0; s < c->nstreams; s++) {
        for (int k = 0; k < NCAT; k++) l[k].n = 0;
        scan_stream(c, (int)s, c->by_stream + start[s], start[s + 1] - start[s], &q, &T[s], l, hist);
        stats[s] = json_object();
        for (int k = 0; k < NCAT; k++) json_object_set_new(stats[s], cat_names[k], stats_of(&l[k]));
    }
    rc = sweep_hosts(c, &q, T, e);
    free(q.v);
    for (size_t s = 0; s < c->nstreams && rc == 0; s++) {
        struct tally t = T[s];
        int64_t idle;
        json_t *o = tally_json(&t, &idle);
        if (t.busy == 0 && idle == 0) {
            json_decref(o);
            continue;
        }
        json_object_set_new(o, "stats", json_incref(stats[s]));
        json_object_set_new(o, "stream", json_integer(c->streams[s].track));
        json_object_set_new(o, "name", json_string(c->streams[s].name));
        json_object_set_new(o, "device", json_integer(c->streams[s].device));
        json_array_append_new(streams, o);
        tot.busy += t.busy;
        for (int k = 0; k < NCAT; k++) {
            tot.cat[k] += t.cat[k];
            tot.count[k] += t.count[k];
        }
        for (int k = 0; k < NBY; k++) tot.by[k] += t.by[k];
    }
    for (size_t s = 0; s < c->nstreams; s++) json_decref(stats[s]);
    free(stats);
    free(T);
    for (int k = 0; k < NCAT; k++) free(l[k].v);
    if (rc) {
        json_decref(streams);
        return rc;
    }

    int64_t idle;
    json_t *totals = tally_json(&tot, &idle);
    json_t *ratios = json_object(), *histo = json_object(), *edges = json_array();
    for (int k = 0; k < NCAT; k++)
        json_object_set_new(ratios, cat_names[k], json_real(idle > 0 ? (double)tot.cat[k] / (double)idle : 0.0));
    for (int i = 0; i < NEDGES; i++) json_array_append_new(edges, json_integer((json_int_t)EDGE0_NS << i));
    json_object_set_new(histo, "edges_ns", edges);
    for (int k = 0; k < NCAT; k++) {
        json_t *h = json_array();
        for (int i = 0; i <= NEDGES; i++) json_array_append_new(h, json_integer(hist[k][i]));
        json_object_set_new(histo, cat_names[k], h);
    }
    json_object_set_new(out, "kernel_wait_threshold_ns", json_integer(KERNEL_WAIT_NS));
    json_object_set_new(out, "streams", streams);
    json_object_set_new(out, "totals", totals);
    json_object_set_new(out, "ratios", ratios);
    json_object_set_new(out, "histogram", histo);
    return 0;
}

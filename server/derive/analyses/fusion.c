/* analyses/fusion.c — fusion candidates: operator → kernel sequences that
 * pay a launch per small kernel (HTA's aten-op kernel sequences and its
 * frequent kernel sequences, items 7 and 8 of its analyses), see
 * include/derive/analyses.h.
 *
 * Only kernels count (not memcpys or memsets), launched by a call whose
 * kernel starts inside the window [w0, w1) and that lies inside an
 * operator. An *instance* is one outermost operator (launch->top_id) and
 * the kernels its launch calls issued, in launch order. Two kinds of
 * pattern, each keyed by names and aggregated in a hash map:
 *   "op":    one outermost operator launching >= 2 kernels: key (operator
 *            name, kernel-name sequence). A candidate when its kernels are
 *            short (mean < 20 µs): fusing them saves kernels − 1 launches.
 *   "chain": consecutive outermost operators on one host thread that each
 *            launch exactly one short (< 10 µs) elementwise-like kernel
 *            (operators without kernels in between do not break a chain),
 *            cut into pieces of at most 8 operators: key (operator names,
 *            kernel names). Every piece of >= 2 operators is a candidate.
 * The cost of one launch is the larger of the mean launch-call duration
 * (the host pays it) and the mean gap between the pattern's consecutive
 * kernels, each gap clipped at 30 µs (the GPU pays it when the host is the
 * bottleneck):
 *   saving_ns = (kernels_per_call − 1) × count × that cost.
 *
 * Object:
 *   {"items": [{"kind": "op"|"chain",
 *               "ops": [names],           the operator (one for "op")
 *               "kernels": [names],       in launch order, the first 32
 *               "count",                  instances
 *               "kernels_per_call",
 *               "gpu_ns",                 kernel time of every instance
 *               "mean_kernel_ns",
 *               "launch_ns",              launch-call time of every instance
 *               "avg_launch_delay_ns",    kernel start − launch call end,
 *                                         clipped at 0, mean per kernel
 *               "saving_ns"}, ...]        the candidates by saving_ns
 *                                         descending, the first 30
 *    "candidates",                        how many patterns qualified
 *    "saving_ns",                         their total estimated saving
 *    "advice"}                            one sentence naming torch.compile
 */
#include "derive/analyses.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "store/model.h"

#define FUSE_TOP 30
#define FUSE_SHOW_KERNELS 32
#define FUSE_OP_MEAN_NS 20000   /* "short" kernels of an op pattern */
#define FUSE_CHAIN_NS 10000     /* a chain link's kernel */
#define FUSE_CHAIN_MAX 8
/* A gap between two kernels counts as launch cost up to HTA's kernel-wait
 * threshold: a longer one is the GPU waiting on something else (a sync,
 * another stream, a host busy elsewhere), which fusing would not remove. */
#define FUSE_GAP_MAX_NS 30000

enum { KIND_OP = 1, KIND_CHAIN = 2 };

/* A launch whose kernel is in the window, inside an operator. */
struct frec {
    uint32_t top_id;
    int32_t launch;
};

/* One outermost operator instance and its kernels (recs[first, first+n));
 * 8 bytes, as there may be one per launch: its sums (struct isum) are
 * recomputed from recs where needed. */
struct inst {
    uint32_t first;
    unsigned n : 31;
    unsigned elementwise : 1; /* its one kernel looks elementwise */
};

/* An instance's times, its thread and operator. */
struct isum {
    int64_t gpu_ns, launch_ns, gap_ns, delay_ns, max_kernel_ns;
    uint32_t thread, op;
};

/* A pattern's key (words in the pool) and totals. */
struct pat {
    size_t off, len;  /* key = pool[off, off+len): kind, nops, ops..., kernels... */
    uint64_t hash;
    int64_t count, gpu_ns, launch_ns, gap_ns, delay_ns;
};

struct patmap {
    struct pat *v;
    size_t n, cap;
    size_t *slot;     /* index + 1 into v; 0 empty */
    size_t nslot;
    uint32_t *pool;
    size_t npool, pcap;
};

static int64_t kernel_gap(const struct an_op *prev, const struct an_op *next)
{
    int64_t g = next->ts - prev->end;
    return g <= 0 ? 0 : g < FUSE_GAP_MAX_NS ? g : FUSE_GAP_MAX_NS;
}

static int cmp_frec(const void *a, const void *b)
{
    const struct frec *x = a, *y = b;
    if (x->top_id != y->top_id) return x->top_id < y->top_id ? -1 : 1;
    return (x->launch > y->launch) - (x->launch < y->launch); /* launches are in time order */
}

static uint64_t hash_words(const uint32_t *w, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

static void pm_grow(struct patmap *m)
{
    size_t ns = m->nslot ? m->nslot * 2 : 256;
    size_t *slot = xcalloc(ns, sizeof *slot);
    for (size_t i = 0; i < m->n; i++) {
        size_t s = (size_t)m->v[i].hash & (ns - 1);
        while (slot[s]) s = (s + 1) & (ns - 1);
        slot[s] = i + 1;
    }
    free(m->slot);
    m->slot = slot;
    m->nslot = ns;
}

/* The pattern of key w[0, n), added when new. Borrowed until the next call. */
static struct pat *pm_get(struct patmap *m, const uint32_t *w, size_t n)
{
    if (2 * (m->n + 1) > m->nslot) pm_grow(m);
    uint64_t h = hash_words(w, n);
    size_t s = (size_t)h & (m->nslot - 1);
    for (; m->slot[s]; s = (s + 1) & (m->nslot - 1)) {
        struct pat *p = &m->v[m->slot[s] - 1];
        if (p->hash == h && p->len == n && memcmp(m->pool + p->off, w, n * sizeof *w) == 0) return p;
    }
    if (m->npool + n > m->pcap) m->pool = xrealloc(m->pool, (m->pcap = (m->npool + n) * 2) * sizeof *m->pool);
    memcpy(m->pool + m->npool, w, n * sizeof *w);
    if (m->n == m->cap) m->v = xrealloc(m->v, (m->cap = m->cap ? m->cap * 2 : 64) * sizeof *m->v);
    struct pat *p = &m->v[m->n];
    memset(p, 0, sizeof *p);
    p->off = m->npool;
    p->len = n;
    p->hash = h;
    m->npool += n;
    m->slot[s] = ++m->n;
    return p;
}

static void pm_free(struct patmap *m)
{
    free(m->v);
    free(m->slot);
    free(m->pool);
}

/* PyTorch's elementwise kernels (vectorized_/unrolled_elementwise_kernel,
 * elementwise_kernel) and Inductor's pointwise Triton kernels. */
static int elementwise_like(const char *name)
{
    return strstr(name, "elementwise") != NULL || strstr(name, "triton_poi_") != NULL ||
           strstr(name, "pointwise") != NULL;
}

static const struct an_op *rec_op(const struct an_ctx *c, const struct frec *r)
{
    return &c->ops[c->launches[r->launch].gpu];
}

static struct isum inst_sum(const struct an_ctx *c, const struct frec *recs, const struct inst *s)
{
    struct isum u;
    memset(&u, 0, sizeof u);
    const struct an_launch *l0 = &c->launches[recs[s->first].launch];
    u.thread = l0->thread;
    u.op = l0->top_op;
    const struct an_op *prev = NULL;
    for (size_t j = s->first; j < (size_t)s->first + s->n; j++) {
        const struct an_launch *l = &c->launches[recs[j].launch];
        const struct an_op *o = &c->ops[l->gpu];
        int64_t d = o->end - o->ts;
        u.gpu_ns += d;
        if (d > u.max_kernel_ns) u.max_kernel_ns = d;
        u.launch_ns += l->end - l->ts;
        u.delay_ns += o->ts > l->end ? o->ts - l->end : 0;
        if (prev) u.gap_ns += kernel_gap(prev, o);
        prev = o;
    }
    return u;
}

/* A chain link: one kernel, elementwise, short. */
static int chain_link(const struct an_ctx *c, const struct frec *recs, const struct inst *s)
{
    if (s->n != 1 || !s->elementwise) return 0;
    const struct an_op *o = rec_op(c, &recs[s->first]);
    return o->end - o->ts < FUSE_CHAIN_NS;
}

/* Adds instances ins[0, k) (consecutive, one kernel each) as one chain. */
static void add_chain(struct an_ctx *c, struct patmap *m, const struct inst *ins, size_t k, const struct frec *recs,
                      uint32_t *w)
{
    size_t n = 0;
    w[n++] = KIND_CHAIN;
    w[n++] = (uint32_t)k;
    for (size_t i = 0; i < k; i++) w[n++] = c->launches[recs[ins[i].first].launch].top_op;
    for (size_t i = 0; i < k; i++) w[n++] = rec_op(c, &recs[ins[i].first])->name;
    struct pat *p = pm_get(m, w, n);
    p->count++;
    for (size_t i = 0; i < k; i++) {
        struct isum u = inst_sum(c, recs, &ins[i]);
        p->gpu_ns += u.gpu_ns;
        p->launch_ns += u.launch_ns;
        p->delay_ns += u.delay_ns;
        if (i) p->gap_ns += kernel_gap(rec_op(c, &recs[ins[i - 1].first]), rec_op(c, &recs[ins[i].first]));
    }
}

struct cand {
    size_t pat;
    int64_t saving;
};

static int cmp_cand(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->saving != y->saving) return x->saving > y->saving ? -1 : 1;
    return (x->pat > y->pat) - (x->pat < y->pat);
}

/* kernels per call of a pattern key */
static size_t pat_kernels(const struct patmap *m, const struct pat *p)
{
    const uint32_t *w = m->pool + p->off;
    return p->len - 2 - w[1];
}

static json_t *names_json(struct an_ctx *c, const uint32_t *w, size_t n, size_t cap)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n && i < cap; i++) json_array_append_new(a, json_string(an_name(c, w[i])));
    return a;
}

int an_fusion(struct an_ctx *c, json_t *out, struct err *e)
{
    (void)e;
    /* the launches that count, grouped by outermost operator instance */
    struct frec *recs = xmalloc((c->nlaunches + 1) * sizeof *recs);
    size_t nr = 0;
    for (size_t i = 0; i < c->nlaunches; i++) {
        const struct an_launch *l = &c->launches[i];
        if (l->gpu < 0 || !l->top_id) continue;
        const struct an_op *o = &c->ops[l->gpu];
        if (o->kind != TB_K_KERNEL || o->ts < c->w0 || o->ts >= c->w1) continue;
        recs[nr++] = (struct frec){ l->top_id, (int32_t)i };
    }
    xqsort(recs, nr, sizeof *recs, cmp_frec);

    struct inst *ins = xmalloc((nr + 1) * sizeof *ins);
    size_t ni = 0, maxn = 0;
    for (size_t i = 0, j; i < nr; i = j) {
        for (j = i; j < nr && recs[j].top_id == recs[i].top_id; j++) {}
        struct inst *s = &ins[ni++];
        s->first = (uint32_t)i;
        s->n = (unsigned)(j - i);
        if (j - i > maxn) maxn = j - i;
        s->elementwise = j - i == 1 && elementwise_like(an_name(c, rec_op(c, &recs[i])->name));
    }

    /* key scratch: kind, nops, then names (op patterns: 1 + n kernels;
     * chains: 2 × FUSE_CHAIN_MAX) */
    size_t wcap = 2 + (maxn + 1 > 2 * FUSE_CHAIN_MAX ? maxn + 1 : 2 * FUSE_CHAIN_MAX);
    uint32_t *w = xmalloc(wcap * sizeof *w);
    struct patmap m = { 0 };
    /* (a) one operator, several kernels */
    for (size_t i = 0; i < ni; i++) {
        const struct inst *s = &ins[i];
        if (s->n < 2) continue;
        size_t n = 0;
        w[n++] = KIND_OP;
        w[n++] = 1;
        struct isum u = inst_sum(c, recs, s);
        w[n++] = u.op;
        for (size_t k = 0; k < s->n; k++) w[n++] = rec_op(c, &recs[s->first + k])->name;
        struct pat *p = pm_get(&m, w, n);
        p->count++;
        p->gpu_ns += u.gpu_ns;
        p->launch_ns += u.launch_ns;
        p->gap_ns += u.gap_ns;
        p->delay_ns += u.delay_ns;
    }
    /* (b) chains of one-kernel elementwise operators on one thread; the
     * instances are in top_id order, which is time order per thread */
    for (size_t i = 0; i < ni;) {
        const struct inst *s = &ins[i];
        if (!chain_link(c, recs, s)) {
            i++;
            continue;
        }
        uint32_t thread = c->launches[recs[s->first].launch].thread;
        size_t j = i + 1;
        while (j < ni && j - i < FUSE_CHAIN_MAX && c->launches[recs[ins[j].first].launch].thread == thread &&
               chain_link(c, recs, &ins[j]))
            j++;
        if (j - i >= 2) add_chain(c, &m, &ins[i], j - i, recs, w);
        i = j;
    }
    free(w);
    free(ins);
    free(recs);

    /* rank the candidates */
    struct cand *cd = xmalloc((m.n + 1) * sizeof *cd);
    size_t nc = 0;
    int64_t total_saving = 0;
    for (size_t i = 0; i < m.n; i++) {
        const struct pat *p = &m.v[i];
        int64_t nk = (int64_t)pat_kernels(&m, p);
        if (nk < 2 || p->count == 0) continue;
        double mean_kernel = (double)p->gpu_ns / (double)(p->count * nk);
        if (m.pool[p->off] == KIND_OP && mean_kernel >= FUSE_OP_MEAN_NS) continue;
        double launch = (double)p->launch_ns / (double)(p->count * nk);
        double gap = (double)p->gap_ns / (double)(p->count * (nk - 1));
        int64_t saving = (int64_t)((double)((nk - 1) * p->count) * (launch > gap ? launch : gap) + 0.5);
        cd[nc++] = (struct cand){ i, saving };
        total_saving += saving;
    }
    xqsort(cd, nc, sizeof *cd, cmp_cand);
    json_t *items = json_array();
    for (size_t i = 0; i < nc && i < FUSE_TOP; i++) {
        const struct pat *p = &m.v[cd[i].pat];
        const uint32_t *k = m.pool + p->off;
        size_t nops = k[1], nk = pat_kernels(&m, p);
        json_t *it = json_object();
        json_object_set_new(it, "kind", json_string(k[0] == KIND_OP ? "op" : "chain"));
        json_object_set_new(it, "ops", names_json(c, k + 2, nops, nops));
        json_object_set_new(it, "kernels", names_json(c, k + 2 + nops, nk, FUSE_SHOW_KERNELS));
        json_object_set_new(it, "count", json_integer((json_int_t)p->count));
        json_object_set_new(it, "kernels_per_call", json_integer((json_int_t)nk));
        json_object_set_new(it, "gpu_ns", json_integer((json_int_t)p->gpu_ns));
        json_object_set_new(it, "mean_kernel_ns", json_real((double)p->gpu_ns / (double)(p->count * (int64_t)nk)));
        json_object_set_new(it, "launch_ns", json_integer((json_int_t)p->launch_ns));
        json_object_set_new(it, "avg_launch_delay_ns",
                            json_real((double)p->delay_ns / (double)(p->count * (int64_t)nk)));
        json_object_set_new(it, "saving_ns", json_integer((json_int_t)cd[i].saving));
        json_array_append_new(items, it);
    }
    char advice[768];
    if (nc == 0) {
        snprintf(advice, sizeof advice,
                 "No fusion candidates: no operator launches a run of short kernels, and no chain of "
                 "elementwise operators was seen. torch.compile may still fuse more than this finds.");
    } else {
        const struct pat *p = &m.v[cd[0].pat];
        const uint32_t *k = m.pool + p->off;
        snprintf(advice, sizeof advice,
                 "%zu operator pattern(s) launch runs of short kernels, paying a launch for each; fusing them "
                 "would save about %.3f ms of launch overhead in the profiled steps. Wrap the model (or the hot "
                 "function) in torch.compile to let Inductor fuse elementwise chains into one Triton kernel, and "
                 "prefer fused / foreach implementations (e.g. optimizers with fused=True). Largest: %s%s "
                 "(%lld calls, %zu kernels each).",
                 nc, (double)total_saving / 1e6, an_name(c, k[2]), k[0] == KIND_CHAIN ? " → ..." : "",
                 (long long)p->count, pat_kernels(&m, p));
    }
    json_object_set_new(out, "items", items);
    json_object_set_new(out, "candidates", json_integer((json_int_t)nc));
    json_object_set_new(out, "saving_ns", json_integer((json_int_t)total_saving));
    json_object_set_new(out, "advice", json_string(advice));
    free(cd);
    pm_free(&m);
    return 0;
}

/* analyses/queue.c — queue depth per GPU stream over time (see
 * include/derive/analyses.h).
 *
 * HTA's queue length: for each launch call in the runtime launch mask
 * (below) with a GPU partner, +1 on the partner's stream at the call's ts
 * and -1 when the GPU starts the op. A call launching several ops counts
 * once, with its first op, so each +1 has its -1. Changes at one ts
 * collapse into one (launches before starts, so a launch and the start of
 * its op at one ts never dip below 0). The whole trace is walked (the
 * depth at the window's start depends on what came before); the figures
 * cover the steps' window [c->w0, c->w1).
 *
 * An op starting before its own launch call (clock skew between host and
 * GPU) drives the running sum below 0 until the call is seen: the depth
 * shown is max(0, sum), and each dip below 0 counts in negative_fixes. The
 * running sum itself stays exact, so a dip leaves no offset behind.
 *
 * Output object:
 *   {"limit": 1024 (CUDA's launch queue per stream),
 *    "negative_fixes": dips below 0, all streams,
 *    "streams": [{"stream": track id, "name", "device", "launches": pairs,
 *                 "max": deepest queue in the window, "mean": its
 *                 time-weighted mean over the window, "p50": the
 *                 time-weighted median, "at_limit_ns": time at >= limit,
 *                 "at_limit_share": of the window, "negative_fixes",
 *                 "series": the anseries id}]}
 * Streams without a masked launch are left out. The series
 * (AN_SERIES_QUEUE, key: the stream's track) has one sample per change of
 * the depth shown, over the whole trace.
 *
 * Cost: the masked launches' times per stream (8 bytes each; launches come
 * in time order and each stream's ops in start order, so nothing is
 * sorted); a time-per-depth table per stream sized by its deepest queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/analyses.h"

#define QUEUE_LIMIT 1024

/* Runtime and driver calls that enqueue one op on a stream (HTA's mask
 * with the driver and HIP equivalents). A name matches an entry exactly or
 * followed by a version or per-thread suffix ("_v7000", "_ptsz"). */
static const char *const launch_calls[] = {
    "cudaLaunchKernel",     "cudaLaunchKernelExC",     "cudaLaunchCooperativeKernel", "cuLaunchKernel",
    "cuLaunchKernelEx",     "cuLaunchCooperativeKernel", "cudaMemcpyAsync",           "cudaMemcpy2DAsync",
    "cudaMemsetAsync",      "cuMemcpyAsync",           "cuMemcpyHtoDAsync",           "cuMemcpyDtoHAsync",
    "cuMemcpyDtoDAsync",    "cuMemsetD8Async",         "cuMemsetD32Async",            "hipLaunchKernel",
    "hipExtLaunchKernel",   "hipModuleLaunchKernel",   "hipExtModuleLaunchKernel",    "hipMemcpyAsync",
    "hipMemcpyWithStream",  "hipMemsetAsync",
};

static int in_mask(const char *name)
{
    for (size_t i = 0; i < sizeof launch_calls / sizeof launch_calls[0]; i++) {
        size_t k = strlen(launch_calls[i]);
        if (strncmp(name, launch_calls[i], k) == 0 && (name[k] == '\0' || name[k] == '_')) return 1;
    }
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The sorted distinct names of the launches with a partner, and which of
 * them are in the mask: one name lookup per distinct call, not per call. */
struct mask_cache {
    uint32_t *id;
    uint8_t *yes;
    size_t n;
};

static void mask_build(struct an_ctx *c, struct mask_cache *m)
{
    m->id = xmalloc((c->nlaunches ? c->nlaunches : 1) * sizeof *m->id);
    m->n = 0;
    for (size_t i = 0; i < c->nlaunches; i++)
        if (c->launches[i].gpu >= 0) m->id[m->n++] = c->launches[i].name;
    xqsort(m->id, m->n, sizeof *m->id, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < m->n; i++)
        if (u == 0 || m->id[u - 1] != m->id[i]) m->id[u++] = m->id[i];
    m->n = u;
    m->id = xrealloc(m->id, (u ? u : 1) * sizeof *m->id);
    m->yes = xmalloc(u ? u : 1);
    for (size_t i = 0; i < u; i++) m->yes[i] = (uint8_t)in_mask(an_name(c, m->id[i]));
}

static int mask_has(const struct mask_cache *m, uint32_t id)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->id[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->n && m->id[lo] == id && m->yes[lo];
}

/* What one stream's walk yields. */
struct qstat {
    int64_t max, at_limit, fixes, pairs;
    double weighted;    /* sum of depth * time inside the window */
    int64_t *time_at;   /* time inside the window at each depth */
    size_t ntime;
};

/* Adds depth d over [a, b) clipped to the window. */
static void account(struct qstat *q, const struct an_ctx *c, int64_t d, int64_t a, int64_t b)
{
    if (a < c->w0) a = c->w0;
    if (b > c->w1) b = c->w1;
    if (b <= a) return;
    if (d > q->max) q->max = d;
    if ((size_t)d >= q->ntime) {
        size_t n = q->ntime ? q->ntime : 64;
        while (n <= (size_t)d) n *= 2;
        q->time_at = xrealloc(q->time_at, n * sizeof *q->time_at);
        memset(q->time_at + q->ntime, 0, (n - q->ntime) * sizeof *q->time_at);
        q->ntime = n;
    }
    q->time_at[d] += b - a;
    q->weighted += (double)d * (double)(b - a);
    if (d >= QUEUE_LIMIT) q->at_limit += b - a;
}

/* Walks the events ev[0..n) of one stream (sorted), writing the series. */
/* The op at by_stream[*at] of stream k's group, or the next one, that is
 * the first op of a masked launch (*at: its position; the group's end when
 * none is left). */
static void next_start(const struct an_ctx *c, const struct mask_cache *m, size_t k, size_t *at)
{
    for (; *at < c->stream_ofs[k + 1]; (*at)++) {
        uint32_t i = c->by_stream[*at];
        const struct an_op *o = &c->ops[i];
        if (o->launch < 0) continue;
        const struct an_launch *l = &c->launches[o->launch];
        if (l->gpu == (int32_t)i && mask_has(m, l->name)) return;
    }
}

/* The +1s at the launch times lt[0..n) (ascending) and the -1s at the
 * starts of their first ops on stream k (in the group's start order),
 * merged in time order. */
static int walk(struct an_ctx *c, const struct mask_cache *m, size_t k, const int64_t *lt, size_t n, int64_t series,
                struct qstat *q, struct err *e)
{
    int64_t sum = 0, shown = -1, at = 0;
    size_t j = c->stream_ofs[k], end = c->stream_ofs[k + 1];
    next_start(c, m, k, &j);
    for (size_t i = 0; i < n || j < end;) {
        int64_t st = j < end ? c->ops[c->by_stream[j]].ts : INT64_MAX;
        int64_t ts = j >= end || (i < n && lt[i] <= st) ? lt[i] : st, before = sum;
        if (shown >= 0) account(q, c, shown, at, ts);
        for (; i < n && lt[i] == ts; i++) {
            sum++;
            q->pairs++;
        }
        for (; j < end && c->ops[c->by_stream[j]].ts == ts; j++, next_start(c, m, k, &j)) sum--;
        if (sum < 0 && before >= 0) q->fixes++;
        int64_t d = sum > 0 ? sum : 0;
        if (d != shown) {
            int rc = an_sample(c, series, ts, (double)d, e);
            if (rc) return rc;
            shown = d;
        }
        at = ts;
    }
    /* the last depth holds to the end (0 unless launches never started) */
    if (shown >= 0 && at < c->w1) account(q, c, shown, at, c->w1);
    return 0;
}

/* A stream's masked launch times, in launch (= time) order. */
struct times {
    int64_t *v;
    size_t n, cap;
};

int an_queue(struct an_ctx *c, json_t *out, struct err *e)
{
    struct mask_cache m;
    mask_build(c, &m);
    /* one pass over the launches, already in time order, so no sort */
    struct times *lt = xcalloc(c->nstreams + 1, sizeof *lt);
    for (size_t i = 0; i < c->nlaunches; i++) {
        const struct an_launch *l = &c->launches[i];
        if (l->gpu < 0 || !mask_has(&m, l->name)) continue;
        struct times *t = &lt[c->ops[l->gpu].sx];
        if (t->n == t->cap) t->v = xrealloc(t->v, (t->cap = t->cap ? t->cap * 2 : 256) * sizeof *t->v);
        t->v[t->n++] = l->ts;
    }

    int rc = 0;
    int64_t fixes = 0, win = c->w1 > c->w0 ? c->w1 - c->w0 : 0;
    json_t *streams = json_array();
    char name[128];
    for (size_t k = 0; k < c->nstreams && rc == 0; k++) {
        size_t n = lt[k].n;
        if (!n) continue;
        const struct an_stream *s = &c->streams[k];
        int64_t series;
        snprintf(name, sizeof name, "Queue depth (%s)", s->name);
        if ((rc = an_series(c, AN_SERIES_QUEUE, s->track, name, "launches", &series, e))) break;
        struct qstat q;
        memset(&q, 0, sizeof q);
        rc = walk(c, &m, k, lt[k].v, n, series, &q, e);
        free(lt[k].v);
        lt[k].v = NULL;
        if (rc == 0) {
            /* the time-weighted median; depth 0 also holds outside the walk */
            int64_t seen = 0, acc = 0, p50 = 0;
            for (size_t d = 0; d < q.ntime; d++) seen += q.time_at[d];
            if (q.ntime) q.time_at[0] += win - seen;
            for (size_t d = 0; d < q.ntime; d++) {
                acc += q.time_at[d];
                if (2 * acc >= win) {
                    p50 = (int64_t)d;
                    break;
                }
            }
            json_array_append_new(
                streams, json_pack("{s:I,s:s,s:i,s:I,s:I,s:f,s:I,s:I,s:f,s:I,s:I}", "stream",
                                   (json_int_t)s->track, "name", s->name, "device", (int)s->device, "launches",
                                   (json_int_t)q.pairs, "max", (json_int_t)q.max, "mean",
                                   win ? q.weighted / (double)win : 0.0, "p50", (json_int_t)p50, "at_limit_ns",
                                   (json_int_t)q.at_limit, "at_limit_share",
                                   win ? (double)q.at_limit / (double)win : 0.0, "negative_fixes",
                                   (json_int_t)q.fixes, "series", (json_int_t)series));
            fixes += q.fixes;
        }
        free(q.time_at);
    }
    for (size_t k = 0; k < c->nstreams; k++) free(lt[k].v);
    free(lt);
    free(m.id);
    free(m.yes);
    if (rc) {
        json_decref(streams);
        return rc;
    }
    json_object_set_new(out, "limit", json_integer(QUEUE_LIMIT));
    json_object_set_new(out, "negative_fixes", json_integer(fixes));
    json_object_set_new(out, "streams", streams);
    return 0;
}

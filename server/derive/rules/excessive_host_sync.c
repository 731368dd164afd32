/* excessive_host_sync — the host thread stops and waits for the GPU inside
 * the steps (.item(), .cpu(), print(tensor), torch.cuda.synchronize() ...).
 *
 * What a host-blocking call costs: while the host waits, the GPU works off
 * its queue, so the wait itself loses nothing; but when the call returns the
 * queue is empty and the GPU idles until the host has launched the next
 * work. That idle time is the cost, and at most the wait could have hidden
 * it (the host would have run ahead instead of waiting). So a call counts
 * only when it really waited (some GPU work finished while it was in the
 * call: a sync on an idle GPU returns at once and costs nothing), and its
 * cost is min(wait, GPU idle gap from the end of the waited-for work to the
 * next GPU op, within the next step at most). The catalog's "their time"
 * is read as that cost, not as the time spent blocked, which is GPU-busy
 * time: on a GPU-bound loop a single torch.cuda.synchronize() per step
 * blocks for most of the step and costs almost nothing. Fires when the
 * calls that waited exceed sync_per_step per step, or their cost exceeds
 * sync_pct of the average step.
 *
 * Blocking calls are read by name from the runtime/driver slices: the
 * explicit syncs, synchronous copies, frees (cudaFree synchronizes the
 * device), and cudaMemcpyAsync into pageable host memory (synchronous by
 * CUDA's rules). A cudaMemcpyAsync followed at once by a sync on the same
 * thread is one blocking copy (.item(), .cpu(), .to() without
 * non_blocking). The profiler's cuda_sync events duplicate the runtime
 * calls (and also mark the non-blocking cudaEventQuery and the GPU-side
 * cudaStreamWaitEvent), so they are not used. Evidence names the operator
 * that issued each group of calls (outermost and innermost cpu_op), and the
 * user's Python frame when the trace has stacks.
 *
 * Memory: the blocking calls of the steps (small records); GPU slices are
 * streamed once per GPU track, slices read by id range. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "derive/rules.h"
#include "store/facts.h"
#include "store/model.h"
#include "store/scan.h"
#include "store/slice_read.h"

/* Distinct issuers kept for the evidence; the rest are summed as "other". */
#define MAX_ISSUERS 32
/* Parent levels walked to name the issuing operator. */
#define MAX_DEPTH 256

enum call_class { CC_SYNC, CC_COPY, CC_FREE, CC_ASYNC_COPY };

/* Names of host-blocking calls (CUDA runtime and driver, HIP). cudaFree
 * and cudaFreeHost synchronize the device implicitly; so does a
 * synchronous cudaMemcpy. */
static const struct {
    const char *name;
    enum call_class cls;
} blocking[] = {
    { "cudaDeviceSynchronize", CC_SYNC },  { "cudaStreamSynchronize", CC_SYNC },
    { "cudaEventSynchronize", CC_SYNC },   { "cudaThreadSynchronize", CC_SYNC },
    { "cuCtxSynchronize", CC_SYNC },       { "cuStreamSynchronize", CC_SYNC },
    { "cuEventSynchronize", CC_SYNC },     { "hipDeviceSynchronize", CC_SYNC },
    { "hipStreamSynchronize", CC_SYNC },   { "hipEventSynchronize", CC_SYNC },
    { "cudaMemcpy", CC_COPY },             { "cudaMemcpy2D", CC_COPY },
    { "cudaMemcpy3D", CC_COPY },           { "cudaMemcpyFromSymbol", CC_COPY },
    { "cudaMemcpyPeer", CC_COPY },         { "cuMemcpyDtoH_v2", CC_COPY },
    { "cuMemcpyHtoD_v2", CC_COPY },        { "cuMemcpy", CC_COPY },
    { "hipMemcpy", CC_COPY },              { "cudaFree", CC_FREE },
    { "cudaFreeHost", CC_FREE },           { "cuMemFree_v2", CC_FREE },
    { "hipFree", CC_FREE },                { "cudaMemcpyAsync", CC_ASYNC_COPY },
    { "cuMemcpyDtoHAsync_v2", CC_ASYNC_COPY }, { "hipMemcpyAsync", CC_ASYNC_COPY },
};
#define NBLOCKING (sizeof blocking / sizeof blocking[0])

struct call {
    int64_t ts, end, parent;
    uint32_t name;
    int paired; /* a blocking copy: cudaMemcpyAsync (+ the sync after it) */
    int step;
    /* from the GPU sweep */
    int busy;           /* some GPU op still runs when the call returns */
    int64_t gpu_end;    /* latest end of GPU work finished by the call's end */
    int64_t next_start; /* first GPU op starting after the call's end */
};

struct issuer {
    char label[192];
    char what[64];   /* the call: "cudaStreamSynchronize", "blocking copy (...)" */
    char where[160]; /* user Python frame, "" when the trace has none */
    int64_t calls, blocked, idle;
};

struct names {
    uint32_t id[NBLOCKING];
    int idx[NBLOCKING];
    size_t n;
};

/* The string ids of the blocking names present in the run (one pass over
 * the interned strings, which carry no index on their text). */
static int names_load(sqlite3 *db, struct names *nm, struct err *e)
{
    static const char *const prefixes[] = { "cu%", "hip%" };
    struct facts_names *c;
    const char *s;
    uint32_t id;
    int rc;
    nm->n = 0;
    if ((rc = facts_names_open(db, FACTS_LIKE, prefixes, 2, &c, e))) return rc;
    while ((rc = facts_names_next(c, &id, &s, e)) == 1 && nm->n < NBLOCKING) {
        for (size_t i = 0; s && i < NBLOCKING; i++)
            if (strcmp(s, blocking[i].name) == 0) {
                nm->id[nm->n] = id;
                nm->idx[nm->n++] = (int)i;
                break;
            }
    }
    facts_names_close(c);
    return rc < 0 ? rc : 0;
}

static int names_class(const struct names *nm, uint32_t id)
{
    for (size_t i = 0; i < nm->n; i++)
        if (nm->id[i] == id) return nm->idx[i];
    return -1;
}

/* The correlation ids of the rank's device-to-host copies into pageable
 * memory (which cudaMemcpyAsync performs synchronously), sorted. One pass
 * over the memcpy rows of the rank's GPU tracks, and none at all when no
 * such copy name was interned: a lookup per launch call would cost an
 * index probe for each of millions of copies. */
struct corrset {
    int64_t *v;
    size_t n;
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int pageable_dtoh_load(sqlite3 *db, int rank, struct corrset *cs, struct err *e)
{
    /* both words, in either order (they share no letter, so cannot overlap) */
    static const char *const copy_names[] = { "%DtoH%Pageable%", "%Pageable%DtoH%" };
    struct facts_names *nm = NULL;
    struct scan_slices *c = NULL;
    struct scan_slice sl;
    uint32_t ids[16], id;
    size_t nids = 0, cap = 0;
    int rc;
    cs->v = NULL;
    cs->n = 0;
    if ((rc = facts_names_open(db, FACTS_LIKE, copy_names, 2, &nm, e))) goto out;
    while ((rc = facts_names_next(nm, &id, NULL, e)) == 1 && nids < sizeof ids / sizeof ids[0]) ids[nids++] = id;
    if (rc < 0 || nids == 0) goto out;
    if ((rc = scan_slices_open(db, rank, SCAN_TRACKS_GPU, SCAN_KIND(TB_K_MEMCPY), &c, e))) goto out;
    while ((rc = scan_slices_next(c, &sl, e)) == 1) {
        size_t k = 0;
        if (sl.corr == 0) continue;
        while (k < nids && ids[k] != sl.name) k++;
        if (k == nids) continue;
        if (cs->n == cap) cs->v = xrealloc(cs->v, (cap = cap ? cap * 2 : 64) * sizeof *cs->v);
        cs->v[cs->n++] = sl.corr;
    }
    if (cs->n) xqsort(cs->v, cs->n, sizeof *cs->v, cmp_i64);
out:
    facts_names_close(nm);
    scan_slices_close(c);
    return rc < 0 ? rc : 0;
}

static int pageable_dtoh(const struct corrset *cs, int64_t corr)
{
    return corr && cs->n && bsearch(&corr, cs->v, cs->n, sizeof *cs->v, cmp_i64) != NULL;
}

/* The launch calls of one thread, in time order, made blocking calls. */
struct taker {
    const struct rules_rank *r;
    const struct names *nm;
    const struct corrset *cp;
    struct call **out;
    size_t *nout, cap;
    /* the copy just before on this thread: start, and its call when added */
    int have_copy;
    int64_t copy_ts;
    long copy_call;
};

static void take_thread(struct taker *t)
{
    t->have_copy = 0;
    t->copy_ts = 0;
    t->copy_call = -1;
}

static void take(struct taker *t, const struct scan_slice *sl)
{
    uint32_t name = sl->name;
    int k = names_class(t->nm, name);
    int64_t ts = sl->ts, end = ts + sl->dur;
    int after_copy = t->have_copy;
    t->have_copy = 0;
    if (k < 0) return;
    if (blocking[k].cls == CC_SYNC && after_copy) {
        if (t->copy_call >= 0) { /* the copy blocked by itself: extend it over the sync */
            (*t->out)[t->copy_call].end = end;
            return;
        }
        ts = t->copy_ts;
    }
    int s = rules_step_at(t->r, ts);
    if (blocking[k].cls == CC_ASYNC_COPY) {
        t->have_copy = 1;
        t->copy_ts = ts;
        t->copy_call = -1;
        /* blocking by itself only into pageable memory */
        if (s < 0 || !pageable_dtoh(t->cp, sl->corr)) return;
        t->copy_call = (long)*t->nout;
    }
    if (s < 0) return;
    if (*t->nout == t->cap) *t->out = xrealloc(*t->out, (t->cap = t->cap ? t->cap * 2 : 64) * sizeof **t->out);
    struct call *c = &(*t->out)[(*t->nout)++];
    memset(c, 0, sizeof *c);
    c->ts = ts;
    c->end = end;
    c->parent = sl->parent;
    c->name = name;
    c->paired = blocking[k].cls == CC_ASYNC_COPY || after_copy;
    c->step = s;
    c->gpu_end = INT64_MIN;
    c->next_start = INT64_MAX;
}

/* The blocking calls on the rank's CPU threads that start inside a step.
 * A copy followed at once (no runtime call between) by a sync on the same
 * thread is one blocking copy (PyTorch's memcpy_and_sync behind .item(),
 * .cpu(), .to() without non_blocking): its span runs from the copy's
 * start, so the copy's own GPU work counts as waited for. The launch
 * calls come from the rank's shared reader when it holds them (read once
 * for kernel_launch_bound's lookups), else from a pass of their own. */
static int load_calls(struct rules_ctx *ctx, const struct rules_rank *r, const struct names *nm, struct call **out,
                      size_t *nout, struct err *e)
{
    struct scan_slices *cur = NULL;
    struct scan_launch *launch;
    struct scan_slice sl;
    const struct scan_slice *rows;
    size_t nrows;
    struct corrset cp = { NULL, 0 };
    struct taker t = { r, nm, &cp, out, nout, 0, 0, 0, -1 };
    int rc;
    *out = NULL;
    *nout = 0;
    if ((rc = pageable_dtoh_load(ctx->db, r->rank, &cp, e)) || (rc = rules_launches(ctx, r, &launch, e))) goto out;
    if (scan_launch_rows(launch, &rows, &nrows)) {
        int64_t track = -1;
        for (size_t i = 0; i < nrows; i++) {
            if (!scan_launch_on_host(launch, rows[i].track)) continue;
            if (rows[i].track != track) take_thread(&t);
            track = rows[i].track;
            take(&t, &rows[i]);
        }
        goto out;
    }
    if ((rc = scan_slices_open(ctx->db, r->rank, SCAN_TRACKS_HOST, SCAN_LAUNCHES, &cur, e))) goto out;
    while ((rc = scan_slices_track(cur, NULL, e)) == 1) {
        take_thread(&t);
        while ((rc = scan_slices_step(cur, &sl, e)) == 1) take(&t, &sl);
        if (rc < 0) break;
    }
out:
    scan_slices_close(cur);
    free(cp.v);
    return rc < 0 ? rc : 0;
}

static int cmp_call_end(const void *a, const void *b)
{
    const struct call *x = a, *y = b;
    return (x->end > y->end) - (x->end < y->end);
}

/* One pass over each GPU track of the rank (ops in time order), merged
 * with the calls in order of their end: for each call, whether the GPU is
 * still busy when it returns, the latest end of work finished by then and
 * the next op to start. calls must be sorted by end. */
static int sweep_gpu(sqlite3 *db, int rank, struct call *calls, size_t n, struct err *e)
{
    struct scan_slices *cur = NULL;
    struct scan_slice op;
    int rc = scan_slices_open(db, rank, SCAN_TRACKS_GPU, SCAN_GPU_OPS, &cur, e);
    if (rc) return rc;
    while ((rc = scan_slices_track(cur, NULL, e)) == 1) {
        int64_t maxend = INT64_MIN;
        int have = scan_slices_step(cur, &op, e); /* the op not yet passed */
        for (size_t i = 0; i < n; i++) {
            struct call *c = &calls[i];
            while (have == 1 && op.ts <= c->end) {
                if (op.ts + op.dur > maxend) maxend = op.ts + op.dur;
                have = scan_slices_step(cur, &op, e);
            }
            if (have < 0) break;
            if (maxend > c->end) c->busy = 1;
            else if (maxend > c->gpu_end) c->gpu_end = maxend;
            if (have == 1 && op.ts < c->next_start) c->next_start = op.ts;
        }
        if (have < 0) {
            rc = have;
            break;
        }
    }
    scan_slices_close(cur);
    return rc < 0 ? rc : 0;
}

/* Is a Python frame the user's code rather than the framework's? */
static int user_frame(const char *s)
{
    return s[0] != '<' && !strstr(s, "torch/") && !strstr(s, "site-packages") && !strstr(s, "dist-packages") &&
           !strstr(s, "lib/python");
}

/* Names what issued the call: the outermost operator above it (what the
 * user called: aten::item, aten::to ...) with the innermost one when they
 * differ; else the innermost annotation other than the step; else the call
 * itself. where: the innermost user Python frame, if recorded. */
static int issuer_of(struct slice_read *q, const struct call *c, const char *call_name, char *label, size_t n,
                     char *where, size_t wn, struct err *e)
{
    char outer[96] = "", inner[96] = "", annot[96] = "";
    int64_t p = c->parent;
    where[0] = '\0';
    for (int d = 0; p > 0 && d < MAX_DEPTH; d++) {
        struct slice_read_up up;
        int rc = slice_read_up(q, p, &up, e);
        if (rc < 0) return rc;
        if (rc == 0) break;
        p = up.parent;
        const char *nm = up.name;
        enum tb_kind kind = up.kind;
        if (!nm) continue;
        if (kind == TB_K_CPU_OP && !kclass_profiler_step(nm)) {
            if (!inner[0]) snprintf(inner, sizeof inner, "%s", nm);
            snprintf(outer, sizeof outer, "%s", nm);
        } else if (kind == TB_K_USER_ANNOTATION && !annot[0] && !kclass_profiler_step(nm)) {
            snprintf(annot, sizeof annot, "%s", nm);
        } else if (kind == TB_K_PYTHON && !where[0] && user_frame(nm)) {
            snprintf(where, wn, "%s", nm);
        }
    }
    if (outer[0] && strcmp(outer, inner) != 0) snprintf(label, n, "%s (via %s)", outer, inner);
    else if (outer[0]) snprintf(label, n, "%s", outer);
    else if (annot[0]) snprintf(label, n, "%s > %s", annot, call_name);
    else if (strstr(call_name, "DeviceSynchronize") || strstr(call_name, "CtxSynchronize"))
        snprintf(label, n, "%s outside any operator (torch.cuda.synchronize())", call_name);
    else snprintf(label, n, "%s outside any operator", call_name);
    return 0;
}

static int cmp_issuer(const void *a, const void *b)
{
    const struct issuer *x = a, *y = b;
    if (x->idle != y->idle) return x->idle > y->idle ? -1 : 1;
    return (x->calls < y->calls) - (x->calls > y->calls);
}

static const char advice_torch[] =
    "Keep the host ahead of the GPU: every call that waits for the GPU (.item(), .cpu(), .tolist(), "
    "print(tensor), float(loss), torch.cuda.synchronize(), a data-dependent shape such as nonzero() or "
    "boolean-mask indexing) empties the GPU's queue, which then idles while the host launches the next "
    "work. Accumulate metrics on the GPU and read them every N steps, move results to the host with "
    "non_blocking=True into pinned memory and wait on an event only when they are needed, and leave "
    "synchronize() to timing code outside the training loop.";
static const char snippet_torch[] =
    "running = torch.zeros((), device=\"cuda\")\n"
    "for i, (x, y) in enumerate(loader):\n"
    "    loss = loss_fn(model(x), y)\n"
    "    loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)\n"
    "    running += loss.detach()          # no .item() here\n"
    "    if i % 100 == 0:\n"
    "        print(running.item() / 100)   # one sync per 100 steps\n"
    "        running.zero_()";
static const char advice_free[] =
    "Stop returning GPU memory to the driver inside the loop: cudaFree waits for the whole device. Remove "
    "torch.cuda.empty_cache() from the step, leave PyTorch's caching allocator on (no "
    "PYTORCH_NO_CUDA_MEMORY_CACHING), and if the allocator frees because memory runs short, lower the peak "
    "or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True. A library that allocates its own workspace "
    "per call (cuDNN/MIOpen find mode, custom extensions) should get it from the framework's allocator.";
static const char advice_jax[] =
    "Let JAX dispatch asynchronously: avoid float(x), x.item(), np.asarray(x), jax.device_get() and "
    "block_until_ready() inside the step loop; log metrics every N steps (or with jax.debug.callback) so "
    "the host keeps queuing work ahead of the device.";
static const char advice_cuda[] =
    "Each blocking call (cudaDeviceSynchronize, cudaStreamSynchronize, a synchronous cudaMemcpy of a result, "
    "cudaMalloc/cudaFree) waits until the GPU's queue is empty, and the GPU then idles while the host "
    "launches the next work. Keep the queue full: take device-wide syncs out of the loop, read results back "
    "every N iterations with cudaMemcpyAsync into pinned memory and an event recorded after the copy, and "
    "wait on that event (cudaEventQuery, or cudaEventSynchronize only when the value is needed); order work "
    "between streams with cudaStreamWaitEvent instead of synchronizing the host.";
static const char snippet_cuda[] =
    "// h_loss: cudaMallocHost'ed once; ready: cudaEventCreateWithFlags(&ready, cudaEventDisableTiming)\n"
    "int pending = 0;\n"
    "for (int it = 0; it < iters; it++) {\n"
    "    step<<<grid, block, 0, s>>>(d_x, d_loss);  // no cudaDeviceSynchronize here\n"
    "    if (it % 100 == 0 && !pending) {           // read back every N iterations\n"
    "        cudaMemcpyAsync(h_loss, d_loss, sizeof *h_loss, cudaMemcpyDeviceToHost, s);\n"
    "        cudaEventRecord(ready, s);\n"
    "        pending = 1;\n"
    "    }\n"
    "    if (pending && cudaEventQuery(ready) == cudaSuccess) {  // never blocks\n"
    "        report(*h_loss);\n"
    "        pending = 0;\n"
    "    }\n"
    "}";
static const char advice_free_cuda[] =
    "Stop returning GPU memory inside the loop: cudaFree waits for the whole device. Allocate the working "
    "buffers once before the loop and reuse them, or use the stream-ordered allocator (cudaMallocAsync/"
    "cudaFreeAsync) with the pool's release threshold raised so freed memory stays in the pool instead of "
    "synchronizing.";
static const char snippet_free_cuda[] =
    "cudaMemPool_t pool;\n"
    "cudaDeviceGetDefaultMemPool(&pool, device);\n"
    "uint64_t keep = UINT64_MAX;  // keep freed memory in the pool\n"
    "cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);\n"
    "cudaMallocAsync(&tmp, bytes, s);  // inside the loop: no device-wide sync\n"
    "work<<<grid, block, 0, s>>>(tmp);\n"
    "cudaFreeAsync(tmp, s);";

/* What to do, by framework; the second row when most idle follows frees. */
static const struct rules_advice advice[2][RULES_NFRAMEWORKS] = {
    {
        [RULES_PYTORCH] = { advice_torch, snippet_torch },
        [RULES_JAX] = { advice_jax, NULL },
        [RULES_CUDA] = { advice_cuda, snippet_cuda },
    },
    {
        [RULES_PYTORCH] = { advice_free, NULL },
        [RULES_JAX] = { advice_jax, NULL },
        [RULES_CUDA] = { advice_free_cuda, snippet_free_cuda },
    },
};

/* An inference loop: no loss, no optimizer. */
static const char advice_torch_infer[] =
    "Keep the host ahead of the GPU: every call that waits for the GPU (.item(), .cpu(), .tolist(), "
    "print(tensor), torch.cuda.synchronize(), a data-dependent shape such as nonzero() or boolean-mask "
    "indexing) empties the GPU's queue, which then idles while the host launches the next batch. Keep "
    "outputs on the GPU and copy them back in bulk with non_blocking=True into pinned memory, waiting on "
    "an event only when the results are needed, and move post-processing that needs the host after the "
    "loop or onto another thread.";
static const char snippet_torch_infer[] =
    "outs = []\n"
    "with torch.inference_mode():\n"
    "    for x in loader:\n"
    "        outs.append(model(x.to(\"cuda\", non_blocking=True)))  # no .item()/.cpu() here\n"
    "results = torch.cat(outs).cpu()  # one sync at the end";
static const struct rules_advice advice_infer[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch_infer, snippet_torch_infer },
};

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double sync_per_step = rules_param(ctx, "rule_sync_per_step");
    const double sync_pct = rules_param(ctx, "rule_sync_pct");
    struct names nm;
    struct slice_read *up = NULL;
    int rc;
    if ((rc = names_load(ctx->db, &nm, e)) != 0) return rc;
    if ((rc = slice_read_open(ctx->db, &up, e)) != 0) return rc;
    if (nm.n == 0) goto done; /* no blocking call in the whole run */
    for (size_t ri = 0; ri < ctx->nranks; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        struct call *calls = NULL;
        size_t n = 0;
        if (!r->nsteps || r->avg_dur <= 0) continue;
        rc = load_calls(ctx, r, &nm, &calls, &n, e);
        if (!rc && n) {
            xqsort(calls, n, sizeof *calls, cmp_call_end);
            rc = sweep_gpu(ctx->db, r->rank, calls, n, e);
        }
        if (rc) {
            free(calls);
            slice_read_close(up);
            return rc;
        }
        struct issuer *iss = xcalloc(MAX_ISSUERS + 1, sizeof *iss);
        size_t niss = 0;
        int64_t nwait = 0, nall = (int64_t)n, blocked = 0, idle = 0, free_idle = 0;
        int64_t *step_idle = xcalloc(r->nsteps, sizeof *step_idle);
        for (size_t i = 0; i < n; i++) {
            const struct call *c = &calls[i];
            /* waited: GPU work finished while the host was in the call */
            if (c->busy || c->gpu_end < c->ts) continue;
            /* the idle gap may run into the next step (a sync at a step's
             * end leaves the GPU idle while the host starts the next one),
             * not beyond it */
            const struct rules_step *s = &r->steps[(size_t)c->step + 1 < r->nsteps ? c->step + 1 : c->step];
            int64_t stop = c->next_start < s->ts + s->dur ? c->next_start : s->ts + s->dur;
            int64_t gap = stop > c->gpu_end ? stop - c->gpu_end : 0, wait = c->end - c->ts;
            int64_t cost = gap < wait ? gap : wait;
            nwait++;
            blocked += wait;
            idle += cost;
            step_idle[c->step] += cost;
            char label[192], where[160];
            int k = names_class(&nm, c->name);
            if (blocking[k].cls == CC_FREE) free_idle += cost;
            char what[64];
            if (blocking[k].cls == CC_ASYNC_COPY)
                snprintf(what, sizeof what, "blocking copy (%s into pageable memory)", blocking[k].name);
            else if (c->paired) snprintf(what, sizeof what, "blocking copy (cudaMemcpyAsync + %s)", blocking[k].name);
            else snprintf(what, sizeof what, "%s", blocking[k].name);
            if ((rc = issuer_of(up, c, what, label, sizeof label, where, sizeof where, e)) < 0) break;
            size_t j = 0;
            while (j < niss && (strcmp(iss[j].label, label) != 0 || strcmp(iss[j].what, what) != 0)) j++;
            if (j == niss) {
                if (niss < MAX_ISSUERS) {
                    snprintf(iss[j].label, sizeof iss[j].label, "%s", label);
                    snprintf(iss[j].what, sizeof iss[j].what, "%s", what);
                    snprintf(iss[j].where, sizeof iss[j].where, "%s", where);
                    niss++;
                } else {
                    j = MAX_ISSUERS; /* "other" */
                    snprintf(iss[j].label, sizeof iss[j].label, "other operators");
                    snprintf(iss[j].what, sizeof iss[j].what, "various calls");
                }
            }
            iss[j].calls++;
            iss[j].blocked += wait;
            iss[j].idle += cost;
        }
        free(calls);
        if (rc < 0) {
            free(iss);
            free(step_idle);
            slice_read_close(up);
            return rc;
        }
        double steps = (double)r->nsteps, per_step = (double)nwait / steps, idle_step = (double)idle / steps;
        double idle_pct = idle_step / (double)r->avg_dur * 100.0;
        if (per_step <= sync_per_step && idle_pct <= sync_pct) {
            free(iss);
            free(step_idle);
            continue;
        }
        if (iss[MAX_ISSUERS].calls) niss++; /* keep "other" (it sits at index MAX_ISSUERS = niss) */
        xqsort(iss, niss, sizeof *iss, cmp_issuer);

        /* the step that lost the most to its syncs */
        size_t ws = 0;
        for (size_t i = 1; i < r->nsteps; i++)
            if (step_idle[i] > step_idle[ws]) ws = i;
        free(step_idle);

        char a[32], b[32], d[32], line[512], link[200];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:f,s:f,s:I,s:I,s:i}", "lines", "calls_per_step", per_step,
                               "blocked_us", (double)blocked / steps / 1000.0, "idle_us", idle_step / 1000.0,
                               "idle_pct", idle_pct, "step_us", (double)r->avg_dur / 1000.0, "calls", (json_int_t)nwait,
                               "calls_not_waiting", (json_int_t)(nall - nwait), "steps", (int)r->nsteps);
        json_t *lines = json_object_get(ev, "lines"), *by = json_array();
        snprintf(line, sizeof line,
                 "%.1f host-blocking calls per step waited for the GPU (%lld in %zu steps), blocking the host %s "
                 "per step",
                 per_step, (long long)nwait, r->nsteps, rules_fmt_ns((double)blocked / steps, a, sizeof a));
        json_array_append_new(lines, json_string(line));
        snprintf(line, sizeof line, "GPU left idle after them: %s per step (%.1f %% of a %s step)",
                 rules_fmt_ns(idle_step, a, sizeof a), idle_pct, rules_fmt_ns((double)r->avg_dur, b, sizeof b));
        json_array_append_new(lines, json_string(line));
        for (size_t j = 0; j < niss; j++) {
            if (j < 4) {
                int own = strstr(iss[j].label, iss[j].what) != NULL; /* the label names the call already */
                snprintf(line, sizeof line, "%s%s%s%s: %.1f per step, %s blocked, %s GPU idle after%s%s", iss[j].label,
                         own ? "" : " [", own ? "" : iss[j].what, own ? "" : "]", (double)iss[j].calls / steps, rules_fmt_ns((double)iss[j].blocked / steps, a, sizeof a),
                         rules_fmt_ns((double)iss[j].idle / steps, d, sizeof d), iss[j].where[0] ? " — at " : "",
                         iss[j].where);
                json_array_append_new(lines, json_string(line));
            }
            json_array_append_new(by, json_pack("{s:s,s:s,s:f,s:f,s:f}", "op", iss[j].label, "call", iss[j].what,
                                                "calls_per_step",
                                                (double)iss[j].calls / steps, "blocked_us",
                                                (double)iss[j].blocked / steps / 1000.0, "idle_us",
                                                (double)iss[j].idle / steps / 1000.0));
        }
        if (nall > nwait) {
            snprintf(line, sizeof line, "%lld more blocking calls returned at once (nothing queued on the GPU)",
                     (long long)(nall - nwait));
            json_array_append_new(lines, json_string(line));
        }
        json_object_set_new(ev, "by_op", by);
        /* frees are a different problem with a different fix */
        int frees = free_idle * 2 > idle && idle > 0;
        if (frees)
            json_array_append_new(lines, json_string("Most of the idle time follows frees (cudaFree/hipFree synchronize "
                                                     "the device): memory goes back to the driver inside the steps"));
        enum rules_severity sev = idle_pct >= 2 * sync_pct ? RULES_HIGH
                                  : idle_pct > sync_pct || idle_pct >= 1.0 ? RULES_MEDIUM
                                                                               : RULES_LOW;
        const struct rules_advice *adv = rules_advice_of(r, advice[frees], frees ? NULL : advice_infer);
        rules_add(ctx, &rule_excessive_host_sync, sev, r->rank, idle_step, ev,
                  rules_link_step(r, &r->steps[ws], link, sizeof link),
                  adv->text, adv->snippet, "Host syncs: %.1f per step wait for the GPU, leaving it idle %.1f %% of the step",
                  per_step, idle_pct);
        free(iss);
    }
done:
    slice_read_close(up);
    return 0;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_sync_per_step", "4", "calls/step", 0, 1000000,
      "excessive_host_sync: more host-blocking calls than this per step ..." },
    { "rule_sync_pct", "10", "%", 0, 100,
      "... or their time above this % of the step." },
};

const struct rules_def rule_excessive_host_sync = {
    "excessive_host_sync",
    "https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_HOST,
};

/* copy_not_overlapped — host-to-device input copies the GPU's compute
 * waits for: a copy queued on the compute stream itself (the default
 * stream, or .to("cuda") without a side stream) runs between two kernels
 * of that stream, and a copy on another stream that nothing overlaps
 * leaves the compute stream idle as well. Prefetching the next batch on a
 * side stream from pinned memory hides it under the current step's
 * kernels.
 *
 * The compute stream is the GPU stream with the most kernel time. A copy's
 * hidden part is the time the compute stream ran kernels during it (its
 * kernels are serialized, so their overlaps add up without double
 * counting); a copy on the compute stream has none. Only copies starting
 * inside steps count. Saving: the unhidden copy time per step, capped by
 * the memcpy part of the step breakdown (copy time during which no kernel
 * ran at all, which is what the step loses).
 * Memory: one pass over the GPU streams' copies and kernels; the HtoD
 * copies inside the steps are kept (a few per step in a training loop),
 * at most MAX_COPIES. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/gpuscan.h"
#include "derive/rules.h"
#include "store/model.h"
#include "store/scan.h"

#define MAX_COPIES (1u << 20)

static const char advice_torch[] =
    "Overlap the input copies with compute: load batches into pinned memory (DataLoader(pin_memory=True)), "
    "copy them with non_blocking=True, and issue the copy of the next batch on a side CUDA stream while the "
    "current step runs (a prefetcher), waiting on that stream only when the batch is used. Moving "
    "augmentation to the GPU also shrinks what crosses the link.";
static const char snippet_torch[] =
    "copy_stream = torch.cuda.Stream()\n"
    "def prefetch(batch):\n"
    "    with torch.cuda.stream(copy_stream):\n"
    "        return [t.to(\"cuda\", non_blocking=True) for t in batch]  # pinned by the DataLoader\n"
    "nxt = prefetch(next(it))\n"
    "for step in range(steps):\n"
    "    torch.cuda.current_stream().wait_stream(copy_stream)\n"
    "    x, y = nxt\n"
    "    nxt = prefetch(next(it))  # overlaps this step's kernels\n"
    "    loss = loss_fn(model(x), y); loss.backward(); opt.step()";
static const char advice_jax[] =
    "Overlap the input copies with compute: prefetch batches to the device ahead of the step "
    "(flax.jax_utils.prefetch_to_device, or jax.device_put of the next batch before running the current one).";
static const char advice_cuda[] =
    "Overlap the input copies with compute: allocate the host buffers pinned (cudaMallocHost/cudaHostRegister), "
    "issue cudaMemcpyAsync on a copy stream for the next chunk while the kernels of the current one run on the "
    "compute stream, and order them with events (cudaEventRecord/cudaStreamWaitEvent).";
static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, NULL },
};

struct copy {
    int64_t ts, end, track, hidden;
};

/* 1 when str id `name` is a host-to-device copy (gpuscan's cache holds
 * the text; a failed lookup is nm's error, checked after the sweep). */
static int is_htod(struct gpuscan_names *nm, uint32_t name)
{
    char s[96];
    gpuscan_names_text(nm, name, s, sizeof s);
    return strstr(s, "HtoD") || strstr(s, "Pageable -> Device") || strstr(s, "Pinned -> Device");
}

static int cmp_copy(const void *a, const void *b)
{
    const struct copy *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* Pass 1: the HtoD copies starting inside r's steps, and the compute
 * stream. OUT *v, *nv: the copies (owned by caller); *compute: its track
 * id, 0 when none. */
static int gather(sqlite3 *db, const struct rules_rank *r, struct gpuscan_names *nm, struct copy **v, size_t *nv,
                  int64_t *compute, struct err *e)
{
    struct scan_slices *c;
    struct scan_slice s;
    int64_t track = 0, best = -1, ktime = 0;
    size_t cap = 0, si = 0;
    int rc = scan_slices_open(db, r->rank, SCAN_TRACKS_GPU, SCAN_KIND(TB_K_KERNEL) | SCAN_KIND(TB_K_MEMCPY), &c, e);
    if (rc) return rc;
    *v = NULL;
    *nv = 0;
    *compute = 0;
    while ((rc = scan_slices_track(c, &track, e)) == 1) {
        ktime = 0;
        si = 0;
        while ((rc = scan_slices_step(c, &s, e)) == 1) {
            if (s.kind == TB_K_KERNEL) {
                ktime += s.dur;
                continue;
            }
            if (!is_htod(nm, s.name) || *nv >= MAX_COPIES) continue;
            size_t first;
            if (rules_len_in_steps(r, &si, s.ts, s.ts + 1, &first, NULL) <= 0) continue;
            if (*nv == cap) *v = xrealloc(*v, (cap = cap ? cap * 2 : 64) * sizeof **v);
            (*v)[(*nv)++] = (struct copy){ s.ts, s.ts + s.dur, track, 0 };
        }
        if (rc < 0) break;
        if (ktime > best) {
            best = ktime;
            *compute = track;
        }
    }
    scan_slices_close(c);
    if (rc < 0) return rc;
    if (*nv) xqsort(*v, *nv, sizeof **v, cmp_copy);
    return 0;
}

/* Pass 2: the compute stream's kernel time inside each copy (v sorted by
 * start; copies may be long, so each kernel looks back by the longest). */
static int hide(sqlite3 *db, const struct rules_rank *r, int64_t compute, struct copy *v, size_t nv, struct err *e)
{
    struct scan_slices *c;
    struct scan_slice s;
    int64_t track, maxdur = 0;
    for (size_t i = 0; i < nv; i++)
        if (v[i].end - v[i].ts > maxdur) maxdur = v[i].end - v[i].ts;
    int rc = scan_slices_open(db, r->rank, SCAN_TRACKS_GPU, SCAN_KIND(TB_K_KERNEL), &c, e);
    if (rc) return rc;
    size_t lo = 0;
    while ((rc = scan_slices_track(c, &track, e)) == 1) {
        if (track != compute) continue;
        while ((rc = scan_slices_step(c, &s, e)) == 1) {
            int64_t ka = s.ts, kb = s.ts + s.dur;
            while (lo < nv && v[lo].ts + maxdur <= ka) lo++;
            for (size_t i = lo; i < nv && v[i].ts < kb; i++) {
                if (v[i].track == compute) continue; /* queued behind the kernels: never hidden */
                int64_t a = ka > v[i].ts ? ka : v[i].ts, b = kb < v[i].end ? kb : v[i].end;
                if (b > a) v[i].hidden += b - a;
            }
        }
        break;
    }
    scan_slices_close(c);
    return rc < 0 ? rc : 0;
}

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double copy_pct = rules_param(ctx, "rule_copy_overlap_pct");
    struct gpuscan_names *nm;
    int rc = gpuscan_names_open(ctx->db, &nm, e);
    if (rc) return rc;
    for (size_t ri = 0; ri < ctx->nranks && rc == 0; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        struct copy *v = NULL;
        size_t nv = 0;
        int64_t compute = 0;
        if (!r->nsteps || r->avg_dur <= 0) continue;
        if ((rc = gather(ctx->db, r, nm, &v, &nv, &compute, e)) != 0 || !nv || !compute) {
            free(v);
            continue;
        }
        double steps = (double)r->nsteps, total = 0, open = 0, on_compute = 0;
        for (size_t i = 0; i < nv; i++) total += (double)(v[i].end - v[i].ts);
        if (total / steps / (double)r->avg_dur * 100.0 <= copy_pct) {
            free(v);
            continue;
        }
        if ((rc = hide(ctx->db, r, compute, v, nv, e)) != 0) {
            free(v);
            break;
        }
        for (size_t i = 0; i < nv; i++) {
            open += (double)(v[i].end - v[i].ts - v[i].hidden);
            if (v[i].track == compute) on_compute += (double)(v[i].end - v[i].ts);
        }
        free(v);
        double per_step = open / steps, pct = per_step / (double)r->avg_dur * 100.0;
        if (pct <= copy_pct) continue;
        double saving = per_step < r->avg_part[RULES_MEMCPY] ? per_step : r->avg_part[RULES_MEMCPY];
        char a[32], b[32], line[320], link[96];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:I}", "lines", "copy_us", total / steps / 1000.0, "unhidden_us",
                               per_step / 1000.0, "step_pct", pct, "copies", (json_int_t)nv);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line,
                 "Host-to-device copies: %s per step (%zu copies), of which %s run with the compute stream idle "
                 "(%.1f %% of the step)",
                 rules_fmt_ns(total / steps, a, sizeof a), nv, rules_fmt_ns(per_step, b, sizeof b), pct);
        json_array_append_new(lines, json_string(line));
        if (on_compute > 0) {
            snprintf(line, sizeof line, "%s per step of them are queued on the compute stream itself, between its kernels",
                     rules_fmt_ns(on_compute / steps, a, sizeof a));
            json_array_append_new(lines, json_string(line));
        }
        snprintf(link, sizeof link, "view=timeline&rank=%d", r->rank);
        enum rules_severity sev = pct >= 15 ? RULES_HIGH : pct >= 8 ? RULES_MEDIUM : RULES_LOW;
        rules_add(ctx, &rule_copy_not_overlapped, sev, r->rank, saving, ev, link, advice[r->framework].text,
                  advice[r->framework].snippet, "Input copies not overlapped: %.1f %% of the step waits for "
                  "host-to-device copies", pct);
    }
    if (rc == 0 && gpuscan_names_error(nm, e) < 0) rc = err_prefix(e, "copy_not_overlapped");
    gpuscan_names_close(nm);
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_copy_overlap_pct", "5", "%", 0, 100,
      "copy_not_overlapped: host-to-device copies with the compute stream idle above this % of the step." },
};

const struct rules_def rule_copy_not_overlapped = {
    "copy_not_overlapped",
    "https://pytorch.org/tutorials/intermediate/pinmem_nonblock.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_GPU,
};

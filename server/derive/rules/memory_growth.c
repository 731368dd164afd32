/* memory_growth — allocated GPU memory at step boundaries keeps rising: in
 * a training loop every step frees what it allocated (activations,
 * temporaries) and what stays (weights, gradients, optimizer state) has a
 * fixed size after the first steps, so memory that grows step after step
 * is a reference kept across steps (a list of losses or outputs holding
 * their graph, a cache keyed per batch ...) and ends in an out-of-memory
 * error.
 *
 * Boundaries: allocated memory at the start of the first step (the first
 * [memory] sample in it, before its own change), then at each step's end
 * (the analysis summary's step_memory). Fires on a run of at least
 * growth_steps consecutive strict increases whose total exceeds
 * max(growth_mib, growth_peak_pct of the peak). Evidence: growth per step,
 * the steps left until the GPU is full at this rate, and the operators
 * whose tensors were allocated during the growth and are still alive after
 * a later boundary (the suspects). No saving estimate. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/xmalloc.h"
#include "derive/rules.h"
#include "store/stats_read.h"

static const char advice_torch[] =
    "Find what keeps tensors from one step to the next: a Python list that appends the loss or outputs "
    "(keep loss.item() or loss.detach() instead, which drops the autograd graph), metrics accumulated "
    "with +=  on tensors that require grad, caches keyed per batch, or hooks that store activations. The "
    "memory view lists the allocations that stay alive; torch.cuda.memory._record_memory_history() and "
    "the memory snapshot viewer show the Python stack that made them.";
static const char snippet_torch[] =
    "losses = []\n"
    "for x, y in loader:\n"
    "    loss = loss_fn(model(x), y)\n"
    "    loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)\n"
    "    losses.append(loss.detach())   # not `loss`: that keeps each step's graph alive\n"
    "# to find the culprit:\n"
    "torch.cuda.memory._record_memory_history(max_entries=100000)\n"
    "# ... run a few steps ...\n"
    "torch.cuda.memory._dump_snapshot(\"snap.pickle\")  # open at pytorch.org/memory_viz";
static const char advice_jax[] =
    "Find what keeps device arrays alive across steps: Python lists of per-step outputs or metrics, caches "
    "keyed per batch, or new jit compilations per step (shapes changing) whose executables and buffers "
    "pile up. Convert metrics to host values every N steps and drop references to old arrays.";
static const char advice_cuda[] =
    "Device memory grows every iteration: an allocation inside the loop is not freed on some path (a "
    "cudaMalloc without its cudaFree, a cudaMallocAsync without its cudaFreeAsync, a library handle or "
    "workspace created per iteration). Allocate working buffers and handles once outside the loop and "
    "reuse them; compute-sanitizer --tool memcheck --leak-check full lists the allocations never freed.";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, NULL },
};

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double growth_mib = rules_param(ctx, "rule_growth_mib");
    const double growth_peak_pct = rules_param(ctx, "rule_growth_peak_pct");
    const double growth_steps = rules_param(ctx, "rule_growth_steps");
    int rc = 0;
    for (size_t ri = 0; ri < ctx->nranks; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        const char *key;
        json_t *arr;
        if (!r->nsteps) continue;
        json_object_foreach(json_object_get(r->summary, "step_memory"), key, arr) {
            size_t n = json_array_size(arr);
            if (n != r->nsteps) continue; /* one entry per step, or the summary is not ours to read */
            int dev = atoi(key);
            const struct rules_gpu *g = NULL;
            for (size_t i = 0; i < r->ngpus; i++)
                if (r->gpus[i].device == dev) g = &r->gpus[i];
            /* b[0]: start of the first step; b[i + 1]: end of step i */
            int64_t *b = xcalloc(n + 1, sizeof *b), peak_seen = 0;
            /* allocated just before the first memory sample of the first step */
            if ((rc = stats_read_alloc_at(ctx->db, r->rank, dev, r->steps[0].ts, &b[0], e)) < 0) {
                free(b);
                return rc;
            }
            for (size_t i = 0; i < n; i++) {
                json_t *v = json_array_get(arr, i);
                b[i + 1] = json_integer_value(json_object_get(v, "end"));
                int64_t p = json_integer_value(json_object_get(v, "peak"));
                if (p > peak_seen) peak_seen = p;
            }
            /* the run of strict increases with the largest total growth */
            size_t best_p = 0, best_q = 0, p = 0;
            for (size_t q = 1; q <= n; q++) {
                if (b[q] < 0 || b[q - 1] < 0 || b[q] <= b[q - 1]) {
                    p = q;
                    continue;
                }
                if (b[q] - b[p] > b[best_q] - b[best_p] || best_q == best_p) best_p = p, best_q = q;
            }
            size_t len = best_q - best_p;
            double peak = g && g->peak_bytes > 0 ? (double)g->peak_bytes : (double)peak_seen;
            double growth = (double)(b[best_q] - b[best_p]);
            double floor_bytes = growth_mib * 1024.0 * 1024.0, rel = peak * growth_peak_pct / 100.0;
            double threshold = floor_bytes > rel ? floor_bytes : rel;
            if ((double)len < growth_steps || growth <= threshold) {
                free(b);
                continue;
            }
            double rate = growth / (double)len;
            /* the last growing step's peak: what the next steps add to */
            int64_t last_peak = json_integer_value(json_object_get(json_array_get(arr, best_q - 1), "peak"));
            if (last_peak < b[best_q]) last_peak = b[best_q];
            double share = g && g->memory_bytes > 0 ? (double)g->memory_bytes / g->nshare : 0;
            double left = share > 0 ? (share - (double)last_peak) / rate : -1;
            if (share > 0 && left < 0) left = 0;

            char a[32], c[32], d[32], line[512], link[160];
            json_t *ev = json_pack("{s:[],s:f,s:i,s:f,s:f,s:i}", "lines", "bytes_per_step", rate, "growing_steps",
                                   (int)len, "growth_bytes", growth, "threshold_bytes", threshold, "device", dev);
            json_t *lines = json_object_get(ev, "lines"), *ends = json_array(), *ops = json_array();
            for (size_t i = best_p; i <= best_q; i++) json_array_append_new(ends, json_integer(b[i]));
            json_object_set_new(ev, "boundary_bytes", ends);
            size_t m = 0;
            m += (size_t)snprintf(line + m, sizeof line - m, "Allocated at step boundaries:");
            for (size_t i = best_p; i <= best_q && m < sizeof line - 40; i++)
                m += (size_t)snprintf(line + m, sizeof line - m, "%s %s", i > best_p ? " ->" : "",
                                      rules_fmt_bytes((double)b[i], a, sizeof a));
            json_array_append_new(lines, json_string(line));
            snprintf(line, sizeof line, "Grows %s per step over %zu consecutive steps (%s in all; threshold %s)",
                     rules_fmt_bytes(rate, a, sizeof a), len, rules_fmt_bytes(growth, c, sizeof c),
                     rules_fmt_bytes(threshold, d, sizeof d));
            json_array_append_new(lines, json_string(line));
            if (left >= 0) {
                json_object_set_new(ev, "steps_left", json_real(left));
                if (r->avg_dur > 0)
                    snprintf(line, sizeof line, "At this rate the GPU's %s are full in about %.0f steps (%s of training)",
                             rules_fmt_bytes(share, a, sizeof a), left, rules_fmt_ns(left * (double)r->avg_dur, c, sizeof c));
                else
                    snprintf(line, sizeof line, "At this rate the GPU's %s are full in about %.0f steps",
                             rules_fmt_bytes(share, a, sizeof a), left);
                json_array_append_new(lines, json_string(line));
            }
            /* allocated in a growing step but the last and still alive at its end */
            int64_t w0 = r->steps[best_p].ts, w1 = r->steps[best_q - 1].ts;
            int64_t wend = r->steps[best_q - 1].ts + r->steps[best_q - 1].dur;
            struct stats_read_group *kept;
            size_t nkept;
            if ((rc = stats_read_kept(ctx->db, r->rank, dev, w0, w1 > w0 ? w1 : wend, wend, &kept, &nkept, e)) < 0) {
                json_decref(ops);
                json_decref(ev);
                free(b);
                return rc;
            }
            for (size_t i = 0; i < nkept; i++) {
                const char *op = kept[i].id && kept[i].name ? kept[i].name : "(no operator)";
                double bytes = kept[i].total;
                snprintf(line, sizeof line, "Still alive after the growth: %s from %s (%lld tensors)",
                         rules_fmt_bytes(bytes, a, sizeof a), op, (long long)kept[i].count);
                json_array_append_new(lines, json_string(line));
                json_array_append_new(ops, json_pack("{s:s,s:f,s:I}", "op", op, "bytes", bytes, "tensors",
                                                     (json_int_t)kept[i].count));
            }
            stats_read_groups_free(kept, nkept);
            json_object_set_new(ev, "kept_by_op", ops);
            rules_add(ctx, &rule_memory_growth, left >= 0 && left > 10000 ? RULES_MEDIUM : RULES_HIGH, r->rank, 0, ev,
                      rules_link_memory(r, dev, link, sizeof link), advice[r->framework].text, advice[r->framework].snippet,
                      "GPU memory grows %s per step (%zu steps in a row): tensors kept across steps",
                      rules_fmt_bytes(rate, a, sizeof a), len);
            free(b);
        }
    }
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_growth_steps", "3", "steps", 1, 1000,
      "memory_growth: allocated memory grows over at least this many consecutive steps ..." },
    { "rule_growth_mib", "64", "MiB", 0, 1000000,
      "... by more than this many MiB in all ..." },
    { "rule_growth_peak_pct", "5", "%", 0, 100,
      "... or this % of the peak, whichever is larger." },
};

const struct rules_def rule_memory_growth = {
    "memory_growth",
    "https://pytorch.org/docs/stable/torch_cuda_memory.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_STEP,
};

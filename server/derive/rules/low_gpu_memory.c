/* low_gpu_memory — the GPU is mostly idle and its memory mostly unused, so
 * a larger batch fits and would give each step more work per launch, sync
 * and Python overhead. Peak allocated (the caching allocator's figure, from
 * the [memory] events) against the GPU's memory; utilization of the same
 * (busiest) GPU.
 *
 * How much larger: memory at step boundaries is what stays across steps
 * (weights, gradients, optimizer state: independent of the batch); the
 * rest of the peak (activations, temporaries) grows with the batch. So
 * k = (limit - kept) / (peak - kept), with limit the memory_near_limit
 * threshold, so the advice does not walk into that rule.
 *
 * Not raised when the DataLoader or collectives fill most of the GPU's idle
 * time: loading and all-reduce waits grow with the batch as much as compute
 * does, so a larger batch would not raise utilization (dataloader_bound,
 * communication_heavy and straggler say what to fix). Ranks of one
 * run that report the same GPU (same id, name and size) are taken to share
 * it (several processes on one GPU); each gets its part of the memory. */
#include <stdint.h>
#include <stdio.h>

#include "derive/rules.h"

/* The least allocated memory at a step's end on device dev: what stays
 * across steps. -1 when the trace has no such sample. */
static int64_t kept_bytes(const struct rules_rank *r, int dev)
{
    char key[16];
    snprintf(key, sizeof key, "%d", dev);
    json_t *arr = json_object_get(json_object_get(r->summary, "step_memory"), key), *v;
    int64_t kept = -1;
    size_t i;
    json_array_foreach(arr, i, v) {
        json_int_t end = json_integer_value(json_object_get(v, "end"));
        if (end >= 0 && (kept < 0 || end < kept)) kept = end;
    }
    return kept;
}

static const char advice_torch[] =
    "Give each step more work: raise the batch size (the memory allows the factor above) so launch, "
    "synchronization and Python overheads are paid once for more samples. Scale the learning rate with the "
    "batch (linear scaling with a warmup) or keep the global batch and use fewer GPUs. If the batch size is "
    "fixed by the optimisation, the room fits a larger model or several runs on one GPU.";
static const char advice_jax[] =
    "Give each step more work: raise the per-device batch size (the memory allows the factor above) and "
    "scale the learning rate with it.";
static const char advice_cuda[] =
    "Give each launch more work: the memory allows a larger problem or batch per iteration (the factor "
    "above), or several independent problems at once (batched cuBLAS calls, kernels on concurrent streams, "
    "or several processes sharing the GPU through MPS).";

static const char advice_torch_infer[] =
    "Give each forward pass more work: batch more requests or samples together (the memory allows the "
    "factor above), or serve several model replicas from this GPU (separate processes, MPS).";

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double low_memory_pct = rules_param(ctx, "rule_low_memory_pct");
    const double gpu_util_pct = rules_param(ctx, "rule_gpu_util_pct");
    const double memory_limit_pct = rules_param(ctx, "rule_memory_limit_pct");
    for (size_t ri = 0; ri < ctx->nranks; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        if (r->capture) continue; /* a graph capture: the GPU is not meant to run */
        const struct rules_gpu *g = r->gpu;
        if (!g || g->memory_bytes <= 0 || g->peak_bytes <= 0) continue;
        double share = (double)g->memory_bytes / g->nshare, peak = (double)g->peak_bytes;
        double peak_pct = peak / share * 100.0, util_pct = g->util * 100.0;
        if (peak_pct >= low_memory_pct || util_pct >= gpu_util_pct) continue;
        if (r->nsteps && r->avg_dur > 0) {
            double busy = r->avg_part[RULES_KERNEL] + r->avg_part[RULES_MEMCPY] + r->avg_part[RULES_MEMSET] +
                          r->avg_part[RULES_COMM];
            double idle = (double)r->avg_dur - busy;
            /* idle mostly waiting for input or inside collectives (for a
             * slower rank, or the transfer itself): a larger batch makes
             * those waits grow with it */
            if (idle > 0 && r->avg_part[RULES_DATALOADER] + r->avg_part[RULES_COMM] > 0.5 * idle) continue;
        }
        double kept = (double)kept_bytes(r, g->device);
        if (kept < 0 || kept >= peak) kept = 0; /* unknown: let all of the peak grow with the batch */
        double limit = share * memory_limit_pct / 100.0;
        double factor = (limit - kept) / (peak - kept);
        if (factor < 2) continue; /* not even twice the batch: no advice worth giving */
        int times = factor >= 1e6 ? 1000000 : (int)factor;

        char a[32], b[32], line[320], link[160], snippet[320];
        json_t *ev = json_pack("{s:[],s:I,s:I,s:f,s:f,s:f,s:i,s:i}", "lines", "peak_bytes", (json_int_t)g->peak_bytes,
                               "memory_bytes", (json_int_t)g->memory_bytes, "peak_pct", peak_pct, "gpu_util_pct",
                               util_pct, "kept_bytes", kept, "batch_factor", times, "ranks_sharing", g->nshare);
        json_t *lines = json_object_get(ev, "lines");
        rules_lines_peak(lines, g);
        snprintf(line, sizeof line, "GPU utilization: %.1f %%", util_pct);
        json_array_append_new(lines, json_string(line));
        if (kept > 0) {
            snprintf(line, sizeof line, "Kept across steps (%s): %s; per batch: %s",
                     r->training ? "weights, gradients, optimizer state" : "weights, caches",
                     rules_fmt_bytes(kept, a, sizeof a), rules_fmt_bytes(peak - kept, b, sizeof b));
            json_array_append_new(lines, json_string(line));
        }
        snprintf(line, sizeof line, "About %d times the batch would still fit below %.0f %% of the memory", times,
                 memory_limit_pct);
        json_array_append_new(lines, json_string(line));
        int k = times >= 8 ? 8 : times >= 4 ? 4 : 2; /* a first step to measure, not the whole factor */
        if (r->training)
            snprintf(snippet, sizeof snippet,
                     "# peak %s: about %dx the batch fits; try %dx and measure\n"
                     "loader = DataLoader(dataset, batch_size=%d * bs, shuffle=True,\n"
                     "                    num_workers=8, pin_memory=True)\n"
                     "opt = torch.optim.AdamW(model.parameters(), lr=%d * base_lr)  # linear scaling, add warmup",
                     rules_fmt_bytes(peak, a, sizeof a), times, k, k, k);
        else
            snprintf(snippet, sizeof snippet,
                     "# peak %s: about %dx the batch fits; try %dx and measure\n"
                     "loader = DataLoader(dataset, batch_size=%d * bs, num_workers=8, pin_memory=True)\n"
                     "with torch.inference_mode():\n"
                     "    for x in loader:\n"
                     "        out = model(x.to(\"cuda\", non_blocking=True))",
                     rules_fmt_bytes(peak, a, sizeof a), times, k, k);
        /* the PyTorch snippet carries the factor: built above */
        const struct rules_advice advice[RULES_NFRAMEWORKS] = {
            [RULES_PYTORCH] = { r->training ? advice_torch : advice_torch_infer, snippet },
            [RULES_JAX] = { advice_jax, NULL },
            [RULES_CUDA] = { advice_cuda, NULL },
        };
        rules_add(ctx, &rule_low_gpu_memory, util_pct < gpu_util_pct / 2 ? RULES_MEDIUM : RULES_LOW, r->rank, 0,
                  ev, rules_link_memory(r, g->device, link, sizeof link), advice[r->framework].text, advice[r->framework].snippet,
                  "GPU memory mostly unused: peak %s (%.1f %%) at %.*f %% GPU utilization; %s%dx the batch fits",
                  rules_fmt_bytes(peak, b, sizeof b), peak_pct, util_pct < 10 ? 1 : 0, util_pct,
                  times > 100 ? "over " : "~", times > 100 ? 100 : times);
    }
    (void)e;
    return 0;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_low_memory_pct", "20", "%", 0, 100,
      "low_gpu_memory: peak allocated below this % of the GPU's memory (with low utilization)." },
};

const struct rules_def rule_low_gpu_memory = {
    "low_gpu_memory",
    "https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_STEP,
};

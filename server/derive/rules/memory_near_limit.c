/* memory_near_limit — peak allocated memory on a GPU is close to its
 * capacity: the run is one longer sequence or larger batch away from an
 * out-of-memory error, and the caching allocator (which needs room for
 * fragmentation on top of what is allocated) may already be freeing and
 * retrying, which synchronizes the device. Peak allocated from the [memory]
 * events against the GPU's memory, per GPU of each rank; ranks of one run
 * that report the same GPU (id, name, size) share its memory. Evidence: the
 * peak, what the allocator reserved, the step where it happens and the
 * operators whose tensors are live at that moment. No saving estimate. */
#include <stdint.h>
#include <stdio.h>

#include "derive/rules.h"
#include "store/stats_read.h"

static const char advice_torch[] =
    "Lower the peak before it becomes an out-of-memory error: recompute activations in the backward pass "
    "(activation checkpointing) for the largest blocks, run under torch.autocast with bf16 (half the "
    "activation memory), and reach the same batch with a smaller micro-batch and gradient accumulation. "
    "Free gradients with zero_grad(set_to_none=True); shard optimizer state (FSDP/ZeRO) across GPUs when it "
    "dominates. If reserved is well above allocated, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
    "reduces fragmentation.";
static const char snippet_torch[] =
    "from torch.utils.checkpoint import checkpoint\n"
    "def forward(self, x):\n"
    "    for blk in self.blocks:\n"
    "        x = checkpoint(blk, x, use_reentrant=False)  # recompute in backward\n"
    "    return self.head(x)\n"
    "accum = 4  # micro-batch = batch / accum\n"
    "for i, (x, y) in enumerate(loader):\n"
    "    with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):\n"
    "        loss = loss_fn(model(x), y) / accum\n"
    "    loss.backward()\n"
    "    if (i + 1) % accum == 0:\n"
    "        opt.step(); opt.zero_grad(set_to_none=True)";
static const char advice_jax[] =
    "Lower the peak: rematerialize activations (jax.checkpoint / nn.remat) for the largest blocks, compute in "
    "bfloat16, and use a smaller micro-batch with gradient accumulation (optax.MultiSteps); shard parameters "
    "and optimizer state across devices when they dominate.";
static const char advice_cuda[] =
    "Lower the peak before an allocation fails: free or reuse temporary buffers as soon as their last "
    "kernel is queued (cudaMallocAsync/cudaFreeAsync from one memory pool lets buffers with disjoint "
    "lifetimes share memory), process the problem in smaller chunks, store data in FP16/BF16 where the "
    "numerics allow, and check cudaMemGetInfo before large allocations.";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, NULL },
};

/* Inference keeps no activations for a backward pass and no optimizer state. */
static const char advice_torch_infer[] =
    "Lower the peak before it becomes an out-of-memory error: run under torch.inference_mode() so no "
    "activation is kept for a backward pass, load the weights in bf16/fp16 (or quantized to int8/fp8), "
    "serve smaller batches or shorter sequences per call, and bound the KV cache of a generative model. If "
    "reserved is well above allocated, PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True reduces "
    "fragmentation.";
static const char snippet_torch_infer[] =
    "model = model.to(device=\"cuda\", dtype=torch.bfloat16).eval()\n"
    "with torch.inference_mode():\n"
    "    for x in loader:  # a smaller batch per call\n"
    "        out = model(x.to(\"cuda\", non_blocking=True))";
static const struct rules_advice advice_infer[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch_infer, snippet_torch_infer },
};

/* When this share of the peak was allocated before the trace began. */
#define PRE_TRACE_SHARE 0.9

static const char advice_pre_torch[] =
    "Almost all of this memory was allocated before the trace began, so the traced steps do not show what "
    "holds it: weights and optimizer state loaded earlier, a pool reserved up front (vLLM's "
    "gpu_memory_utilization, a KV cache, JAX/XLA preallocation), or tensors kept from an earlier phase. "
    "Find the owner first: record the allocator's history from the start of the process "
    "(torch.cuda.memory._record_memory_history) or print torch.cuda.memory_summary() before the loop; "
    "lower a pre-reserved pool if one is configured.";
static const char snippet_pre_torch[] =
    "torch.cuda.memory._record_memory_history(max_entries=100000)  # at process start\n"
    "...  # load the model, build the optimizer, run the loop\n"
    "torch.cuda.memory._dump_snapshot(\"mem.pickle\")  # open at pytorch.org/memory_viz\n"
    "print(torch.cuda.memory_summary())";
static const char advice_pre_cuda[] =
    "Almost all of this memory was allocated before the trace began, so the traced iterations do not show "
    "what holds it: buffers allocated at start-up or a pool reserved up front. Start the capture earlier "
    "(before the allocations) or log cudaMemGetInfo around the start-up to see what holds it.";
static const struct rules_advice advice_pre[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_pre_torch, snippet_pre_torch },
    [RULES_CUDA] = { advice_pre_cuda, NULL },
};

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double memory_limit_pct = rules_param(ctx, "rule_memory_limit_pct");
    int rc = 0;
    for (size_t ri = 0; ri < ctx->nranks; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        for (size_t gi = 0; gi < r->ngpus; gi++) {
            const struct rules_gpu *g = &r->gpus[gi];
            if (g->memory_bytes <= 0 || g->peak_bytes <= 0) continue;
            double share = (double)g->memory_bytes / g->nshare, peak = (double)g->peak_bytes;
            double pct = peak / share * 100.0;
            if (pct <= memory_limit_pct) continue;
            int64_t reserved = g->peak_reserved, peak_ts = g->peak_ts;
            int ps = rules_step_at(r, peak_ts);

            char a[32], line[320], link[160];
            json_t *ev = json_pack("{s:[],s:I,s:I,s:I,s:f,s:i}", "lines", "peak_bytes", (json_int_t)g->peak_bytes,
                                   "reserved_bytes", (json_int_t)reserved, "memory_bytes",
                                   (json_int_t)g->memory_bytes, "peak_pct", pct, "ranks_sharing", g->nshare);
            json_t *lines = json_object_get(ev, "lines"), *ops = json_array();
            rules_lines_peak(lines, g);
            if (reserved > 0) {
                snprintf(line, sizeof line, "Reserved by the caching allocator: %s (%.1f %%)",
                         rules_fmt_bytes((double)reserved, a, sizeof a), (double)reserved / share * 100.0);
                json_array_append_new(lines, json_string(line));
            }
            if (ps >= 0) {
                snprintf(line, sizeof line, "The peak is reached in %s", r->steps[ps].name);
                json_array_append_new(lines, json_string(line));
                json_object_set_new(ev, "peak_step", json_string(r->steps[ps].name));
            }
            /* tensors live at the peak, by the operator that allocated them */
            struct stats_read_group *live;
            size_t nlive;
            if ((rc = stats_read_live_at(ctx->db, r->rank, g->device, peak_ts, &live, &nlive, e)) < 0) {
                json_decref(ops);
                json_decref(ev);
                return rc;
            }
            double traced = 0;
            for (size_t i = 0; i < nlive; i++) {
                double bytes = live[i].total;
                const char *op = live[i].id && live[i].name ? live[i].name : "(no operator)";
                traced += bytes;
                if (i < 3) {
                    snprintf(line, sizeof line, "Live at the peak: %s from %s (%lld tensors)",
                             rules_fmt_bytes(bytes, a, sizeof a), op, (long long)live[i].count);
                    json_array_append_new(lines, json_string(line));
                    json_array_append_new(ops, json_pack("{s:s,s:f,s:I}", "op", op, "bytes", bytes, "tensors",
                                                         (json_int_t)live[i].count));
                }
            }
            stats_read_groups_free(live, nlive);
            json_object_set_new(ev, "live_by_op", ops);
            if (peak - traced > 0) {
                snprintf(line, sizeof line, "Allocated before the trace began (weights, optimizer state...): %s",
                         rules_fmt_bytes(peak - traced, a, sizeof a));
                json_array_append_new(lines, json_string(line));
            }
            const struct rules_advice *adv = rules_advice_of(r, advice, advice_infer);
            /* the traced steps barely move the peak: what fills the GPU was
             * there before the profiler started, and activation advice
             * would change nothing */
            int before = peak - traced >= PRE_TRACE_SHARE * peak;
            if (before) adv = &advice_pre[r->framework == RULES_CUDA ? RULES_CUDA : RULES_PYTORCH];
            json_object_set_new(ev, "before_trace_bytes", json_integer((json_int_t)(peak - traced)));
            rules_add(ctx, &rule_memory_near_limit,
                      pct >= (100.0 + memory_limit_pct) / 2 ? RULES_HIGH : RULES_MEDIUM, r->rank, 0, ev,
                      rules_link_memory(r, g->device, link, sizeof link), adv->text, adv->snippet,
                      "GPU memory near its limit: peak %s is %.1f %% of GPU %d", rules_fmt_bytes(peak, a, sizeof a),
                      pct, g->device);
        }
    }
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_memory_limit_pct", "90", "%", 0, 100,
      "memory_near_limit: peak allocated above this % of the GPU's memory." },
};

const struct rules_def rule_memory_near_limit = {
    "memory_near_limit",
    "https://pytorch.org/docs/stable/checkpoint.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_STEP,
};

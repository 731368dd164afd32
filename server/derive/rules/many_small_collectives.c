/* many_small_collectives — the step issues hundreds of small collectives
 * (a DDP model whose gradients are all-reduced bucket by tiny bucket, or
 * per-parameter all-reduces): each pays the collective's fixed latency
 * (kernel launch, ring/tree setup, synchronisation across ranks), so many
 * small ones cost far more than a few large ones moving the same bytes.
 *
 * Read from kernel_stat: the communication kernels of the rank (calls and
 * time). A collective counts as small from its mean duration, since most
 * traces (older Kineto, Nsight) carry no message size: under SMALL_NS it
 * is latency-bound on any interconnect (1 MiB all-reduces take tens of µs
 * on NVLink). Saving: half of those collectives' time per step (latency
 * paid once per bucket instead of once per tensor), capped by the
 * communication the step actually waits for (the breakdown's
 * communication part: collectives hidden under compute cost no time). */
#include <stdio.h>

#include "derive/rules.h"
#include "store/stats_read.h"

#define SMALL_NS 200000.0
#define SAVED_FRACTION 0.5

static const char advice_torch[] =
    "Send fewer, larger collectives: let DDP bucket the gradients (raise bucket_cap_mb, default 25 MiB; "
    "gradient_as_bucket_view=True) instead of all-reducing tensor by tensor, coalesce small tensors before "
    "a collective (torch.distributed's coalescing manager, or flatten them into one buffer), and for FSDP "
    "wrap larger modules so each all-gather/reduce-scatter moves more.";
static const char snippet_torch[] =
    "model = DDP(model, device_ids=[local_rank], bucket_cap_mb=50,\n"
    "            gradient_as_bucket_view=True)\n"
    "# own collectives: one call for many tensors\n"
    "flat = torch.cat([t.flatten() for t in tensors]); dist.all_reduce(flat)";
static const char advice_jax[] =
    "Send fewer, larger collectives: combine small arrays before psum/all_gather (tree-flatten into one "
    "buffer), and let XLA combine them (--xla_gpu_all_reduce_combine_threshold_bytes).";
static const char advice_cuda[] =
    "Send fewer, larger collectives: pack small buffers into one before ncclAllReduce, or group calls with "
    "ncclGroupStart/ncclGroupEnd so NCCL launches them together.";
static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, NULL },
};

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double per_step_min = rules_param(ctx, "rule_small_collectives_per_step");
    const double step_pct_min = rules_param(ctx, "rule_small_collectives_pct");
    int rc = 0;
    for (size_t ri = 0; ri < ctx->nranks; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        if (!r->nsteps || r->avg_dur <= 0) continue;
        double calls, total;
        if ((rc = stats_read_comm_totals(ctx->db, r->rank, &calls, &total, e)) < 0) return rc;
        if (calls <= 0) continue;
        double steps = (double)r->nsteps, per_step = calls / steps, mean = total / calls;
        double time_step = total / steps, step_pct = time_step / (double)r->avg_dur * 100.0;
        if (per_step <= per_step_min || mean >= SMALL_NS || step_pct <= step_pct_min) continue;
        double saving = SAVED_FRACTION * time_step;
        if (saving > r->avg_part[RULES_COMM]) saving = r->avg_part[RULES_COMM];
        char a[32], b[32], line[320], link[96];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f}", "lines", "per_step", per_step, "mean_us", mean / 1000.0,
                               "step_pct", step_pct);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "%.0f collectives per step, %s each on average: %s per step (%.0f %% of the step)",
                 per_step, rules_fmt_ns(mean, a, sizeof a), rules_fmt_ns(time_step, b, sizeof b), step_pct);
        json_array_append_new(lines, json_string(line));
        snprintf(line, sizeof line, "The step waits for %s of communication not hidden under compute",
                 rules_fmt_ns(r->avg_part[RULES_COMM], a, sizeof a));
        json_array_append_new(lines, json_string(line));
        snprintf(link, sizeof link, "view=kernels&rank=%d&q=nccl", r->rank);
        enum rules_severity sev = saving >= 0.1 * (double)r->avg_dur ? RULES_HIGH
                                  : saving >= 0.03 * (double)r->avg_dur ? RULES_MEDIUM
                                                                        : RULES_LOW;
        rules_add(ctx, &rule_many_small_collectives, sev, r->rank, saving, ev, link, advice[r->framework].text,
                  advice[r->framework].snippet, "Many small collectives: %.0f per step of %s each", per_step,
                  rules_fmt_ns(mean, a, sizeof a));
    }
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_small_collectives_per_step", "50", "", 0, 1e9,
      "many_small_collectives: more collectives per step than this ..." },
    { "rule_small_collectives_pct", "5", "%", 0, 100,
      "... taking more than this % of the step together." },
};

const struct rules_def rule_many_small_collectives = {
    "many_small_collectives",
    "https://pytorch.org/docs/stable/notes/ddp.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_COMM,
};

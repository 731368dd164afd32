/* low_gpu_utilization — kernels run less than rule_gpu_util_pct of the
 * steps' time on the rank's busiest GPU (gpu.util: the union of kernel
 * intervals over the steps' window).
 *
 * This rule sums up: it runs after the rules that explain idle time and
 * names the dominant cause among their findings for the rank (or the
 * run), the one that could save the most per step. A straggler on another
 * rank counts: the others wait for it in the collectives. gpu_idle_gaps
 * only says what the host did in the gaps; when that points at a finding
 * that says why (DataLoader -> dataloader_bound, collectives -> straggler
 * or the communication rules, syncs -> excessive_host_sync), that one is
 * named. The input pipeline counts too: a step spent mostly in the
 * DataLoader is low utilization with dataloader_bound as its cause. With
 * no cause found, the GPU simply has too little work per step.
 *
 * saving: 0. The time belongs to the cause, whose finding carries it;
 * counting it here again would double it, and the summary's own advice
 * (more work per step) raises throughput rather than cutting the step.
 */
#include <stdio.h>
#include <string.h>

#include "derive/rules.h"

/* Findings that explain idle GPU time, and how to say so in a title. */
static const struct {
    const char *id, *what;
} causes[] = {
    { "dataloader_bound", "waiting for input (DataLoader)" },
    { "kernel_launch_bound", "launch overhead (the host issues work slower than the GPU runs it)" },
    { "gpu_idle_gaps", "host work between GPU ops" },
    { "excessive_host_sync", "host syncs that empty the GPU's queue" },
    { "straggler", "waiting for a slower rank" },
    { "comm_not_overlapped", "communication not overlapped with compute" },
    { "communication_heavy", "communication" },
    { "ddp_backend", "collectives on the host (gloo)" },
    { "pageable_memcpy", "copies through pageable host memory" },
};
#define NCAUSES (sizeof causes / sizeof causes[0])

/* gpu_idle_gaps says what the host did during the gaps (evidence
 * main_host); when another finding says why, that one is the cause. */
static const struct {
    const char *host, *ids[4];
} roots[] = {
    { "dataloader", { "dataloader_bound" } },
    { "collective", { "straggler", "comm_not_overlapped", "communication_heavy", "ddp_backend" } },
    { "sync", { "excessive_host_sync" } },
};

static const char advice_more_work[] =
    "Give the GPU more work per step: a larger batch (scale the learning rate, or accumulate gradients "
    "to keep the effective batch), a larger model or sequence per GPU, or fewer, larger kernels "
    "(torch.compile).";
static const char snippet_torch[] =
    "loader = torch.utils.data.DataLoader(dataset, batch_size=4 * bs, ...)  # more work per launch\n"
    "model = torch.compile(model)  # fewer, larger kernels";
static const char advice_jax[] =
    "Give each device more work per step: a larger per-device batch, the whole training step under one "
    "jit, and input prefetched in the background.";
static const char advice_cuda[] =
    "Give the GPU more work per launch: a larger problem or batch per iteration, fewer and larger kernels "
    "(fuse small ones), independent work on concurrent streams, and the iteration captured in a CUDA graph "
    "so short kernels are not each waiting on a launch.";

/* The advice once the cause is dealt with, by framework. */
static const struct rules_advice advice_after[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_more_work, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, NULL },
};

/* On an inference trace there is no learning rate to rescale. */
static const char advice_more_work_infer[] =
    "Give the GPU more work per forward pass: batch more requests or samples together (dynamic batching in "
    "the server), longer sequences per call, or fewer, larger kernels (torch.compile).";
static const char snippet_torch_infer[] =
    "model = torch.compile(model)  # fewer, larger kernels\n"
    "with torch.inference_mode():\n"
    "    out = model(torch.cat(requests))  # one batched forward pass";
static const struct rules_advice advice_after_infer[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_more_work_infer, snippet_torch_infer },
};

/* Already compiled: torch.compile is not the advice. */
static const char advice_more_work_compiled[] =
    "Give the GPU more work per step: a larger batch (scale the learning rate, or accumulate gradients "
    "to keep the effective batch), or a larger model or sequence per GPU; the model is already compiled, so "
    "let it replay as CUDA graphs (mode=\"reduce-overhead\").";
static const char snippet_torch_compiled[] =
    "loader = torch.utils.data.DataLoader(dataset, batch_size=4 * bs, ...)  # more work per launch\n"
    "model = torch.compile(model, mode=\"reduce-overhead\")  # CUDA graphs";

/* Index of the cause with this id, -1 when it is not one. */
static int cause_of(const char *id)
{
    for (size_t k = 0; k < NCAUSES; k++)
        if (id && strcmp(id, causes[k].id) == 0) return (int)k;
    return -1;
}

/* Does finding f explain idle time of rank? Its own findings and the
 * run's do; so does a straggler on another rank, which every rank waits
 * for in the collectives. */
static int applies(json_t *f, int rank)
{
    json_t *r = json_object_get(f, "rank");
    int k = cause_of(json_string_value(json_object_get(f, "id")));
    if (k < 0) return 0;
    return !json_is_integer(r) || json_integer_value(r) == rank || strcmp(causes[k].id, "straggler") == 0;
}

/* The finding of rule id that applies to rank with the largest saving, or
 * NULL (id NULL: any cause). Borrowed from c. */
static json_t *largest(const struct rules_ctx *c, int rank, const char *id)
{
    json_t *best = NULL, *f;
    size_t i;
    json_array_foreach(c->findings, i, f) {
        if (!applies(f, rank) || (id && strcmp(json_string_value(json_object_get(f, "id")), id) != 0)) continue;
        if (!best || json_number_value(json_object_get(f, "saving_us")) >
                         json_number_value(json_object_get(best, "saving_us")))
            best = f;
    }
    return best;
}

/* The dominant cause of rank's idle time: the cause finding that could
 * save the most, or the one gpu_idle_gaps' host activity points to.
 * Borrowed from c; NULL when none. */
static json_t *dominant_cause(const struct rules_ctx *c, int rank)
{
    json_t *best = largest(c, rank, NULL);
    if (!best || strcmp(json_string_value(json_object_get(best, "id")), "gpu_idle_gaps") != 0) return best;
    const char *host = json_string_value(json_object_get(json_object_get(best, "evidence"), "main_host"));
    for (size_t i = 0; host && i < sizeof roots / sizeof roots[0]; i++) {
        if (strcmp(host, roots[i].host) != 0) continue;
        for (size_t j = 0; j < 4 && roots[i].ids[j]; j++) {
            json_t *f = largest(c, rank, roots[i].ids[j]);
            if (f) return f;
        }
    }
    return best;
}

/* How cause finding f reads for rank, into buf: a straggler is "waiting
 * for rank N" on the other ranks and "this rank is the straggler" on its
 * own. Returns buf. */
static const char *cause_what(json_t *f, int rank, char *buf, size_t n)
{
    int k = cause_of(json_string_value(json_object_get(f, "id")));
    json_t *fr = json_object_get(f, "rank");
    int straggler = strcmp(causes[k].id, "straggler") == 0 && json_is_integer(fr);
    const char *main_host = json_string_value(json_object_get(json_object_get(f, "evidence"), "main_host"));
    if (straggler && json_integer_value(fr) != rank)
        snprintf(buf, n, "waiting for rank %lld, a straggler", (long long)json_integer_value(fr));
    else if (straggler)
        snprintf(buf, n, "this rank is the straggler the others wait for");
    else if (strcmp(causes[k].id, "gpu_idle_gaps") == 0 && main_host &&
             strcmp(main_host, "queued") == 0)
        snprintf(buf, n, "queued ops waiting on a dependency (another stream, an event or a collective)");
    else
        snprintf(buf, n, "%s", causes[k].what);
    return buf;
}

static int run(struct rules_ctx *c, struct err *e)
{
    const double gpu_util_pct = rules_param(c, "rule_gpu_util_pct");
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        if (r->capture) continue; /* a graph capture: the GPU is not meant to run */
        const struct rules_gpu *g = r->gpu;
        if (!g || !r->nsteps || g->window_ns <= 0) continue;
        /* collectives waiting for a peer keep the GPU "busy" without work:
         * judge by the compute kernels when they are fewer */
        int by_compute = g->compute_util >= 0 && g->compute_util < g->util;
        double share = by_compute ? g->compute_util : g->util, util = share * 100.0;
        if (util >= gpu_util_pct) continue;
        double n = (double)r->nsteps, busy = share * (double)g->window_ns;
        json_t *cause = dominant_cause(c, r->rank);
        int k = cause ? cause_of(json_string_value(json_object_get(cause, "id"))) : -1;
        char a[32], b[32], d[32], line[512], link[200], advice[1024], what[160] = "", other[160];
        if (cause) cause_what(cause, r->rank, what, sizeof what);

        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:f,s:i,s:s?}", "lines", "util_pct", util, "kernel_us",
                               busy / n / 1000.0, "idle_us", ((double)g->window_ns - busy) / n / 1000.0, "step_us",
                               (double)g->window_ns / n / 1000.0, "steps", (int)r->nsteps, "cause",
                               cause ? causes[k].id : NULL);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "%s run %.1f %% of the steps' time on GPU %d (%s): %s of a %s step, %s idle",
                 by_compute ? "Compute kernels (collectives left out)" : "Kernels", util, g->device,
                 g->name[0] ? g->name : "GPU", rules_fmt_ns(busy / n, a, sizeof a),
                 rules_fmt_ns((double)g->window_ns / n, b, sizeof b),
                 rules_fmt_ns(((double)g->window_ns - busy) / n, d, sizeof d));
        json_array_append_new(lines, json_string(line));
        if (by_compute && g->util - g->compute_util > 0.01) {
            snprintf(line, sizeof line,
                     "With collectives the GPU is busy %.1f %% of the steps: %.1f points of that are collectives "
                     "(waiting for peers or moving data), not compute",
                     g->util * 100.0, (g->util - g->compute_util) * 100.0);
            json_array_append_new(lines, json_string(line));
            json_object_set_new(ev, "busy_pct", json_real(g->util * 100.0));
        }
        if (cause) {
            snprintf(line, sizeof line, "Main cause: %s (%s, could save ~%s per step): %s", what, causes[k].id,
                     rules_fmt_ns(json_number_value(json_object_get(cause, "saving_us")) * 1000.0, a, sizeof a),
                     json_string_value(json_object_get(cause, "title")));
            json_array_append_new(lines, json_string(line));
            /* the other causes, each once, in catalog order */
            json_t *others = json_array();
            int len = snprintf(line, sizeof line, "Also:");
            for (size_t j = 0; j < NCAUSES; j++) {
                json_t *f = largest(c, r->rank, causes[j].id);
                if (!f || f == cause) continue;
                json_array_append_new(others, json_string(causes[j].id));
                if (len < (int)sizeof line)
                    len += snprintf(line + len, sizeof line - (size_t)len, "%s %s (%s)",
                                    json_array_size(others) > 1 ? "," : "", cause_what(f, r->rank, other, sizeof other),
                                    causes[j].id);
            }
            if (json_array_size(others)) json_array_append_new(lines, json_string(line));
            json_object_set_new(ev, "other_causes", others);
        } else {
            json_array_append_new(lines, json_string("No other rule explains the idle time: the GPU has little "
                                                     "work per step"));
        }
        if (g->memory_bytes > 0 && g->peak_bytes > 0) {
            snprintf(line, sizeof line, "Peak memory allocated: %s of %s (%.0f %%)",
                     rules_fmt_bytes((double)g->peak_bytes, a, sizeof a),
                     rules_fmt_bytes((double)g->memory_bytes, b, sizeof b),
                     (double)g->peak_bytes / (double)g->memory_bytes * 100.0);
            json_array_append_new(lines, json_string(line));
        }

        const struct rules_advice *after = rules_advice_of(r, advice_after, advice_after_infer);
        static const struct rules_advice compiled = { advice_more_work_compiled, snippet_torch_compiled };
        if (r->framework == RULES_PYTORCH && r->compiled && r->training) after = &compiled;
        if (cause)
            snprintf(advice, sizeof advice,
                     "Fix the main cause first, %s: see the %s finding. If utilization stays low once it is fixed: %s",
                     what, causes[k].id, after->text);
        else
            snprintf(advice, sizeof advice, "%s", after->text);
        /* the cause's own view when it is about this rank, else this rank's longest step */
        json_t *cr = cause ? json_object_get(cause, "rank") : NULL;
        const char *cl = cause ? json_string_value(json_object_get(cause, "link")) : NULL;
        if (cl && json_is_integer(cr) && json_integer_value(cr) == r->rank) snprintf(link, sizeof link, "%s", cl);
        else rules_link_step(r, rules_worst_step(r, -1), link, sizeof link);
        rules_add(c, &rule_low_gpu_utilization, util < gpu_util_pct / 2 ? RULES_HIGH : RULES_MEDIUM, r->rank, 0,
                  ev, link, advice, after->snippet,
                  "Low GPU utilization: %s run %.1f %% of the step%s%s", by_compute ? "compute kernels" : "kernels",
                  util, cause ? "; main cause: " : "", cause ? what : "");
    }
    (void)e;
    return 0;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_gpu_util_pct", "50", "%", 0, 100,
      "low_gpu_utilization (and low_gpu_memory) fire below this GPU utilization %." },
};

const struct rules_def rule_low_gpu_utilization = {
    "low_gpu_utilization",
    "https://pytorch.org/tutorials/recipes/recipes/tuning_guide.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_STEP,
};

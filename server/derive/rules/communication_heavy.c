/* communication_heavy — collectives take a large share of the step.
 *
 * The step breakdown's "communication" part (NCCL/RCCL kernels, charged
 * before compute, plus host collectives such as gloo:all_reduce where no
 * GPU work covers them) is measured per rank. In a run of several ranks
 * that time mixes two things: moving the data, and waiting inside the
 * collective for a rank that arrives late. The rank that arrives last
 * waits least, so its communication time is the best estimate of what the
 * transfer itself costs; the rule judges the run by that rank and reports
 * once for the run (the straggler rule covers the waiting). A run of one
 * rank is judged by its own figure and the finding names that rank.
 */
#include <stdio.h>
#include <string.h>

#include "derive/rules.h"
#include "store/stats_read.h"

/* The advice halves the bytes on the wire (bf16 compression) or the number
 * of all-reduces per sample (accumulating two micro-batches): either halves
 * the communication time, which is the saving claimed. */
#define COMM_SAVED_FRACTION 0.5

static const char advice_torch[] =
    "Send fewer bytes per sample: accumulate gradients over several micro-batches and all-reduce once "
    "(DDP no_sync() on the intermediate ones), or use a larger batch per GPU; compress gradients with a "
    "DDP communication hook (bf16_compress_hook halves the bytes, PowerSGD sends far fewer); and tune "
    "DDP bucket_cap_mb so buckets are large enough to reach full link bandwidth. For FSDP, prefer "
    "SHARD_GRAD_OP or hybrid sharding when all-gathers dominate.";
static const char snippet_torch[] =
    "# all-reduce once every k micro-batches\n"
    "for i, (x, y) in enumerate(loader):\n"
    "    sync = (i + 1) % k == 0\n"
    "    with (contextlib.nullcontext() if sync else model.no_sync()):\n"
    "        (loss_fn(model(x), y) / k).backward()\n"
    "    if sync:\n"
    "        opt.step(); opt.zero_grad(set_to_none=True)\n"
    "# or halve the bytes on the wire\n"
    "from torch.distributed.algorithms.ddp_comm_hooks import default_hooks\n"
    "model.register_comm_hook(None, default_hooks.bf16_compress_hook)";

static int run(struct rules_ctx *c, struct err *e)
{
    const double comm_pct = rules_param(c, "rule_comm_pct");
    const struct rules_rank *best = NULL; /* least time in collectives: waits least */
    const struct rules_rank *most = NULL;
    size_t nr = 0;
    int world = 0;
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        if (!r->nsteps || r->avg_dur <= 0) continue;
        /* a group of one moves nothing between ranks: its "collectives"
         * are local copies and synchronisation */
        if (r->world_size == 1) continue;
        if (r->world_size > world) world = r->world_size;
        nr++;
        if (!best || r->avg_part[RULES_COMM] < best->avg_part[RULES_COMM]) best = r;
        if (!most || r->avg_part[RULES_COMM] > most->avg_part[RULES_COMM]) most = r;
    }
    if (!best) return 0;
    double comm = best->avg_part[RULES_COMM], step = (double)best->avg_dur, share = comm / step * 100.0;
    if (share <= comm_pct) return 0;

    char a[32], b[32], d[32], line[512], link[160], top[256];
    json_t *ranks = json_array();
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        if (!r->nsteps || r->avg_dur <= 0 || r->world_size == 1) continue;
        json_array_append_new(ranks, json_pack("{s:i,s:f,s:f,s:f}", "rank", r->rank, "comm_us",
                                               r->avg_part[RULES_COMM] / 1000.0, "step_us",
                                               (double)r->avg_dur / 1000.0, "share_pct",
                                               r->avg_part[RULES_COMM] / (double)r->avg_dur * 100.0));
    }
    json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:i,s:i,s:i,s:o}", "lines", "comm_us", comm / 1000.0, "step_us",
                           step / 1000.0, "share_pct", share, "steps", (int)best->nsteps, "rank", best->rank,
                           "world_size", world, "ranks", ranks);
    json_t *lines = json_object_get(ev, "lines");
    if (nr > 1)
        snprintf(line, sizeof line,
                 "Communication: %s of a %s step (%.0f %%) on rank %d, the rank that waits least in collectives "
                 "(average of %zu steps)",
                 rules_fmt_ns(comm, a, sizeof a), rules_fmt_ns(step, b, sizeof b), share, best->rank, best->nsteps);
    else
        snprintf(line, sizeof line, "Communication: %s of a %s step (%.0f %%), average of %zu steps",
                 rules_fmt_ns(comm, a, sizeof a), rules_fmt_ns(step, b, sizeof b), share, best->nsteps);
    json_array_append_new(lines, json_string(line));
    if (nr > 1 && most->avg_part[RULES_COMM] - comm > 1e6) {
        snprintf(line, sizeof line,
                 "Other ranks spend up to %s per step in collectives (rank %d); the difference is waiting for a "
                 "slower rank, not transfer",
                 rules_fmt_ns(most->avg_part[RULES_COMM], a, sizeof a), most->rank);
        json_array_append_new(lines, json_string(line));
    }
    if (world > (int)nr) {
        snprintf(line, sizeof line,
                 "This run holds %zu of the job's %d ranks: the time includes waiting for ranks not loaded here",
                 nr, world);
        json_array_append_new(lines, json_string(line));
    }
    long long calls;
    double total;
    int rc = stats_read_top_comm_kernel(c->db, best->rank, top, sizeof top, &calls, &total, e);
    if (rc < 0) {
        json_decref(ev);
        return rc;
    }
    if (top[0]) {
        snprintf(line, sizeof line, "Largest collective kernel: %.120s, %lld calls, %s in all", top, calls,
                 rules_fmt_ns(total, d, sizeof d));
        json_array_append_new(lines, json_string(line));
    }
    const struct rules_step *w = rules_worst_step(best, RULES_COMM);
    snprintf(line, sizeof line, "Worst step: %s, %s in collectives out of %s", w->name,
             rules_fmt_ns((double)w->part[RULES_COMM], a, sizeof a), rules_fmt_ns((double)w->dur, b, sizeof b));
    json_array_append_new(lines, json_string(line));
    rules_add(c, &rule_communication_heavy, share >= 3 * comm_pct ? RULES_HIGH : RULES_MEDIUM,
              nr > 1 ? -1 : best->rank, comm * COMM_SAVED_FRACTION, ev, rules_link_step(best, w, link, sizeof link),
              advice_torch, snippet_torch, "Communication-heavy: collectives take %.0f %% of the step", share);
    return 0;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_comm_pct", "10", "%", 0, 100,
      "communication_heavy: communication above this % of the step." },
};

const struct rules_def rule_communication_heavy = {
    "communication_heavy",
    "https://pytorch.org/docs/stable/ddp_comm_hooks.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_COMM,
};

/* use_ddp_not_dp — torch.nn.DataParallel drives several GPUs from one
 * process: each step it scatters the batch, replicates the module onto
 * every device, runs the replicas in Python threads that share one GIL and
 * gathers the outputs (and the loss, and the optimizer step) on the first
 * device. DistributedDataParallel runs one process per GPU, replicates
 * once, and all-reduces gradients during backward.
 *
 * Fires on a rank whose trace has DataParallel.forward spans (the exact
 * name: DistributedDataParallel.forward is the other wrapper) and kernels
 * on more than one device. The saving claimed is a floor: the extra kernel
 * time the first device carries beyond the mean of the devices per step,
 * which DDP spreads evenly (the GIL and replication costs come on top).
 */
#include <stdio.h>
#include <string.h>

#include "derive/rules.h"

static const char advice_torch[] =
    "Replace torch.nn.DataParallel with DistributedDataParallel, one process per GPU (torchrun "
    "--nproc_per_node=<GPUs>). DataParallel re-replicates the model onto every GPU each step, runs the "
    "replicas in threads that contend for the GIL and gathers outputs, loss and gradients on the first "
    "GPU, which becomes the bottleneck; DDP replicates once, keeps every GPU equally loaded and overlaps "
    "the gradient all-reduce (NCCL) with backward. PyTorch recommends DDP even on a single machine.";
static const char snippet_torch[] =
    "# torchrun --nproc_per_node=NUM_GPUS train.py\n"
    "dist.init_process_group(\"nccl\")\n"
    "local_rank = int(os.environ[\"LOCAL_RANK\"])\n"
    "torch.cuda.set_device(local_rank)\n"
    "model = DDP(model.cuda(local_rank), device_ids=[local_rank])\n"
    "sampler = DistributedSampler(dataset)   # each rank reads its own shard\n"
    "loader = DataLoader(dataset, batch_size=per_gpu_batch, sampler=sampler)";

/* DataParallel.forward spans of rank: count and total time. */
static void dp_spans(sqlite3 *db, int rank, long long *n, double *ns)
{
    sqlite3_stmt *st;
    *n = 0;
    *ns = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*), sum(sl.dur) FROM slice sl"
                           " WHERE sl.id BETWEEN (SELECT min(first_slice) FROM track WHERE rank = ?1 AND nslices > 0)"
                           " AND (SELECT max(last_slice) FROM track WHERE rank = ?1 AND nslices > 0)"
                           " AND sl.kind IN (1, 2) AND sl.name IN (SELECT id FROM str WHERE s = 'DataParallel.forward')",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int(st, 1, rank);
    if (sqlite3_step(st) == SQLITE_ROW) {
        *n = sqlite3_column_int64(st, 0);
        *ns = sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
}

static int dp_seen(sqlite3 *db)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (sqlite3_prepare_v2(db, "SELECT EXISTS(SELECT 1 FROM str WHERE s = 'DataParallel.forward')", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    yes = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return yes;
}

static int run(struct rules_ctx *c, struct err *e)
{
    if (!dp_seen(c->db)) return 0;
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        size_t ndev = 0;
        double sum = 0;
        const struct rules_gpu *first = NULL;
        for (size_t k = 0; k < r->ngpus; k++) {
            if (r->gpus[k].kernel_ns <= 0) continue;
            ndev++;
            sum += (double)r->gpus[k].kernel_ns;
            if (!first || r->gpus[k].device < first->device) first = &r->gpus[k];
        }
        if (ndev < 2) continue;
        long long calls;
        double dp_ns;
        dp_spans(c->db, r->rank, &calls, &dp_ns);
        if (!calls) continue;
        double steps = r->nsteps ? (double)r->nsteps : 1.0;
        double mean = sum / (double)ndev / steps, lead = (double)first->kernel_ns / steps;
        double saving = lead > mean ? lead - mean : 0;
        char a[32], b[32], line[512], link[160], devs[160] = "";
        json_t *gpus = json_array();
        for (size_t k = 0; k < r->ngpus; k++) {
            const struct rules_gpu *g = &r->gpus[k];
            if (g->kernel_ns <= 0) continue;
            json_array_append_new(gpus, json_pack("{s:i,s:f,s:f}", "device", g->device, "kernel_us_per_step",
                                                  (double)g->kernel_ns / steps / 1000.0, "util_pct", g->util * 100.0));
            size_t m = strlen(devs);
            snprintf(devs + m, sizeof devs - m, "%scuda:%d %s", m ? ", " : "", g->device,
                     rules_fmt_ns((double)g->kernel_ns / steps, a, sizeof a));
        }
        json_t *ev = json_pack("{s:[],s:I,s:f,s:i,s:f,s:f,s:o}", "lines", "dp_forward_calls", (json_int_t)calls,
                               "dp_forward_us", dp_ns / 1000.0, "devices", (int)ndev, "first_device_kernel_us",
                               lead / 1000.0, "mean_device_kernel_us", mean / 1000.0, "gpus", gpus);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "DataParallel.forward: %lld calls, %s each on average, driving %zu GPUs from one "
                 "process",
                 calls, rules_fmt_ns(dp_ns / (double)calls, a, sizeof a), ndev);
        json_array_append_new(lines, json_string(line));
        snprintf(line, sizeof line, "Kernel time per step: %s", devs);
        json_array_append_new(lines, json_string(line));
        if (saving > 0) {
            snprintf(line, sizeof line, "cuda:%d carries %s per step more than the mean device (%s)", first->device,
                     rules_fmt_ns(saving, a, sizeof a), rules_fmt_ns(mean, b, sizeof b));
            json_array_append_new(lines, json_string(line));
        }
        const struct rules_step *w = rules_worst_step(r, -1);
        if (w) rules_link_step(r, w, link, sizeof link);
        else snprintf(link, sizeof link, "view=kernels&rank=%d", r->rank);
        rules_add(c, &rule_use_ddp_not_dp, RULES_HIGH, r->rank, saving, ev, link, advice_torch, snippet_torch,
                  "DataParallel on %zu GPUs: use DistributedDataParallel", ndev);
    }
    (void)e;
    return 0;
}

const struct rules_def rule_use_ddp_not_dp = {
    "use_ddp_not_dp",
    "https://pytorch.org/docs/stable/notes/cuda.html#cuda-nn-ddp-instead",
    run,
    NULL,
    0,
};

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
#include "store/facts.h"
#include "store/scan.h"

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

static const char *const dp_name[] = { "DataParallel.forward" };

/* DataParallel.forward spans of rank (operators and regions): count and
 * total time. Returns 0 or < 0 (e filled). */
static int dp_spans(sqlite3 *db, int rank, long long *n, double *ns, struct err *e)
{
    struct scan_slices *c = NULL;
    struct scan_slice sl;
    struct facts_names *nm = NULL;
    int64_t sum = 0;
    uint32_t dp;
    int rc;
    *n = 0;
    *ns = 0;
    if ((rc = facts_names_open(db, FACTS_EQUAL, dp_name, 1, &nm, e))) return rc;
    if ((rc = facts_names_next(nm, &dp, NULL, e)) != 1) goto out;
    if ((rc = scan_slices_open(db, rank, SCAN_TRACKS_ALL,
                               SCAN_KIND(TB_K_CPU_OP) | SCAN_KIND(TB_K_USER_ANNOTATION), &c, e)))
        goto out;
    while ((rc = scan_slices_next(c, &sl, e)) == 1)
        if (sl.name == dp) {
            ++*n;
            sum += sl.dur;
        }
    *ns = (double)sum;
out:
    facts_names_close(nm);
    scan_slices_close(c);
    return rc < 0 ? rc : 0;
}

static int run(struct rules_ctx *c, struct err *e)
{
    int rc = facts_names_exist(c->db, FACTS_EQUAL, dp_name, 1, e);
    if (rc <= 0) return rc;
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
        if ((rc = dp_spans(c->db, r->rank, &calls, &dp_ns, e)) < 0) return rc;
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
    return 0;
}

const struct rules_def rule_use_ddp_not_dp = {
    "use_ddp_not_dp",
    "https://pytorch.org/docs/stable/notes/cuda.html#cuda-nn-ddp-instead",
    run,
    NULL,
    0,
    RULES_PER_RANK,
    RULES_SIDE_STEP,
};

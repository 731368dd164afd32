/* shared_gpu — several ranks of one job run on one physical GPU: each
 * process gets a time slice of the GPU and a share of its memory, so the
 * job runs slower than with one rank (a launcher started more processes
 * than there are GPUs, or LOCAL_RANK was not used to pick the device).
 *
 * Two ranks are on one GPU when they report the same device (id, name,
 * memory size) and run on one host. Traces do not name their host; ranks
 * launched together on one host (torchrun, mpirun) get neighbouring process
 * ids, while those of other hosts are unrelated, so the host is inferred
 * from process ids within HOST_PID_SPAN of each other. A run-level finding
 * (rank NULL): it concerns the job's launch, not one rank's code. Saving: 0
 * (what the GPU gains back depends on how the ranks overlapped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/rules.h"

/* Process ids of ranks on one host lie within this of each other. */
#define HOST_PID_SPAN 4096

static const char advice_torch[] =
    "Run one process per GPU: start as many ranks per node as it has GPUs (torchrun --nproc-per-node equal "
    "to the GPU count) and have each pick its own device from LOCAL_RANK before creating any CUDA tensor. "
    "On a machine with a single GPU, train in one process (with a larger batch) rather than several.";
static const char snippet_torch[] =
    "local_rank = int(os.environ[\"LOCAL_RANK\"])\n"
    "torch.cuda.set_device(local_rank)\n"
    "dist.init_process_group(\"nccl\")\n"
    "model = DDP(model.to(local_rank), device_ids=[local_rank])";
static const char advice_jax[] =
    "Run one process per GPU (or one process driving all local GPUs): give each process its own device "
    "through CUDA_VISIBLE_DEVICES or jax.distributed.initialize(local_device_ids=...).";
static const char advice_cuda[] =
    "Run one process per GPU: select a distinct device in each rank (cudaSetDevice(local_rank) from the "
    "launcher's local rank, e.g. OMPI_COMM_WORLD_LOCAL_RANK or SLURM_LOCALID) or restrict each process "
    "with CUDA_VISIBLE_DEVICES; if processes must share a GPU, run them under MPS.";
static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, NULL },
};

static int same_gpu(const struct rules_rank *a, const struct rules_rank *b)
{
    const struct rules_gpu *x = a->gpu, *y = b->gpu;
    if (!x || !y || a->pid < 0 || b->pid < 0 || a->pid == b->pid) return 0;
    if (labs(a->pid - b->pid) > HOST_PID_SPAN) return 0;
    return x->device == y->device && x->memory_bytes == y->memory_bytes && strcmp(x->name, y->name) == 0;
}

static int run(struct rules_ctx *ctx, struct err *e)
{
    (void)e;
    if (ctx->nranks < 2) return 0;
    char *done = xcalloc(ctx->nranks, 1);
    for (size_t i = 0; i < ctx->nranks; i++) {
        if (done[i]) continue;
        const struct rules_rank *r = &ctx->ranks[i];
        size_t n = 1;
        char ranks[256], pids[256], a[32];
        int len = snprintf(ranks, sizeof ranks, "%d", r->rank);
        long lo = r->pid, hi = r->pid;
        json_t *list = json_pack("[i]", r->rank);
        for (size_t j = i + 1; j < ctx->nranks; j++) {
            const struct rules_rank *o = &ctx->ranks[j];
            if (done[j] || !same_gpu(r, o)) continue;
            done[j] = 1;
            n++;
            json_array_append_new(list, json_integer(o->rank));
            if (len < (int)sizeof ranks) len += snprintf(ranks + len, sizeof ranks - (size_t)len, ", %d", o->rank);
            if (o->pid < lo) lo = o->pid;
            if (o->pid > hi) hi = o->pid;
        }
        if (n < 2) {
            json_decref(list);
            continue;
        }
        const struct rules_gpu *g = r->gpu;
        char line[512];
        json_t *ev = json_pack("{s:[],s:o,s:i,s:s,s:i}", "lines", "ranks", list, "device", g->device, "gpu", g->name,
                               "processes", (int)n);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "Ranks %s all run on GPU %d (%s, %s)", ranks, g->device,
                 g->name[0] ? g->name : "?", rules_fmt_bytes((double)g->memory_bytes, a, sizeof a));
        json_array_append_new(lines, json_string(line));
        snprintf(pids, sizeof pids,
                 "Their processes (ids %ld to %ld) were started together on one host, so they share that GPU's time "
                 "and memory",
                 lo, hi);
        json_array_append_new(lines, json_string(pids));
        snprintf(line, sizeof line, "view=ranks");
        rules_add(ctx, &rule_shared_gpu, RULES_HIGH, -1, 0, ev, line, advice[r->framework].text,
                  advice[r->framework].snippet, "Shared GPU: %zu ranks run on one GPU (GPU %d)", n, g->device);
    }
    free(done);
    return 0;
}

const struct rules_def rule_shared_gpu = {
    "shared_gpu",
    "https://pytorch.org/docs/stable/elastic/run.html",
    run,
    NULL,
    0,
    RULES_PER_RANK,
    RULES_SIDE_STEP,
};

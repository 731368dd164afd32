/* dataloader_bound — the step waits on its input pipeline: DataLoader time
 * is on the host's critical path (the breakdown charges it only where no
 * GPU work runs), so all of it is what better loading could hide. */
#include <stdio.h>
#include <string.h>

#include "derive/rules.h"
#include "store/facts.h"

/* Which iterator the trace shows tells whether workers are already used.
 * Names are interned only when an event uses them, so the small string
 * table answers without a scan of the slices (for the run, not one rank:
 * ranks of one job run the same loader). */
static const char *const single_process_name[] = { "%\\_SingleProcessDataLoaderIter%" };

static const char advice_torch[] =
    "Load batches in background workers so the next batch is ready when the step starts: raise "
    "DataLoader num_workers (try 4-8 per GPU, measure as it grows), pin host memory so copies can be "
    "asynchronous, keep workers alive across epochs and prefetch a few batches per worker. If the "
    "Dataset itself is slow (decoding, augmentation), move that work to the GPU or preprocess offline.";
static const char snippet_torch[] =
    "loader = torch.utils.data.DataLoader(\n"
    "    dataset, batch_size=bs, shuffle=True,\n"
    "    num_workers=8, pin_memory=True,\n"
    "    persistent_workers=True, prefetch_factor=4)\n"
    "for x, y in loader:\n"
    "    x = x.cuda(non_blocking=True); y = y.cuda(non_blocking=True)";
static const char advice_jax[] =
    "Feed the device from a pipeline that prefetches in the background (tf.data with "
    ".prefetch(tf.data.AUTOTUNE) and parallel map, or grain with worker processes) so the next batch is "
    "ready when the step starts.";
/* A CUDA rank never gets here (the DataLoader names make a rank PyTorch:
 * framework_of); the text is for a loader named like PyTorch's anyway. */
static const char advice_cuda[] =
    "The iteration waits for its input: read and prepare the next batch on the host while the GPU works "
    "on the current one. Double-buffer it in pinned host memory (cudaMallocHost) so each batch's "
    "cudaMemcpyAsync on a copy stream overlaps the previous batch's kernels, and order the streams with "
    "events (cudaEventRecord/cudaStreamWaitEvent) instead of synchronizing the device; move slow decoding "
    "to worker threads or to the GPU.";
static const char snippet_cuda[] =
    "// h[2]: cudaMallocHost buffers, d[2]: device buffers; load_batch(h[0], 0) before the loop\n"
    "for (int i = 0; i < n; i++) {\n"
    "    int b = i % 2;\n"
    "    cudaStreamWaitEvent(copy, used[b], 0);  // step i-2 is done with d[b]\n"
    "    cudaMemcpyAsync(d[b], h[b], bytes, cudaMemcpyHostToDevice, copy);\n"
    "    cudaEventRecord(copied[b], copy);\n"
    "    cudaStreamWaitEvent(compute, copied[b], 0);\n"
    "    step<<<grid, block, 0, compute>>>(d[b]);\n"
    "    cudaEventRecord(used[b], compute);\n"
    "    if (i + 1 < n) {\n"
    "        cudaEventSynchronize(copied[1 - b]);  // h[1-b] is free again\n"
    "        load_batch(h[1 - b], i + 1);          // host I/O overlaps the GPU\n"
    "    }\n"
    "}";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, snippet_cuda },
};

static int run(struct rules_ctx *c, struct err *e)
{
    const double dataloader_pct = rules_param(c, "rule_dataloader_pct");
    const double dataloader_high_pct = rules_param(c, "rule_dataloader_high_pct");
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        if (!r->nsteps || r->avg_dur <= 0) continue;
        double dl = r->avg_part[RULES_DATALOADER], share = dl / (double)r->avg_dur * 100.0;
        if (share <= dataloader_pct) continue;
        const struct rules_step *w = rules_worst_step(r, RULES_DATALOADER);
        int single = facts_names_exist(c->db, FACTS_LIKE, single_process_name, 1, e);
        if (single < 0) return single;
        char a[32], b[32], d[32], link[160], line[256];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:i,s:b}", "lines", "dataloader_us", dl / 1000.0, "step_us",
                               (double)r->avg_dur / 1000.0, "share_pct", share, "steps", (int)r->nsteps,
                               "single_process", single);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "DataLoader: %s of a %s step (%.0f %%), average of %zu steps",
                 rules_fmt_ns(dl, a, sizeof a), rules_fmt_ns((double)r->avg_dur, b, sizeof b), share, r->nsteps);
        json_array_append_new(lines, json_string(line));
        snprintf(line, sizeof line, "Worst step: %s, %s waiting for data out of %s", w->name,
                 rules_fmt_ns((double)w->part[RULES_DATALOADER], a, sizeof a), rules_fmt_ns((double)w->dur, d, sizeof d));
        json_array_append_new(lines, json_string(line));
        if (single)
            json_array_append_new(lines, json_string("The loader runs in the training process "
                                                     "(_SingleProcessDataLoaderIter: num_workers=0)"));
        rules_add(c, &rule_dataloader_bound, share >= dataloader_high_pct ? RULES_HIGH : RULES_MEDIUM,
                  r->rank, dl, ev, rules_link_step(r, w, link, sizeof link),
                  advice[r->framework].text, advice[r->framework].snippet, "Input-bound: the step waits %.0f %% of its time for the next batch",
                  share);
    }
    (void)e;
    return 0;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_dataloader_pct", "5", "%", 0, 100,
      "dataloader_bound fires when the DataLoader takes more than this % of the average step ..." },
    { "rule_dataloader_high_pct", "20", "%", 0, 100,
      "... and is high severity from this %." },
};

const struct rules_def rule_dataloader_bound = {
    "dataloader_bound",
    "https://pytorch.org/docs/stable/data.html#single-and-multi-process-data-loading",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_HOST,
};

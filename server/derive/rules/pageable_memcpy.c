/* pageable_memcpy — host<->device copies whose host side is pageable
 * memory ("Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device ->
 * Pageable)"). The DMA engine reads and writes only pinned memory, so the
 * driver stages such a copy through a pinned bounce buffer with the CPU:
 * the host thread is held for the staging copy (an HtoD call returns only
 * once its data is staged, a DtoH call only once the copy is done), the
 * transfer runs at a fraction of the link's bandwidth, and it cannot
 * overlap with compute. With pinned memory and non_blocking=True the call
 * only queues the DMA.
 *
 * The issuing call may also wait for earlier GPU work before the DMA can
 * start; that wait is excessive_host_sync's business and is left out: for
 * DtoH all the call's time before the DMA starts (the staging copy comes
 * after the DMA; the wait may be for another stream, under the legacy
 * default stream's rules), for HtoD the time until the stream's previous
 * op ends (before the DMA the CPU stages the data, which counts).
 *
 * Cost of one copy: the union of the host's time held in the call (after
 * that wait) and the DMA, less what queueing any GPU work costs the host
 * (the rank's mean kernel-launch call): a pinned copy pays that too, and
 * for copies of a few bytes it is all there is. Saving: the host's held
 * time less that launch cost (with pinned memory and non_blocking=True the
 * call only queues the DMA, which then overlaps with the host's and the
 * GPU's other work); the DMA time when the issuing call is not in the
 * trace. Bytes come from the copy's args ("bytes").
 * Memory: one pass over the memcpy slices of the GPU tracks, a few
 * aggregates kept. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "derive/rules.h"
#include "store/facts.h"
#include "store/model.h"
#include "store/scan.h"
#include "store/slice_read.h"

#define MAX_DEPTH 256

enum dir { D_HTOD, D_DTOH, D_N };
static const char *const dir_names[D_N] = { "host to device", "device to host" };

struct agg {
    int64_t copies, bytes, gpu_ns, host_ns, cost_ns, saving_ns;
};

/* The outermost operator above slice id (what the user called: aten::to,
 * aten::copy_ ...) into out; "" when none. Returns 0 or < 0 (e filled). */
static int outer_op(struct slice_read *q, int64_t id, char *out, size_t n, struct err *e)
{
    struct slice_read_up up;
    int rc = 0;
    out[0] = '\0';
    for (int d = 0; id > 0 && d < MAX_DEPTH; d++) {
        if ((rc = slice_read_up(q, id, &up, e)) != 1) break;
        id = up.parent;
        if (up.kind == TB_K_CPU_OP && up.name && !kclass_profiler_step(up.name)) snprintf(out, n, "%s", up.name);
    }
    return rc < 0 ? rc : 0;
}

/* The kernel-launch calls of CUDA and HIP, by name. */
static const char *const launch_names[] = { "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
                                            "cuLaunchKernelEx", "hipLaunchKernel",     "hipExtModuleLaunchKernel" };
#define NLAUNCH_NAMES (sizeof launch_names / sizeof launch_names[0])
/* The calls each thread contributes at most. */
#define LAUNCH_SAMPLE 10000

/* OUT *mean: the mean duration of the rank's kernel-launch calls (up to
 * the first LAUNCH_SAMPLE of each CPU thread), what queueing GPU work costs
 * the host; 0 when there are none. Returns 0 or < 0 (e filled). */
static int launch_ns(sqlite3 *db, int rank, double *mean, struct err *e)
{
    struct facts_names *nm = NULL;
    struct scan_slices *c = NULL;
    struct scan_slice sl;
    uint32_t ids[NLAUNCH_NAMES], id;
    size_t nids = 0;
    int64_t sum = 0, n = 0;
    int rc;
    *mean = 0;
    if ((rc = facts_names_open(db, FACTS_EQUAL, launch_names, NLAUNCH_NAMES, &nm, e))) return rc;
    while ((rc = facts_names_next(nm, &id, NULL, e)) == 1 && nids < NLAUNCH_NAMES) ids[nids++] = id;
    if (rc < 0 || !nids || (rc = scan_slices_open(db, rank, SCAN_TRACKS_HOST, SCAN_LAUNCHES, &c, e))) goto out;
    while ((rc = scan_slices_track(c, NULL, e)) == 1) {
        int64_t in_track = 0;
        while (in_track < LAUNCH_SAMPLE && (rc = scan_slices_step(c, &sl, e)) == 1)
            for (size_t i = 0; i < nids; i++)
                if (sl.name == ids[i]) {
                    in_track++;
                    sum += sl.dur;
                    break;
                }
        if (rc < 0) break;
        n += in_track;
    }
    if (rc >= 0 && n > 0) *mean = (double)sum / (double)n;
out:
    facts_names_close(nm);
    scan_slices_close(c);
    return rc < 0 ? rc : 0;
}

static const char advice_torch[] =
    "Copy from and to pinned (page-locked) host memory: the GPU's copy engines can only read pinned memory, "
    "so a pageable tensor is first copied by the CPU into a staging buffer, which holds the host thread, "
    "halves the bandwidth and keeps the copy from overlapping with compute. Let the DataLoader pin batches "
    "(pin_memory=True), pin long-lived host buffers once with tensor.pin_memory(), and pass "
    "non_blocking=True so the copy is only queued.";
static const char snippet_torch[] =
    "loader = DataLoader(dataset, batch_size=bs, num_workers=4, pin_memory=True)\n"
    "for x, y in loader:\n"
    "    x = x.to(\"cuda\", non_blocking=True)\n"
    "    y = y.to(\"cuda\", non_blocking=True)\n"
    "# results to the host: into a pinned buffer, wait only when used\n"
    "host = torch.empty(out.shape, dtype=out.dtype, pin_memory=True)\n"
    "host.copy_(out, non_blocking=True); done = torch.cuda.Event(); done.record()";
static const char advice_jax[] =
    "Feed the device from an iterator that transfers batches ahead of use (e.g. "
    "flax.jax_utils.prefetch_to_device, or jax.device_put on the next batch while the current step runs) "
    "and fetch results every N steps rather than every step.";
static const char advice_cuda[] =
    "Copy from and to pinned (page-locked) host memory: the GPU's copy engines can only read pinned memory, "
    "so a copy from malloc'ed or stack memory is first staged by the CPU through a driver buffer, which "
    "holds the host thread, lowers the bandwidth and keeps the copy from overlapping kernels. Allocate the "
    "host buffers with cudaMallocHost (or cudaHostAlloc), or pin existing ones once with cudaHostRegister, "
    "then copy with cudaMemcpyAsync on a non-default stream and make the kernels wait on an event "
    "(cudaStreamWaitEvent) rather than the host.";
static const char snippet_cuda[] =
    "float *h;\n"
    "cudaMallocHost((void **)&h, bytes);  // pinned, instead of malloc\n"
    "// or pin an existing buffer once: cudaHostRegister(buf, bytes, cudaHostRegisterDefault);\n"
    "cudaStream_t copy;\n"
    "cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking);\n"
    "cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, copy);  // DMA: returns at once\n"
    "cudaEventRecord(copied, copy);\n"
    "cudaStreamWaitEvent(compute, copied, 0);  // the kernels wait, not the host";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, snippet_cuda },
};

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double pageable_mib = rules_param(ctx, "rule_pageable_mib");
    const double pageable_pct = rules_param(ctx, "rule_pageable_pct");
    struct slice_read *up = NULL;
    struct slice_read_copies *cp = NULL;
    struct slice_read_copy row;
    struct scan_launch *host = NULL;
    struct scan_slice call;
    int64_t *step_cost = NULL, first;
    int rc = 0;
    if ((rc = slice_read_open(ctx->db, &up, e))) goto out;
    for (size_t ri = 0; ri < ctx->nranks; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        if (!r->nsteps || r->avg_dur <= 0) continue;
        struct agg by[D_N];
        double launch = -1; /* -1: not read yet */
        int64_t top_ns = 0, host_id_top = 0;
        step_cost = xcalloc(r->nsteps, sizeof *step_cost);
        memset(by, 0, sizeof by);
        scan_launch_close(host);
        if ((rc = scan_launch_open(ctx->db, r->rank, &host, e))) goto out;
        slice_read_copies_close(cp);
        if ((rc = slice_read_copies_open(ctx->db, r->rank, "%Pageable%", &cp, e))) goto out;
        while ((rc = slice_read_copies_track(cp, &first, e)) == 1) {
            while ((rc = slice_read_copies_next(cp, &row, e)) == 1) {
                int64_t ts = row.ts, dur = row.dur;
                int s = rules_step_at(r, ts);
                const char *name = row.name;
                if (s < 0 || !name) continue;
                enum dir d;
                if (strstr(name, "HtoD") || strstr(name, "Pageable -> Device")) d = D_HTOD;
                else if (strstr(name, "DtoH") || strstr(name, "Device -> Pageable")) d = D_DTOH;
                else continue;
                int64_t held = -1, hid = 0, cost = dur;
                if ((rc = scan_launch_of(host, row.corr, &call, e)) < 0) goto out;
                if (rc == 1) {
                    if (launch < 0 && (rc = launch_ns(ctx->db, r->rank, &launch, e)) < 0) goto out;
                    hid = call.id;
                    int64_t hts = call.ts, hend = hts + call.dur;
                    /* the wait for the stream's previous op, inside the call */
                    int64_t wait = 0;
                    if (d == D_DTOH && ts > hts) wait = ts - hts;
                    int64_t pend;
                    if ((rc = slice_read_prev_op_end(up, row.id, first, &pend, e)) < 0) goto out;
                    if (rc == 1) {
                        if (pend > ts) pend = ts;
                        if (pend - hts > wait) wait = pend - hts;
                    }
                    /* cost: the union of the host's held time and the DMA */
                    int64_t a0 = hts + wait, b1 = ts + dur;
                    held = hend > a0 ? hend - a0 : 0;
                    int64_t lo = a0 > ts ? a0 : ts, hi = hend < b1 ? hend : b1;
                    cost = held + dur - (hi > lo ? hi - lo : 0) - (int64_t)launch;
                    held -= (int64_t)launch;
                    if (held < 0) held = 0;
                    if (cost < dur) cost = dur;
                }
                struct agg *a = &by[d];
                a->copies++;
                a->bytes += row.bytes;
                a->gpu_ns += dur;
                a->host_ns += held > 0 ? held : 0;
                a->cost_ns += cost;
                a->saving_ns += held >= 0 ? held : dur;
                step_cost[s] += cost;
                if (cost > top_ns && hid) top_ns = cost, host_id_top = hid;
            }
            if (rc < 0) goto out;
        }
        if (rc < 0) goto out;
        int64_t copies = by[D_HTOD].copies + by[D_DTOH].copies;
        if (!copies) {
            free(step_cost);
            step_cost = NULL;
            continue;
        }
        double steps = (double)r->nsteps;
        double bytes_step = (double)(by[D_HTOD].bytes + by[D_DTOH].bytes) / steps;
        double cost_step = (double)(by[D_HTOD].cost_ns + by[D_DTOH].cost_ns) / steps;
        double saving = (double)(by[D_HTOD].saving_ns + by[D_DTOH].saving_ns) / steps;
        double pct = cost_step / (double)r->avg_dur * 100.0;
        if (bytes_step < pageable_mib * 1024.0 * 1024.0 && pct < pageable_pct) {
            free(step_cost);
            step_cost = NULL;
            continue;
        }
        size_t ws = 0;
        for (size_t i = 1; i < r->nsteps; i++)
            if (step_cost[i] > step_cost[ws]) ws = i;
        free(step_cost);
        step_cost = NULL;
        char op[128];
        if ((rc = outer_op(up, host_id_top, op, sizeof op, e)) < 0) goto out;

        char a[32], b[32], c[32], line[384], link[200];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:f,s:f,s:i}", "lines", "bytes_per_step", bytes_step, "time_us",
                               cost_step / 1000.0, "time_pct", pct, "step_us", (double)r->avg_dur / 1000.0,
                               "copies_per_step", (double)copies / steps, "steps", (int)r->nsteps);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "%s per step copied through pageable host memory, %.1f copies per step",
                 rules_fmt_bytes(bytes_step, a, sizeof a), (double)copies / steps);
        json_array_append_new(lines, json_string(line));
        snprintf(line, sizeof line, "They take %s per step (%.1f %% of a %s step)", rules_fmt_ns(cost_step, a, sizeof a),
                 pct, rules_fmt_ns((double)r->avg_dur, b, sizeof b));
        json_array_append_new(lines, json_string(line));
        for (int d = 0; d < D_N; d++) {
            const struct agg *g = &by[d];
            if (!g->copies) continue;
            double gbps = g->gpu_ns > 0 ? (double)g->bytes / (double)g->gpu_ns : 0; /* bytes/ns = GB/s */
            snprintf(line, sizeof line, "%s: %s per step, host held %s beyond queueing the copies, DMA %s (%.1f GB/s)",
                     dir_names[d], rules_fmt_bytes((double)g->bytes / steps, a, sizeof a),
                     rules_fmt_ns((double)g->host_ns / steps, b, sizeof b),
                     rules_fmt_ns((double)g->gpu_ns / steps, c, sizeof c), gbps);
            json_array_append_new(lines, json_string(line));
            json_object_set_new(ev, d == D_HTOD ? "htod" : "dtoh",
                                json_pack("{s:f,s:f,s:f,s:f}", "bytes_per_step", (double)g->bytes / steps,
                                          "host_us", (double)g->host_ns / steps / 1000.0, "gpu_us",
                                          (double)g->gpu_ns / steps / 1000.0, "copies_per_step",
                                          (double)g->copies / steps));
        }
        if (op[0]) {
            snprintf(line, sizeof line, "Largest issued by %s", op);
            json_array_append_new(lines, json_string(line));
            json_object_set_new(ev, "op", json_string(op));
        }
        enum rules_severity sev = pct >= 10 * pageable_pct ? RULES_HIGH
                                  : pct >= pageable_pct   ? RULES_MEDIUM
                                                               : RULES_LOW;
        rules_add(ctx, &rule_pageable_memcpy, sev, r->rank, saving, ev,
                  rules_link_step(r, &r->steps[ws], link, sizeof link),
                  advice[r->framework].text, advice[r->framework].snippet, "Pageable memory copies: %s per step staged by the CPU (%.1f %% of the step)",
                  rules_fmt_bytes(bytes_step, a, sizeof a), pct);
    }
    rc = 0;
out:
    free(step_cost);
    slice_read_copies_close(cp);
    scan_launch_close(host);
    slice_read_close(up);
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_pageable_mib", "1", "MiB/step", 0, 1000000,
      "pageable_memcpy: copies from/to pageable host memory moving at least this many MiB per step ..." },
    { "rule_pageable_pct", "1", "%", 0, 100,
      "... or taking at least this % of the step." },
};

const struct rules_def rule_pageable_memcpy = {
    "pageable_memcpy",
    "https://pytorch.org/docs/stable/notes/cuda.html#use-pinned-memory-buffers",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_STEP,
};

/* kernel_launch_bound — the GPU waits on the host because the host is busy
 * launching: every op costs Python, dispatcher and launch-call time on the
 * host, and when that is longer than the kernel it issues the GPU drains
 * its queue and idles between ops. CUDA graphs, fusion and larger kernels
 * take that cost away; nothing on the GPU side does.
 *
 * How it is read, per rank, on its busiest GPU: the GPU ops of that
 * device's streams are merged in time order (gpuscan.h: one range query per
 * stream, rows streamed) and every idle stretch inside the steps is
 * classified by the op that ends it. That op was either queued before the
 * GPU went idle (its launch call began earlier: a dependency or launch
 * latency, not the host) or launched after (host-wait: the GPU had nothing
 * to run until the host issued it). Host-waits of rule_gap_ms or more are
 * one host activity holding the GPU up: gpu_idle_gaps reports them, so the
 * two rules split the host-wait time between them. In each shorter
 * host-wait the launching thread's slices say what the host did,
 * time-weighted: framework ops, CUDA launch calls and framework regions
 * (record_function ranges such as Optimizer.step or a compiled graph's
 * wrapper) are dispatching; DataLoader calls, collectives and host syncs
 * are other causes; the rest is code the profiler does not record. The wait
 * is launch overhead when the host dispatched in at least DISPATCH_MIN of
 * it and other causes held no more than half of it (the Python between ops
 * is then part of each op's cost); a wait that opens while the host is
 * still blocked in a sync is the sync's (it emptied the GPU's queue:
 * excessive_host_sync), not the launches'.
 *
 * Fires when GPU idle is > rule_launch_idle_pct of the steps, more than
 * half of it is host-wait, and more than half of the host-wait is launch
 * overhead. saving: the launch overhead per step. Memory: one cursor (a
 * stack of open slices) per launching thread and one per GPU stream; rows
 * are streamed.
 */
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/gpuscan.h"
#include "derive/rules.h"
#include "store/model.h"
#include "store/scan.h"

/* "Most of the idle is host-wait", "the host is mostly launching". */
#define MOST 0.5
/* A short wait is per-op launch overhead when the host dispatched ops in
 * at least this share of it (framework ops, launch calls, regions): the
 * Python between those ops is then part of each op's host cost too. A
 * wait spent almost wholly outside any op is other host work. */
#define DISPATCH_MIN 0.25
/* Labels told apart inside one wait. */
#define GAP_LABELS 8
/* High severity: launch overhead holds up more than this share of the step. */
#define HIGH_SHARE 0.5
/* Below this share of the steps (net of the profiler's cost) it is low. */
#define LOW_SHARE 0.05
/* Regions named in the evidence. */
#define TOP_REGIONS 3

/* ====================================================================== */
/* Labels of host activity (gpuscan.h classifies and sweeps)              */
/* ====================================================================== */

static const char *const act_label[GPUSCAN_NACT] = {
    "the DataLoader", "collectives", "host syncs", "CUDA launch calls", "framework ops", "framework regions",
    "Python between ops (nothing the profiler saw)",
};

/* The slice that names a stretch of activity act with these slices open
 * (outermost first), 0 when none: the outermost slice of that activity;
 * for a sync, the outermost op or sync; for launch, op and region time,
 * the outermost of those (the region the host was working through). */
static uint32_t label_of(int act, const struct gpuscan_frame *f, int n)
{
    for (int i = 0; i < n; i++) {
        int a = f[i].act;
        int match = act == GPUSCAN_DATALOADER || act == GPUSCAN_COMM ? a == act
                    : act == GPUSCAN_SYNC                           ? a == GPUSCAN_SYNC || a == GPUSCAN_OP
                                                                    : a == GPUSCAN_LAUNCH || a == GPUSCAN_OP ||
                                                                          a == GPUSCAN_REGION;
        if (match) return f[i].name;
    }
    return 0;
}

/* ====================================================================== */
/* The scan of one rank                                                   */
/* ====================================================================== */

/* Time per region (name id), an open-addressing table. */
struct tally {
    uint32_t *id;
    double *ns;
    size_t cap, n;
};

static void tally_add(struct tally *t, uint32_t id, double ns)
{
    if (!id) return;
    if (t->n * 2 >= t->cap) {
        struct tally g = { xcalloc(t->cap ? t->cap * 2 : 64, sizeof *g.id), NULL, t->cap ? t->cap * 2 : 64, t->n };
        g.ns = xcalloc(g.cap, sizeof *g.ns);
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->id[i]) continue;
            size_t k = t->id[i] * 2654435761u % g.cap;
            while (g.id[k]) k = (k + 1) % g.cap;
            g.id[k] = t->id[i];
            g.ns[k] = t->ns[i];
        }
        free(t->id);
        free(t->ns);
        *t = g;
    }
    size_t k = id * 2654435761u % t->cap;
    while (t->id[k] && t->id[k] != id) k = (k + 1) % t->cap;
    if (!t->id[k]) t->n++;
    t->id[k] = id;
    t->ns[k] += ns;
}

/* A histogram of launch-call durations for their median: one blocking
 * call (a 5 ms pageable copy) must not make the typical launch look slow,
 * as a mean would. Log-linear buckets: 8 per power of two (within 9 %). */
#define LH_SUB 8
#define LH_OCT 48
static void lh_add(int64_t *h, int64_t ns)
{
    uint64_t v = ns > 1 ? (uint64_t)ns : 1;
    int o = 63 - __builtin_clzll(v);
    int sub = o >= 3 ? (int)((v >> (o - 3)) & 7) : (int)((v << (3 - o)) & 7);
    int i = o * LH_SUB + sub;
    h[i < LH_OCT * LH_SUB ? i : LH_OCT * LH_SUB - 1]++;
}

/* The median of the n values in h (the middle of its bucket), 0 if none. */
static double lh_median(const int64_t *h, int64_t n)
{
    int64_t seen = 0;
    for (int i = 0; i < LH_OCT * LH_SUB && n > 0; i++) {
        seen += h[i];
        if (2 * seen >= n) {
            int o = i / LH_SUB, sub = i % LH_SUB;
            double lo = ldexp(1.0 + sub / 8.0, o), hi = ldexp(1.0 + (sub + 1) / 8.0, o);
            return (lo + hi) / 2;
        }
    }
    return 0;
}

struct scan {
    double idle;       /* GPU idle inside the steps, ns */
    double hostwait;   /* ... of it waiting for the next op's launch */
    double act[GPUSCAN_NACT]; /* host activity during the short host-waits */
    double overhead;   /* short host-waits that are launch overhead */
    double *step_busy; /* overhead per step */
    size_t step;       /* the step the stretch starts in */
    int64_t nops;      /* GPU ops starting inside the steps */
    int64_t waited, shorter; /* ops the GPU waited for; those shorter than their launch call */
    double launch_ns;  /* the launch calls of the waited-for ops */
    int64_t launch_hist[LH_OCT * LH_SUB]; /* ... their durations */
    struct tally regions;
    /* the wait being swept */
    double scale, g_act[GPUSCAN_NACT];
    struct {
        uint32_t label;
        double ns;
    } g_lab[GAP_LABELS];
    size_t g_nlab;
};

static int dispatching(int act)
{
    return act == GPUSCAN_LAUNCH || act == GPUSCAN_OP || act == GPUSCAN_REGION;
}

static void on_act(void *arg, int act, const struct gpuscan_frame *stack, int n, int64_t ns)
{
    struct scan *s = arg;
    double v = (double)ns * s->scale;
    s->g_act[act] += v;
    uint32_t label = dispatching(act) ? label_of(act, stack, n) : 0;
    if (!label) return;
    for (size_t i = 0; i < s->g_nlab; i++)
        if (s->g_lab[i].label == label) {
            s->g_lab[i].ns += v;
            return;
        }
    if (s->g_nlab < GAP_LABELS) {
        s->g_lab[s->g_nlab].label = label;
        s->g_lab[s->g_nlab++].ns = v;
    }
}

struct scanner {
    sqlite3 *db;
    const struct rules_rank *r;
    int64_t gap_ns;
    struct scan_launch *launch; /* the launch call of a GPU op, by correlation (the ctx's, borrowed) */
    struct gpuscan_hosts *H;
    size_t si;
    struct err *e;
};



/* One idle stretch [a, b) ended by the op (next_ts, next_dur, corr), or by
 * the end of the window (corr < 0). */
static int on_gap(struct scanner *S, struct scan *s, int64_t a, int64_t b, int64_t next_dur, int64_t corr)
{
    struct scan_slice call;
    int64_t len = rules_len_in_steps(S->r, &S->si, a, b, &s->step, NULL);
    int rc;
    if (len <= 0) return 0;
    s->idle += (double)len;
    if (corr < 0 || (rc = scan_launch_of(S->launch, corr, &call, S->e)) == 0 || (rc > 0 && call.ts < a)) return 0;
    if (rc < 0) return rc;
    int64_t track = call.track, ldur = call.dur;
    s->hostwait += (double)len;
    s->waited++;
    s->shorter += next_dur < ldur;
    s->launch_ns += (double)ldur;
    lh_add(s->launch_hist, ldur);
    if (len >= S->gap_ns) return 0; /* one long host activity: gpu_idle_gaps */
    struct gpuscan_host *h;
    if ((rc = gpuscan_hosts_get(S->H, track, &h, S->e)) != 0 || (rc = gpuscan_host_seek(h, a, S->e)) != 0)
        return rc;
    if (gpuscan_host_in(h, GPUSCAN_SYNC)) {
        /* the GPU ran dry while the host was blocked in a sync: the sync
         * emptied the queue (excessive_host_sync's cost), not the launches */
        s->act[GPUSCAN_SYNC] += (double)len;
        return 0;
    }
    s->scale = (double)len / (double)(b - a);
    memset(s->g_act, 0, sizeof s->g_act);
    s->g_nlab = 0;
    if ((rc = gpuscan_host_sweep(h, a, b, on_act, s, S->e)) != 0) return rc;
    double disp = 0, other = s->g_act[GPUSCAN_DATALOADER] + s->g_act[GPUSCAN_COMM] + s->g_act[GPUSCAN_SYNC];
    for (int k = 0; k < GPUSCAN_NACT; k++) {
        s->act[k] += s->g_act[k];
        if (dispatching(k)) disp += s->g_act[k];
    }
    if (disp < DISPATCH_MIN * (double)len || other > MOST * (double)len) return 0;
    s->overhead += (double)len;
    s->step_busy[s->step] += (double)len;
    /* the wait is shared among the regions dispatched in it */
    for (size_t i = 0; i < s->g_nlab; i++)
        tally_add(&s->regions, s->g_lab[i].label, s->g_lab[i].ns / disp * (double)len);
    return 0;
}

/* Scans rank r's busiest GPU into s. Returns 0 or ERR_DB (message in e). */
static int scan_rank(sqlite3 *db, struct scan_launch *launch, const struct rules_rank *r, int64_t gap_ns,
                     struct gpuscan_names *nm, struct scan *s, struct err *e)
{
    struct scanner S = { db, r, gap_ns, launch, rules_hosts_open(db, launch, nm), 0, e };
    struct gpuscan_lanes *L = NULL;
    struct gpuscan_op op;
    int64_t w0 = r->steps[0].ts, w1 = r->steps[r->nsteps - 1].ts + r->steps[r->nsteps - 1].dur;
    int64_t front = w0;
    int rc;
    if ((rc = gpuscan_lanes_open(db, r->rank, r->gpu->device, w0, w1, &L, e)) != 0) goto out;
    while ((rc = gpuscan_lanes_next(L, &op, e)) > 0) {
        if (op.ts >= w0) s->nops++;
        if (op.ts > front && (rc = on_gap(&S, s, front, op.ts, op.end - op.ts, op.corr)) != 0) goto out;
        if (op.end > front) front = op.end;
    }
    if (rc == 0 && front < w1) rc = on_gap(&S, s, front, w1, 0, -1);
out:
    gpuscan_lanes_close(L);
    gpuscan_hosts_close(S.H);
    return rc;
}

/* ====================================================================== */
/* The rule                                                               */
/* ====================================================================== */

static const char advice_torch[] =
    "The host cannot issue GPU work as fast as the GPU finishes it: each op costs Python, dispatcher and "
    "launch time longer than its kernel, so the GPU idles between ops. Cut the launches per step: capture "
    "the step in CUDA graphs (torch.compile(mode=\"reduce-overhead\"), or torch.cuda.CUDAGraph by hand), "
    "let torch.compile fuse the small elementwise ops, use fused optimizers (fused=True), and give each "
    "kernel more work (a larger batch). Profiling with record_shapes, profile_memory or with_stack adds "
    "host time per op: confirm with the step time measured without the profiler.";
static const char snippet_torch[] =
    "model = torch.compile(model, mode=\"reduce-overhead\")  # CUDA graphs: one launch per graph\n"
    "opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)  # one kernel per step\n"
    "# or capture a static step by hand:\n"
    "g = torch.cuda.CUDAGraph()\n"
    "with torch.cuda.graph(g):\n"
    "    loss = loss_fn(model(static_x), static_y)";
static const char advice_jax[] =
    "The host dispatches GPU work slower than the GPU runs it: jit the whole training step so XLA runs it as "
    "one fused computation, replace Python loops over small ops with lax.scan or lax.fori_loop, and give "
    "each kernel more work (a larger batch).";
static const char advice_cuda[] =
    "The host cannot issue GPU work as fast as the GPU finishes it: each kernel runs shorter than its "
    "launch call, so the GPU idles between kernels. Cut the launches per iteration: capture the repeated "
    "sequence once in a CUDA graph (cudaStreamBeginCapture/cudaStreamEndCapture, then "
    "cudaGraphInstantiate) and replay it with one cudaGraphLaunch per iteration (cudaGraphExecUpdate when "
    "only kernel arguments change); fuse chains of small kernels into one (elementwise ops, or a GEMM "
    "epilogue with cuBLASLt or CUTLASS); and give each launch more work (a larger problem or batch per "
    "kernel, batched cuBLAS calls instead of a loop of small ones). CUDA API tracing adds host time per "
    "call: confirm with the iteration time measured without the profiler.";
static const char snippet_cuda[] =
    "// capture one iteration's launches once, replay them with a single call\n"
    "cudaGraph_t graph;\n"
    "cudaGraphExec_t exec;\n"
    "cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);\n"
    "run_iteration(stream);  // the kernels of one iteration, all on `stream`\n"
    "cudaStreamEndCapture(stream, &graph);\n"
    "cudaGraphInstantiateWithFlags(&exec, graph, 0);\n"
    "for (int it = 0; it < iters; it++)\n"
    "    cudaGraphLaunch(exec, stream);  // one launch instead of one per kernel\n"
    "cudaStreamSynchronize(stream);";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
    [RULES_JAX] = { advice_jax, NULL },
    [RULES_CUDA] = { advice_cuda, snippet_cuda },
};

/* The model already runs under torch.compile: CUDA graphs are the step left. */
static const char advice_torch_compiled[] =
    "The model already runs under torch.compile, but its kernels still run shorter than their launches, so "
    "the GPU idles between them. Let the compiled code replay as CUDA graphs: compile with "
    "mode=\"reduce-overhead\" (or \"max-autotune\"), keep input shapes static (or mark them dynamic) so "
    "graphs are reused, and remove graph breaks (torch._dynamo.explain) so more of the step is one graph. "
    "The optimizer step runs eagerly: make it fused (fused=True) or compile it too. A larger batch gives each "
    "kernel more work.";
static const char snippet_torch_compiled[] =
    "model = torch.compile(model, mode=\"reduce-overhead\")  # replay as CUDA graphs\n"
    "print(torch._dynamo.explain(model)(x).graph_break_count)  # aim for 0\n"
    "opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)";

/* An inference trace: no optimizer, no loss. */
static const char advice_torch_infer[] =
    "The host cannot issue GPU work as fast as the GPU finishes it: each op costs Python, dispatcher and "
    "launch time longer than its kernel, so the GPU idles between ops. Capture the forward pass in CUDA "
    "graphs (torch.compile(mode=\"reduce-overhead\"), or torch.cuda.CUDAGraph by hand), let torch.compile "
    "fuse the small ops, run under torch.inference_mode(), and batch more requests per forward pass. "
    "Profiling adds host time per op: confirm with the latency measured without the profiler.";
static const char snippet_torch_infer[] =
    "model = torch.compile(model, mode=\"reduce-overhead\")  # CUDA graphs: one launch per graph\n"
    "with torch.inference_mode():\n"
    "    out = model(x)\n"
    "# or capture a static forward pass by hand:\n"
    "g = torch.cuda.CUDAGraph()\n"
    "with torch.cuda.graph(g):\n"
    "    static_out = model(static_x)";
static const struct rules_advice advice_infer[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch_infer, snippet_torch_infer },
};

/* Appends "<head> name p %, name p %..." for the shares of total to lines
 * (shares under 0.5 % left out), worded for framework fw. */
static void add_shares(json_t *lines, const char *head, const double *v, int n, double total, enum rules_framework fw)
{
    char line[512];
    int len = snprintf(line, sizeof line, "%s", head);
    const char *sep = "";
    for (int k = 0; k < n && total > 0; k++) {
        double p = v[k] / total * 100.0;
        if (p < 0.5 || len >= (int)sizeof line) continue;
        const char *label = k == GPUSCAN_NONE && fw == RULES_CUDA ? "host code between CUDA calls (nothing the profiler saw)"
                                                                 : act_label[k];
        len += snprintf(line + len, sizeof line - (size_t)len, "%s %s %.0f %%", sep, label, p);
        sep = ",";
    }
    json_array_append_new(lines, json_string(line));
}

static void report(struct rules_ctx *c, const struct rules_rank *r, struct scan *s, double span,
                   struct gpuscan_names *nm)
{
    const double gap_ms = rules_param(c, "rule_gap_ms");
    double n = (double)r->nsteps, idle_pct = s->idle / span * 100.0, short_wait = 0;
    for (int k = 0; k < GPUSCAN_NACT; k++) short_wait += s->act[k];
    size_t ws = 0;
    for (size_t k = 1; k < r->nsteps; k++)
        if (s->step_busy[k] > s->step_busy[ws]) ws = k;
    char a[32], b[32], d[32], line[512], link[160], name[96], head[160];
    double mean_op = s->nops ? (span - s->idle) / (double)s->nops : 0;
    double mean_launch = s->waited ? s->launch_ns / (double)s->waited : 0;
    double median_launch = lh_median(s->launch_hist, s->waited);
    double shorter_pct = s->waited ? 100.0 * (double)s->shorter / (double)s->waited : 0;
    json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i}", "lines", "idle_pct", idle_pct, "hostwait_pct",
                           s->hostwait / s->idle * 100.0, "overhead_pct", s->overhead / s->hostwait * 100.0,
                           "overhead_us", s->overhead / n / 1000.0, "ops_per_step", (double)s->nops / n, "mean_op_us",
                           mean_op / 1000.0, "mean_launch_us", mean_launch / 1000.0, "median_launch_us",
                           median_launch / 1000.0, "shorter_than_launch_pct",
                           shorter_pct, "steps", (int)r->nsteps);
    json_t *lines = json_object_get(ev, "lines");
    snprintf(line, sizeof line,
             "GPU idle %s of a %s step (%.0f %%), average of %zu steps; %.0f %% of the idle time waits for the host "
             "to launch the next op",
             rules_fmt_ns(s->idle / n, a, sizeof a), rules_fmt_ns(span / n, b, sizeof b), idle_pct, r->nsteps,
             s->hostwait / s->idle * 100.0);
    json_array_append_new(lines, json_string(line));
    snprintf(head, sizeof head, "In the waits under %s (%s per step) the launching thread was in",
             rules_fmt_ns(gap_ms * 1e6, a, sizeof a), rules_fmt_ns(short_wait / n, b, sizeof b));
    add_shares(lines, head, s->act, GPUSCAN_NACT, short_wait, r->framework);
    snprintf(line, sizeof line,
             "Launch overhead (waits in which the host was dispatching ops, with the %s between them): %s per "
             "step, %.0f %% of the host-wait",
             r->framework == RULES_CUDA ? "host code" : "Python", rules_fmt_ns(s->overhead / n, a, sizeof a),
             s->overhead / s->hostwait * 100.0);
    json_array_append_new(lines, json_string(line));
    snprintf(line, sizeof line,
             "%.0f GPU ops per step, %s each on average; %.0f %% of the ops the GPU waited for ran shorter than their "
             "launch call (%s median)",
             (double)s->nops / n, rules_fmt_ns(mean_op, a, sizeof a), shorter_pct,
             rules_fmt_ns(median_launch, d, sizeof d));
    json_array_append_new(lines, json_string(line));

    /* the regions the overhead falls in, largest first */
    json_t *regions = json_array();
    int len = snprintf(line, sizeof line, "Where: ");
    for (int top = 0; top < TOP_REGIONS; top++) {
        size_t best = SIZE_MAX;
        for (size_t k = 0; k < s->regions.cap; k++)
            if (s->regions.id[k] && s->regions.ns[k] > 0 &&
                (best == SIZE_MAX || s->regions.ns[k] > s->regions.ns[best]))
                best = k;
        if (best == SIZE_MAX) break;
        double p = s->regions.ns[best] / s->overhead * 100.0;
        gpuscan_names_text(nm, s->regions.id[best], name, sizeof name);
        json_array_append_new(regions, json_pack("{s:s,s:f}", "name", name, "pct", p));
        if (len < (int)sizeof line)
            len += snprintf(line + len, sizeof line - (size_t)len, "%s%s %.0f %%", top ? ", " : "", name, p);
        s->regions.ns[best] = 0;
    }
    if (json_array_size(regions)) json_array_append_new(lines, json_string(line));
    json_object_set_new(ev, "regions", regions);

    /* the profiler's own cost inflates every launch wait: what removing
     * the launch overhead would save is the rest */
    double net = s->overhead / n - r->overhead_ns;
    if (net < 0) net = 0;
    json_object_set_new(ev, "profiler_overhead_us", json_real(r->overhead_ns / 1000.0));
    if (r->overhead_ns > 0) {
        snprintf(line, sizeof line,
                 "The profiler itself adds about %s per step here (%.0f operators recorded x ~%.1f µs), which "
                 "stretches these waits: without it the launch overhead is about %s per step",
                 rules_fmt_ns(r->overhead_ns, a, sizeof a), r->ops_per_step, RULES_OP_OVERHEAD_NS / 1000.0,
                 rules_fmt_ns(net, b, sizeof b));
        json_array_append_new(lines, json_string(line));
    }
    enum rules_severity sev = net * n >= HIGH_SHARE * span ? RULES_HIGH
                              : net * n >= LOW_SHARE * span ? RULES_MEDIUM
                                                            : RULES_LOW;
    const struct rules_advice *adv = rules_advice_of(r, advice, advice_infer);
    static const struct rules_advice compiled = { advice_torch_compiled, snippet_torch_compiled };
    if (r->framework == RULES_PYTORCH && r->compiled && r->training) adv = &compiled;
    rules_add(c, &rule_kernel_launch_bound, sev, r->rank, net, ev, rules_link_step(r, &r->steps[ws], link, sizeof link),
              adv->text, adv->snippet,
              "Launch-bound: the GPU idles %.0f %% of the step waiting for the host to launch work", idle_pct);
}

static int run(struct rules_ctx *c, struct err *e)
{
    const double gap_ms = rules_param(c, "rule_gap_ms");
    const double launch_idle_pct = rules_param(c, "rule_launch_idle_pct");
    struct gpuscan_names *nm;
    int rc = gpuscan_names_open(c->db, &nm, e);
    if (rc != 0) return err_prefix(e, "kernel_launch_bound");
    for (size_t i = 0; i < c->nranks && rc == 0; i++) {
        const struct rules_rank *r = &c->ranks[i];
        if (r->capture) continue; /* a graph capture: the GPU is not meant to run */
        if (!r->gpu || !r->nsteps) continue;
        struct scan *s = xcalloc(1, sizeof *s);
        double span = 0;
        for (size_t k = 0; k < r->nsteps; k++) span += (double)r->steps[k].dur;
        s->step_busy = xcalloc(r->nsteps, sizeof *s->step_busy);
        /* the same floor as gpu_idle_gaps, so the two split the waits */
        int64_t gap_ns = gap_ms * 1e6 >= 1 ? (int64_t)(gap_ms * 1e6) : 1;
        struct scan_launch *launch;
        if ((rc = rules_launches(c, r, &launch, e)) != 0 || (rc = scan_rank(c->db, launch, r, gap_ns, nm, s, e)) != 0)
            err_prefix(e, "kernel_launch_bound: rank %d", r->rank);
        else if (span > 0 && s->idle / span * 100.0 > launch_idle_pct && s->hostwait > MOST * s->idle &&
                 s->overhead > MOST * s->hostwait)
            report(c, r, s, span, nm);
        free(s->step_busy);
        free(s->regions.id);
        free(s->regions.ns);
        free(s);
    }
    /* a name that could not be read made a label or an activity blind */
    if (rc == 0 && gpuscan_names_error(nm, e) < 0) rc = err_prefix(e, "kernel_launch_bound");
    gpuscan_names_close(nm);
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_launch_idle_pct", "30", "%", 0, 100,
      "kernel_launch_bound: GPU idle share of the steps above which launch overhead is looked at." },
};

const struct rules_def rule_kernel_launch_bound = {
    "kernel_launch_bound",
    "https://pytorch.org/docs/stable/notes/cuda.html#cuda-graphs",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_HOST,
};

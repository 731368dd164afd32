/* gpu_idle_gaps — the GPU sits idle for long stretches inside the steps
 * while the host does one thing: waits for a batch, blocks in a sync or a
 * collective, runs a long op, or runs Python the profiler does not record.
 *
 * How it is read, per rank, on its busiest GPU: the GPU ops (kernels,
 * copies, memsets) of that device's streams are merged in time order (one
 * range query per stream, rows streamed) and every stretch with none of
 * them running is measured inside the steps. Stretches of at least
 * rule_gap_ms count as gaps; the rule fires when they add up to more than
 * rule_gap_pct of the steps. Shorter stretches are per-op host overhead,
 * kernel_launch_bound's subject.
 *
 * For each gap the host thread that launched the op ending it (found by
 * correlation id; the previous op's thread for the gap at the end of the
 * window) says what the host did meanwhile, time-weighted over the gap:
 * inside a DataLoader call, a collective (gloo:/nccl: spans), a blocking
 * runtime call, a CUDA launch call, an operator, a record_function region,
 * or nothing the profiler saw (Python, NumPy, sleeps between ops). A gap
 * that opens while the host is still blocked in a sync is flagged: that
 * sync emptied the GPU's queue.
 *
 * saving: the gaps' time per step, less their DataLoader part when
 * dataloader_bound has reported this rank already (that finding carries
 * it). Memory: one cursor (a stack of open slices) per launching thread
 * and one per GPU stream; the largest gaps are kept for the evidence.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/gpuscan.h"
#include "derive/rules.h"
#include "store/model.h"
#include "store/scan.h"

/* Gaps listed in the evidence, largest first. */
#define TOP_GAPS 5
/* Labels told apart inside one gap. */
#define GAP_LABELS 8
/* "Most of" the gaps' time. */
#define MOST 0.5

/* ====================================================================== */
/* Labels of host activity (gpuscan.h classifies and sweeps)              */
/* ====================================================================== */

/* The activities of gpuscan.h and buckets of this rule's own: the gap's
 * launching thread is unknown (no correlation ids); the op ending the gap
 * was launched before it opened, so the GPU waited on a dependency (another
 * stream, an event, a collective), not on the host (HTA's
 * negative_queue_length trace: 64 ms gaps with hundreds of ops queued). */
enum { A_UNKNOWN = GPUSCAN_NACT, A_QUEUED, A_N };

/* The slice that names a stretch of activity act with these slices open
 * (outermost first), 0 when none: the outermost slice of that activity
 * (for a sync or a runtime call, the call, with the outermost op around
 * it in *within, else 0); for op and region time, the outermost op or
 * region. */
static uint32_t label_of(int act, const struct gpuscan_frame *f, int n, uint32_t *within)
{
    uint32_t label = 0;
    *within = 0;
    for (int i = 0; i < n; i++) {
        int a = f[i].act;
        if ((act == GPUSCAN_SYNC || act == GPUSCAN_LAUNCH) && a == GPUSCAN_OP && !*within) *within = f[i].name;
        int match = act == GPUSCAN_OP || act == GPUSCAN_REGION ? a == GPUSCAN_OP || a == GPUSCAN_REGION : a == act;
        if (match && !label) label = f[i].name;
    }
    return label;
}

/* ====================================================================== */
/* The scan of one rank                                                   */
/* ====================================================================== */

struct gap {
    int64_t a, b, len; /* the stretch, its time inside the steps */
    size_t step;       /* the step holding most of it */
    int act;           /* what the host did most of the time */
    uint32_t label;    /* the slice naming it (0: none) */
    uint32_t within;   /* the op around that call (0: none) */
    int after_sync;    /* it opened while the host was blocked in a sync */
};

struct scan {
    double total;      /* gap time inside the steps, ns */
    int64_t n, after_sync;
    double act[A_N];   /* host activity during the gaps, ns */
    struct gap top[TOP_GAPS];
    size_t ntop;
    /* the gap being swept */
    double scale, g_act[A_N];
    struct {
        int act;
        uint32_t label, within;
        double ns;
    } g_lab[GAP_LABELS];
    size_t g_nlab;
};

static void on_act(void *arg, int act, const struct gpuscan_frame *stack, int n, int64_t ns)
{
    struct scan *s = arg;
    uint32_t within, label = label_of(act, stack, n, &within);
    double v = (double)ns * s->scale;
    s->g_act[act] += v;
    for (size_t i = 0; i < s->g_nlab; i++)
        if (s->g_lab[i].act == act && s->g_lab[i].label == label && s->g_lab[i].within == within) {
            s->g_lab[i].ns += v;
            return;
        }
    if (s->g_nlab < GAP_LABELS) {
        s->g_lab[s->g_nlab].act = act;
        s->g_lab[s->g_nlab].label = label;
        s->g_lab[s->g_nlab].within = within;
        s->g_lab[s->g_nlab++].ns = v;
    }
}

struct scanner {
    sqlite3 *db;
    const struct rules_rank *r;
    int64_t gap_ns;
    struct scan_launch *launch; /* the launching thread of a GPU op, by correlation (the ctx's, borrowed) */
    struct gpuscan_hosts *H;
    size_t si;
    struct err *e;
};

/* The thread that launched GPU op corr into *track, -1 when unknown, and
 * (ended, may be NULL) when that launch call returned, -1 when unknown.
 * Returns 0 or < 0 on an error (S->e filled). */
static int launch_thread(struct scanner *S, int64_t corr, int64_t *track, int64_t *ended)
{
    struct scan_slice call;
    int rc = corr > 0 ? scan_launch_of(S->launch, corr, &call, S->e) : 0;
    *track = rc == 1 ? call.track : -1;
    if (ended) *ended = rc == 1 ? call.ts + call.dur : -1;
    return rc < 0 ? rc : 0;
}

/* Keeps g among the largest gaps (sorted, largest first). */
static void keep_top(struct scan *s, const struct gap *g)
{
    size_t i = s->ntop < TOP_GAPS ? s->ntop++ : TOP_GAPS;
    if (i == TOP_GAPS) {
        if (g->len <= s->top[TOP_GAPS - 1].len) return;
        i = TOP_GAPS - 1;
    }
    while (i > 0 && s->top[i - 1].len < g->len) {
        s->top[i] = s->top[i - 1];
        i--;
    }
    s->top[i] = *g;
}

/* One idle stretch [a, b); next_corr: the op ending it (-1: the end of
 * the window), prev_corr: the op before it (-1: none). */
static int on_gap(struct scanner *S, struct scan *s, int64_t a, int64_t b, int64_t next_corr, int64_t prev_corr)
{
    struct gap g = { a, b, 0, 0, A_UNKNOWN, 0, 0, 0 };
    /* a gap often runs from a step's last kernel into the next step's
     * input: it belongs to the step holding most of it */
    g.len = rules_len_in_steps(S->r, &S->si, a, b, NULL, &g.step);
    if (g.len < S->gap_ns) return 0;
    int64_t track;
    int rc;
    int64_t launched = -1; /* when the op ending the gap was queued */
    if ((rc = launch_thread(S, next_corr, &track, &launched)) < 0) return rc;
    if (track < 0 && (rc = launch_thread(S, prev_corr, &track, NULL)) < 0) return rc;
    memset(s->g_act, 0, sizeof s->g_act);
    s->g_nlab = 0;
    s->scale = (double)g.len / (double)(b - a);
    if (launched >= 0 && launched <= a) {
        s->g_act[A_QUEUED] = (double)g.len;
    } else if (track < 0) {
        s->g_act[A_UNKNOWN] = (double)g.len;
    } else {
        struct gpuscan_host *h;
        if ((rc = gpuscan_hosts_get(S->H, track, &h, S->e)) != 0 || (rc = gpuscan_host_seek(h, a, S->e)) != 0)
            return rc;
        g.after_sync = gpuscan_host_in(h, GPUSCAN_SYNC);
        if ((rc = gpuscan_host_sweep(h, a, b, on_act, s, S->e)) != 0) return rc;
    }
    for (int k = 0; k < A_N; k++) {
        s->act[k] += s->g_act[k];
        if (s->g_act[k] > s->g_act[g.act]) g.act = k;
    }
    double best = 0;
    for (size_t i = 0; i < s->g_nlab; i++)
        if (s->g_lab[i].act == g.act && s->g_lab[i].ns > best) {
            best = s->g_lab[i].ns;
            g.label = s->g_lab[i].label;
            g.within = s->g_lab[i].within;
        }
    s->total += (double)g.len;
    s->n++;
    s->after_sync += g.after_sync;
    keep_top(s, &g);
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
    int64_t front = w0, prev = -1;
    int rc;
    if ((rc = gpuscan_lanes_open(db, r->rank, r->gpu->device, w0, w1, &L, e)) != 0) goto out;
    while ((rc = gpuscan_lanes_next(L, &op, e)) > 0) {
        if (op.ts > front && (rc = on_gap(&S, s, front, op.ts, op.corr, prev)) != 0) goto out;
        if (op.end > front) {
            front = op.end;
            prev = op.corr;
        }
    }
    if (rc == 0 && front < w1) rc = on_gap(&S, s, front, w1, -1, prev);
out:
    gpuscan_lanes_close(L);
    gpuscan_hosts_close(S.H);
    return rc;
}

/* ====================================================================== */
/* The rule                                                               */
/* ====================================================================== */

/* Per activity: a stable key (evidence.main_host, read by
 * low_gpu_utilization), its name in the summary, what the host was doing
 * in a gap ("the host was ..."), and the advice and snippet for PyTorch. */
static const struct {
    const char *key, *name, *doing, *advice, *snippet;
} acts[A_N] = {
    [GPUSCAN_DATALOADER] =
        { "dataloader", "the DataLoader", "waiting in the DataLoader",
          "The GPU waits for the next batch: the host is inside the DataLoader during the gaps. Load "
          "batches in background workers (num_workers, pin_memory=True, persistent_workers, "
          "prefetch_factor) so one is ready when the step starts; see dataloader_bound.",
          "loader = torch.utils.data.DataLoader(dataset, batch_size=bs, num_workers=8,\n"
          "    pin_memory=True, persistent_workers=True, prefetch_factor=4)" },
    [GPUSCAN_COMM] =
        { "collective", "collectives", "waiting in a collective",
          "The host waits inside a collective while the GPU has nothing queued: another rank arrives late "
          "(see straggler) or the collective runs on the host (gloo). Even out the ranks' work and input, "
          "and use the nccl backend for GPU tensors so collectives run on the GPU, overlapped with compute.",
          NULL },
    [GPUSCAN_SYNC] =
        { "sync", "host syncs", "blocked in a host sync",
          "The host blocks until the GPU is done (.item(), .cpu(), print(tensor), torch.cuda.synchronize()), "
          "so the GPU's queue runs dry and it idles until the host has launched the next work. Keep values "
          "on the GPU and read them every N steps; copy with non_blocking=True.",
          "running_loss += loss.detach()  # stays on the GPU, no sync\n"
          "if step % log_every == 0:\n"
          "    print(running_loss.item() / log_every); running_loss.zero_()" },
    [GPUSCAN_LAUNCH] =
        { "runtime", "CUDA runtime calls", "in CUDA runtime calls",
          "The host spends the gaps in CUDA runtime calls while nothing is queued on the GPU. One-time "
          "setup (the first launch of a kernel loading its module, stream and event creation, cuDNN "
          "autotuning) belongs before the measured steps: profile with a schedule that skips warm-up "
          "steps. Repeated allocations and frees (cudaMalloc/cudaFree) mean the caching allocator is "
          "being emptied: avoid torch.cuda.empty_cache() in the loop and keep tensor shapes stable.",
          NULL },
    [GPUSCAN_OP] =
        { "op", "host operators", "in host operators",
          "A host operator runs for a long time while nothing is queued on the GPU (often work on CPU tensors "
          "inside the step): move it to the GPU, do it in the DataLoader workers, or issue the GPU work "
          "before it so the GPU's queue stays full.",
          NULL },
    [GPUSCAN_REGION] =
        { "region", "framework regions", "inside a framework region",
          "The host spends the gaps inside a record_function region with little GPU work queued. For "
          "Optimizer.step use a fused or foreach optimizer (fused=True); for other code move it off the "
          "critical path or run it every N steps.",
          "opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)" },
    [GPUSCAN_NONE] =
        { "python", "Python between ops (nothing the profiler saw)",
          "running code the profiler did not record (Python/NumPy between ops)",
          "The host runs code the profiler does not record (Python or NumPy work between ops, logging, "
          "checkpointing, time.sleep) while the GPU has nothing queued: move it off the critical path "
          "(into DataLoader workers or a background thread), run it every N steps, or overlap it with "
          "GPU work launched before it. Wrap it in torch.profiler.record_function, or profile with "
          "with_stack=True, to see it in the trace.",
          "with torch.profiler.record_function(\"host_work\"):  # names it in the trace\n"
          "    stats = compute_stats(batch)  # move to a worker or run every N steps" },
    [A_UNKNOWN] =
        { "unknown", "an unknown thread", "doing something the trace does not tie to the GPU work",
          "The trace does not say which host thread launched the GPU work (no correlation ids): open "
          "the linked window and look at what the host threads do during the gap.",
          NULL },
    [A_QUEUED] =
        { "queued", "queued ops waiting on a dependency",
          "ahead: the next op was already queued, waiting on another stream, an event or a collective",
          "The GPU idles although its next op was queued before the gap: the op waits on a dependency, not on "
          "the host. Look at what it waits for in the linked window: work on another stream it is ordered "
          "after (wait_stream, cudaStreamWaitEvent), a host-side event, or a collective whose peers are "
          "late (see straggler). Overlap the producer with other work, or split it so the consumer can "
          "start sooner.",
          NULL },
};

/* A CUDA application (an Nsight capture without PyTorch) has no Python:
 * what the profiler did not see there is the program's own host code. */
static const char *act_name(int act, enum rules_framework fw)
{
    if (act == GPUSCAN_NONE && fw == RULES_CUDA) return "host code between CUDA calls (nothing the profiler saw)";
    return acts[act].name;
}

static const char *act_doing(int act, enum rules_framework fw)
{
    if (act == GPUSCAN_NONE && fw == RULES_CUDA) return "running host code the profiler did not record (between CUDA calls)";
    return acts[act].doing;
}

static const char advice_jax[] =
    "The device idles while the host does other work between dispatches: move host-side work (data "
    "preparation, logging, conversions to NumPy) off the step, prefetch input with a background pipeline, and "
    "avoid blocking on device values (jax.device_get, float(x), block_until_ready) inside the loop.";
static const char advice_cuda[] =
    "The GPU idles while the thread that feeds it does other work with nothing queued (host computation, "
    "I/O, blocking CUDA calls). Launches are asynchronous: queue the next kernels before the host work so "
    "it overlaps them, or move that work to another thread; keep blocking calls out of the loop "
    "(cudaDeviceSynchronize, synchronous cudaMemcpy, cudaMalloc/cudaFree: allocate once or use "
    "cudaMallocAsync); and do one-time setup (module loading on a kernel's first launch, stream, event and "
    "cuBLAS/cuDNN handle creation) before the measured iterations. NVTX ranges around the host phases "
    "name the gaps in the next trace.";
static const char snippet_cuda[] =
    "#include <nvtx3/nvToolsExt.h>\n"
    "step<<<grid, block, 0, s>>>(d_x);  // queue the GPU work first\n"
    "nvtxRangePushA(\"prepare_next\");   // names the host work in the trace\n"
    "prepare_next(h_next);              // runs while the kernel does\n"
    "nvtxRangePop();";

/* What names gap g ("cudaStreamSynchronize in aten::item", "Optimizer.step#
 * AdamW.step") into buf; "" when nothing does. Returns buf. */
static const char *gap_label(struct gpuscan_names *nm, const struct gap *g, char *buf, size_t n)
{
    char in[96];
    gpuscan_names_text(nm, g->label, buf, n);
    if (buf[0] && g->within && strlen(buf) + 4 < n) {
        gpuscan_names_text(nm, g->within, in, sizeof in);
        if (in[0]) snprintf(buf + strlen(buf), n - strlen(buf), " in %s", in);
    }
    return buf;
}

/* Does ctx hold a finding of rule id about rank? */
static int has_finding(const struct rules_ctx *c, const char *id, int rank)
{
    size_t i;
    json_t *f;
    json_array_foreach(c->findings, i, f) {
        json_t *r = json_object_get(f, "rank");
        if (strcmp(json_string_value(json_object_get(f, "id")), id) == 0 && json_is_integer(r) &&
            json_integer_value(r) == rank)
            return 1;
    }
    return 0;
}

static void report(struct rules_ctx *c, const struct rules_rank *r, struct scan *s, double span,
                   struct gpuscan_names *nm)
{
    const double gap_ms = rules_param(c, "rule_gap_ms");
    const double gap_pct = rules_param(c, "rule_gap_pct");
    double n = (double)r->nsteps, share = s->total / span * 100.0;
    int main_act = 0;
    for (int k = 1; k < A_N; k++)
        if (s->act[k] > s->act[main_act]) main_act = k;
    /* dataloader_bound already carries the DataLoader part of the gaps; in a
     * run of several ranks, waits inside collectives belong to the
     * communication rules (straggler, communication_heavy, ddp_backend),
     * which see every rank: a rank that idles only because it waits for
     * another gets no gap finding of its own. */
    int dl_claimed = has_finding(c, "dataloader_bound", r->rank);
    double comm_claimed = c->nranks > 1 ? s->act[GPUSCAN_COMM] : 0;
    if (comm_claimed > MOST * s->total) return;
    double saving = (s->total - (dl_claimed ? s->act[GPUSCAN_DATALOADER] : 0) - comm_claimed) / n;
    char a[32], b[32], d[32], line[640], name[224], link[200];

    json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:I,s:I,s:i,s:{},s:s}", "lines", "gap_us", s->total / n / 1000.0,
                           "step_us", span / n / 1000.0, "share_pct", share, "gaps", (json_int_t)s->n, "after_sync",
                           (json_int_t)s->after_sync, "steps", (int)r->nsteps, "host_pct", "main_host",
                           acts[main_act].key);
    json_t *lines = json_object_get(ev, "lines"), *host = json_object_get(ev, "host_pct"), *gaps = json_array();
    snprintf(line, sizeof line,
             "%lld gaps of at least %s with no GPU work: %s of a %s step (%.0f %%), average of %zu steps",
             (long long)s->n, rules_fmt_ns(gap_ms * 1e6, a, sizeof a), rules_fmt_ns(s->total / n, b, sizeof b),
             rules_fmt_ns(span / n, d, sizeof d), share, r->nsteps);
    json_array_append_new(lines, json_string(line));
    int len = snprintf(line, sizeof line, "The host during the gaps:");
    const char *sep = "";
    for (int k = 0; k < A_N; k++) {
        double p = s->act[k] / s->total * 100.0;
        if (p < 0.5) continue;
        json_object_set_new(host, acts[k].key, json_real(p));
        if (len < (int)sizeof line)
            len += snprintf(line + len, sizeof line - (size_t)len, "%s %s %.0f %%", sep, act_name(k, r->framework), p);
        sep = ",";
    }
    json_array_append_new(lines, json_string(line));
    for (size_t i = 0; i < s->ntop; i++) {
        const struct gap *g = &s->top[i];
        const struct rules_step *st = &r->steps[g->step];
        gap_label(nm, g, name, sizeof name);
        snprintf(line, sizeof line, "%s in %s at +%s: the host was %s%s%s%s%s",
                 rules_fmt_ns((double)g->len, a, sizeof a),
                 st->name, rules_fmt_ns((double)(g->a > st->ts ? g->a - st->ts : 0), b, sizeof b), act_doing(g->act, r->framework),
                 name[0] ? " (" : "", name, name[0] ? ")" : "",
                 g->after_sync ? ", after a host sync emptied the GPU's queue" : "");
        json_array_append_new(lines, json_string(line));
        json_array_append_new(gaps, json_pack("{s:f,s:f,s:s,s:s,s:s,s:b}", "start_us", (double)g->a / 1000.0, "dur_us",
                                              (double)g->len / 1000.0, "step", st->name, "host", acts[g->act].key,
                                              "label", name, "after_sync", g->after_sync));
    }
    json_object_set_new(ev, "top", gaps);
    if (s->after_sync * 2 > s->n) {
        snprintf(line, sizeof line,
                 "%lld of the %lld gaps opened while the host was blocked in a sync (see excessive_host_sync)",
                 (long long)s->after_sync, (long long)s->n);
        json_array_append_new(lines, json_string(line));
    }
    if (comm_claimed > 0) {
        snprintf(line, sizeof line,
                 "Waits inside collectives (%s per step) are left to the communication findings; the saving here "
                 "is the rest",
                 rules_fmt_ns(comm_claimed / n, a, sizeof a));
        json_array_append_new(lines, json_string(line));
    }
    if (dl_claimed && s->act[GPUSCAN_DATALOADER] > 0) {
        snprintf(line, sizeof line,
                 "dataloader_bound already counts the DataLoader part (%s per step); the saving here is the rest",
                 rules_fmt_ns(s->act[GPUSCAN_DATALOADER] / n, a, sizeof a));
        json_array_append_new(lines, json_string(line));
    }

    /* the timeline over the largest gap, with a margin showing the ops around it */
    const struct gap *w = &s->top[0];
    double m = (double)(w->b - w->a) * 0.1;
    snprintf(link, sizeof link, "view=timeline&rank=%d&start=%.3f&end=%.3f", r->rank, ((double)w->a - m) / 1000.0,
             ((double)w->b + m) / 1000.0);
    enum rules_severity sev = share >= 3 * gap_pct ? RULES_HIGH : RULES_MEDIUM;
    if (dl_claimed && s->act[GPUSCAN_DATALOADER] > MOST * s->total) sev = RULES_LOW;
    /* PyTorch advice depends on what the host did; JAX and CUDA get one text */
    struct rules_advice adv = { acts[main_act].advice, acts[main_act].snippet };
    if (r->framework == RULES_JAX) adv = (struct rules_advice){ advice_jax, NULL };
    else if (r->framework == RULES_CUDA) adv = (struct rules_advice){ advice_cuda, snippet_cuda };
    name[0] = '\0';
    for (size_t i = 0; i < s->ntop && !name[0]; i++)
        if (s->top[i].act == main_act && s->top[i].label) gap_label(nm, &s->top[i], name, sizeof name);
    rules_add(c, &rule_gpu_idle_gaps, sev, r->rank, saving, ev, link, adv.text, adv.snippet,
              "GPU idle gaps: %lld gaps of %s or more idle the GPU %.0f %% of the step, the host %s%s%s%s",
              (long long)s->n, rules_fmt_ns(gap_ms * 1e6, a, sizeof a), share, act_doing(main_act, r->framework),
              name[0] ? " (" : "", name, name[0] ? ")" : "");
}

static int run(struct rules_ctx *c, struct err *e)
{
    const double gap_ms = rules_param(c, "rule_gap_ms");
    const double gap_pct = rules_param(c, "rule_gap_pct");
    struct gpuscan_names *nm;
    int rc = gpuscan_names_open(c->db, &nm, e);
    if (rc != 0) return err_prefix(e, "gpu_idle_gaps");
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        if (r->capture) continue; /* a graph capture: the GPU is not meant to run */
        if (!r->gpu || !r->nsteps) continue;
        struct scan *s = xcalloc(1, sizeof *s);
        double span = 0;
        for (size_t k = 0; k < r->nsteps; k++) span += (double)r->steps[k].dur;
        /* a gap shorter than 1 ns would take every stretch: keep the floor */
        int64_t gap_ns = gap_ms * 1e6 >= 1 ? (int64_t)(gap_ms * 1e6) : 1;
        struct scan_launch *launch;
        if ((rc = rules_launches(c, r, &launch, e)) != 0 || (rc = scan_rank(c->db, launch, r, gap_ns, nm, s, e)) != 0) {
            err_prefix(e, "gpu_idle_gaps: rank %d", r->rank);
            free(s);
            break;
        }
        if (span > 0 && s->n && s->total / span * 100.0 > gap_pct) report(c, r, s, span, nm);
        free(s);
    }
    /* a name that could not be read made a label or an activity blind */
    if (rc == 0 && gpuscan_names_error(nm, e) < 0) rc = err_prefix(e, "gpu_idle_gaps");
    gpuscan_names_close(nm);
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_gap_ms", "1", "ms", 0, 1000000,
      "gpu_idle_gaps: GPU idle gaps of at least this many ms ..." },
    { "rule_gap_pct", "10", "%", 0, 100,
      "... adding up to more than this % of the steps." },
};

const struct rules_def rule_gpu_idle_gaps = {
    "gpu_idle_gaps",
    "https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_HOST,
};

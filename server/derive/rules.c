/* rules.c — the rule engine: facts loaded once, every registered rule run,
 * findings ordered and stored (see include/derive/rules.h). */
#define LOG_MODULE "rules"
#include "derive/rules.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/rules_cap.h"
#include "store/facts.h"
#include "store/findings.h"
#include "store/scan.h"
#include "store/slice_read.h"

_Static_assert(RULES_NPARTS == FACTS_NPARTS, "a step's breakdown is read part for part");

static const char *const severity_names[] = { "low", "medium", "high" };

#define X(id) &rule_##id,
static const struct rules_def *const registry[] = { RULES_LIST(X) };
#undef X
#define NRULES (sizeof registry / sizeof registry[0])

/* ---------------------------------------------------------------------- */
/* Formatting helpers for evidence text                                     */
/* ---------------------------------------------------------------------- */

const char *rules_fmt_ns(double ns, char *buf, size_t n)
{
    double a = fabs(ns);
    if (a >= 1e9) snprintf(buf, n, "%.2f s", ns / 1e9);
    else if (a >= 1e7) snprintf(buf, n, "%.1f ms", ns / 1e6);
    else if (a >= 1e6) snprintf(buf, n, "%.2f ms", ns / 1e6);
    else if (a >= 1e4) snprintf(buf, n, "%.0f µs", ns / 1e3);
    else snprintf(buf, n, "%.1f µs", ns / 1e3);
    return buf;
}

const char *rules_fmt_bytes(double bytes, char *buf, size_t n)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = bytes;
    int u = 0;
    while (fabs(v) >= 1024 && u < 4) v /= 1024, u++;
    if (u == 0) snprintf(buf, n, "%.0f B", v);
    else snprintf(buf, n, fabs(v) >= 100 ? "%.0f %s" : "%.1f %s", v, unit[u]);
    return buf;
}

const char *rules_link_step(const struct rules_rank *r, const struct rules_step *s, char *buf, size_t n)
{
    snprintf(buf, n, "view=timeline&rank=%d&start=%.3f&end=%.3f", r->rank, (double)s->ts / 1000.0,
             (double)(s->ts + s->dur) / 1000.0);
    return buf;
}

const char *rules_link_memory(const struct rules_rank *r, int dev, char *buf, size_t n)
{
    snprintf(buf, n, "view=memory&rank=%d&device=%d", r->rank, dev);
    return buf;
}

const struct rules_step *rules_worst_step(const struct rules_rank *r, int k)
{
    const struct rules_step *w = NULL;
    for (size_t i = 0; i < r->nsteps; i++) {
        const struct rules_step *s = &r->steps[i];
        if (!w || (k < 0 ? s->dur > w->dur : s->part[k] > w->part[k])) w = s;
    }
    return w;
}

int rules_step_at(const struct rules_rank *r, int64_t ts)
{
    size_t lo = 0, hi = r->nsteps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->steps[mid].ts <= ts) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    const struct rules_step *s = &r->steps[lo - 1];
    return ts < s->ts + s->dur ? (int)(lo - 1) : -1;
}

int64_t rules_len_in_steps(const struct rules_rank *r, size_t *si, int64_t a, int64_t b, size_t *first, size_t *most)
{
    int64_t len = 0, best = 0;
    size_t f, m;
    while (*si < r->nsteps && r->steps[*si].ts + r->steps[*si].dur <= a) (*si)++;
    f = m = *si;
    for (size_t i = *si; i < r->nsteps && r->steps[i].ts < b; i++) {
        int64_t lo = a > r->steps[i].ts ? a : r->steps[i].ts;
        int64_t hi = b < r->steps[i].ts + r->steps[i].dur ? b : r->steps[i].ts + r->steps[i].dur;
        if (hi <= lo) continue;
        if (!len) f = i;
        if (hi - lo > best) best = hi - lo, m = i;
        len += hi - lo;
    }
    if (first) *first = f;
    if (most) *most = m;
    return len;
}

void rules_lines_peak(json_t *lines, const struct rules_gpu *g)
{
    char a[32], b[32], line[320];
    double share = (double)g->memory_bytes / g->nshare, peak = (double)g->peak_bytes;
    snprintf(line, sizeof line, "Peak allocated: %s of %s (%.1f %%) on GPU %d (%s)", rules_fmt_bytes(peak, a, sizeof a),
             rules_fmt_bytes(share, b, sizeof b), peak / share * 100.0, g->device, g->name[0] ? g->name : "unnamed");
    json_array_append_new(lines, json_string(line));
    if (g->nshare > 1) {
        snprintf(line, sizeof line, "%d ranks of this run use this GPU: each counted with 1/%d of its %s", g->nshare,
                 g->nshare, rules_fmt_bytes((double)g->memory_bytes, a, sizeof a));
        json_array_append_new(lines, json_string(line));
    }
}

/* ---------------------------------------------------------------------- */
/* Communication against compute                                            */
/* ---------------------------------------------------------------------- */

/* Adds one merged compute interval [a, b) (they come in time order,
 * disjoint) to the windows it meets; *wc and *cc are cursors into w and
 * comm that only move forward. */
static void overlap_add(const struct ivl *w, size_t nw, size_t *wc, const struct ivlist *comm, size_t *cc, int64_t a,
                        int64_t b, int64_t *comp_ns, int64_t *ovl_ns)
{
    while (*wc < nw && w[*wc].b <= a) (*wc)++;
    for (size_t i = *wc; i < nw && w[i].a < b; i++) {
        int64_t s = w[i].a > a ? w[i].a : a, t = w[i].b < b ? w[i].b : b;
        if (t <= s) continue;
        comp_ns[i] += t - s;
        ovl_ns[i] += ivlist_len_in(comm, s, t, cc);
    }
}

int rules_comm_overlap(sqlite3 *db, int rank, int64_t lo, int64_t hi, const struct ivlist *comm, const struct ivl *w,
                       size_t nw, int64_t *comm_ns, int64_t *comp_ns, int64_t *ovl_ns, struct err *e)
{
    struct slice_read_spans *c;
    size_t wc = 0, cc = 0;
    for (size_t i = 0; i < nw; i++) {
        if (comm_ns) comm_ns[i] = ivlist_len_in(comm, w[i].a, w[i].b, &cc);
        comp_ns[i] = ovl_ns[i] = 0;
    }
    int rc = slice_read_compute_open(db, rank, lo, hi, &c, e);
    if (rc) return rc;
    int64_t a = 0, b = INT64_MIN, ts, dur;
    cc = 0;
    while ((rc = slice_read_spans_next(c, &ts, &dur, e)) == 1) {
        int64_t end = ts + dur;
        if (ts <= b) {
            if (end > b) b = end;
            continue;
        }
        if (b > a) overlap_add(w, nw, &wc, comm, &cc, a, b, comp_ns, ovl_ns);
        a = ts, b = end;
    }
    if (b > a) overlap_add(w, nw, &wc, comm, &cc, a, b, comp_ns, ovl_ns);
    slice_read_spans_close(c);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------------- */
/* Findings                                                                 */
/* ---------------------------------------------------------------------- */

json_t *rules_add(struct rules_ctx *ctx, const struct rules_def *def, enum rules_severity sev, int rank,
                  double saving_ns, json_t *evidence, const char *link, const char *advice, const char *snippet,
                  const char *title_fmt, ...)
{
    char title[512];
    va_list ap;
    va_start(ap, title_fmt);
    vsnprintf(title, sizeof title, title_fmt, ap);
    va_end(ap);
    if (!json_is_object(evidence)) {
        json_decref(evidence);
        evidence = json_object();
    }
    if (!json_is_array(json_object_get(evidence, "lines"))) json_object_set_new(evidence, "lines", json_array());
    for (size_t i = 0; i < ctx->nranks; i++)
        if (ctx->ranks[i].rank == rank && ctx->ranks[i].warmup_dropped)
            json_array_append_new(json_object_get(evidence, "lines"),
                                  json_string("The first step (warm-up: compilation, autotuning; 5x or more the "
                                              "others) is left out; figures are for the steps after it"));
    if (!(saving_ns >= 0)) saving_ns = 0; /* also NaN */
    json_t *f = json_pack("{s:s,s:s,s:o,s:s,s:o,s:s,s:o,s:s?,s:o,s:f}", "id", def->id, "severity", severity_names[sev],
                          "rank", rank >= 0 ? json_integer(rank) : json_null(), "title", title, "evidence", evidence,
                          "advice", advice ? advice : "", "snippet", snippet ? json_string(snippet) : json_null(),
                          "doc_url", def->doc_url, "link", link ? json_string(link) : json_null(), "saving_us",
                          saving_ns / 1000.0);
    json_array_append_new(ctx->findings, f);
    return f;
}

/* Is rule id in the comma/space separated list? */
static int listed(const char *list, const char *id)
{
    size_t n = strlen(id);
    for (const char *p = list; *p;) {
        p += strspn(p, ", ");
        size_t m = strcspn(p, ", ");
        if (m == n && memcmp(p, id, n) == 0) return 1;
        p += m;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Facts                                                                    */
/* ---------------------------------------------------------------------- */

static void ranks_free(struct rules_rank *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        scan_launch_close(r[i].launch);
        free(r[i].steps);
        free(r[i].gpus);
        json_decref(r[i].summary);
    }
    free(r);
}

/* Does db hold a name only PyTorch writes? An Nsight Systems capture of a
 * PyTorch program shows aten:: operators and DataLoader ranges (NVTX from
 * emit_nvtx or record_function), or ATen's own kernels (at::native::) even
 * without NVTX. Names are interned only when an event uses them, so the
 * small string table answers for the run without a scan of the slices
 * (the ranks of one run are one program). The DataLoader names are the only
 * ones the breakdown's dataloader part comes from, so dataloader_bound
 * never fires on a CUDA rank. */
static const char *const pytorch_names[] = { "aten::%", "%at::native::%", "enumerate(DataLoader)#%",
                                             "enumerate(DataPipe)#%" };
static const char *const jax_tracks[] = { "%XLA%", "/device:%", "%TPU%" };

#define PROBE(db, pats) facts_names_exist(db, FACTS_LIKE, pats, sizeof(pats) / sizeof((pats)[0]), e)

/* OUT *fw: the rank's framework. Returns 0 or < 0 (e filled). */
static int framework_of(sqlite3 *db, int rank, const char *format, enum rules_framework *fw, struct err *e)
{
    int rc;
    *fw = RULES_PYTORCH;
    if (format && strncmp(format, "kineto", 6) == 0) return 0;
    /* Nsight traces CUDA applications, most of them C++ without PyTorch:
     * their advice is CUDA's unless the trace shows PyTorch */
    if (format && strcmp(format, "nsys") == 0) {
        if ((rc = PROBE(db, pytorch_names)) < 0) return rc;
        *fw = rc ? RULES_PYTORCH : RULES_CUDA;
        return 0;
    }
    if ((rc = facts_track_named(db, rank, jax_tracks, sizeof jax_tracks / sizeof jax_tracks[0], e)) < 0) return rc;
    *fw = rc ? RULES_JAX : RULES_PYTORCH;
    return 0;
}

/* OUT *training: 0 when the trace shows no backward pass and no optimizer
 * step (inference: BERT, OWLv2, vLLM decode), so no advice speaks of
 * learning rates, optimizers or loss scaling; 1 otherwise, and always for
 * a CUDA application, which says nothing either way. Names are run-wide:
 * the ranks of one job run the same program. */
static int training_of(sqlite3 *db, enum rules_framework fw, int *training, struct err *e)
{
    static const char *const torch_names[] = { "%Backward%", "Optimizer.%", "autograd::engine::%",
                                                "torch::autograd::AccumulateGrad%" };
    /* XLA names the ops of a gradient after the transformed function */
    static const char *const jax_names[] = { "%transpose(jvp(%", "train#%", "train\\_step%" };
    int rc;
    *training = 1;
    if (fw == RULES_CUDA) return 0;
    if ((rc = fw == RULES_JAX ? PROBE(db, jax_names) : PROBE(db, torch_names)) < 0) return rc;
    *training = rc;
    return 0;
}

/* torch.compile at work (Dynamo's compiled regions, AOTAutograd's
 * CompiledFunction): advice does not suggest compiling again. */
static const char *const compiled_names[] = { "Torch-Compiled Region%", "CompiledFunction%",
                                              "%CompiledFunctionBackward%" };
/* A CUDA/HIP graph being captured (vLLM's warm-up profiles): the launches
 * are recorded into the graph, not run. */
static const char *const capture_names[] = { "cudaStreamBeginCapture%", "hipStreamBeginCapture%",
                                             "%StreamGetCaptureInfo%", "cudaGraphInstantiate%",
                                             "hipGraphInstantiate%" };

const struct rules_advice *rules_advice_of(const struct rules_rank *r, const struct rules_advice *train,
                                           const struct rules_advice *infer)
{
    if (!r->training && infer && infer[r->framework].text) return &infer[r->framework];
    return &train[r->framework];
}

/* A graph capture is judged as such below this GPU utilization. */
#define CAPTURE_UTIL 0.01

/* Steps holding less than this in all (ns) are too short to judge. */
#define MIN_SPAN_NS 100000

/* A first step this many times the median of the others is warm-up. */
#define WARMUP_FACTOR 5

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int rules_warmup_first(const int64_t *dur, size_t n)
{
    if (n < 3) return 0;
    int64_t *d = xcalloc(n - 1, sizeof *d);
    memcpy(d, dur + 1, (n - 1) * sizeof *d);
    xqsort(d, n - 1, sizeof *d, cmp_i64);
    int64_t median = d[(n - 1) / 2];
    free(d);
    return median > 0 && dur[0] > WARMUP_FACTOR * median;
}

/* The job's world size in a rank's distributedInfo (JSON text or NULL); 0
 * when not given. */
static int world_size_of(const char *distributed)
{
    json_t *di = distributed ? json_loads(distributed, 0, NULL) : NULL;
    json_t *ws = json_object_get(di, "world_size");
    int n = json_is_integer(ws) ? (int)json_integer_value(ws) : 0;
    json_decref(di);
    return n;
}

/* How many ranks of the run report the same GPU as g (same id, name, size). */
static int sharing(const struct rules_ctx *ctx, const struct rules_gpu *g)
{
    int n = 0;
    for (size_t i = 0; i < ctx->nranks; i++)
        for (size_t j = 0; j < ctx->ranks[i].ngpus; j++) {
            const struct rules_gpu *o = &ctx->ranks[i].gpus[j];
            if (o->device == g->device && o->memory_bytes == g->memory_bytes && strcmp(o->name, g->name) == 0) n++;
        }
    return n > 0 ? n : 1;
}

/* The one GPU entry of a rank's peak_memory (keys are device ids, "cpu"
 * the host), NULL when there are none or several. */
static json_t *only_gpu_peak(json_t *peaks)
{
    const char *k;
    json_t *v, *found = NULL;
    int n = 0;
    json_object_foreach(peaks, k, v) {
        if (strcmp(k, "cpu") == 0) continue;
        found = v;
        n++;
    }
    return n == 1 ? found : NULL;
}

/* OUT *flag: the answer of a run-wide names probe. Returns 0 or < 0 (e
 * filled). */
static int flag_of(sqlite3 *db, const char *const *pats, size_t n, int *flag, struct err *e)
{
    int rc = facts_names_exist(db, FACTS_LIKE, pats, n, e);
    if (rc < 0) return rc;
    *flag = rc;
    return 0;
}
#define FLAG_OF(db, pats, flag) flag_of(db, pats, sizeof(pats) / sizeof((pats)[0]), flag, e)

static int load_rank(sqlite3 *db, struct rules_rank *r, const char *format, struct err *e)
{
    struct facts_step *fs;
    struct facts_gpu *fg;
    size_t n;
    int rc;
    if ((rc = framework_of(db, r->rank, format, &r->framework, e)) < 0) return rc;
    if ((rc = training_of(db, r->framework, &r->training, e)) < 0) return rc;
    if (r->framework == RULES_PYTORCH && (rc = FLAG_OF(db, compiled_names, &r->compiled)) < 0) return rc;
    if ((rc = FLAG_OF(db, capture_names, &r->capture)) < 0) return rc;

    if ((rc = facts_steps(db, r->rank, &fs, &n, e)) < 0) return rc;
    r->steps = n ? xcalloc(n, sizeof *r->steps) : NULL;
    r->nsteps = n;
    for (size_t i = 0; i < n; i++) {
        struct rules_step *s = &r->steps[i];
        snprintf(s->name, sizeof s->name, "%s", fs[i].name);
        s->ts = fs[i].ts;
        s->dur = fs[i].dur;
        s->host_ts = fs[i].host_ts;
        s->host_dur = fs[i].host_dur;
        memcpy(s->part, fs[i].part, sizeof s->part);
    }
    free(fs);
    /* A first step many times the others is warm-up (JIT compilation,
     * cuDNN autotuning, allocator growth: a JAX trace's first train step, a
     * PyTorch capture without a warm-up schedule): advice is about the
     * steady state, so the rules look at the steps after it. */
    size_t all_steps = r->nsteps;
    if (r->nsteps >= 3) {
        int64_t *d = xcalloc(r->nsteps, sizeof *d);
        for (size_t i = 0; i < r->nsteps; i++) d[i] = r->steps[i].dur;
        r->warmup_dropped = rules_warmup_first(d, r->nsteps);
        free(d);
        if (r->warmup_dropped) {
            memmove(r->steps, r->steps + 1, (r->nsteps - 1) * sizeof *r->steps);
            r->nsteps--;
        }
    }
    if (r->nsteps) {
        double sum = 0;
        for (size_t i = 0; i < r->nsteps; i++) {
            sum += (double)r->steps[i].dur;
            for (int k = 0; k < RULES_NPARTS; k++) r->avg_part[k] += (double)r->steps[i].part[k];
        }
        r->avg_dur = (int64_t)(sum / (double)r->nsteps);
        for (int k = 0; k < RULES_NPARTS; k++) r->avg_part[k] /= (double)r->nsteps;
    }

    /* the rank's process: ranks launched together on one host have
     * neighbouring process ids (shared_gpu) */
    if ((rc = facts_busiest_pid(db, r->rank, &r->pid, e)) < 0) return rc;

    /* the profiler's own cost: every operator it records */
    double calls;
    if ((rc = facts_op_calls(db, r->rank, &calls, e)) < 0) return rc;
    r->ops_per_step = calls / (double)(all_steps ? all_steps : 1);
    r->overhead_ns = r->ops_per_step * RULES_OP_OVERHEAD_NS;

    if ((rc = facts_summary(db, r->rank, &r->summary, e)) < 0) return rc;
    if (!r->summary) r->summary = json_object();

    if ((rc = facts_gpus(db, r->rank, &fg, &n, e)) < 0) return rc;
    r->gpus = n ? xcalloc(n, sizeof *r->gpus) : NULL;
    r->ngpus = n;
    for (size_t i = 0; i < n; i++) {
        struct rules_gpu *g = &r->gpus[i];
        g->device = fg[i].device;
        snprintf(g->name, sizeof g->name, "%s", fg[i].name);
        g->memory_bytes = fg[i].memory_bytes;
        g->cc = fg[i].cc;
        g->util = fg[i].util;
        g->tc_share = fg[i].tc_share;
        g->kernel_ns = fg[i].kernel_ns;
        g->tc_ns = fg[i].tc_ns;
        g->window_ns = fg[i].window_ns;
        char key[16];
        snprintf(key, sizeof key, "%d", g->device);
        json_t *pk = json_object_get(json_object_get(r->summary, "peak_memory"), key);
        g->peak_bytes = pk ? json_integer_value(json_object_get(pk, "bytes")) : -1;
        g->peak_reserved = json_integer_value(json_object_get(pk, "reserved"));
        g->peak_ts = json_integer_value(json_object_get(pk, "ts"));
        json_t *cu = json_object_get(json_object_get(r->summary, "compute_utilization"), key);
        g->compute_util = json_is_number(cu) ? json_number_value(cu) : -1;
    }
    free(fg);
    /* ROCm numbers the GPU of kernels by HSA agent (device 2) and that of
     * memory events from 0: one GPU each side is the same GPU */
    json_t *only = r->ngpus == 1 && r->gpus[0].peak_bytes < 0
                       ? only_gpu_peak(json_object_get(r->summary, "peak_memory")) : NULL;
    if (only) {
        r->gpus[0].peak_bytes = json_integer_value(json_object_get(only, "bytes"));
        r->gpus[0].peak_reserved = json_integer_value(json_object_get(only, "reserved"));
        r->gpus[0].peak_ts = json_integer_value(json_object_get(only, "ts"));
    }
    for (size_t i = 0; i < r->ngpus; i++)
        if (!r->gpu || r->gpus[i].kernel_ns > r->gpu->kernel_ns) r->gpu = &r->gpus[i];
    /* a capture whose GPU ran (almost) nothing is recording, not training:
     * a trace that captures and then replays keeps its findings */
    r->capture = r->capture && (!r->gpu || r->gpu->util < CAPTURE_UTIL);
    if (r->warmup_dropped && r->gpu && r->ngpus == 1) {
        /* utilization over the steady steps: the breakdown charges kernel
         * (and collective kernel) time first, so its kernel + communication
         * parts are the GPU's busy time there (communication may also hold
         * host collectives: an upper bound) */
        double busy = 0, span = 0, compute = 0;
        for (size_t i = 0; i < r->nsteps; i++) {
            busy += (double)(r->steps[i].part[RULES_KERNEL] + r->steps[i].part[RULES_COMM]);
            compute += (double)r->steps[i].part[RULES_KERNEL];
            span += (double)r->steps[i].dur;
        }
        struct rules_gpu *g = &r->gpus[0];
        if (span > 0) {
            g->util = busy / span;
            if (g->compute_util >= 0) g->compute_util = compute / span;
            g->window_ns = (int64_t)span;
        }
    }
    return 0;
}

/* c's held slices are read no more: its owner is told. */
static void held_release(struct rules_ctx *c)
{
    if (!c->held) return;
    c->held = NULL;
    if (c->held_done) c->held_done(c->held_arg);
}

int rules_launches(struct rules_ctx *c, const struct rules_rank *r, struct scan_launch **out, struct err *e)
{
    struct rules_rank *mine = &c->ranks[r - c->ranks];
    int rc;
    if (!mine->launch) {
        if ((rc = scan_launch_open(c->db, r->rank, &mine->launch, e)) != 0) return rc;
        size_t room = c->launch_rows < RULES_LAUNCH_ROWS ? RULES_LAUNCH_ROWS - c->launch_rows : 0;
        if (room > SCAN_LAUNCH_PRELOAD_MAX) room = SCAN_LAUNCH_PRELOAD_MAX;
        size_t aroom = c->act_rows < RULES_ACT_ROWS ? RULES_ACT_ROWS - c->act_rows : 0;
        if (c->held) scan_launch_hold(mine->launch, c->held);
        rc = scan_launch_preload(mine->launch, room, aroom, e);
        if (++c->npreloaded == c->nranks) held_release(c);
        if (rc < 0) return rc;
        const struct scan_slice *rows;
        const struct scan_brief *acts;
        size_t n;
        int64_t track;
        if (scan_launch_rows(mine->launch, &rows, &n)) c->launch_rows += n;
        for (size_t i = 0; scan_launch_acts(mine->launch, i, &track, &acts, &n); i++) c->act_rows += n;
    }
    *out = mine->launch;
    return 0;
}

struct gpuscan_hosts *rules_hosts_open(sqlite3 *db, const struct scan_launch *launch, struct gpuscan_names *nm)
{
    struct gpuscan_hosts *H = gpuscan_hosts_open(db, nm);
    const struct scan_brief *rows;
    size_t n;
    int64_t track;
    for (size_t i = 0; scan_launch_acts(launch, i, &track, &rows, &n); i++)
        gpuscan_hosts_hold(H, track, rows, n, sizeof *rows);
    return H;
}

/* ---------------------------------------------------------------------- */
/* Engine                                                                   */
/* ---------------------------------------------------------------------- */

/* The rule that gave finding f (its "id"), NULL when none does. */
static const struct rules_def *rule_of(json_t *f)
{
    const char *id = json_string_value(json_object_get(f, "id"));
    for (size_t k = 0; id && k < NRULES; k++)
        if (strcmp(registry[k]->id, id) == 0) return registry[k];
    return NULL;
}

/* A finding about the whole job rather than one rank's code: the run-level
 * ones (rank null: shared_gpu, ddp_backend) and those of a rule declared
 * run_level (a straggler, which every rank waits for). They come first, on
 * every rank's list. */
static int run_level(json_t *f)
{
    if (!json_is_integer(json_object_get(f, "rank"))) return 1;
    const struct rules_def *d = rule_of(f);
    return d ? d->run_level : 0;
}

static int cmp_finding(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int lx = run_level(x), ly = run_level(y);
    if (lx != ly) return ly - lx;
    double sx = json_real_value(json_object_get(x, "saving_us")), sy = json_real_value(json_object_get(y, "saving_us"));
    if (sx != sy) return sx > sy ? -1 : 1;
    int vx = 0, vy = 0;
    for (int k = 0; k < 3; k++) {
        if (strcmp(json_string_value(json_object_get(x, "severity")), severity_names[k]) == 0) vx = k;
        if (strcmp(json_string_value(json_object_get(y, "severity")), severity_names[k]) == 0) vy = k;
    }
    if (vx != vy) return vy - vx;
    return strcmp(json_string_value(json_object_get(x, "id")), json_string_value(json_object_get(y, "id")));
}

/* Orders the findings for display and replaces the stored ones by them. */
static int store(sqlite3 *db, json_t *findings, struct err *e)
{
    size_t n = json_array_size(findings);
    json_t **v = xcalloc(n ? n : 1, sizeof *v);
    struct findings_row *rows = xcalloc(n ? n : 1, sizeof *rows);
    for (size_t i = 0; i < n; i++) v[i] = json_array_get(findings, i);
    if (n) xqsort(v, n, sizeof *v, cmp_finding);
    for (size_t i = 0; i < n; i++) {
        json_t *rank = json_object_get(v[i], "rank");
        /* the table's rank selects whose lists show it: a run-level
         * finding shows on all of them (its body keeps its rank) */
        rows[i].rank = json_is_integer(rank) && !run_level(v[i]) ? (int)json_integer_value(rank) : -1;
        rows[i].id = json_string_value(json_object_get(v[i], "id"));
        rows[i].severity = json_string_value(json_object_get(v[i], "severity"));
        rows[i].saving_ns = llround(json_real_value(json_object_get(v[i], "saving_us")) * 1000);
        rows[i].body = json_dumps(v[i], JSON_COMPACT | JSON_REAL_PRECISION(10));
    }
    int rc = findings_replace(db, rows, n, e);
    for (size_t i = 0; i < n; i++) free((char *)rows[i].body);
    free(rows);
    free(v);
    return rc;
}

int rules_config_register(struct err *e)
{
    for (size_t k = 0; k < NRULES; k++)
        if (registry[k]->nparams && config_register(registry[k]->params, registry[k]->nparams, e) != 0)
            return err_prefix(e, "rule %s", registry[k]->id);
    return 0;
}

double rules_param(const struct rules_ctx *ctx, const char *key)
{
    for (size_t k = 0; k < NRULES; k++)
        for (size_t i = 0; i < registry[k]->nparams; i++)
            if (strcmp(registry[k]->params[i].key, key) == 0)
                return config_param_value(ctx->cfg, &registry[k]->params[i]);
    LOG_ERROR("rule threshold '%s' is declared by no rule", key);
    assert(!"undeclared rule threshold");
    return NAN;
}

int rules_run(sqlite3 *db, const struct config_rules *cfg, struct err *e)
{
    return rules_run_held(db, cfg, NULL, NULL, NULL, e);
}

int rules_run_held(sqlite3 *db, const struct config_rules *cfg, const struct scan_held *held,
                   void (*held_done)(void *arg), void *arg, struct err *e)
{
    struct rules_ctx ctx = { .db = db, .cfg = cfg, .findings = json_array(), .held = held, .held_done = held_done,
                             .held_arg = arg };
    struct facts_rank *fr = NULL;
    size_t nfr = 0;
    int rc = 0;

    if ((rc = findings_ensure(db, e)) < 0 || (rc = facts_ranks(db, &fr, &nfr, e)) < 0) goto out;
    ctx.ranks = xcalloc(nfr ? nfr : 1, sizeof *ctx.ranks);
    for (size_t i = 0; i < nfr; i++) {
        struct rules_rank *r = &ctx.ranks[ctx.nranks++];
        r->rank = fr[i].rank;
        r->world_size = world_size_of(fr[i].distributed);
        if ((rc = load_rank(db, r, fr[i].format, e)) != 0) goto out;
    }
    for (size_t i = 0; i < ctx.nranks; i++)
        for (size_t j = 0; j < ctx.ranks[i].ngpus; j++) ctx.ranks[i].gpus[j].nshare = sharing(&ctx, &ctx.ranks[i].gpus[j]);
    /* A rank whose steps hold a few µs in all (Kineto's documentation
     * samples: one 0.02 µs kernel in a 0.13 µs window) cannot be judged:
     * every share of it is noise, so no rule looks at it. */
    size_t kept = 0;
    for (size_t i = 0; i < ctx.nranks; i++) {
        struct rules_rank *r = &ctx.ranks[i];
        int64_t span = 0;
        for (size_t k = 0; k < r->nsteps; k++) span += r->steps[k].dur;
        if (r->nsteps && span < MIN_SPAN_NS) {
            free(r->steps);
            free(r->gpus);
            json_decref(r->summary);
            continue;
        }
        ctx.ranks[kept++] = *r;
    }
    ctx.nranks = kept;

    for (const char *p = cfg->off; *p;) { /* a typo in rules_off must not pass silently */
        p += strspn(p, ", ");
        size_t m = strcspn(p, ", "), k;
        for (k = 0; k < NRULES; k++)
            if (strlen(registry[k]->id) == m && memcmp(registry[k]->id, p, m) == 0) break;
        if (m && k == NRULES) LOG_WARN("rules_off names an unknown rule '%.*s'", (int)m, p);
        p += m;
    }
    for (size_t k = 0; k < NRULES; k++) {
        if (listed(cfg->off, registry[k]->id)) continue;
        double t = log_now_s();
        if ((rc = registry[k]->run(&ctx, e)) != 0) {
            err_prefix(e, "rule %s", registry[k]->id);
            goto out;
        }
        LOG_DEBUG("rule %s took %.3f s", registry[k]->id, log_now_s() - t);
    }
    rc = store(db, ctx.findings, e);
out:
    held_release(&ctx); /* no rank's launches were asked for, or a failure */
    facts_ranks_free(fr, nfr);
    ranks_free(ctx.ranks, ctx.nranks);
    json_decref(ctx.findings);
    return rc;
}

int rules_adopt(sqlite3 *db, struct err *e)
{
    int rc = findings_adopt(db, e);
    return rc ? rc : rules_cap(db, e);
}

int rules_cap(sqlite3 *db, struct err *e)
{
    json_t *findings = NULL, *f;
    struct rules_cap_path *paths = NULL;
    size_t npaths = 0, i;
    int rc = findings_read(db, -1, &findings, e), capped = 0;
    if (rc == 0) rc = rules_cap_paths(db, &paths, &npaths, e);
    json_array_foreach(rc == 0 ? findings : NULL, i, f) {
        const struct rules_def *d = rule_of(f);
        if (d) capped += rules_cap_finding(f, d->side, paths, npaths);
    }
    if (rc == 0 && capped) {
        rules_cap_causes(findings);
        rc = store(db, findings, e);
    }
    free(paths);
    json_decref(findings);
    return rc;
}

int rules_findings(sqlite3 *db, int rank, json_t **out, struct err *e)
{
    return findings_read(db, rank, out, e);
}

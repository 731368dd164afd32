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
#include "store/rundb.h"
#include "store/model.h"
#include "store/scan.h"

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS finding(rank INTEGER, ord INTEGER, id TEXT, severity TEXT,"
    " saving_ns INTEGER, body TEXT);";

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
    sqlite3_stmt *st;
    size_t wc = 0, cc = 0;
    for (size_t i = 0; i < nw; i++) {
        if (comm_ns) comm_ns[i] = ivlist_len_in(comm, w[i].a, w[i].b, &cc);
        comp_ns[i] = ovl_ns[i] = 0;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT ts, dur FROM slice WHERE id BETWEEN ?1 AND ?2 AND kind = ?4"
                           " AND track IN (SELECT id FROM track WHERE rank = ?3 AND kind = ?5)"
                           " AND name NOT IN (SELECT id FROM str WHERE s IN (SELECT name FROM kernel_stat WHERE comm))"
                           " ORDER BY ts",
                           -1, &st, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "rules (compute kernels)");
    sqlite3_bind_int64(st, 1, lo);
    sqlite3_bind_int64(st, 2, hi);
    sqlite3_bind_int(st, 3, rank);
    sqlite3_bind_int(st, 4, TB_K_KERNEL);
    sqlite3_bind_int(st, 5, TB_TRACK_GPU);
    int64_t a = 0, b = INT64_MIN;
    int rc;
    cc = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(st, 0), end = ts + sqlite3_column_int64(st, 1);
        if (ts <= b) {
            if (end > b) b = end;
            continue;
        }
        if (b > a) overlap_add(w, nw, &wc, comm, &cc, a, b, comp_ns, ovl_ns);
        a = ts, b = end;
    }
    if (b > a) overlap_add(w, nw, &wc, comm, &cc, a, b, comp_ns, ovl_ns);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, "rules (compute kernels)");
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
int rules_exists(sqlite3 *db, const char *sql, int rank, struct err *e)
{
    sqlite3_stmt *st;
    int rc = rundb_prepare(db, sql, &st, e);
    if (rc) return rc;
    if (rank >= 0) sqlite3_bind_int(st, 1, rank);
    rc = scan_step(st, e, "rules (probe)");
    if (rc == 1) rc = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    return rc;
}

/* OUT *fw: the rank's framework. Returns 0 or < 0 (e filled). */
static int framework_of(sqlite3 *db, int rank, const char *format, enum rules_framework *fw, struct err *e)
{
    static const char *const pytorch_probe =
        "SELECT EXISTS(SELECT 1 FROM str WHERE s LIKE 'aten::%' OR s LIKE '%at::native::%'"
        " OR s LIKE 'enumerate(DataLoader)#%' OR s LIKE 'enumerate(DataPipe)#%')";
    static const char *const jax_probe =
        "SELECT EXISTS(SELECT 1 FROM track t WHERE t.rank = ? AND (t.name LIKE '%XLA%' OR t.name LIKE '/device:%'"
        " OR t.name LIKE '%TPU%'))";
    int rc;
    *fw = RULES_PYTORCH;
    if (format && strncmp(format, "kineto", 6) == 0) return 0;
    /* Nsight traces CUDA applications, most of them C++ without PyTorch:
     * their advice is CUDA's unless the trace shows PyTorch */
    if (format && strcmp(format, "nsys") == 0) {
        if ((rc = rules_exists(db, pytorch_probe, -1, e)) < 0) return rc;
        *fw = rc ? RULES_PYTORCH : RULES_CUDA;
        return 0;
    }
    if ((rc = rules_exists(db, jax_probe, rank, e)) < 0) return rc;
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
    static const char *const torch_probe =
        "SELECT EXISTS(SELECT 1 FROM str WHERE s LIKE '%Backward%' OR s LIKE 'Optimizer.%'"
        " OR s LIKE 'autograd::engine::%' OR s LIKE 'torch::autograd::AccumulateGrad%')";
    /* XLA names the ops of a gradient after the transformed function */
    static const char *const jax_probe =
        "SELECT EXISTS(SELECT 1 FROM str WHERE s LIKE '%transpose(jvp(%' OR s LIKE 'train#%'"
        " OR s LIKE 'train!_step%' ESCAPE '!')";
    int rc;
    *training = 1;
    if (fw == RULES_CUDA) return 0;
    if ((rc = rules_exists(db, fw == RULES_JAX ? jax_probe : torch_probe, -1, e)) < 0) return rc;
    *training = rc;
    return 0;
}

/* torch.compile at work (Dynamo's compiled regions, AOTAutograd's
 * CompiledFunction): advice does not suggest compiling again. */
static const char compiled_probe[] =
    "SELECT EXISTS(SELECT 1 FROM str WHERE s LIKE 'Torch-Compiled Region%' OR s LIKE 'CompiledFunction%'"
    " OR s LIKE '%CompiledFunctionBackward%')";
/* A CUDA/HIP graph being captured (vLLM's warm-up profiles): the launches
 * are recorded into the graph, not run. */
static const char capture_probe[] =
    "SELECT EXISTS(SELECT 1 FROM str WHERE s LIKE 'cudaStreamBeginCapture%' OR s LIKE 'hipStreamBeginCapture%'"
    " OR s LIKE '%StreamGetCaptureInfo%' OR s LIKE 'cudaGraphInstantiate%' OR s LIKE 'hipGraphInstantiate%')";

/* OUT *flag: the answer of a run-wide probe. Returns 0 or < 0 (e filled). */
static int flag_of(sqlite3 *db, const char *probe, int *flag, struct err *e)
{
    int rc = rules_exists(db, probe, -1, e);
    if (rc < 0) return rc;
    *flag = rc;
    return 0;
}

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

static int load_rank(sqlite3 *db, struct rules_rank *r, const char *format, struct err *e)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc;
    if ((rc = framework_of(db, r->rank, format, &r->framework, e)) < 0) return rc;
    if ((rc = training_of(db, r->framework, &r->training, e)) < 0) return rc;
    if (r->framework == RULES_PYTORCH && (rc = flag_of(db, compiled_probe, &r->compiled, e)) < 0) return rc;
    if ((rc = flag_of(db, capture_probe, &r->capture, e)) < 0) return rc;

    if (sqlite3_prepare_v2(db,
                           "SELECT name, ts, dur, host_ts, host_dur, kernel, memcpy, memset, comm, runtime,"
                           " dataloader, cpu_exec, other FROM step WHERE rank = ? ORDER BY idx",
                           -1, &st, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "rules (steps)");
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = scan_step(st, e, "rules (steps)")) == 1) {
        if (r->nsteps == cap) r->steps = xrealloc(r->steps, (cap = cap ? cap * 2 : 16) * sizeof *r->steps);
        struct rules_step *s = &r->steps[r->nsteps++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0) : "");
        s->ts = sqlite3_column_int64(st, 1);
        s->dur = sqlite3_column_int64(st, 2);
        s->host_ts = sqlite3_column_int64(st, 3);
        s->host_dur = sqlite3_column_int64(st, 4);
        for (int k = 0; k < RULES_NPARTS; k++) s->part[k] = sqlite3_column_int64(st, 5 + k);
    }
    sqlite3_finalize(st);
    if (rc < 0) return rc;
    /* A first step many times the others is warm-up (JIT compilation,
     * cuDNN autotuning, allocator growth: a JAX trace's first train step, a
     * PyTorch capture without a warm-up schedule): advice is about the
     * steady state, so the rules look at the steps after it. */
    size_t all_steps = r->nsteps;
    if (r->nsteps >= 3) {
        int64_t *d = xcalloc(r->nsteps - 1, sizeof *d);
        for (size_t i = 1; i < r->nsteps; i++) d[i - 1] = r->steps[i].dur;
        xqsort(d, r->nsteps - 1, sizeof *d, cmp_i64);
        int64_t median = d[(r->nsteps - 1) / 2];
        free(d);
        if (median > 0 && r->steps[0].dur > WARMUP_FACTOR * median) {
            memmove(r->steps, r->steps + 1, (r->nsteps - 1) * sizeof *r->steps);
            r->nsteps--;
            r->warmup_dropped = 1;
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
    r->pid = -1;
    if (sqlite3_prepare_v2(db,
                           "SELECT pid FROM track WHERE rank = ? AND kind = ? GROUP BY pid ORDER BY sum(nslices) DESC"
                           " LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "rules (process)");
    sqlite3_bind_int(st, 1, r->rank);
    sqlite3_bind_int(st, 2, TB_TRACK_CPU);
    if ((rc = scan_step(st, e, "rules (process)")) == 1 && sqlite3_column_text(st, 0)) {
        char *end;
        const char *p = (const char *)sqlite3_column_text(st, 0);
        long v = strtol(p, &end, 10);
        if (end != p && !*end && v >= 0) r->pid = v;
    }
    sqlite3_finalize(st);
    if (rc < 0) return rc;

    /* the profiler's own cost: every operator it records */
    if (sqlite3_prepare_v2(db, "SELECT sum(calls) FROM op_stat WHERE rank = ?", -1, &st, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "rules (operators)");
    sqlite3_bind_int(st, 1, r->rank);
    if ((rc = scan_step(st, e, "rules (operators)")) == 1)
        r->ops_per_step = sqlite3_column_double(st, 0) / (double)(all_steps ? all_steps : 1);
    sqlite3_finalize(st);
    if (rc < 0) return rc;
    r->overhead_ns = r->ops_per_step * RULES_OP_OVERHEAD_NS;

    if (sqlite3_prepare_v2(db, "SELECT summary FROM analysis WHERE rank = ?", -1, &st, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "rules (summary)");
    sqlite3_bind_int(st, 1, r->rank);
    if ((rc = scan_step(st, e, "rules (summary)")) == 1 && sqlite3_column_text(st, 0))
        r->summary = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    sqlite3_finalize(st);
    if (rc < 0) return rc;
    if (!r->summary) r->summary = json_object();

    cap = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT device, name, memory_bytes, cc, util, tc_share, kernel_ns, tc_ns, window_ns"
                           " FROM gpu WHERE rank = ? ORDER BY device",
                           -1, &st, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "rules (gpus)");
    sqlite3_bind_int(st, 1, r->rank);
    while ((rc = scan_step(st, e, "rules (gpus)")) == 1) {
        if (r->ngpus == cap) r->gpus = xrealloc(r->gpus, (cap = cap ? cap * 2 : 4) * sizeof *r->gpus);
        struct rules_gpu *g = &r->gpus[r->ngpus++];
        memset(g, 0, sizeof *g);
        g->device = sqlite3_column_int(st, 0);
        snprintf(g->name, sizeof g->name, "%s", sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "");
        g->memory_bytes = sqlite3_column_int64(st, 2);
        g->cc = sqlite3_column_text(st, 3) ? atof((const char *)sqlite3_column_text(st, 3)) : 0;
        g->util = sqlite3_column_double(st, 4);
        g->tc_share = sqlite3_column_double(st, 5);
        g->kernel_ns = sqlite3_column_int64(st, 6);
        g->tc_ns = sqlite3_column_int64(st, 7);
        g->window_ns = sqlite3_column_int64(st, 8);
        char key[16];
        snprintf(key, sizeof key, "%d", g->device);
        json_t *pk = json_object_get(json_object_get(r->summary, "peak_memory"), key);
        g->peak_bytes = pk ? json_integer_value(json_object_get(pk, "bytes")) : -1;
        g->peak_reserved = json_integer_value(json_object_get(pk, "reserved"));
        g->peak_ts = json_integer_value(json_object_get(pk, "ts"));
        json_t *cu = json_object_get(json_object_get(r->summary, "compute_utilization"), key);
        g->compute_util = json_is_number(cu) ? json_number_value(cu) : -1;
    }
    sqlite3_finalize(st);
    if (rc < 0) return rc;
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

/* ---------------------------------------------------------------------- */
/* Engine                                                                   */
/* ---------------------------------------------------------------------- */

/* A finding about the whole job rather than one rank's code: the run-level
 * ones (rank null: shared_gpu, ddp_backend) and a straggler, which every
 * rank waits for. They come first, on every rank's list. */
static int run_level(json_t *f)
{
    return !json_is_integer(json_object_get(f, "rank")) ||
           strcmp(json_string_value(json_object_get(f, "id")), "straggler") == 0;
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

static int store(sqlite3 *db, json_t *findings, struct err *e)
{
    sqlite3_stmt *st = NULL;
    size_t n = json_array_size(findings);
    json_t **v = xcalloc(n ? n : 1, sizeof *v);
    int rc = 0;
    for (size_t i = 0; i < n; i++) v[i] = json_array_get(findings, i);
    if (n) xqsort(v, n, sizeof *v, cmp_finding);
    if (sqlite3_exec(db, "DELETE FROM finding", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO finding(rank, ord, id, severity, saving_ns, body) VALUES(?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "rules (store)");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *rank = json_object_get(v[i], "rank");
        char *body = json_dumps(v[i], JSON_COMPACT | JSON_REAL_PRECISION(10));
        sqlite3_reset(st);
        /* the table's rank selects whose lists show it: a run-level
         * finding shows on all of them (its body keeps its rank) */
        if (json_is_integer(rank) && !run_level(v[i])) sqlite3_bind_int64(st, 1, json_integer_value(rank));
        else sqlite3_bind_null(st, 1);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_text(st, 3, json_string_value(json_object_get(v[i], "id")), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, json_string_value(json_object_get(v[i], "severity")), -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)llround(json_real_value(json_object_get(v[i], "saving_us")) * 1000));
        sqlite3_bind_text(st, 6, body, -1, free);
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = rundb_db_error(db, e, "rules (store)");
            goto out;
        }
    }
out:
    sqlite3_finalize(st);
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
    struct rules_ctx ctx = { db, cfg, NULL, 0, json_array() };
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = 0;

    if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "rules (schema)");
        goto out;
    }
    if (sqlite3_prepare_v2(db, "SELECT rank, format, distributed FROM rank ORDER BY rank", -1, &st, NULL) !=
        SQLITE_OK) {
        rc = rundb_db_error(db, e, "rules (ranks)");
        goto out;
    }
    while ((rc = scan_step(st, e, "rules (ranks)")) == 1) {
        if (ctx.nranks == cap) ctx.ranks = xrealloc(ctx.ranks, (cap = cap ? cap * 2 : 8) * sizeof *ctx.ranks);
        struct rules_rank *r = &ctx.ranks[ctx.nranks++];
        memset(r, 0, sizeof *r);
        r->rank = sqlite3_column_int(st, 0);
        r->world_size = world_size_of((const char *)sqlite3_column_text(st, 2));
        if ((rc = load_rank(db, r, (const char *)sqlite3_column_text(st, 1), e)) != 0) goto out;
    }
    if (rc < 0) goto out;
    sqlite3_finalize(st);
    st = NULL;
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
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "rules (begin)");
        goto out;
    }
    rc = store(db, ctx.findings, e);
    if (sqlite3_exec(db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !rc)
        rc = rundb_db_error(db, e, "rules (commit)");
out:
    sqlite3_finalize(st);
    ranks_free(ctx.ranks, ctx.nranks);
    json_decref(ctx.findings);
    return rc;
}

int rules_adopt(sqlite3 *db, struct err *e)
{
    err_clear(e);
    if (sqlite3_exec(db, "BEGIN; DROP TABLE IF EXISTS main.finding", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "INSERT INTO main.finding SELECT * FROM " RUNDB_ASIDE ".finding; COMMIT", NULL, NULL, NULL) !=
            SQLITE_OK) {
        rundb_db_error(db, e, "rules (adopt)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    return e->code;
}

int rules_findings(sqlite3 *db, int rank, json_t **out, struct err *e)
{
    sqlite3_stmt *st = NULL;
    *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT body FROM finding WHERE ? < 0 OR rank IS NULL OR rank = ? ORDER BY ord", -1,
                           &st, NULL) != SQLITE_OK) {
        if (strstr(sqlite3_errmsg(db), "no such table"))
            return err_set(e, ERR_INVALID, "this run was imported before recommendations existed; re-import it");
        return rundb_db_error(db, e, "rules (findings)");
    }
    sqlite3_bind_int(st, 1, rank);
    sqlite3_bind_int(st, 2, rank);
    json_t *arr = json_array();
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *f = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
        if (f) json_array_append_new(arr, f);
    }
    sqlite3_finalize(st);
    if (src != SQLITE_DONE) {
        json_decref(arr);
        return rundb_db_error(db, e, "rules (findings)");
    }
    *out = arr;
    return 0;
}

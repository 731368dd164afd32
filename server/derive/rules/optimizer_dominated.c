/* optimizer_dominated — the optimizer step owns a large share of the GPU's
 * kernel time and runs unfused: torch.optim's default foreach path issues
 * about ten _foreach_* kernels per parameter chunk for Adam(W), and
 * foreach=False one small kernel per parameter per operation, each a full
 * pass over the optimizer state in memory. fused=True does the update in
 * one pass (and far fewer launches).
 *
 * The optimizer's time is attributed through the host spans PyTorch
 * records around every step (`Optimizer.step#<Class>.step`): the launch
 * calls inside each span on its thread, and the kernels those launched (by
 * correlation id; store/scan_span.h). Spans are counted when they start
 * inside a step (or everywhere when the trace has none). A span that shows
 * a fused or compiled optimizer (aten::_fused_*, a compiled region) means
 * there is nothing to advise. Saving: the share of the optimizer's kernel
 * time a fused update removes (a floor: fusing also removes most launches). */
#include <stdio.h>
#include <string.h>

#include "base/hmap.h"
#include "base/xmalloc.h"
#include "derive/rules.h"
#include "store/model.h"
#include "store/scan.h"
#include "store/scan_span.h"

/* fused=True against foreach (one pass over the state instead of ~5 for
 * Adam) and against a per-parameter loop (also thousands of tiny kernels). */
#define SAVED_FOREACH 0.5
#define SAVED_LOOP 0.8

static const char advice_torch[] =
    "Fuse the optimizer step: construct the optimizer with fused=True (Adam, AdamW, SGD, Adagrad on CUDA), "
    "which updates every parameter in a single pass over the optimizer state; where fused is not available "
    "use foreach=True, or compile the step with torch.compile. Keeping parameters in fewer, larger tensors "
    "(flattened buckets, as FSDP does) also cuts the per-tensor overhead.";
static const char snippet_torch[] =
    "opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)\n"
    "# or, for an optimizer without a fused kernel:\n"
    "@torch.compile(fullgraph=False)\n"
    "def opt_step():\n"
    "    opt.step()";

static const struct rules_advice advice[RULES_NFRAMEWORKS] = {
    [RULES_PYTORCH] = { advice_torch, snippet_torch },
};

struct opt_time {
    int64_t kernel_ns, host_ns, kernels, spans;
    int foreach, fused;
    char cls[64]; /* "AdamW" of Optimizer.step#AdamW.step */
    struct hmap names; /* str id -> name_flags: a per-parameter loop repeats a few names 100 k times */
    int64_t *corr;     /* the launch calls inside the spans (correlation ids) */
    size_t ncorr, ccap;
};

enum { N_FUSED = 1, N_FOREACH = 2 };

/* What an operator's name says of the update: N_FUSED, N_FOREACH or 0.
 * Returns the flags or < 0 (e filled). */
static int name_flags(struct scan_span *c, struct opt_time *t, uint32_t id, struct err *e)
{
    uint8_t *v = hmap_get(&t->names, hmap_hash_u64(id), &id, sizeof id);
    if (v) return *v;
    const char *name;
    int nr = scan_span_name(c, id, &name, e), f = 0;
    if (nr < 0) return nr;
    if (nr == 1 && (strstr(name, "_fused_") || strstr(name, "Compiled") || strstr(name, "compiled"))) f |= N_FUSED;
    if (nr == 1 && strncmp(name, "aten::_foreach_", 15) == 0) f |= N_FOREACH;
    *(uint8_t *)hmap_put(&t->names, hmap_hash_u64(id), &id, sizeof id, NULL) = (uint8_t)f;
    return f;
}

/* Adds one Optimizer.step span to t: its host time, what its operators'
 * names say, and the correlation ids of its launch calls. */
static int span_time(struct scan_span *c, const struct scan_slice *span, struct opt_time *t, struct err *e)
{
    struct scan_slice in;
    int rc;
    t->host_ns += span->dur;
    t->spans++;
    if ((rc = scan_span_inside_begin(c, span, e)) != 0) return rc;
    while ((rc = scan_span_inside_next(c, &in, e)) == 1) {
        if (in.kind == TB_K_CPU_OP && !t->fused) {
            int f = name_flags(c, t, in.name, e);
            if (f < 0) {
                rc = f;
                break;
            }
            if (f & N_FUSED) t->fused = 1;
            if (f & N_FOREACH) t->foreach = 1;
        } else if ((in.kind == TB_K_RUNTIME || in.kind == TB_K_DRIVER) && in.corr) {
            if (t->ncorr == t->ccap) t->corr = xrealloc(t->corr, (t->ccap = t->ccap ? t->ccap * 2 : 64) * sizeof *t->corr);
            t->corr[t->ncorr++] = in.corr;
        }
    }
    return rc < 0 ? rc : 0;
}

/* From this many launches on, the kernels they started are found in one
 * pass over the rank's kernels instead of one indexed lookup each. */
#define SCAN_FROM 4096

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The kernels t->corr launched (a launch listed twice counts twice), added
 * to t. */
static int kernels_of(sqlite3 *db, struct scan_span *c, int rank, struct opt_time *t, struct err *e)
{
    struct scan_slice op;
    int rc = 0;
    if (t->ncorr < SCAN_FROM) {
        for (size_t i = 0; rc == 0 && i < t->ncorr; i++) {
            if ((rc = scan_span_ops_begin(c, t->corr[i], e)) != 0) break;
            while ((rc = scan_span_ops_next(c, &op, e)) == 1) {
                if (op.kind != TB_K_KERNEL) continue;
                t->kernel_ns += op.dur;
                t->kernels++;
            }
        }
        return rc < 0 ? rc : 0;
    }
    struct scan_slices *k;
    xqsort(t->corr, t->ncorr, sizeof *t->corr, cmp_i64);
    if ((rc = scan_slices_open(db, rank, SCAN_TRACKS_GPU, SCAN_KIND(TB_K_KERNEL), &k, e)) != 0) return rc;
    while ((rc = scan_slices_next(k, &op, e)) == 1) {
        if (!op.corr) continue;
        size_t lo = 0, hi = t->ncorr;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (t->corr[mid] < op.corr) lo = mid + 1;
            else hi = mid;
        }
        for (; lo < t->ncorr && t->corr[lo] == op.corr; lo++) {
            t->kernel_ns += op.dur;
            t->kernels++;
        }
    }
    scan_slices_close(k);
    return rc < 0 ? rc : 0;
}

static int rank_time(sqlite3 *db, struct scan_span *c, const struct rules_rank *r, struct opt_time *t, struct err *e)
{
    struct scan_slice span;
    int rc;
    const char *name;
    if ((rc = scan_span_named_begin(c, "Optimizer.step#", e)) != 0) return rc;
    /* the spans first: span_time reuses the cursor's other statements, not
     * this one, but the names are read with c's str statement */
    struct scan_slice *spans = NULL;
    size_t n = 0, cap = 0;
    while ((rc = scan_span_named_next(c, &span, e)) == 1) {
        if (r->nsteps && rules_step_at(r, span.ts) < 0) continue;
        if (n == cap) spans = xrealloc(spans, (cap = cap ? cap * 2 : 16) * sizeof *spans);
        spans[n++] = span;
    }
    if (rc == 0 && n && (rc = scan_span_name(c, spans[0].name, &name, e)) == 1) {
        /* Optimizer.step#AdamW.step -> AdamW */
        const char *a = name + strlen("Optimizer.step#"), *b = strchr(a, '.');
        snprintf(t->cls, sizeof t->cls, "%.*s", (int)(b ? b - a : (long)strlen(a)), a);
        rc = 0;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) rc = span_time(c, &spans[i], t, e);
    free(spans);
    /* a fused update has nothing to advise: its kernels are not counted */
    if (rc == 0 && !t->fused) rc = kernels_of(db, c, r->rank, t, e);
    return rc < 0 ? rc : 0;
}

static int run(struct rules_ctx *ctx, struct err *e)
{
    const double share_pct = rules_param(ctx, "rule_optimizer_pct");
    int rc = 0;
    for (size_t ri = 0; ri < ctx->nranks && rc == 0; ri++) {
        const struct rules_rank *r = &ctx->ranks[ri];
        struct scan_span *c;
        struct opt_time t = { 0 };
        hmap_init(&t.names, 1, 64);
        if (r->framework != RULES_PYTORCH) continue;
        int64_t kern = 0;
        for (size_t g = 0; g < r->ngpus; g++) kern += r->gpus[g].kernel_ns;
        if (kern <= 0) continue;
        if ((rc = scan_span_open(ctx->db, r->rank, &c, e)) != 0) break;
        rc = rank_time(ctx->db, c, r, &t, e);
        scan_span_close(c);
        hmap_free(&t.names, NULL);
        free(t.corr);
        if (rc || t.fused || t.kernel_ns <= 0) continue;
        double pct = (double)t.kernel_ns / (double)kern * 100.0;
        if (pct <= share_pct) continue;
        double steps = r->nsteps ? (double)r->nsteps : 1;
        double per_step = (double)t.kernel_ns / steps;
        double saving = per_step * (t.foreach ? SAVED_FOREACH : SAVED_LOOP);
        double step_pct = r->avg_dur > 0 ? saving / (double)r->avg_dur * 100.0 : 0;
        char a[32], b[32], line[320];
        json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:I,s:s,s:b}", "lines", "optimizer_kernel_us",
                               (double)t.kernel_ns / 1000.0, "kernel_us", (double)kern / 1000.0, "optimizer_pct", pct,
                               "kernels", (json_int_t)t.kernels, "optimizer", t.cls, "foreach", t.foreach);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line, "Optimizer.step (%s): %s of %s GPU kernel time (%.0f %%) in %lld kernels",
                 t.cls[0] ? t.cls : "?", rules_fmt_ns((double)t.kernel_ns, a, sizeof a),
                 rules_fmt_ns((double)kern, b, sizeof b), pct, (long long)t.kernels);
        json_array_append_new(lines, json_string(line));
        snprintf(line, sizeof line, "Per step: %s of optimizer kernels, %.0f launches, %s on the host",
                 rules_fmt_ns(per_step, a, sizeof a), (double)t.kernels / steps,
                 rules_fmt_ns((double)t.host_ns / steps, b, sizeof b));
        json_array_append_new(lines, json_string(line));
        json_array_append_new(lines, json_string(t.foreach ? "The update runs the multi-tensor (foreach) path, not fused"
                                                           : "The update loops over the parameters one by one "
                                                             "(foreach=False)"));
        enum rules_severity sev = step_pct >= 10 ? RULES_HIGH : step_pct >= 3 ? RULES_MEDIUM : RULES_LOW;
        char link[96];
        snprintf(link, sizeof link, "view=operators&rank=%d&q=_foreach_", r->rank);
        rules_add(ctx, &rule_optimizer_dominated, sev, r->rank, saving, ev, link, advice[RULES_PYTORCH].text,
                  advice[RULES_PYTORCH].snippet, "Optimizer step: %.0f %% of GPU kernel time is an unfused %s update",
                  pct, t.cls[0] ? t.cls : "optimizer");
    }
    return rc;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_optimizer_pct", "25", "%", 0, 100,
      "optimizer_dominated: unfused optimizer kernels above this % of kernel time." },
};

const struct rules_def rule_optimizer_dominated = {
    "optimizer_dominated",
    "https://pytorch.org/docs/stable/optim.html#algorithms",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_GPU,
};

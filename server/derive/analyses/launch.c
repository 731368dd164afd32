/* analyses/launch.c — kernel launch statistics (see include/derive/analyses.h).
 *
 * HTA's get_cuda_kernel_launch_stats with include_memory_events=True: every
 * launch call with a GPU partner whose ts lies in the steps' window
 * [c->w0, c->w1) gives one row (a call launching several ops, such as a
 * graph launch, counts once, with its first op):
 *   cpu_ns   = the launch call's duration,
 *   gpu_ns   = its op's duration,
 *   delay_ns = max(0, op.ts - launch end).
 * HTA's mask of launch calls (cudaLaunchKernel, cudaLaunchKernelExC,
 * cudaMemcpyAsync, cudaMemsetAsync) is widened to every runtime or driver
 * call with a partner, so Triton's cuLaunchKernel and graph launches count.
 *
 * Output object (times ns; mean and quantiles may be fractional):
 *   {"count": rows, "kernels": rows whose op is a kernel, "memory": the rest
 *    (memcpy/memset),
 *    "cpu_ns" | "gpu_ns" | "delay_ns": {"mean", "p50", "p95", "max",
 *        "total"} over all rows,
 *    "kernels_only": {"cpu_ns", "gpu_ns", "delay_ns"} the same over kernels,
 *    "short_kernels": rows with cpu <= 50 µs and gpu < cpu (the GPU work is
 *        shorter than the call that launched it), "short_share": of count,
 *    "runtime_cutoff_ns": 50000, "delay_cutoff_ns": 100000,
 *    "runtime_outliers": rows with cpu > cutoff, "delay_outliers": rows with
 *        delay > cutoff,
 *    "outliers": [up to 50 of them, largest excess over its cutoff first:
 *        {"ts": launch ts, "kernel": op name, "op": innermost operator
 *         ("" none), "launch": runtime call, "cpu_ns", "gpu_ns", "delay_ns",
 *         "stream": track id, "why": "runtime" | "delay" | "both"}]}
 * Quantiles interpolate linearly between order statistics (as pandas).
 *
 * Cost: one metric of the window's launches at a time (8 bytes each, for its
 * quantiles) and the TOP_OUTLIERS largest outliers; names are read for the
 * listed outliers only.
 */
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/analyses.h"
#include "store/model.h"

#define RUNTIME_CUTOFF_NS 50000
#define DELAY_CUTOFF_NS 100000
#define TOP_OUTLIERS 50

enum { M_CPU, M_GPU, M_DELAY, NM };
static const char *const m_names[NM] = { "cpu_ns", "gpu_ns", "delay_ns" };

struct row {
    int64_t v[NM];
    int64_t excess; /* over the larger cutoff exceeded; < 0: not an outlier */
    size_t launch;
    uint8_t kernel;
};

/* Largest excess first, then launch order. */
static int cmp_excess(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->excess != y->excess) return x->excess > y->excess ? -1 : 1;
    return (x->launch > y->launch) - (x->launch < y->launch);
}

/* {"mean","p50","p95","max","total"} of metric m over the rows (kernels
 * only when kernels_only); tmp has room for every row. */
/* Metric m of launch l, which reached the GPU. */
static int64_t metric(const struct an_ctx *c, const struct an_launch *l, int m)
{
    const struct an_op *o = &c->ops[l->gpu];
    if (m == M_CPU) return l->end - l->ts;
    if (m == M_GPU) return o->end - o->ts;
    return o->ts > l->end ? o->ts - l->end : 0;
}

static int counted(const struct an_ctx *c, const struct an_launch *l)
{
    return l->gpu >= 0 && l->ts >= c->w0 && l->ts < c->w1;
}

/* The statistics of metric m over the counted launches (kernels only when
 * kernels_only), read again from the context for each metric so that no
 * per-launch table is held: tmp holds one metric at a time. */
static json_t *summary(const struct an_ctx *c, int m, int kernels_only, int64_t *tmp)
{
    size_t k = 0;
    double total = 0;
    for (size_t i = 0; i < c->nlaunches; i++) {
        const struct an_launch *l = &c->launches[i];
        if (!counted(c, l) || (kernels_only && c->ops[l->gpu].kind != TB_K_KERNEL)) continue;
        tmp[k] = metric(c, l, m);
        total += (double)tmp[k++];
    }
    if (k == 0) return json_pack("{s:i,s:i,s:i,s:i,s:i}", "mean", 0, "p50", 0, "p95", 0, "max", 0, "total", 0);
    an_sort_i64(tmp, k);
    return json_pack("{s:f,s:f,s:f,s:I,s:I}", "mean", total / (double)k, "p50", an_quantile(tmp, k, 0.5), "p95",
                     an_quantile(tmp, k, 0.95), "max", (json_int_t)tmp[k - 1], "total", (json_int_t)total);
}

int an_launch(struct an_ctx *c, json_t *out, struct err *e)
{
    (void)e;
    /* rows: the TOP_OUTLIERS first outliers in cmp_excess order, kept sorted
     * (a trace may have an outlier per launch) */
    struct row rows[TOP_OUTLIERS];
    size_t n = 0, kernels = 0, nshort = 0, rt_out = 0, dl_out = 0, nout = 0;
    for (size_t i = 0; i < c->nlaunches; i++) {
        const struct an_launch *l = &c->launches[i];
        if (!counted(c, l)) continue;
        struct row r;
        for (int m = 0; m < NM; m++) r.v[m] = metric(c, l, m);
        r.launch = i;
        r.kernel = c->ops[l->gpu].kind == TB_K_KERNEL;
        n++;
        kernels += r.kernel;
        if (r.v[M_CPU] <= RUNTIME_CUTOFF_NS && r.v[M_GPU] < r.v[M_CPU]) nshort++;
        int64_t rt = r.v[M_CPU] - RUNTIME_CUTOFF_NS, dl = r.v[M_DELAY] - DELAY_CUTOFF_NS;
        rt_out += rt > 0;
        dl_out += dl > 0;
        r.excess = rt > 0 || dl > 0 ? (rt > dl ? rt : dl) : -1;
        if (r.excess < 0 || (nout == TOP_OUTLIERS && cmp_excess(&r, &rows[nout - 1]) >= 0)) continue;
        size_t at = nout < TOP_OUTLIERS ? nout++ : nout - 1;
        for (; at > 0 && cmp_excess(&r, &rows[at - 1]) < 0; at--) rows[at] = rows[at - 1];
        rows[at] = r;
    }

    int64_t *tmp = xmalloc((n ? n : 1) * sizeof *tmp);
    json_t *konly = json_object();
    json_object_set_new(out, "count", json_integer((json_int_t)n));
    json_object_set_new(out, "kernels", json_integer((json_int_t)kernels));
    json_object_set_new(out, "memory", json_integer((json_int_t)(n - kernels)));
    for (int m = 0; m < NM; m++) {
        json_object_set_new(out, m_names[m], summary(c, m, 0, tmp));
        json_object_set_new(konly, m_names[m], summary(c, m, 1, tmp));
    }
    free(tmp);
    json_object_set_new(out, "kernels_only", konly);
    json_object_set_new(out, "short_kernels", json_integer((json_int_t)nshort));
    json_object_set_new(out, "short_share", json_real(n ? (double)nshort / (double)n : 0.0));
    json_object_set_new(out, "runtime_cutoff_ns", json_integer(RUNTIME_CUTOFF_NS));
    json_object_set_new(out, "delay_cutoff_ns", json_integer(DELAY_CUTOFF_NS));
    json_object_set_new(out, "runtime_outliers", json_integer((json_int_t)rt_out));
    json_object_set_new(out, "delay_outliers", json_integer((json_int_t)dl_out));

    /* the outliers, largest excess first */
    json_t *list = json_array();
    for (size_t i = 0; i < nout; i++) {
        const struct row *r = &rows[i];
        const struct an_launch *l = &c->launches[r->launch];
        const struct an_op *o = &c->ops[l->gpu];
        int rt = r->v[M_CPU] > RUNTIME_CUTOFF_NS, dl = r->v[M_DELAY] > DELAY_CUTOFF_NS;
        json_array_append_new(
            list, json_pack("{s:I,s:s,s:s,s:s,s:I,s:I,s:I,s:I,s:s}", "ts", (json_int_t)l->ts, "kernel",
                            an_name(c, o->name), "op", l->op ? an_name(c, l->op) : "", "launch",
                            an_name(c, l->name), "cpu_ns", (json_int_t)r->v[M_CPU], "gpu_ns",
                            (json_int_t)r->v[M_GPU], "delay_ns", (json_int_t)r->v[M_DELAY], "stream",
                            (json_int_t)an_op_stream(c, o), "why", rt && dl ? "both" : rt ? "runtime" : "delay"));
    }
    json_object_set_new(out, "outliers", list);
    return 0;
}

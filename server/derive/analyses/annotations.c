/* analyses/annotations.c — GPU time attributed to annotations, innermost
 * wins (HTA's user-annotation attribution and breakdown, item 4 of its
 * analyses), see include/derive/analyses.h.
 *
 * Each GPU op starting inside the window [w0, w1) goes, with its whole
 * duration, to one annotation:
 *   1. its launch call's innermost host annotation (launch->annot): a
 *      record_function / user_annotation range (ProfilerStep#N excluded by
 *      the loader) or a Python "nn.Module: X" frame, whichever is deeper;
 *   2. otherwise the innermost gpu_user_annotation slice on the op's own GPU
 *      track that contains the op's start (ProfilerStep#N excluded here too:
 *      it would swallow every op of the step) — for ops launched where the
 *      host annotation was not recorded, or not launched by a call we saw;
 *   3. otherwise nothing (unattributed).
 * The gpu_user_annotation slices are not part of the context (c->ops holds
 * kernels, memcpys and memsets only), so they are read here with one query
 * over the rank's GPU tracks; their number is the trace's annotation count.
 *
 * Object:
 *   {"items": [{"name", "source": "record_function"|"module"|"gpu_annotation",
 *               "gpu_ns",   sum of the durations of the ops attributed
 *               "ops",      how many ops
 *               "calls"}    how many distinct launch calls issued them
 *              ...] by gpu_ns descending, the first 100,
 *    "attributed_ns", "unattributed_ns",
 *    "total_ns",            sum of the durations of every op starting in the
 *                           window (ops on concurrent streams both count)
 *    "gpu_annotations": [{"name", "count", "sum_ns", "mean_ns", "max_ns",
 *                         "min_ns"}, ...]
 *                           the gpu_user_annotation slices starting in the
 *                           window by name, ProfilerStep#N included (HTA's
 *                           get_gpu_user_annotation_breakdown), by sum_ns
 *                           descending, the first 100}
 */
#include "derive/analyses.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "store/model.h"
#include "store/scan.h"

#define AN_ANNOT_TOP 100

enum { SRC_NONE = 0, SRC_RF = 1, SRC_MODULE = 2, SRC_GPU = 3 };
static const char *const src_names[4] = { "", "record_function", "module", "gpu_annotation" };

/* A gpu_user_annotation slice. */
struct gann {
    int64_t ts, end;
    uint32_t track, name;
    uint8_t step; /* a ProfilerStep#N: summarized, never attributed */
};

/* One op's attribution, sorted by (key, launch) to aggregate. */
struct attr {
    uint64_t key; /* name << 2 | source */
    int64_t dur;
    int32_t launch;
};

static int cmp_gann(const void *a, const void *b)
{
    const struct gann *x = a, *y = b;
    if (x->track != y->track) return x->track < y->track ? -1 : 1;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return (x->end < y->end) - (x->end > y->end); /* outer (longer) first */
}

static int cmp_attr(const void *a, const void *b)
{
    const struct attr *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->launch > y->launch) - (x->launch < y->launch);
}

static int cmp_gann_name(const void *a, const void *b)
{
    const struct gann *x = a, *y = b;
    return (x->name > y->name) - (x->name < y->name);
}

static int cmp_item_ns(const void *a, const void *b, const char *field)
{
    json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, field));
    json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, field));
    return (x < y) - (x > y);
}

static int cmp_by_gpu_ns(const void *a, const void *b) { return cmp_item_ns(a, b, "gpu_ns"); }
static int cmp_by_sum_ns(const void *a, const void *b) { return cmp_item_ns(a, b, "sum_ns"); }

/* Sorts the objects of arr by cmp and keeps the first top. */
static json_t *sorted_top(json_t **v, size_t n, int (*cmp)(const void *, const void *))
{
    xqsort(v, n, sizeof *v, cmp);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (i < AN_ANNOT_TOP) json_array_append_new(arr, v[i]);
        else json_decref(v[i]);
    }
    return arr;
}

static int load_ganns(struct an_ctx *c, struct gann **out, size_t *nout, struct err *e)
{
    struct scan_slices *cur;
    struct scan_slice sl;
    *out = NULL;
    *nout = 0;
    int rc = scan_slices_open(c->db, c->rank, SCAN_TRACKS_GPU, SCAN_KIND(TB_K_GPU_ANNOTATION), &cur, e);
    if (rc) return rc;
    size_t cap = 0;
    while ((rc = scan_slices_next(cur, &sl, e)) == 1) {
        if (*nout == cap) *out = xrealloc(*out, (cap = cap ? cap * 2 : 64) * sizeof **out);
        struct gann *g = &(*out)[(*nout)++];
        g->track = (uint32_t)sl.track;
        g->ts = sl.ts;
        g->end = g->ts + (sl.dur > 0 ? sl.dur : 0);
        g->name = sl.name;
        g->step = (uint8_t)(an_name_class(c, g->name) & AN_NAME_STEP ? 1 : 0);
    }
    scan_slices_close(cur);
    if (rc < 0) return rc;
    if (*nout) xqsort(*out, *nout, sizeof **out, cmp_gann);
    return 0;
}

/* The per-name summary of the gpu_user_annotation slices in the window.
 * Sorts g by name (the caller is done with the track order). */
static json_t *gann_summary(struct an_ctx *c, struct gann *g, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i].ts >= c->w0 && g[i].ts < c->w1) g[m++] = g[i];
    if (m) xqsort(g, m, sizeof *g, cmp_gann_name); /* g is NULL without annotations */
    json_t **v = xmalloc((m + 1) * sizeof *v);
    size_t nv = 0;
    for (size_t i = 0, j; i < m; i = j) {
        int64_t sum = 0, mx = 0, mn = INT64_MAX;
        for (j = i; j < m && g[j].name == g[i].name; j++) {
            int64_t d = g[j].end - g[j].ts;
            sum += d;
            if (d > mx) mx = d;
            if (d < mn) mn = d;
        }
        int64_t cnt = (int64_t)(j - i);
        v[nv++] = json_pack("{s:s,s:I,s:I,s:f,s:I,s:I}", "name", an_name(c, g[i].name), "count", (json_int_t)cnt,
                            "sum_ns", (json_int_t)sum, "mean_ns", (double)sum / (double)cnt, "max_ns",
                            (json_int_t)mx, "min_ns", (json_int_t)mn);
    }
    json_t *arr = sorted_top(v, nv, cmp_by_sum_ns);
    free(v);
    return arr;
}

/* Index of track in the sorted unique tracks tr[0..n), or n. */
static size_t track_ix(const uint32_t *tr, size_t n, uint32_t track)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr[mid] < track) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && tr[lo] == track ? lo : n;
}

int an_annotations(struct an_ctx *c, json_t *out, struct err *e)
{
    struct gann *g;
    size_t ng;
    int rc = load_ganns(c, &g, &ng, e);
    if (rc) return rc;

    /* Per GPU track: its slice of g (track order), a cursor over it and a
     * stack of the annotations open at the current op's start. Ops come in
     * time order, so each track's cursor only moves forward. */
    size_t nt = 0;
    uint32_t *tr = xmalloc((ng + 1) * sizeof *tr);
    size_t *beg = xmalloc((ng + 1) * sizeof *beg), *cur = xmalloc((ng + 1) * sizeof *cur);
    size_t *sp = xmalloc((ng + 1) * sizeof *sp), *stk = xmalloc((ng + 1) * sizeof *stk);
    for (size_t i = 0; i < ng; i++)
        if (nt == 0 || tr[nt - 1] != g[i].track) {
            tr[nt] = g[i].track;
            beg[nt] = cur[nt] = sp[nt] = i; /* the stack of a track lives in stk[beg, ...) */
            nt++;
        }
    beg[nt] = ng;

    size_t i0 = an_ops_from(c, c->w0), i1 = an_ops_from(c, c->w1);
    struct attr *at = xmalloc((i1 - i0 + 1) * sizeof *at);
    size_t na = 0;
    int64_t total = 0, attributed = 0;
    for (size_t i = i0; i < i1; i++) {
        const struct an_op *o = &c->ops[i];
        int64_t dur = o->end - o->ts;
        total += dur;
        uint64_t key = 0;
        if (o->launch >= 0 && c->launches[o->launch].annot) {
            const struct an_launch *l = &c->launches[o->launch];
            key = (uint64_t)l->annot << 2 | (l->annot_src == 2 ? SRC_MODULE : SRC_RF);
        } else {
            size_t t = track_ix(tr, nt, an_op_stream(c, o));
            if (t < nt) {
                while (cur[t] < beg[t + 1] && g[cur[t]].ts <= o->ts) {
                    if (!g[cur[t]].step) stk[sp[t]++] = cur[t];
                    cur[t]++;
                }
                while (sp[t] > beg[t] && g[stk[sp[t] - 1]].end <= o->ts) sp[t]--;
                if (sp[t] > beg[t]) key = (uint64_t)g[stk[sp[t] - 1]].name << 2 | SRC_GPU;
            }
        }
        if (!key) continue;
        attributed += dur;
        at[na++] = (struct attr){ key, dur, o->launch };
    }
    free(tr);
    free(beg);
    free(cur);
    free(sp);
    free(stk);

    xqsort(at, na, sizeof *at, cmp_attr);
    json_t **v = xmalloc((na + 1) * sizeof *v);
    size_t nv = 0;
    for (size_t i = 0, j; i < na; i = j) {
        int64_t ns = 0, calls = 0;
        for (j = i; j < na && at[j].key == at[i].key; j++) {
            ns += at[j].dur;
            if (at[j].launch >= 0 && (j == i || at[j].launch != at[j - 1].launch)) calls++;
        }
        v[nv++] = json_pack("{s:s,s:s,s:I,s:I,s:I}", "name", an_name(c, (uint32_t)(at[i].key >> 2)), "source",
                            src_names[at[i].key & 3], "gpu_ns", (json_int_t)ns, "ops", (json_int_t)(j - i),
                            "calls", (json_int_t)calls);
    }
    free(at);
    json_object_set_new(out, "items", sorted_top(v, nv, cmp_by_gpu_ns));
    free(v);
    json_object_set_new(out, "attributed_ns", json_integer((json_int_t)attributed));
    json_object_set_new(out, "unattributed_ns", json_integer((json_int_t)(total - attributed)));
    json_object_set_new(out, "total_ns", json_integer((json_int_t)total));
    json_object_set_new(out, "gpu_annotations", gann_summary(c, g, ng));
    free(g);
    return 0;
}

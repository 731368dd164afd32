#define LOG_MODULE "analysis"
#include "derive/summary_metrics.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "base/jtok.h"
#include "base/log.h"
#include "base/tmheap.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "store/model.h"
#include "store/rundb.h"

/* ====================================================================== */
/* GPU metrics                                                            */
/* ====================================================================== */

/* An op's clipped span [a, b) on the device's window, and its index in
 * c->g. */
struct span {
    int64_t a, b;
    uint32_t i;
};

static int cmp_span_start(const void *x, const void *y)
{
    const struct span *p = x, *q = y;
    if (p->a != q->a) return (p->a > q->a) - (p->a < q->a);
    return (p->i > q->i) - (p->i < q->i);
}

/* The SM-busy time of device dev's kernels over [w0, w1): each kernel
 * adds its blocks-per-SM (bps, when given) while it runs, the level
 * capped at 1. The level changes at every kernel's start and end, visited
 * in time order; at one time in the order of the ops in c->g, a start
 * before its own end: the order a stable sort of the edges {start, end}
 * of each op in turn gave before (the float sum is the same to the bit),
 * with the starts sorted and the ends in a heap instead, so memory is the
 * starts and the kernels running at once, not two edges a kernel and a
 * sort's copy of them (84 MB at 1.3 M kernels). *nedges: edges visited. */
static double sm_busy(const struct rankctx *c, int32_t dev, int64_t w0, int64_t w1, size_t *nedges)
{
    struct span *st = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < c->ng; i++) {
        const struct gop *g = &c->g[i];
        if (g->kind != TB_K_KERNEL || g->device != dev || !(g->bps > 0)) continue;
        int64_t a = g->ts > w0 ? g->ts : w0, b = g->ts + g->dur < w1 ? g->ts + g->dur : w1;
        if (b <= a) continue;
        if (n == cap) st = xrealloc(st, (cap = cap ? cap * 2 : 4096) * sizeof *st);
        st[n++] = (struct span){ a, b, (uint32_t)i };
    }
    xqsort(st, n, sizeof *st, cmp_span_start);
    struct tmheap h = { NULL, 0, 0 }; /* the running kernels' ends, tagged with their index */
    double sm = 0, level = 0;
    int64_t prev = 0;
    size_t k = 0, seen = 0;
    while (k < n || h.n) {
        /* a start first when it is earlier, or at the same time of an
         * earlier op (its edges came before the end's in the old order) */
        int start = k < n && tmheap_before_top(&h, st[k].a, st[k].i);
        int64_t t;
        double v;
        if (start) {
            t = st[k].a;
            v = c->g[st[k].i].bps;
            tmheap_push(&h, st[k].b, st[k].i);
            k++;
        } else {
            struct tmheap_item x = tmheap_pop(&h);
            t = x.t;
            v = -(double)c->g[x.tag].bps;
        }
        if (seen++ && t > prev) sm += (level < 1.0 ? level : 1.0) * (double)(t - prev);
        level += v;
        if (level < 1e-9) level = 0; /* float residue of +x - x */
        prev = t;
    }
    tmheap_free(&h);
    free(st);
    *nedges = seen;
    return sm;
}

/* The deviceProperties entry of GPU `device`. ROCm traces number their
 * kernels' devices by HSA agent, CPUs first (an MI300X's GPU 0 shows as
 * device 2), while deviceProperties counts GPUs from 0: when no entry has
 * the id and every entry is the same GPU model (a homogeneous node, or the
 * one GPU of a single-GPU trace), that model is the device's. */
static json_t *device_props(json_t *header, int device)
{
    json_t *props = json_object_get(header, "deviceProperties"), *d, *first = json_array_get(props, 0);
    size_t i;
    int same = first != NULL;
    json_array_foreach(props, i, d) {
        json_t *id = json_object_get(d, "id");
        if (json_is_integer(id) ? json_integer_value(id) == device : (int)i == device) return d;
        same = same && json_equal(json_object_get(d, "name"), json_object_get(first, "name")) &&
               json_equal(json_object_get(d, "totalGlobalMem"), json_object_get(first, "totalGlobalMem"));
    }
    return same ? first : NULL;
}

int summary_metrics_gpu(struct rankctx *c, json_t *header, int64_t w0, int64_t w1, json_t *summary, struct err *e)
{
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(c->db,
                           "INSERT INTO gpu(rank, device, name, memory_bytes, cc, util, sm_eff, occupancy, tc_share,"
                           " kernel_ns, tc_ns, window_ns) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &ins, NULL) != SQLITE_OK)
        return rundb_db_error(c->db, e, "analysis (gpu table)");
    int rc = 0;
    int32_t *devs = NULL;
    size_t ndev = 0;
    for (size_t i = 0; i < c->ng; i++) {
        if (c->g[i].kind != TB_K_KERNEL) continue;
        size_t j = 0;
        while (j < ndev && devs[j] != c->g[i].device) j++;
        if (j == ndev) {
            devs = xrealloc(devs, (ndev + 1) * sizeof *devs);
            devs[ndev++] = c->g[i].device;
        }
    }
    int64_t win = w1 - w0;
    json_t *compute_util = json_object();
    json_object_set_new(summary, "compute_utilization", compute_util);
    for (size_t d = 0; d < ndev && rc == 0; d++) {
        struct ivlist busy = { 0 }, compute = { 0 };
        double occ_w = 0;
        int64_t occ_dur = 0, kns = 0, tcns = 0;
        for (size_t i = 0; i < c->ng; i++) {
            const struct gop *g = &c->g[i];
            if (g->kind != TB_K_KERNEL || g->device != devs[d]) continue;
            int64_t a = g->ts > w0 ? g->ts : w0, b = g->ts + g->dur < w1 ? g->ts + g->dur : w1;
            if (b <= a) continue;
            ivlist_add(&busy, a, b);
            if (!(g->flags & NF_COMM_KERNEL)) ivlist_add(&compute, a, b);
            kns += b - a;
            if (g->flags & NF_TC) tcns += b - a;
            if (g->occ >= 0) {
                occ_w += (double)g->occ * (double)(b - a);
                occ_dur += b - a;
            }
        }
        ivlist_normalize(&busy);
        size_t cur = 0;
        int64_t busy_ns = ivlist_len_in(&busy, w0, w1, &cur);
        if (win > 0) {
            char key[16];
            ivlist_normalize(&compute);
            cur = 0;
            snprintf(key, sizeof key, "%d", (int)devs[d]);
            json_object_set_new(compute_util, key,
                                json_real((double)ivlist_len_in(&compute, w0, w1, &cur) / (double)win));
        }
        /* the unions go before the SM-busy walk: with the edges it held
         * before, two a kernel and a sort's copy, they made the 10 M-event
         * import's peak (1.3 M kernels: 66 MB of unions, 84 MB of edges) */
        ivlist_free(&busy);
        ivlist_free(&compute);
        size_t ne = 0;
        double sm = sm_busy(c, devs[d], w0, w1, &ne);
        json_t *p = device_props(header, devs[d]);
        const char *gname = json_string_value(json_object_get(p, "name"));
        json_t *mem = json_object_get(p, "totalGlobalMem");
        json_t *cmaj = json_object_get(p, "computeMajor"), *cmin = json_object_get(p, "computeMinor");
        char cc[32] = "";
        if (json_is_integer(cmaj))
            snprintf(cc, sizeof cc, "%lld.%lld", (long long)json_integer_value(cmaj),
                     (long long)json_integer_value(cmin));
        sqlite3_bind_int(ins, 1, c->rank);
        sqlite3_bind_int(ins, 2, devs[d]);
        if (gname) sqlite3_bind_text(ins, 3, gname, -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(ins, 3);
        if (json_is_integer(mem)) sqlite3_bind_int64(ins, 4, json_integer_value(mem));
        else sqlite3_bind_null(ins, 4);
        if (cc[0]) sqlite3_bind_text(ins, 5, cc, -1, SQLITE_TRANSIENT);
        else sqlite3_bind_null(ins, 5);
        if (win > 0) sqlite3_bind_double(ins, 6, (double)busy_ns / (double)win);
        else sqlite3_bind_null(ins, 6);
        if (win > 0 && ne) sqlite3_bind_double(ins, 7, sm / (double)win);
        else sqlite3_bind_null(ins, 7);
        if (occ_dur > 0) sqlite3_bind_double(ins, 8, occ_w / (double)occ_dur / 100.0);
        else sqlite3_bind_null(ins, 8);
        if (kns > 0) sqlite3_bind_double(ins, 9, (double)tcns / (double)kns);
        else sqlite3_bind_null(ins, 9);
        sqlite3_bind_int64(ins, 10, kns);
        sqlite3_bind_int64(ins, 11, tcns);
        sqlite3_bind_int64(ins, 12, win);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (gpu table)");
        sqlite3_reset(ins);
    }
    free(devs);
    sqlite3_finalize(ins);
    return rc;
}

/* ====================================================================== */
/* Operator and kernel tables                                             */
/* ====================================================================== */

static void bind_text_or_empty(sqlite3_stmt *st, int i, const char *s)
{
    sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

int summary_metrics_write_ops(struct rankctx *c, struct err *e)
{
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(c->db,
                           "INSERT INTO op_stat(rank, name, shape, stack, calls, host_self, host_total, dev_self,"
                           " dev_total, tc_self, tc_total, tc_eligible) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &ins, NULL) != SQLITE_OK)
        return rundb_db_error(c->db, e, "analysis (op_stat)");
    int rc = 0;
    size_t pos = 0;
    const struct opagg *a;
    while (rc == 0 && (a = hmap_next(&c->ops, &pos, NULL, NULL))) {
        sqlite3_bind_int(ins, 1, c->rank);
        bind_text_or_empty(ins, 2, summary_rank_name(&c->names, a->name)->s);
        bind_text_or_empty(ins, 3, a->shape);
        bind_text_or_empty(ins, 4, a->stack);
        sqlite3_bind_int64(ins, 5, a->calls);
        sqlite3_bind_int64(ins, 6, a->host_self);
        sqlite3_bind_int64(ins, 7, a->host_total);
        sqlite3_bind_int64(ins, 8, a->dev_self);
        sqlite3_bind_int64(ins, 9, a->dev_total);
        sqlite3_bind_int64(ins, 10, a->tc_self);
        sqlite3_bind_int64(ins, 11, a->tc_total);
        sqlite3_bind_int(ins, 12, a->tc_elig);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (op_stat)");
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    return rc;
}

int summary_metrics_write_kernels(struct rankctx *c, struct err *e)
{
    for (size_t i = 0; i < c->ng; i++) {
        const struct gop *g = &c->g[i];
        if (g->kind != TB_K_KERNEL) continue;
        char key[48];
        int kn = snprintf(key, sizeof key, "%d:%u:%u", g->device, g->name, g->op);
        int fresh;
        struct kagg *a = hmap_put(&c->kernels, hmap_hash_bytes(key, (size_t)kn), key, (size_t)kn, &fresh);
        if (fresh) {
            a->device = g->device;
            a->name = g->name;
            a->op = g->op;
            a->min = INT64_MAX;
            a->flags = g->flags;
        }
        a->calls++;
        a->total += g->dur;
        if (g->dur < a->min) a->min = g->dur;
        if (g->dur > a->max) a->max = g->dur;
        a->flags |= g->flags & NF_COMM_KERNEL;
        if (g->bps >= 0) {
            a->bps_w += (double)g->bps * (double)g->dur;
            a->bps_dur += g->dur;
        }
        if (g->occ >= 0) {
            a->occ_w += (double)g->occ * (double)g->dur;
            a->occ_dur += g->dur;
        }
        if (g->limiter && !a->limiter) a->limiter = xstrdup(g->limiter);
    }
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(c->db,
                           "INSERT INTO kernel_stat(rank, device, name, op, calls, total, min, max, tc, comm, bps_w,"
                           " bps_dur, occ_w, occ_dur, limiter) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &ins, NULL) != SQLITE_OK)
        return rundb_db_error(c->db, e, "analysis (kernel_stat)");
    int rc = 0;
    size_t pos = 0;
    const struct kagg *a;
    while (rc == 0 && (a = hmap_next(&c->kernels, &pos, NULL, NULL))) {
        sqlite3_bind_int(ins, 1, c->rank);
        sqlite3_bind_int(ins, 2, a->device);
        bind_text_or_empty(ins, 3, summary_rank_name(&c->names, a->name)->s);
        bind_text_or_empty(ins, 4, summary_rank_name(&c->names, a->op)->s);
        sqlite3_bind_int64(ins, 5, a->calls);
        sqlite3_bind_int64(ins, 6, a->total);
        sqlite3_bind_int64(ins, 7, a->min);
        sqlite3_bind_int64(ins, 8, a->max);
        sqlite3_bind_int(ins, 9, (a->flags & NF_TC) != 0);
        sqlite3_bind_int(ins, 10, (a->flags & NF_COMM_KERNEL) != 0);
        sqlite3_bind_double(ins, 11, a->bps_w);
        sqlite3_bind_int64(ins, 12, a->bps_dur);
        sqlite3_bind_double(ins, 13, a->occ_w);
        sqlite3_bind_int64(ins, 14, a->occ_dur);
        if (a->limiter) sqlite3_bind_text(ins, 15, a->limiter, -1, SQLITE_STATIC);
        else sqlite3_bind_null(ins, 15);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (kernel_stat)");
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    return rc;
}

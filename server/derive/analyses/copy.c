/* analyses/copy.c — copy bandwidth by kind (HTA's memory bandwidth
 * counters, item 10 of its analyses), see include/derive/analyses.h.
 *
 * The ops counted are the rank's memcpys and memsets that start inside the
 * window [w0, w1), whole: an op's bandwidth is a property of the whole
 * transfer, so it is not clipped at the window's edges.
 *
 * Object:
 *   {"kinds": [{"kind": "HtoD"|"DtoH"|"DtoD"|"PtoP"|"Memset"|"Memcpy",
 *               "pinned": true|false|null,  host memory pinned (DtoD, PtoP
 *                                  and memsets count as pinned: no staging),
 *                                  null when the name does not say
 *               "count", "bytes",  ops and bytes (ops of unknown size count
 *                                  in count and busy_ns, not in bytes)
 *               "busy_ns",         sum of the ops' durations
 *               "gbps",            byte-weighted mean: bytes / time of the
 *                                  ops with a known size (bytes/ns = GB/s)
 *               "max_gbps",        the best single op
 *               "peak_gbps",       what it compares against: the host link
 *                                  for HtoD/DtoH, device memory for DtoD
 *                                  and memsets, 0 unknown
 *               "share_of_peak"},  gbps / peak_gbps, null when unknown
 *              ...] in kind order, pageable before pinned,
 *    "total_bytes",                bytes of all kinds
 *    "busy_ns"}                    union of the copies' time in the window
 *
 * Counter lanes: one series per kind present (AN_SERIES_COPY, key = the
 * kind), HTA style: each op adds its GB/s at its start and takes it away at
 * its end (a zero duration counts as 1 ns, as HTA bumps it), one sample at
 * each distinct time with the sum after every change there.
 */
#include "derive/analyses.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/xmalloc.h"
#include "derive/ivlist.h"

struct copy_acc {
    int64_t count, bytes, busy_ns, sized_ns;
    double max_gbps;
};

/* One step of a kind's bandwidth series. */
struct bw_ev {
    int64_t ts;
    double gbps;
    int delta; /* +1 an op starts, -1 it ends: zero ops active means exactly 0 */
};

static int cmp_bw_ev(const void *a, const void *b)
{
    const struct bw_ev *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

static int64_t op_dur(const struct an_op *o)
{
    return o->end > o->ts ? o->end - o->ts : 1; /* HTA bumps zero durations to 1 */
}

static double op_gbps(const struct an_ctx *c, const struct an_op *o)
{
    int64_t b = an_op_bytes(c, o);
    return b >= 0 ? (double)b / (double)op_dur(o) : 0.0;
}

/* The counter series of one kind: +GB/s at each op's start, − at its end. */
static int emit_series(struct an_ctx *c, int kind, size_t i0, size_t i1, struct bw_ev *ev, struct err *e)
{
    size_t n = 0;
    for (size_t i = i0; i < i1; i++) {
        const struct an_op *o = &c->ops[i];
        if (o->type != AN_MEMORY || o->copy != kind) continue;
        double g = op_gbps(c, o);
        ev[n++] = (struct bw_ev){ o->ts, g, 1 };
        ev[n++] = (struct bw_ev){ o->ts + op_dur(o), -g, -1 };
    }
    if (!n) return 0;
    xqsort(ev, n, sizeof *ev, cmp_bw_ev);
    char name[64];
    snprintf(name, sizeof name, "Copy bandwidth (%s)", an_copy_names[kind]);
    int64_t series;
    int rc = an_series(c, AN_SERIES_COPY, kind, name, "GB/s", &series, e);
    double sum = 0;
    long active = 0;
    for (size_t j = 0; j < n && rc == 0;) {
        int64_t t = ev[j].ts;
        for (; j < n && ev[j].ts == t; j++) {
            sum += ev[j].gbps;
            active += ev[j].delta;
        }
        if (active == 0) sum = 0; /* no float residue once every op has ended */
        rc = an_sample(c, series, t, sum, e);
    }
    return rc;
}

int an_copy(struct an_ctx *c, json_t *out, struct err *e)
{
    /* [kind][pinned 0/1/2] */
    struct copy_acc acc[AN_NCOPY][3] = { 0 };
    struct ivlist busy = { 0 };
    size_t i0 = an_ops_from(c, c->w0), i1 = an_ops_from(c, c->w1);
    int64_t total_bytes = 0;
    size_t ncopies = 0;
    for (size_t i = i0; i < i1; i++) {
        const struct an_op *o = &c->ops[i];
        if (o->type != AN_MEMORY || o->copy == AN_COPY_NONE || o->copy >= AN_NCOPY) continue;
        struct copy_acc *a = &acc[o->copy][o->pinned < 3 ? o->pinned : 2];
        int64_t d = op_dur(o), bytes = an_op_bytes(c, o);
        a->count++;
        ncopies++;
        a->busy_ns += o->end - o->ts;
        if (bytes >= 0) {
            a->bytes += bytes;
            a->sized_ns += d;
            total_bytes += bytes;
            double g = op_gbps(c, o);
            if (g > a->max_gbps) a->max_gbps = g;
        }
        ivlist_add(&busy, o->ts, o->end);
    }
    ivlist_normalize(&busy);
    int64_t busy_ns = ivlist_len_in(&busy, INT64_MIN, INT64_MAX, &(size_t){ 0 });
    ivlist_free(&busy);

    json_t *kinds = json_array();
    for (int k = AN_COPY_HTOD; k < AN_NCOPY; k++) {
        double peak = 0;
        if (k == AN_COPY_HTOD || k == AN_COPY_DTOH) peak = c->link_gbps;
        else if (k == AN_COPY_DTOD || k == AN_COPY_MEMSET) peak = c->gpu_mem_gbps;
        for (int p = 0; p < 3; p++) {
            const struct copy_acc *a = &acc[k][p];
            if (!a->count) continue;
            double gbps = a->sized_ns > 0 ? (double)a->bytes / (double)a->sized_ns : 0.0;
            json_t *pinned = p == 2 ? json_null() : json_boolean(p == 1);
            json_array_append_new(
                kinds, json_pack("{s:s,s:o,s:I,s:I,s:I,s:f,s:f,s:f,s:o}", "kind", an_copy_names[k], "pinned", pinned,
                                 "count", (json_int_t)a->count, "bytes", (json_int_t)a->bytes, "busy_ns",
                                 (json_int_t)a->busy_ns, "gbps", gbps, "max_gbps", a->max_gbps, "peak_gbps", peak,
                                 "share_of_peak", peak > 0 ? json_real(gbps / peak) : json_null()));
        }
    }
    json_object_set_new(out, "kinds", kinds);
    json_object_set_new(out, "total_bytes", json_integer((json_int_t)total_bytes));
    json_object_set_new(out, "busy_ns", json_integer((json_int_t)busy_ns));

    /* the counter lanes, one kind at a time so the buffer stays 2 × copies */
    int rc = 0;
    if (ncopies) {
        struct bw_ev *ev = xmalloc(2 * ncopies * sizeof *ev);
        for (int k = AN_COPY_HTOD; k < AN_NCOPY && rc == 0; k++) rc = emit_series(c, k, i0, i1, ev, e);
        free(ev);
    }
    return rc;
}

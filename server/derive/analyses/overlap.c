/* analyses/overlap.c — kernel-type breakdown with overlap (HTA's
 * kernel_type_df and its communication–computation overlap, items 3 and 5
 * of its analyses), see include/derive/analyses.h.
 *
 * Every GPU op of the rank is clipped to the window [w0, w1) and typed
 * compute, communication or memory (memcpys and memsets); one sweep over
 * the op starts and ends then splits the window by which types are active,
 * so the parts add up to the window exactly.
 *
 * Object:
 *   {"window_ns",                 w1 − w0
 *    "compute_ns", "communication_ns", "memory_ns",
 *                                 union time of each type
 *    "combos": [{"types": ["compute"], "ns"}, ...]
 *                                 time with exactly that set of types
 *                                 active; always the 7 sets, in the order
 *                                 compute, communication, memory,
 *                                 compute+communication, compute+memory,
 *                                 communication+memory, all three; they sum
 *                                 to window_ns − idle_ns
 *    "idle_ns",                   no GPU op active
 *    "comm_overlap_ratio",        time compute and communication are both
 *                                 active ÷ communication union (HTA's
 *                                 comp_comm_overlap), null without comm
 *    "devices": [{"device", ...the fields above...}]}
 *                                 only when the rank's ops lie on several
 *                                 devices: the same per device
 */
#include "derive/analyses.h"

#include <stdlib.h>

#include "base/tmheap.h"
#include "base/xmalloc.h"


/* Masks of types (bit = 1 << enum an_type) in output order. */
static const int combo_masks[7] = { 1, 2, 4, 3, 5, 6, 7 };

/* The next op from *i on that counts (device dev unless all), clipped to
 * [*a, *b); 0 when none is left before i1. */
static int next_op(const struct an_ctx *c, int all, int32_t dev, size_t *i, size_t i1, int64_t *a, int64_t *b,
                   int *type)
{
    for (; *i < i1; (*i)++) {
        const struct an_op *o = &c->ops[*i];
        if (!all && an_op_device(c, o) != dev) continue;
        *a = o->ts > c->w0 ? o->ts : c->w0;
        *b = o->end < c->w1 ? o->end : c->w1;
        if (*b <= *a || o->type >= AN_NTYPES) continue;
        *type = o->type;
        return 1;
    }
    return 0;
}

/* ns[mask]: time in [w0, w1) with exactly the types of mask active (mask 0:
 * idle), over the ops of device dev (all devices when all != 0). The ops
 * come in start order, so the starts need no sort and only the ends of the
 * active ops wait in h (scratch, left empty): memory is the concurrency,
 * not the ops. */
static void sweep(const struct an_ctx *c, int all, int32_t dev, struct tmheap *h, int64_t ns[8])
{
    for (int m = 0; m < 8; m++) ns[m] = 0;
    /* ops are sorted by start: those starting at or after w1 are out */
    size_t i = 0, i1 = an_ops_from(c, c->w1);
    int64_t a = 0, b = 0;
    int type = 0, more = next_op(c, all, dev, &i, i1, &a, &b, &type);
    long cnt[AN_NTYPES] = { 0 };
    int64_t prev = c->w0;
    while (more || h->n) {
        int64_t t = more && (!h->n || a < h->v[0].t) ? a : h->v[0].t;
        int mask = 0;
        for (int k = 0; k < AN_NTYPES; k++)
            if (cnt[k] > 0) mask |= 1 << k;
        ns[mask] += t - prev;
        while (h->n && h->v[0].t == t) cnt[tmheap_pop(h).tag]--;
        while (more && a == t) {
            cnt[type]++;
            tmheap_push(h, b, (uint32_t)type);
            i++;
            more = next_op(c, all, dev, &i, i1, &a, &b, &type);
        }
        prev = t;
    }
    ns[0] += c->w1 - prev; /* every op has ended by the last event */
}

static void fill(json_t *out, const int64_t ns[8], int64_t window)
{
    int64_t uni[AN_NTYPES] = { 0 };
    for (int m = 1; m < 8; m++)
        for (int k = 0; k < AN_NTYPES; k++)
            if (m & (1 << k)) uni[k] += ns[m];
    json_object_set_new(out, "window_ns", json_integer((json_int_t)window));
    json_object_set_new(out, "compute_ns", json_integer((json_int_t)uni[AN_COMPUTE]));
    json_object_set_new(out, "communication_ns", json_integer((json_int_t)uni[AN_COMM]));
    json_object_set_new(out, "memory_ns", json_integer((json_int_t)uni[AN_MEMORY]));
    json_t *combos = json_array();
    for (int i = 0; i < 7; i++) {
        int m = combo_masks[i];
        json_t *types = json_array();
        for (int k = 0; k < AN_NTYPES; k++)
            if (m & (1 << k)) json_array_append_new(types, json_string(an_type_names[k]));
        json_array_append_new(combos, json_pack("{s:o,s:I}", "types", types, "ns", (json_int_t)ns[m]));
    }
    json_object_set_new(out, "combos", combos);
    json_object_set_new(out, "idle_ns", json_integer((json_int_t)ns[0]));
    int64_t both = ns[(1 << AN_COMPUTE) | (1 << AN_COMM)] + ns[7];
    json_object_set_new(out, "comm_overlap_ratio",
                        uni[AN_COMM] > 0 ? json_real((double)both / (double)uni[AN_COMM]) : json_null());
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

int an_overlap(struct an_ctx *c, json_t *out, struct err *e)
{
    (void)e;
    int64_t ns[8];
    int64_t window = c->w1 > c->w0 ? c->w1 - c->w0 : 0;
    struct tmheap h = { NULL, 0, 0 };
    sweep(c, 1, 0, &h, ns);
    fill(out, ns, window);

    /* the devices of the rank's streams; per device only when several */
    int32_t *devs = xmalloc((c->nstreams + 1) * sizeof *devs);
    size_t nd = 0;
    for (size_t i = 0; i < c->nstreams; i++) devs[nd++] = c->streams[i].device;
    xqsort(devs, nd, sizeof *devs, cmp_i32);
    size_t u = 0;
    for (size_t i = 0; i < nd; i++)
        if (u == 0 || devs[u - 1] != devs[i]) devs[u++] = devs[i];
    if (u > 1) {
        json_t *arr = json_array();
        for (size_t i = 0; i < u; i++) {
            json_t *d = json_object();
            json_object_set_new(d, "device", json_integer(devs[i]));
            sweep(c, 0, devs[i], &h, ns);
            fill(d, ns, window);
            json_array_append_new(arr, d);
        }
        json_object_set_new(out, "devices", arr);
    }
    free(devs);
    tmheap_free(&h);
    return 0;
}

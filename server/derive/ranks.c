/* ranks.c — the cross-rank comparison of a run (see include/derive/ranks.h).
 *
 * Reading order: load the ranks and their steps; per rank, scan its
 * collectives and measure the overlap, then match the collectives across
 * ranks (ranks_comm.c); then write the JSON sections one by one. */
#define LOG_MODULE "ranks"
#include "derive/ranks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/ranks_comm.h"
#include "derive/rules.h"
#include "derive/summary.h"
#include "store/rank_read.h"
#include "store/rundb.h"
#include "store/scan.h"

#define COMM_PART 3 /* index of "communication" among the breakdown parts */

/* ====================================================================== */
/* Small helpers                                                          */
/* ====================================================================== */

static json_t *us(double ns)
{
    return json_real(ns / 1000.0);
}

/* A new reference to v, or null. */
static json_t *or_null(json_t *v)
{
    return v ? json_incref(v) : json_null();
}

struct ctx {
    sqlite3 *db;
    struct err *e;
    struct ranks_rank *r;
    size_t nr;
    struct ranks_comm cm; /* the collectives: names, keys, budget */
};

/* ====================================================================== */
/* Loading ranks and steps                                                */
/* ====================================================================== */

_Static_assert(RANK_READ_NPARTS == RANKS_NPARTS, "a stored step has one column per breakdown part");

static int load_ranks(struct ctx *c)
{
    struct rank_read_rank *rr;
    size_t n;
    int rc = rank_read_ranks(c->db, &rr, &n, c->e);
    if (rc) return rc;
    c->r = xcalloc(n ? n : 1, sizeof *c->r);
    for (size_t i = 0; i < n; i++) {
        struct ranks_rank *r = &c->r[c->nr++];
        r->rank = rr[i].rank;
        r->file = rr[i].file, r->format = rr[i].format, r->dist = rr[i].dist; /* taken over */
        r->base_ns = rr[i].base_ns, r->t0 = rr[i].t0, r->t1 = rr[i].t1;
        r->lo = rr[i].lo, r->hi = rr[i].hi;
    }
    free(rr);
    return 0;
}

static struct ranks_rank *find_rank(struct ctx *c, int rank)
{
    for (size_t i = 0; i < c->nr; i++)
        if (c->r[i].rank == rank) return &c->r[i];
    return NULL;
}

static int load_steps(struct ctx *c)
{
    struct rank_read_steps *st;
    struct rank_read_step row;
    int rc = rank_read_steps_open(c->db, &st, c->e);
    if (rc) return rc;
    size_t cap = 0;
    struct ranks_rank *cur = NULL;
    while ((rc = rank_read_steps_next(st, &row, c->e)) == 1) {
        struct ranks_rank *r = find_rank(c, row.rank);
        if (!r) continue;
        if (r != cur) cur = r, cap = r->nsteps;
        if (r->nsteps == cap) r->steps = xrealloc(r->steps, (cap = cap ? cap * 2 : 16) * sizeof *r->steps);
        struct ranks_step *s = &r->steps[r->nsteps++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", row.name);
        s->ts = row.ts;
        s->dur = row.dur;
        for (int k = 0; k < RANKS_NPARTS; k++) s->part[k] = row.part[k];
        s->col = -1;
    }
    rank_read_steps_close(st);
    return rc < 0 ? rc : 0;
}

static json_t *breakdown_avg(const struct ranks_rank *r)
{
    json_t *o = json_object();
    for (int k = 0; k < RANKS_NPARTS; k++) {
        double s = 0;
        for (size_t i = 0; i < r->nsteps; i++) s += (double)r->steps[i].part[k];
        json_object_set_new(o, summary_categories[k], us(r->nsteps ? s / (double)r->nsteps : 0));
    }
    return o;
}

static json_t *ranks_json(struct ctx *c, int *world)
{
    json_t *arr = json_array();
    int64_t first = INT64_MAX;
    for (size_t i = 0; i < c->nr; i++)
        if (c->r[i].t0 + c->r[i].base_ns < first) first = c->r[i].t0 + c->r[i].base_ns;
    for (size_t i = 0; i < c->nr; i++) {
        const struct ranks_rank *r = &c->r[i];
        json_t *o = json_object(), *di = r->dist ? json_loads(r->dist, 0, NULL) : NULL;
        char b[32];
        json_object_set_new(o, "rank", json_integer(r->rank));
        json_object_set_new(o, "file", r->file ? json_string(r->file) : json_null());
        json_object_set_new(o, "format", r->format ? json_string(r->format) : json_null());
        snprintf(b, sizeof b, "%lld", (long long)r->base_ns);
        json_object_set_new(o, "base_ns", r->base_ns ? json_string(b) : json_null());
        json_object_set_new(o, "t0_us", us((double)r->t0));
        json_object_set_new(o, "dur_us", us((double)(r->t1 - r->t0)));
        json_object_set_new(o, "offset_us", us((double)(r->t0 + r->base_ns - first)));
        json_object_set_new(o, "end_skew_us", r->has_skew ? us(r->end_skew) : json_null());
        json_t *dr = json_object_get(di, "rank"), *ws = json_object_get(di, "world_size");
        json_t *be = json_object_get(di, "backend");
        json_object_set_new(o, "distributed_rank", json_is_integer(dr) ? json_copy(dr) : json_null());
        json_object_set_new(o, "world_size", json_is_integer(ws) ? json_copy(ws) : json_null());
        json_object_set_new(o, "backend", json_is_string(be) ? json_copy(be) : json_null());
        if (json_is_integer(ws) && json_integer_value(ws) > *world) *world = (int)json_integer_value(ws);
        json_decref(di);
        double dsum = 0;
        for (size_t k = 0; k < r->nsteps; k++) dsum += (double)r->steps[k].dur;
        json_object_set_new(o, "steps", json_integer((json_int_t)r->nsteps));
        json_object_set_new(o, "avg_step_us", us(r->nsteps ? dsum / (double)r->nsteps : 0));
        json_object_set_new(o, "breakdown_us", breakdown_avg(r));
        json_object_set_new(o, "comm_us", us(r->comm));
        json_object_set_new(o, "compute_us", us(r->compute));
        json_object_set_new(o, "overlap_us", us(r->overlap));
        json_object_set_new(o, "exposed_us", us(r->comm - r->overlap));
        json_object_set_new(o, "host_collectives", json_boolean(r->host_comm));
        int64_t tot = 0, wait = 0, tr = 0, nm = 0;
        for (size_t k = 0; k < r->ninst; k++) {
            tot += r->inst[k].dur;
            if (r->inst[k].wait >= 0) wait += r->inst[k].wait, tr += r->inst[k].dur - r->inst[k].wait, nm++;
        }
        json_object_set_new(o, "collectives", json_integer((json_int_t)r->ninst));
        json_object_set_new(o, "collectives_matched", json_integer((json_int_t)nm));
        json_object_set_new(o, "collective_us", us((double)tot));
        json_object_set_new(o, "wait_us", us((double)wait));
        json_object_set_new(o, "transfer_us", us((double)tr));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* Heat-map columns: the union of step names, ordered by the number after
 * '#' (ProfilerStep#N) when there is one, else by position; when no name is
 * common to every rank with steps, steps are matched by position and the
 * columns take the names of the rank with most steps. */
struct col {
    const char *name;
    long long order;
};

static int cmp_col(const void *x, const void *y)
{
    const struct col *p = x, *q = y;
    if (p->order != q->order) return p->order < q->order ? -1 : 1;
    return strcmp(p->name, q->name);
}

static long long step_order(const char *name, size_t idx)
{
    const char *h = strrchr(name, '#');
    if (h && h[1] >= '0' && h[1] <= '9') return strtoll(h + 1, NULL, 10);
    return (long long)idx;
}

static json_t *heatmap_json(struct ctx *c, int *truncated)
{
    size_t total = 0, nc = 0;
    for (size_t i = 0; i < c->nr; i++) total += c->r[i].nsteps;
    struct col *cols = xcalloc(total ? total : 1, sizeof *cols);
    for (size_t i = 0; i < c->nr; i++)
        for (size_t j = 0; j < c->r[i].nsteps; j++)
            cols[nc++] = (struct col){ c->r[i].steps[j].name, step_order(c->r[i].steps[j].name, j) };
    xqsort(cols, nc, sizeof *cols, cmp_col);
    size_t u = 0, run = 0, shared = 0, with_steps = 0, most = 0;
    for (size_t i = 0; i < nc; i++) {
        if (!u || strcmp(cols[u - 1].name, cols[i].name) != 0 || cols[u - 1].order != cols[i].order) {
            cols[u++] = cols[i];
            run = 0;
        }
        if (++run > shared) shared = run;
    }
    for (size_t i = 0; i < c->nr; i++) {
        if (c->r[i].nsteps) with_steps++;
        if (c->r[i].nsteps > c->r[most].nsteps) most = i;
    }
    /* no step name common to every rank (ranks that numbered their steps
     * differently): match steps by position instead */
    int by_index = with_steps >= 2 && shared < with_steps;
    if (by_index) {
        u = c->r[most].nsteps;
        for (size_t k = 0; k < u; k++) cols[k] = (struct col){ c->r[most].steps[k].name, (long long)k };
    }
    if (u > RANKS_MAX_STEPS) u = RANKS_MAX_STEPS, *truncated = 1;
    json_t *names = json_array(), *rows = json_array(), *rk = json_array();
    double mn = 0, mx = 0;
    int any = 0;
    for (size_t k = 0; k < u; k++) json_array_append_new(names, json_string(cols[k].name));
    for (size_t i = 0; i < c->nr; i++) {
        json_t *row = json_array();
        for (size_t k = 0; k < u; k++) json_array_append_new(row, json_null());
        for (size_t j = 0; j < c->r[i].nsteps; j++) {
            struct ranks_step *s = &c->r[i].steps[j];
            struct col key = { s->name, step_order(s->name, j) };
            struct col *hit = by_index ? (j < u ? &cols[j] : NULL) : bsearch(&key, cols, u, sizeof *cols, cmp_col);
            if (!hit) continue;
            s->col = (int)(hit - cols);
            json_array_set_new(row, (size_t)s->col, us((double)s->dur));
            double d = (double)s->dur;
            if (!any || d < mn) mn = d;
            if (!any || d > mx) mx = d;
            any = 1;
        }
        json_array_append_new(rows, row);
        json_array_append_new(rk, json_integer(c->r[i].rank));
    }
    free(cols);
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:s}", "steps", names, "ranks", rk, "dur_us", rows, "min_us",
                     any ? us(mn) : json_null(), "max_us", any ? us(mx) : json_null(), "matched_by",
                     by_index ? "index" : "name");
}

/* Element sizes of the dtype spellings traces use. */
static int dtype_bytes(const char *t)
{
    static const struct {
        const char *name;
        int bytes;
    } map[] = { { "float", 4 },       { "Float", 4 },        { "float32", 4 },  { "c10::Half", 2 }, { "Half", 2 },
                { "c10::BFloat16", 2 }, { "BFloat16", 2 },   { "float16", 2 },  { "bfloat16", 2 },  { "double", 8 },
                { "Double", 8 },       { "long int", 8 },     { "Long", 8 },     { "int64", 8 },     { "int", 4 },
                { "Int", 4 },          { "int32", 4 },        { "unsigned char", 1 }, { "Byte", 1 }, { "Char", 1 },
                { "signed char", 1 },  { "bool", 1 },         { "Bool", 1 },     { "uint8", 1 },     { "int8", 1 } };
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (strcmp(map[i].name, t) == 0) return map[i].bytes;
    return 0;
}

struct cell {
    int64_t calls, dur, wait, transfer, matched;
};

static json_t *comm_json(struct ctx *c)
{
    size_t nk = c->cm.nkeys;
    struct cell *cell = xcalloc(nk * c->nr + 1, sizeof *cell);
    int64_t *inmin = xcalloc(nk + 1, sizeof *inmin), *inmax = xcalloc(nk + 1, sizeof *inmax);
    int64_t *outmax = xcalloc(nk + 1, sizeof *outmax);
    for (size_t k = 0; k < nk; k++) inmin[k] = -1, inmax[k] = -1, outmax[k] = -1;
    for (size_t i = 0; i < c->nr; i++)
        for (size_t j = 0; j < c->r[i].ninst; j++) {
            const struct ranks_inst *x = &c->r[i].inst[j];
            struct cell *e = &cell[x->key * c->nr + i];
            e->calls++;
            e->dur += x->dur;
            if (x->wait >= 0) e->wait += x->wait, e->transfer += x->dur - x->wait, e->matched++;
            if (x->in_n >= 0 && (inmin[x->key] < 0 || x->in_n < inmin[x->key])) inmin[x->key] = x->in_n;
            if (x->in_n > inmax[x->key]) inmax[x->key] = x->in_n;
            if (x->out_n > outmax[x->key]) outmax[x->key] = x->out_n;
        }
    /* rows by total duration over ranks, longest first */
    size_t *order = xcalloc(nk + 1, sizeof *order);
    double *tot = xcalloc(nk + 1, sizeof *tot);
    for (size_t k = 0; k < nk; k++) {
        order[k] = k;
        for (size_t i = 0; i < c->nr; i++) tot[k] += (double)cell[k * c->nr + i].dur;
    }
    for (size_t a = 1; a < nk; a++) /* insertion sort: few rows */
        for (size_t b = a; b > 0 && tot[order[b]] > tot[order[b - 1]]; b--) {
            size_t t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    json_t *arr = json_array();
    for (size_t oi = 0; oi < nk; oi++) {
        size_t k = order[oi];
        const struct ranks_key *ky = &c->cm.keys[k];
        json_t *per = json_array();
        int64_t calls = 0, dur = 0, wait = 0, tr = 0, matched = 0;
        for (size_t i = 0; i < c->nr; i++) {
            const struct cell *e = &cell[k * c->nr + i];
            json_array_append_new(per, json_pack("{s:i,s:I,s:o,s:o,s:o}", "rank", c->r[i].rank, "calls",
                                                 (json_int_t)e->calls, "dur_us", us((double)e->dur), "wait_us",
                                                 e->matched ? us((double)e->wait) : json_null(), "transfer_us",
                                                 e->matched ? us((double)e->transfer) : json_null()));
            if (e->calls > calls) calls = e->calls;
            dur += e->dur, wait += e->wait, tr += e->transfer, matched += e->matched;
        }
        int eb = dtype_bytes(ky->dtype);
        json_t *o = json_object();
        json_object_set_new(o, "collective", json_string(ky->coll));
        json_object_set_new(o, "group", ky->pg[0] ? json_string(ky->pg) : json_null());
        json_object_set_new(o, "dtype", ky->dtype[0] ? json_string(ky->dtype) : json_null());
        json_object_set_new(o, "group_size", ky->group_size ? json_integer(ky->group_size) : json_null());
        json_object_set_new(o, "in_nelems_min", inmin[k] >= 0 ? json_integer(inmin[k]) : json_null());
        json_object_set_new(o, "in_nelems_max", inmax[k] >= 0 ? json_integer(inmax[k]) : json_null());
        json_object_set_new(o, "out_nelems_max", outmax[k] >= 0 ? json_integer(outmax[k]) : json_null());
        json_object_set_new(o, "bytes_max", eb && inmax[k] >= 0 ? json_integer(inmax[k] * eb) : json_null());
        json_object_set_new(o, "calls", json_integer(calls));
        json_object_set_new(o, "dur_us", us((double)dur));
        json_object_set_new(o, "wait_us", matched ? us((double)wait) : json_null());
        json_object_set_new(o, "transfer_us", matched ? us((double)tr) : json_null());
        json_object_set_new(o, "ranks", per);
        json_array_append_new(arr, o);
    }
    free(order);
    free(tot);
    free(cell);
    free(inmin);
    free(inmax);
    free(outmax);
    return arr;
}

/* The top_n kernels by time over all ranks, with each rank's time (0 when
 * it never ran the kernel) and the spread. */
static int kernels_json(struct ctx *c, int top_n, json_t **out)
{
    struct rank_read_kernels *k;
    const char *name;
    int64_t total, t, n;
    int comm, rk;
    *out = json_array();
    int rc = rank_read_kernels_open(c->db, top_n, &k, c->e);
    if (rc) return rc;
    double *v = xcalloc(c->nr ? c->nr : 1, sizeof *v), *tmp = xcalloc(c->nr ? c->nr : 1, sizeof *tmp);
    int64_t *calls = xcalloc(c->nr ? c->nr : 1, sizeof *calls);
    while ((rc = rank_read_kernels_next(k, &name, &total, &comm, c->e)) == 1) {
        memset(v, 0, c->nr * sizeof *v);
        memset(calls, 0, c->nr * sizeof *calls);
        while ((rc = rank_read_kernel_ranks_next(k, &rk, &t, &n, c->e)) == 1) {
            for (size_t i = 0; i < c->nr; i++)
                if (c->r[i].rank == rk) v[i] = (double)t, calls[i] = n;
        }
        if (rc < 0) break;
        json_t *times = json_array(), *cl = json_array();
        size_t imin = 0, imax = 0;
        for (size_t i = 0; i < c->nr; i++) {
            json_array_append_new(times, us(v[i]));
            json_array_append_new(cl, json_integer(calls[i]));
            if (v[i] < v[imin]) imin = i;
            if (v[i] > v[imax]) imax = i;
            tmp[i] = v[i];
        }
        double med = ranks_comm_median(tmp, c->nr);
        json_array_append_new(*out, json_pack("{s:s,s:b,s:o,s:o,s:o,s:o,s:o,s:o,s:i,s:i}", "name", name ? name : "",
                                              "communication", comm, "total_us", us((double)total), "ranks_us", times,
                                              "calls", cl, "min_us", us(v[imin]), "median_us", us(med), "max_us",
                                              us(v[imax]), "min_rank", c->nr ? c->r[imin].rank : 0, "max_rank",
                                              c->nr ? c->r[imax].rank : 0));
    }
    free(v);
    free(tmp);
    free(calls);
    rank_read_kernels_close(k);
    return rc < 0 ? rc : 0;
}

/* The stored straggler finding with per-step evidence: in each step the
 * straggler's own work (step minus communication) against the others'
 * median, and how much later it reaches the collectives. Collectives end
 * together on every rank, so an instance's lateness is the others' median
 * duration minus the straggler's (independent of clock alignment); a
 * step's lateness is that of its latest collective (collectives of one
 * step often run side by side, so they are not added up). */
static int straggler_json(struct ctx *c, json_t **out)
{
    json_t *all = NULL, *f = NULL;
    size_t i;
    *out = json_null();
    if (rules_findings(c->db, -1, &all, c->e) < 0) return c->e->code == ERR_INVALID ? 0 : c->e->code;
    json_array_foreach(all, i, f) {
        const char *id = json_string_value(json_object_get(f, "id"));
        if (id && strcmp(id, "straggler") == 0) break;
    }
    if (i == json_array_size(all) || !json_is_integer(json_object_get(f, "rank"))) {
        json_decref(all);
        return 0;
    }
    int srank = (int)json_integer_value(json_object_get(f, "rank"));
    struct ranks_rank *s = find_rank(c, srank);
    json_t *ev = json_object_get(f, "evidence");
    json_t *o = json_object();
    static const char *const from_f[] = { "title", "severity", "saving_us", "link" };
    static const char *const from_ev[] = { "lines", "excess_us", "others_wait_us", "own_us", "median_own_us" };
    json_object_set_new(o, "rank", json_integer(srank));
    for (size_t k = 0; k < sizeof from_f / sizeof *from_f; k++)
        json_object_set_new(o, from_f[k], or_null(json_object_get(f, from_f[k])));
    for (size_t k = 0; k < sizeof from_ev / sizeof *from_ev; k++)
        json_object_set_new(o, from_ev[k], or_null(json_object_get(ev, from_ev[k])));
    json_decref(all);
    json_t *steps = json_array();
    double late_total = 0;
    size_t late_steps = 0;
    if (s && s->nsteps) {
        double *late = xcalloc(s->nsteps, sizeof *late), *tmp = xcalloc(c->nr ? c->nr : 1, sizeof *tmp);
        int *n = xcalloc(s->nsteps, sizeof *n);
        /* s's instances are in key order (match_instances); for instance k
         * of a key on s, the others' k-th instance of that key */
        size_t si = (size_t)(s - c->r);
        for (size_t key = 0; key < c->cm.nkeys; key++)
            for (size_t k = 0; k < ranks_comm_count(s, key); k++) {
                const struct ranks_inst *x = ranks_comm_at(s, key, k);
                if (x->step < 0 || x->wait < 0) continue;
                size_t m = 0;
                for (size_t j = 0; j < c->nr; j++)
                    if (j != si && k < ranks_comm_count(&c->r[j], key))
                        tmp[m++] = (double)ranks_comm_at(&c->r[j], key, k)->dur;
                if (!m) continue;
                double l = ranks_comm_median(tmp, m) - (double)x->dur;
                if (!n[x->step] || l > late[x->step]) late[x->step] = l;
                n[x->step]++;
            }
        for (size_t j = 0; j < s->nsteps; j++) {
            const struct ranks_step *st = &s->steps[j];
            /* the others' own work in the step of the same name */
            size_t m = 0;
            for (size_t r = 0; r < c->nr; r++) {
                if (&c->r[r] == s) continue;
                for (size_t q = 0; q < c->r[r].nsteps; q++)
                    if (c->r[r].steps[q].col == st->col && st->col >= 0) {
                        tmp[m++] = (double)(c->r[r].steps[q].dur - c->r[r].steps[q].part[COMM_PART]);
                        break;
                    }
            }
            double own = (double)(st->dur - st->part[COMM_PART]);
            json_array_append_new(steps,
                                  json_pack("{s:s,s:o,s:o,s:o,s:o,s:i}", "name", st->name, "step_us", us((double)st->dur),
                                            "own_us", us(own), "others_own_us", m ? us(ranks_comm_median(tmp, m)) : json_null(),
                                            "late_us", n[j] ? us(late[j]) : json_null(), "collectives", n[j]));
            if (n[j]) late_total += late[j], late_steps++;
        }
        free(late);
        free(tmp);
        free(n);
    }
    json_object_set_new(o, "steps", steps);
    json_object_set_new(o, "late_us", late_steps ? us(late_total / (double)late_steps) : json_null());
    *out = o;
    return 0;
}

/* ====================================================================== */
/* Entry point                                                            */
/* ====================================================================== */

static void ctx_free(struct ctx *c)
{
    for (size_t i = 0; i < c->nr; i++) {
        free(c->r[i].file);
        free(c->r[i].format);
        free(c->r[i].dist);
        free(c->r[i].steps);
        free(c->r[i].inst);
        free(c->r[i].kstart);
    }
    free(c->r);
    ranks_comm_free(&c->cm);
}

int ranks_build(sqlite3 *db, int top_n, json_t **out, struct err *e)
{
    struct ctx c;
    int rc, steps_cut = 0;
    memset(&c, 0, sizeof c);
    c.db = db, c.e = e;
    *out = NULL;
    if (top_n < 1) top_n = 1;
    if (top_n > 100) top_n = 100;
    if ((rc = scan_has_table(db, "step", e)) < 0) return rc;
    if (rc == 0) return err_set(e, ERR_CONFLICT, "this run was imported before analysis existed; re-import it");
    if (load_ranks(&c) < 0 || load_steps(&c) < 0 || ranks_comm_open(&c.cm, db, e) < 0) goto fail;
    for (size_t i = 0; i < c.nr; i++) {
        if (ranks_comm_scan(&c.cm, db, &c.r[i], e) < 0) goto fail;
        /* Without collectives the overlap pass would re-sweep every kernel
         * only to find what the stored breakdown already says (the common
         * single-GPU run, where it was most of the answer's time). */
        if (!c.r[i].ninst && !c.cm.truncated) ranks_comm_no_collectives(&c.r[i]);
        else if (ranks_comm_overlap(db, &c.r[i], e) < 0) goto fail;
    }
    ranks_comm_match(c.cm.nkeys, c.r, c.nr);

    int world = 0;
    json_t *o = json_object(), *cats = json_array(), *kern = NULL, *strag = NULL;
    for (int k = 0; k < RANKS_NPARTS; k++) json_array_append_new(cats, json_string(summary_categories[k]));
    json_object_set_new(o, "categories", cats);
    json_object_set_new(o, "heatmap", heatmap_json(&c, &steps_cut));
    json_object_set_new(o, "ranks", ranks_json(&c, &world));
    json_object_set_new(o, "comparable", json_boolean(c.nr >= 2));
    json_object_set_new(o, "world_size", world ? json_integer(world) : json_null());
    int aligned = c.nr > 0;
    for (size_t i = 0; i < c.nr; i++)
        if (!c.r[i].base_ns) aligned = 0;
    json_object_set_new(o, "alignment", json_string(aligned ? "baseTimeNanoseconds" : "trace clock"));
    json_object_set_new(o, "comm_ops", comm_json(&c));
    if (kernels_json(&c, top_n, &kern) < 0 || straggler_json(&c, &strag) < 0) {
        json_decref(kern);
        json_decref(o);
        goto fail;
    }
    json_object_set_new(o, "kernels", kern);
    json_object_set_new(o, "straggler", strag);
    json_object_set_new(o, "truncated", json_pack("{s:b,s:b}", "collectives", c.cm.truncated, "steps", steps_cut));
    ctx_free(&c);
    *out = o;
    return 0;
fail:
    ctx_free(&c);
    return e->code ? e->code : ERR_DB;
}

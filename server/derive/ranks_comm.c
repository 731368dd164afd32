/* ranks_comm.c — the collectives of the cross-rank comparison (see
 * include/derive/ranks_comm.h).
 *
 * Reading order: the collective names; what one collective is (its args,
 * else its launching op's); per rank, the scan and the overlap; the
 * matching across ranks. */
#define LOG_MODULE "ranks"
#include "derive/ranks_comm.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "derive/ranks.h"
#include "derive/rules.h"
#include "store/comm_read.h"
#include "store/stats_read.h"

/* ====================================================================== */
/* Small helpers                                                          */
/* ====================================================================== */

static int cmp_double(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

/* Median of v[0..n) (v is reordered); 0 when n = 0. */
double ranks_comm_median(double *v, size_t n)
{
    if (!n) return 0;
    xqsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
    return (p > q) - (p < q);
}

/* ====================================================================== */
/* Collective names                                                       */
/* ====================================================================== */

static void names_add(struct ranks_names *s, uint32_t id, const char *text)
{
    if (s->n == s->cap) s->v = xrealloc(s->v, (s->cap = s->cap ? s->cap * 2 : 32) * sizeof *s->v);
    s->v[s->n].id = id;
    ranks_comm_coll_from_name(text ? text : "", s->v[s->n].coll, sizeof s->v[s->n].coll);
    s->n++;
}

static void names_sort(struct ranks_names *s)
{
    if (s->n) xqsort(s->v, s->n, sizeof *s->v, cmp_u32); /* id is the first member */
}

static const struct ranks_named *names_find(const struct ranks_names *s, uint32_t id)
{
    return s->n ? bsearch(&id, s->v, s->n, sizeof *s->v, cmp_u32) : NULL;
}

/* The kernels analysis flagged as collectives (by name or by their
 * "Collective name" argument), the host spans named like collectives
 * (nccl:all_reduce, gloo:all_reduce ...) and record_param_comms. */
static int load_comm_names(struct ranks_comm *cm, sqlite3 *db, struct err *e)
{
    struct stats_read_names *c;
    uint32_t id;
    const char *s;
    int kernel;
    int rc = stats_read_comm_names_rpc_open(db, &c, e);
    if (rc) return rc;
    while ((rc = stats_read_comm_names_next(c, &id, &s, &kernel, e)) == 1) {
        if (kernel) names_add(&cm->kern, id, s);
        else if (s && strcmp(s, "record_param_comms") == 0) cm->rpc_id = id;
        else if (s && kclass_comm_op(s)) names_add(&cm->ops, id, s);
    }
    stats_read_names_close(c);
    names_sort(&cm->kern);
    names_sort(&cm->ops);
    return rc < 0 ? rc : 0;
}

int ranks_comm_open(struct ranks_comm *cm, sqlite3 *db, struct err *e)
{
    struct err le;
    memset(cm, 0, sizeof *cm);
    cm->budget = RANKS_MAX_INSTANCES;
    if (load_comm_names(cm, db, e) < 0) return e->code;
    /* launch lookups are optional: a failure only loses message sizes */
    if (comm_read_launch_open(db, &cm->launch, &le) < 0) LOG_WARN("launch lookup unavailable: %s", le.msg);
    return 0;
}

void ranks_comm_free(struct ranks_comm *cm)
{
    free(cm->kern.v);
    free(cm->ops.v);
    comm_read_launch_close(cm->launch);
    cm->kern.v = cm->ops.v = NULL;
    cm->launch = NULL;
}

/* ====================================================================== */
/* Collectives: what each one is                                          */
/* ====================================================================== */

struct meta {
    char coll[RANKS_COMM_NAME_LEN], pg[RANKS_COMM_NAME_LEN], dtype[32];
    int64_t in_n, out_n;
    int group_size;
};

static void copy_str(char *dst, size_t n, const char *s)
{
    snprintf(dst, n, "%s", s ? s : "");
}

/* The collective a name says: "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)"
 * -> "AllReduce", "gloo:all_reduce" -> "all_reduce", else the name up to
 * its argument list. */
void ranks_comm_coll_from_name(const char *name, char *out, size_t n)
{
    static const char *const prefixes[] = { "ncclDevKernel_", "ncclKernel_", "rcclKernel_", "nccl:", "gloo:",
                                            "mpi:", "ucc:", "hccl:", "rccl:" };
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t k = strlen(prefixes[i]);
        if (strncmp(name, prefixes[i], k) == 0) {
            const char *p = name + k;
            size_t len = strcspn(p, k > 6 && prefixes[i][k - 1] == '_' ? "_(<" : "(<");
            if (len >= n) len = n - 1;
            memcpy(out, p, len);
            out[len] = '\0';
            if (len) return;
        }
    }
    size_t len = strcspn(name, "(<");
    if (len >= n) len = n - 1;
    memcpy(out, name, len);
    out[len] = '\0';
}

static int64_t int_arg(json_t *a, const char *k)
{
    json_t *v = json_object_get(a, k);
    if (json_is_integer(v)) return (int64_t)json_integer_value(v);
    if (json_is_real(v)) return (int64_t)json_real_value(v);
    if (json_is_string(v)) return strtoll(json_string_value(v), NULL, 10);
    return -1;
}

/* Fills what m lacks from a slice's args (the NCCL kernel's own, or the
 * launching record_param_comms / nccl:* op's). */
static void meta_from_args(struct meta *m, const char *args_text)
{
    if (!args_text) return;
    json_t *a = json_loads(args_text, 0, NULL);
    if (!json_is_object(a)) {
        json_decref(a);
        return;
    }
    const char *s;
    if (!m->coll[0] && (s = json_string_value(json_object_get(a, "Collective name"))) && *s)
        copy_str(m->coll, sizeof m->coll, s);
    if (!m->pg[0]) {
        if ((s = json_string_value(json_object_get(a, "Process Group Description"))) && *s && strcmp(s, "undefined"))
            copy_str(m->pg, sizeof m->pg, s);
        else if ((s = json_string_value(json_object_get(a, "Process Group Name"))) && *s)
            copy_str(m->pg, sizeof m->pg, s);
    }
    if (!m->dtype[0] && (s = json_string_value(json_object_get(a, "dtype"))) && *s)
        copy_str(m->dtype, sizeof m->dtype, s);
    if (m->in_n < 0) m->in_n = int_arg(a, "In msg nelems");
    if (m->out_n < 0) m->out_n = int_arg(a, "Out msg nelems");
    if (m->group_size <= 0) {
        int64_t g = int_arg(a, "Group size");
        if (g > 0 && g < 1 << 30) m->group_size = (int)g;
    }
    /* older traces: the op's first input tensor */
    json_t *dims = json_array_get(json_object_get(a, "Input Dims"), 0);
    if (m->in_n < 0 && json_is_array(dims) && json_array_size(dims)) {
        int64_t p = 1;
        size_t i;
        json_t *d;
        json_array_foreach(dims, i, d) p *= json_is_integer(d) ? (int64_t)json_integer_value(d) : 0;
        m->in_n = p;
    }
    if (!m->dtype[0] && json_is_array(dims) && json_array_size(dims) &&
        (s = json_string_value(json_array_get(json_object_get(a, "Input type"), 0))) && *s)
        copy_str(m->dtype, sizeof m->dtype, s);
    json_decref(a);
}

/* For a kernel without message facts: its launching runtime call (same
 * correlation id, on the rank's host) and that call's enclosing ops, up to
 * the collective op or record_param_comms. */
static int meta_from_launch(struct ranks_comm *cm, struct err *e, const struct ranks_rank *r, int64_t corr, struct meta *m)
{
    if (!corr || !cm->launch) return 0;
    int64_t parent = 0;
    int rc = comm_read_launch_parent(cm->launch, corr, r->lo, r->hi, &parent, e);
    for (int depth = 0; rc >= 0 && parent > 0 && depth < 4; depth++) {
        uint32_t name;
        const char *args;
        if ((rc = comm_read_launch_slice(cm->launch, parent, &name, &args, &parent, e)) != 1) break;
        const struct ranks_named *op = names_find(&cm->ops, name);
        int is_op = op != NULL, is_rpc = cm->rpc_id && name == cm->rpc_id;
        if (op && !m->coll[0]) copy_str(m->coll, sizeof m->coll, op->coll);
        if (is_op || is_rpc) meta_from_args(m, args);
        if (is_rpc) break;
    }
    comm_read_launch_release(cm->launch);
    return rc < 0 ? rc : 0;
}

static uint16_t key_of(struct ranks_comm *cm, const struct meta *m)
{
    for (size_t i = 0; i < cm->nkeys; i++)
        if (strcmp(cm->keys[i].coll, m->coll) == 0 && strcmp(cm->keys[i].pg, m->pg) == 0) {
            if (!cm->keys[i].dtype[0]) copy_str(cm->keys[i].dtype, sizeof cm->keys[i].dtype, m->dtype);
            if (!cm->keys[i].group_size) cm->keys[i].group_size = m->group_size;
            return (uint16_t)i;
        }
    if (cm->nkeys == RANKS_COMM_MAX_KEYS) return RANKS_COMM_MAX_KEYS - 1; /* lumped into the last row */
    struct ranks_key *k = &cm->keys[cm->nkeys];
    copy_str(k->coll, sizeof k->coll, m->coll);
    copy_str(k->pg, sizeof k->pg, m->pg);
    copy_str(k->dtype, sizeof k->dtype, m->dtype);
    k->group_size = m->group_size;
    return (uint16_t)cm->nkeys++;
}

/* ====================================================================== */
/* Per rank: collectives and overlap                                      */
/* ====================================================================== */

/* The index of the step of r whose [ts, ts+dur) holds t, or -1 (steps
 * are in time order). */
int ranks_comm_step_at(const struct ranks_rank *r, int64_t t)
{
    size_t lo = 0, hi = r->nsteps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->steps[mid].ts <= t) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    const struct ranks_step *s = &r->steps[lo - 1];
    return t < s->ts + s->dur && lo - 1 < INT16_MAX ? (int)(lo - 1) : -1;
}

static int cmp_inst_time(const void *x, const void *y)
{
    const struct ranks_inst *p = x, *q = y;
    return (p->ts > q->ts) - (p->ts < q->ts);
}

static int cmp_inst_key(const void *x, const void *y)
{
    const struct ranks_inst *p = x, *q = y;
    if (p->key != q->key) return p->key < q->key ? -1 : 1;
    return (p->ts > q->ts) - (p->ts < q->ts);
}

/* Reads the rank's collectives: communication kernels when it has any,
 * else the host spans of host-side backends (gloo). */
int ranks_comm_scan(struct ranks_comm *cm, sqlite3 *db, struct ranks_rank *r, struct err *e)
{
    struct comm_read_scan *st;
    struct comm_read_slice row;
    size_t cap = 0, nhost = 0;
    int rc;
    if (r->lo > r->hi) return 0;
    /* no name the run holds can be a collective: the sweep would find none */
    if (!cm->kern.n && !cm->ops.n) return 0;
    if ((rc = comm_read_scan_open(db, r->rank, r->lo, r->hi, &st, e)) < 0) return rc;
    struct ranks_inst *host = NULL;
    struct meta *hmeta = NULL;
    size_t hcap = 0;
    while ((rc = comm_read_scan_next(st, &row, e)) == 1) {
        const struct ranks_named *nm = names_find(row.kernel ? &cm->kern : &cm->ops, row.name);
        /* host spans count only on CPU threads: gloo's GPU-side annotation
         * copies would count each collective twice */
        if (!nm || (!row.kernel && !row.on_cpu)) continue;
        if (!cm->budget) {
            cm->truncated = 1;
            break;
        }
        struct meta m = { .in_n = -1, .out_n = -1 };
        meta_from_args(&m, row.args);
        struct ranks_inst in = { row.ts, row.dur, -1, -1, -1, 0, -1 };
        if (row.kernel) {
            if ((m.in_n < 0 || !m.coll[0]) && (rc = meta_from_launch(cm, e, r, row.corr, &m)) < 0) break;
            if (!m.coll[0]) copy_str(m.coll, sizeof m.coll, nm->coll);
            in.in_n = m.in_n, in.out_n = m.out_n;
            in.key = key_of(cm, &m);
            if (r->ninst == cap) r->inst = xrealloc(r->inst, (cap = cap ? cap * 2 : 64) * sizeof *r->inst);
            r->inst[r->ninst++] = in;
            cm->budget--;
        } else {
            if (!m.coll[0]) copy_str(m.coll, sizeof m.coll, nm->coll);
            in.in_n = m.in_n, in.out_n = m.out_n;
            if (nhost == hcap) {
                hcap = hcap ? hcap * 2 : 64;
                host = xrealloc(host, hcap * sizeof *host);
                hmeta = xrealloc(hmeta, hcap * sizeof *hmeta);
            }
            hmeta[nhost] = m;
            host[nhost++] = in;
            cm->budget--;
        }
    }
    comm_read_scan_close(st);
    if (rc < 0) {
        free(host);
        free(hmeta);
        return rc;
    }
    if (!r->ninst && nhost) {
        for (size_t i = 0; i < nhost; i++) host[i].key = key_of(cm, &hmeta[i]);
        free(r->inst);
        r->inst = host, r->ninst = nhost;
        r->host_comm = 1;
        host = NULL;
    } else {
        cm->budget += nhost;
    }
    free(host);
    free(hmeta);
    if (r->ninst) xqsort(r->inst, r->ninst, sizeof *r->inst, cmp_inst_time);
    for (size_t i = 0; i < r->ninst; i++) r->inst[i].step = (int16_t)ranks_comm_step_at(r, r->inst[i].ts);
    return 0;
}

/* Per step: comm = union of the collectives, compute = union of the other
 * kernels (any stream), overlap = their intersection (rules_comm_overlap,
 * shared with the comm_not_overlapped rule); means over the rank's steps. */
int ranks_comm_overlap(sqlite3 *db, struct ranks_rank *r, struct err *e)
{
    if (!r->nsteps || r->lo > r->hi) return 0;
    size_t n = r->nsteps;
    struct ivlist comm = { 0 };
    for (size_t i = 0; i < r->ninst; i++) ivlist_add(&comm, r->inst[i].ts, r->inst[i].ts + r->inst[i].dur);
    ivlist_normalize(&comm);
    struct ivl *w = xcalloc(n, sizeof *w);
    int64_t *cs = xcalloc(3 * n, sizeof *cs), *comp = cs + n, *ovl = comp + n;
    for (size_t i = 0; i < n; i++) w[i] = (struct ivl){ r->steps[i].ts, r->steps[i].ts + r->steps[i].dur };
    int rc = rules_comm_overlap(db, r->rank, r->lo, r->hi, &comm, w, n, cs, comp, ovl, e);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            r->comm += (double)cs[i];
            r->compute += (double)comp[i];
            r->overlap += (double)ovl[i];
        }
        r->comm /= (double)n;
        r->compute /= (double)n;
        r->overlap /= (double)n;
    }
    free(w);
    free(cs);
    ivlist_free(&comm);
    return rc;
}

void ranks_comm_no_collectives(struct ranks_rank *r)
{
    r->comm = r->overlap = r->compute = 0;
    if (!r->nsteps) return;
    for (size_t i = 0; i < r->nsteps; i++) r->compute += (double)r->steps[i].part[0];
    r->compute /= (double)r->nsteps;
}

/* ====================================================================== */
/* Matching collectives across ranks                                      */
/* ====================================================================== */

/* Instance k of each key is the same collective on every rank (matched by
 * order within (collective, process group)). transfer = the shortest
 * duration among the ranks that have it, wait = duration - transfer. */
void ranks_comm_match(size_t nkeys, struct ranks_rank *ranks, size_t nr)
{
    for (size_t i = 0; i < nr; i++) {
        struct ranks_rank *r = &ranks[i];
        if (r->ninst) xqsort(r->inst, r->ninst, sizeof *r->inst, cmp_inst_key);
        r->kstart = xcalloc(nkeys + 1, sizeof *r->kstart);
        size_t a = 0;
        for (size_t k = 0; k <= nkeys; k++) {
            while (a < r->ninst && r->inst[a].key < k) a++;
            r->kstart[k] = a;
        }
    }
    for (size_t key = 0; key < nkeys; key++) {
        size_t longest = 0;
        for (size_t i = 0; i < nr; i++)
            if (ranks_comm_count(&ranks[i], key) > longest) longest = ranks_comm_count(&ranks[i], key);
        for (size_t k = 0; k < longest; k++) {
            int64_t mn = INT64_MAX;
            size_t have = 0;
            for (size_t i = 0; i < nr; i++)
                if (k < ranks_comm_count(&ranks[i], key)) {
                    have++;
                    if (ranks_comm_at(&ranks[i], key, k)->dur < mn) mn = ranks_comm_at(&ranks[i], key, k)->dur;
                }
            if (have < 2) continue;
            for (size_t i = 0; i < nr; i++)
                if (k < ranks_comm_count(&ranks[i], key)) {
                    struct ranks_inst *x = ranks_comm_at(&ranks[i], key, k);
                    x->wait = x->dur - mn;
                }
        }
    }
    /* clock check: collectives end together, so a rank's median end offset
     * against the others' median end, on the aligned clocks, is the
     * residual clock error (plus launch skew); at most 4096 instances per
     * key are looked at */
    double *ends = xcalloc(nr ? nr : 1, sizeof *ends), *offs = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < nr; i++) {
        size_t no = 0;
        struct ranks_rank *r = &ranks[i];
        for (size_t key = 0; key < nkeys; key++)
            for (size_t k = 0; k < ranks_comm_count(r, key) && k < 4096; k++) {
                size_t m = 0;
                for (size_t j = 0; j < nr; j++)
                    if (j != i && k < ranks_comm_count(&ranks[j], key)) {
                        const struct ranks_inst *y = ranks_comm_at(&ranks[j], key, k);
                        ends[m++] = (double)(y->ts + y->dur + ranks[j].base_ns);
                    }
                if (!m) continue;
                const struct ranks_inst *x = ranks_comm_at(r, key, k);
                if (no == cap) offs = xrealloc(offs, (cap = cap ? cap * 2 : 256) * sizeof *offs);
                offs[no++] = (double)(x->ts + x->dur + r->base_ns) - ranks_comm_median(ends, m);
            }
        if (no) {
            r->end_skew = ranks_comm_median(offs, no);
            r->has_skew = 1;
        }
    }
    free(offs);
    free(ends);
}

/* ====================================================================== */
/* JSON sections                                                          */
/* ====================================================================== */

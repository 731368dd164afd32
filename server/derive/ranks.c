/* ranks.c — the cross-rank comparison of a run (see include/derive/ranks.h).
 *
 * Reading order: load the ranks and their steps; per rank, scan its slices
 * once for the collectives (NCCL/RCCL kernels, else gloo:/nccl: host spans)
 * and stream its compute kernels in time order for the overlap; match the
 * collectives across ranks; then write the JSON sections one by one. */
#define LOG_MODULE "ranks"
#include "derive/ranks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "derive/rules.h"
#include "derive/summary.h"
#include "store/model.h"
#include "store/rundb.h"
#include "store/scan.h"


#define NPARTS 8     /* breakdown parts, summary_categories[0..7] */
#define COMM_PART 3  /* index of "communication" among them */
#define MAX_KEYS 256 /* distinct (collective, process group) rows */
#define NAME_MAX_LEN 96

/* ====================================================================== */
/* Small helpers                                                          */
/* ====================================================================== */

static int cmp_double(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

/* Median of v[0..n) (v is reordered); 0 when n = 0. */
static double median(double *v, size_t n)
{
    if (!n) return 0;
    xqsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static json_t *us(double ns)
{
    return json_real(ns / 1000.0);
}

/* A new reference to v, or null. */
static json_t *or_null(json_t *v)
{
    return v ? json_incref(v) : json_null();
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
    return (p > q) - (p < q);
}

static void coll_from_name(const char *name, char *out, size_t n);

/* Sorted string ids with the collective each name says. */
struct named {
    uint32_t id;
    char coll[NAME_MAX_LEN];
};

struct names {
    struct named *v;
    size_t n, cap;
};

static void names_add(struct names *s, uint32_t id, const char *text)
{
    if (s->n == s->cap) s->v = xrealloc(s->v, (s->cap = s->cap ? s->cap * 2 : 32) * sizeof *s->v);
    s->v[s->n].id = id;
    coll_from_name(text ? text : "", s->v[s->n].coll, sizeof s->v[s->n].coll);
    s->n++;
}

static void names_sort(struct names *s)
{
    if (s->n) xqsort(s->v, s->n, sizeof *s->v, cmp_u32); /* id is the first member */
}

static const struct named *names_find(const struct names *s, uint32_t id)
{
    return s->n ? bsearch(&id, s->v, s->n, sizeof *s->v, cmp_u32) : NULL;
}

/* ====================================================================== */
/* Model                                                                  */
/* ====================================================================== */

struct step {
    char name[64];
    int64_t ts, dur, part[NPARTS];
    int col; /* heat-map column, -1 past RANKS_MAX_STEPS */
};

/* One collective on one rank. */
struct inst {
    int64_t ts, dur;
    int64_t in_n, out_n; /* message elements, -1 unknown */
    int64_t wait;        /* -1: unmatched */
    uint16_t key;        /* index into keys */
    int16_t step;        /* the rank's step holding its start, -1 none */
};

struct key {
    char coll[NAME_MAX_LEN], pg[NAME_MAX_LEN], dtype[32];
    int group_size; /* 0 unknown */
};

struct rank {
    int rank;
    char *file, *format, *dist; /* owned */
    int64_t base_ns, t0, t1;
    struct step *steps;
    size_t nsteps;
    int64_t lo, hi; /* slice id range; lo > hi: none */
    int host_comm;  /* collectives are host spans (gloo) */
    struct inst *inst;  /* by time, then by (key, time) once matched */
    size_t ninst;
    size_t *kstart;     /* after matching: key k is inst[kstart[k] .. kstart[k+1]) */
    double comm, compute, overlap; /* per step, ns */
    double end_skew;               /* median end offset vs the others, ns */
    int has_skew;
};

struct ctx {
    sqlite3 *db;
    struct err *e;
    struct rank *r;
    size_t nr;
    struct names kern, ops; /* comm kernel names; comm host-op names */
    uint32_t rpc_id;      /* str id of record_param_comms (0: none) */
    struct key keys[MAX_KEYS];
    size_t nkeys;
    size_t budget; /* instances still allowed */
    int truncated;
    sqlite3_stmt *by_corr, *by_id; /* launch lookup for message sizes */
};

/* ====================================================================== */
/* Loading ranks and steps                                                */
/* ====================================================================== */

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? xstrdup((const char *)s) : NULL;
}

static int load_ranks(struct ctx *c)
{
    sqlite3_stmt *st;
    int rc;
    size_t cap = 0;
    if (rundb_prepare(c->db,
                      "SELECT r.rank, r.file, r.format, r.base_ns, r.t0, r.t1, r.distributed,"
                      " (SELECT min(first_slice) FROM track WHERE rank = r.rank AND nslices > 0),"
                      " (SELECT max(last_slice) FROM track WHERE rank = r.rank AND nslices > 0)"
                      " FROM rank r ORDER BY r.rank",
                      &st, c->e) < 0)
        return c->e->code;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (c->nr == cap) c->r = xrealloc(c->r, (cap = cap ? cap * 2 : 8) * sizeof *c->r);
        struct rank *r = &c->r[c->nr++];
        memset(r, 0, sizeof *r);
        r->rank = sqlite3_column_int(st, 0);
        r->file = col_dup(st, 1);
        r->format = col_dup(st, 2);
        r->base_ns = sqlite3_column_int64(st, 3);
        r->t0 = sqlite3_column_int64(st, 4);
        r->t1 = sqlite3_column_int64(st, 5);
        r->dist = col_dup(st, 6);
        r->lo = 1, r->hi = 0;
        if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
            r->lo = sqlite3_column_int64(st, 7);
            r->hi = sqlite3_column_int64(st, 8);
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(c->db, c->e, "run database (ranks)");
}

static struct rank *find_rank(struct ctx *c, int rank)
{
    for (size_t i = 0; i < c->nr; i++)
        if (c->r[i].rank == rank) return &c->r[i];
    return NULL;
}

static int load_steps(struct ctx *c)
{
    sqlite3_stmt *st;
    int rc;
    if (rundb_prepare(c->db,
                      "SELECT rank, name, ts, dur, kernel, memcpy, memset, comm, runtime, dataloader, cpu_exec, other"
                      " FROM step ORDER BY rank, idx",
                      &st, c->e) < 0)
        return c->e->code;
    size_t cap = 0;
    struct rank *cur = NULL;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct rank *r = find_rank(c, sqlite3_column_int(st, 0));
        if (!r) continue;
        if (r != cur) cur = r, cap = r->nsteps;
        if (r->nsteps == cap) r->steps = xrealloc(r->steps, (cap = cap ? cap * 2 : 16) * sizeof *r->steps);
        struct step *s = &r->steps[r->nsteps++];
        memset(s, 0, sizeof *s);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        snprintf(s->name, sizeof s->name, "%s", name ? name : "");
        s->ts = sqlite3_column_int64(st, 2);
        s->dur = sqlite3_column_int64(st, 3);
        for (int k = 0; k < NPARTS; k++) s->part[k] = sqlite3_column_int64(st, 4 + k);
        s->col = -1;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(c->db, c->e, "run database (steps)");
}

/* The kernels analysis flagged as collectives (by name or by their
 * "Collective name" argument), the host spans named like collectives
 * (nccl:all_reduce, gloo:all_reduce ...) and record_param_comms. */
static int load_comm_names(struct ctx *c)
{
    sqlite3_stmt *st;
    int rc;
    if (rundb_prepare(c->db,
                      "SELECT id, s, s IN (SELECT name FROM kernel_stat WHERE comm) FROM str"
                      " WHERE instr(substr(s, 1, 6), ':') > 0 OR s = 'record_param_comms'"
                      " OR s IN (SELECT name FROM kernel_stat WHERE comm)",
                      &st, c->e) < 0)
        return c->e->code;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t id = (uint32_t)sqlite3_column_int64(st, 0);
        const char *s = (const char *)sqlite3_column_text(st, 1);
        if (sqlite3_column_int(st, 2)) names_add(&c->kern, id, s);
        else if (s && strcmp(s, "record_param_comms") == 0) c->rpc_id = id;
        else if (s && kclass_comm_op(s)) names_add(&c->ops, id, s);
    }
    sqlite3_finalize(st);
    names_sort(&c->kern);
    names_sort(&c->ops);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(c->db, c->e, "run database (names)");
}

/* ====================================================================== */
/* Collectives: what each one is                                          */
/* ====================================================================== */

struct meta {
    char coll[NAME_MAX_LEN], pg[NAME_MAX_LEN], dtype[32];
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
static void coll_from_name(const char *name, char *out, size_t n)
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
static int meta_from_launch(struct ctx *c, const struct rank *r, int64_t corr, struct meta *m)
{
    if (!corr || !c->by_corr || !c->by_id) return 0;
    sqlite3_stmt *q = c->by_corr;
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, corr);
    sqlite3_bind_int64(q, 2, r->lo);
    sqlite3_bind_int64(q, 3, r->hi);
    int64_t parent = 0;
    int rc = scan_step(q, c->e, "run database (launch calls)");
    if (rc == 1) parent = sqlite3_column_int64(q, 0);
    sqlite3_reset(q);
    for (int depth = 0; rc >= 0 && parent > 0 && depth < 4; depth++) {
        q = c->by_id;
        sqlite3_reset(q);
        sqlite3_bind_int64(q, 1, parent);
        if ((rc = scan_step(q, c->e, "run database (launch callers)")) != 1) break;
        uint32_t name = (uint32_t)sqlite3_column_int64(q, 0);
        const struct named *op = names_find(&c->ops, name);
        int is_op = op != NULL, is_rpc = c->rpc_id && name == c->rpc_id;
        if (op && !m->coll[0]) copy_str(m->coll, sizeof m->coll, op->coll);
        if (is_op || is_rpc) meta_from_args(m, (const char *)sqlite3_column_text(q, 1));
        parent = sqlite3_column_int64(q, 2);
        if (is_rpc) break;
    }
    sqlite3_reset(q);
    return rc < 0 ? rc : 0;
}

static uint16_t key_of(struct ctx *c, const struct meta *m)
{
    for (size_t i = 0; i < c->nkeys; i++)
        if (strcmp(c->keys[i].coll, m->coll) == 0 && strcmp(c->keys[i].pg, m->pg) == 0) {
            if (!c->keys[i].dtype[0]) copy_str(c->keys[i].dtype, sizeof c->keys[i].dtype, m->dtype);
            if (!c->keys[i].group_size) c->keys[i].group_size = m->group_size;
            return (uint16_t)i;
        }
    if (c->nkeys == MAX_KEYS) return MAX_KEYS - 1; /* lumped into the last row */
    struct key *k = &c->keys[c->nkeys];
    copy_str(k->coll, sizeof k->coll, m->coll);
    copy_str(k->pg, sizeof k->pg, m->pg);
    copy_str(k->dtype, sizeof k->dtype, m->dtype);
    k->group_size = m->group_size;
    return (uint16_t)c->nkeys++;
}

/* ====================================================================== */
/* Per rank: collectives and overlap                                      */
/* ====================================================================== */

/* The index of the step of r whose [ts, ts+dur) holds t, or -1 (steps
 * are in time order). */
static int step_at(const struct rank *r, int64_t t)
{
    size_t lo = 0, hi = r->nsteps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r->steps[mid].ts <= t) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    const struct step *s = &r->steps[lo - 1];
    return t < s->ts + s->dur && lo - 1 < INT16_MAX ? (int)(lo - 1) : -1;
}

static int cmp_inst_time(const void *x, const void *y)
{
    const struct inst *p = x, *q = y;
    return (p->ts > q->ts) - (p->ts < q->ts);
}

static int cmp_inst_key(const void *x, const void *y)
{
    const struct inst *p = x, *q = y;
    if (p->key != q->key) return p->key < q->key ? -1 : 1;
    return (p->ts > q->ts) - (p->ts < q->ts);
}

/* Reads the rank's collectives: communication kernels when it has any,
 * else the host spans of host-side backends (gloo). */
static int scan_collectives(struct ctx *c, struct rank *r)
{
    sqlite3_stmt *st;
    size_t cap = 0, nhost = 0;
    int rc;
    if (r->lo > r->hi) return 0;
    /* last column: on a CPU thread. Host spans count only there: gloo's
     * GPU-side annotation copies would count each collective twice */
    if (rundb_prepare(
            c->db,
            "SELECT ts, dur, name, kind, corr, args, track IN (SELECT id FROM track WHERE rank = ?3 AND kind = ?4)"
            " FROM slice WHERE id BETWEEN ?1 AND ?2 AND kind IN (?5, ?6, ?7)",
            &st, c->e) < 0)
        return c->e->code;
    sqlite3_bind_int64(st, 1, r->lo);
    sqlite3_bind_int64(st, 2, r->hi);
    sqlite3_bind_int(st, 3, r->rank);
    sqlite3_bind_int(st, 4, TB_TRACK_CPU);
    sqlite3_bind_int(st, 5, TB_K_CPU_OP);
    sqlite3_bind_int(st, 6, TB_K_USER_ANNOTATION);
    sqlite3_bind_int(st, 7, TB_K_KERNEL);
    struct inst *host = NULL;
    struct meta *hmeta = NULL;
    size_t hcap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        uint32_t name = (uint32_t)sqlite3_column_int64(st, 2);
        int is_kernel = sqlite3_column_int(st, 3) == TB_K_KERNEL;
        const struct named *nm = names_find(is_kernel ? &c->kern : &c->ops, name);
        if (!nm || (!is_kernel && !sqlite3_column_int(st, 6))) continue;
        if (!c->budget) {
            c->truncated = 1;
            break;
        }
        struct meta m = { .in_n = -1, .out_n = -1 };
        meta_from_args(&m, (const char *)sqlite3_column_text(st, 5));
        struct inst in = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), -1, -1, -1, 0, -1 };
        if (is_kernel) {
            if ((m.in_n < 0 || !m.coll[0]) && (rc = meta_from_launch(c, r, sqlite3_column_int64(st, 4), &m)) < 0)
                break;
            if (!m.coll[0]) copy_str(m.coll, sizeof m.coll, nm->coll);
            in.in_n = m.in_n, in.out_n = m.out_n;
            in.key = key_of(c, &m);
            if (r->ninst == cap) r->inst = xrealloc(r->inst, (cap = cap ? cap * 2 : 64) * sizeof *r->inst);
            r->inst[r->ninst++] = in;
            c->budget--;
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
            c->budget--;
        }
    }
    sqlite3_finalize(st);
    if (rc < 0 || (rc != SQLITE_DONE && rc != SQLITE_ROW)) {
        free(host);
        free(hmeta);
        return rc < 0 ? rc : rundb_db_error(c->db, c->e, "run database (collectives)");
    }
    if (!r->ninst && nhost) {
        for (size_t i = 0; i < nhost; i++) host[i].key = key_of(c, &hmeta[i]);
        free(r->inst);
        r->inst = host, r->ninst = nhost;
        r->host_comm = 1;
        host = NULL;
    } else {
        c->budget += nhost;
    }
    free(host);
    free(hmeta);
    if (r->ninst) xqsort(r->inst, r->ninst, sizeof *r->inst, cmp_inst_time);
    for (size_t i = 0; i < r->ninst; i++) r->inst[i].step = (int16_t)step_at(r, r->inst[i].ts);
    return 0;
}

/* Per step: comm = union of the collectives, compute = union of the other
 * kernels (any stream), overlap = their intersection (rules_comm_overlap,
 * shared with the comm_not_overlapped rule); means over the rank's steps. */
static int measure_overlap(struct ctx *c, struct rank *r)
{
    if (!r->nsteps || r->lo > r->hi) return 0;
    size_t n = r->nsteps;
    struct ivlist comm = { 0 };
    for (size_t i = 0; i < r->ninst; i++) ivlist_add(&comm, r->inst[i].ts, r->inst[i].ts + r->inst[i].dur);
    ivlist_normalize(&comm);
    struct ivl *w = xcalloc(n, sizeof *w);
    int64_t *cs = xcalloc(3 * n, sizeof *cs), *comp = cs + n, *ovl = comp + n;
    for (size_t i = 0; i < n; i++) w[i] = (struct ivl){ r->steps[i].ts, r->steps[i].ts + r->steps[i].dur };
    int rc = rules_comm_overlap(c->db, r->rank, r->lo, r->hi, &comm, w, n, cs, comp, ovl, c->e);
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

/* ====================================================================== */
/* Matching collectives across ranks                                      */
/* ====================================================================== */

/* Instance k of each key is the same collective on every rank (matched by
 * order within (collective, process group)). transfer = the shortest
 * duration among the ranks that have it, wait = duration - transfer. */
static void match_instances(struct ctx *c)
{
    for (size_t i = 0; i < c->nr; i++) {
        struct rank *r = &c->r[i];
        if (r->ninst) xqsort(r->inst, r->ninst, sizeof *r->inst, cmp_inst_key);
        r->kstart = xcalloc(c->nkeys + 1, sizeof *r->kstart);
        size_t a = 0;
        for (size_t k = 0; k <= c->nkeys; k++) {
            while (a < r->ninst && r->inst[a].key < k) a++;
            r->kstart[k] = a;
        }
    }
#define KN(r, k) ((r)->kstart[(k) + 1] - (r)->kstart[k])
#define KI(r, k, j) (&(r)->inst[(r)->kstart[k] + (j)])
    for (size_t key = 0; key < c->nkeys; key++) {
        size_t longest = 0;
        for (size_t i = 0; i < c->nr; i++)
            if (KN(&c->r[i], key) > longest) longest = KN(&c->r[i], key);
        for (size_t k = 0; k < longest; k++) {
            int64_t mn = INT64_MAX;
            size_t have = 0;
            for (size_t i = 0; i < c->nr; i++)
                if (k < KN(&c->r[i], key)) {
                    have++;
                    if (KI(&c->r[i], key, k)->dur < mn) mn = KI(&c->r[i], key, k)->dur;
                }
            if (have < 2) continue;
            for (size_t i = 0; i < c->nr; i++)
                if (k < KN(&c->r[i], key)) KI(&c->r[i], key, k)->wait = KI(&c->r[i], key, k)->dur - mn;
        }
    }
    /* clock check: collectives end together, so a rank's median end offset
     * against the others' median end, on the aligned clocks, is the
     * residual clock error (plus launch skew); at most 4096 instances per
     * key are looked at */
    double *ends = xcalloc(c->nr ? c->nr : 1, sizeof *ends), *offs = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < c->nr; i++) {
        size_t no = 0;
        struct rank *r = &c->r[i];
        for (size_t key = 0; key < c->nkeys; key++)
            for (size_t k = 0; k < KN(r, key) && k < 4096; k++) {
                size_t m = 0;
                for (size_t j = 0; j < c->nr; j++)
                    if (j != i && k < KN(&c->r[j], key)) {
                        const struct inst *y = KI(&c->r[j], key, k);
                        ends[m++] = (double)(y->ts + y->dur + c->r[j].base_ns);
                    }
                if (!m) continue;
                const struct inst *x = KI(r, key, k);
                if (no == cap) offs = xrealloc(offs, (cap = cap ? cap * 2 : 256) * sizeof *offs);
                offs[no++] = (double)(x->ts + x->dur + r->base_ns) - median(ends, m);
            }
        if (no) {
            r->end_skew = median(offs, no);
            r->has_skew = 1;
        }
    }
    free(offs);
    free(ends);
}

/* ====================================================================== */
/* JSON sections                                                          */
/* ====================================================================== */

static json_t *breakdown_avg(const struct rank *r)
{
    json_t *o = json_object();
    for (int k = 0; k < NPARTS; k++) {
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
        const struct rank *r = &c->r[i];
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
            struct step *s = &c->r[i].steps[j];
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
    size_t nk = c->nkeys;
    struct cell *cell = xcalloc(nk * c->nr + 1, sizeof *cell);
    int64_t *inmin = xcalloc(nk + 1, sizeof *inmin), *inmax = xcalloc(nk + 1, sizeof *inmax);
    int64_t *outmax = xcalloc(nk + 1, sizeof *outmax);
    for (size_t k = 0; k < nk; k++) inmin[k] = -1, inmax[k] = -1, outmax[k] = -1;
    for (size_t i = 0; i < c->nr; i++)
        for (size_t j = 0; j < c->r[i].ninst; j++) {
            const struct inst *x = &c->r[i].inst[j];
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
        const struct key *ky = &c->keys[k];
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
    sqlite3_stmt *top, *per;
    int rc;
    *out = json_array();
    if (rundb_prepare(c->db,
                      "SELECT name, sum(total) t, max(comm) FROM kernel_stat GROUP BY name ORDER BY t DESC LIMIT ?",
                      &top, c->e) < 0)
        return c->e->code;
    if (rundb_prepare(c->db, "SELECT rank, sum(total), sum(calls) FROM kernel_stat WHERE name = ? GROUP BY rank", &per,
                      c->e) < 0) {
        sqlite3_finalize(top);
        return c->e->code;
    }
    sqlite3_bind_int(top, 1, top_n);
    double *v = xcalloc(c->nr ? c->nr : 1, sizeof *v), *tmp = xcalloc(c->nr ? c->nr : 1, sizeof *tmp);
    int64_t *calls = xcalloc(c->nr ? c->nr : 1, sizeof *calls);
    while ((rc = sqlite3_step(top)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(top, 0);
        memset(v, 0, c->nr * sizeof *v);
        memset(calls, 0, c->nr * sizeof *calls);
        sqlite3_reset(per);
        sqlite3_bind_text(per, 1, name ? name : "", -1, SQLITE_TRANSIENT);
        while ((rc = scan_step(per, c->e, "run database (kernels by rank)")) == 1) {
            int rk = sqlite3_column_int(per, 0);
            for (size_t i = 0; i < c->nr; i++)
                if (c->r[i].rank == rk) v[i] = (double)sqlite3_column_int64(per, 1), calls[i] = sqlite3_column_int64(per, 2);
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
        double med = median(tmp, c->nr);
        json_array_append_new(*out, json_pack("{s:s,s:b,s:o,s:o,s:o,s:o,s:o,s:o,s:i,s:i}", "name", name ? name : "",
                                              "communication", sqlite3_column_int(top, 2) != 0, "total_us",
                                              us((double)sqlite3_column_int64(top, 1)), "ranks_us", times, "calls", cl,
                                              "min_us", us(v[imin]), "median_us", us(med), "max_us", us(v[imax]),
                                              "min_rank", c->nr ? c->r[imin].rank : 0, "max_rank",
                                              c->nr ? c->r[imax].rank : 0));
    }
    free(v);
    free(tmp);
    free(calls);
    sqlite3_finalize(top);
    sqlite3_finalize(per);
    if (rc < 0) return rc;
    return rc == SQLITE_DONE ? 0 : rundb_db_error(c->db, c->e, "run database (kernels)");
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
    struct rank *s = find_rank(c, srank);
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
        for (size_t key = 0; key < c->nkeys; key++)
            for (size_t k = 0; k < KN(s, key); k++) {
                const struct inst *x = KI(s, key, k);
                if (x->step < 0 || x->wait < 0) continue;
                size_t m = 0;
                for (size_t j = 0; j < c->nr; j++)
                    if (j != si && k < KN(&c->r[j], key)) tmp[m++] = (double)KI(&c->r[j], key, k)->dur;
                if (!m) continue;
                double l = median(tmp, m) - (double)x->dur;
                if (!n[x->step] || l > late[x->step]) late[x->step] = l;
                n[x->step]++;
            }
        for (size_t j = 0; j < s->nsteps; j++) {
            const struct step *st = &s->steps[j];
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
                                            "own_us", us(own), "others_own_us", m ? us(median(tmp, m)) : json_null(),
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
    free(c->kern.v);
    free(c->ops.v);
    sqlite3_finalize(c->by_corr);
    sqlite3_finalize(c->by_id);
}


int ranks_build(sqlite3 *db, int top_n, json_t **out, struct err *e)
{
    struct ctx c;
    int rc, steps_cut = 0;
    memset(&c, 0, sizeof c);
    c.db = db, c.e = e, c.budget = RANKS_MAX_INSTANCES;
    *out = NULL;
    if (top_n < 1) top_n = 1;
    if (top_n > 100) top_n = 100;
    if ((rc = scan_has_table(db, "step", e)) < 0) return rc;
    if (rc == 0) return err_set(e, ERR_CONFLICT, "this run was imported before analysis existed; re-import it");
    if (load_ranks(&c) < 0 || load_steps(&c) < 0 || load_comm_names(&c) < 0) goto fail;
    /* launch lookups are optional: a failure only loses message sizes */
    if (sqlite3_prepare_v2(db,
                           "SELECT parent FROM slice WHERE corr = ?1 AND corr != 0 AND kind IN (?4, ?5)"
                           " AND id BETWEEN ?2 AND ?3 LIMIT 1",
                           -1, &c.by_corr, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db,
                           "SELECT name, args, parent FROM slice WHERE id = ?",
                           -1, &c.by_id, NULL) != SQLITE_OK)
        LOG_WARN("launch lookup unavailable: %s", sqlite3_errmsg(db));
    if (c.by_corr) {
        sqlite3_bind_int(c.by_corr, 4, TB_K_RUNTIME);
        sqlite3_bind_int(c.by_corr, 5, TB_K_DRIVER);
    }
    for (size_t i = 0; i < c.nr; i++)
        if (scan_collectives(&c, &c.r[i]) < 0 || measure_overlap(&c, &c.r[i]) < 0) goto fail;
    match_instances(&c);

    int world = 0;
    json_t *o = json_object(), *cats = json_array(), *kern = NULL, *strag = NULL;
    for (int k = 0; k < NPARTS; k++) json_array_append_new(cats, json_string(summary_categories[k]));
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
    json_object_set_new(o, "truncated", json_pack("{s:b,s:b}", "collectives", c.truncated, "steps", steps_cut));
    ctx_free(&c);
    *out = o;
    return 0;
fail:
    ctx_free(&c);
    return e->code ? e->code : ERR_DB;
}

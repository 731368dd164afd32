#define LOG_MODULE "analysis"
#include "derive/summary.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hmap.h"
#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "store/model.h"
#include "store/rundb.h"

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS step(rank INTEGER, idx INTEGER, name TEXT, ts INTEGER, dur INTEGER,"
    " host_ts INTEGER, host_dur INTEGER, ngpu INTEGER, kernel INTEGER, memcpy INTEGER, memset INTEGER,"
    " comm INTEGER, runtime INTEGER, dataloader INTEGER, cpu_exec INTEGER, other INTEGER,"
    " PRIMARY KEY(rank, idx));"
    "CREATE TABLE IF NOT EXISTS gpu(rank INTEGER, device INTEGER, name TEXT, memory_bytes INTEGER, cc TEXT,"
    " util REAL, sm_eff REAL, occupancy REAL, tc_share REAL, kernel_ns INTEGER, tc_ns INTEGER,"
    " window_ns INTEGER, PRIMARY KEY(rank, device));"
    "CREATE TABLE IF NOT EXISTS op_stat(rank INTEGER, name TEXT, shape TEXT, stack TEXT, calls INTEGER,"
    " host_self INTEGER, host_total INTEGER, dev_self INTEGER, dev_total INTEGER, tc_self INTEGER,"
    " tc_total INTEGER, tc_eligible INTEGER);"
    "CREATE TABLE IF NOT EXISTS kernel_stat(rank INTEGER, device INTEGER, name TEXT, op TEXT, calls INTEGER,"
    " total INTEGER, min INTEGER, max INTEGER, tc INTEGER, comm INTEGER, bps_w REAL, bps_dur INTEGER,"
    " occ_w REAL, occ_dur INTEGER, limiter TEXT);"
    "CREATE TABLE IF NOT EXISTS mem_alloc(id INTEGER PRIMARY KEY, rank INTEGER, dev_type INTEGER,"
    " dev_id INTEGER, addr INTEGER, bytes INTEGER, alloc_ts INTEGER, free_ts INTEGER, op INTEGER);"
    "CREATE TABLE IF NOT EXISTS analysis(rank INTEGER PRIMARY KEY, summary TEXT);";

static const char clear_sql[] = "DELETE FROM step; DELETE FROM gpu; DELETE FROM op_stat; DELETE FROM kernel_stat;"
                                "DELETE FROM mem_alloc; DELETE FROM analysis;";

static const char index_sql[] =
    "CREATE INDEX IF NOT EXISTS op_stat_rank ON op_stat(rank);"
    "CREATE INDEX IF NOT EXISTS kernel_stat_rank ON kernel_stat(rank);"
    "CREATE INDEX IF NOT EXISTS mem_alloc_rank_dev ON mem_alloc(rank, dev_type, dev_id, alloc_ts);";

/* The SQL below names kinds by number. */
_Static_assert(TB_K_CPU_OP == 1 && TB_K_KERNEL == 6 && TB_TRACK_GPU == 1, "kind numbers used in SQL");

/* Breakdown categories in priority order; "other" is what none covers.
 * Communication kernels are charged first, before compute kernels: a
 * collective running beside compute still holds the step (and SMs), and
 * charging the overlap to compute would hide most of NCCL's time on traces
 * where DDP overlaps it with backward. Host-side communication spans
 * (gloo:/nccl: annotations) keep their place after memset. Both add up to
 * the step's "communication". */
enum cat { C_COMM_K, C_KERNEL, C_MEMCPY, C_MEMSET, C_COMM, C_RUNTIME, C_DATALOADER, C_CPU_EXEC, C_N };

/* ====================================================================== */
/* Names: id -> text and what the text says                               */
/* ====================================================================== */

enum {
    NF_TC = 1 << 0,
    NF_COMM_KERNEL = 1 << 1,
    NF_COMM_OP = 1 << 2,
    NF_TC_ELIGIBLE = 1 << 3,
    NF_DATALOADER = 1 << 4,
    NF_STEP = 1 << 5,
    NF_NOT_OP = 1 << 6, /* cpu_op spans that are not operators (wrappers) */
};

struct name {
    uint32_t id;
    uint8_t flags;
    char *s;
};

struct names {
    struct hmap map; /* id -> struct name */
    sqlite3_stmt *get;
};

static const struct name *names_get(struct names *nm, uint32_t id)
{
    static const struct name none = { 0, 0, "" };
    if (id == 0) return &none;
    int fresh;
    struct name *e = hmap_put(&nm->map, hmap_hash_u64(id), &id, sizeof id, &fresh);
    if (!fresh) return e;
    e->id = id;
    sqlite3_bind_int64(nm->get, 1, id);
    const char *s = sqlite3_step(nm->get) == SQLITE_ROW ? (const char *)sqlite3_column_text(nm->get, 0) : NULL;
    e->s = xstrdup(s ? s : "");
    sqlite3_reset(nm->get);
    uint8_t f = 0;
    if (kclass_tensor_core(e->s)) f |= NF_TC;
    if (kclass_comm_kernel(e->s)) f |= NF_COMM_KERNEL;
    if (kclass_comm_op(e->s)) f |= NF_COMM_OP;
    if (kclass_tc_eligible_op(e->s)) f |= NF_TC_ELIGIBLE;
    if (kclass_dataloader(e->s)) f |= NF_DATALOADER;
    if (kclass_profiler_step(e->s)) f |= NF_STEP;
    if ((f & (NF_STEP | NF_DATALOADER)) || strncmp(e->s, "Optimizer.", 10) == 0 ||
        strcmp(e->s, "DataParallel.forward") == 0 || strcmp(e->s, "DistributedDataParallel.forward") == 0)
        f |= NF_NOT_OP;
    e->flags = f;
    return e;
}

static void free_name(void *v)
{
    free(((struct name *)v)->s);
}

static void names_free(struct names *nm)
{
    hmap_free(&nm->map, free_name);
    sqlite3_finalize(nm->get);
}

/* ====================================================================== */
/* Per-rank state                                                         */
/* ====================================================================== */

/* A GPU op (kernel, memcpy, memset). */
struct gop {
    int64_t ts, dur, corr;
    int64_t launch_ts, launch_end; /* the launching runtime call; -1 unknown */
    uint32_t name, op;             /* op: innermost operator around the launch */
    uint32_t next;                 /* next gop of the same correlation + 1 */
    int32_t device;
    uint8_t kind, flags;
    float bps, occ;                /* < 0: not given */
    char *limiter;
};

struct hstep {
    uint32_t name;
    int64_t ts, dur;
    uint32_t track;
    int64_t dev_end;
    int64_t ngpu;
};

struct opagg {
    uint32_t name;
    char *shape, *stack;
    int64_t calls, host_self, host_total, dev_self, dev_total, tc_self, tc_total;
    int tc_elig;
};

struct kagg {
    int32_t device;
    uint32_t name, op;
    int64_t calls, total, min, max;
    double bps_w, occ_w;
    int64_t bps_dur, occ_dur;
    uint8_t flags;
    char *limiter;
};

struct frame {
    int64_t id, ts, end;
    uint32_t name;
    uint8_t kind, is_op;
    int op_parent; /* index of the nearest operator frame below, -1 none */
    int64_t child_op_dur, rt_dur, dev_self, dev_children, tc_self, tc_children;
    int tc_elig;
    char *shape, *stack;
};

struct memop {
    int64_t mem_id;
    uint32_t op;
};

struct rankctx {
    sqlite3 *db;
    int rank;
    struct names names;
    struct gop *g;
    size_t ng, gcap;
    struct hmap corr; /* corr -> first gop index + 1 (uint32_t) */
    struct hstep *hs;
    size_t nhs, hscap;
    struct ivlist cat[C_N];
    struct hmap ops, kernels; /* key text -> struct opagg, struct kagg */
    struct memop *mo;
    size_t nmo, mocap;
    int64_t cpu_min, cpu_max, all_min, all_max;
    int has_python;
    size_t nhost; /* host steps after picking one thread and one span per name */
    json_t *notes;
};

static void corr_put(struct rankctx *c, int64_t corr, uint32_t idx)
{
    int fresh;
    uint32_t *head = hmap_put(&c->corr, hmap_hash_u64((uint64_t)corr), &corr, sizeof corr, &fresh);
    if (!fresh) c->g[idx].next = *head;
    *head = idx + 1;
}

/* First gop of corr + 1, 0 when none; follow gop.next. */
static uint32_t corr_find(const struct rankctx *c, int64_t corr)
{
    if (corr == 0) return 0;
    const uint32_t *head = hmap_get(&c->corr, hmap_hash_u64((uint64_t)corr), &corr, sizeof corr);
    return head ? *head : 0;
}

/* ====================================================================== */
/* Pass 1: GPU ops                                                        */
/* ====================================================================== */

/* What the analysis reads from a kernel's args, pulled with the ingest
 * tokenizer (fast, and it takes the NaN/Infinity that real traces hold). */
struct kargs {
    double bps, occ; /* < 0: absent */
    int device;      /* < 0: absent */
    int collective;  /* a "Collective name" arg: NCCL metadata on the kernel */
    char *limiter;   /* occupancy.limitingFactors, owned, or NULL */
};

static double span_num(const struct jtok_val *v)
{
    return v->type == JT_NUMBER ? strtod(v->p, NULL) : -1.0;
}

static void kargs_scan(const char *args, size_t n, struct kargs *k)
{
    const char *cur = args, *end = args + n;
    struct jtok_val key, val;
    struct err e;
    k->bps = k->occ = -1.0;
    k->device = -1;
    k->collective = 0;
    k->limiter = NULL;
    while (cur < end && *cur != '{') cur++;
    if (cur == end) return;
    cur++;
    while (jtok_span_next_member(&cur, end, &key, &val, &e) == 1) {
        if (jtok_str_eq(&key, "blocks per SM")) k->bps = span_num(&val);
        else if (jtok_str_eq(&key, "est. achieved occupancy %")) k->occ = span_num(&val);
        else if (jtok_str_eq(&key, "device") && val.type == JT_NUMBER) k->device = atoi(val.p);
        else if (jtok_str_eq(&key, "Collective name")) k->collective = 1;
        else if (jtok_str_eq(&key, "occupancy") && val.type == JT_OBJECT && !k->limiter) {
            const char *oc = val.p + 1, *oe = val.p + val.n;
            struct jtok_val ok, ov;
            while (jtok_span_next_member(&oc, oe, &ok, &ov, &e) == 1) {
                if (jtok_str_eq(&ok, "limitingFactors") && ov.type == JT_STRING && ov.n) {
                    char *t = xmalloc(ov.n + 1);
                    size_t m = ov.escaped ? jtok_unescape(ov.p, ov.n, t) : (memcpy(t, ov.p, ov.n), ov.n);
                    t[m] = 0;
                    k->limiter = t;
                    break;
                }
            }
        }
    }
}

/* The input shapes of an operator as compact JSON ("[[4,8],[8]]"), or
 * NULL when the args have none. Owned by caller. */
static char *op_shapes(const char *args, size_t n)
{
    const char *cur = args, *end = args + n;
    struct jtok_val key, val;
    struct err e;
    while (cur < end && *cur != '{') cur++;
    if (cur == end) return NULL;
    cur++;
    while (jtok_span_next_member(&cur, end, &key, &val, &e) == 1) {
        if ((jtok_str_eq(&key, "Input Dims") || jtok_str_eq(&key, "Input dims")) && val.type == JT_ARRAY) {
            /* drop whitespace outside strings so equal shapes group together */
            char *out = xmalloc(val.n + 1);
            size_t m = 0;
            int in_str = 0;
            for (size_t i = 0; i < val.n; i++) {
                char ch = val.p[i];
                if (in_str) {
                    if (ch == '\\' && i + 1 < val.n) out[m++] = val.p[i++];
                    else if (ch == '"') in_str = 0;
                } else if (ch == '"') {
                    in_str = 1;
                } else if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
                    continue;
                }
                out[m++] = val.p[i];
            }
            out[m] = 0;
            if (m <= 2) { /* "[]" */
                free(out);
                return NULL;
            }
            return out;
        }
    }
    return NULL;
}

static int load_gpu_track(struct rankctx *c, sqlite3_stmt *st, int64_t first, int64_t last, int device,
                          struct err *e);

static int load_gpu(struct rankctx *c, struct err *e)
{
    /* one range query per GPU lane: ids follow (track, ts) */
    static const char tracks_sql[] =
        "SELECT first_slice, last_slice, device FROM track WHERE rank = ? AND kind = 1 AND nslices > 0 ORDER BY id";
    static const char sql[] =
        "SELECT ts, dur, name, kind, corr, CASE WHEN kind = 6 THEN args END FROM slice WHERE id BETWEEN ? AND ?"
        " ORDER BY id";
    sqlite3_stmt *tr = NULL, *st = NULL;
    int rc = 0, src;
    if (sqlite3_prepare_v2(c->db, tracks_sql, -1, &tr, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = rundb_db_error(c->db, e, "analysis (GPU ops)");
        goto out;
    }
    sqlite3_bind_int(tr, 1, c->rank);
    while (rc == 0 && (src = sqlite3_step(tr)) == SQLITE_ROW)
        rc = load_gpu_track(c, st, sqlite3_column_int64(tr, 0), sqlite3_column_int64(tr, 1),
                            sqlite3_column_type(tr, 2) == SQLITE_NULL ? 0 : sqlite3_column_int(tr, 2), e);
    if (rc == 0 && src != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (GPU lanes)");
out:
    sqlite3_finalize(tr);
    sqlite3_finalize(st);
    return rc;
}

static int load_gpu_track(struct rankctx *c, sqlite3_stmt *st, int64_t first, int64_t last, int device,
                          struct err *e)
{
    sqlite3_bind_int64(st, 1, first);
    sqlite3_bind_int64(st, 2, last);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int kind = sqlite3_column_int(st, 3);
        int64_t ts = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 1);
        uint32_t name = (uint32_t)sqlite3_column_int64(st, 2);
        if (ts < c->all_min) c->all_min = ts;
        if (ts + dur > c->all_max) c->all_max = ts + dur;
        if (kind == TB_K_GPU_ANNOTATION) {
            /* gloo/nccl ranges the profiler draws on GPU lanes */
            if (names_get(&c->names, name)->flags & NF_COMM_OP) ivlist_add(&c->cat[C_COMM], ts, ts + dur);
            continue;
        }
        if (kind != TB_K_KERNEL && kind != TB_K_MEMCPY && kind != TB_K_MEMSET) continue;
        if (c->ng == c->gcap) {
            c->gcap = c->gcap ? c->gcap * 2 : 4096;
            c->g = xrealloc(c->g, c->gcap * sizeof *c->g);
        }
        struct gop *g = &c->g[c->ng];
        memset(g, 0, sizeof *g);
        g->ts = ts;
        g->dur = dur;
        g->name = name;
        g->kind = (uint8_t)kind;
        g->corr = sqlite3_column_int64(st, 4);
        g->launch_ts = g->launch_end = -1;
        g->device = device;
        g->bps = g->occ = -1.0f;
        if (kind == TB_K_KERNEL) {
            struct kargs ka;
            const char *args = (const char *)sqlite3_column_text(st, 5);
            if (args) {
                kargs_scan(args, (size_t)sqlite3_column_bytes(st, 5), &ka);
                if (ka.device >= 0) g->device = ka.device;
                g->bps = (float)ka.bps;
                g->occ = (float)ka.occ;
                if (ka.limiter) g->limiter = ka.limiter;
            } else {
                ka.collective = 0;
            }
            g->flags = names_get(&c->names, name)->flags & (NF_TC | NF_COMM_KERNEL);
            if (ka.collective) g->flags |= NF_COMM_KERNEL;
        }
        if (g->corr) corr_put(c, g->corr, (uint32_t)c->ng);
        c->ng++;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return rundb_db_error(c->db, e, "analysis (GPU ops)");
    return 0;
}

/* ====================================================================== */
/* Pass 2: CPU threads (operator tree, runtimes, memory attribution)      */
/* ====================================================================== */

struct walk {
    struct frame *f;
    int n, cap;
    int top_op; /* index of the innermost operator frame, -1 none */
    sqlite3_stmt *mem;
    int mem_has;
    int64_t mem_id, mem_ts;
};

static void free_opagg(void *p)
{
    struct opagg *a = p;
    free(a->shape);
    free(a->stack);
}

static void free_kagg(void *p)
{
    struct kagg *a = p;
    free(a->limiter);
}

static void finish_frame(struct rankctx *c, struct walk *w, int i)
{
    struct frame *f = &w->f[i];
    if (f->is_op) {
        int64_t total = f->end - f->ts;
        int64_t self = total - f->child_op_dur - f->rt_dur;
        int64_t dev_total = f->dev_self + f->dev_children;
        int64_t tc_total = f->tc_self + f->tc_children;
        int elig = f->tc_elig || (names_get(&c->names, f->name)->flags & NF_TC_ELIGIBLE) || f->tc_self > 0;
        char keybuf[64];
        int kn = snprintf(keybuf, sizeof keybuf, "%u\x01", f->name);
        size_t sl = f->shape ? strlen(f->shape) : 0, tl = f->stack ? strlen(f->stack) : 0;
        char *key = xmalloc((size_t)kn + sl + tl + 2);
        memcpy(key, keybuf, (size_t)kn);
        if (sl) memcpy(key + kn, f->shape, sl);
        key[kn + sl] = '\x01';
        if (tl) memcpy(key + kn + sl + 1, f->stack, tl);
        int fresh;
        size_t klen = (size_t)kn + sl + 1 + tl;
        struct opagg *a = hmap_put(&c->ops, hmap_hash_bytes(key, klen), key, klen, &fresh);
        free(key);
        if (fresh) {
            a->name = f->name;
            a->shape = f->shape ? xstrdup(f->shape) : NULL;
            a->stack = f->stack ? xstrdup(f->stack) : NULL;
        }
        a->calls++;
        a->host_total += total;
        a->host_self += self > 0 ? self : 0;
        a->dev_self += f->dev_self;
        a->dev_total += dev_total;
        a->tc_self += f->tc_self;
        a->tc_total += tc_total;
        a->tc_elig |= elig;
        if (f->op_parent >= 0) {
            struct frame *p = &w->f[f->op_parent];
            p->child_op_dur += total;
            p->dev_children += dev_total;
            p->tc_children += tc_total;
            p->tc_elig |= elig;
        }
    }
    free(f->shape);
    free(f->stack);
    f->shape = f->stack = NULL;
}

static void pop_frame(struct rankctx *c, struct walk *w)
{
    int i = w->n - 1;
    finish_frame(c, w, i);
    if (w->top_op == i) w->top_op = w->f[i].op_parent;
    w->n--;
}

/* Memory events of this thread before `until` go to the innermost operator
 * running at their time. */
static int flush_mem(struct rankctx *c, struct walk *w, int64_t until)
{
    while (w->mem_has && w->mem_ts < until) {
        uint32_t op = 0;
        for (int i = w->top_op; i >= 0; i = w->f[i].op_parent) {
            if (w->f[i].ts <= w->mem_ts && w->mem_ts < w->f[i].end) {
                op = w->f[i].name;
                break;
            }
        }
        if (op) {
            if (c->nmo == c->mocap) {
                c->mocap = c->mocap ? c->mocap * 2 : 1024;
                c->mo = xrealloc(c->mo, c->mocap * sizeof *c->mo);
            }
            c->mo[c->nmo].mem_id = w->mem_id;
            c->mo[c->nmo].op = op;
            c->nmo++;
        }
        int rc = sqlite3_step(w->mem);
        if (rc == SQLITE_ROW) {
            w->mem_id = sqlite3_column_int64(w->mem, 0);
            w->mem_ts = sqlite3_column_int64(w->mem, 1);
        } else {
            w->mem_has = 0;
            if (rc != SQLITE_DONE) return -1;
        }
    }
    return 0;
}

/* Up to this many innermost Python frames make an operator's call stack. */
#define STACK_FRAMES 8

static char *python_stack(struct rankctx *c, struct walk *w)
{
    size_t len = 0, cap = 0;
    char *out = NULL;
    int frames = 0;
    for (int i = w->n - 1; i >= 0 && frames < STACK_FRAMES; i--) {
        if (w->f[i].kind != TB_K_PYTHON) continue;
        const char *s = names_get(&c->names, w->f[i].name)->s;
        size_t n = strlen(s);
        if (len + n + 2 > cap) {
            cap = (len + n + 2) * 2;
            out = xrealloc(out, cap);
        }
        if (len) out[len++] = '\n';
        memcpy(out + len, s, n);
        len += n;
        out[len] = 0;
        frames++;
    }
    return out;
}

static int walk_track(struct rankctx *c, sqlite3_stmt *st, struct walk *w, uint32_t track, int64_t first,
                      int64_t last, struct err *e)
{
    int rc;
    w->n = 0;
    w->top_op = -1;
    sqlite3_bind_int(w->mem, 1, c->rank);
    sqlite3_bind_int64(w->mem, 2, track);
    rc = sqlite3_step(w->mem);
    w->mem_has = rc == SQLITE_ROW;
    if (w->mem_has) {
        w->mem_id = sqlite3_column_int64(w->mem, 0);
        w->mem_ts = sqlite3_column_int64(w->mem, 1);
    } else if (rc != SQLITE_DONE) {
        return rundb_db_error(c->db, e, "analysis (memory events)");
    }

    sqlite3_bind_int64(st, 1, first);
    sqlite3_bind_int64(st, 2, last);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1), dur = sqlite3_column_int64(st, 2);
        int64_t parent = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 3);
        uint32_t name = (uint32_t)sqlite3_column_int64(st, 4);
        int kind = sqlite3_column_int(st, 5);
        int64_t corr = sqlite3_column_int64(st, 6);
        int64_t end = ts + dur;

        /* memory events first: a frame about to be popped may hold them */
        if (flush_mem(c, w, ts) != 0) {
            rc = SQLITE_ERROR;
            break;
        }
        while (w->n && w->f[w->n - 1].id != parent) pop_frame(c, w);
        if (ts < c->all_min) c->all_min = ts;
        if (end > c->all_max) c->all_max = end;

        const struct name *nm = names_get(&c->names, name);
        uint8_t nf = nm->flags;
        int is_op = 0;
        switch (kind) {
        case TB_K_RUNTIME:
        case TB_K_DRIVER: {
            ivlist_add(&c->cat[C_RUNTIME], ts, end);
            int64_t dev = 0, tc = 0;
            uint32_t op = w->top_op >= 0 ? w->f[w->top_op].name : 0;
            for (uint32_t gi = corr_find(c, corr); gi; gi = c->g[gi - 1].next) {
                struct gop *g = &c->g[gi - 1];
                g->launch_ts = ts;
                g->launch_end = end;
                g->op = op;
                dev += g->dur;
                if (g->flags & NF_TC) tc += g->dur;
            }
            if (w->top_op >= 0) {
                struct frame *o = &w->f[w->top_op];
                o->rt_dur += dur;
                o->dev_self += dev;
                o->tc_self += tc;
            }
            break;
        }
        case TB_K_CPU_OP:
        case TB_K_USER_ANNOTATION:
            if (ts < c->cpu_min) c->cpu_min = ts;
            if (end > c->cpu_max) c->cpu_max = end;
            if (nf & NF_STEP) {
                if (c->nhs == c->hscap) {
                    c->hscap = c->hscap ? c->hscap * 2 : 64;
                    c->hs = xrealloc(c->hs, c->hscap * sizeof *c->hs);
                }
                struct hstep *h = &c->hs[c->nhs++];
                h->name = name;
                h->ts = ts;
                h->dur = dur;
                h->track = track;
                h->dev_end = INT64_MIN;
                h->ngpu = 0;
                break;
            }
            if (nf & NF_COMM_OP) ivlist_add(&c->cat[C_COMM], ts, end);
            if (nf & NF_DATALOADER) ivlist_add(&c->cat[C_DATALOADER], ts, end);
            ivlist_add(&c->cat[C_CPU_EXEC], ts, end);
            is_op = kind == TB_K_CPU_OP && !(nf & NF_NOT_OP);
            break;
        case TB_K_PYTHON:
            c->has_python = 1;
            if (ts < c->cpu_min) c->cpu_min = ts;
            if (end > c->cpu_max) c->cpu_max = end;
            break;
        default:
            break;
        }

        if (w->n == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 64;
            w->f = xrealloc(w->f, (size_t)w->cap * sizeof *w->f);
        }
        struct frame *f = &w->f[w->n];
        memset(f, 0, sizeof *f);
        f->id = id;
        f->ts = ts;
        f->end = end;
        f->name = name;
        f->kind = (uint8_t)kind;
        f->is_op = (uint8_t)is_op;
        f->op_parent = w->top_op;
        if (is_op) {
            const char *args = (const char *)sqlite3_column_text(st, 7);
            if (args) f->shape = op_shapes(args, (size_t)sqlite3_column_bytes(st, 7));
            if (c->has_python) f->stack = python_stack(c, w);
            w->top_op = w->n;
        }
        w->n++;
    }
    sqlite3_reset(st);
    if (rc == SQLITE_DONE && flush_mem(c, w, INT64_MAX) != 0) rc = SQLITE_ERROR;
    while (w->n) pop_frame(c, w);
    sqlite3_reset(w->mem);
    if (rc != SQLITE_DONE) return rundb_db_error(c->db, e, "analysis (CPU slices)");
    return 0;
}

static int load_cpu(struct rankctx *c, struct err *e)
{
    static const char tracks_sql[] =
        "SELECT id, first_slice, last_slice FROM track WHERE rank = ? AND kind != 1 AND nslices > 0 ORDER BY id";
    static const char slice_sql[] =
        "SELECT id, ts, dur, parent, name, kind, corr, CASE WHEN kind = 1 THEN args END"
        " FROM slice WHERE id BETWEEN ? AND ? ORDER BY id";
    static const char mem_sql[] =
        "SELECT id, ts FROM mem WHERE rank = ? AND track = ? AND bytes > 0 ORDER BY ts, id";
    sqlite3_stmt *tr = NULL, *st = NULL;
    struct walk w;
    int rc = 0;
    memset(&w, 0, sizeof w);
    if (sqlite3_prepare_v2(c->db, tracks_sql, -1, &tr, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, slice_sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, mem_sql, -1, &w.mem, NULL) != SQLITE_OK) {
        rc = rundb_db_error(c->db, e, "analysis (CPU slices)");
        goto out;
    }
    sqlite3_bind_int(tr, 1, c->rank);
    int src;
    while ((src = sqlite3_step(tr)) == SQLITE_ROW) {
        uint32_t track = (uint32_t)sqlite3_column_int64(tr, 0);
        if ((rc = walk_track(c, st, &w, track, sqlite3_column_int64(tr, 1), sqlite3_column_int64(tr, 2), e)) != 0)
            goto out;
    }
    if (src != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (tracks)");
out:
    for (int i = 0; i < w.n; i++) {
        free(w.f[i].shape);
        free(w.f[i].stack);
    }
    free(w.f);
    sqlite3_finalize(w.mem);
    sqlite3_finalize(tr);
    sqlite3_finalize(st);
    return rc;
}

/* ====================================================================== */
/* Steps and breakdown                                                    */
/* ====================================================================== */

struct step {
    char *name;
    int64_t ts, end, host_ts, host_dur, ngpu;
    int64_t part[C_N + 1]; /* + other */
};

static int cmp_hstep(const void *x, const void *y)
{
    const struct hstep *p = x, *q = y;
    return (p->ts > q->ts) - (p->ts < q->ts);
}

/* Picks the host steps: the thread with the most ProfilerStep# spans (GPU
 * lanes never count), one span per name, in time order. */
static size_t pick_host_steps(struct rankctx *c)
{
    if (!c->nhs) return 0;
    uint32_t best = 0;
    size_t best_n = 0;
    for (size_t i = 0; i < c->nhs; i++) {
        size_t n = 0;
        for (size_t j = 0; j < c->nhs; j++) n += c->hs[j].track == c->hs[i].track;
        if (n > best_n) {
            best_n = n;
            best = c->hs[i].track;
        }
        if (best_n * 2 > c->nhs) break;
    }
    size_t k = 0;
    for (size_t i = 0; i < c->nhs; i++) {
        if (c->hs[i].track != best) continue;
        int dup = 0;
        for (size_t j = 0; j < k; j++) dup |= c->hs[j].name == c->hs[i].name;
        if (!dup) c->hs[k++] = c->hs[i];
    }
    xqsort(c->hs, k, sizeof *c->hs, cmp_hstep);
    return k;
}

static int build_steps(struct rankctx *c, struct step **out, size_t *nout)
{
    size_t n = c->nhost = pick_host_steps(c);
    struct step *s;
    if (n == 0) {
        int64_t a = c->cpu_min <= c->cpu_max ? c->cpu_min : c->all_min;
        int64_t b = c->cpu_min <= c->cpu_max ? c->cpu_max : c->all_max;
        for (size_t i = 0; i < c->ng; i++) {
            if (c->g[i].ts < a) a = c->g[i].ts;
            if (c->g[i].ts + c->g[i].dur > b) b = c->g[i].ts + c->g[i].dur;
        }
        if (a >= b) {
            *out = NULL;
            *nout = 0;
            return 0;
        }
        s = xcalloc(1, sizeof *s);
        s->name = xstrdup("whole trace");
        s->host_ts = s->ts = a;
        s->end = b;
        s->host_dur = b - a;
        s->ngpu = (int64_t)c->ng;
        json_array_append_new(c->notes, json_string("the trace has no ProfilerStep# spans: the whole trace is "
                                                     "one step"));
        *out = s;
        *nout = 1;
        return 0;
    }
    /* GPU work launched by each step: a launch call lying within the host span. */
    for (size_t i = 0; i < c->ng; i++) {
        const struct gop *g = &c->g[i];
        if (g->launch_ts < 0) continue;
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (c->hs[mid].ts <= g->launch_ts) lo = mid + 1;
            else hi = mid;
        }
        if (lo == 0) continue;
        struct hstep *h = &c->hs[lo - 1];
        if (g->launch_end > h->ts + h->dur) continue;
        h->ngpu++;
        if (g->ts + g->dur > h->dev_end) h->dev_end = g->ts + g->dur;
    }
    size_t keep = n;
    if (c->ng) {
        while (keep > 0 && c->hs[keep - 1].ngpu == 0) keep--;
        if (keep == 0) keep = n; /* no launch matched any step: keep host spans as they are */
    }
    if (keep < n) {
        char msg[256];
        snprintf(msg, sizeof msg, "%zu trailing step(s) launched no GPU work and were dropped (from %s)", n - keep,
                 names_get(&c->names, c->hs[keep].name)->s);
        json_array_append_new(c->notes, json_string(msg));
    }
    s = xcalloc(keep, sizeof *s);
    int64_t prev_end = INT64_MIN;
    for (size_t i = 0; i < keep; i++) {
        const struct hstep *h = &c->hs[i];
        s[i].name = xstrdup(names_get(&c->names, h->name)->s);
        s[i].host_ts = h->ts;
        s[i].host_dur = h->dur;
        s[i].ngpu = h->ngpu;
        s[i].ts = h->ts > prev_end ? h->ts : prev_end;
        s[i].end = h->ts + h->dur;
        if (h->dev_end > s[i].end) s[i].end = h->dev_end;
        if (s[i].end < s[i].ts) s[i].end = s[i].ts;
        prev_end = s[i].end;
    }
    *out = s;
    *nout = keep;
    return 0;
}

static void breakdown(struct rankctx *c, struct step *s, size_t n)
{
    for (size_t i = 0; i < c->ng; i++) {
        const struct gop *g = &c->g[i];
        int cat = g->kind == TB_K_MEMCPY ? C_MEMCPY
                  : g->kind == TB_K_MEMSET ? C_MEMSET
                  : (g->flags & NF_COMM_KERNEL) ? C_COMM_K
                                                : C_KERNEL;
        ivlist_add(&c->cat[cat], g->ts, g->ts + g->dur);
    }
    struct ivlist covered = { 0 }, diff = { 0 }, tmp = { 0 };
    for (int k = 0; k < C_N; k++) {
        ivlist_normalize(&c->cat[k]);
        ivlist_subtract(&c->cat[k], &covered, &diff);
        size_t cur = 0;
        for (size_t i = 0; i < n; i++) s[i].part[k] = ivlist_len_in(&diff, s[i].ts, s[i].end, &cur);
        ivlist_union(&covered, &c->cat[k], &tmp);
        struct ivlist sw = covered;
        covered = tmp;
        tmp = sw;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t sum = 0;
        for (int k = 0; k < C_N; k++) sum += s[i].part[k];
        s[i].part[C_N] = (s[i].end - s[i].ts) - sum;
    }
    ivlist_free(&covered);
    ivlist_free(&diff);
    ivlist_free(&tmp);
}

/* ====================================================================== */
/* GPU metrics                                                            */
/* ====================================================================== */

struct edge {
    int64_t t;
    double v;
};

static int cmp_edge(const void *x, const void *y)
{
    const struct edge *p = x, *q = y;
    return (p->t > q->t) - (p->t < q->t);
}

static json_t *device_props(json_t *header, int device)
{
    json_t *props = json_object_get(header, "deviceProperties"), *d;
    size_t i;
    json_array_foreach(props, i, d) {
        json_t *id = json_object_get(d, "id");
        if (json_is_integer(id) ? json_integer_value(id) == device : (int)i == device) return d;
    }
    return NULL;
}

static int gpu_metrics(struct rankctx *c, json_t *header, int64_t w0, int64_t w1, struct err *e)
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
    for (size_t d = 0; d < ndev && rc == 0; d++) {
        struct ivlist busy = { 0 };
        struct edge *ed = NULL;
        size_t ne = 0, ecap = 0;
        double occ_w = 0;
        int64_t occ_dur = 0, kns = 0, tcns = 0;
        for (size_t i = 0; i < c->ng; i++) {
            const struct gop *g = &c->g[i];
            if (g->kind != TB_K_KERNEL || g->device != devs[d]) continue;
            int64_t a = g->ts > w0 ? g->ts : w0, b = g->ts + g->dur < w1 ? g->ts + g->dur : w1;
            if (b <= a) continue;
            ivlist_add(&busy, a, b);
            kns += b - a;
            if (g->flags & NF_TC) tcns += b - a;
            if (g->occ >= 0) {
                occ_w += (double)g->occ * (double)(b - a);
                occ_dur += b - a;
            }
            if (g->bps > 0) {
                if (ne + 2 > ecap) {
                    ecap = ecap ? ecap * 2 : 1024;
                    ed = xrealloc(ed, ecap * sizeof *ed);
                }
                ed[ne].t = a;
                ed[ne++].v = g->bps;
                ed[ne].t = b;
                ed[ne++].v = -(double)g->bps;
            }
        }
        ivlist_normalize(&busy);
        size_t cur = 0;
        int64_t busy_ns = ivlist_len_in(&busy, w0, w1, &cur);
        double sm = 0;
        if (ne) {
            xqsort(ed, ne, sizeof *ed, cmp_edge);
            double level = 0;
            for (size_t i = 0; i < ne; i++) {
                if (i > 0 && ed[i].t > ed[i - 1].t) sm += (level < 1.0 ? level : 1.0) * (double)(ed[i].t - ed[i - 1].t);
                level += ed[i].v;
                if (level < 1e-9) level = 0; /* float residue of +x - x */
            }
        }
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
        ivlist_free(&busy);
        free(ed);
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

static int write_ops(struct rankctx *c, struct err *e)
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
        bind_text_or_empty(ins, 2, names_get(&c->names, a->name)->s);
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

static int write_kernels(struct rankctx *c, struct err *e)
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
        bind_text_or_empty(ins, 3, names_get(&c->names, a->name)->s);
        bind_text_or_empty(ins, 4, names_get(&c->names, a->op)->s);
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

/* ====================================================================== */
/* Memory: allocations paired with frees, peaks                           */
/* ====================================================================== */

/* An allocation waiting for its free, keyed by struct pkey. */
struct pkey {
    int dt, di;
    int64_t addr;
};

struct pending {
    int64_t ts, bytes;
    uint32_t op;
};

static uint64_t pkey_hash(const struct pkey *k)
{
    return (uint32_t)hmap_hash_u64((uint64_t)k->addr ^ ((uint64_t)(uint32_t)k->di << 40) ^
                                   ((uint64_t)(uint32_t)k->dt << 56));
}

static int cmp_memop(const void *x, const void *y)
{
    const struct memop *p = x, *q = y;
    return (p->mem_id > q->mem_id) - (p->mem_id < q->mem_id);
}

static uint32_t memop_find(const struct rankctx *c, int64_t id)
{
    size_t lo = 0, hi = c->nmo;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->mo[mid].mem_id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->nmo && c->mo[lo].mem_id == id ? c->mo[lo].op : 0;
}

static int put_alloc(sqlite3_stmt *ins, int rank, int dt, int di, int64_t addr, int64_t bytes, int64_t ats,
                     int has_ats, int64_t fts, int has_fts, uint32_t op)
{
    sqlite3_bind_int(ins, 1, rank);
    sqlite3_bind_int(ins, 2, dt);
    sqlite3_bind_int(ins, 3, di);
    sqlite3_bind_int64(ins, 4, addr);
    sqlite3_bind_int64(ins, 5, bytes);
    if (has_ats) sqlite3_bind_int64(ins, 6, ats);
    else sqlite3_bind_null(ins, 6);
    if (has_fts) sqlite3_bind_int64(ins, 7, fts);
    else sqlite3_bind_null(ins, 7);
    sqlite3_bind_int64(ins, 8, op);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Per GPU device and step: allocated memory at the step's end and its
 * peak inside the step ({"<dev>": [{end, peak}, ...]}), what a rule needs
 * to see memory grow from step to step. */
struct stepmem {
    int dev;
    int64_t *end, *peak, last;
};

static void stepmem_note(struct stepmem **sm, size_t *nsm, size_t nsteps, int dev, int64_t total)
{
    size_t i = 0;
    while (i < *nsm && (*sm)[i].dev != dev) i++;
    if (i == *nsm) {
        *sm = xrealloc(*sm, (*nsm + 1) * sizeof **sm);
        (*sm)[i].dev = dev;
        (*sm)[i].end = xcalloc(nsteps ? nsteps : 1, sizeof(int64_t));
        (*sm)[i].peak = xcalloc(nsteps ? nsteps : 1, sizeof(int64_t));
        for (size_t k = 0; k < nsteps; k++) (*sm)[i].end[k] = (*sm)[i].peak[k] = -1;
        (*sm)[i].last = -1;
        (*nsm)++;
    }
    (*sm)[i].last = total;
}

static int memory(struct rankctx *c, const struct step *steps, size_t nsteps, json_t *summary, struct err *e)
{
    struct stepmem *sm = NULL;
    size_t nsm = 0, cur_step = 0;
    sqlite3_stmt *st = NULL, *ins = NULL;
    struct hmap pm; /* struct pkey -> struct pending */
    hmap_init(&pm, sizeof(struct pending), 1024);
    json_t *peaks = json_object();
    int rc = 0;
    uint64_t double_free = 0;
    if (c->nmo) xqsort(c->mo, c->nmo, sizeof *c->mo, cmp_memop); /* xqsort(NULL, 0) is undefined */
    if (sqlite3_prepare_v2(c->db,
                           "SELECT id, ts, dev_type, dev_id, addr, bytes, total_alloc, total_reserved FROM mem"
                           " WHERE rank = ? ORDER BY ts, id",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db,
                           "INSERT INTO mem_alloc(rank, dev_type, dev_id, addr, bytes, alloc_ts, free_ts, op)"
                           " VALUES(?,?,?,?,?,?,?,?)",
                           -1, &ins, NULL) != SQLITE_OK) {
        rc = rundb_db_error(c->db, e, "analysis (memory)");
        goto out;
    }
    sqlite3_bind_int(st, 1, c->rank);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0), ts = sqlite3_column_int64(st, 1);
        int dt = sqlite3_column_int(st, 2), di = sqlite3_column_int(st, 3);
        int64_t addr = sqlite3_column_int64(st, 4), bytes = sqlite3_column_int64(st, 5);
        /* NULL totals (the trace did not say) must not read as 0 bytes */
        int64_t total = sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
        int64_t reserved = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7);
        char key[32];
        if (dt == 0) snprintf(key, sizeof key, "cpu");
        else snprintf(key, sizeof key, "%d", di);
        if (dt == 1 && total >= 0 && nsteps) {
            /* close the steps this sample lies after: their end value is
             * the last sample before it */
            while (cur_step < nsteps && ts >= steps[cur_step].end) {
                for (size_t k = 0; k < nsm; k++) sm[k].end[cur_step] = sm[k].last;
                cur_step++;
            }
            stepmem_note(&sm, &nsm, nsteps, di, total);
            if (cur_step < nsteps && ts >= steps[cur_step].ts)
                for (size_t k = 0; k < nsm; k++)
                    if (sm[k].dev == di && total > sm[k].peak[cur_step]) sm[k].peak[cur_step] = total;
        }
        if (total >= 0) {
            json_t *p = json_object_get(peaks, key);
            if (!p) {
                p = json_pack("{s:I,s:I,s:I}", "bytes", (json_int_t)-1, "ts", (json_int_t)0, "reserved",
                              (json_int_t)0);
                json_object_set_new(peaks, key, p);
            }
            if (total > json_integer_value(json_object_get(p, "bytes"))) {
                json_object_set_new(p, "bytes", json_integer(total));
                json_object_set_new(p, "ts", json_integer(ts));
            }
            if (reserved > json_integer_value(json_object_get(p, "reserved")))
                json_object_set_new(p, "reserved", json_integer(reserved));
        }
        if (bytes > 0) {
            struct pkey pk = { dt, di, addr };
            struct pending *p = hmap_put(&pm, pkey_hash(&pk), &pk, sizeof pk, NULL);
            if (p->ts || p->bytes) {
                /* allocated twice without a free in between: close the old one unseen */
                if (put_alloc(ins, c->rank, dt, di, addr, p->bytes, p->ts, 1, 0, 0, p->op)) goto dberr;
            }
            p->ts = ts;
            p->bytes = bytes;
            p->op = memop_find(c, id);
        } else if (bytes < 0) {
            struct pkey pk = { dt, di, addr };
            struct pending *p = hmap_get(&pm, pkey_hash(&pk), &pk, sizeof pk);
            if (p) {
                if (put_alloc(ins, c->rank, dt, di, addr, p->bytes, p->ts, 1, ts, 1, p->op)) goto dberr;
                hmap_del(&pm, pkey_hash(&pk), &pk, sizeof pk);
            } else {
                double_free++;
                if (put_alloc(ins, c->rank, dt, di, addr, bytes, 0, 0, ts, 1, 0)) goto dberr;
            }
        }
    }
    if (src != SQLITE_DONE) goto dberr;
    size_t pos = 0;
    const void *kp;
    const struct pending *p;
    while ((p = hmap_next(&pm, &pos, &kp, NULL))) {
        const struct pkey *k = kp;
        if (put_alloc(ins, c->rank, k->dt, k->di, k->addr, p->bytes, p->ts, 1, 0, 0, p->op)) goto dberr;
    }
    for (; cur_step < nsteps; cur_step++)
        for (size_t k = 0; k < nsm; k++) sm[k].end[cur_step] = sm[k].last;
    if (nsm) {
        json_t *smj = json_object();
        for (size_t k = 0; k < nsm; k++) {
            json_t *arr = json_array();
            for (size_t i = 0; i < nsteps; i++)
                json_array_append_new(arr, json_pack("{s:I,s:I}", "end", (json_int_t)sm[k].end[i], "peak",
                                                     (json_int_t)sm[k].peak[i]));
            char key[16];
            snprintf(key, sizeof key, "%d", sm[k].dev);
            json_object_set_new(smj, key, arr);
        }
        json_object_set_new(summary, "step_memory", smj);
    }
    json_object_set(summary, "peak_memory", peaks);
    if (double_free)
        json_object_set_new(summary, "frees_without_allocation", json_integer((json_int_t)double_free));
    goto out;
dberr:
    rc = rundb_db_error(c->db, e, "analysis (memory)");
out:
    for (size_t k = 0; k < nsm; k++) {
        free(sm[k].end);
        free(sm[k].peak);
    }
    free(sm);
    json_decref(peaks);
    hmap_free(&pm, NULL);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    return rc;
}

/* ====================================================================== */
/* Driver                                                                 */
/* ====================================================================== */

static int write_steps(struct rankctx *c, const struct step *s, size_t n, struct err *e)
{
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(c->db,
                           "INSERT INTO step(rank, idx, name, ts, dur, host_ts, host_dur, ngpu, kernel, memcpy,"
                           " memset, comm, runtime, dataloader, cpu_exec, other)"
                           " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &ins, NULL) != SQLITE_OK)
        return rundb_db_error(c->db, e, "analysis (step table)");
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        sqlite3_bind_int(ins, 1, c->rank);
        sqlite3_bind_int64(ins, 2, (int64_t)i);
        sqlite3_bind_text(ins, 3, s[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 4, s[i].ts);
        sqlite3_bind_int64(ins, 5, s[i].end - s[i].ts);
        sqlite3_bind_int64(ins, 6, s[i].host_ts);
        sqlite3_bind_int64(ins, 7, s[i].host_dur);
        sqlite3_bind_int64(ins, 8, s[i].ngpu);
        static const int col[C_N + 1] = { [C_KERNEL] = 9,      [C_MEMCPY] = 10,     [C_MEMSET] = 11,
                                          [C_RUNTIME] = 13,    [C_DATALOADER] = 14, [C_CPU_EXEC] = 15,
                                          [C_N] = 16 };
        for (int k = 0; k <= C_N; k++)
            if (col[k]) sqlite3_bind_int64(ins, col[k], s[i].part[k]);
        sqlite3_bind_int64(ins, 12, s[i].part[C_COMM_K] + s[i].part[C_COMM]);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (step table)");
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    return rc;
}

static int analyse_rank(sqlite3 *db, int rank, const char *header_text, struct err *e)
{
    struct rankctx c;
    struct step *steps = NULL;
    size_t nsteps = 0;
    json_t *header = header_text ? json_loads(header_text, 0, NULL) : NULL;
    json_t *summary = json_object();
    int rc = 0;

    memset(&c, 0, sizeof c);
    c.db = db;
    c.rank = rank;
    c.cpu_min = c.all_min = INT64_MAX;
    c.cpu_max = c.all_max = INT64_MIN;
    c.notes = json_array();
    hmap_init(&c.names.map, sizeof(struct name), 1024);
    hmap_init(&c.corr, sizeof(uint32_t), 4096);
    hmap_init(&c.ops, sizeof(struct opagg), 256);
    hmap_init(&c.kernels, sizeof(struct kagg), 256);
    if (sqlite3_prepare_v2(db, "SELECT s FROM str WHERE id = ?", -1, &c.names.get, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "analysis (strings)");
        goto out;
    }
    /* phase timings at debug level: what a slow ingest needs explained */
    double t = log_now_s(), t0 = t;
    if ((rc = load_gpu(&c, e)) != 0) goto out;
    LOG_LAP(rank, "GPU ops", &t);
    if ((rc = load_cpu(&c, e)) != 0) goto out;
    LOG_LAP(rank, "CPU threads", &t);
    if ((rc = build_steps(&c, &steps, &nsteps)) != 0) goto out;
    breakdown(&c, steps, nsteps);
    if ((rc = write_steps(&c, steps, nsteps, e)) != 0) goto out;
    LOG_LAP(rank, "steps and breakdown", &t);
    int64_t w0 = nsteps ? steps[0].ts : 0, w1 = nsteps ? steps[nsteps - 1].end : 0;
    if ((rc = gpu_metrics(&c, header, w0, w1, e)) != 0) goto out;
    if ((rc = write_ops(&c, e)) != 0) goto out;
    if ((rc = write_kernels(&c, e)) != 0) goto out;
    LOG_LAP(rank, "metrics and tables", &t);
    if ((rc = memory(&c, steps, nsteps, summary, e)) != 0) goto out;
    LOG_LAP(rank, "memory", &t);
    t = t0;
    LOG_LAP(rank, "all", &t);

    json_object_set_new(summary, "window_ns", json_pack("[I,I]", (json_int_t)w0, (json_int_t)w1));
    json_object_set_new(summary, "steps_found", json_integer((json_int_t)c.nhost));
    json_object_set_new(summary, "steps_dropped",
                        json_integer(c.nhost > nsteps ? (json_int_t)(c.nhost - nsteps) : 0));
    json_object_set_new(summary, "has_python_stacks", json_boolean(c.has_python));
    json_object_set(summary, "notes", c.notes);
    {
        char *text = json_dumps(summary, JSON_COMPACT);
        sqlite3_stmt *ins;
        if (sqlite3_prepare_v2(db, "INSERT INTO analysis(rank, summary) VALUES(?, ?)", -1, &ins, NULL) !=
            SQLITE_OK) {
            free(text);
            rc = rundb_db_error(db, e, "analysis (analysis table)");
            goto out;
        }
        sqlite3_bind_int(ins, 1, rank);
        sqlite3_bind_text(ins, 2, text, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE) rc = rundb_db_error(db, e, "analysis (analysis table)");
        sqlite3_finalize(ins);
        free(text);
    }
    LOG_DEBUG("rank %d: %zu GPU ops, %zu steps, %zu operator groups", rank, c.ng, nsteps, c.ops.n);
out:
    for (size_t i = 0; i < nsteps; i++) free(steps[i].name);
    free(steps);
    for (size_t i = 0; i < c.ng; i++) free(c.g[i].limiter);
    free(c.g);
    hmap_free(&c.corr, NULL);
    free(c.hs);
    free(c.mo);
    for (int k = 0; k < C_N; k++) ivlist_free(&c.cat[k]);
    hmap_free(&c.ops, free_opagg);
    hmap_free(&c.kernels, free_kagg);
    names_free(&c.names);
    json_decref(c.notes);
    json_decref(summary);
    json_decref(header);
    return rc;
}

int summary_run(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *ranks = NULL;
    int rc = 0;
    /* run again (ranks renumbered after import), it starts from empty tables */
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, clear_sql, NULL, NULL, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "analysis (tables)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if ((rc = rundb_prepare(db, "SELECT rank, header FROM rank ORDER BY rank", &ranks, e)) < 0) goto out;
    int src;
    while ((src = sqlite3_step(ranks)) == SQLITE_ROW) {
        const char *h = (const char *)sqlite3_column_text(ranks, 1);
        char *header = h ? xstrdup(h) : NULL;
        rc = analyse_rank(db, sqlite3_column_int(ranks, 0), header, e);
        free(header);
        if (rc) goto out;
    }
    if (src != SQLITE_DONE) {
        rc = rundb_db_error(db, e, "analysis (ranks)");
        goto out;
    }
    if (sqlite3_exec(db, index_sql, NULL, NULL, NULL) != SQLITE_OK) rc = rundb_db_error(db, e, "analysis (index)");
out:
    sqlite3_finalize(ranks);
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "analysis (commit)");
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* ====================================================================== */
/* Report                                                                 */
/* ====================================================================== */

const char *const summary_categories[9] = { "kernel",  "memcpy",     "memset",   "communication", "runtime",
                                             "dataloader", "cpu_exec", "other", NULL };

static json_t *col_num_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_real(sqlite3_column_double(st, i));
}

static int report_rank(sqlite3 *db, int rank, int top_n, json_t *r, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, n = 0;
    double avg[9] = { 0 }, avg_dur = 0;
    json_t *steps = json_array();
    json_object_set_new(r, "steps", steps);

#define PREP(sql)                                                                                                      \
    do {                                                                                                               \
        sqlite3_finalize(st);                                                                                          \
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)                                                   \
            return rundb_db_error(db, e, "analysis (report)");                                                         \
        sqlite3_bind_int(st, 1, rank);                                                                                 \
    } while (0)

    PREP("SELECT name, ts, dur, host_ts, host_dur, kernel, memcpy, memset, comm, runtime, dataloader, cpu_exec,"
         " other FROM step WHERE rank = ? ORDER BY idx");
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *bd = json_object();
        for (int k = 0; k < 8; k++) {
            double v = (double)sqlite3_column_int64(st, 5 + k) / 1000.0;
            json_object_set_new(bd, summary_categories[k], json_real(v));
            avg[k] += v;
        }
        avg_dur += (double)sqlite3_column_int64(st, 2) / 1000.0;
        json_array_append_new(steps, json_pack("{s:s,s:f,s:f,s:f,s:f,s:o}", "name",
                                               (const char *)sqlite3_column_text(st, 0), "start_us",
                                               (double)sqlite3_column_int64(st, 1) / 1000.0, "dur_us",
                                               (double)sqlite3_column_int64(st, 2) / 1000.0, "host_start_us",
                                               (double)sqlite3_column_int64(st, 3) / 1000.0, "host_dur_us",
                                               (double)sqlite3_column_int64(st, 4) / 1000.0, "breakdown_us", bd));
        n++;
    }
    json_t *abd = json_object();
    for (int k = 0; k < 8; k++) json_object_set_new(abd, summary_categories[k], json_real(n ? avg[k] / n : 0));
    json_object_set_new(r, "average", json_pack("{s:f,s:o}", "dur_us", n ? avg_dur / n : 0.0, "breakdown_us", abd));

    json_t *gpus = json_array(), *best = NULL;
    int64_t best_k = -1;
    PREP("SELECT device, name, memory_bytes, cc, util, sm_eff, occupancy, tc_share, kernel_ns FROM gpu"
         " WHERE rank = ? ORDER BY device");
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 1), *cc = (const char *)sqlite3_column_text(st, 3);
        json_t *g = json_pack("{s:i,s:s?,s:o,s:s?,s:o,s:o,s:o,s:o,s:f}", "device", sqlite3_column_int(st, 0),
                              "name", name, "memory_bytes",
                              sqlite3_column_type(st, 2) == SQLITE_NULL ? json_null()
                                                                        : json_integer(sqlite3_column_int64(st, 2)),
                              "compute_capability", cc, "utilization", col_num_or_null(st, 4), "sm_efficiency",
                              col_num_or_null(st, 5), "achieved_occupancy", col_num_or_null(st, 6),
                              "tensor_core_share", col_num_or_null(st, 7), "kernel_us",
                              (double)sqlite3_column_int64(st, 8) / 1000.0);
        json_array_append_new(gpus, g);
        if (sqlite3_column_int64(st, 8) > best_k) {
            best_k = sqlite3_column_int64(st, 8);
            best = g;
        }
    }
    json_object_set_new(r, "gpus", gpus);
    if (best) {
        json_object_set_new(r, "device",
                            json_pack("{s:O,s:O,s:O}", "name", json_object_get(best, "name"), "memory_bytes",
                                      json_object_get(best, "memory_bytes"), "compute_capability",
                                      json_object_get(best, "compute_capability")));
        json_object_set(r, "gpu_utilization", json_object_get(best, "utilization"));
        json_object_set(r, "sm_efficiency", json_object_get(best, "sm_efficiency"));
        json_object_set(r, "achieved_occupancy", json_object_get(best, "achieved_occupancy"));
        json_object_set(r, "tensor_core_share", json_object_get(best, "tensor_core_share"));
    } else {
        json_object_set_new(r, "device", json_null());
        json_object_set_new(r, "gpu_utilization", json_null());
        json_object_set_new(r, "sm_efficiency", json_null());
        json_object_set_new(r, "achieved_occupancy", json_null());
        json_object_set_new(r, "tensor_core_share", json_null());
    }

    json_t *peaks = json_object(), *notes = json_array();
    PREP("SELECT summary FROM analysis WHERE rank = ?");
    if (sqlite3_step(st) == SQLITE_ROW) {
        json_t *sum = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(sum, "peak_memory"), k, v) {
            if (strcmp(k, "cpu") == 0) json_object_set(r, "peak_memory_cpu_bytes", json_object_get(v, "bytes"));
            else json_object_set(peaks, k, json_object_get(v, "bytes"));
        }
        json_array_extend(notes, json_object_get(sum, "notes"));
        json_decref(sum);
    }
    json_object_set_new(r, "peak_memory_bytes", peaks);
    json_object_set_new(r, "notes", notes);

    json_t *tk = json_array();
    PREP("SELECT name, sum(calls), sum(total), max(tc), max(comm) FROM kernel_stat WHERE rank = ?"
         " GROUP BY name ORDER BY sum(total) DESC LIMIT ?");
    sqlite3_bind_int(st, 2, top_n);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(tk, json_pack("{s:s,s:I,s:f,s:b,s:b}", "name", (const char *)sqlite3_column_text(st, 0),
                                            "calls", (json_int_t)sqlite3_column_int64(st, 1), "total_us",
                                            (double)sqlite3_column_int64(st, 2) / 1000.0, "tensor_cores",
                                            sqlite3_column_int(st, 3), "communication", sqlite3_column_int(st, 4)));
    json_object_set_new(r, "top_kernels", tk);

    json_t *to = json_array();
    PREP("SELECT name, sum(calls), sum(host_self), sum(host_total), sum(dev_self), sum(dev_total) FROM op_stat"
         " WHERE rank = ? GROUP BY name ORDER BY sum(dev_self) DESC, sum(host_self) DESC LIMIT ?");
    sqlite3_bind_int(st, 2, top_n);
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(to, json_pack("{s:s,s:I,s:f,s:f,s:f,s:f}", "name",
                                            (const char *)sqlite3_column_text(st, 0), "calls",
                                            (json_int_t)sqlite3_column_int64(st, 1), "host_self_us",
                                            (double)sqlite3_column_int64(st, 2) / 1000.0, "host_total_us",
                                            (double)sqlite3_column_int64(st, 3) / 1000.0, "device_self_us",
                                            (double)sqlite3_column_int64(st, 4) / 1000.0, "device_total_us",
                                            (double)sqlite3_column_int64(st, 5) / 1000.0));
    json_object_set_new(r, "top_operators", to);
#undef PREP
    sqlite3_finalize(st);
    return rc;
}

int summary_report(sqlite3 *db, const char *run_name, int top_n, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT rank FROM analysis ORDER BY rank", -1, &st, NULL) != SQLITE_OK)
        return err_set(e, ERR_INVALID, "this run has no analysis tables (imported by an older version; import it "
                                      "again)");
    json_t *ranks = json_array();
    int rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        json_t *r = json_pack("{s:i}", "rank", sqlite3_column_int(st, 0));
        json_array_append_new(ranks, r);
        rc = report_rank(db, sqlite3_column_int(st, 0), top_n, r, e);
    }
    sqlite3_finalize(st);
    if (rc) {
        json_decref(ranks);
        return rc;
    }
    *out = json_pack("{s:{s:s,s:I},s:o,s:[]}", "run", "name", run_name ? run_name : "", "ranks",
                     (json_int_t)json_array_size(ranks), "ranks", ranks, "recommendations");
    return 0;
}

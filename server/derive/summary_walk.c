#define LOG_MODULE "analysis"
#include "derive/summary_walk.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/hmap.h"
#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "derive/slice_feed.h"
#include "derive/summary_memory.h"
#include "store/model.h"
#include "store/rundb.h"
#include "store/scan.h"

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

/* Args are read with jtok's span grammar, written out here so that a
 * member costs a few compares and no calls: the operators' input shapes
 * are pulled from every cpu_op's args on each import (370 k of them, 80 MB,
 * on a 100-step trace). aw_member accepts and refuses what
 * jtok_span_next_member does (summary_walk_test holds the cases). */
static const char *aw_ws(const char *c, const char *end)
{
    while (c < end && (*c == ' ' || *c == '\n' || *c == '\r' || *c == '\t')) c++;
    return c;
}

/* The byte after the closing quote of the string whose body starts at c,
 * or NULL when it never closes; *esc = 1 when the body holds a backslash. */
static const char *aw_string(const char *c, const char *end, int *esc)
{
#ifdef __SSE2__
    /* 16 bytes at a time to the next quote or backslash: keys and the
     * strings of "Input type" and "Concrete Inputs" were most of the
     * pass's own time, one byte at a time */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    while (end - c >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)c);
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)));
        if (!m) {
            c += 16;
            continue;
        }
        c += __builtin_ctz(m);
        if (*c == '"') return c + 1;
        *esc = 1;
        c += 2;
    }
#endif
    while (c < end) {
        if (*c == '"') return c + 1;
        if (*c == '\\') {
            *esc = 1;
            c += 2;
        } else {
            c++;
        }
    }
    return NULL;
}

/* The byte after the object or array opening at c, or NULL when it never
 * closes. Brackets are counted, not matched, as jtok does. */
static const char *aw_nested(const char *c, const char *end)
{
    int depth = 0, in_str = 0;
#ifdef __SSE2__
    /* 16 bytes at a time while they hold no backslash: then every quote
     * opens or closes a string, so the bytes inside strings are the
     * running parity of the quotes (a prefix xor), and the brackets
     * outside them are taken in order ('[' and '{', ']' and '}' differ
     * only in bit 0x20). The arrays of "Input Strides" and "Input Dims"
     * were half the pass's own time one byte at a time. */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), low = _mm_set1_epi8(0x20),
                  open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
    while (end - c >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)c), f = _mm_or_si128(v, low);
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(v, bslash))) break; /* the byte loop takes it from here */
        unsigned q = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote));
        unsigned op = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, open));
        unsigned cl = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(f, close));
        unsigned inside = q;
        inside ^= inside << 1;
        inside ^= inside << 2;
        inside ^= inside << 4;
        inside ^= inside << 8;
        if (in_str) inside = ~inside;
        unsigned br = (op | cl) & ~inside & 0xffffu;
        while (br) {
            unsigned k = (unsigned)__builtin_ctz(br), bit = 1u << k;
            br &= br - 1;
            if (op & bit) depth++;
            else if (--depth == 0) return c + k + 1;
        }
        in_str ^= __builtin_popcount(q) & 1;
        c += 16;
    }
#endif
    while (c < end) {
        char ch = *c++;
        if (in_str) {
            if (ch == '\\') c++;
            else if (ch == '"') in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if ((ch == '}' || ch == ']') && --depth == 0) {
            return c;
        }
    }
    return NULL;
}

/* jtok_span_next_member, inline: 1 with key and val filled, 0 at the
 * closing '}', -1 where jtok would fail. */
static int aw_member(const char **cur, const char *end, struct jtok_val *key, struct jtok_val *val)
{
    const char *c = aw_ws(*cur, end), *v;
    if (c < end && *c == '{') c = aw_ws(c + 1, end);
    if (c < end && *c == ',') c = aw_ws(c + 1, end);
    if (c < end && *c == '}') {
        *cur = c + 1;
        return 0;
    }
    if (c >= end || *c != '"') return -1;
    *key = (struct jtok_val){ JT_STRING, c + 1, 0, 0 };
    if (!(c = aw_string(c + 1, end, &key->escaped))) return -1;
    key->n = (size_t)(c - 1 - key->p);
    c = aw_ws(c, end);
    if (c >= end || *c != ':') return -1;
    v = c = aw_ws(c + 1, end);
    if (c >= end) return -1;
    if (*c == '"') {
        *val = (struct jtok_val){ JT_STRING, c + 1, 0, 0 };
        if (!(c = aw_string(c + 1, end, &val->escaped))) return -1;
        val->n = (size_t)(c - 1 - val->p);
    } else if (*c == '{' || *c == '[') {
        if (!(c = aw_nested(c, end))) return -1;
        *val = (struct jtok_val){ *v == '{' ? JT_OBJECT : JT_ARRAY, v, (size_t)(c - v), 0 };
    } else if ((*c >= '0' && *c <= '9') || (*c == '-' && !((size_t)(end - c) >= 9 && !memcmp(c, "-Infinity", 9)))) {
        for (c++; c < end && ((unsigned)(*c - '0') < 10 || *c == '.' || (*c | 0x20) == 'e' || *c == '+' || *c == '-');
             c++)
            ;
        *val = (struct jtok_val){ JT_NUMBER, v, (size_t)(c - v), 0 };
    } else { /* true, false, null, NaN, Infinity, -Infinity */
        struct err e;
        if (jtok_span_value(&c, end, val, &e) != 0) return -1;
    }
    c = aw_ws(c, end);
    if (c >= end || (*c != ',' && *c != '}')) return -1;
    *cur = c;
    return 1;
}

/* A member name equals lit: the length first, jtok_str_eq only for names
 * with escapes (370 k operators' args of ~10 members each are read per
 * import; two calls and a strlen per member showed in the profile). */
static int key_is(const struct jtok_val *k, const char *lit, size_t n)
{
    return k->escaped ? jtok_str_eq(k, lit) : k->n == n && memcmp(k->p, lit, n) == 0;
}
#define KEY_IS(k, lit) key_is(k, lit, sizeof lit - 1)

static double span_num(const struct jtok_val *v)
{
    return v->type == JT_NUMBER ? strtod(v->p, NULL) : -1.0;
}

static void kargs_scan(const char *args, size_t n, struct kargs *k)
{
    const char *cur = args, *end = args + n;
    struct jtok_val key, val;
    k->bps = k->occ = -1.0;
    k->device = -1;
    k->collective = 0;
    k->limiter = NULL;
    while (cur < end && *cur != '{') cur++;
    if (cur == end) return;
    cur++;
    while (aw_member(&cur, end, &key, &val) == 1) {
        if (KEY_IS(&key, "blocks per SM")) k->bps = span_num(&val);
        else if (KEY_IS(&key, "est. achieved occupancy %")) k->occ = span_num(&val);
        else if (KEY_IS(&key, "device") && val.type == JT_NUMBER) k->device = atoi(val.p);
        else if (KEY_IS(&key, "Collective name")) k->collective = 1;
        else if (KEY_IS(&key, "occupancy") && val.type == JT_OBJECT && !k->limiter) {
            const char *oc = val.p + 1, *oe = val.p + val.n;
            struct jtok_val ok, ov;
            while (aw_member(&oc, oe, &ok, &ov) == 1) {
                if (KEY_IS(&ok, "limitingFactors") && ov.type == JT_STRING && ov.n) {
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

char *summary_walk_shapes(const char *args, size_t n)
{
    const char *cur = args, *end = args + n;
    struct jtok_val key, val;
    while (cur < end && *cur != '{') cur++;
    if (cur == end) return NULL;
    cur++;
    while (aw_member(&cur, end, &key, &val) == 1) {
        if (val.type == JT_ARRAY && (KEY_IS(&key, "Input Dims") || KEY_IS(&key, "Input dims"))) {
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

int summary_walk_gpu(struct rankctx *c, struct err *e)
{
    /* one range query per GPU lane: ids follow (track, ts) */
    static const char tracks_sql[] =
        "SELECT first_slice, last_slice, device FROM track WHERE rank = ? AND kind = 1 AND nslices > 0 ORDER BY id";
    static const char sql[] =
        "SELECT ts, dur, name, kind, corr, CASE WHEN kind = 6 THEN args END FROM slice WHERE id BETWEEN ? AND ?"
        " ORDER BY id";
    sqlite3_stmt *tr = NULL, *st = NULL, *cnt = NULL;
    int rc = 0, src;
    if (sqlite3_prepare_v2(c->db, tracks_sql, -1, &tr, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = rundb_db_error(c->db, e, "analysis (GPU ops)");
        goto out;
    }
    sqlite3_bind_int(tr, 1, c->rank);
    /* the array at its size at once: doubling it would hold up to twice the ops, and both copies while it moves */
    if (sqlite3_prepare_v2(c->db, "SELECT sum(nslices) FROM track WHERE rank = ? AND kind = 1", -1, &cnt, NULL) !=
        SQLITE_OK) {
        rc = rundb_db_error(c->db, e, "analysis (GPU ops)");
        goto out;
    }
    sqlite3_bind_int(cnt, 1, c->rank);
    if ((rc = scan_step(cnt, e, "analysis (GPU ops)")) < 0) goto out;
    rc = 0;
    int64_t want = sqlite3_column_int64(cnt, 0);
    if (want > (int64_t)c->gcap && (uint64_t)want < UINT32_MAX) {
        c->gcap = (size_t)want;
        c->g = xrealloc(c->g, c->gcap * sizeof *c->g);
    }
    while (rc == 0 && (src = sqlite3_step(tr)) == SQLITE_ROW)
        rc = load_gpu_track(c, st, sqlite3_column_int64(tr, 0), sqlite3_column_int64(tr, 1),
                            sqlite3_column_type(tr, 2) == SQLITE_NULL ? 0 : sqlite3_column_int(tr, 2), e);
    if (rc == 0 && src != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (GPU lanes)");
    if (rc == 0) summary_rank_corr_index(c);
out:
    sqlite3_finalize(cnt);
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
            if (summary_rank_flags(&c->names, name) & NF_COMM_OP) ivlist_add(&c->cat[C_COMM], ts, ts + dur);
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
        int64_t corr = sqlite3_column_int64(st, 4);
        if (corr) summary_rank_corr_add(c, corr, (uint32_t)c->ng);
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
            g->flags = summary_rank_flags(&c->names, name) & (NF_TC | NF_COMM_KERNEL);
            if (ka.collective) g->flags |= NF_COMM_KERNEL;
        }
        c->ng++;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return rundb_db_error(c->db, e, "analysis (GPU ops)");
    return 0;
}

/* ====================================================================== */
/* Pass 2: CPU threads (operator tree, runtimes, memory attribution)      */
/* ====================================================================== */

/* The Python stacks met, interned: a with_stack trace opens ~1 Python
 * frame per operator, and each operator's stack (its innermost
 * STACK_FRAMES Python frames as text) was built, hashed and compared per
 * call. A node is a stack of at most STACK_FRAMES frames: one frame (name)
 * on top of a node of fewer (parent), so nodes stay few even where
 * misnested frames pile up thousands deep; its text is built once. Nodes
 * whose texts read the same share one text (canon), so operators group by
 * text as before. */
struct pynode {
    uint32_t parent, name; /* the frames below (node id, 0: none) and the innermost one */
    uint32_t canon;        /* index in texts, 0: no text */
    uint32_t drop;         /* this stack without its outermost frame */
    uint32_t depth;        /* frames, 1..STACK_FRAMES */
};

struct walk {
    struct frame *f;
    int n, cap;
    int top_op; /* index of the innermost operator frame, -1 none */
    uint32_t track;
    size_t ev;             /* this thread's next memory event in c->mev, c->nmev none */
    struct hmap first_ev;  /* track -> index in c->mev of its first event */
    struct hmap chain;     /* (parent node, name) -> node id (index in node, from 1) */
    struct hmap canon;     /* stack text -> its index in texts */
    struct pynode *node;   /* [0] unused: node 0 is "no Python frame" */
    size_t nnode, nodecap;
    char **texts;          /* [0] unused */
    size_t ntext, textcap;
};

static void finish_frame(struct rankctx *c, struct walk *w, int i)
{
    struct frame *f = &w->f[i];
    if (f->is_op) {
        int64_t total = f->end - f->ts;
        int64_t self = total - f->child_op_dur - f->rt_dur;
        int64_t dev_total = f->dev_self + f->dev_children;
        int64_t tc_total = f->tc_self + f->tc_children;
        /* an API call or NVTX range (Nsight) says nothing of matmul work */
        int elig = f->kind == TB_K_CPU_OP &&
                   (f->tc_elig || (summary_rank_flags(&c->names, f->name) & NF_TC_ELIGIBLE) || f->tc_self > 0);
        /* name, stack text (interned: its index), shape */
        uint32_t stack = w->node[f->pystack].canon;
        size_t sl = f->shape ? strlen(f->shape) : 0, klen = 8 + sl;
        char keybuf[256];
        char *key = klen <= sizeof keybuf ? keybuf : xmalloc(klen);
        memcpy(key, &f->name, 4);
        memcpy(key + 4, &stack, 4);
        if (sl) memcpy(key + 8, f->shape, sl);
        int fresh;
        struct opagg *a = hmap_put(&c->ops, hmap_hash_bytes(key, klen), key, klen, &fresh);
        if (key != keybuf) free(key);
        if (fresh) {
            a->name = f->name;
            a->shape = f->shape ? xstrdup(f->shape) : NULL;
            a->stack = stack ? xstrdup(w->texts[stack]) : NULL;
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
    free(f->shape_own);
    f->shape = f->shape_own = NULL;
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
static void flush_mem(struct rankctx *c, struct walk *w, int64_t until)
{
    while (w->ev < c->nmev && c->mev[w->ev].ts < until) {
        struct memev *m = &c->mev[w->ev];
        uint32_t op = 0;
        for (int i = w->top_op; i >= 0; i = w->f[i].op_parent) {
            if (w->f[i].ts <= m->ts && m->ts < w->f[i].end) {
                op = w->f[i].name;
                break;
            }
        }
        m->who = MEV_WALKED | op;
        do w->ev++;
        while (w->ev < c->nmev && c->mev[w->ev].who != w->track);
    }
}

/* Up to this many innermost Python frames make an operator's call stack. */
#define STACK_FRAMES 8

/* The text of a stack: the innermost STACK_FRAMES Python frames from
 * node id up, innermost first, one a line. Owned by caller. */
static char *stack_text(struct rankctx *c, const struct walk *w, uint32_t id)
{
    size_t len = 0, cap = 0;
    char *out = NULL;
    for (int frames = 0; id && frames < STACK_FRAMES; id = w->node[id].parent, frames++) {
        const char *s = summary_rank_name(&c->names, w->node[id].name)->s;
        size_t n = strlen(s);
        if (len + n + 2 > cap) {
            cap = (len + n + 2) * 2;
            out = xrealloc(out, cap);
        }
        if (len) out[len++] = '\n';
        memcpy(out + len, s, n);
        len += n;
        out[len] = 0;
    }
    return out;
}

/* The node of frame `name` on top of node `below` (at most
 * STACK_FRAMES - 1 frames deep). */
static uint32_t pynode_get(struct rankctx *c, struct walk *w, uint32_t below, uint32_t name)
{
    uint32_t key[2] = { below, name };
    int fresh;
    /* one 64-bit hash for the pair (the map is only looked up, never walked) */
    uint32_t *id = hmap_put(&w->chain, hmap_hash_u64((uint64_t)below << 32 | name), key, sizeof key, &fresh);
    if (!fresh) return *id;
    if (w->nnode == w->nodecap) {
        w->nodecap = w->nodecap ? w->nodecap * 2 : 256;
        w->node = xrealloc(w->node, w->nodecap * sizeof *w->node);
    }
    uint32_t me = (uint32_t)w->nnode++;
    *id = me; /* before the calls below move the map */
    w->node[me] = (struct pynode){ below, name, 0, 0, w->node[below].depth + 1 };
    if (below) {
        uint32_t drop = pynode_get(c, w, w->node[below].drop, name);
        w->node[me].drop = drop;
    }
    char *text = stack_text(c, w, me);
    size_t tl = strlen(text);
    if (!tl) { /* frames without names read as no stack, as before */
        free(text);
        return me;
    }
    uint32_t *canon = hmap_put(&w->canon, hmap_hash_bytes(text, tl), text, tl, &fresh);
    if (fresh) {
        if (w->ntext == w->textcap) {
            w->textcap = w->textcap * 2;
            w->texts = xrealloc(w->texts, w->textcap * sizeof *w->texts);
        }
        *canon = (uint32_t)w->ntext;
        w->texts[w->ntext++] = text;
    } else {
        free(text);
    }
    w->node[me].canon = *canon;
    return me;
}

/* The stack once Python frame `name` opens on top of stack `parent`: its
 * innermost STACK_FRAMES frames. */
static uint32_t python_push(struct rankctx *c, struct walk *w, uint32_t parent, uint32_t name)
{
    return pynode_get(c, w, w->node[parent].depth == STACK_FRAMES ? w->node[parent].drop : parent, name);
}

/* The thread's slices of ids first..last: from fr when the import's stream
 * held them (slice_feed.h; the range is then dense), else read by st.
 * dense: they hold every id of the range, which are then counted, not
 * read (st has no id column). */
static int walk_track(struct rankctx *c, sqlite3_stmt *st, int dense, const struct slice_feed_row *fr,
                      struct walk *w, uint32_t track, int64_t first, int64_t last, struct err *e)
{
    int rc = SQLITE_DONE;
    int64_t next_id = first;
    w->n = 0;
    w->top_op = -1;
    w->track = track;
    const size_t *ev0 = hmap_get(&w->first_ev, hmap_hash_u64(track), &track, sizeof track);
    w->ev = ev0 ? *ev0 : c->nmev;

    if (!fr) {
        sqlite3_bind_int64(st, 1, first);
        sqlite3_bind_int64(st, 2, last);
    }
    for (;;) {
        const struct slice_feed_row *r = NULL;
        if (fr) {
            if (next_id > last) break;
            r = &fr[next_id - first];
        } else if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
            break;
        }
        int64_t ts = r ? r->ts : sqlite3_column_int64(st, 0), dur = r ? r->dur : sqlite3_column_int64(st, 1);
        /* NULL reads 0, which no slice id is */
        int64_t parent = r ? (int64_t)r->parent : sqlite3_column_int64(st, 2);
        uint32_t name = r ? r->name : (uint32_t)sqlite3_column_int64(st, 3);
        int kind = r ? r->kind : sqlite3_column_int(st, 4);
        int64_t id = dense ? next_id++ : sqlite3_column_int64(st, 7);
        int64_t end = ts + dur;

        flush_mem(c, w, ts); /* first: a frame about to be popped may hold them */
        while (w->n && w->f[w->n - 1].id != parent) pop_frame(c, w);
        if (ts < c->all_min) c->all_min = ts;
        if (end > c->all_max) c->all_max = end;

        uint8_t nf = summary_rank_flags(&c->names, name);
        int is_op = 0;
        int64_t dev = 0, tc = 0; /* what an API call launched */
        switch (kind) {
        case TB_K_RUNTIME:
        case TB_K_DRIVER: {
            ivlist_add(&c->cat[C_RUNTIME], ts, end);
            uint32_t op = w->top_op >= 0 ? w->f[w->top_op].name : 0;
            int64_t corr = r ? r->corr : sqlite3_column_int64(st, 5); /* read here: 1 row in 10 is a launch */
            for (size_t k = summary_rank_corr_first(c, corr); k < c->nby_corr && c->by_corr[k].key == corr; k++) {
                struct gop *g = &c->g[c->by_corr[k].idx];
                g->launch_ts = ts;
                g->launch_end = end;
                g->op = op;
                dev += g->dur;
                if (g->flags & NF_TC) tc += g->dur;
            }
            /* an operator itself (below) when API calls are the operators,
             * its parent then counting it as a child operator */
            is_op = c->api_ops;
            if (w->top_op >= 0 && !is_op) {
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
            is_op = kind == TB_K_CPU_OP ? !(nf & NF_NOT_OP) : c->api_ops;
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
        f->dev_self = is_op ? dev : 0;
        f->tc_self = is_op ? tc : 0;
        f->pystack = w->n ? w->f[w->n - 1].pystack : 0;
        if (kind == TB_K_PYTHON) f->pystack = python_push(c, w, f->pystack, name);
        if (is_op && kind == TB_K_CPU_OP && r) {
            f->shape = slice_feed_shape(c->feed, r->shape);
        } else if (is_op && kind == TB_K_CPU_OP) {
            const char *args = (const char *)sqlite3_column_text(st, 6);
            if (args) f->shape = f->shape_own = summary_walk_shapes(args, (size_t)sqlite3_column_bytes(st, 6));
        }
        if (is_op) w->top_op = w->n;
        w->n++;
    }
    if (!fr) sqlite3_reset(st);
    if (rc == SQLITE_DONE) flush_mem(c, w, INT64_MAX);
    while (w->n) pop_frame(c, w);
    if (rc != SQLITE_DONE) return rundb_db_error(c->db, e, "analysis (CPU slices)");
    if (dense && next_id != last + 1)
        return err_set(e, ERR_INVALID, "analysis (CPU slices): ids %lld..%lld have a gap", (long long)first,
                       (long long)last);
    return 0;
}

int summary_walk_cpu(struct rankctx *c, struct err *e)
{
    static const char tracks_sql[] = "SELECT id, first_slice, last_slice, nslices FROM track"
                                     " WHERE rank = ? AND kind != 1 AND nslices > 0 ORDER BY id";
    /* a thread whose slices hold every id of its range (ids follow
     * (track, ts)) has them counted: one column fewer on 730 k rows */
    static const char slice_sql[] =
        "SELECT ts, dur, parent, name, kind, corr, args, id FROM slice WHERE id BETWEEN ? AND ? ORDER BY id";
    static const char dense_sql[] =
        "SELECT ts, dur, parent, name, kind, corr, args FROM slice WHERE id BETWEEN ? AND ? ORDER BY id";
    sqlite3_stmt *tr = NULL, *st = NULL, *dense = NULL;
    struct walk w;
    int rc = 0;
    memset(&w, 0, sizeof w);
    hmap_init(&w.chain, sizeof(uint32_t), 256);
    hmap_init(&w.canon, sizeof(uint32_t), 256);
    hmap_init(&w.first_ev, sizeof(size_t), 16);
    w.node = xcalloc(w.nodecap = 256, sizeof *w.node);
    w.nnode = 1;
    w.texts = xcalloc(w.textcap = 256, sizeof *w.texts);
    w.ntext = 1;
    if ((rc = summary_memory_events(c, e)) != 0) goto out;
    for (size_t i = 0; i < c->nmev; i++) {
        uint32_t t = c->mev[i].who;
        int fresh;
        if (i && c->mev[i - 1].who == t) continue;
        size_t *at = hmap_put(&w.first_ev, hmap_hash_u64(t), &t, sizeof t, &fresh);
        if (fresh) *at = i;
    }
    if (sqlite3_prepare_v2(c->db, tracks_sql, -1, &tr, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, slice_sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, dense_sql, -1, &dense, NULL) != SQLITE_OK) {
        rc = rundb_db_error(c->db, e, "analysis (CPU slices)");
        goto out;
    }
    sqlite3_bind_int(tr, 1, c->rank);
    int src;
    while ((src = sqlite3_step(tr)) == SQLITE_ROW) {
        uint32_t track = (uint32_t)sqlite3_column_int64(tr, 0);
        int64_t first = sqlite3_column_int64(tr, 1), last = sqlite3_column_int64(tr, 2);
        int is_dense = last - first + 1 == sqlite3_column_int64(tr, 3);
        const struct slice_feed_row *fr = is_dense ? slice_feed_track(c->feed, track, first, last) : NULL;
        if ((rc = walk_track(c, is_dense ? dense : st, is_dense, fr, &w, track, first, last, e)) != 0) goto out;
    }
    if (src != SQLITE_DONE) rc = rundb_db_error(c->db, e, "analysis (tracks)");
out:
    for (int i = 0; i < w.n; i++) free(w.f[i].shape_own);
    free(w.f);
    for (size_t i = 1; i < w.ntext; i++) free(w.texts[i]);
    free(w.texts);
    free(w.node);
    hmap_free(&w.chain, NULL);
    hmap_free(&w.canon, NULL);
    hmap_free(&w.first_ev, NULL);
    sqlite3_finalize(tr);
    sqlite3_finalize(st);
    sqlite3_finalize(dense);
    return rc;
}


/* gpu_idle_gaps — the GPU sits idle for long stretches inside the steps
 * while the host does one thing: waits for a batch, blocks in a sync or a
 * collective, runs a long op, or runs Python the profiler does not record.
 *
 * How it is read, per rank, on its busiest GPU: the GPU ops (kernels,
 * copies, memsets) of that device's streams are merged in time order (one
 * range query per stream, rows streamed) and every stretch with none of
 * them running is measured inside the steps. Stretches of at least
 * rule_gap_ms count as gaps; the rule fires when they add up to more than
 * rule_gap_pct of the steps. Shorter stretches are per-op host overhead,
 * kernel_launch_bound's subject.
 *
 * For each gap the host thread that launched the op ending it (found by
 * correlation id; the previous op's thread for the gap at the end of the
 * window) says what the host did meanwhile, time-weighted over the gap:
 * inside a DataLoader call, a collective (gloo:/nccl: spans), a blocking
 * runtime call, a CUDA launch call, an operator, a record_function region,
 * or nothing the profiler saw (Python, NumPy, sleeps between ops). A gap
 * that opens while the host is still blocked in a sync is flagged: that
 * sync emptied the GPU's queue.
 *
 * saving: the gaps' time per step, less their DataLoader part when
 * dataloader_bound has reported this rank already (that finding carries
 * it). Memory: one cursor (a stack of open slices) per launching thread
 * and one per GPU stream; the largest gaps are kept for the evidence.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kclass.h"
#include "model.h"
#include "rules.h"
#include "xmalloc.h"

_Static_assert(TB_K_CPU_OP == 1 && TB_K_USER_ANNOTATION == 2 && TB_K_RUNTIME == 4 && TB_K_DRIVER == 5 &&
                   TB_K_KERNEL == 6 && TB_K_MEMCPY == 7 && TB_K_MEMSET == 8 && TB_TRACK_GPU == 1,
               "kind numbers used in SQL");

/* Gaps listed in the evidence, largest first. */
#define TOP_GAPS 5
/* Labels told apart inside one gap. */
#define GAP_LABELS 8
/* "Most of" the gaps' time. */
#define MOST 0.5

/* ====================================================================== */
/* Host activity of a slice                                               */
/* ====================================================================== */

/* In priority order: time inside a DataLoader call that also launches is
 * input time, a sync inside an op is sync time, and so on. */
enum act { A_DATALOADER, A_COMM, A_SYNC, A_LAUNCH, A_OP, A_REGION, A_NONE, A_UNKNOWN, A_N };


/* Runtime calls that block the host until the GPU is done (CUDA, HIP). */
static int blocking_call(const char *s)
{
    static const char *const copies[] = {
        "cudaMemcpy",      "cudaMemcpy2D",    "cudaMemcpy3D", "cudaMemcpyFromSymbol", "cudaMemcpyPeer",
        "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2", "cuMemcpy",     "hipMemcpy",            "hipMemcpyWithStream",
        "cudaFree",        "cudaFreeHost",    "cuMemFree_v2", "hipFree",
    };
    if (strstr(s, "Synchronize")) return 1;
    for (size_t i = 0; i < sizeof copies / sizeof copies[0]; i++)
        if (strcmp(s, copies[i]) == 0) return 1;
    return 0;
}

/* The activity a slice stands for, or -1 for slices that say nothing about
 * it (the step span itself, Python frames, GPU-side events). */
static int act_of(const char *s, int kind)
{
    if (kind != TB_K_CPU_OP && kind != TB_K_USER_ANNOTATION && kind != TB_K_RUNTIME && kind != TB_K_DRIVER)
        return -1;
    if (kind == TB_K_RUNTIME || kind == TB_K_DRIVER) return blocking_call(s) ? A_SYNC : A_LAUNCH;
    if (kclass_profiler_step(s)) return -1;
    if (kclass_dataloader(s)) return A_DATALOADER;
    if (kclass_comm_op(s)) return A_COMM;
    return kind == TB_K_CPU_OP ? A_OP : A_REGION;
}

/* Name id -> activity, cached (a direct-mapped table: a miss costs one
 * lookup in str). */
#define NCACHE 4096
struct names {
    sqlite3_stmt *get; /* SELECT s FROM str WHERE id = ? */
    uint32_t id[NCACHE];
    int8_t kind[NCACHE], act[NCACHE];
};

static int names_act(struct names *nm, uint32_t id, int kind)
{
    size_t k = ((size_t)id * 2654435761u + (size_t)kind) % NCACHE;
    if (nm->id[k] == id && nm->kind[k] == kind && id) return nm->act[k];
    sqlite3_bind_int64(nm->get, 1, id);
    const char *s = sqlite3_step(nm->get) == SQLITE_ROW ? (const char *)sqlite3_column_text(nm->get, 0) : NULL;
    int a = act_of(s ? s : "", kind);
    sqlite3_reset(nm->get);
    nm->id[k] = id;
    nm->kind[k] = (int8_t)kind;
    nm->act[k] = (int8_t)a;
    return a;
}

/* The text of name id into buf (truncated), "" when unknown. */
static const char *names_text(struct names *nm, uint32_t id, char *buf, size_t n)
{
    buf[0] = '\0';
    sqlite3_bind_int64(nm->get, 1, id);
    if (sqlite3_step(nm->get) == SQLITE_ROW && sqlite3_column_text(nm->get, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(nm->get, 0));
    sqlite3_reset(nm->get);
    return buf;
}

/* ====================================================================== */
/* Host threads: a cursor per thread, moving forward in time              */
/* ====================================================================== */

struct frame {
    int64_t end;
    uint32_t name;
    int8_t act;
};

struct hcur {
    int64_t track;
    sqlite3_stmt *st; /* the thread's slices in (ts, -dur) order */
    int has;          /* a fetched row waits to be pushed */
    int64_t ts, end;
    uint32_t name;
    int act;
    struct frame *f; /* slices open at the cursor's time, outermost first */
    int n, cap;
};

/* Called for each stretch of a sweep with the activity then, the slice
 * that names it and the op it runs in (0: none). */
typedef void (*act_fn)(void *arg, int act, uint32_t label, uint32_t within, int64_t ns);

/* Fetches the next slice that says something about host activity.
 * Returns 0 or -1 on a database error. */
static int hcur_fetch(struct hcur *h, struct names *nm)
{
    int rc;
    h->has = 0;
    while ((rc = sqlite3_step(h->st)) == SQLITE_ROW) {
        int a = names_act(nm, (uint32_t)sqlite3_column_int64(h->st, 3), sqlite3_column_int(h->st, 2));
        if (a < 0) continue;
        h->ts = sqlite3_column_int64(h->st, 0);
        h->end = h->ts + sqlite3_column_int64(h->st, 1);
        h->name = (uint32_t)sqlite3_column_int64(h->st, 3);
        h->act = a;
        h->has = 1;
        return 0;
    }
    return rc == SQLITE_DONE ? 0 : -1;
}

static void hcur_push(struct hcur *h)
{
    if (h->n == h->cap) h->f = xrealloc(h->f, (size_t)(h->cap = h->cap ? h->cap * 2 : 32) * sizeof *h->f);
    int64_t end = h->end;
    /* a slice overlapping its parent's end (clock rounding) is cut there,
     * so the stack stays ordered by end */
    if (h->n && end > h->f[h->n - 1].end) end = h->f[h->n - 1].end;
    h->f[h->n++] = (struct frame){ end, h->name, (int8_t)h->act };
}

/* Moves the cursor to time t (never backwards): the stack then holds the
 * slices open at t. */
static int hcur_seek(struct hcur *h, struct names *nm, int64_t t)
{
    while (h->has && h->ts < t) {
        while (h->n && h->f[h->n - 1].end <= h->ts) h->n--;
        hcur_push(h);
        if (hcur_fetch(h, nm) != 0) return -1;
    }
    while (h->n && h->f[h->n - 1].end <= t) h->n--;
    return 0;
}

/* The activity of the stack (the highest priority present) and the slice
 * that names it: the outermost slice of that activity (for a sync or a
 * runtime call, the call, with the outermost op around it in *within);
 * for op and region time, the outermost op or region. */
static int stack_act(const struct hcur *h, uint32_t *label, uint32_t *within)
{
    int best = A_NONE;
    for (int i = 0; i < h->n; i++)
        if (h->f[i].act < best) best = h->f[i].act;
    *label = *within = 0;
    for (int i = 0; i < h->n; i++) {
        int a = h->f[i].act;
        if ((best == A_SYNC || best == A_LAUNCH) && a == A_OP && !*within) *within = h->f[i].name;
        int match = best == A_OP || best == A_REGION ? a == A_OP || a == A_REGION : a == best;
        if (match && !*label) *label = h->f[i].name;
    }
    return best;
}

/* Is a slice of activity act open at the cursor's time? */
static int hcur_in(const struct hcur *h, int act)
{
    for (int i = 0; i < h->n; i++)
        if (h->f[i].act == act) return 1;
    return 0;
}

/* Reports the thread's activity over [a, b) to fn, stretch by stretch;
 * a is not before the end of the previous sweep. */
static int hcur_sweep(struct hcur *h, struct names *nm, int64_t a, int64_t b, act_fn fn, void *arg)
{
    uint32_t label, within;
    int64_t t = a;
    if (hcur_seek(h, nm, a) != 0) return -1;
    while (t < b) {
        int64_t next = h->has && h->ts < b ? h->ts : b;
        while (h->n && h->f[h->n - 1].end <= next) {
            int64_t e = h->f[h->n - 1].end;
            if (e > t) {
                int act = stack_act(h, &label, &within);
                fn(arg, act, label, within, e - t);
                t = e;
            }
            h->n--;
        }
        if (next > t) {
            int act = stack_act(h, &label, &within);
            fn(arg, act, label, within, next - t);
            t = next;
        }
        if (t >= b) break;
        hcur_push(h);
        if (hcur_fetch(h, nm) != 0) return -1;
    }
    return 0;
}

struct hcurs {
    sqlite3 *db;
    struct hcur *v;
    size_t n;
};

/* The cursor of a thread, opened at its first slice on first use; NULL on
 * a database error. Borrowed from H. */
static struct hcur *hcurs_get(struct hcurs *H, struct names *nm, int64_t track)
{
    sqlite3_stmt *q;
    for (size_t i = 0; i < H->n; i++)
        if (H->v[i].track == track) return &H->v[i];
    int64_t first = 0, last = -1;
    if (sqlite3_prepare_v2(H->db, "SELECT first_slice, last_slice FROM track WHERE id = ? AND nslices > 0", -1, &q,
                           NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_int64(q, 1, track);
    if (sqlite3_step(q) == SQLITE_ROW) {
        first = sqlite3_column_int64(q, 0);
        last = sqlite3_column_int64(q, 1);
    }
    sqlite3_finalize(q);
    H->v = xrealloc(H->v, (H->n + 1) * sizeof *H->v);
    struct hcur *h = &H->v[H->n];
    memset(h, 0, sizeof *h);
    h->track = track;
    if (sqlite3_prepare_v2(H->db, "SELECT ts, dur, kind, name FROM slice WHERE id BETWEEN ? AND ? ORDER BY id", -1,
                           &h->st, NULL) != SQLITE_OK)
        return NULL;
    H->n++;
    sqlite3_bind_int64(h->st, 1, first);
    sqlite3_bind_int64(h->st, 2, last);
    return hcur_fetch(h, nm) == 0 ? h : NULL;
}

static void hcurs_free(struct hcurs *H)
{
    for (size_t i = 0; i < H->n; i++) {
        sqlite3_finalize(H->v[i].st);
        free(H->v[i].f);
    }
    free(H->v);
}

/* ====================================================================== */
/* GPU streams of one device, merged in time order                        */
/* ====================================================================== */

struct lane {
    sqlite3_stmt *st;
    int has;
    int64_t ts, end, corr;
};

struct lanes {
    struct lane *l;
    size_t n;
    int64_t w1; /* rows from here on are not read */
};

static int lane_fetch(struct lane *l, int64_t w1)
{
    int rc = sqlite3_step(l->st);
    l->has = 0;
    if (rc == SQLITE_ROW) {
        l->ts = sqlite3_column_int64(l->st, 0);
        l->end = l->ts + sqlite3_column_int64(l->st, 1);
        l->corr = sqlite3_column_int64(l->st, 2);
        l->has = l->ts < w1;
        return 0;
    }
    return rc == SQLITE_DONE ? 0 : -1;
}

/* First slice id in [lo, hi] starting at or after ts (hi + 1: none); ids
 * follow (track, ts), so this is a binary search over rowids. */
static int64_t first_at(sqlite3_stmt *get_ts, int64_t lo, int64_t hi, int64_t ts)
{
    hi++;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, t = INT64_MAX;
        sqlite3_bind_int64(get_ts, 1, mid);
        if (sqlite3_step(get_ts) == SQLITE_ROW) t = sqlite3_column_int64(get_ts, 0);
        sqlite3_reset(get_ts);
        if (t < ts) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Opens the kernel/memcpy/memset rows of the GPU streams of (rank, device)
 * from time w0 on. Returns 0 or -1 (database error). */
static int lanes_open(sqlite3 *db, int rank, int device, int64_t w0, int64_t w1, struct lanes *L)
{
    sqlite3_stmt *tr = NULL, *get_ts = NULL;
    int rc = 0;
    memset(L, 0, sizeof *L);
    L->w1 = w1;
    if (sqlite3_prepare_v2(db,
                           "SELECT first_slice, last_slice FROM track WHERE rank = ? AND kind = 1 AND nslices > 0"
                           " AND (device IS NULL OR device = ?) ORDER BY id",
                           -1, &tr, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT ts FROM slice WHERE id = ?", -1, &get_ts, NULL) != SQLITE_OK) {
        rc = -1;
        goto out;
    }
    sqlite3_bind_int(tr, 1, rank);
    sqlite3_bind_int(tr, 2, device);
    while (sqlite3_step(tr) == SQLITE_ROW) {
        int64_t first = sqlite3_column_int64(tr, 0), last = sqlite3_column_int64(tr, 1);
        /* one op before w0 may still run at w0 */
        int64_t lo = first_at(get_ts, first, last, w0);
        if (lo > first) lo--;
        L->l = xrealloc(L->l, (L->n + 1) * sizeof *L->l);
        struct lane *l = &L->l[L->n];
        memset(l, 0, sizeof *l);
        if (sqlite3_prepare_v2(db, "SELECT ts, dur, corr FROM slice WHERE id BETWEEN ? AND ? AND kind IN (6, 7, 8)"
                                   " ORDER BY id",
                               -1, &l->st, NULL) != SQLITE_OK) {
            rc = -1;
            goto out;
        }
        L->n++;
        sqlite3_bind_int64(l->st, 1, lo);
        sqlite3_bind_int64(l->st, 2, last);
        if (lane_fetch(l, w1) != 0) {
            rc = -1;
            goto out;
        }
    }
out:
    sqlite3_finalize(tr);
    sqlite3_finalize(get_ts);
    return rc;
}

/* The next GPU op of the device in start order: 1, 0 when none is left,
 * -1 on a database error. */
static int lanes_next(struct lanes *L, int64_t *ts, int64_t *end, int64_t *corr)
{
    struct lane *m = NULL;
    for (size_t i = 0; i < L->n; i++)
        if (L->l[i].has && (!m || L->l[i].ts < m->ts)) m = &L->l[i];
    if (!m) return 0;
    *ts = m->ts;
    *end = m->end;
    *corr = m->corr;
    return lane_fetch(m, L->w1) == 0 ? 1 : -1;
}

static void lanes_close(struct lanes *L)
{
    for (size_t i = 0; i < L->n; i++) sqlite3_finalize(L->l[i].st);
    free(L->l);
}

/* ====================================================================== */
/* The scan of one rank                                                   */
/* ====================================================================== */

struct gap {
    int64_t a, b, len; /* the stretch, its time inside the steps */
    size_t step;       /* the step holding most of it */
    int act;           /* what the host did most of the time */
    uint32_t label;    /* the slice naming it (0: none) */
    uint32_t within;   /* the op around that call (0: none) */
    int after_sync;    /* it opened while the host was blocked in a sync */
};

struct scan {
    double total;      /* gap time inside the steps, ns */
    int64_t n, after_sync;
    double act[A_N];   /* host activity during the gaps, ns */
    struct gap top[TOP_GAPS];
    size_t ntop;
    /* the gap being swept */
    double scale, g_act[A_N];
    struct {
        int act;
        uint32_t label, within;
        double ns;
    } g_lab[GAP_LABELS];
    size_t g_nlab;
};

static void on_act(void *arg, int act, uint32_t label, uint32_t within, int64_t ns)
{
    struct scan *s = arg;
    double v = (double)ns * s->scale;
    s->g_act[act] += v;
    for (size_t i = 0; i < s->g_nlab; i++)
        if (s->g_lab[i].act == act && s->g_lab[i].label == label && s->g_lab[i].within == within) {
            s->g_lab[i].ns += v;
            return;
        }
    if (s->g_nlab < GAP_LABELS) {
        s->g_lab[s->g_nlab].act = act;
        s->g_lab[s->g_nlab].label = label;
        s->g_lab[s->g_nlab].within = within;
        s->g_lab[s->g_nlab++].ns = v;
    }
}

/* Length of [a, b) inside the steps; *si walks the steps forward as a
 * grows. OUT *where: the step holding most of it (a gap often runs from
 * a step's last kernel into the next step's input). */
static int64_t in_steps(const struct rules_rank *r, size_t *si, int64_t a, int64_t b, size_t *where)
{
    int64_t len = 0, most = 0;
    while (*si < r->nsteps && r->steps[*si].ts + r->steps[*si].dur <= a) (*si)++;
    *where = *si;
    for (size_t i = *si; i < r->nsteps && r->steps[i].ts < b; i++) {
        int64_t lo = a > r->steps[i].ts ? a : r->steps[i].ts;
        int64_t hi = b < r->steps[i].ts + r->steps[i].dur ? b : r->steps[i].ts + r->steps[i].dur;
        if (hi > lo) {
            if (hi - lo > most) {
                most = hi - lo;
                *where = i;
            }
            len += hi - lo;
        }
    }
    return len;
}

struct scanner {
    sqlite3 *db;
    const struct rules_rank *r;
    int64_t gap_ns;
    sqlite3_stmt *launch; /* the launching thread of a GPU op, by correlation */
    struct names *nm;
    struct hcurs H;
    size_t si;
};

/* The thread that launched GPU op corr: its track, or -1 when unknown. */
static int64_t launch_thread(struct scanner *S, int64_t corr)
{
    int64_t track = -1;
    if (corr <= 0) return -1;
    sqlite3_bind_int64(S->launch, 1, corr);
    sqlite3_bind_int(S->launch, 2, S->r->rank);
    if (sqlite3_step(S->launch) == SQLITE_ROW) track = sqlite3_column_int64(S->launch, 0);
    sqlite3_reset(S->launch);
    return track;
}

/* Keeps g among the largest gaps (sorted, largest first). */
static void keep_top(struct scan *s, const struct gap *g)
{
    size_t i = s->ntop < TOP_GAPS ? s->ntop++ : TOP_GAPS;
    if (i == TOP_GAPS) {
        if (g->len <= s->top[TOP_GAPS - 1].len) return;
        i = TOP_GAPS - 1;
    }
    while (i > 0 && s->top[i - 1].len < g->len) {
        s->top[i] = s->top[i - 1];
        i--;
    }
    s->top[i] = *g;
}

/* One idle stretch [a, b); next_corr: the op ending it (-1: the end of
 * the window), prev_corr: the op before it (-1: none). */
static int on_gap(struct scanner *S, struct scan *s, int64_t a, int64_t b, int64_t next_corr, int64_t prev_corr)
{
    struct gap g = { a, b, 0, 0, A_UNKNOWN, 0, 0, 0 };
    g.len = in_steps(S->r, &S->si, a, b, &g.step);
    if (g.len < S->gap_ns) return 0;
    int64_t track = launch_thread(S, next_corr);
    if (track < 0) track = launch_thread(S, prev_corr);
    memset(s->g_act, 0, sizeof s->g_act);
    s->g_nlab = 0;
    s->scale = (double)g.len / (double)(b - a);
    if (track < 0) {
        s->g_act[A_UNKNOWN] = (double)g.len;
    } else {
        struct hcur *h = hcurs_get(&S->H, S->nm, track);
        if (!h || hcur_seek(h, S->nm, a) != 0) return -1;
        g.after_sync = hcur_in(h, A_SYNC);
        if (hcur_sweep(h, S->nm, a, b, on_act, s) != 0) return -1;
    }
    for (int k = 0; k < A_N; k++) {
        s->act[k] += s->g_act[k];
        if (s->g_act[k] > s->g_act[g.act]) g.act = k;
    }
    double best = 0;
    for (size_t i = 0; i < s->g_nlab; i++)
        if (s->g_lab[i].act == g.act && s->g_lab[i].ns > best) {
            best = s->g_lab[i].ns;
            g.label = s->g_lab[i].label;
            g.within = s->g_lab[i].within;
        }
    s->total += (double)g.len;
    s->n++;
    s->after_sync += g.after_sync;
    keep_top(s, &g);
    return 0;
}

static int scan_rank(sqlite3 *db, const struct rules_rank *r, int64_t gap_ns, struct names *nm, struct scan *s)
{
    struct scanner S = { db, r, gap_ns, NULL, nm, { db, NULL, 0 }, 0 };
    struct lanes L;
    int64_t w0 = r->steps[0].ts, w1 = r->steps[r->nsteps - 1].ts + r->steps[r->nsteps - 1].dur;
    int64_t front = w0, ts, end, corr, prev = -1;
    int rc;
    if (lanes_open(db, r->rank, r->gpu->device, w0, w1, &L) != 0 ||
        sqlite3_prepare_v2(db,
                           "SELECT s.track FROM slice s JOIN track t ON t.id = s.track"
                           " WHERE s.corr = ? AND s.corr != 0 AND s.kind IN (4, 5) AND t.rank = ?"
                           " ORDER BY s.ts, s.dur DESC LIMIT 1",
                           -1, &S.launch, NULL) != SQLITE_OK) {
        rc = -1;
        goto out;
    }
    while ((rc = lanes_next(&L, &ts, &end, &corr)) > 0) {
        if (ts > front && (rc = on_gap(&S, s, front, ts, corr, prev)) != 0) goto out;
        if (end > front) {
            front = end;
            prev = corr;
        }
    }
    if (rc == 0 && front < w1) rc = on_gap(&S, s, front, w1, -1, prev);
out:
    lanes_close(&L);
    hcurs_free(&S.H);
    sqlite3_finalize(S.launch);
    return rc;
}

/* ====================================================================== */
/* The rule                                                               */
/* ====================================================================== */

/* Per activity: a stable key (evidence.main_host, read by
 * low_gpu_utilization), its name in the summary, what the host was doing
 * in a gap ("the host was ..."), and the advice and snippet for PyTorch. */
static const struct {
    const char *key, *name, *doing, *advice, *snippet;
} acts[A_N] = {
    [A_DATALOADER] = { "dataloader", "the DataLoader", "waiting in the DataLoader",
                       "The GPU waits for the next batch: the host is inside the DataLoader during the gaps. Load "
                       "batches in background workers (num_workers, pin_memory=True, persistent_workers, "
                       "prefetch_factor) so one is ready when the step starts; see dataloader_bound.",
                       "loader = torch.utils.data.DataLoader(dataset, batch_size=bs, num_workers=8,\n"
                       "    pin_memory=True, persistent_workers=True, prefetch_factor=4)" },
    [A_COMM] = { "collective", "collectives", "waiting in a collective",
                 "The host waits inside a collective while the GPU has nothing queued: another rank arrives late "
                 "(see straggler) or the collective runs on the host (gloo). Even out the ranks' work and input, "
                 "and use the nccl backend for GPU tensors so collectives run on the GPU, overlapped with compute.",
                 NULL },
    [A_SYNC] = { "sync", "host syncs", "blocked in a host sync",
                 "The host blocks until the GPU is done (.item(), .cpu(), print(tensor), torch.cuda.synchronize()), "
                 "so the GPU's queue runs dry and it idles until the host has launched the next work. Keep values "
                 "on the GPU and read them every N steps; copy with non_blocking=True.",
                 "running_loss += loss.detach()  # stays on the GPU, no sync\n"
                 "if step % log_every == 0:\n"
                 "    print(running_loss.item() / log_every); running_loss.zero_()" },
    [A_LAUNCH] = { "runtime", "CUDA runtime calls", "in CUDA runtime calls",
                   "The host spends the gaps in CUDA runtime calls while nothing is queued on the GPU. One-time "
                   "setup (the first launch of a kernel loading its module, stream and event creation, cuDNN "
                   "autotuning) belongs before the measured steps: profile with a schedule that skips warm-up "
                   "steps. Repeated allocations and frees (cudaMalloc/cudaFree) mean the caching allocator is "
                   "being emptied: avoid torch.cuda.empty_cache() in the loop and keep tensor shapes stable.",
                   NULL },
    [A_OP] = { "op", "host operators", "in host operators",
               "A host operator runs for a long time while nothing is queued on the GPU (often work on CPU tensors "
               "inside the step): move it to the GPU, do it in the DataLoader workers, or issue the GPU work "
               "before it so the GPU's queue stays full.",
               NULL },
    [A_REGION] = { "region", "framework regions", "inside a framework region",
                   "The host spends the gaps inside a record_function region with little GPU work queued. For "
                   "Optimizer.step use a fused or foreach optimizer (fused=True); for other code move it off the "
                   "critical path or run it every N steps.",
                   "opt = torch.optim.AdamW(model.parameters(), lr=lr, fused=True)" },
    [A_NONE] = { "python", "Python between ops (nothing the profiler saw)",
                 "running code the profiler did not record (Python/NumPy between ops)",
                 "The host runs code the profiler does not record (Python or NumPy work between ops, logging, "
                 "checkpointing, time.sleep) while the GPU has nothing queued: move it off the critical path "
                 "(into DataLoader workers or a background thread), run it every N steps, or overlap it with "
                 "GPU work launched before it. Wrap it in torch.profiler.record_function, or profile with "
                 "with_stack=True, to see it in the trace.",
                 "with torch.profiler.record_function(\"host_work\"):  # names it in the trace\n"
                 "    stats = compute_stats(batch)  # move to a worker or run every N steps" },
    [A_UNKNOWN] = { "unknown", "an unknown thread", "doing something the trace does not tie to the GPU work",
                    "The trace does not say which host thread launched the GPU work (no correlation ids): open "
                    "the linked window and look at what the host threads do during the gap.",
                    NULL },
};

static const char advice_jax[] =
    "The device idles while the host does other work between dispatches: move host-side work (data "
    "preparation, logging, conversions to NumPy) off the step, prefetch input with a background pipeline, and "
    "avoid blocking on device values (jax.device_get, float(x), block_until_ready) inside the loop.";

/* What names gap g ("cudaStreamSynchronize in aten::item", "Optimizer.step#
 * AdamW.step") into buf; "" when nothing does. Returns buf. */
static const char *gap_label(struct names *nm, const struct gap *g, char *buf, size_t n)
{
    char in[96];
    names_text(nm, g->label, buf, n);
    if (buf[0] && g->within && strlen(buf) + 4 < n) {
        names_text(nm, g->within, in, sizeof in);
        if (in[0]) snprintf(buf + strlen(buf), n - strlen(buf), " in %s", in);
    }
    return buf;
}

/* Does ctx hold a finding of rule id about rank? */
static int has_finding(const struct rules_ctx *c, const char *id, int rank)
{
    size_t i;
    json_t *f;
    json_array_foreach(c->findings, i, f) {
        json_t *r = json_object_get(f, "rank");
        if (strcmp(json_string_value(json_object_get(f, "id")), id) == 0 && json_is_integer(r) &&
            json_integer_value(r) == rank)
            return 1;
    }
    return 0;
}

static void report(struct rules_ctx *c, const struct rules_rank *r, struct scan *s, double span, struct names *nm)
{
    const struct config_rules *cfg = c->cfg;
    double n = (double)r->nsteps, share = s->total / span * 100.0;
    int main_act = 0;
    for (int k = 1; k < A_N; k++)
        if (s->act[k] > s->act[main_act]) main_act = k;
    /* dataloader_bound already carries the DataLoader part of the gaps; in a
     * run of several ranks, waits inside collectives belong to the
     * communication rules (straggler, communication_heavy, ddp_backend),
     * which see every rank: a rank that idles only because it waits for
     * another gets no gap finding of its own. */
    int dl_claimed = has_finding(c, "dataloader_bound", r->rank);
    double comm_claimed = c->nranks > 1 ? s->act[A_COMM] : 0;
    if (comm_claimed > MOST * s->total) return;
    double saving = (s->total - (dl_claimed ? s->act[A_DATALOADER] : 0) - comm_claimed) / n;
    char a[32], b[32], d[32], line[640], name[224], link[200];

    json_t *ev = json_pack("{s:[],s:f,s:f,s:f,s:I,s:I,s:i,s:{},s:s}", "lines", "gap_us", s->total / n / 1000.0,
                           "step_us", span / n / 1000.0, "share_pct", share, "gaps", (json_int_t)s->n, "after_sync",
                           (json_int_t)s->after_sync, "steps", (int)r->nsteps, "host_pct", "main_host",
                           acts[main_act].key);
    json_t *lines = json_object_get(ev, "lines"), *host = json_object_get(ev, "host_pct"), *gaps = json_array();
    snprintf(line, sizeof line,
             "%lld gaps of at least %s with no GPU work: %s of a %s step (%.0f %%), average of %zu steps",
             (long long)s->n, rules_fmt_ns(cfg->gap_ms * 1e6, a, sizeof a), rules_fmt_ns(s->total / n, b, sizeof b),
             rules_fmt_ns(span / n, d, sizeof d), share, r->nsteps);
    json_array_append_new(lines, json_string(line));
    int len = snprintf(line, sizeof line, "The host during the gaps:");
    const char *sep = "";
    for (int k = 0; k < A_N; k++) {
        double p = s->act[k] / s->total * 100.0;
        if (p < 0.5) continue;
        json_object_set_new(host, acts[k].key, json_real(p));
        if (len < (int)sizeof line)
            len += snprintf(line + len, sizeof line - (size_t)len, "%s %s %.0f %%", sep, acts[k].name, p);
        sep = ",";
    }
    json_array_append_new(lines, json_string(line));
    for (size_t i = 0; i < s->ntop; i++) {
        const struct gap *g = &s->top[i];
        const struct rules_step *st = &r->steps[g->step];
        gap_label(nm, g, name, sizeof name);
        snprintf(line, sizeof line, "%s in %s at +%s: the host was %s%s%s%s%s",
                 rules_fmt_ns((double)g->len, a, sizeof a),
                 st->name, rules_fmt_ns((double)(g->a > st->ts ? g->a - st->ts : 0), b, sizeof b), acts[g->act].doing,
                 name[0] ? " (" : "", name, name[0] ? ")" : "",
                 g->after_sync ? ", after a host sync emptied the GPU's queue" : "");
        json_array_append_new(lines, json_string(line));
        json_array_append_new(gaps, json_pack("{s:f,s:f,s:s,s:s,s:s,s:b}", "start_us", (double)g->a / 1000.0, "dur_us",
                                              (double)g->len / 1000.0, "step", st->name, "host", acts[g->act].key,
                                              "label", name, "after_sync", g->after_sync));
    }
    json_object_set_new(ev, "top", gaps);
    if (s->after_sync * 2 > s->n) {
        snprintf(line, sizeof line,
                 "%lld of the %lld gaps opened while the host was blocked in a sync (see excessive_host_sync)",
                 (long long)s->after_sync, (long long)s->n);
        json_array_append_new(lines, json_string(line));
    }
    if (comm_claimed > 0) {
        snprintf(line, sizeof line,
                 "Waits inside collectives (%s per step) are left to the communication findings; the saving here "
                 "is the rest",
                 rules_fmt_ns(comm_claimed / n, a, sizeof a));
        json_array_append_new(lines, json_string(line));
    }
    if (dl_claimed && s->act[A_DATALOADER] > 0) {
        snprintf(line, sizeof line,
                 "dataloader_bound already counts the DataLoader part (%s per step); the saving here is the rest",
                 rules_fmt_ns(s->act[A_DATALOADER] / n, a, sizeof a));
        json_array_append_new(lines, json_string(line));
    }

    /* the timeline over the largest gap, with a margin showing the ops around it */
    const struct gap *w = &s->top[0];
    double m = (double)(w->b - w->a) * 0.1;
    snprintf(link, sizeof link, "view=timeline&rank=%d&start=%.3f&end=%.3f", r->rank, ((double)w->a - m) / 1000.0,
             ((double)w->b + m) / 1000.0);
    enum rules_severity sev = share >= 3 * cfg->gap_pct ? RULES_HIGH : RULES_MEDIUM;
    if (dl_claimed && s->act[A_DATALOADER] > MOST * s->total) sev = RULES_LOW;
    int jax = strcmp(r->framework, "jax") == 0;
    name[0] = '\0';
    for (size_t i = 0; i < s->ntop && !name[0]; i++)
        if (s->top[i].act == main_act && s->top[i].label) gap_label(nm, &s->top[i], name, sizeof name);
    rules_add(c, &rule_gpu_idle_gaps, sev, r->rank, saving, ev, link, jax ? advice_jax : acts[main_act].advice,
              jax ? NULL : acts[main_act].snippet,
              "GPU idle gaps: %lld gaps of %s or more idle the GPU %.0f %% of the step, the host %s%s%s%s",
              (long long)s->n, rules_fmt_ns(cfg->gap_ms * 1e6, a, sizeof a), share, acts[main_act].doing,
              name[0] ? " (" : "", name, name[0] ? ")" : "");
}

static int run(struct rules_ctx *c, struct err *e)
{
    const struct config_rules *cfg = c->cfg;
    struct names *nm = xcalloc(1, sizeof *nm);
    int rc = 0;
    if (sqlite3_prepare_v2(c->db, "SELECT s FROM str WHERE id = ?", -1, &nm->get, NULL) != SQLITE_OK) {
        rc = err_set(e, ERR_DB, "gpu_idle_gaps: %s", sqlite3_errmsg(c->db));
        goto out;
    }
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        if (!r->gpu || !r->nsteps) continue;
        struct scan *s = xcalloc(1, sizeof *s);
        double span = 0;
        for (size_t k = 0; k < r->nsteps; k++) span += (double)r->steps[k].dur;
        /* a gap shorter than 1 ns would take every stretch: keep the floor */
        int64_t gap_ns = cfg->gap_ms * 1e6 >= 1 ? (int64_t)(cfg->gap_ms * 1e6) : 1;
        if (scan_rank(c->db, r, gap_ns, nm, s) != 0) {
            rc = err_set(e, ERR_DB, "gpu_idle_gaps: rank %d: %s", r->rank, sqlite3_errmsg(c->db));
            free(s);
            goto out;
        }
        if (span > 0 && s->n && s->total / span * 100.0 > cfg->gap_pct) report(c, r, s, span, nm);
        free(s);
    }
out:
    sqlite3_finalize(nm->get);
    free(nm);
    return rc;
}

const struct rules_def rule_gpu_idle_gaps = {
    "gpu_idle_gaps",
    "https://pytorch.org/docs/stable/notes/cuda.html#asynchronous-execution",
    run,
};

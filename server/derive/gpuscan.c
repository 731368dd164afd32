/* gpuscan.c — host threads and GPU streams read forward in time over the
 * clustered slice table; see include/derive/gpuscan.h. */
#include "derive/gpuscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "store/model.h"
#include "store/scan.h"


/* ====================================================================== */
/* Host activity of a slice                                               */
/* ====================================================================== */

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

int gpuscan_act_of(const char *s, int kind)
{
    if (kind != TB_K_CPU_OP && kind != TB_K_USER_ANNOTATION && kind != TB_K_RUNTIME && kind != TB_K_DRIVER)
        return -1;
    if (kind == TB_K_RUNTIME || kind == TB_K_DRIVER) return blocking_call(s) ? GPUSCAN_SYNC : GPUSCAN_LAUNCH;
    if (kclass_profiler_step(s)) return -1;
    if (kclass_dataloader(s)) return GPUSCAN_DATALOADER;
    if (kclass_comm_op(s)) return GPUSCAN_COMM;
    return kind == TB_K_CPU_OP ? GPUSCAN_OP : GPUSCAN_REGION;
}

/* ====================================================================== */
/* Names                                                                  */
/* ====================================================================== */

/* A direct-mapped cache: a miss costs one lookup in str. */
#define NCACHE 4096
struct gpuscan_names {
    struct scan_names *get; /* the store's lookup by str id */
    int failed;        /* a lookup failed: err says why (gpuscan_names_error) */
    struct err err;
    uint32_t id[NCACHE];
    int8_t kind[NCACHE], act[NCACHE];
};

int gpuscan_names_open(sqlite3 *db, struct gpuscan_names **out, struct err *e)
{
    struct gpuscan_names *nm = xcalloc(1, sizeof *nm);
    *out = NULL;
    int rc = scan_names_open(db, &nm->get, e);
    if (rc) {
        free(nm);
        return rc;
    }
    *out = nm;
    return 0;
}

/* One lookup: the text, NULL without. A database error is kept (the first
 * one) for gpuscan_names_error: the callers name things in the middle of a
 * sweep and check once at its end. */
static const char *name_of(struct gpuscan_names *nm, uint32_t id)
{
    const char *s;
    struct err e;
    int rc = scan_name(nm->get, id, &s, &e);
    if (rc < 0 && !nm->failed) {
        nm->failed = 1;
        nm->err = e;
    }
    return rc == 1 ? s : NULL;
}

int gpuscan_names_act(struct gpuscan_names *nm, uint32_t id, int kind)
{
    /* gpuscan_act_of's answer for these kinds whatever the name: no lookup
     * (the critical path asks for every Python frame) and no cache entry */
    if (kind < 0 || kind >= TB_K_COUNT || !(SCAN_KIND(kind) & SCAN_HOST_ACTS)) return -1;
    size_t k = ((size_t)id * 2654435761u + (size_t)kind) % NCACHE;
    if (nm->id[k] == id && nm->kind[k] == kind && id) return nm->act[k];
    const char *s = name_of(nm, id);
    int a = gpuscan_act_of(s ? s : "", kind);
    if (nm->failed) return a; /* not cached: the answer stands on no name */
    nm->id[k] = id;
    nm->kind[k] = (int8_t)kind;
    nm->act[k] = (int8_t)a;
    return a;
}

const char *gpuscan_names_text(struct gpuscan_names *nm, uint32_t id, char *buf, size_t n)
{
    const char *s = name_of(nm, id);
    snprintf(buf, n, "%s", s ? s : "");
    return buf;
}

int gpuscan_names_error(const struct gpuscan_names *nm, struct err *e)
{
    if (!nm->failed) return 0;
    *e = nm->err;
    return e->code;
}

void gpuscan_names_close(struct gpuscan_names *nm)
{
    if (!nm) return;
    scan_names_close(nm->get);
    free(nm);
}

/* ====================================================================== */
/* Host threads                                                           */
/* ====================================================================== */

struct gpuscan_host {
    int64_t track;
    struct scan_range *st;     /* the thread's slices in (ts, -dur) order, or ... */
    const char *mem;           /* ... these scan_briefs, held by the caller (st NULL) */
    size_t nmem, at, stride;
    struct gpuscan_names *nm;  /* borrowed from the set */
    int has;                   /* a fetched row waits to be pushed */
    int64_t ts, end;           /* ... its span */
    uint32_t name;
    int act;
    struct gpuscan_frame *f;   /* slices open at the cursor's time, outermost first */
    int n, cap;
};

struct gpuscan_hosts {
    sqlite3 *db;
    struct gpuscan_names *nm;
    struct gpuscan_host **v; /* each allocated once: pointers stay valid */
    size_t n;
    struct held {
        int64_t track;
        const struct scan_brief *rows;
        size_t n, stride;
    } *held;                 /* gpuscan_hosts_hold's */
    size_t nheld;
};

/* The next row of h's thread from where it comes: 1, 0 at the end, < 0. */
static int host_row(struct gpuscan_host *h, struct scan_slice *row, struct err *e)
{
    if (h->st) return scan_range_next(h->st, row, e);
    const struct scan_brief *b;
    do { /* the kinds the statement would have read */
        if (h->at == h->nmem) return 0;
        b = (const struct scan_brief *)(const void *)(h->mem + h->at++ * h->stride);
    } while (!(SCAN_KIND(b->kind) & SCAN_HOST_ACTS));
    row->ts = b->ts;
    row->dur = b->dur;
    row->name = b->name;
    row->kind = (enum tb_kind)b->kind;
    return 1;
}

/* Fetches the next slice that says something about host activity. */
static int host_fetch(struct gpuscan_host *h, struct err *e)
{
    struct scan_slice row;
    int rc;
    h->has = 0;
    while ((rc = host_row(h, &row, e)) == 1) {
        int a = gpuscan_names_act(h->nm, row.name, (int)row.kind);
        if (gpuscan_names_error(h->nm, e) < 0) return e->code;
        if (a < 0) continue;
        h->ts = row.ts;
        h->end = row.ts + row.dur;
        h->name = row.name;
        h->act = a;
        h->has = 1;
        return 0;
    }
    return rc;
}

/* Pushes the fetched slice on the stack. */
static void host_push(struct gpuscan_host *h)
{
    if (h->n == h->cap) h->f = xrealloc(h->f, (size_t)(h->cap = h->cap ? h->cap * 2 : 32) * sizeof *h->f);
    int64_t end = h->end;
    /* a slice overlapping its parent's end (clock rounding) is cut there,
     * so the stack stays ordered by end */
    if (h->n && end > h->f[h->n - 1].end) end = h->f[h->n - 1].end;
    h->f[h->n++] = (struct gpuscan_frame){ end, h->name, (int8_t)h->act };
}

struct gpuscan_hosts *gpuscan_hosts_open(sqlite3 *db, struct gpuscan_names *nm)
{
    struct gpuscan_hosts *H = xcalloc(1, sizeof *H);
    H->db = db;
    H->nm = nm;
    return H;
}

int gpuscan_hosts_get(struct gpuscan_hosts *H, int64_t track, struct gpuscan_host **out, struct err *e)
{
    *out = NULL;
    for (size_t i = 0; i < H->n; i++)
        if (H->v[i]->track == track) {
            *out = H->v[i];
            return 0;
        }
    struct gpuscan_host *h = xcalloc(1, sizeof *h);
    h->track = track;
    h->nm = H->nm;
    int rc = 0, held = 0;
    for (size_t i = 0; i < H->nheld && !held; i++)
        if (H->held[i].track == track) {
            h->mem = (const char *)H->held[i].rows;
            h->nmem = H->held[i].n;
            h->stride = H->held[i].stride;
            held = 1;
        }
    if (!held) {
        int64_t first = 0, last = -1;
        /* the kinds gpuscan_act_of may class (the names say which of them
         * tell the host's activity): Python frames, the bulk of a
         * with_stack trace, never come out of SQLite */
        if ((rc = scan_track_range(H->db, track, &first, &last, e)) < 0 ||
            (rc = scan_range_open(H->db, SCAN_HOST_ACTS, &h->st, e))) {
            free(h);
            return rc;
        }
        scan_range_set(h->st, first, last);
    }
    H->v = xrealloc(H->v, (H->n + 1) * sizeof *H->v);
    H->v[H->n++] = h;
    rc = host_fetch(h, e);
    if (rc == 0) *out = h;
    return rc;
}

void gpuscan_hosts_hold(struct gpuscan_hosts *H, int64_t track, const struct scan_brief *rows, size_t n,
                        size_t stride)
{
    H->held = xrealloc(H->held, (H->nheld + 1) * sizeof *H->held);
    H->held[H->nheld++] = (struct held){ track, rows, n, stride };
}

void gpuscan_hosts_close(struct gpuscan_hosts *H)
{
    if (!H) return;
    free(H->held);
    for (size_t i = 0; i < H->n; i++) {
        scan_range_close(H->v[i]->st);
        free(H->v[i]->f);
        free(H->v[i]);
    }
    free(H->v);
    free(H);
}

int gpuscan_host_seek(struct gpuscan_host *h, int64_t t, struct err *e)
{
    while (h->has && h->ts < t) {
        while (h->n && h->f[h->n - 1].end <= h->ts) h->n--;
        host_push(h);
        int rc = host_fetch(h, e);
        if (rc != 0) return rc;
    }
    while (h->n && h->f[h->n - 1].end <= t) h->n--;
    return 0;
}

const struct gpuscan_frame *gpuscan_host_stack(const struct gpuscan_host *h, int *n)
{
    *n = h->n;
    return h->f;
}

int gpuscan_host_in(const struct gpuscan_host *h, int act)
{
    for (int i = 0; i < h->n; i++)
        if (h->f[i].act == act) return 1;
    return 0;
}

int gpuscan_stack_act(const struct gpuscan_frame *stack, int n)
{
    int best = GPUSCAN_NONE;
    for (int i = 0; i < n; i++)
        if (stack[i].act < best) best = stack[i].act;
    return best;
}

int gpuscan_host_sweep(struct gpuscan_host *h, int64_t a, int64_t b, gpuscan_sweep_fn fn, void *arg,
                       struct err *e)
{
    int64_t t = a;
    int rc = gpuscan_host_seek(h, a, e);
    if (rc != 0) return rc;
    while (t < b) {
        int64_t next = h->has && h->ts < b ? h->ts : b;
        /* the slices ending before the next one starts close stretches */
        while (h->n && h->f[h->n - 1].end <= next) {
            int64_t end = h->f[h->n - 1].end;
            if (end > t) {
                fn(arg, gpuscan_stack_act(h->f, h->n), h->f, h->n, end - t);
                t = end;
            }
            h->n--;
        }
        if (next > t) {
            fn(arg, gpuscan_stack_act(h->f, h->n), h->f, h->n, next - t);
            t = next;
        }
        if (t >= b) break;
        host_push(h);
        if ((rc = host_fetch(h, e)) != 0) return rc;
    }
    return 0;
}

/* ====================================================================== */
/* GPU streams of one device                                              */
/* ====================================================================== */

struct lane {
    struct scan_range *st;
    int has; /* a fetched op starting before w1 waits */
    struct gpuscan_op op;
};

struct gpuscan_lanes {
    struct lane *l;
    size_t n;
    int64_t w1; /* rows from here on are not read */
};

static int lane_fetch(struct lane *l, int64_t w1, struct err *e)
{
    struct scan_slice row;
    int rc = scan_range_next(l->st, &row, e);
    l->has = 0;
    if (rc == 1) {
        l->op.ts = row.ts;
        l->op.end = row.ts + row.dur;
        l->op.corr = row.corr;
        l->has = l->op.ts < w1;
    }
    return rc < 0 ? rc : 0;
}

/* *at = the first slice id in [lo, hi] starting at or after ts (hi + 1:
 * none); ids follow (track, ts), so this is a binary search over rowids. */
static int first_at(struct scan_range *get_ts, int64_t lo, int64_t hi, int64_t ts, int64_t *at, struct err *e)
{
    struct scan_slice row;
    hi++;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, t = INT64_MAX;
        scan_range_set(get_ts, mid, mid);
        int rc = scan_range_next(get_ts, &row, e);
        if (rc == 1) t = row.ts;
        if (rc < 0) return rc;
        if (t < ts) lo = mid + 1;
        else hi = mid;
    }
    *at = lo;
    return 0;
}

int gpuscan_lanes_open(sqlite3 *db, int rank, int device, int64_t w0, int64_t w1, struct gpuscan_lanes **out,
                       struct err *e)
{
    struct scan_range *get_ts = NULL;
    struct scan_ids *tr = NULL;
    struct gpuscan_lanes *L = xcalloc(1, sizeof *L);
    size_t ntr = 0;
    int rc = 0;
    *out = NULL;
    L->w1 = w1;
    if ((rc = scan_device_streams(db, rank, device, &tr, &ntr, e)) ||
        (rc = scan_range_open(db, SCAN_KINDS_ALL, &get_ts, e)))
        goto out;
    for (size_t i = 0; i < ntr; i++) {
        int64_t first = tr[i].first, last = tr[i].last;
        /* one op before w0 may still run at w0 */
        int64_t lo;
        if ((rc = first_at(get_ts, first, last, w0, &lo, e)) < 0) goto out;
        if (lo > first) lo--;
        L->l = xrealloc(L->l, (L->n + 1) * sizeof *L->l);
        struct lane *l = &L->l[L->n];
        memset(l, 0, sizeof *l);
        if ((rc = scan_range_open(db, SCAN_GPU_OPS, &l->st, e))) goto out;
        L->n++;
        scan_range_set(l->st, lo, last);
        if ((rc = lane_fetch(l, w1, e)) != 0) goto out;
    }
out:
    free(tr);
    scan_range_close(get_ts);
    if (rc != 0) gpuscan_lanes_close(L);
    else *out = L;
    return rc;
}

int gpuscan_lanes_next(struct gpuscan_lanes *L, struct gpuscan_op *op, struct err *e)
{
    struct lane *m = NULL;
    for (size_t i = 0; i < L->n; i++)
        if (L->l[i].has && (!m || L->l[i].op.ts < m->op.ts)) m = &L->l[i];
    if (!m) return 0;
    *op = m->op;
    int rc = lane_fetch(m, L->w1, e);
    return rc == 0 ? 1 : rc;
}

void gpuscan_lanes_close(struct gpuscan_lanes *L)
{
    if (!L) return;
    for (size_t i = 0; i < L->n; i++) scan_range_close(L->l[i].st);
    free(L->l);
    free(L);
}

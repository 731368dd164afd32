/* gpuscan.c — host threads and GPU streams read forward in time over the
 * clustered slice table; see include/derive/gpuscan.h. */
#include "derive/gpuscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/kclass.h"
#include "store/model.h"
#include "store/rundb.h"
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
    sqlite3_stmt *get; /* SELECT s FROM str WHERE id = ? */
    int failed;        /* a lookup failed: err says why (gpuscan_names_error) */
    struct err err;
    uint32_t id[NCACHE];
    int8_t kind[NCACHE], act[NCACHE];
};

int gpuscan_names_open(sqlite3 *db, struct gpuscan_names **out, struct err *e)
{
    struct gpuscan_names *nm = xcalloc(1, sizeof *nm);
    *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT s FROM str WHERE id = ?", -1, &nm->get, NULL) != SQLITE_OK) {
        free(nm);
        return rundb_db_error(db, e, "gpuscan (names)");
    }
    *out = nm;
    return 0;
}

/* One lookup: 1 with the row, 0 without. A database error is kept (the
 * first one) for gpuscan_names_error: the callers name things in the
 * middle of a sweep and check once at its end. */
static int name_step(struct gpuscan_names *nm)
{
    int rc = sqlite3_step(nm->get);
    if (rc == SQLITE_ROW) return 1;
    if (rc != SQLITE_DONE && !nm->failed) {
        nm->failed = 1;
        rundb_db_error(sqlite3_db_handle(nm->get), &nm->err, "gpuscan (names)");
    }
    return 0;
}

int gpuscan_names_act(struct gpuscan_names *nm, uint32_t id, int kind)
{
    size_t k = ((size_t)id * 2654435761u + (size_t)kind) % NCACHE;
    if (nm->id[k] == id && nm->kind[k] == kind && id) return nm->act[k];
    sqlite3_bind_int64(nm->get, 1, id);
    const char *s = name_step(nm) ? (const char *)sqlite3_column_text(nm->get, 0) : NULL;
    int a = gpuscan_act_of(s ? s : "", kind);
    sqlite3_reset(nm->get);
    if (nm->failed) return a; /* not cached: the answer stands on no name */
    nm->id[k] = id;
    nm->kind[k] = (int8_t)kind;
    nm->act[k] = (int8_t)a;
    return a;
}

const char *gpuscan_names_text(struct gpuscan_names *nm, uint32_t id, char *buf, size_t n)
{
    buf[0] = '\0';
    sqlite3_bind_int64(nm->get, 1, id);
    if (name_step(nm) && sqlite3_column_text(nm->get, 0))
        snprintf(buf, n, "%s", (const char *)sqlite3_column_text(nm->get, 0));
    sqlite3_reset(nm->get);
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
    sqlite3_finalize(nm->get);
    free(nm);
}

/* ====================================================================== */
/* Host threads                                                           */
/* ====================================================================== */

struct gpuscan_host {
    int64_t track;
    sqlite3_stmt *st;          /* the thread's slices in (ts, -dur) order */
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
};

/* Fetches the next slice that says something about host activity. */
static int host_fetch(struct gpuscan_host *h, struct err *e)
{
    int rc;
    h->has = 0;
    while ((rc = sqlite3_step(h->st)) == SQLITE_ROW) {
        int a = gpuscan_names_act(h->nm, (uint32_t)sqlite3_column_int64(h->st, 3), sqlite3_column_int(h->st, 2));
        if (gpuscan_names_error(h->nm, e) < 0) return e->code;
        if (a < 0) continue;
        h->ts = sqlite3_column_int64(h->st, 0);
        h->end = h->ts + sqlite3_column_int64(h->st, 1);
        h->name = (uint32_t)sqlite3_column_int64(h->st, 3);
        h->act = a;
        h->has = 1;
        return 0;
    }
    return rc == SQLITE_DONE ? 0 : rundb_db_error(sqlite3_db_handle(h->st), e, "gpuscan (host slices)");
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
    sqlite3_stmt *q;
    *out = NULL;
    for (size_t i = 0; i < H->n; i++)
        if (H->v[i]->track == track) {
            *out = H->v[i];
            return 0;
        }
    int64_t first = 0, last = -1;
    if (sqlite3_prepare_v2(H->db, "SELECT first_slice, last_slice FROM track WHERE id = ? AND nslices > 0", -1, &q,
                           NULL) != SQLITE_OK)
        return rundb_db_error(H->db, e, "gpuscan (host track)");
    sqlite3_bind_int64(q, 1, track);
    int found = scan_step(q, e, "gpuscan (host track)");
    if (found == 1) {
        first = sqlite3_column_int64(q, 0);
        last = sqlite3_column_int64(q, 1);
    }
    sqlite3_finalize(q);
    if (found < 0) return found;
    struct gpuscan_host *h = xcalloc(1, sizeof *h);
    h->track = track;
    h->nm = H->nm;
    if (sqlite3_prepare_v2(H->db, "SELECT ts, dur, kind, name FROM slice WHERE id BETWEEN ? AND ? ORDER BY id", -1,
                           &h->st, NULL) != SQLITE_OK) {
        free(h);
        return rundb_db_error(H->db, e, "gpuscan (host slices)");
    }
    H->v = xrealloc(H->v, (H->n + 1) * sizeof *H->v);
    H->v[H->n++] = h;
    sqlite3_bind_int64(h->st, 1, first);
    sqlite3_bind_int64(h->st, 2, last);
    int rc = host_fetch(h, e);
    if (rc == 0) *out = h;
    return rc;
}

void gpuscan_hosts_close(struct gpuscan_hosts *H)
{
    if (!H) return;
    for (size_t i = 0; i < H->n; i++) {
        sqlite3_finalize(H->v[i]->st);
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
    sqlite3_stmt *st;
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
    int rc = sqlite3_step(l->st);
    l->has = 0;
    if (rc == SQLITE_ROW) {
        l->op.ts = sqlite3_column_int64(l->st, 0);
        l->op.end = l->op.ts + sqlite3_column_int64(l->st, 1);
        l->op.corr = sqlite3_column_int64(l->st, 2);
        l->has = l->op.ts < w1;
        return 0;
    }
    return rc == SQLITE_DONE ? 0 : rundb_db_error(sqlite3_db_handle(l->st), e, "gpuscan (GPU ops)");
}

/* *at = the first slice id in [lo, hi] starting at or after ts (hi + 1:
 * none); ids follow (track, ts), so this is a binary search over rowids. */
static int first_at(sqlite3_stmt *get_ts, int64_t lo, int64_t hi, int64_t ts, int64_t *at, struct err *e)
{
    hi++;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, t = INT64_MAX;
        sqlite3_bind_int64(get_ts, 1, mid);
        int rc = scan_step(get_ts, e, "gpuscan (GPU streams)");
        if (rc == 1) t = sqlite3_column_int64(get_ts, 0);
        sqlite3_reset(get_ts);
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
    sqlite3_stmt *tr = NULL, *get_ts = NULL;
    struct gpuscan_lanes *L = xcalloc(1, sizeof *L);
    int rc = 0;
    *out = NULL;
    L->w1 = w1;
    if (sqlite3_prepare_v2(db,
                           "SELECT first_slice, last_slice FROM track WHERE rank = ?1 AND kind = ?3 AND nslices > 0"
                           " AND (device IS NULL OR device = ?2) ORDER BY id",
                           -1, &tr, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT ts FROM slice WHERE id = ?", -1, &get_ts, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "gpuscan (GPU streams)");
        goto out;
    }
    sqlite3_bind_int(tr, 1, rank);
    sqlite3_bind_int(tr, 2, device);
    sqlite3_bind_int(tr, 3, TB_TRACK_GPU);
    while ((rc = scan_step(tr, e, "gpuscan (GPU streams)")) == 1) {
        rc = 0;
        int64_t first = sqlite3_column_int64(tr, 0), last = sqlite3_column_int64(tr, 1);
        /* one op before w0 may still run at w0 */
        int64_t lo;
        if ((rc = first_at(get_ts, first, last, w0, &lo, e)) < 0) goto out;
        if (lo > first) lo--;
        L->l = xrealloc(L->l, (L->n + 1) * sizeof *L->l);
        struct lane *l = &L->l[L->n];
        memset(l, 0, sizeof *l);
        if (sqlite3_prepare_v2(db, "SELECT ts, dur, corr FROM slice WHERE id BETWEEN ?1 AND ?2 AND (?3 >> kind) & 1"
                                   " ORDER BY id",
                               -1, &l->st, NULL) != SQLITE_OK) {
            rc = rundb_db_error(db, e, "gpuscan (GPU ops)");
            goto out;
        }
        L->n++;
        sqlite3_bind_int64(l->st, 1, lo);
        sqlite3_bind_int64(l->st, 2, last);
        sqlite3_bind_int64(l->st, 3, SCAN_GPU_OPS);
        if ((rc = lane_fetch(l, w1, e)) != 0) goto out;
    }
out:
    sqlite3_finalize(tr);
    sqlite3_finalize(get_ts);
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
    for (size_t i = 0; i < L->n; i++) sqlite3_finalize(L->l[i].st);
    free(L->l);
    free(L);
}

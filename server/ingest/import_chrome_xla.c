#define LOG_MODULE "chrome"
#include "ingest/import_chrome_xla.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"


/* ---------------------------------------------------------------------- */
/* XLA device lanes and step markers (JAX, TensorFlow)                    */

/* Device number of an XLA process name, "/device:<TYPE>:<N>" alone or
 * followed by a space or '(' and more text; -1 for any other name, for
 * the host (TYPE CPU) and for TPU_SYSTEM-like bookkeeping processes.
 * OUT *gpu: 1 when TYPE is GPU. */
static int xla_device_of(const char *s, size_t n, int *gpu)
{
    static const char pre[] = "/device:";
    size_t i = sizeof pre - 1, t0, tn;
    int dev = 0;
    if (n <= i || memcmp(s, pre, i) != 0) return -1;
    t0 = i;
    while (i < n && s[i] != ':' && s[i] != '/' && s[i] != ' ') i++;
    tn = i - t0;
    if (tn == 0 || i >= n || s[i] != ':') return -1;
    if (++i >= n || s[i] < '0' || s[i] > '9') return -1;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (dev > 99999) return -1;
        dev = dev * 10 + (s[i] - '0');
    }
    if (i < n && s[i] != ' ' && s[i] != '(') return -1;
    if (tn == 3 && strncasecmp(s + t0, "CPU", 3) == 0) return -1;
    if (memmem(s + t0, tn, "_SYSTEM", 7)) return -1;
    *gpu = tn == 3 && strncasecmp(s + t0, "GPU", 3) == 0;
    return dev;
}

static struct import_chrome_lane *lane_at(struct import_chrome *c, uint32_t track)
{
    if (track >= c->lanes_cap) {
        size_t ncap = c->lanes_cap ? c->lanes_cap : 64;
        while (ncap <= track) ncap *= 2;
        c->lanes = xrealloc(c->lanes, ncap * sizeof *c->lanes);
        memset(c->lanes + c->lanes_cap, 0, (ncap - c->lanes_cap) * sizeof *c->lanes);
        c->lanes_cap = ncap;
    }
    return &c->lanes[track];
}

/* Forgets every resolved lane: a process or thread name just changed. */
static void lanes_reset(struct import_chrome *c)
{
    for (size_t i = 0; i < c->lanes_cap; i++) c->lanes[i].kind = LANE_UNSEEN;
}

/* process_name metadata: remembers (or forgets) an XLA device process. */
void import_chrome_xla_note_process(struct import_chrome *c, const char *pid, size_t pn, const char *name,
                                    size_t n)
{
    int gpu = 0, dev = xla_device_of(name, n, &gpu);
    size_t i;
    for (i = 0; i < c->ndp; i++)
        if (c->dp[i].pid_n == pn && memcmp(c->dp[i].pid, pid, pn) == 0) break;
    if (i == c->ndp) {
        if (dev < 0) return;
        c->dp = xrealloc(c->dp, (c->ndp + 1) * sizeof *c->dp);
        c->dp[i].pid = xmemdup0(pid, pn);
        c->dp[i].pid_n = pn;
        c->ndp++;
    }
    c->dp[i].device = dev;
    c->dp[i].gpu = gpu;
    lanes_reset(c);
}

/* thread_name metadata: what the lane's name says it holds. */
void import_chrome_xla_note_thread(struct import_chrome *c, uint32_t track, const char *name, size_t n)
{
    struct import_chrome_lane *l = lane_at(c, track);
    if (n >= 6 && memcmp(name, "Stream", 6) == 0) l->tname = TN_STREAM;
    else if (n == 7 && memcmp(name, "XLA Ops", 7) == 0) l->tname = TN_XLA_OPS;
    else l->tname = TN_OTHER;
    l->kind = LANE_UNSEEN;
}

/* The lane a track is, resolved at its first slice; marks device lanes as
 * GPU tracks of their device. */
static enum lane_kind lane_resolve(struct import_chrome *c, const struct import_chrome_ev *ev, uint32_t track)
{
    struct import_chrome_lane *l = lane_at(c, track);
    if (l->kind != LANE_UNSEEN) return (enum lane_kind)l->kind;
    l->kind = LANE_HOST;
    if (c->ndp) {
        char pb[64];
        const char *ps;
        size_t pn;
        import_chrome_id_text(&ev->pid, pb, sizeof pb, &ps, &pn);
        for (size_t i = 0; i < c->ndp; i++) {
            const struct import_chrome_devproc *d = &c->dp[i];
            if (d->device < 0 || d->pid_n != pn || memcmp(d->pid, ps, pn) != 0) continue;
            int ops = l->tname == TN_NONE || l->tname == TN_STREAM || (l->tname == TN_XLA_OPS && !d->gpu);
            l->kind = ops ? LANE_OPS : LANE_DERIVED;
            rundb_track_set_kind(c->w, track, TB_TRACK_GPU);
            rundb_track_set_device(c->w, track, d->device);
            break;
        }
    }
    return (enum lane_kind)l->kind;
}

/* What XLA profilers write in args: "correlation_id" (CUPTI's, on both the
 * device op and the host API call, as a string), "step_num" on step
 * markers, "memcpy_details"/"memset_details" on copies and sets. */
struct xla_args {
    int64_t corr, step;
    int has_step, memcpy, memset;
};

static void xla_args_scan(const struct jtok_val *args, struct xla_args *a)
{
    memset(a, 0, sizeof *a);
    if (args->type != JT_OBJECT) return;
    const char *cur = args->p, *end = args->p + args->n;
    struct jtok_val k, v;
    struct err e;
    while (jtok_span_next_member(&cur, end, &k, &v, &e) == 1) {
        int64_t x;
        if (k.escaped) continue;
        if (jtok_str_eq(&k, "correlation_id")) {
            if (jtok_to_i64(&v, &x) == 0) a->corr = x;
        } else if (jtok_str_eq(&k, "step_num")) {
            if (jtok_to_i64(&v, &x) == 0 && x >= 0) {
                a->step = x;
                a->has_step = 1;
            }
        } else if (jtok_str_eq(&k, "memcpy_details")) {
            a->memcpy = 1;
        } else if (jtok_str_eq(&k, "memset_details")) {
            a->memset = 1;
        }
    }
}

/* Case-insensitive search of an ASCII lowercase needle in s[0..n). */
static int has_ci(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (strncasecmp(s + i, needle, m) == 0) return 1;
    return 0;
}

/* An op on a device lane: a copy (MemcpyH2D/D2H/D2D/P2P, XLA's async
 * copy-start/copy-done), a set, else a kernel. */
static enum tb_kind xla_op_kind(const char *s, size_t n, const struct xla_args *a)
{
    if (a->memcpy) return TB_K_MEMCPY;
    if (a->memset) return TB_K_MEMSET;
    if (has_ci(s, n, "memcpy") || (n >= 10 && memcmp(s, "copy-start", 10) == 0) ||
        (n >= 9 && memcmp(s, "copy-done", 9) == 0))
        return TB_K_MEMCPY;
    if (has_ci(s, n, "memset")) return TB_K_MEMSET;
    return TB_K_KERNEL;
}

/* Kind (and name, correlation) of an event whose category says nothing,
 * from its lane and args: device ops become kernels/copies/sets, derived
 * device lines GPU annotations; on the host a step marker (a "step_num"
 * arg: StepTraceAnnotation, Keras' Trace("train", step_num=..)) becomes a
 * user annotation named "<name>#<step_num>" (kclass_profiler_step knows
 * it), a span with a CUPTI correlation_id a driver call, a "$file.py:N f"
 * span a Python frame. Everything else stays TB_K_OTHER. */
void import_chrome_xla_classify(struct import_chrome *c, const struct import_chrome_ev *ev, uint32_t track,
                                enum tb_kind *kind, uint32_t *name, int64_t *corr)
{
    struct xla_args a;
    enum lane_kind lk = lane_resolve(c, ev, track);
    if (lk == LANE_DERIVED) {
        *kind = TB_K_GPU_ANNOTATION;
        return;
    }
    xla_args_scan(&ev->args, &a);
    const char *nm = "";
    size_t nn = 0;
    if (ev->name.type == JT_STRING) nn = import_chrome_str_decode(c, &ev->name, &nm);
    if (lk == LANE_OPS) {
        *kind = xla_op_kind(nm, nn, &a);
        *corr = a.corr;
    } else if (a.has_step) {
        char *full = xasprintf("%.*s#%lld", (int)(nn > 200 ? 200 : nn), nn ? nm : "step", (long long)a.step);
        *name = rundb_intern(c->w, full, strlen(full));
        free(full);
        *kind = TB_K_USER_ANNOTATION;
    } else if (a.corr) {
        *kind = TB_K_DRIVER;
        *corr = a.corr;
    } else if (nn && nm[0] == '$') {
        *kind = TB_K_PYTHON;
    }
}

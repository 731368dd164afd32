#define LOG_MODULE "analysis"
#include "derive/summary_steps.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "store/model.h"
#include "store/rundb.h"

/* ====================================================================== */
/* Steps and breakdown                                                    */
/* ====================================================================== */

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

/* A step whose recorded activity fills under 1 % of its span (and that is
 * long enough for it to matter) is clipped to that activity: a
 * ProfilerStep#1 left open across 13.3 s of a notebook around 1.7 ms of
 * work (HTA's triton_example) would otherwise be a 13.3 s step that a rule
 * promises to save. The host span stays in host_ts/host_dur. */
#define CLIP_SHARE 0.01
#define CLIP_MIN_NS 100000000

/* The index of the step of s[0..n) holding t, or -1. */
static long step_of(const struct step *s, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].ts <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo > 0 && t < s[lo - 1].end ? (long)lo - 1 : -1;
}

static void widen(int64_t *lo, int64_t *hi, int64_t a, int64_t b)
{
    if (a < *lo) *lo = a;
    if (b > *hi) *hi = b;
}

static void clip_to_activity(struct rankctx *c, struct step *s, size_t n)
{
    int64_t *lo = xmalloc(n * sizeof *lo), *hi = xmalloc(n * sizeof *hi);
    for (size_t i = 0; i < n; i++) {
        lo[i] = INT64_MAX;
        hi[i] = INT64_MIN;
    }
    for (int k = 0; k < C_N; k++)
        for (size_t j = 0; j < c->cat[k].n; j++) {
            const struct ivl *v = &c->cat[k].v[j];
            long i = step_of(s, n, v->a);
            if (i >= 0) widen(&lo[i], &hi[i], v->a, v->b < s[i].end ? v->b : s[i].end);
        }
    for (size_t j = 0; j < c->ng; j++) {
        const struct gop *g = &c->g[j];
        long i = step_of(s, n, g->ts);
        if (i >= 0) widen(&lo[i], &hi[i], g->ts, g->ts + g->dur < s[i].end ? g->ts + g->dur : s[i].end);
    }
    for (size_t i = 0; i < n; i++) {
        int64_t span = s[i].end - s[i].ts;
        if (hi[i] <= lo[i] || span < CLIP_MIN_NS || (double)(hi[i] - lo[i]) >= CLIP_SHARE * (double)span) continue;
        char msg[256];
        snprintf(msg, sizeof msg, "%s spans %.1f ms but its recorded activity only %.3f ms: the step is clipped to it",
                 s[i].name, (double)span / 1e6, (double)(hi[i] - lo[i]) / 1e6);
        json_array_append_new(c->notes, json_string(msg));
        s[i].ts = lo[i];
        s[i].end = hi[i];
    }
    free(lo);
    free(hi);
}

int summary_steps_build(struct rankctx *c, struct step **out, size_t *nout)
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
                 summary_rank_name(&c->names, c->hs[keep].name)->s);
        json_array_append_new(c->notes, json_string(msg));
    }
    s = xcalloc(keep, sizeof *s);
    int64_t prev_end = INT64_MIN;
    for (size_t i = 0; i < keep; i++) {
        const struct hstep *h = &c->hs[i];
        s[i].name = xstrdup(summary_rank_name(&c->names, h->name)->s);
        s[i].host_ts = h->ts;
        s[i].host_dur = h->dur;
        s[i].ngpu = h->ngpu;
        s[i].ts = h->ts > prev_end ? h->ts : prev_end;
        s[i].end = h->ts + h->dur;
        if (h->dev_end > s[i].end) s[i].end = h->dev_end;
        if (s[i].end < s[i].ts) s[i].end = s[i].ts;
        prev_end = s[i].end;
    }
    clip_to_activity(c, s, keep);
    *out = s;
    *nout = keep;
    return 0;
}

void summary_steps_breakdown(struct rankctx *c, struct step *s, size_t n)
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
        ivlist_free(&c->cat[k]); /* covered holds it now: one copy of the busy time, not two */
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


int summary_steps_write(struct rankctx *c, const struct step *s, size_t n, struct err *e)
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


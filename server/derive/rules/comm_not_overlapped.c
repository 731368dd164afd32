/* comm_not_overlapped — collectives run while the GPU has no compute
 * beside them, although there is compute they could hide behind.
 *
 * Per rank, inside the steps: comm = the union of the collectives (NCCL/
 * RCCL kernels; for host-side backends such as gloo, which launch no
 * kernels, the gloo:/nccl: spans the profiler records), compute = the
 * union of the other kernels (on whatever stream), overlap = comm ∩
 * compute. The exposed part, comm − overlap, could hide behind compute
 * that now runs alone (compute − overlap), so the saving is the smaller of
 * the two. The rule fires when comm is more than rule_overlap_comm_pct of
 * the step, less than rule_overlap_pct of it is overlapped, and the
 * hideable part is at least MIN_HIDEABLE_PCT of the step (with no compute
 * to hide behind, overlap cannot help: that is communication_heavy).
 *
 * Several ranks: the time a rank spends waiting inside a collective for a
 * late rank cannot be overlapped, so the run is judged by the rank that
 * spends least time in collectives (it waits least) and reported once for
 * the run, with every rank's figures in the evidence.
 *
 * Memory: per rank, the collectives' intervals (few) and step-sized
 * arrays; kernels are streamed in time order and merged on the fly
 * (rules_comm_overlap, shared with the Ranks page).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/ivlist.h"
#include "derive/kclass.h"
#include "derive/rules.h"
#include "store/model.h"
#include "store/scan.h"
#include "store/stats_read.h"

/* The slices a collective shows as: kernels, or host and annotation spans. */
#define COMM_KINDS                                                                                         \
    (SCAN_KIND(TB_K_CPU_OP) | SCAN_KIND(TB_K_USER_ANNOTATION) | SCAN_KIND(TB_K_KERNEL) |                   \
     SCAN_KIND(TB_K_GPU_ANNOTATION))

/* Below this share of the step, the overlap the advice could win is noise. */
#define MIN_HIDEABLE_PCT 1.0

/* ---------------------------------------------------------------------- */
/* Names of collectives                                                     */
/* ---------------------------------------------------------------------- */

struct ids {
    uint32_t *v; /* sorted */
    size_t n, cap;
};

static int cmp_u32(const void *x, const void *y)
{
    uint32_t p = *(const uint32_t *)x, q = *(const uint32_t *)y;
    return (p > q) - (p < q);
}

static void ids_add(struct ids *s, uint32_t id)
{
    if (s->n == s->cap) s->v = xrealloc(s->v, (s->cap = s->cap ? s->cap * 2 : 32) * sizeof *s->v);
    s->v[s->n++] = id;
}

static int ids_has(const struct ids *s, uint32_t id)
{
    return s->n && bsearch(&id, s->v, s->n, sizeof *s->v, cmp_u32) != NULL;
}

/* kern: names of kernels the analysis flagged as collectives (by name or
 * by their "Collective name" argument); ops: host/annotation spans named
 * like collectives (nccl:all_reduce, gloo:all_reduce ...). */
static int comm_names(sqlite3 *db, struct ids *kern, struct ids *ops, struct err *e)
{
    struct stats_read_names *c;
    uint32_t id;
    const char *s;
    int rc, kernel;
    if ((rc = stats_read_comm_names_open(db, &c, e))) return rc;
    while ((rc = stats_read_comm_names_next(c, &id, &s, &kernel, e)) == 1) {
        if (kernel) ids_add(kern, id);
        else if (s && kclass_comm_op(s)) ids_add(ops, id);
    }
    stats_read_names_close(c);
    if (rc < 0) return rc;
    if (kern->n) xqsort(kern->v, kern->n, sizeof *kern->v, cmp_u32);
    if (ops->n) xqsort(ops->v, ops->n, sizeof *ops->v, cmp_u32);
    return 0;
}

/* ---------------------------------------------------------------------- */
/* One rank's overlap                                                       */
/* ---------------------------------------------------------------------- */

struct fig {
    const struct rules_rank *r;
    double comm, overlap, compute; /* per step, ns */
    int host_comm;                 /* collectives seen as host spans only */
    const struct rules_step *worst; /* most exposed communication */
    int64_t worst_exposed;
};

/* Measures f->r: 1 done, 0 when the rank has no slices, < 0 on an error
 * (e filled). */
static int measure(sqlite3 *db, const struct ids *kern, const struct ids *ops, struct fig *f, struct err *e)
{
    const struct rules_rank *r = f->r;
    int64_t lo, hi;
    struct ivlist comm = { 0 }, host = { 0 };
    struct scan_slices *c = NULL;
    struct scan_slice sl;
    int rc;
    if ((rc = scan_slice_range(db, r->rank, &lo, &hi, e)) <= 0) return rc;

    /* collectives: kernels, or host/annotation spans when there are none */
    if ((rc = scan_slices_open(db, r->rank, SCAN_TRACKS_ALL, COMM_KINDS, &c, e))) goto out;
    while ((rc = scan_slices_next(c, &sl, e)) == 1) {
        if (sl.kind == TB_K_KERNEL) {
            if (ids_has(kern, sl.name)) ivlist_add(&comm, sl.ts, sl.ts + sl.dur);
        } else if (ids_has(ops, sl.name)) {
            ivlist_add(&host, sl.ts, sl.ts + sl.dur);
        }
    }
    if (rc < 0) goto out;
    if (!comm.n) {
        /* gloo, MPI ...: the collective runs on host threads, no kernel */
        struct ivlist t = comm;
        comm = host;
        host = t;
        f->host_comm = comm.n > 0;
    }
    ivlist_normalize(&comm);

    /* per step: comm inside it, compute, and their overlap */
    size_t n = r->nsteps;
    struct ivl *w = xcalloc(n, sizeof *w);
    int64_t *cs = xcalloc(3 * n, sizeof *cs), *comp = cs + n, *ovl = comp + n;
    for (size_t i = 0; i < n; i++) w[i] = (struct ivl){ r->steps[i].ts, r->steps[i].ts + r->steps[i].dur };
    if ((rc = rules_comm_overlap(db, r->rank, lo, hi, &comm, w, n, cs, comp, ovl, e)) == 0) {
        for (size_t i = 0; i < n; i++) {
            f->comm += (double)cs[i];
            f->compute += (double)comp[i];
            f->overlap += (double)ovl[i];
            int64_t x = cs[i] - ovl[i];
            if (!f->worst || x > f->worst_exposed) f->worst = &r->steps[i], f->worst_exposed = x;
        }
        f->comm /= (double)n;
        f->compute /= (double)n;
        f->overlap /= (double)n;
        rc = 1;
    }
    free(w);
    free(cs);
out:
    scan_slices_close(c);
    free(comm.v);
    free(host.v);
    return rc;
}

/* ---------------------------------------------------------------------- */
/* Rule                                                                     */
/* ---------------------------------------------------------------------- */

static const char advice_torch[] =
    "Let the collectives run while the GPU still computes. DDP all-reduces gradient buckets during the "
    "backward pass as soon as a bucket is ready: use DDP rather than an all-reduce after backward(), try "
    "smaller buckets (bucket_cap_mb) so the first ones start earlier, gradient_as_bucket_view=True to "
    "skip the copy into buckets, and static_graph=True when the graph does not change. With FSDP, "
    "prefetch the next all-gather (backward_prefetch=BACKWARD_PRE, forward_prefetch=True). Check that "
    "nothing synchronises the streams between backward and the optimizer (.item(), "
    "torch.cuda.synchronize(), wait() right after an async collective) and that collectives are issued "
    "with async_op=True and waited on only where their result is needed.";
static const char snippet_torch[] =
    "model = DDP(model, device_ids=[local_rank],\n"
    "            bucket_cap_mb=10,              # smaller buckets: all-reduce starts earlier in backward\n"
    "            gradient_as_bucket_view=True,\n"
    "            static_graph=True)             # if the graph is the same every step\n"
    "# FSDP: overlap all-gathers with compute\n"
    "model = FSDP(model, backward_prefetch=BackwardPrefetch.BACKWARD_PRE, forward_prefetch=True)\n"
    "# manual collectives: issue async, wait late\n"
    "work = dist.all_reduce(t, async_op=True)\n"
    "...  # independent compute\n"
    "work.wait()";

static int run(struct rules_ctx *c, struct err *e)
{
    const double overlap_comm_pct = rules_param(c, "rule_overlap_comm_pct");
    const double overlap_pct = rules_param(c, "rule_overlap_pct");
    struct ids kern = { 0 }, ops = { 0 };
    struct fig *f = xcalloc(c->nranks ? c->nranks : 1, sizeof *f);
    size_t nf = 0;
    int any = 0, world = 0;
    for (size_t i = 0; i < c->nranks; i++)
        if (c->ranks[i].nsteps && c->ranks[i].avg_dur > 0 && c->ranks[i].avg_part[RULES_COMM] > 0) any = 1;
    int rc = 0;
    if (!any || (rc = comm_names(c->db, &kern, &ops, e)) != 0) goto out;
    for (size_t i = 0; i < c->nranks; i++) {
        const struct rules_rank *r = &c->ranks[i];
        if (!r->nsteps || r->avg_dur <= 0) continue;
        if (r->world_size == 1) continue; /* a group of one has nothing to overlap */
        if (r->world_size > world) world = r->world_size;
        f[nf].r = r;
        if ((rc = measure(c->db, &kern, &ops, &f[nf], e)) < 0) goto out;
        if (rc) nf++;
        else memset(&f[nf], 0, sizeof f[nf]);
    }
    if (!nf) goto out;
    const struct fig *g = &f[0];
    for (size_t i = 1; i < nf; i++)
        if (f[i].comm < g->comm) g = &f[i];
    double step = (double)g->r->avg_dur, comm_pct = g->comm / step * 100.0;
    double ovl_pct = g->comm > 0 ? g->overlap / g->comm * 100.0 : 0;
    double exposed = g->comm - g->overlap, alone = g->compute - g->overlap;
    double hide = exposed < alone ? exposed : alone;
    if (comm_pct <= overlap_comm_pct || ovl_pct >= overlap_pct || hide / step * 100.0 < MIN_HIDEABLE_PCT)
        goto out;

    char a[32], b[32], d[32], line[512], link[160];
    json_t *ranks = json_array();
    for (size_t i = 0; i < nf; i++)
        json_array_append_new(ranks, json_pack("{s:i,s:f,s:f,s:f,s:f}", "rank", f[i].r->rank, "comm_us",
                                               f[i].comm / 1000.0, "overlap_us", f[i].overlap / 1000.0,
                                               "compute_us", f[i].compute / 1000.0, "step_us",
                                               (double)f[i].r->avg_dur / 1000.0));
    json_t *ev = json_pack("{s:[],s:i,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:b,s:o}", "lines", "rank", g->r->rank,
                           "comm_us", g->comm / 1000.0, "overlap_us", g->overlap / 1000.0, "overlap_pct", ovl_pct,
                           "exposed_us", exposed / 1000.0, "compute_alone_us", alone / 1000.0, "hideable_us",
                           hide / 1000.0, "step_us", step / 1000.0, "comm_pct", comm_pct, "host_collectives",
                           g->host_comm, "ranks", ranks);
    json_t *lines = json_object_get(ev, "lines");
    snprintf(line, sizeof line, "Communication: %s per step (%.0f %% of a %s step), %.0f %% of it overlapped with "
             "compute kernels%s",
             rules_fmt_ns(g->comm, a, sizeof a), comm_pct, rules_fmt_ns(step, b, sizeof b), ovl_pct,
             g->host_comm ? " (host-side collectives: no communication kernels)" : "");
    json_array_append_new(lines, json_string(line));
    snprintf(line, sizeof line, "Exposed: %s per step with no compute beside it, while compute kernels run %s "
             "per step with no communication beside them",
             rules_fmt_ns(exposed, a, sizeof a), rules_fmt_ns(alone, b, sizeof b));
    json_array_append_new(lines, json_string(line));
    snprintf(line, sizeof line, "Up to %s per step (%.0f %%) could hide behind compute",
             rules_fmt_ns(hide, a, sizeof a), hide / step * 100.0);
    json_array_append_new(lines, json_string(line));
    if (g->worst) {
        snprintf(line, sizeof line, "Worst step: %s, %s exposed communication out of %s", g->worst->name,
                 rules_fmt_ns((double)g->worst_exposed, a, sizeof a), rules_fmt_ns((double)g->worst->dur, d, sizeof d));
        json_array_append_new(lines, json_string(line));
    }
    if (nf > 1) {
        snprintf(line, sizeof line, "Judged on rank %d, the rank that waits least in collectives; per rank:",
                 g->r->rank);
        json_array_append_new(lines, json_string(line));
        for (size_t i = 0; i < nf && i < 16; i++) {
            snprintf(line, sizeof line, "rank %d: communication %s, %.0f %% overlapped", f[i].r->rank,
                     rules_fmt_ns(f[i].comm, a, sizeof a), f[i].comm > 0 ? f[i].overlap / f[i].comm * 100.0 : 0.0);
            json_array_append_new(lines, json_string(line));
        }
    }
    if (world > (int)nf) {
        snprintf(line, sizeof line,
                 "This run holds %zu of the job's %d ranks: waiting for ranks not loaded here counts as exposed",
                 nf, world);
        json_array_append_new(lines, json_string(line));
    }
    rules_add(c, &rule_comm_not_overlapped, hide / step * 100.0 >= 10.0 ? RULES_HIGH : RULES_MEDIUM,
              nf > 1 ? -1 : g->r->rank, hide, ev, g->worst ? rules_link_step(g->r, g->worst, link, sizeof link) : NULL,
              advice_torch, snippet_torch, "Communication not overlapped: only %.0f %% of %s per step runs beside compute",
              ovl_pct, rules_fmt_ns(g->comm, a, sizeof a));
out:
    free(kern.v);
    free(ops.v);
    free(f);
    return rc < 0 ? rc : 0;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_overlap_comm_pct", "5", "%", 0, 100,
      "comm_not_overlapped: communication above this % of the step ..." },
    { "rule_overlap_pct", "50", "%", 0, 100,
      "... of which less than this % overlaps computation." },
};

const struct rules_def rule_comm_not_overlapped = {
    "comm_not_overlapped",
    "https://pytorch.org/docs/stable/notes/ddp.html",
    run,
    RULES_PARAMS(params),
    RULES_PER_RANK,
    RULES_SIDE_COMM,
};

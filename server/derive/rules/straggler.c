/* straggler — one rank does more work per step than the others, and the
 * others wait for it inside the collectives.
 *
 * With synchronous collectives every rank's step lasts about as long as
 * the slowest rank's, so the step's wall time cannot tell the straggler
 * apart. What differs is how the step is spent: each rank's own work (the
 * step minus its time in collectives: compute, host code, sleeps, input)
 * and its time in collectives, which on the other ranks grows by the time
 * they wait for the late one. The straggler is therefore the rank whose
 * own work exceeds the median of the other ranks' by more than
 * rule_straggler_pct % and rule_straggler_ms, *and* whose collectives are
 * shorter than theirs by at least half that excess (the others' waiting
 * is seen; without it the ranks are not waiting on each other and a
 * difference in work is not what limits the job).
 *
 * Ranks are compared over the steps all of them recorded (by step name),
 * so a rank that profiled more steps does not skew the comparison; each
 * rank is measured on its own clock (durations only, no alignment). A
 * run of one rank never has a straggler.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/rules.h"

/* Share of the excess the others must be seen waiting (see above). */
#define WAIT_SEEN_FRACTION 0.5

struct rank_fig {
    const struct rules_rank *r;
    size_t nsteps;           /* steps compared */
    double dur, comm, own;   /* means over them, ns: own = dur - comm */
    double part[RULES_NPARTS];
};

struct step_ref {
    const char *name;
    size_t rank; /* index into the figures */
};

static int cmp_ref(const void *x, const void *y)
{
    const struct step_ref *p = x, *q = y;
    int k = strcmp(p->name, q->name);
    if (k) return k;
    return (p->rank > q->rank) - (p->rank < q->rank);
}

static int cmp_name(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int cmp_double(const void *x, const void *y)
{
    double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

/* Median of v[0..n) except v[skip]; tmp holds n doubles. */
static double median_except(const double *v, size_t n, size_t skip, double *tmp)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i != skip) tmp[m++] = v[i];
    if (!m) return 0;
    xqsort(tmp, m, sizeof *tmp, cmp_double);
    return m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
}

/* The step names every rank recorded, sorted, or NULL with *n = 0. OUT:
 * owned by caller; the names are borrowed from the ranks' steps. */
static const char **common_steps(const struct rank_fig *f, size_t nf, size_t *n)
{
    size_t total = 0, k = 0;
    for (size_t i = 0; i < nf; i++) total += f[i].r->nsteps;
    struct step_ref *refs = xcalloc(total ? total : 1, sizeof *refs);
    for (size_t i = 0; i < nf; i++)
        for (size_t j = 0; j < f[i].r->nsteps; j++) refs[k++] = (struct step_ref){ f[i].r->steps[j].name, i };
    xqsort(refs, total, sizeof *refs, cmp_ref);
    const char **names = xcalloc(total ? total : 1, sizeof *names);
    *n = 0;
    for (size_t i = 0; i < total;) {
        size_t j = i, distinct = 0;
        for (; j < total && strcmp(refs[j].name, refs[i].name) == 0; j++)
            if (j == i || refs[j].rank != refs[j - 1].rank) distinct++;
        if (distinct == nf) names[(*n)++] = refs[i].name;
        i = j;
    }
    free(refs);
    if (!*n) {
        free(names);
        return NULL;
    }
    return names;
}

static void measure(struct rank_fig *f, const char **names, size_t nnames)
{
    const struct rules_rank *r = f->r;
    for (size_t j = 0; j < r->nsteps; j++) {
        const struct rules_step *s = &r->steps[j];
        const char *key = s->name;
        if (names && !bsearch(&key, names, nnames, sizeof *names, cmp_name)) continue;
        f->nsteps++;
        f->dur += (double)s->dur;
        f->comm += (double)s->part[RULES_COMM];
        for (int k = 0; k < RULES_NPARTS; k++) f->part[k] += (double)s->part[k];
    }
    if (!f->nsteps) return;
    f->dur /= (double)f->nsteps;
    f->comm /= (double)f->nsteps;
    for (int k = 0; k < RULES_NPARTS; k++) f->part[k] /= (double)f->nsteps;
    f->own = f->dur - f->comm;
}

/* What each part of the step is, for the line naming the largest excess. */
static const char *const part_what[RULES_NPARTS] = {
    [RULES_KERNEL] = "GPU kernels (check that GPU's clocks, temperature and other processes on it, and "
                     "whether this rank gets larger inputs)",
    [RULES_MEMCPY] = "memory copies (pinned memory, PCIe/NUMA placement of this rank)",
    [RULES_MEMSET] = "memsets",
    [RULES_COMM] = "communication",
    [RULES_RUNTIME] = "CUDA runtime calls (launch overhead or synchronisation on this rank's host)",
    [RULES_DATALOADER] = "waiting for the DataLoader (this rank's input pipeline)",
    [RULES_CPU_EXEC] = "host operators (this rank's CPU is slower or busier)",
    [RULES_OTHER] = "host time outside any recorded operator (Python code, sleeps, logging, checkpointing, "
                    "I/O on this rank)",
};

static const char advice_torch[] =
    "The other ranks idle in collectives until this rank catches up, so the whole job runs at its pace. "
    "Find what only this rank does or does slowly: work done on one rank only (logging, evaluation, "
    "checkpoint writes; move it off the training loop or spread it), its input pipeline (more DataLoader "
    "workers, data on local disk, balanced shards and sequence lengths), its host (CPU pinning, NUMA, "
    "other processes) and its GPU (clocks, thermal throttling, ECC errors: nvidia-smi -q -d "
    "PERFORMANCE,CLOCK). Compare this rank's timeline with a fast rank's over the same step.";
static const char snippet_torch[] =
    "# work done on one rank only holds every other rank in the next collective\n"
    "if dist.get_rank() == 0 and step % log_every == 0:\n"
    "    log_async(metrics)              # not a blocking write in the loop\n"
    "# balance the input: same number of samples (and tokens) per rank\n"
    "sampler = torch.utils.data.distributed.DistributedSampler(dataset, drop_last=True)\n"
    "loader = DataLoader(dataset, sampler=sampler, num_workers=8, pin_memory=True)";

static int run(struct rules_ctx *c, struct err *e)
{
    const double straggler_pct = rules_param(c, "rule_straggler_pct");
    const double straggler_ms = rules_param(c, "rule_straggler_ms");
    struct rank_fig *f = xcalloc(c->nranks ? c->nranks : 1, sizeof *f);
    size_t nf = 0;
    for (size_t i = 0; i < c->nranks; i++)
        if (c->ranks[i].nsteps) f[nf++].r = &c->ranks[i];
    if (nf < 2) {
        free(f);
        return 0;
    }
    size_t nnames = 0;
    const char **names = common_steps(f, nf, &nnames);
    for (size_t i = 0; i < nf; i++) measure(&f[i], names, nnames);
    free(names);

    double *own = xcalloc(nf, sizeof *own), *comm = xcalloc(nf, sizeof *comm), *dur = xcalloc(nf, sizeof *dur);
    double *tmp = xcalloc(nf, sizeof *tmp), *pv = xcalloc(nf, sizeof *pv);
    for (size_t i = 0; i < nf; i++) own[i] = f[i].own, comm[i] = f[i].comm, dur[i] = f[i].dur;
    size_t s = 0;
    double best = 0;
    for (size_t i = 0; i < nf; i++) {
        double x = own[i] - median_except(own, nf, i, tmp);
        if (i == 0 || x > best) best = x, s = i;
    }
    double med_own = median_except(own, nf, s, tmp), med_comm = median_except(comm, nf, s, tmp);
    double med_dur = median_except(dur, nf, s, tmp);
    double excess = own[s] - med_own, waited = med_comm - comm[s];
    int fire = excess > straggler_pct / 100.0 * med_own && excess > straggler_ms * 1e6 &&
               waited >= WAIT_SEEN_FRACTION * excess;
    if (fire) {
        const struct rank_fig *g = &f[s];
        char a[32], b[32], d[32], line[512], link[64];
        json_t *ranks = json_array();
        for (size_t i = 0; i < nf; i++)
            json_array_append_new(ranks, json_pack("{s:i,s:f,s:f,s:f,s:i}", "rank", f[i].r->rank, "step_us",
                                                   f[i].dur / 1000.0, "comm_us", f[i].comm / 1000.0, "own_us",
                                                   f[i].own / 1000.0, "steps", (int)f[i].nsteps));
        json_t *ev = json_pack("{s:[],s:i,s:f,s:f,s:f,s:f,s:f,s:i,s:o}", "lines", "straggler_rank", g->r->rank,
                               "own_us", g->own / 1000.0, "median_own_us", med_own / 1000.0, "excess_us",
                               excess / 1000.0, "others_wait_us", waited / 1000.0, "median_step_us",
                               med_dur / 1000.0, "steps", (int)g->nsteps, "ranks", ranks);
        json_t *lines = json_object_get(ev, "lines");
        snprintf(line, sizeof line,
                 "Rank %d works %s per step outside collectives; the median of the other %zu ranks is %s "
                 "(+%s, %.1fx)",
                 g->r->rank, rules_fmt_ns(g->own, a, sizeof a), nf - 1, rules_fmt_ns(med_own, b, sizeof b),
                 rules_fmt_ns(excess, d, sizeof d), med_own > 0 ? g->own / med_own : 0.0);
        json_array_append_new(lines, json_string(line));
        snprintf(line, sizeof line,
                 "The others wait for it: %s per step in collectives (median) against %s on rank %d",
                 rules_fmt_ns(med_comm, a, sizeof a), rules_fmt_ns(g->comm, b, sizeof b), g->r->rank);
        json_array_append_new(lines, json_string(line));
        /* where the extra work goes: the part most above the others' median */
        int k_max = -1;
        double d_max = 0;
        for (int k = 0; k < RULES_NPARTS; k++) {
            if (k == RULES_COMM) continue;
            for (size_t i = 0; i < nf; i++) pv[i] = f[i].part[k];
            double x = g->part[k] - median_except(pv, nf, s, tmp);
            if (x > d_max) d_max = x, k_max = k;
        }
        if (k_max >= 0) {
            snprintf(line, sizeof line, "Most of the extra time is %s: +%s per step", part_what[k_max],
                     rules_fmt_ns(d_max, a, sizeof a));
            json_array_append_new(lines, json_string(line));
        }
        for (size_t i = 0; i < nf && i < 16; i++) {
            snprintf(line, sizeof line, "rank %d: step %s, in collectives %s, own work %s%s", f[i].r->rank,
                     rules_fmt_ns(f[i].dur, a, sizeof a), rules_fmt_ns(f[i].comm, b, sizeof b),
                     rules_fmt_ns(f[i].own, d, sizeof d), i == s ? "  <- straggler" : "");
            json_array_append_new(lines, json_string(line));
        }
        if (nf > 16) {
            snprintf(line, sizeof line, "... and %zu more ranks (see the ranks view)", nf - 16);
            json_array_append_new(lines, json_string(line));
        }
        snprintf(line, sizeof line, "Compared over %zu step%s that every rank recorded", g->nsteps,
                 g->nsteps == 1 ? "" : "s");
        json_array_append_new(lines, json_string(line));
        snprintf(link, sizeof link, "view=ranks&rank=%d", g->r->rank);
        /* if it matched the median, the others would stop waiting for it */
        double saving = excess < waited ? excess : waited;
        rules_add(c, &rule_straggler, excess >= 3 * straggler_pct / 100.0 * med_dur ? RULES_HIGH : RULES_MEDIUM,
                  g->r->rank, saving, ev, link, advice_torch, snippet_torch,
                  "Straggler: rank %d holds every step up by %s while the other ranks wait for it", g->r->rank,
                  rules_fmt_ns(excess, a, sizeof a));
    }
    free(own);
    free(comm);
    free(dur);
    free(tmp);
    free(pv);
    free(f);
    (void)e;
    return 0;
}

/* The thresholds this rule declares (config keys; see include/base/config.h). */
static const struct config_param params[] = {
    { "rule_straggler_pct", "10", "%", 0, 1000,
      "straggler: a rank slower than the median rank by more than this % ..." },
    { "rule_straggler_ms", "1", "ms", 0, 1000000,
      "... and by more than this many ms." },
};

const struct rules_def rule_straggler = {
    "straggler",
    "https://pytorch.org/docs/stable/notes/ddp.html",
    run,
    RULES_PARAMS(params),
    RULES_RUN_LEVEL, /* every rank waits for it */
    RULES_SIDE_STEP,
};

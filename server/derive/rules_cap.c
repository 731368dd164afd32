/* rules_cap.c — savings capped by the critical path (see
 * include/derive/rules_cap.h). */
#include "derive/rules_cap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/analyses.h"
#include "store/facts.h"

/* The critical-path categories of each side (RULES_SIDE_STEP: all). A
 * kernel gap (a queued op waiting for a dependency the trace does not
 * show: another stream, an event, a collective) may shorten with a fix on
 * any side, so each counts it. */
static int on_side(int cat, enum rules_side side)
{
    if (cat == AN_CP_KERNEL_GAP) return 1;
    switch (side) {
    case RULES_SIDE_HOST: return cat == AN_CP_CPU || cat == AN_CP_DATALOADER || cat == AN_CP_LAUNCH;
    case RULES_SIDE_GPU: return cat == AN_CP_GPU_COMPUTE;
    case RULES_SIDE_COMM: return cat == AN_CP_COMM;
    default: return 1;
    }
}

/* How the evidence names a side's part of the path. */
static const char *const side_names[RULES_NSIDES] = { "step", "host", "gpu", "comm" };
static const char *const side_text[RULES_NSIDES] = {
    "", "host work, data loading, launches and kernel gaps", "GPU compute and kernel gaps",
    "communication and kernel gaps"
};

/* Path p of one rank from its critical_path object (steps[].by, .dur):
 * 1 when it has steps, 0 when not. */
static int path_of(json_t *cp, struct rules_cap_path *p)
{
    json_t *steps = json_object_get(cp, "steps");
    size_t n = json_array_size(steps);
    if (!n) return 0;
    int64_t *dur = xcalloc(n, sizeof *dur);
    for (size_t i = 0; i < n; i++) dur[i] = json_integer_value(json_object_get(json_array_get(steps, i), "dur"));
    size_t first = (size_t)rules_warmup_first(dur, n);
    free(dur);
    char key[AN_CP_NCAT][48]; /* "cpu_ns" ...: the members of a step's by */
    for (int k = 0; k < AN_CP_NCAT; k++) snprintf(key[k], sizeof key[k], "%s_ns", an_cp_names[k]);
    for (size_t i = first; i < n; i++) {
        json_t *by = json_object_get(json_array_get(steps, i), "by");
        for (int k = 0; k < AN_CP_NCAT; k++) {
            double v = (double)json_integer_value(json_object_get(by, key[k]));
            for (int s = 0; s < RULES_NSIDES; s++)
                if (on_side(k, (enum rules_side)s)) p->side[s] += v;
            if (k == AN_CP_KERNEL_GAP) p->gap_ns += v;
        }
    }
    for (int s = 0; s < RULES_NSIDES; s++) p->side[s] /= (double)(n - first);
    p->gap_ns /= (double)(n - first);
    return 1;
}

int rules_cap_paths(sqlite3 *db, struct rules_cap_path **out, size_t *n, struct err *e)
{
    json_t *all = NULL, *doc;
    const char *key;
    *out = NULL;
    *n = 0;
    int rc = analyses_read(db, -1, &all, e);
    if (rc || !all) return rc;
    struct rules_cap_path *p = xcalloc(json_object_size(all) + 1, sizeof *p);
    size_t np = 0;
    json_object_foreach(all, key, doc) {
        struct rules_cap_path *q = &p[np];
        memset(q, 0, sizeof *q);
        q->rank = atoi(key);
        if (!path_of(json_object_get(doc, "critical_path"), q)) continue;
        /* the profiler's cost per step, as load_rank counts it (over every step) */
        double calls, steps = (double)json_integer_value(json_object_get(doc, "steps"));
        if ((rc = facts_op_calls(db, q->rank, &calls, e)) < 0) break;
        q->profiler_ns = calls / (steps > 0 ? steps : 1) * RULES_OP_OVERHEAD_NS;
        double host = q->side[RULES_SIDE_HOST] - q->gap_ns;
        if (q->profiler_ns > host) q->profiler_ns = host > 0 ? host : 0;
        np++;
    }
    json_decref(all);
    if (rc < 0) {
        free(p);
        return rc;
    }
    *out = p;
    *n = np;
    return 0;
}

double rules_cap_limit(const struct rules_cap_path *p, enum rules_side side)
{
    double v = p->side[side];
    if (side == RULES_SIDE_GPU || side == RULES_SIDE_COMM) v += p->profiler_ns;
    return v < p->side[RULES_SIDE_STEP] ? v : p->side[RULES_SIDE_STEP];
}

/* A capped saving's share of the step that grades a finding high and
 * medium (as layout_transposes, unfused_attention and optimizer_dominated
 * grade theirs). */
#define REGRADE_HIGH 0.10
#define REGRADE_MEDIUM 0.03

/* Lowers the severity of capped finding f to what its capped saving (ns
 * per step of step_ns) grades, never raising it: a high finding whose fix
 * can take only 1 % of the step off reads low. Says so in its evidence. */
static void regrade(json_t *f, double cap, double step_ns)
{
    static const char *const names[] = { "low", "medium", "high" };
    const char *was = json_string_value(json_object_get(f, "severity"));
    int from = -1;
    for (int k = 0; was && k < 3; k++)
        if (strcmp(was, names[k]) == 0) from = k;
    double share = step_ns > 0 ? cap / step_ns : 1.0;
    int to = share >= REGRADE_HIGH ? 2 : share >= REGRADE_MEDIUM ? 1 : 0;
    if (from < 0 || to >= from) return;
    char line[200];
    snprintf(line, sizeof line, "Severity %s, not %s: the capped saving is %.1f %% of the step", names[to], was,
             share * 100.0);
    json_t *ev = json_object_get(f, "evidence");
    json_array_append_new(json_object_get(ev, "lines"), json_string(line));
    json_object_set_new(json_object_get(ev, "saving_cap"), "severity_was", json_string(was));
    json_object_set_new(f, "severity", json_string(names[to]));
}

int rules_cap_finding(json_t *f, enum rules_side side, const struct rules_cap_path *paths, size_t n)
{
    json_t *r = json_object_get(f, "rank");
    const struct rules_cap_path *p = NULL;
    for (size_t i = 0; i < n; i++) {
        if (json_is_integer(r) && json_integer_value(r) != paths[i].rank) continue;
        if (!p || rules_cap_limit(&paths[i], side) > rules_cap_limit(p, side)) p = &paths[i];
    }
    double est = json_number_value(json_object_get(f, "saving_us")) * 1000.0;
    if (!p) return 0;
    double cap = rules_cap_limit(p, side);
    /* below 1 ns apart: the same figure rounded */
    if (!(est > cap + 1.0)) return 0;
    char a[32], b[32], c[32], d[32], line[400], whose[48] = "";
    if (!json_is_integer(r)) snprintf(whose, sizeof whose, " of rank %d (the most of any rank)", p->rank);
    int len = snprintf(line, sizeof line, "Capped at %s per step (the rule's estimate: %s): ",
                       rules_fmt_ns(cap, a, sizeof a), rules_fmt_ns(est, b, sizeof b));
    if (side == RULES_SIDE_STEP || cap >= p->side[RULES_SIDE_STEP])
        snprintf(line + len, sizeof line - (size_t)len, "no fix saves more than the %s step%s",
                 rules_fmt_ns(p->side[RULES_SIDE_STEP], c, sizeof c), whose);
    else if (side != RULES_SIDE_HOST && p->profiler_ns > 0)
        snprintf(line + len, sizeof line - (size_t)len,
                 "the critical path%s spends only %s per step on %s, plus up to %s that the profiler's own host "
                 "time may keep off it",
                 whose, rules_fmt_ns(p->side[side], c, sizeof c), side_text[side],
                 rules_fmt_ns(p->profiler_ns, d, sizeof d));
    else
        snprintf(line + len, sizeof line - (size_t)len, "the critical path%s spends only %s per step on %s", whose,
                 rules_fmt_ns(p->side[side], c, sizeof c), side_text[side]);
    json_t *ev = json_object_get(f, "evidence");
    json_array_append_new(json_object_get(ev, "lines"), json_string(line));
    json_object_set_new(ev, "saving_cap",
                        json_pack("{s:s,s:i,s:f,s:f,s:f,s:f}", "side", side_names[side], "rank", p->rank, "cap_us",
                                  cap / 1000.0, "path_us", p->side[side] / 1000.0, "profiler_us",
                                  side == RULES_SIDE_GPU || side == RULES_SIDE_COMM ? p->profiler_ns / 1000.0 : 0.0,
                                  "estimate_us", est / 1000.0));
    json_object_set_new(f, "saving_us", json_real(cap / 1000.0));
    regrade(f, cap, p->side[RULES_SIDE_STEP]);
    return 1;
}

/* Replaces the first `from` in line by `to`; NULL when absent (new
 * string, owned by caller). */
static char *replaced(const char *line, const char *from, const char *to)
{
    const char *at = strstr(line, from);
    if (!at) return NULL;
    return xasprintf("%.*s%s%s", (int)(at - line), line, to, at + strlen(from));
}

void rules_cap_causes(json_t *findings)
{
    json_t *f, *g;
    size_t i, j;
    json_array_foreach(findings, i, f) {
        json_t *ev = json_object_get(f, "evidence"), *lines = json_object_get(ev, "lines");
        const char *cause = json_string_value(json_object_get(ev, "cause"));
        if (!cause || strcmp(json_string_value(json_object_get(f, "id")), "low_gpu_utilization") != 0) continue;
        json_array_foreach(findings, j, g) {
            json_t *cap = json_object_get(json_object_get(g, "evidence"), "saving_cap");
            if (!cap || strcmp(json_string_value(json_object_get(g, "id")), cause) != 0) continue;
            char a[32], b[32], from[80], to[128];
            snprintf(from, sizeof from, "could save ~%s per step",
                     rules_fmt_ns(json_number_value(json_object_get(cap, "estimate_us")) * 1000.0, a, sizeof a));
            snprintf(to, sizeof to, "could save ~%s per step, capped by the critical path",
                     rules_fmt_ns(json_number_value(json_object_get(g, "saving_us")) * 1000.0, b, sizeof b));
            for (size_t k = 0; k < json_array_size(lines); k++) {
                char *s = replaced(json_string_value(json_array_get(lines, k)), from, to);
                if (s) json_array_set_new(lines, k, json_string(s));
                free(s);
            }
        }
    }
}

/*
 * rules_cap.h — savings a user can trust: each finding's estimated saving
 * capped by what the critical path of its rank (analyses.h: critical_path)
 * says a fix can take away. A rule estimates from its own figures (the GPU
 * idle time it explains, the share of kernel time it would remove); only
 * the critical path says how much of that time holds the step up. A fix on
 * one side of the path cannot shorten the step by more than that side's
 * time on it (rules_def.side, enum rules_side):
 *   host (cpu, dataloader, launch_overhead): the host's work and the GPU's
 *        waits for it;
 *   gpu (gpu_compute), comm (communication): the GPU's own time on the
 *        path, plus up to the profiler's host cost per step (operators
 *        recorded x RULES_OP_OVERHEAD_NS, at most the host part): without
 *        the profiler the host chain is that much shorter, and that much
 *        more GPU work may come onto the path;
 *   step: the whole step, which caps every rule.
 * Each side also counts the kernel gaps (a queued op waiting for a
 * dependency the trace does not show: another stream, an event, a
 * collective), which a fix on any side may shorten.
 * Figures are means over the rank's steady steps (rules_warmup_first
 * leaves a warm-up step out, as the rules do). A finding about the whole
 * run (rank null) is capped by the rank whose path has the most of its
 * side. A capped finding says so in its evidence (a line, and saving_cap:
 * {side, cap_us, path_us, profiler_us, estimate_us}). Its severity is
 * the rule's unless the capped saving grades lower (under 10 % of the
 * step: at most medium; under 3 %: low), never higher; a lowered one says
 * so in a line and in saving_cap.severity_was.
 *
 * Memory: rules_cap_paths returns an array owned by the caller (free);
 * the other calls change the JSON they are given in place. Threads: none
 * of its own; one connection per thread, as SQLite's.
 */
#ifndef TB_RULES_CAP_H
#define TB_RULES_CAP_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>

#include "base/err.h"
#include "derive/rules.h"

/* One rank's critical path, ns per steady step. */
struct rules_cap_path {
    int rank;
    double side[RULES_NSIDES]; /* RULES_SIDE_STEP: the step itself; the others with gap_ns */
    double gap_ns;             /* kernel_gap */
    double profiler_ns;        /* the profiler's host cost per step, at most the host part (less gap_ns) */
};

/* The critical path of every rank of db that has one with steps (none: *n
 * 0, e.g. a run imported before the analyses existed).
 * OUT *out, *n: owned by caller (free). Returns 0 or < 0 (e filled). */
int rules_cap_paths(sqlite3 *db, struct rules_cap_path **out, size_t *n, struct err *e);

/* The most a fix on side can save per step of path p, ns. */
double rules_cap_limit(const struct rules_cap_path *p, enum rules_side side);

/* Caps finding f (a rules_add object) of a rule on side by the path of its
 * rank among paths[0..n) (rank null: the largest limit of them): lowers
 * saving_us and says so in its evidence. 1 when it was capped, 0 when it
 * is within its cap or no path is known. */
int rules_cap_finding(json_t *f, enum rules_side side, const struct rules_cap_path *paths, size_t n);

/* low_gpu_utilization quotes its main cause's saving ("could save ~X per
 * step"): after rules_cap_finding lowered that cause's saving, the quote
 * is brought in line with it. */
void rules_cap_causes(json_t *findings);

#endif

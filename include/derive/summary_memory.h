/*
 * summary_memory.h — a rank's memory events made into allocations: each
 * allocation paired with the free of the same device and address (mem_alloc
 * rows, the innermost operator attached), frees never allocated kept as
 * negative rows, peaks per device and per step ("peak_memory" and
 * "step_memory" in the rank's analysis summary). The pending allocations
 * live in one hmap for the call; rows left open at the end are written in
 * its slot order. Called by summary.c's driver last; the allocation
 * events the CPU walk attributes are loaded here too, by the walk.
 */
#ifndef TB_SUMMARY_MEMORY_H
#define TB_SUMMARY_MEMORY_H

#include "derive/summary_rank.h"
#include "base/err.h"

/* Loads c->rank's allocation events into c->mev (owned by c, freed by the
 * driver) for summary_walk_cpu. Ids beyond 32 bits are refused. */
int summary_memory_events(struct rankctx *c, struct err *e);

/* Pairs c->rank's memory events (after the walk); adds the peaks to summary (borrowed). */
int summary_memory_pair(struct rankctx *c, const struct step *steps, size_t nsteps, json_t *summary,
                        struct err *e);

#endif

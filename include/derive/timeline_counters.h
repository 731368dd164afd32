/*
 * timeline_counters.h — the counter half of the level-of-detail build
 * (timeline.h describes the tables): registers every counter series of the
 * run in cseries (trace counters, allocated and reserved memory per device,
 * GPU busy per device, then the analyses' series when the run has them),
 * builds gpubusy by sweeping the GPU ops with a min-heap of end times, and
 * writes each series' clod buckets from one read of its samples (the rows
 * of every level counted while the samples are held, then the kept levels
 * written from them; a series longer than the hold is read again). Runs
 * inside timeline_build's transactions on their thread; memory is one
 * series' open buckets and held samples plus the peak GPU concurrency.
 */
#ifndef TB_TIMELINE_COUNTERS_H
#define TB_TIMELINE_COUNTERS_H

#include <sqlite3.h>
#include <stddef.h>

#include "base/err.h"

/* Samples held per series before falling back to a second read: 256 k
 * (4 MB), twice the longest series of a 280 MB trace. */
#define TIMELINE_COUNTERS_HOLD ((size_t)1 << 18)

/* analyses 0: registers the trace's own series (counters, memory totals, GPU
 * busy, building gpubusy) in the empty tables cseries, gpubusy and clod and
 * fills their clod; analyses 1 (later, once analyses_run has written
 * ansample): registers the analyses' series after them and fills theirs.
 * hold: the samples of a series held in memory (TIMELINE_COUNTERS_HOLD). */
int timeline_counters_build(sqlite3 *db, int analyses, size_t hold, struct err *e);

#endif

/*
 * analysis.h — the derived tables of a run, computed once at ingest from the
 * stored slices and memory events, and stored in the run database beside
 * them (so every page and `analyze` answer from small tables).
 *
 * Tables (all times integer ns on the rank's trace clock, like slice.ts):
 *   step(rank, idx, name, ts, dur, host_ts, host_dur, ngpu, kernel, memcpy,
 *        memset, comm, runtime, dataloader, cpu_exec, other)
 *        One row per kept step. [ts, ts+dur) is the step stretched over the
 *        GPU work it launched; the eight parts add up exactly to dur.
 *   gpu(rank, device, name, memory_bytes, cc, util, sm_eff, occupancy,
 *       tc_share, kernel_ns, tc_ns, window_ns)
 *        One row per GPU device seen in kernels; util/sm_eff over the steps'
 *        window; occupancy and sm_eff NULL when Kineto gave no figures.
 *   op_stat(rank, name, shape, stack, calls, host_self, host_total,
 *           dev_self, dev_total, tc_self, tc_total, tc_eligible)
 *        Operators (cpu_op slices; for an Nsight export, which has none,
 *        its CUDA API calls and NVTX ranges) grouped by name + input shapes
 *        + Python stack ("" when the trace has none); group by name alone
 *        with SUM.
 *   kernel_stat(rank, device, name, op, calls, total, min, max, tc, comm,
 *               bps_w, bps_dur, occ_w, occ_dur, limiter)
 *        GPU kernels grouped by name + launching operator ("" if none);
 *        bps_w = sum(blocks per SM x dur) over bps_dur, occ_w = sum(occ %
 *        x dur) over occ_dur, so duration-weighted means survive regrouping.
 *   mem_alloc(id, rank, dev_type, dev_id, addr, bytes, alloc_ts, free_ts, op)
 *        Allocations paired with their frees by address (free_ts NULL: alive
 *        at the end; bytes < 0 with alloc_ts NULL: a free never allocated in
 *        the trace); op is a str id of the innermost operator (0 = none).
 *   analysis(rank, summary)
 *        JSON facts: {window_ns:[t0,t1], steps_found, steps_dropped,
 *        notes:[...], peak_memory:{"<dev>":{bytes, ts, reserved}},
 *        step_memory:{"<gpu>":[{end, peak} per step]} (-1: no sample)}.
 *
 * summary_run() reads and writes through the given handle inside one
 * transaction; memory is bounded by the GPU ops of one rank (an array of
 * small records) plus the interval unions of the breakdown.
 */
#ifndef TB_SUMMARY_H
#define TB_SUMMARY_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* Creates the derived tables (emptying them if they exist) and fills them
 * for every rank of db.
 * db: an open read-write handle on a finished run database. */
int summary_run(sqlite3 *db, struct err *e);

/* The ranks of a multi-rank run derived in parallel (ingest_derive.c):
 * summary_run_rank fills the tables for one rank into db (a scratch
 * database with the run attached, store/rundb.h: its tables created there,
 * not emptied), in one transaction, without the indexes; summary_adopt
 * copies them from the scratch attached as RUNDB_ASIDE into the run's, in
 * one transaction: first empties the run's tables, last builds their
 * indexes. Adopted in rank order, the tables equal summary_run's. */
int summary_run_rank(sqlite3 *db, int rank, struct err *e);
int summary_adopt(sqlite3 *db, int first, int last, struct err *e);

/* summary_run_rank reading the host slices feed holds (derive/slice_feed.h,
 * borrowed; NULL: none) from memory: the same tables. */
struct slice_feed;
int summary_run_rank_fed(sqlite3 *db, int rank, const struct slice_feed *feed, struct err *e);

/* Breakdown category names in priority order, "other" last (static). */
extern const char *const summary_categories[9];

#endif

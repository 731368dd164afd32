/*
 * timeline.h — the level-of-detail (LOD) structure behind the timeline view:
 * built once at ingest into the run database, read per viewport request.
 *
 * Owns five tables of run.db (times integer ns, like slice.ts):
 *   lod_level(track, level)   the levels kept for each track
 *   lod rows (track, level, bucket, depth, fid, n, ts, te, ldur, name),
 *        key (track, level, bucket, depth, fid), stored packed in chunks
 *        of whole buckets in table lodpack (timeline_lod.h; a run stored
 *        before it holds them as rows of a table lod). At level L a
 *        bucket is [b·2^L, (b+1)·2^L) ns. A row stands for the slices of one
 *        (track, depth) that start in bucket b: either all of those shorter
 *        than 2^L ns (n of them; ts = first start, te = latest end, ldur
 *        and name = the longest), or one slice of 2^L ns or more alone
 *        (n = 1, fid = its id), so a long slice is never hidden in a merge.
 *        fid is the first slice id of the row (ids follow time).
 *   cseries(id, rank, src, key1, key2, name, unit) and
 *   clod rows (series, level, bucket, n, fts, min, max, last, lts), key
 *        (series, level, bucket), stored packed in table clodpack
 *        (timeline_counters.h; a run stored before holds table clod):
 *        counter series (table counter: src 0, key1 = name id; table mem:
 *        src 1 = total allocated, 2 = total reserved, key1/key2 = device
 *        type/id; table gpubusy: src 3, key1 = 1 (GPU), key2 = device,
 *        unit "ops"; table ansample of the analyses (analyses.h): src 4,
 *        key1 = anseries.id, key2 = its kind (queue depth per stream, copy
 *        bandwidth per kind), name and unit from anseries, registered last
 *        and only when the run has those tables) with per-bucket first ts,
 *        min, max, last value and its ts; levels >= 2 only: the samples are
 *        read from their own tables.
 *   gpubusy samples (rank, dev, ts, value), key (rank, dev, ts), stored
 *        packed in table gpubusypack (timeline_counters.h; a run stored
 *        before holds table gpubusy): the
 *        "GPU busy (GPU N)" series, a step function of the number of GPU
 *        ops (kernels, memcpys, memsets of all the device's streams; GPU
 *        annotations excluded) running at each moment, counted, not
 *        clamped (2 = two streams busy). Only transitions are kept: a
 *        sample where the count changes (changes at one instant collapse,
 *        so back-to-back ops leave none), the first one at the rank's t0
 *        (value 0) when the GPU starts idle. Every idle stretch starts
 *        with a 0 sample, so the clod bucket (and the pixel) it starts in
 *        has min 0 and a gap of 1 ns shows at any zoom. Devices: those named by the rank's GPU tracks (device 0 when
 *        none is); streams without a device count for each (gpuscan.h).
 *        Built by sweeping gpuscan_lanes (ops merged in start order) with
 *        a min-heap of the running ops' end times: memory is the peak
 *        concurrency, not the ops.
 * Levels: a slice level is kept for a track when it has at most half the
 * rows of the previous kept level (a quarter of the slices for the first)
 * and is at least 4x coarser, so the table holds at most about half a row
 * per slice and a viewport reads about 4 rows (or slices) per pixel and
 * depth. Built from one scan of the slices in id order, which also feeds
 * the window aggregates (timeline_lod.h says how a track's rows are counted,
 * then written), or at import from the writer's merge as it numbers the
 * slices (timeline_stream.h; the scan then reads only the tracks too long
 * to hold); memory is per track levels x depths plus the slices of one
 * track, bounded.
 * The search reads each name's slices from name_ids (store/nameids.h),
 * written as the writer numbers the slices; flow(rank, fid) is an index
 * the writer keeps from the start (rundb_schema.c).
 *
 * Query invariants (timeline_query): per (track, depth) at most `width`
 * items, ordered by time, each a real slice (n = 1, id > 0) or a merge of
 * n > 1 slices (id = 0, ts/dur = their extent, name = the longest); the n
 * of a depth add up exactly to the slices of that depth overlapping
 * [start, end) (ts < end and ts + dur > start, or ts = start); a slice wider
 * than two pixels is always real. Cost: O(pixels + log n) rows per track
 * (interior from the LOD, the two sub-pixel edges and the slices open at
 * start from the slice table by binary search on id). A counter gives one
 * point per pixel: first time, min, max, last.
 *
 * Memory: everything returned is owned by the caller (timeline_view_free).
 * timeline_build writes through a read-write handle inside its own
 * transactions on one thread (timeline_build_trace may run aside, on a
 * scratch database and another thread: timeline_adopt); timeline_query
 * only reads and may run on any thread with its own handle.
 */
#ifndef TB_TIMELINE_H
#define TB_TIMELINE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define TIMELINE_WIDTH_MAX 8192

/* One slice as the builders of the trace's level of detail take it
 * (timeline_lod.h, timeline_agg.h), in id order: from the import's merge
 * (timeline_stream.h) or from one read of the slice table
 * (timeline_build_trace). parent: 0 for none. */
struct timeline_slice {
    int64_t id, track, ts, dur, parent;
    uint32_t name;
    int depth;
};

/* Creates and fills the LOD tables for every rank of db, an open read-write handle on a finished run
 * database: timeline_build_trace then timeline_build_analyses. Memory is bounded by tracks x levels x
 * depths plus the slices of one track (at most TIMELINE_LOD_HOLD) or the samples of one series (at most
 * TIMELINE_COUNTERS_HOLD), not by the trace's slices. */
int timeline_build(sqlite3 *db, struct err *e);

/* Every LOD table, in db's main schema, with the slices' levels and the trace's own counter series
 * (counters, memory, GPU busy), and the slices' window aggregates (timeline_agg.h), from the trace
 * tables db sees (the run's own, or the run attached to a
 * scratch database); one transaction. Needs nothing derived. */
int timeline_build_trace(sqlite3 *db, struct err *e);

/* What timeline_build_trace adds to the slices' tables built from the
 * import's stream (timeline_stream.h) in db's main schema: the lod of the
 * n tracks it left out (tracks, ascending) from the slice table, then
 * cseries, clodpack and gpubusypack created and filled; one transaction. */
int timeline_build_trace_rest(sqlite3 *db, const int64_t *tracks, size_t n, struct err *e);

/* The analyses' counter series (after those of the trace), once analyses_run wrote them, then the
 * counters' window aggregates (timeline_agg.h); one transaction each. On run.db, or on the scratch
 * of timeline_build_trace once the series are committed in the attached run (analyses_run_then):
 * timeline_adopt then copies them too. */
int timeline_build_analyses(sqlite3 *db, struct err *e);

/* The tables of timeline_build_trace run aside (on a scratch database of rundb_open_aside, on another
 * thread while the other derived stages write run.db) copied from the scratch database attached to db
 * as RUNDB_ASIDE, replacing any there, with the analyses' lanes and the counters' window aggregates
 * when they were built there; one transaction. Else timeline_build_analyses follows. */
int timeline_adopt(sqlite3 *db, struct err *e);

/* 1 when db holds the LOD tables, 0 when it predates them, <0 on error. */
int timeline_present(sqlite3 *db, struct err *e);

/* Levels 1..TIMELINE_NLEV-1: 2 ns .. 1.6 days per bucket. */
#define TIMELINE_NLEV 48

/* floor(t / 2^level) for any sign of t: the bucket t falls in. Inline: the
 * builds run it for every level of every slice and sample. */
static inline int64_t timeline_bucket_of(int64_t t, int level)
{
    return t >= 0 ? t >> level : -((-(t + 1)) >> level) - 1;
}

/* ceil(t / 2^level). */
int64_t timeline_bucket_ceil(int64_t t, int level);

#endif

/*
 * timeline_counters.h — the counter half of the level-of-detail build
 * (timeline.h describes the tables): registers every counter series of the
 * run in cseries (trace counters, allocated and reserved memory per device,
 * GPU busy per device, then the analyses' series when the run has them),
 * builds gpubusypack by sweeping the GPU ops with a min-heap of end times, and
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
#include <stdint.h>

#include "base/err.h"
#include "base/varint.h"

/* clod's rows (timeline.h) are stored packed, as lod's are (timeline_lod.h):
 * table clodpack(series, level, bucket, last, n, rows) WITHOUT ROWID, key
 * (series, level, bucket), each row TIMELINE_CLOD_CHUNK_ROWS buckets of one
 * series and level (fewer in the last), bucket the first and last the
 * last of them; ~130 k rows of a 280 MB trace are ~1 k. A run stored before
 * has them unpacked in table clod. */
#define TIMELINE_CLOD_CHUNK_ROWS 128

/* One bucket of a counter series at a level: n samples, the first at fts,
 * the last at lts with value last, min and max of all. */
struct timeline_clod_row {
    int64_t bucket, n, fts, lts;
    double min, max, last;
};

/* A chunk's rows, decoded one at a time: each is the gap from the bucket
 * before (from the chunk's first bucket for the first), n, fts past the
 * bucket's start (below 2^level) and lts - fts, as LEB128 varints
 * (base/varint.h), then min, max and last as 8-byte IEEE doubles, low byte
 * first. */
struct timeline_clod_chunk {
    struct varint_rows rows;
    int level;
    int64_t bucket;
};

/* Starts reading the chunk of level's rows (n of them, first bucket
 * `bucket`) in blob[0..size), borrowed until the last next. */
void timeline_clod_chunk_begin(struct timeline_clod_chunk *c, int level, int64_t bucket, int64_t n, const void *blob,
                               size_t size);

/* The next row into *r: 1, 0 after the n-th, -1 when the blob is damaged
 * (and from then on). */
int timeline_clod_chunk_next(struct timeline_clod_chunk *c, struct timeline_clod_row *r);

/* gpubusy's samples (timeline.h) are stored packed too: table
 * gpubusypack(rank, dev, ts, last, n, rows) WITHOUT ROWID, key (rank, dev,
 * ts), each row TIMELINE_BUSY_CHUNK_ROWS samples of one device in time order
 * (fewer in the last), ts the first's time and last the last's; ~100 k
 * samples of a 280 MB trace are ~400 rows. A run stored before has them
 * unpacked in table gpubusy. */
#define TIMELINE_BUSY_CHUNK_ROWS 256

/* A chunk's samples, decoded one at a time: each is its time's gap from
 * the one before (from the chunk's ts for the first) and its value
 * (zigzag), as LEB128 varints. */
struct timeline_busy_chunk {
    struct varint_rows rows;
    int64_t ts;
};

/* Starts reading the chunk of n samples from time ts in blob[0..size),
 * borrowed until the last next. */
void timeline_busy_chunk_begin(struct timeline_busy_chunk *c, int64_t ts, int64_t n, const void *blob, size_t size);

/* The next sample into *ts, *v: 1, 0 after the n-th, -1 when the blob is
 * damaged (and from then on). */
int timeline_busy_chunk_next(struct timeline_busy_chunk *c, int64_t *ts, int64_t *v);

/* Samples held per series before falling back to a second read: 256 k
 * (4 MB), twice the longest series of a 280 MB trace. */
#define TIMELINE_COUNTERS_HOLD ((size_t)1 << 18)

/* analyses 0: registers the trace's own series (counters, memory totals, GPU
 * busy, building gpubusypack) in the empty tables cseries, gpubusypack and
 * clodpack and fills their clod, each series' samples read through
 * timeline_series (timeline_query.h); analyses 1 (later, once analyses_run
 * has written ansample): registers the analyses' series after them and
 * fills theirs.
 * hold: the samples of a series held in memory (TIMELINE_COUNTERS_HOLD). */
int timeline_counters_build(sqlite3 *db, int analyses, size_t hold, struct err *e);

#endif

/*
 * timeline_agg.h — precomputed window aggregates of the timeline, so that
 * the area selection of a whole 10-million-event run answers in a bounded
 * time: per track and per counter series, sums over fixed time buckets
 * (at most TIMELINE_AGG_BUCKETS over the rank's span), built once at
 * ingest: the slices' with the level of detail of the trace (fed to
 * timeline_agg_build_push by the import's merge, timeline_stream.h, or by
 * timeline_build_trace's scan; aside on a scratch database at ingest, then
 * timeline_adopt copies them), the counters' with the trace's counter
 * series (timeline_build_trace and _rest), then the analyses' series'
 * with their lanes (timeline_build_analyses).
 *
 * Owns five tables of run.db (times integer ns, like slice.ts):
 *   tagg_level(track, level) and
 *   tagg rows (track, bucket, name, n, total, self), key (track, bucket,
 *        name), stored packed in table taggpack (below; a run stored
 *        before holds table tagg): for bucket b =
 *        [b·2^level, (b+1)·2^level), per slice name: n = slices starting
 *        in it; total = the time slices of that name are open within it
 *        (each slice's time cut to the bucket); self = total minus the
 *        time, within it, of slices whose parent (slice.parent) has that
 *        name. Every quantity is an integral over time or a count by start,
 *        so a window [s, e) adds the whole buckets inside it and reads only
 *        the slices at its two edges (each under one bucket wide) exactly,
 *        giving what a scan of the whole window would.
 *   topen(track, bucket, id) WITHOUT ROWID: the slices open at each
 *        boundary b·2^level of tagg's buckets (ts < it < ts + dur), at
 *        most one per drawing level: with the parent chain of the slices
 *        started since, the slices open at any instant (timeline_open_at)
 *        in bounded work, however long a misnesting chain runs.
 *   cagg_level(series, level, last) and
 *   cagg(series, bucket, n, min, max, area, covered) WITHOUT ROWID: per
 *        counter series (cseries.id) and bucket, from the bucket of its
 *        first sample to `last` (the bucket of its last sample or of the
 *        rank's end, whichever is later): the samples in it (n, min, max;
 *        NULL when n = 0), and the step function they make (each value in
 *        force until the next sample) integrated over it: area = Σ value ×
 *        ns, covered = ns with a value in force (none before the first
 *        sample).
 *
 * Threads: the builds write through a read-write handle on one thread (the
 * slices' inside the caller's transaction, the counters' in their own); the queries only read, on any thread with its
 * own handle. Memory: the build holds one track's (bucket, name) sums at a
 * time; nothing returned is owned by the caller.
 */
#ifndef TB_TIMELINE_AGG_H
#define TB_TIMELINE_AGG_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"
#include "base/varint.h"
#include "derive/timeline.h"

#define TIMELINE_AGG_BUCKETS 256

/* taggpack(track, bucket, last, n, rows) WITHOUT ROWID, key (track, bucket):
 * a track's tagg rows in chunks of whole buckets [bucket, last], n rows in
 * key order, at least TIMELINE_AGG_CHUNK_ROWS but in the track's last:
 * 52 k rows of a 280 MB trace are ~400 chunks, an INSERT and a copy each
 * at ingest instead of 128. */
#define TIMELINE_AGG_CHUNK_ROWS 128

struct timeline_agg_row {
    int64_t bucket, n, total, self;
    uint32_t name;
};

/* A chunk's rows, decoded one at a time: each is the gap from the bucket
 * before (from the chunk's first bucket for the first), the name, then n,
 * total and self (zigzag), as LEB128 varints (base/varint.h). */
struct timeline_agg_chunk {
    struct varint_rows rows;
    int64_t bucket;
};

/* Starts reading the chunk of n rows from bucket `bucket` in
 * blob[0..size), borrowed until the last next. */
void timeline_agg_chunk_begin(struct timeline_agg_chunk *c, int64_t bucket, int64_t n, const void *blob, size_t size);

/* The next row into *r: 1, 0 after the n-th, -1 when the blob is damaged
 * (and from then on). */
int timeline_agg_chunk_next(struct timeline_agg_chunk *c, struct timeline_agg_row *r);

struct timeline_agg_build;

/* A builder of tagg_level, taggpack and topen, created (replacing any) in db's
 * main schema inside the caller's transaction, fed the slices in id order
 * (each track's contiguous and in time order) by timeline_agg_build_push:
 * timeline_build_trace's one scan of the slice table, which feeds the
 * level of detail too (timeline_lod.h); the bucket level of a track comes
 * from its rank's t0/t1, read per track. OUT *out: owned by caller
 * (timeline_agg_build_free), even on failure. */
int timeline_agg_build_begin(sqlite3 *db, struct timeline_agg_build **out, struct err *e);

/* The same fed from the import's sorted stream (timeline_stream.h), on a
 * db that need not see the run's tables: each rank's span, before its
 * slices, from timeline_agg_build_span (has_span 0: the rank row's t0 is
 * NULL, a track's first slice sets its level). */
int timeline_agg_build_begin_stream(sqlite3 *db, struct timeline_agg_build **out, struct err *e);
void timeline_agg_build_span(struct timeline_agg_build *b, int has_span, int64_t t0, int64_t t1);

/* The next slice in id order. */
int timeline_agg_build_push(struct timeline_agg_build *b, const struct timeline_slice *s, struct err *e);

/* Writes the last track's rows; call once after the last push. */
int timeline_agg_build_end(struct timeline_agg_build *b, struct err *e);

/* Frees b (NULL is fine). */
void timeline_agg_build_free(struct timeline_agg_build *b);

/* Those three tables copied from the scratch database attached to db as
 * RUNDB_ASIDE, replacing any there, inside the caller's transaction. */
int timeline_agg_adopt_slices(sqlite3 *db, struct err *e);

/* cagg_level and cagg copied likewise when the scratch holds them (the
 * trace's counters were built aside, and the analyses' lanes too when
 * timeline_build_analyses ran on it). */
int timeline_agg_adopt_counters(sqlite3 *db, struct err *e);

/* Creates cagg_level and cagg anew and fills them for every counter series
 * of cseries; one transaction. Each series' rows depend on its samples
 * alone: the trace's are built with its counters, the analyses' added with
 * their lanes (timeline_agg_add_counters), off the import's last stage. */
int timeline_agg_build_counters(sqlite3 *db, struct err *e);

/* The same for the series of cseries that have none yet (the tables
 * created when missing); one transaction. */
int timeline_agg_add_counters(sqlite3 *db, struct err *e);

/* The whole buckets of track inside [start, end): *lo and *hi (ns, lo <=
 * hi) bound them, and add(ctx, name, n, total, self) is called for each
 * stored row in them (several per name: sum them). *lo == *hi when the
 * window holds no whole bucket or the run predates the tables (then the
 * caller reads every slice). */
int timeline_agg_slices(sqlite3 *db, int64_t track, int64_t start, int64_t end, int64_t *lo, int64_t *hi,
                        void (*add)(void *ctx, uint32_t name, int64_t n, int64_t total, int64_t self), void *ctx,
                        struct err *e);

/* Parent hops timeline_open_at walks on a run without topen. */
#define TIMELINE_OPEN_WALK 4096

/* The slices of track open at t (ts < t < ts + dur), ascending ids: before
 * is the last id of the track starting before t, first the track's first
 * id. OUT *ids: owned by caller (free). */
int timeline_open_at(sqlite3 *db, int64_t track, int64_t t, int64_t before, int64_t first, int64_t **ids, size_t *n,
                     struct err *e);

/* A counter series over a window: the samples in [start, end) plus the one
 * in force at start (n, min, max), and the time-weighted mean: each value
 * counts for the time it is in force within the window (area / covered;
 * before the series' first sample nothing counts). */
struct timeline_cstats {
    int64_t n;
    double min, max;
    double area;      /* Σ value × ns in force */
    int64_t covered;  /* ns of the window with a value in force */
};

/* Fills *out for series over [start, end): whole buckets from cagg, the
 * edges from the samples (all of them when the run predates the tables).
 * out->n == 0: no sample and none in force (or no such series). */
int timeline_agg_counter(sqlite3 *db, int64_t series, int64_t start, int64_t end, struct timeline_cstats *out,
                         struct err *e);

#endif

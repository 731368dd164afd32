/*
 * timeline_stream.h — the slices' level of detail and window aggregates
 * (timeline_lod.h, timeline_agg.h) built from the import's sorted stream
 * while the writer inserts the rows (rundb_writer.h's slice sink), instead
 * of from a scan of the slice table once they are committed: the merge's
 * thread hands each numbered slice over, and a thread of its own feeds
 * both builders, writing into a scratch database (the run's "aside" file)
 * that timeline_build_trace_rest completes and timeline_adopt copies.
 *
 * Covered: every rank of one import, in the order the writer drains them
 * (one builder over all, the ids ascending across ranks). Left to the scan:
 * a track longer than the builder's hold (its lod needs the slice table
 * read again: listed by timeline_stream_deferred for
 * timeline_build_trace_rest), and everything the stream did not see: a
 * re-derive (after a rank renumbering, or of an old run) and a failure
 * here (the caller then runs timeline_build_trace on a fresh scratch).
 *
 * Threads: the sink's callbacks run on the draining thread and only copy
 * records into a bounded queue (TIMELINE_STREAM_QUEUE records; the
 * producer waits when it is full); the builders and the scratch connection
 * belong to the stream's thread. Memory: the queue (~2 MB) plus the
 * builders' hold (timeline_lod.h), whatever the trace. The stream owns its
 * thread and scratch connection (closed by timeline_stream_finish).
 */
#ifndef TB_TIMELINE_STREAM_H
#define TB_TIMELINE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "store/rundb_writer.h"

#define TIMELINE_STREAM_QUEUE ((size_t)32 << 10)

struct timeline_stream;

/* Starts the thread on a new scratch database at scratch_path (any old
 * file replaced), holding up to hold slices per track (TIMELINE_LOD_HOLD).
 * OUT *out: owned by caller (timeline_stream_free); NULL on failure. */
int timeline_stream_start(const char *scratch_path, size_t hold, struct timeline_stream **out, struct err *e);

/* The sink to give the writer (rundb_set_slice_sink); valid until
 * timeline_stream_free. */
void timeline_stream_sink(struct timeline_stream *ts, struct rundb_slice_sink *out);

/* After the last rank's drain: waits for the thread, which commits the
 * tables and closes the scratch. 0: lod, lod_level, tagg_level, tagg and
 * topen are complete but for the deferred tracks' lod; *e is untouched.
 * It flushes the sink's last batch, so the sink's last call must have
 * returned (the writer's rows committed): it may then run on any thread. */
int timeline_stream_finish(struct timeline_stream *ts, struct err *e);

/* After a successful finish: the tracks whose lod is left to
 * timeline_build_trace_rest, ascending (borrowed from ts). */
const int64_t *timeline_stream_deferred(const struct timeline_stream *ts, size_t *n);

/* Stops the thread if it still runs (its tables are then incomplete) and
 * frees ts (NULL is fine). */
void timeline_stream_free(struct timeline_stream *ts);

#endif

/*
 * timeline_lod.h — the builder of the slices' level of detail (the lod and
 * lod_level tables of timeline.h), fed one slice at a time: timeline.c's
 * single scan of the slice table pushes every row, in id order, to this
 * builder and to the window aggregates' (timeline_agg.h), so the table is
 * read once for both.
 *
 * Fed from the import's sorted stream instead (timeline_lod_begin_stream,
 * timeline_stream.h): the builder needs only each track's (max_depth,
 * nslices), given after its last slice (timeline_lod_track), and slices in
 * id order, each track's in time order and contiguous (as the writer
 * numbers them). A track longer than the hold cannot be read again there
 * (the slice table is not committed yet): it is left out, lod_level
 * included, and listed (timeline_lod_deferred) for timeline_build_trace_rest
 * to build from the slice table.
 *
 * Per track the builder counts the rows every level would have while the
 * slices arrive and holds them (24 bytes each, up to `hold` of them); at
 * the track's end it picks the kept levels and writes them one at a time
 * from what it holds, each level's rows sorted in lod's key order (at most
 * a quarter of the slices: SQLite appends them instead of searching the
 * b-tree for each). A track of more than `hold` slices (by the track
 * table's count, or found on the way; or whose ids are not contiguous) is
 * read again from the slice table by id range, its rows written as they
 * come, and what it held is freed: memory stays bounded by about 40 bytes
 * per held slice (a level has at most hold / 4 rows) plus tracks x levels x
 * depths, whatever the trace.
 *
 * Memory: the builder is owned by the caller (timeline_lod_free); it
 * writes through db inside the caller's transaction, on the caller's
 * thread only.
 */
#ifndef TB_TIMELINE_LOD_H
#define TB_TIMELINE_LOD_H

#include <sqlite3.h>
#include <stddef.h>

#include "base/err.h"
#include "derive/timeline.h"

/* The slices held per track before falling back to a second read: 1.5 M
 * (36 MB), more than any track of a 458 MB with_stack trace (its main
 * thread has 770 k: left to the second read, it made the timeline the
 * import's last stage, 1.1 s of CPU after the indexes). */
#define TIMELINE_LOD_HOLD ((size_t)1536 << 10)

/* The builder's tables, in main (a scratch database's when built aside). */
#define TIMELINE_LOD_SCHEMA \
    "DROP TABLE IF EXISTS main.lod; DROP TABLE IF EXISTS main.lod_level;" \
    "CREATE TABLE main.lod_level(track INTEGER, level INTEGER, PRIMARY KEY(track, level)) WITHOUT ROWID;" \
    "CREATE TABLE main.lod(track INTEGER, level INTEGER, bucket INTEGER, depth INTEGER, fid INTEGER, n INTEGER," \
    " ts INTEGER, te INTEGER, ldur INTEGER, name INTEGER," \
    " PRIMARY KEY(track, level, bucket, depth, fid)) WITHOUT ROWID;"

struct timeline_lod;

/* A builder writing into the empty lod and lod_level tables of db's main
 * schema, holding up to hold slices per track. OUT *out: owned by caller
 * (timeline_lod_free), even on failure. */
int timeline_lod_begin(sqlite3 *db, size_t hold, struct timeline_lod **out, struct err *e);

/* The same fed from a stream (see above), on a db that need not see the
 * run's tables: creates (replacing any) the empty lod and lod_level tables
 * in db's main schema, inside the caller's transaction. */
int timeline_lod_begin_stream(sqlite3 *db, size_t hold, struct timeline_lod **out, struct err *e);

/* Streamed: the track whose slices were just pushed has ended; its row's
 * max_depth and nslices (present 0: it has no row, not drawn). */
void timeline_lod_track(struct timeline_lod *b, int64_t track, int present, int max_depth, int64_t nslices);

/* Streamed, after timeline_lod_end: the tracks left out, ascending (*n of
 * them; borrowed from b). */
const int64_t *timeline_lod_deferred(const struct timeline_lod *b, size_t *n);

/* The next slice in id order. */
int timeline_lod_push(struct timeline_lod *b, const struct timeline_slice *s, struct err *e);

/* Writes the last track's rows; call once after the last push. */
int timeline_lod_end(struct timeline_lod *b, struct err *e);

/* Frees b (NULL is fine). */
void timeline_lod_free(struct timeline_lod *b);

#endif

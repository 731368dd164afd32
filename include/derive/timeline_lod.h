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
#include <stdint.h>

#include "base/err.h"
#include "base/varint.h"
#include "derive/timeline.h"

/* The slices held per track before falling back to a second read: 1.5 M
 * (36 MB), more than any track of a 458 MB with_stack trace (its main
 * thread has 770 k: left to the second read, it made the timeline the
 * import's last stage, 1.1 s of CPU after the indexes). */
#define TIMELINE_LOD_HOLD ((size_t)1536 << 10)

/* The builder's tables, in main (a scratch database's when built aside).
 * lodpack holds lod's rows (one per depth and bucket of a kept level, or
 * per long slice: see timeline.h) packed in chunks, each the rows of whole
 * buckets [bucket, last] of one track and level, n of them, in key order
 * (bucket, depth, fid), at least TIMELINE_LOD_CHUNK_ROWS but in the last
 * chunk: ~250 k rows of a 280 MB trace are ~2 k chunks, each an INSERT and
 * a copy at the adopt instead of 128 (the rows were a tenth of the
 * import's CPU). A run stored before has the rows unpacked, in table lod
 * (same columns as timeline_lod_row, plus track and level): its readers
 * read that. */
#define TIMELINE_LOD_SCHEMA \
    "DROP TABLE IF EXISTS main.lodpack; DROP TABLE IF EXISTS main.lod_level; DROP TABLE IF EXISTS main.lod;" \
    "CREATE TABLE main.lod_level(track INTEGER, level INTEGER, PRIMARY KEY(track, level)) WITHOUT ROWID;" \
    "CREATE TABLE main.lodpack(track INTEGER, level INTEGER, bucket INTEGER, last INTEGER, n INTEGER, rows BLOB," \
    " PRIMARY KEY(track, level, bucket)) WITHOUT ROWID;"

#define TIMELINE_LOD_CHUNK_ROWS 128

/* One row of lod: the n slices of one depth starting in bucket (ts the
 * first's start, te the latest end, ldur and name the longest's, fid the
 * first's id), or one long slice (n 1). */
struct timeline_lod_row {
    int64_t bucket, fid, n, ts, te, ldur;
    int depth;
    uint32_t name;
};

/* A chunk's rows, decoded one at a time: each is its gaps from the row
 * before (the chunk's first bucket and the fid 0 before the first), as
 * LEB128 varints (base/varint.h): the bucket's, the depth, the fid's
 * (zigzag), n, ts past the bucket's start (below 2^level), te - ts and ldur
 * (zigzag both) and the name. */
struct timeline_lod_chunk {
    struct varint_rows rows;
    int level;
    int64_t bucket, fid;
};

/* Starts reading the chunk of level's rows (n of them, first bucket
 * `bucket`) in blob[0..size), borrowed until the last next. */
void timeline_lod_chunk_begin(struct timeline_lod_chunk *c, int level, int64_t bucket, int64_t n, const void *blob,
                              size_t size);

/* The next row into *r: 1, 0 after the n-th, -1 when the blob is damaged
 * (it ends early, or a value is out of range). */
int timeline_lod_chunk_next(struct timeline_lod_chunk *c, struct timeline_lod_row *r);

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

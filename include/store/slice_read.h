/*
 * slice_read.h — the store's read layer for the slice queries the scan
 * cursors (store/scan.h) do not cover: point lookups by slice id (a
 * slice's parent, name and kind; the GPU op before one on its stream), the
 * copies of a rank's GPU streams with their byte counts (from args), the
 * compute kernels of a rank in time order, host collective spans summed
 * by name or listed by name id, and walks by id inside one track
 * (slice_read_ids).
 *
 * Reads slice, track, str and kernel_stat. Kinds and track kinds are bound
 * as parameters, never written in the SQL; one track's slices are one id
 * range in (ts, -dur) order (track.first_slice/last_slice), which the range
 * queries rely on. Every step returns 1 for a row, 0 at the end and < 0 (an
 * enum err_code, e filled by rundb_db_error) on an error, so a loop never
 * takes a database error for the end of the rows.
 *
 * Memory: each handle or cursor is owned by its caller (its _close) and
 * borrows the connection, which must outlive it and be used by one thread
 * at a time. Names in rows are borrowed until the next call on the same
 * object.
 */
#ifndef TB_SLICE_READ_H
#define TB_SLICE_READ_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"
#include "store/model.h"
#include "store/scan.h"
#include "store/stats_read.h"

/* Point lookups by slice id, prepared once for many calls. */
struct slice_read;
int slice_read_open(sqlite3 *db, struct slice_read **out, struct err *e);
void slice_read_close(struct slice_read *r);

struct slice_read_up {
    int64_t parent; /* 0: top level */
    const char *name;
    enum tb_kind kind;
};
/* The parent, name and kind of slice id: 1 (row filled), 0 when there is
 * no such slice, < 0 on an error. */
int slice_read_up(struct slice_read *r, int64_t id, struct slice_read_up *row, struct err *e);

/* OUT *end: the end of the last GPU op (kernel, copy, memset) with an id in
 * [first, id), i.e. the op before slice id on its stream when first is the
 * stream's first slice: 1, 0 when none, < 0 on an error. */
int slice_read_prev_op_end(struct slice_read *r, int64_t id, int64_t first, int64_t *end, struct err *e);

/* The copies (TB_K_MEMCPY) on the GPU streams of rank whose name is LIKE
 * pattern, stream by stream (in SQLite's order of the streams), each
 * stream's in id order. */
struct slice_read_copies;
struct slice_read_copy {
    int64_t id, ts, dur, corr;
    int64_t bytes; /* args.bytes; 0 when not recorded */
    const char *name;
};
int slice_read_copies_open(sqlite3 *db, int rank, const char *pattern, struct slice_read_copies **out, struct err *e);
/* Moves to the next stream: 1 (OUT *first: its first slice id), 0 after
 * the last, < 0 on an error. */
int slice_read_copies_track(struct slice_read_copies *c, int64_t *first, struct err *e);
/* The next copy of the current stream: 1, 0 at its end, < 0 on an error. */
int slice_read_copies_next(struct slice_read_copies *c, struct slice_read_copy *row, struct err *e);
void slice_read_copies_close(struct slice_read_copies *c);

/* The kernels on rank's GPU streams with ids in [lo, hi] that are not
 * collectives (no kernel_stat row flags their name comm), by start time:
 * rows from slice_read_spans_next. */
struct slice_read_spans;
int slice_read_compute_open(sqlite3 *db, int rank, int64_t lo, int64_t hi, struct slice_read_spans **out,
                            struct err *e);
int slice_read_spans_next(struct slice_read_spans *c, int64_t *ts, int64_t *dur, struct err *e);
void slice_read_spans_close(struct slice_read_spans *c);

/* The operator and annotation spans of rank named gloo:* or nccl:* (GLOB,
 * barriers aside), summed by name, most time first (ties by str id): id,
 * name, total = ns, count = spans. OUT *out: owned by caller
 * (stats_read_groups_free). */
int slice_read_host_colls(sqlite3 *db, int rank, struct stats_read_group **out, size_t *n, struct err *e);

/* The operator and annotation spans on rank's host tracks whose name is
 * LIKE any of pats[0..npats) (facts_names_open: at most
 * FACTS_MAX_PATTERNS), name by name, each in (track, ts) order, through
 * name_ids (store/nameids.h). OUT *out, *n: owned by caller (free), NULL
 * and 0 on an error. */
int slice_read_named_spans(sqlite3 *db, int rank, const char *const *pats, size_t npats, struct scan_slice **out,
                           size_t *n, struct err *e);

/* Walks by slice id inside one track, for searches that jump (the critical
 * path): a track's id range, a binary-search probe, one slice by id and a
 * walk over an id range in id order (start order within a track), leaving
 * out one kind. Prepared once for many calls; one walk at a time. */
struct slice_read_ids;
/* skip: the kind the range walk leaves out. */
int slice_read_ids_open(sqlite3 *db, enum tb_kind skip, struct slice_read_ids **out, struct err *e);
void slice_read_ids_close(struct slice_read_ids *r);
/* OUT *first, *last: the id range of track: 1, 0 when it has no slices,
 * < 0 on an error. */
int slice_read_ids_track(struct slice_read_ids *r, int64_t track, int64_t *first, int64_t *last, struct err *e);
/* The first slice with an id in [lo, hi] (OUT *id, *ts): 1, 0 when none,
 * < 0 on an error. */
int slice_read_ids_first(struct slice_read_ids *r, int64_t lo, int64_t hi, int64_t *id, int64_t *ts, struct err *e);
/* Slice id (any kind): 1 (row filled; its track is not read: 0), 0 when
 * none, < 0 on an error. */
int slice_read_ids_get(struct slice_read_ids *r, int64_t id, struct scan_slice *row, struct err *e);
/* Starts a walk over the slices with ids in [lo, hi] but the skipped kind;
 * rows from slice_read_ids_next (1, 0 at the end, < 0 on an error). */
void slice_read_ids_begin(struct slice_read_ids *r, int64_t lo, int64_t hi);
int slice_read_ids_next(struct slice_read_ids *r, struct scan_slice *row, struct err *e);
/* Ends the walk early (its statement let go of the rows). */
void slice_read_ids_end(struct slice_read_ids *r);

#endif

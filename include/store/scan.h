/*
 * scan.h — the store's read layer for the derive stage: typed cursors over
 * the slices of one rank, so that no rule or analysis keeps its own copy of
 * the per-track scan or spells a kind number inside SQL.
 *
 * A slice cursor visits the tracks of a rank that match a track selection,
 * in track id order, and in each the slices whose kind is in a kind set, in
 * id order, which is (track, ts, -dur) order: the table is clustered so and
 * track.first_slice/last_slice bound each track's ids. Kinds (enum tb_kind)
 * and track kinds (enum tb_track_kind) are bound as SQL parameters, never
 * written in the statement text. Beside the cursors: the launch call of a
 * GPU op by correlation id (scan_launch_of; its preload also keeps the
 * host slices a host cursor reads, scan_launch_acts), a table's presence,
 * and scan_step for the statements derive still prepares itself.
 *
 * Every step returns 1 for a row, 0 at the end and < 0 (an enum err_code,
 * with e filled by rundb_db_error: ERR_DAMAGED for a garbled run.db) on an
 * error, so a loop never takes a database error for the end of the rows.
 *
 * Memory: a cursor is owned by its caller (scan_slices_close); it borrows
 * the connection, which must outlive it and be used by one thread at a
 * time. Rows are copied out: they stay valid after the next step.
 */
#ifndef TB_SCAN_H
#define TB_SCAN_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"
#include "store/model.h"

/* A set of slice kinds: SCAN_KIND(TB_K_KERNEL) | SCAN_KIND(TB_K_MEMCPY). */
#define SCAN_KIND(k) (1u << (unsigned)(k))
#define SCAN_KINDS_ALL ((1u << TB_K_COUNT) - 1u)
/* Work on a GPU stream: kernels, copies, memsets. */
#define SCAN_GPU_OPS (SCAN_KIND(TB_K_KERNEL) | SCAN_KIND(TB_K_MEMCPY) | SCAN_KIND(TB_K_MEMSET))
/* Host calls that launch GPU work, with the correlation id of their op. */
#define SCAN_LAUNCHES (SCAN_KIND(TB_K_RUNTIME) | SCAN_KIND(TB_K_DRIVER))

/* Which tracks of the rank a cursor visits. */
enum scan_tracks {
    SCAN_TRACKS_ALL = 0,
    SCAN_TRACKS_GPU,  /* track.kind = TB_TRACK_GPU: GPU streams */
    SCAN_TRACKS_HOST, /* track.kind != TB_TRACK_GPU: CPU threads and others */
};

/* One slice row. parent is 0 for a top-level slice, corr 0 when none. */
struct scan_slice {
    int64_t id, track, ts, dur, parent, corr;
    uint32_t name; /* id into str */
    enum tb_kind kind;
};

struct scan_slices;

/* The kinds whose slices say what a host thread is doing (derive/gpuscan.h
 * classes them by name): operators, annotations, launch calls. */
#define SCAN_HOST_ACTS (SCAN_KIND(TB_K_CPU_OP) | SCAN_KIND(TB_K_USER_ANNOTATION) | SCAN_LAUNCHES)

/* A slice as a host cursor reads it (24 bytes: held by the hundred
 * thousand). */
struct scan_brief {
    int64_t ts, dur;
    uint32_t name;
    uint8_t kind; /* enum tb_kind */
};

/* Opens a cursor over the slices of rank (< 0: every rank) on the tracks
 * of sel whose kind is in kinds (a SCAN_KIND set). An error preparing the
 * statements is returned as rundb_prepare's.
 * OUT *out: owned by caller (scan_slices_close), NULL on failure. */
int scan_slices_open(sqlite3 *db, int rank, enum scan_tracks sel, unsigned kinds, struct scan_slices **out,
                     struct err *e);

/* The next slice in track then id order, across tracks: 1 (row filled),
 * 0 at the end, < 0 on an error. */
int scan_slices_next(struct scan_slices *c, struct scan_slice *row, struct err *e);

/* For scans that work track by track: moves to the next track (OUT *track:
 * its id, may be NULL). 1 when there is one, 0 after the last, < 0 on an
 * error. */
int scan_slices_track(struct scan_slices *c, int64_t *track, struct err *e);

/* OUT *first, *last: the slice id range of the current track (after
 * scan_slices_track returned 1). */
void scan_slices_range(const struct scan_slices *c, int64_t *first, int64_t *last);

/* The next slice of the current track: 1 (row filled), 0 at the track's end
 * (or before the first scan_slices_track), < 0 on an error. */
int scan_slices_step(struct scan_slices *c, struct scan_slice *row, struct err *e);

/* Frees c (NULL is fine). */
void scan_slices_close(struct scan_slices *c);

/* Point lookups of the host call that launched a GPU op: a runtime or
 * driver slice (SCAN_LAUNCHES) of the rank with the op's correlation id.
 * Memory: owned by the caller (scan_launch_close); borrows db. */
struct scan_launch;

/* Prepares the lookup over rank's slices (any track: the calls sit on CPU
 * threads). OUT *out: owned by caller, NULL on failure. */
int scan_launch_open(sqlite3 *db, int rank, struct scan_launch **out, struct err *e);

/* Reads every launch call of the rank once (at most max of them), in one
 * pass over its slices, so that scan_launch_of answers from memory (the
 * same answers) and scan_launch_rows lists them: for callers that look up
 * about one launch per GPU op, or walk every launch call. 72 bytes a call;
 * a rank with more than max keeps the point lookups. The same pass keeps,
 * when the rank holds at most amax slices of any kind (0: none wanted),
 * the SCAN_HOST_ACTS slices of every track (scan_launch_acts): a host
 * cursor's rows, read once instead of once per cursor. Returns 1 when the launches are preloaded
 * (now or before), 0 when there were too many, < 0 on an error. */
#define SCAN_LAUNCH_PRELOAD_MAX ((size_t)1 << 19)
int scan_launch_preload(struct scan_launch *l, size_t max, size_t amax, struct err *e);

/* Slices a caller holds in memory (derive/slice_feed.h: the import's sorted
 * stream), read instead of run.db by scan_launch_preload: track(arg,
 * track, first, last) returns the caller's rows of a track when it holds
 * exactly its ids first..last (NULL: read the table), row(rows, i, out)
 * fills out with the i-th of them (id first + i; out->id and out->track
 * are set by the caller), as the table would. */
struct scan_held {
    const void *(*track)(const void *arg, int64_t track, int64_t first, int64_t last);
    void (*row)(const void *rows, int64_t i, struct scan_slice *out);
    const void *arg;
};

/* The preload of l reads the tracks held holds from it (the same rows, so
 * the same answers). held is borrowed until scan_launch_preload returns;
 * NULL: none. */
void scan_launch_hold(struct scan_launch *l, const struct scan_held *held);

/* The SCAN_HOST_ACTS slices the preload kept of the rank's i-th track (in
 * track id order): 1 (OUT *track, *rows, *n: its id and its rows in id
 * order, borrowed until scan_launch_close), 0 when i is past the last
 * track or none were kept. */
int scan_launch_acts(const struct scan_launch *l, size_t i, int64_t *track, const struct scan_brief **rows,
                     size_t *n);

/* The preloaded launch calls of the rank (every track, corr 0 included),
 * in track then id order, as scan_slices_next gives them: 1 (*rows
 * borrowed until scan_launch_close), 0 when not preloaded. */
int scan_launch_rows(const struct scan_launch *l, const struct scan_slice **rows, size_t *n);

/* 1 when track is one of the rank's host tracks (not a GPU stream). */
int scan_launch_on_host(const struct scan_launch *l, int64_t track);

/* The launch call of the op with correlation id corr, the earliest (then
 * the longest, then the first stored) when several share it: 1 (row
 * filled), 0 when none (corr 0 never matches), < 0 on an error. */
int scan_launch_of(struct scan_launch *l, int64_t corr, struct scan_slice *row, struct err *e);

/* Frees l (NULL is fine). */
void scan_launch_close(struct scan_launch *l);

/* The id range [*first, *last] of the slices of rank (< 0: every rank),
 * i.e. min(first_slice) and max(last_slice) of its tracks with slices, for
 * queries bounded by slice id. 1 when the rank has slices, 0 when it has
 * none (*first > *last then), < 0 on an error. */
int scan_slice_range(sqlite3 *db, int rank, int64_t *first, int64_t *last, struct err *e);

/* OUT *n: how many slices the tracks of rank (< 0: every rank) that sel
 * selects hold (their nslices), for a caller sizing what it holds before a
 * pass. Returns 0 or < 0 on an error. */
int scan_slices_count(sqlite3 *db, int rank, enum scan_tracks sel, int64_t *n, struct err *e);

/* OUT *first, *last: the slice id range of track (by track id): 1, 0 when
 * it has no slices, < 0 on an error. */
int scan_track_range(sqlite3 *db, int64_t track, int64_t *first, int64_t *last, struct err *e);

/* The id ranges of the GPU streams of rank on device (streams without a
 * device too), in track id order. OUT *out: owned by caller (free). */
struct scan_ids {
    int64_t first, last;
};
int scan_device_streams(sqlite3 *db, int rank, int device, struct scan_ids **out, size_t *n, struct err *e);

/* A cursor over the slices with ids in a range whose kind is in a kind set,
 * in id order; moved to a new range at will (scan_range_set), prepared
 * once. Its rows leave track and parent 0 (not read). Memory: owned by its
 * caller (scan_range_close), borrows db. */
struct scan_range;
int scan_range_open(sqlite3 *db, unsigned kinds, struct scan_range **out, struct err *e);
/* Starts over on the ids [lo, hi]. */
void scan_range_set(struct scan_range *c, int64_t lo, int64_t hi);
/* 1 (row filled), 0 at the end of the range, < 0 on an error. */
int scan_range_next(struct scan_range *c, struct scan_slice *row, struct err *e);
void scan_range_close(struct scan_range *c);

/* Names by str id, prepared once. Memory: owned by its caller
 * (scan_names_close), borrows db. */
struct scan_names;
int scan_names_open(sqlite3 *db, struct scan_names **out, struct err *e);
/* The text of str id: 1 (*s borrowed until the next call; NULL for a NULL
 * text), 0 when the id is unknown, < 0 on an error. */
int scan_name(struct scan_names *c, uint32_t id, const char **s, struct err *e);
void scan_names_close(struct scan_names *c);

/* Whether run.db has the table name (a derived table that runs imported
 * before it existed lack), in any schema of db (run.db may be attached to
 * a scratch): 1 yes, 0 no, < 0 on an error. */
int scan_has_table(sqlite3 *db, const char *name, struct err *e);

/* For the store's other readers (scan_span.c): the columns of a slice row
 * over `slice s`, in the order scan_slice_row copies them out. */
#define SCAN_SLICE_COLS "s.id, s.track, s.ts, s.dur, s.parent, s.name, s.kind, s.corr"
void scan_slice_row(sqlite3_stmt *st, struct scan_slice *row);

/* Steps a statement of the caller's: 1 for SQLITE_ROW, 0 for SQLITE_DONE,
 * else rundb_db_error(db, e, what) (< 0). The one way a loop over a fixed
 * statement tells the end of the rows from an error. */
int scan_step(sqlite3_stmt *st, struct err *e, const char *what);

/* For the store's readers (facts, stats_read, slice_read): prepares sql
 * with args[0..n) bound as ?1..?n (integers: ranks, ids, times, kinds). */
int scan_prepare_args(sqlite3 *db, const char *sql, const int64_t *args, size_t n, sqlite3_stmt **st, struct err *e);
/* The same with rank alone, their common first parameter, as ?1. */
int scan_prepare_rank(sqlite3 *db, const char *sql, int rank, sqlite3_stmt **st, struct err *e);

/* Steps st once and finalizes it: 1 when there is a row (v[0..n) its first
 * n columns as numbers; NULL reads 0), 0 when none (v zeroed), < 0 on an
 * error. */
int scan_row_nums(sqlite3_stmt *st, const char *what, double *v, int n, struct err *e);

/* Steps st to its end and finalizes it, copying each row into a new
 * element of sz bytes (zeroed, then fill(st, elem)) of a growing array.
 * OUT *out, *n: owned by caller (free), NULL and 0 on an error, after
 * drop(elem) (may be NULL) for each element read. */
int scan_collect(sqlite3_stmt *st, const char *what, size_t sz, void (*fill)(sqlite3_stmt *st, void *elem),
                 void (*drop)(void *elem), void **out, size_t *n, struct err *e);

#endif

/*
 * analyses_read.h — the store's read layer for the deeper GPU analyses
 * (derive/analyses.c): one rank's steps, its GPU streams (tracks with
 * slices, a stream number standing in for a missing name) and the GPU ops
 * on each (kernels, copies, memsets; the args of copies and memsets, whose
 * byte counts the slice cursor does not read), the slices of its host
 * threads for the launch walk, and the name of its busiest GPU. Kinds and track kinds are bound as parameters, never written in the
 * SQL. The analyses' own tables (analyses, anseries, ansample, critseg)
 * are written and read back by analyses.c itself.
 *
 * Every step returns 1 for a row, 0 at the end and < 0 (an enum err_code,
 * e filled by rundb_db_error) on an error. Memory: cursors belong to their
 * caller (..._close), borrowing the connection, which must outlive them
 * and be used by one thread at a time; a row's text is borrowed until the
 * cursor's next call.
 */
#ifndef TB_ANALYSES_READ_H
#define TB_ANALYSES_READ_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* One step of the rank, in time order; name "" for NULL. */
struct analyses_read_step {
    int idx;
    const char *name;
    int64_t ts, dur, host_ts, host_dur;
};
struct analyses_read_steps;
int analyses_read_steps_open(sqlite3 *db, int rank, struct analyses_read_steps **out, struct err *e);
int analyses_read_steps_next(struct analyses_read_steps *c, struct analyses_read_step *row, struct err *e);
void analyses_read_steps_close(struct analyses_read_steps *c);

/* One GPU stream of the rank with slices, in track id order. */
struct analyses_read_stream {
    int64_t track;
    int device;       /* -1: none */
    const char *name; /* "stream N" when the trace named none; NULL when neither */
    int64_t first, last;
};
/* One GPU op of a stream, in id order; args and nargs only for copies and
 * memsets (NULL and 0 otherwise). */
struct analyses_read_op {
    int64_t id, ts, dur, corr;
    uint32_t name;
    int kind; /* enum tb_kind */
    const char *args;
    int nargs;
};
/* A walk over the GPU streams of rank, and for the current one its ops
 * (analyses_read_ops_next, after analyses_read_streams_next returned 1). */
struct analyses_read_gpu;
int analyses_read_gpu_open(sqlite3 *db, int rank, struct analyses_read_gpu **out, struct err *e);
int analyses_read_streams_next(struct analyses_read_gpu *c, struct analyses_read_stream *row, struct err *e);
int analyses_read_ops_next(struct analyses_read_gpu *c, struct analyses_read_op *row, struct err *e);
void analyses_read_gpu_close(struct analyses_read_gpu *c);

/* One slice of a host thread, in id order (= time order on its track):
 * what the launch walk reads of each (no track: the walk knows it; one
 * column fewer than scan_slices' on the ~730 k host rows of tiled33).
 * parent 0: top level (NULL reads 0, which no slice id is). */
struct analyses_read_hslice {
    int64_t id, ts, dur, parent, corr;
    uint32_t name;
    int kind; /* enum tb_kind */
};
/* A walk over rank's host threads with slices (every track but the GPU
 * streams), in track id order, and for the current one its slices
 * (analyses_read_hslices_next, after analyses_read_hosts_next returned 1
 * with the track and its slice id range). */
struct analyses_read_hosts;
int analyses_read_hosts_open(sqlite3 *db, int rank, struct analyses_read_hosts **out, struct err *e);
int analyses_read_hosts_next(struct analyses_read_hosts *c, int64_t *track, int64_t *first, int64_t *last,
                             struct err *e);
int analyses_read_hslices_next(struct analyses_read_hosts *c, struct analyses_read_hslice *row, struct err *e);
void analyses_read_hosts_close(struct analyses_read_hosts *c);

/* The name of rank's GPU with the most kernel time into buf (n bytes; ""
 * for NULL): 1, 0 when the rank has no GPU row. */
int analyses_read_gpu_name(sqlite3 *db, int rank, char *buf, size_t n, struct err *e);

#endif

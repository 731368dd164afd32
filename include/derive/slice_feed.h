/*
 * slice_feed.h — the host slices that the summary's CPU walk and the GPU
 * analyses' launch walk read (summary_walk.h, analyses_load.h), kept from
 * the import's sorted stream (rundb_writer.h's slice sink) while the
 * writer inserts the rows: both walks, begun beside the index build, read
 * them from memory instead of reading the slice table back, and the
 * operators' input shapes are pulled from their args on the draining
 * thread, which mostly waits for the writer then.
 *
 * Kept: every slice the sink sees, in id order (the writer numbers them
 * without gaps across ranks), as a 40-byte record with its shape interned,
 * up to SLICE_FEED_MAX_ROWS rows; past that the feed drops what it holds
 * and serves nothing, so a larger trace reads the table as before and the
 * memory stays bounded. A track is served only when the feed holds all of
 * its rows and the walk asks for exactly their id range; anything else
 * (a re-derive, a renumbered run) reads the table.
 *
 * The rules read the launch calls from it too (slice_feed_held).
 *
 * Threads: filled by the sink's callbacks on the draining thread; read
 * only after the last drain, by any number of threads (the handover must
 * be ordered, as creating the readers' threads after it orders it). The
 * caller owns the feed (slice_feed_free); the pointers it returns are
 * borrowed until then.
 */
#ifndef TB_SLICE_FEED_H
#define TB_SLICE_FEED_H

#include <stdint.h>

#include "store/rundb_writer.h"
#include "store/scan.h"

/* 1.5 M slices (60 MB): a 458 MB with_stack trace fits, the 10 M-event
 * synthetic trace does not (its derive's peak is the import's). */
#define SLICE_FEED_MAX_ROWS ((int64_t)1536 << 10)

/* A slice as the walk reads it: parent 0 for none (as NULL reads), corr 0
 * for none, shape 0 for none (summary_walk_shapes gave NULL). */
struct slice_feed_row {
    int64_t ts, dur, corr;
    uint32_t parent, name, shape;
    uint8_t kind;
};

struct slice_feed;

/* An empty feed holding at most max_rows rows. Owned by caller. */
struct slice_feed *slice_feed_new(int64_t max_rows);

/* The sink to give the writer (rundb_set_slice_sink); valid until
 * slice_feed_free. */
void slice_feed_sink(struct slice_feed *f, struct rundb_slice_sink *out);

/* The rows of track, ids first..last, when f holds exactly those (a
 * pointer to first's row, last - first + 1 rows), else NULL. f may be NULL. */
const struct slice_feed_row *slice_feed_track(const struct slice_feed *f, int64_t track, int64_t first,
                                                  int64_t last);

/* The feed as rows held for the launch reader's preload (store/scan.h:
 * scan_launch_hold), the rules' read of the launch calls; out is valid
 * until slice_feed_free. f may be NULL (then nothing is held). */
void slice_feed_held(const struct slice_feed *f, struct scan_held *out);

/* The text of shape (not 0). */
const char *slice_feed_shape(const struct slice_feed *f, uint32_t shape);

/* Rows held (0 once dropped). */
int64_t slice_feed_rows(const struct slice_feed *f);

/* NULL is fine. */
void slice_feed_free(struct slice_feed *f);

#endif

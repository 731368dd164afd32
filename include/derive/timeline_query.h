/*
 * timeline_query.h — a viewport of the timeline read from the level-of-
 * detail tables timeline.h describes (see its "Query invariants"): per
 * track and depth at most `width` items, each a real slice or a merge;
 * per counter series one point per pixel; a request may narrow each
 * track to a window of depths (the rest summarized in one lane) and merge
 * deep levels coarser (timeline_query_lanes). Also the counter statistics and
 * the slice id range of a time window the slice and aggregate handlers use.
 * Everything returned is owned by the caller (timeline_view_free); the
 * functions only read, on any thread with its own read handle.
 */
#ifndef TB_TIMELINE_QUERY_H
#define TB_TIMELINE_QUERY_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "derive/timeline.h"

struct timeline_item {
    int64_t ts, dur; /* ns; for a merge, the extent of its slices */
    int64_t id;      /* slice id, 0 for a merge */
    uint32_t name;   /* str id (the longest slice of a merge) */
    uint32_t n;      /* slices it stands for */
};

struct timeline_depth {
    int depth;
    struct timeline_item *items; /* owned; ordered by ts */
    size_t nitems, cap;
};

struct timeline_track {
    int64_t id;
    struct timeline_depth *depths; /* owned; only depths with items */
    int ndepths;
    struct timeline_depth deep;    /* owned; the depths past the request's
                                      dmax merged into one lane (depth =
                                      dmax + 1; no items: nothing there) */
};

/* One track of a viewport request: depths dmin..dmax are itemized, the
 * ones above dmin left out (scrolled away), the ones past dmax summarized
 * in the track's `deep` lane (dmax = INT_MAX: none). */
struct timeline_treq {
    int64_t id;
    int dmin, dmax;
};

/* Depths at or past a request's `fine` are merged per this many pixels
 * (deep levels are small frames a user reads only zoomed in). */
#define TIMELINE_COARSE_PX 8

/* The viewport API's default `fine`: the top levels of a lane (operators,
 * annotations, a Python stack's outer frames) per pixel. */
#define TIMELINE_FINE_DEPTHS 4

struct timeline_cpoint {
    int64_t ts;       /* first sample of the pixel (start for the carried-in value) */
    double min, max, last;
};

struct timeline_counter {
    int64_t id;                     /* cseries.id */
    struct timeline_cpoint *points; /* owned, <= width + 1, by time */
    size_t npoints;
};

struct timeline_view {
    int64_t start, end; /* ns, as asked */
    int width;
    struct timeline_track *tracks; /* owned, in the order asked */
    size_t ntracks;
    struct timeline_counter *counters; /* owned */
    size_t ncounters;
    uint64_t rows_read; /* LOD + slice rows read: the cost of the answer */
};

/* Fills a view of [start, end) ns at width pixels (1..TIMELINE_WIDTH_MAX)
 * for the given tracks and counter series (ids of this run; unknown ids give
 * empty entries). OUT *out: owned by caller, free with timeline_view_free. */
int timeline_query(sqlite3 *db, int64_t start, int64_t end, int width, const int64_t *tracks, size_t ntracks,
                   const int64_t *series, size_t nseries, struct timeline_view **out, struct err *e);

/* timeline_query with a depth window per track and coarse merging from
 * depth `fine` on (INT_MAX: every depth per pixel): per (track, depth) at
 * most width items, at most width / TIMELINE_COARSE_PX + 1 for depths >=
 * fine and for the deep lane; counts still add up exactly. */
int timeline_query_lanes(sqlite3 *db, int64_t start, int64_t end, int width, const struct timeline_treq *tracks,
                         size_t ntracks, const int64_t *series, size_t nseries, int fine, struct timeline_view **out,
                         struct err *e);

void timeline_view_free(struct timeline_view *v);

/* The samples of a counter series (cseries.id), read by time whatever
 * table holds them (timeline.h; gpubusy's packed in chunks, or as rows in
 * a run stored before): timeline_series_range then timeline_series_next
 * until 0 for those in a range, timeline_series_before for the one in
 * force at a time; any number of each, in any order. One thread. */
struct timeline_series;

/* Opens series on db: 0, or 1 (*out NULL) when there is no such series.
 * OUT *out: owned by caller (timeline_series_close). */
int timeline_series_open(sqlite3 *db, int64_t series, struct timeline_series **out, struct err *e);

/* Starts reading the samples with lo <= ts < hi, in time order. */
int timeline_series_range(struct timeline_series *s, int64_t lo, int64_t hi, struct err *e);

/* The next sample of the range: 1 with *ts and *v, 0 past the last, < 0 on
 * an error (a damaged chunk: ERR_DAMAGED). */
int timeline_series_next(struct timeline_series *s, int64_t *ts, double *v, struct err *e);

/* The last sample with ts < t: 1 with *ts and *v, 0 when none, < 0 on an
 * error. Ends any range being read. */
int timeline_series_before(struct timeline_series *s, int64_t t, int64_t *ts, double *v, struct err *e);

/* NULL is fine. */
void timeline_series_close(struct timeline_series *s);

/* The id range [*lo, *hi) of the slices of track whose ts lies in
 * [t_lo, t_hi) (binary search on id; ids follow (track, ts)). */
int timeline_slice_range(sqlite3 *db, int64_t track, int64_t t_lo, int64_t t_hi, int64_t *lo, int64_t *hi,
                         struct err *e);

#endif

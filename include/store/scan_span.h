/*
 * scan_span.h — the store's read layer for "what ran inside this span":
 * the slices of a rank named with a given prefix (Optimizer.step#…), the
 * slices nested in one of them on its thread, and the GPU ops a launch call
 * started (by correlation id). Rules that attribute GPU time to a region of
 * the host code use it instead of walking parent chains themselves.
 *
 * Reads slice, track and str through the indexes the store builds
 * (name_ids for the slices of a name, corr_ids by correlation id; a run
 * stored before: index slice_corr) and the clustered
 * slice ids: one track's slices are one id range in (ts, -dur) order, so the
 * slices inside a span are the ids after it, up to the first that starts at
 * or after its end. Kinds are bound, never written in the SQL.
 *
 * Every step returns 1 for a row, 0 at the end and < 0 (an enum err_code,
 * e filled) on an error. Memory: a struct scan_span is owned by its caller
 * (scan_span_close) and borrows the connection, which must outlive it and be
 * used by one thread at a time; rows are copied out. Names returned by
 * scan_span_name are borrowed until the next call on the same object.
 */
#ifndef TB_SCAN_SPAN_H
#define TB_SCAN_SPAN_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"
#include "store/scan.h"

struct scan_span;

/* Prepares the readers over rank's slices (< 0: every rank).
 * OUT *out: owned by caller (scan_span_close), NULL on failure. */
int scan_span_open(sqlite3 *db, int rank, struct scan_span **out, struct err *e);

/* Starts a walk over the slices of the rank whose name begins with prefix
 * (case-sensitive, at most 200 bytes), in (name, track, ts) order; rows come
 * from scan_span_named_next. */
int scan_span_named_begin(struct scan_span *c, const char *prefix, struct err *e);
int scan_span_named_next(struct scan_span *c, struct scan_slice *row, struct err *e);

/* Starts a walk over the slices of span's track that start inside it
 * (span.ts <= ts < span.ts + span.dur, ids after span's), in time order;
 * rows come from scan_span_inside_next. */
int scan_span_inside_begin(struct scan_span *c, const struct scan_slice *span, struct err *e);
int scan_span_inside_next(struct scan_span *c, struct scan_slice *row, struct err *e);

/* Starts a walk over the GPU ops (kernels, copies, memsets on GPU tracks of
 * the rank) with correlation id corr (0 matches none); rows come from
 * scan_span_ops_next. */
int scan_span_ops_begin(struct scan_span *c, int64_t corr, struct err *e);
int scan_span_ops_next(struct scan_span *c, struct scan_slice *row, struct err *e);

/* The text of str id `name`: 1 (*out set, borrowed), 0 unknown, < 0 error. */
int scan_span_name(struct scan_span *c, uint32_t name, const char **out, struct err *e);

/* Rows the lookups stepped through in full-table scans so far: 0 when
 * they go through their indexes, as they must (a GPU-op lookup per launch
 * that scans the slices makes a rule quadratic). For tests. */
int scan_span_fullscan_steps(struct scan_span *c);

/* Frees c (NULL is fine). */
void scan_span_close(struct scan_span *c);

#endif

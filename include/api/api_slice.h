/*
 * api_slice.h — GET /api/runs/{id}/timeline/slice: one slice identified by
 * track + start + duration (an id is only a checked fast path), with its
 * args, parents, children, launched kernels or launcher and flows; and the
 * slice row reader the search and aggregate handlers share. The handler
 * follows the invariants in api_timeline.h: bound parameters only, 400 for
 * a bad parameter, 404 for an unknown slice, µs out. It owns nothing
 * between requests and may run on any MHD thread.
 */
#ifndef TB_API_SLICE_H
#define TB_API_SLICE_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"

struct http_req;

/* Slices one details or aggregate request reads at most. */
#define API_SCAN_MAX 20000000

/* A slice row as API_SLICE_COLS selects it. */
struct api_slice_row {
    int64_t id, track, ts, dur, parent, corr;
    int depth, kind;
    uint32_t name, cat;
};

#define API_SLICE_COLS "id, track, ts, dur, depth, coalesce(parent, 0), name, coalesce(cat, 0), kind, corr"

/* The current row of st (selecting API_SLICE_COLS) into *s. */
void api_slice_read(sqlite3_stmt *st, struct api_slice_row *s);

/* Row id through one ("SELECT API_SLICE_COLS ... WHERE id = ?") into *s;
 * 0 found, 1 not found, < 0 a database error. */
int api_slice_get(sqlite3 *db, sqlite3_stmt *one, int64_t id, struct api_slice_row *s, struct err *e);

/* GET /api/runs/{id}/timeline/slice?rank=&track=&ts=&dur=[&id=] -> one
 * slice with args, parents, launched kernels, launcher and flows. */
int api_timeline_slice(struct http_req *req);

#endif

/*
 * api_run.h — the run database a read-API request names, opened once per
 * request for the summary and timeline handlers (api_summary*.c,
 * api_timeline.c, api_slice.c, api_search.c), and the parameters and small
 * JSON helpers they share.
 *
 * api_run_open opens /api/runs/{id}'s run.db read-only, checks it holds the
 * tables the handler reads (ERR_CONFLICT for a run imported before them,
 * ERR_COMPUTING while the stage that writes them is not done),
 * settles ?rank= (ERR_NOT_FOUND, ERR_INVALID) and, for the timeline, loads
 * the rank's track ids. Every field is owned by the struct api_run except
 * id, borrowed from the request; api_run_close frees them and must be
 * called whatever api_run_open returned. One request's thread uses one
 * struct api_run; nothing here keeps state between requests.
 */
#ifndef TB_API_RUN_H
#define TB_API_RUN_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct http_req;

struct api_run {
    const char *id;  /* borrowed from the request */
    sqlite3 *db;     /* owned, read-only */
    int rank;        /* the rank asked for (or the lowest) */
    json_t *ranks;   /* owned array of every rank number */
    int64_t t0, t1;  /* the rank's time span in ns; both 0 when unknown */
    int64_t *tracks; /* owned: the rank's track ids, ascending (timeline only) */
    size_t ntracks;
};

/* What the handler reads: the analysis tables, or the timeline's (then the
 * rank's tracks are loaded too). */
enum api_run_needs { API_RUN_SUMMARY, API_RUN_TIMELINE };

/* Opens the request's run (see above). api_run_close(r) in every case. */
int api_run_open(struct http_req *req, struct api_run *r, enum api_run_needs needs, struct err *e);

/* Frees what r owns and zeroes it. */
void api_run_close(struct api_run *r);

/* Whether track id belongs to r's rank (r opened for the timeline). */
int api_run_has_track(const struct api_run *r, int64_t id);

/* ?name=1,2,3 -> ids (owned by caller). *n = 0 and *out = NULL when absent. */
int api_run_param_ids(struct http_req *req, const char *name, int64_t **out, size_t *n, struct err *e);

/* ?tracks= checked against the rank; absent: every track of the rank.
 * OUT *out owned by caller. */
int api_run_param_tracks(struct http_req *req, const struct api_run *r, int64_t **out, size_t *n, struct err *e);

/* ?start= and ?end= (µs); absent ones default to the rank's span. */
int api_run_param_window(struct http_req *req, const struct api_run *r, int required, int64_t *start, int64_t *end,
                         struct err *e);

/* The text of str id through st ("SELECT s FROM str WHERE id = ?"),
 * borrowed until the next use of st; "" when none. */
const char *api_run_str(sqlite3_stmt *st, int64_t id, size_t *n);

/* The same as a JSON string (owned by caller). */
json_t *api_run_jstr(sqlite3_stmt *st, int64_t id);

/* ns as a JSON number of µs (owned by caller). */
json_t *api_run_jus(int64_t ns);

/* Column i as a JSON string, or null (owned by caller). */
json_t *api_run_text_or_null(sqlite3_stmt *st, int i);

#endif

/*
 * api_compare.h — GET /api/compare: up to COMPARE_MAX_RUNS runs side by side
 * (the N-way compare page, web/js/views/comparen.js), each run read as the
 * diff overview's SIDE (diff_side in server/derive/diff.c), so the figures
 * are the two-run compare's, in one request instead of one per run.
 *
 * Owns nothing between requests: each request looks the runs up in the
 * catalog, opens each run.db read-only in turn (one at a time, so memory
 * does not grow with the number of runs beyond the answer) and closes it.
 *
 * Invariants: the id list is checked whole before any run is opened: 2 to
 * COMPARE_MAX_RUNS well-formed, distinct ids, else 400 naming the problem;
 * an unknown run 404, a run without that rank 404, a run imported before
 * analysis 409, a damaged run 500 run_damaged, each naming the run. The
 * json_t built is handed to http_send_json (which steals it).
 */
#ifndef TB_API_COMPARE_H
#define TB_API_COMPARE_H

#define COMPARE_MAX_RUNS 8

struct http_req;

/* GET /api/compare?runs=A,B,C[&rank=N] -> {categories, rank, runs: [SIDE
 * with id, name, created]} in the order asked; rank: the rank read of every
 * run (absent: each run's lowest). */
int api_compare_get(struct http_req *req);

#endif

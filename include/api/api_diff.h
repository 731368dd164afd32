/*
 * api_diff.h — HTTP handlers comparing two runs (or two ranks of one run):
 * GET /api/diff (overview, breakdown deltas, speedup) and
 * /api/diff/operators, /api/diff/kernels (joined tables); listed in
 * server/http/routes.c, the comparison itself is server/derive/diff.c. JSON shapes are
 * documented in docs/api.md.
 *
 * Owns nothing between requests: each request looks both runs up in the
 * catalog, opens a struct diff (read-only connection, B attached), answers
 * and closes it, so handlers may run on any MHD thread at once.
 *
 * Invariants: a missing or malformed a/b answers 400 naming it, an unknown
 * run or rank 404, a run without analysis tables 409; every other parameter
 * is checked against a range or an allow-list before use. Every json_t
 * built here is handed to http_send_json (which steals it); CSV text to
 * http_send_text (which frees it).
 */
#ifndef TB_API_DIFF_H
#define TB_API_DIFF_H

struct http_req;

/* GET /api/diff?a=ID&b=ID[&rank_a=&rank_b=&threshold=PCT] -> the overview
 * of diff_overview() with {id, name} added to each side. */
int api_diff_overview(struct http_req *req);

/* GET /api/diff/operators?a=&b=&rank_a=&rank_b=&status=&q=&sort=&order=
 * &per=step|total&threshold=&offset=&limit=&format=json|csv */
int api_diff_operators(struct http_req *req);

/* GET /api/diff/kernels?... as operators, plus group=name|family. */
int api_diff_kernels(struct http_req *req);

#endif

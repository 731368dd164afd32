/*
 * api_analysis.h — HTTP handlers that read a run's analysis tables (step,
 * gpu, op_stat, kernel_stat, mem_alloc, analysis; written at ingest by
 * server/derive/summary.c) plus its `mem` samples: /api/runs/{id}/overview,
 * /operators, /kernels, /memory and /memory/events; listed in
 * server/http/routes.c. The JSON shapes are documented in docs/api.md.
 *
 * Owns nothing between requests: each request opens the run database
 * read-only (rundb_open_ro), runs prepared statements and closes it before
 * answering, so handlers may run on any MHD thread at once.
 *
 * Invariants:
 *   - no request text ever reaches SQL text: values are bound parameters,
 *     and group/sort/order choose among fixed SQL fragments through
 *     allow-list tables; q is bound as a LIKE pattern with %, _ and \
 *     escaped (ESCAPE '\'), so it only ever matches a literal substring;
 *   - a bad parameter answers 400 naming it, an unknown run or rank 404, a
 *     run imported before the analysis tables existed 409 (re-import it);
 *   - times go out in µs (stored ns / 1000.0) on the trace clock;
 *   - the memory curve keeps, per time bucket, the first, highest and last
 *     samples (<= 3 x points), so its peak is never dropped.
 * Every json_t built here is handed to http_send_json, which steals it;
 * CSV text is handed to http_send_text, which frees it.
 *
 * This file declares the overview; the operator and kernel tables are in
 * api_summary_tables.h, memory in api_summary_memory.h, what they share
 * in api_table.h and api_run.h.
 */
#ifndef TB_API_SUMMARY_H
#define TB_API_SUMMARY_H

struct http_req;

/* GET /api/runs/{id}/overview?rank=N -> steps with their time breakdown,
 * GPUs, peak memory and notes of one rank. */
int api_summary_overview(struct http_req *req);

#endif

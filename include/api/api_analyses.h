/*
 * api_analyses.h — the HTTP handlers of the Analyses page: the per-rank
 * documents of the deeper GPU analyses and the critical path of a step,
 * both stored at ingest by analyses_run() (include/derive/analyses.h); listed in
 * server/http/routes.c, shapes in docs/api.md.
 *
 * Owns nothing between requests: each request opens the run database
 * read-only, reads the stored answer and closes it, so it may run on any
 * MHD thread. A malformed parameter answers 400 naming it; an unknown run,
 * rank or step 404, and so does a run imported before the analyses existed
 * (there is nothing stored to show; re-importing computes them). The JSON
 * built here is handed to http_send_json, which steals it.
 */
#ifndef TB_API_ANALYSES_H
#define TB_API_ANALYSES_H

struct http_req;

/* GET /api/runs/{id}/analyses?rank=R (absent: every rank) ->
 * {"run": id, "ranks": {"<rank>": doc, ...}}. */
int api_analyses_get(struct http_req *req);

/* GET /api/runs/{id}/critpath?rank=R&step=S&start=T0&end=T1 (times integer
 * ns on the rank's clock; rank absent: the lowest, step absent: every step,
 * start/end absent: unbounded) -> {"run", "rank", "step", "categories",
 * "segments": [[ts, dur, cat, track, slice], ...]}. */
int api_analyses_critpath(struct http_req *req);

#endif

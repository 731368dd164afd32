/*
 * api_timeline.h — HTTP handlers of the timeline view: track list, viewport
 * (level of detail from server/derive/timeline.c), slice details, name search and
 * window aggregation, under /api/runs/{id}/timeline...; listed in
 * server/http/routes.c. The JSON shapes are documented in docs/api.md.
 *
 * Owns nothing between requests: each request opens the run database
 * read-only (rundb_open_ro), reads it and closes it before answering, so
 * handlers may run on any MHD thread at once.
 *
 * Invariants:
 *   - request text never reaches SQL text: values are bound parameters; q is
 *     bound as a LIKE pattern with %, _ and \ escaped (ESCAPE '\');
 *   - a bad parameter answers 400 naming it, an unknown run, rank, track or
 *     slice 404, a run imported before the LOD tables existed 409;
 *   - times go out in µs (stored ns / 1000, exactly three decimals) on the
 *     trace clock; a slice is identified by track + start + duration (an id
 *     is only a fast path that is checked against them);
 *   - strings in the viewport answer are indexes into its own `strings`.
 * Every json_t built here is handed to http_send_json, which steals it; the
 * viewport text is handed to http_send_text, which frees it.
 *
 * This file declares the track list and the viewport; slice details are
 * in api_slice.h, search and aggregation in api_search.h, the run opening
 * they share in api_run.h.
 */
#ifndef TB_API_TIMELINE_H
#define TB_API_TIMELINE_H

struct http_req;

/* GET /api/runs/{id}/timeline/tracks?rank=R -> lanes, counters and steps. */
int api_timeline_tracks(struct http_req *req);

/* GET /api/runs/{id}/timeline?rank=&start=&end=&width=[&tracks=1,2][&counters=3]
 * -> at most width items per track depth, columnar, with a string table. */
int api_timeline_view(struct http_req *req);

#endif

/*
 * api_search.h — the timeline's name search and window aggregation:
 * GET /api/runs/{id}/timeline/search and /timeline/aggregate. Both follow
 * the invariants in api_timeline.h (bound parameters, q bound as an escaped
 * LIKE pattern, 400/404/409, µs out) and bound their work: a search page
 * reads each lane in time order up to a fixed count (or seeks name by name
 * when few names match) and pages by an (ts, id) cursor; its total and an
 * aggregate add the stored per-bucket sums of timeline_agg.h and read only
 * the window's edges (a run without them: at most API_SCAN_MAX slices, 413
 * past it). Nothing is kept between requests; any thread may call them.
 */
#ifndef TB_API_SEARCH_H
#define TB_API_SEARCH_H

struct http_req;

/* GET /api/runs/{id}/timeline/search?rank=&q=[&start=&end=][&limit=][&after=]
 * -> hits whose name contains q (case-insensitive) in (ts, id) order, the
 * total and the next page's cursor. */
int api_timeline_search(struct http_req *req);

/* GET /api/runs/{id}/timeline/aggregate?rank=&start=&end=[&tracks=] -> time
 * by name over the window and counter min/max/time-weighted avg. */
int api_timeline_aggregate(struct http_req *req);

#endif

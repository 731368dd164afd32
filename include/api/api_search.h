/*
 * api_search.h — the timeline's name search and window aggregation:
 * GET /api/runs/{id}/timeline/search and /timeline/aggregate. Both follow
 * the invariants in api_timeline.h (bound parameters, q bound as an escaped
 * LIKE pattern, 400/404/409, µs out) and bound their work: a search looks
 * at a limited number of names, an aggregate reads at most API_SCAN_MAX
 * slices (413 past it) and answers its largest rows. Nothing is kept
 * between requests; any MHD thread may call them.
 */
#ifndef TB_API_SEARCH_H
#define TB_API_SEARCH_H

struct http_req;

/* GET /api/runs/{id}/timeline/search?rank=&q=[&start=&end=][&limit=] -> hits
 * whose name contains q (case-insensitive), by time. */
int api_timeline_search(struct http_req *req);

/* GET /api/runs/{id}/timeline/aggregate?rank=&start=&end=[&tracks=] -> time
 * by name over the window and counter min/max/avg. */
int api_timeline_aggregate(struct http_req *req);

#endif

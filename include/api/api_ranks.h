/*
 * api_ranks.h — the HTTP handler of the Ranks page: GET
 * /api/runs/{id}/ranks?top=N answers the cross-rank comparison that
 * ranks_build() (include/derive/ranks.h) computes from the run's stored tables;
 * listed in server/http/routes.c, shape in docs/api.md.
 *
 * Owns nothing between requests: each request opens the run database
 * read-only, builds the answer and closes it, so it may run on any MHD
 * thread. A bad `top` answers 400 naming it, an unknown run 404, a run
 * imported before the analysis tables existed 409. The JSON built here is
 * handed to http_send_json, which steals it.
 */
#ifndef TB_API_RANKS_H
#define TB_API_RANKS_H

struct http_req;

/* GET /api/runs/{id}/ranks?top=1..100 (default 10) -> per-rank figures,
 * step heat map, collectives, top kernels, straggler, clock alignment. */
int api_ranks_get(struct http_req *req);

#endif

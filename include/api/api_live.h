/*
 * api_live.h — live jobs: a running job posts its log and metric lines to
 * POST /api/projects/{project}/live (job id from ?job= or each line's
 * "job_id"/"job" field), and pages follow them on GET
 * /api/projects/{project}/live, a server-sent event stream
 * (http_stream.h): the last `backlog` lines first, then each line as it
 * is stored. The lines attach to the run that later carries the same
 * project and meta job_id (api_logs.h reads them with the run's own).
 *
 * Owns nothing between requests; a stream's state (project, job, cursor)
 * is owned by the stream and freed when its client goes. Any MHD thread.
 * Times in the stream are unix µs (there is no trace yet).
 */
#ifndef TB_API_LIVE_H
#define TB_API_LIVE_H

struct http_req;

/* POST /api/projects/{project}/live?job=&rank=&tz= -> 201 {"stored", "skipped", "truncated_bytes", "last_id"}. */
int api_live_post(struct http_req *req);

/* GET /api/projects/{project}/live?job=&backlog= -> text/event-stream of
 * "line" events, data {"id", "job", "rank", "ts_us", "text", "fields"}. */
int api_live_get(struct http_req *req);

#endif

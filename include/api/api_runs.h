/*
 * api_runs.h — HTTP handlers for runs and ingest jobs (/api/health,
 * /api/runs..., /api/jobs/{n}); listed in server/http/routes.c.
 *
 * Handlers run on libmicrohttpd threads, read the shared struct app only
 * through its thread-safe services (catalog, ingest) and answer through
 * http_send_*; each returns the HTTP status it queued (see struct route).
 *
 * Upload (POST /api/runs) is the one stateful request. Its state lives in
 * http_req_data() and moves:
 *   begin (api_runs_upload.begin: checks Content-Type and query, creates
 *          DATA/tmp/upload-XXXXXX)
 *   -> receiving (chunk: bytes written to files as they arrive; multipart
 *          parsed by mpart)
 *   -> submitted (api_runs_create: the ingest job now owns the files)
 *   -> waiting (synchronous uploads only: http_defer polls the job on a
 *          helper thread; the handler runs again once it ended)
 *   -> answered;  cleanup (api_runs_upload.cleanup) always runs last and
 *          deletes the files and folder unless a job took them.
 */
#ifndef TB_API_RUNS_H
#define TB_API_RUNS_H

#include "http/routes.h"

struct http_req;

/* GET /api/health -> {"ok": true, "version": "..."}; no token needed. */
int api_runs_health(struct http_req *req);

/* GET /api/runs -> {"runs": [...], "jobs": [...]}. */
int api_runs_list(struct http_req *req);

/* POST /api/runs: multipart/form-data (file parts = ranks; fields `name`,
 * `tags`) or a raw body with ?filename=. ?async=1 answers 202 {job, url}
 * at once; otherwise 201 with the new run once imported. */
int api_runs_create(struct http_req *req);

/* Streaming hooks of POST /api/runs (see struct route_upload). */
extern const struct route_upload api_runs_upload;

/* GET /api/runs/{id} -> the catalog object plus "info" from the run db. */
int api_runs_get(struct http_req *req);

/* PATCH /api/runs/{id} with {"name"?: str, "tags"?: [str]} -> updated run. */
int api_runs_patch(struct http_req *req);

/* DELETE /api/runs/{id} -> 204. */
int api_runs_delete(struct http_req *req);

/* GET /api/runs/{id}/source?rank=N -> the original upload of that rank. */
int api_runs_source(struct http_req *req);

/* GET /api/jobs/{n} -> the ingest job's progress or result. */
int api_runs_job(struct http_req *req);

#endif

/*
 * ingest_service.h — ingest jobs for the HTTP server: a queue with worker
 * threads (cfg->ingest_workers) running ingest_run_mu; jobs are numbered,
 * their progress is readable while they run, and finished jobs are kept
 * (bounded) so a client polling for the result finds it. Also the rank
 * renumbering of a stored run, built beside it and swapped in, and the
 * backfill: a thread started with the service that computes the catalog's
 * key figures of runs stored before it kept them (joined at stop).
 *
 * Job states: queued -> running -> done | failed (set by the worker).
 * Threads: every function may be called from any thread; one mutex guards
 * the job list, the progress and the runs being renumbered. Ownership:
 * what a job keeps is copied from the request; files with `owned = 1` are
 * the job's from ingest_submit on.
 */
#ifndef TB_INGEST_SERVICE_H
#define TB_INGEST_SERVICE_H

#include <jansson.h>

#include "base/config.h"
#include "base/err.h"
#include "ingest/ingest.h"
#include "store/catalog.h"

struct ingest_service;

/* Cleans DATA/tmp, starts cfg->ingest_workers threads.
 * OUT *out: owned by caller; stop with ingest_service_stop. */
int ingest_service_start(struct catalog *cat, const struct config *cfg, struct ingest_service **out,
                         struct err *e);

/* Waits for running jobs, joins the workers, frees everything. */
void ingest_service_stop(struct ingest_service *s);

/* Queues a job. OUT *job_id. */
int ingest_submit(struct ingest_service *s, const struct ingest_request *req, int *job_id, struct err *e);

/* ingest_submit filing the run under labels (copied; may be NULL). */
int ingest_submit_labeled(struct ingest_service *s, const struct ingest_request *req,
                          const struct ingest_labels *labels, int *job_id, struct err *e);

/* Blocks until job_id ends. On success OUT run_id; on failure returns the
 * job's error code with its message in e. */
int ingest_wait(struct ingest_service *s, int job_id, char run_id[CATALOG_ID_LEN + 1], struct err *e);

/* A job as JSON (owned by caller): {id, state, phase, name, bytes_done,
 * bytes_total, events, stages: [{name, state, seconds}], run_id?, url?,
 * error?}; run_id is there once the run is visible (while it derives, its
 * state still "running"). ERR_NOT_FOUND if unknown. */
int ingest_job_json(struct ingest_service *s, int job_id, json_t **out, struct err *e);

/* Renumbers the ranks of a stored run: rank from[i] becomes to[i] (every
 * rank of the run listed once in from[]; to[] distinct, 0..1000000). The
 * renumbered run is built beside the old one in DATA/tmp/renumber-<id>-XXXXXX/
 * (run.db copied, raw tables moved, the derived ones - analysis,
 * recommendations, timeline - computed again, kept sources linked under
 * their new ranks) and swapped in with catalog_swap_run, so readers and a
 * crash see the old run or the new one, never a mix. Seconds for a big run.
 * ERR_NOT_FOUND (run), ERR_INVALID (mapping), ERR_CONFLICT (this run is
 * being renumbered already, or still deriving), ERR_NOSPACE (disk full: the old run is kept). */
int ingest_renumber(struct ingest_service *s, const char *run_id, const int *from, const int *to, int n,
                    struct err *e);

/* Jobs not yet done (queued or running, plus failures of the last hour), as a
 * JSON array (owned by caller). */
json_t *ingest_jobs_json(struct ingest_service *s);

#endif

/*
 * ingest.h — turning trace files into a committed run.
 *
 * An ingest job takes one or more trace files (one per rank), writes a new
 * run database in DATA/tmp/<id>/, and commits it by renaming the folder to
 * DATA/runs/<id>/ and inserting the catalog row. Until that last step the
 * run is invisible; a crash leaves only DATA/tmp debris, which
 * ingest_service_start() removes.
 *
 * Two ways in:
 *  - ingest_run(): synchronous, on the caller's thread (CLI import/analyze,
 *    tests).
 *  - struct ingest_service: a queue with worker threads for the HTTP server;
 *    jobs are numbered, progress is readable while they run, and finished
 *    jobs are kept (bounded) so a client polling for the result finds it.
 *
 * Job states: queued -> running -> done | failed (set by the worker).
 *
 * Ownership: ingest_* functions copy what they keep from their arguments.
 * Files handed to a job with `owned = 1` are deleted (or moved into the run)
 * by the job; others are only read.
 */
#ifndef TB_INGEST_H
#define TB_INGEST_H

#include <jansson.h>
#include <stdint.h>

#include "base/config.h"
#include "base/err.h"
#include "store/catalog.h"

struct ingest_file {
    const char *path;  /* where the bytes are now */
    const char *name;  /* original file name, shown to users and used for ranks */
    int owned;         /* 1: a temporary upload the job may move or delete */
};

struct ingest_request {
    const char *run_name;          /* NULL: derived from the file names */
    const struct ingest_file *files;
    int nfiles;
    json_t *tags;                  /* JSON array of strings or NULL (borrowed) */
};

/* Live progress of one job; written by the worker, read under the
 * service lock. */
struct ingest_progress {
    uint64_t bytes_total;   /* sum of source file sizes (compressed) */
    uint64_t bytes_done;    /* compressed bytes consumed so far */
    uint64_t events;        /* events parsed so far */
    const char *phase;      /* static string: "queued", "parse", "sort", "index", "analyze", "commit" */
};

/* Imports synchronously and commits the run into cat.
 * OUT run_id: the new run's id on success.
 * progress may be NULL. */
int ingest_run(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
               struct ingest_progress *progress, char run_id[CATALOG_ID_LEN + 1], struct err *e);

/* Creates DATA/tmp/upload-XXXXXX for an upload's files.
 * Returns the folder path (owned by caller) or NULL with e set. */
char *ingest_upload_dir(const struct config *cfg, struct err *e);

/* --- service (HTTP server) --- */
struct ingest_service;

/* Cleans DATA/tmp, starts cfg->ingest_workers threads.
 * OUT *out: owned by caller; stop with ingest_service_stop. */
int ingest_service_start(struct catalog *cat, const struct config *cfg, struct ingest_service **out,
                         struct err *e);

/* Waits for running jobs, joins the workers, frees everything. */
void ingest_service_stop(struct ingest_service *s);

/* Queues a job. OUT *job_id. */
int ingest_submit(struct ingest_service *s, const struct ingest_request *req, int *job_id, struct err *e);

/* Blocks until job_id ends. On success OUT run_id; on failure returns the
 * job's error code with its message in e. */
int ingest_wait(struct ingest_service *s, int job_id, char run_id[CATALOG_ID_LEN + 1], struct err *e);

/* A job as JSON (owned by caller): {id, state, phase, name, bytes_done,
 * bytes_total, events, run_id?, error?}. ERR_NOT_FOUND if unknown. */
int ingest_job_json(struct ingest_service *s, int job_id, json_t **out, struct err *e);

/* Renumbers the ranks of a stored run: rank from[i] becomes to[i] (every
 * rank of the run listed once in from[]; to[] distinct, 0..1000000). The
 * renumbered run is built beside the old one in DATA/tmp/renumber-<id>-XXXXXX/
 * (run.db copied, raw tables moved, the derived ones - analysis,
 * recommendations, timeline - computed again, kept sources linked under
 * their new ranks) and swapped in with catalog_swap_run, so readers and a
 * crash see the old run or the new one, never a mix. Seconds for a big run.
 * ERR_NOT_FOUND (run), ERR_INVALID (mapping), ERR_CONFLICT (this run is
 * being renumbered already), ERR_NOSPACE (disk full: the old run is kept). */
int ingest_renumber(struct ingest_service *s, const char *run_id, const int *from, const int *to, int n,
                    struct err *e);

/* Jobs not yet done (queued or running, plus failures of the last hour), as a
 * JSON array (owned by caller). */
json_t *ingest_jobs_json(struct ingest_service *s);

#endif

/*
 * ingest.h — turning trace files into a committed run.
 *
 * An ingest job takes one or more trace files (one per rank), writes a new
 * run database in DATA/tmp/<id>/, and commits it by renaming the folder to
 * DATA/runs/<id>/ and inserting the catalog row with status "deriving"
 * (catalog.h). Until then the run is invisible; a crash leaves only
 * DATA/tmp debris, which ingest_service_start() removes. The derived
 * stages then run on the visible run.db, each marked done in its
 * derive_stage table after its tables are committed (store/rundb_stage.h:
 * readers are answered "computing" until then), and the row becomes
 * "ready". A derive that fails removes the run; one a crash cut off is
 * removed by the next ingest_service_start(). A deriving run cannot be
 * renumbered or deleted (ERR_CONFLICT).
 *
 * Two ways in:
 *  - ingest_run(): synchronous, on the caller's thread (CLI import/analyze,
 *    tests).
 *  - struct ingest_service (ingest_service.h): a queue with worker threads
 *    for the HTTP server.
 *
 * Threads: the ranks of a multi-rank job after the first are parsed by
 * worker threads into spools (store/rundb_spool.h) while the job's thread
 * writes the previous ones; every worker is joined before ingest_run
 * returns, on success and on error. Progress counts a spooled rank's bytes
 * once it is written.
 *
 * Job states: queued -> running -> done | failed (set by the worker).
 *
 * Threads: the derived tables are computed on the job's thread and others
 * it starts and always joins (ingest_derive.h: the timeline's level of
 * detail in a scratch run.db.aside, the rules in run.db.rules, the ranks
 * of a multi-rank run in run.db.r<i>, each copied in: SQLite has one
 * writer per file); an error on any fails the job. ingest_rederive does
 * the same.
 *
 * Ownership: ingest_* functions copy what they keep from their arguments.
 * Files handed to a job with `owned = 1` are deleted (or moved into the run)
 * by the job; others are only read.
 */
#ifndef TB_INGEST_H
#define TB_INGEST_H

#include <jansson.h>
#include <pthread.h>
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

/* One stage of a job: the phases of the import in turn, then the derived
 * stages (two at a time: the second thread's overlap the first's). */
struct ingest_stage {
    const char *name; /* static string */
    double t0;        /* log_now_s() at its start (less the time of earlier turns) */
    double took;      /* seconds, once done */
    int done;
};

#define INGEST_STAGES_MAX 16

/* What the catalog files a run under (issue 20); all borrowed, checked by
 * the caller (store/catalog_query.h). A NULL struct: none of them. */
struct ingest_labels {
    const char *project; /* NULL or "": no project */
    json_t *meta;        /* JSON object of strings or NULL */
    const char *hash;    /* content hash (ingest_hash_files) or NULL: computed from the files,
                          * on a thread of its own while they are parsed */
    int refuse_duplicate; /* 1: fail with ERR_CONFLICT ("the same files are run <id> already")
                           * when a stored run has the same hash, before anything is committed */
};

/* Live progress of one job; written by the worker, read under the
 * service lock. */
struct ingest_progress {
    uint64_t bytes_total;   /* sum of source file sizes (compressed) */
    uint64_t bytes_done;    /* compressed bytes consumed so far */
    uint64_t events;        /* events parsed so far */
    const char *phase;      /* static string: "queued", "parse", "sort", "write", "index", "commit",
                             * "analyze" (the derived stages: the run is open) */
    char run_id[CATALOG_ID_LEN + 1]; /* once the run is visible, while it derives; else "" */
    double t_start;         /* log_now_s() when the reading began; 0 before */
    double t_read;          /* when the last byte was read; 0 before (ingest_eta.h) */
    struct ingest_stage stages[INGEST_STAGES_MAX];
    int nstages;
};

/* Imports synchronously and commits the run into cat.
 * OUT run_id: the new run's id on success.
 * progress may be NULL. */
int ingest_run(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
               struct ingest_progress *progress, char run_id[CATALOG_ID_LEN + 1], struct err *e);

/* The content hash of a run made of files paths[0..n) (base/sha256.h:
 * the order does not matter). OUT hex. ERR_IO. */
int ingest_hash_files(const char *const *paths, int n, char hex[65], struct err *e);

/* The key figures and trace facts the catalog keeps of the finished run
 * database at db_path (summary_report_catalog), for a renumbered run and
 * for runs catalogued before the catalog kept them. OUT both owned by
 * caller. */
int ingest_catalog_facts(const char *db_path, json_t **figures, json_t **trace, struct err *e);

/* Creates DATA/tmp/upload-XXXXXX for an upload's files.
 * Returns the folder path (owned by caller) or NULL with e set. */
char *ingest_upload_dir(const struct config *cfg, struct err *e);

/* ingest_run with labels (may be NULL) and mu (may be NULL) held while it
 * updates progress: the service's workers pass theirs (ingest_service.c). */
int ingest_run_mu(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
                  const struct ingest_labels *labels, struct ingest_progress *progress, pthread_mutex_t *mu,
                  char run_id[CATALOG_ID_LEN + 1], struct err *e);

/* The run database at db_path (a copy, not yet visible) with rank from[i]
 * renumbered to[i] and every derived table computed again, checkpointed
 * into the file itself (ingest_renumber in ingest_service.c). */
int ingest_rederive(const char *db_path, const int *from, const int *to, int n, const struct config_rules *rules,
                    struct err *e);

/* ingest_rederive that also reads the catalog's facts of the renumbered
 * run on the same handle (a second reader would leave a -wal and -shm
 * beside the file). OUT *figures, *trace: owned by caller, NULL on failure. */
int ingest_rederive_facts(const char *db_path, const int *from, const int *to, int n,
                          const struct config_rules *rules, json_t **figures, json_t **trace, struct err *e);

#endif

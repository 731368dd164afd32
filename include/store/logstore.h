/*
 * logstore.h — job log lines (DATA/logs.db), beside the runs catalog.
 *
 * A line is either a run's (run set: posted to a stored run, imported with
 * it) or a live line of project P and job J (posted while the job runs,
 * before its trace exists); a run's lines are its own plus the live lines
 * of its project and job id. Each line has a wall-clock time (unix ns), a
 * rank (or none: the whole job's), its text and its fields (JSON object
 * text or NULL). Ids grow with every insert, so a live stream resumes
 * after the last id it sent. Deleting a run deletes its own lines; live
 * lines stay with their project.
 *
 * Owns one SQLite connection in WAL mode guarded by a mutex (as the
 * catalog), so every function may be called from any thread. Read-only
 * data folder: logs.db is read as stored (an empty one in memory when
 * absent) and every write fails with ERR_READ_ONLY. Every statement is
 * fixed and bound. Strings passed to row callbacks are borrowed for the
 * call.
 */
#ifndef TB_LOGSTORE_H
#define TB_LOGSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct logstore;

struct logstore_line {
    int64_t ts_ns;
    int rank;           /* -1: none */
    const char *text;   /* UTF-8 */
    const char *fields; /* JSON object text, or NULL */
    const char *job;    /* live lines: the line's own job id, or NULL for the batch's */
};

/* read_only: the data folder refuses writes (catalog_read_only).
 * OUT *out: owned by caller, release with logstore_close. */
int logstore_open(const char *data_dir, int read_only, struct logstore **out, struct err *e);
void logstore_close(struct logstore *ls);

/* Stores n lines in one transaction: a run's (run set, project and job
 * NULL) or live lines of project (job: the batch's job id, used for lines
 * without their own). *last_id (may be NULL): the highest id stored. */
int logstore_add(struct logstore *ls, const char *run, const char *project, const char *job,
                 const struct logstore_line *v, size_t n, int64_t *last_id, struct err *e);

/* Called per row in order; non-zero stops the walk (returned as is). */
typedef int (*logstore_row_fn)(void *arg, int64_t id, int64_t ts_ns, int rank, const char *text, const char *fields,
                               const char *job);

struct logstore_query {
    const char *run;           /* this run's lines ... */
    const char *project, *job; /* ... and the live lines of this project and job (both or NULL) */
    int rank;                  /* -1: every rank; else this rank's lines and the rank-less ones */
    int64_t start_ns, end_ns;  /* inclusive window */
    const char *q;             /* substring of the text (ASCII case-insensitive), or NULL */
    int64_t after_ts, after_id; /* paging: only lines after (ts, id); after_id -1: from the start */
    int limit;
};

/* The lines of a query in (ts, id) order, at most q->limit. */
int logstore_query(struct logstore *ls, const struct logstore_query *q, logstore_row_fn fn, void *arg,
                   struct err *e);

/* Live lines of project (and job, NULL: any) with id > after_id, in id
 * order, at most limit. */
int logstore_live_after(struct logstore *ls, const char *project, const char *job, int64_t after_id, int limit,
                        logstore_row_fn fn, void *arg, struct err *e);

/* The id before the project's (and job's) last `backlog` live lines: a new
 * stream starts there. 0 when there are fewer. */
int logstore_live_cursor(struct logstore *ls, const char *project, const char *job, int backlog, int64_t *out,
                         struct err *e);

/* Deletes run's own lines. */
int logstore_delete_run(struct logstore *ls, const char *run, struct err *e);

#endif

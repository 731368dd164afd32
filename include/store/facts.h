/*
 * facts.h — the store's read layer for the facts the rule engine loads once
 * per run: the ranks (format, distributedInfo), each rank's steps with their
 * breakdown (step), its GPUs (gpu), its analysis summary (analysis), its
 * busiest process and operator count, and probes of the names a run holds
 * (str, track names) by LIKE pattern or exact text.
 *
 * Reads run.db's rank, step, gpu, analysis, op_stat, track and str tables
 * with fixed statements; values (ranks, track kinds, patterns) are bound,
 * never written into the SQL. LIKE patterns use '\' as their escape
 * character and, as SQLite's LIKE, ignore ASCII case.
 *
 * Every function returns 0 (or 1 / 0 where it answers yes / no) and < 0 (an
 * enum err_code, e filled by rundb_db_error) on an error, so a loop never
 * takes a database error for the end of the rows. Memory: arrays returned
 * are owned by the caller (free, or facts_ranks_free); a names cursor is
 * owned by its caller (facts_names_close) and borrows the connection, which
 * must outlive it and be used by one thread at a time.
 */
#ifndef TB_FACTS_H
#define TB_FACTS_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"

/* The parts of a step's breakdown, in step's column order (kernel, memcpy,
 * memset, comm, runtime, dataloader, cpu_exec, other). */
#define FACTS_NPARTS 8
/* The most patterns one names probe takes. */
#define FACTS_MAX_PATTERNS 8

struct facts_rank {
    int rank;
    char *format;      /* "kineto", "nsys", ...; NULL when unknown */
    char *distributed; /* distributedInfo as JSON text; NULL when none */
};

struct facts_step {
    char name[64];
    int64_t ts, dur, host_ts, host_dur;
    int64_t part[FACTS_NPARTS];
};

struct facts_gpu {
    int device;
    char name[128];
    int64_t memory_bytes;
    double cc; /* compute capability; 0: unknown */
    double util, tc_share;
    int64_t kernel_ns, tc_ns, window_ns;
};

/* The ranks of the run in rank order. OUT *out, *n: owned by caller
 * (facts_ranks_free). */
int facts_ranks(sqlite3 *db, struct facts_rank **out, size_t *n, struct err *e);
void facts_ranks_free(struct facts_rank *r, size_t n);

/* The steps of rank in index order. OUT *out: owned by caller (free). */
int facts_steps(sqlite3 *db, int rank, struct facts_step **out, size_t *n, struct err *e);

/* The GPUs of rank by device. OUT *out: owned by caller (free). */
int facts_gpus(sqlite3 *db, int rank, struct facts_gpu **out, size_t *n, struct err *e);

/* The analysis summary of rank, parsed. OUT *out: owned by caller, NULL
 * when there is none or it does not parse. */
int facts_summary(sqlite3 *db, int rank, json_t **out, struct err *e);

/* OUT *pid: the process of rank's CPU threads with the most slices, -1 when
 * unknown (no thread, or a pid that is not a number). */
int facts_busiest_pid(sqlite3 *db, int rank, long *pid, struct err *e);

/* OUT *calls: the operators op_stat counts for rank (0 when none). */
int facts_op_calls(sqlite3 *db, int rank, double *calls, struct err *e);

/* How a names probe matches its patterns. */
enum facts_match {
    FACTS_LIKE,  /* s LIKE pattern ESCAPE '\' */
    FACTS_EQUAL, /* s = pattern */
};

/* A walk over the interned names (str) that match any of pats[0..n)
 * (n <= FACTS_MAX_PATTERNS), in id order. */
struct facts_names;
int facts_names_open(sqlite3 *db, enum facts_match m, const char *const *pats, size_t n, struct facts_names **out,
                     struct err *e);
/* 1 (OUT *id, *s: the name, borrowed until the next call), 0 at the end,
 * < 0 on an error. s may be NULL. */
int facts_names_next(struct facts_names *c, uint32_t *id, const char **s, struct err *e);
void facts_names_close(struct facts_names *c);

/* Whether the run holds a name matching any of pats: 1 yes, 0 no, < 0 on
 * an error. */
int facts_names_exist(sqlite3 *db, enum facts_match m, const char *const *pats, size_t n, struct err *e);

/* Whether rank has a track whose name is LIKE any of pats[0..n) (n <=
 * FACTS_MAX_PATTERNS): 1 yes, 0 no, < 0 on an error. */
int facts_track_named(sqlite3 *db, int rank, const char *const *pats, size_t n, struct err *e);

#endif

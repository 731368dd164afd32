/*
 * catalog.h — the catalog database (DATA/catalog.db): the list of runs.
 *
 * A run is visible to users if and only if it has a row here; ingest inserts
 * that row once the run's raw tables are complete and moved into
 * DATA/runs/<id>/, with status CATALOG_DERIVING while its derived stages
 * are computed (run.db's derive_stage table says which are done), then
 * sets CATALOG_READY. catalog_open() removes run folders that have no row
 * (the remains of a crash between the two steps); the ingest service
 * removes the runs a crash left deriving.
 *
 * Besides what catalog.c writes, a row holds a run's project, metadata,
 * trace facts, content hash and key figures (issue 20): catalog_query.h
 * filters and aggregates them, and fills them in for older runs.
 *
 * Owns one SQLite connection in WAL mode guarded by a mutex, so every
 * function may be called from any thread. Strings returned inside json_t
 * objects are owned by those objects; every json_t * returned is a new
 * reference owned by the caller (json_decref when done).
 */
#ifndef TB_CATALOG_H
#define TB_CATALOG_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"

struct catalog;

/* Run ids are 16 lowercase hex characters. */
#define CATALOG_ID_LEN 16

struct catalog_run {
    char id[CATALOG_ID_LEN + 1];
    const char *name;       /* borrowed for the call */
    int64_t created;        /* unix seconds */
    int ranks;
    const char *gpu;        /* "" when no GPU */
    int64_t bytes;          /* sum of source file sizes */
    int64_t events;
    int warnings;           /* import notes that users should see */
    const char *files_json; /* JSON array [{name, bytes, rank}] */
    const char *tags_json;  /* JSON array of strings */
    const char *status;     /* CATALOG_READY (also when NULL) or CATALOG_DERIVING */
    const char *project;    /* "" or NULL: no project (catalog_query.h checks names) */
    const char *meta_json;  /* JSON object of strings given at upload; NULL = {} */
    const char *trace_json; /* JSON object: the trace's own facts; NULL = not known yet */
    const char *hash;       /* content hash (base/sha256.h), "" when unknown */
    const char *figures_json; /* JSON object: the key figures; NULL = not computed yet */
};

#define CATALOG_READY "ready"
#define CATALOG_DERIVING "deriving"

/* The columns catalog_row_json reads, in its order (catalog_query.c
 * selects them too). */
#define CATALOG_RUN_COLS \
    "id,name,created,status,ranks,gpu,bytes,events,warnings,files,tags,project,meta,trace,hash,figures"

/* Opens (creating if needed) DATA/catalog.db and cleans orphans. A data
 * folder that exists but cannot be written (read-only, or its disk full:
 * a probe file is written first) opens read-only instead: catalog.db as
 * stored (an empty catalog in memory when there is none), no migration,
 * no sweeps, nothing created; catalog_read_only() then says why and every
 * write below fails with ERR_READ_ONLY. Read-only lasts until a restart.
 * OUT *out: owned by caller, release with catalog_close. */
int catalog_open(const char *data_dir, struct catalog **out, struct err *e);
void catalog_close(struct catalog *c);

/* Why the catalog opened read-only ("the data folder is read-only ...",
 * "the disk holding the data folder is full"), or NULL when it is
 * writable. Static for the life of c; any thread. */
const char *catalog_read_only(const struct catalog *c);

/* 0 when writable, else ERR_READ_ONLY with a message for users: the
 * reason and that stored runs are still served. Write handlers call it
 * before doing anything. */
int catalog_check_writable(const struct catalog *c, struct err *e);

/* Makes a fresh random run id (not yet in the catalog). */
void catalog_new_id(char out[CATALOG_ID_LEN + 1]);

/* 1 if s is a syntactically valid run id (guards paths built from ids). */
int catalog_id_valid(const char *s);

/* Inserts a committed run. */
int catalog_insert(struct catalog *c, const struct catalog_run *r, struct err *e);

/* All runs, newest first: JSON array of run objects (owned by caller).
 * Each has "damaged" (its run.db fails rundb_open_ro's checks) and, when
 * true, "damage" (the reason, with what to do). */
int catalog_list(struct catalog *c, json_t **out, struct err *e);

/* One run as a JSON object (owned by caller); ERR_NOT_FOUND if absent. */
int catalog_get(struct catalog *c, const char *id, json_t **out, struct err *e);

/* Updates name and/or tags (NULL = unchanged). tags is a JSON array of
 * strings (borrowed). ERR_NOT_FOUND / ERR_INVALID. */
int catalog_update(struct catalog *c, const char *id, const char *name, json_t *tags, struct err *e);

/* Sets the run's status (CATALOG_READY ...). ERR_NOT_FOUND. */
int catalog_set_status(struct catalog *c, const char *id, const char *status, struct err *e);

/* 1 when a run object (catalog_get/catalog_list) is still deriving: its
 * derived tables are not all there yet. */
int catalog_row_deriving(const json_t *run);

/* Replaces the run's file list (JSON array [{name, bytes, rank, format}],
 * borrowed), e.g. after its ranks were renumbered. ERR_NOT_FOUND. */
int catalog_set_files(struct catalog *c, const char *id, json_t *files, struct err *e);

/* Swaps new_dir (a complete run folder built beside the run, on the same
 * filesystem) in as run id's folder, with files (JSON array as for
 * catalog_set_files, borrowed) as its new file list; see the design note
 * above. Readers that opened the old run.db keep reading the old one.
 * On success new_dir holds the old run (the caller removes it); on failure
 * the old run is in place, unchanged, and new_dir is the caller's.
 * ERR_NOT_FOUND (run), ERR_NOSPACE / ERR_IO / ERR_DB. */
int catalog_swap_run(struct catalog *c, const char *id, const char *new_dir, json_t *files, struct err *e);

/* Removes the row, then the run folder. ERR_NOT_FOUND if absent. */
int catalog_delete(struct catalog *c, const char *id, struct err *e);

/* The --logdir watcher's memory: 1 when path was imported with this size
 * and mtime; catalog_logdir_mark records it (run_id may be "" for a file
 * that failed, so it is not retried until it changes). */
int catalog_logdir_seen(struct catalog *c, const char *path, int64_t size, int64_t mtime);
int catalog_logdir_mark(struct catalog *c, const char *path, int64_t size, int64_t mtime, const char *run_id,
                        struct err *e);

/* Path of a run's folder: DATA/runs/<id> (owned by caller). */
char *catalog_run_dir(struct catalog *c, const char *id);

/* ERR_DAMAGED (e: the reason and what to do) when run id's database is
 * missing or fails rundb_open_ro's checks (header, schema, base tables:
 * cheap, no page scan), else 0. Any thread. */
int catalog_run_damaged(struct catalog *c, const char *id, struct err *e);

/* For catalog_query.c, the catalog's other half: the connection, held
 * under the catalog's mutex until catalog_unlock; a row selected with
 * CATALOG_RUN_COLS as the run object catalog_get answers (owned by
 * caller); "damaged"/"damage" set on such an object (opens its run.db). */
sqlite3 *catalog_lock(struct catalog *c);
void catalog_unlock(struct catalog *c);
json_t *catalog_row_json(sqlite3_stmt *st);
void catalog_mark_damage(struct catalog *c, json_t *row);

/* Opens run id's database read-only (what every read API does first):
 * ERR_NOT_FOUND when the catalog has no such run, ERR_DAMAGED when its
 * database is missing or damaged (see rundb_open_ro).
 * OUT *db: owned by caller (sqlite3_close, also after an error). */
int catalog_open_run(struct catalog *c, const char *id, sqlite3 **db, struct err *e);

#endif

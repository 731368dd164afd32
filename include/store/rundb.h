/*
 * rundb.h — the read side of one run's SQLite database
 * (DATA/runs/<id>/run.db): opening a committed file read-only after checking
 * that it is whole, WAL snapshots that work in a read-only folder, the one
 * translation of SQLite errors into our codes (rundb_db_error), settling a
 * request's rank, the run page's facts, and copying a run for a change.
 *
 * The store is split along its seams: rundb_schema.h (tables and indexes),
 * rundb_writer.h (the bulk writer ingest uses), rundb_renumber.h (moving
 * ranks), scan.h (typed cursors over slices for the derive stage) and this
 * file. Readers open the committed file read-only per call; they may be
 * called from any thread; a handle is used by one thread at a time.
 */
#ifndef TB_RUNDB_H
#define TB_RUNDB_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/err.h"
#include "store/model.h"

/* Copies a committed run database (src_path, read through SQLite so that
 * its WAL is included: a consistent snapshot) into a new file dst_path, the
 * first step of changing a run beside the one readers use. A full disk is
 * ERR_NOSPACE; dst_path may be left partly written (the caller owns its
 * folder and removes it). */
int rundb_copy(const char *src_path, const char *dst_path, struct err *e);

/* Process-wide SQLite settings, called by main before any database is
 * opened (and before threads start): turns off SQLite's memory statistics,
 * whose one global mutex every allocation of every connection took. */
int rundb_process_init(struct err *e);

/* --- readers --- */

/* Opens a committed run database read-only (busy timeout set), after
 * checking that it is whole enough to read: ERR_DAMAGED ("run <id> is
 * damaged (why): delete the run and upload its trace files again") when
 * the file is empty, not SQLite, cut short, garbled where the
 * schema lives, or lacks the tables every run has (meta, rank). A run from
 * before a newer table passes; its API answers ERR_CONFLICT. Works in a
 * folder that cannot be written (see rundb_open_snapshot). A missing file
 * is ERR_NOT_FOUND.
 * OUT *out: owned by caller (sqlite3_close). */
int rundb_open_ro(const char *db_path, sqlite3 **out, struct err *e);

/* Opens the WAL-mode database at path read-only and runs the statement
 * probe (its first row) so that SQLite reads the file at once. A WAL
 * reader needs a -shm beside the file; when the folder is read-only or
 * the disk full (the first read fails with an I/O, can't-open or read-only
 * error) the file is opened again as immutable (no locks, no -shm: safe as
 * nobody can write it either), *immutable set to 1, and a -shm the failed
 * try left behind is removed. ERR_NOT_FOUND when it cannot be opened,
 * else rundb_db_error's codes (ERR_DAMAGED for a garbled run.db).
 * OUT *out: owned by caller (sqlite3_close); immutable may be NULL. */
int rundb_open_snapshot(const char *path, const char *probe, sqlite3 **out, int *immutable, struct err *e);

/* Fills e from db's last error as "<what>: <SQLite message>" and returns
 * the code: ERR_DAMAGED when SQLite finds a run.db's pages garbled (the
 * message names the run and says to delete it and upload it again; another
 * database's damage is ERR_DB), ERR_NOSPACE with a plain-words cause for a full disk, a
 * read-only folder or a failed write (SQLite says only "disk I/O error";
 * a reader writes too, its temporary sort files), else ERR_DB. Shared by
 * every module reading or writing a run or the catalog. */
int rundb_db_error(sqlite3 *db, struct err *e, const char *what);

/* ERR_DAMAGED for the run open on db when a value SQLite read back
 * intact is not what the writer stores (what: which, and how), in
 * rundb_db_error's words. */
int rundb_damaged(sqlite3 *db, struct err *e, const char *what);

/* sqlite3_prepare_v2 of the fixed statement sql on db. A failure (a stale
 * schema or a bug: the text is ours) is logged with the statement and
 * returned as rundb_db_error(db, e, "run database (prepare)").
 * OUT *st: owned by caller (sqlite3_finalize), NULL on failure. */
int rundb_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, struct err *e);

/* Settles a request's ?rank= on an open run: the rank asked for (have_rank:
 * want), else the lowest; *rank, *t0, *t1 (its span, 0 when unknown) set.
 * Every rank number is appended to ranks (NULL: not wanted). ERR_NOT_FOUND
 * "run <run_id> has no rank N" / "... has no ranks". */
int rundb_pick_rank(sqlite3 *db, const char *run_id, int have_rank, long long want, int *rank, int64_t *t0,
                    int64_t *t1, json_t *ranks, struct err *e);

/* Run facts for the run page: {ranks: [{rank, file, bytes, format, device,
 * distributed, t0_ns, t1_ns, base_ns, stats, notes: [...]}], tracks: n,
 * slices: n}. OUT *out: owned by caller. */
int rundb_info(const char *db_path, json_t **out, struct err *e);

/* "%" + s with %, _ and \ escaped by \ + "%": a LIKE pattern (ESCAPE '\')
 * matching s literally anywhere, for the name filters (?q=). Owned by
 * caller. */
char *rundb_like_pattern(const char *s);

/* --- derived tables built aside --- */

/* The schema name a scratch database is attached under by
 * rundb_attach_aside: derive modules copy their tables from RUNDB_ASIDE.t. */
#define RUNDB_ASIDE "aside"

/* Opens a new scratch database at scratch_path (any old file replaced; no
 * journal: it is thrown away on failure) with the run database at run_path
 * attached as "run", so that a derive stage run on it reads the run's
 * tables and creates and writes its own in the scratch file: a second
 * writer beside the one on run.db (SQLite has one writer per file), on
 * another thread. A nonzero *cancel (may be NULL) makes its statements fail
 * (SQLITE_INTERRUPT). OUT *out: owned by caller (sqlite3_close), used by
 * one thread. */
int rundb_open_aside(const char *run_path, const char *scratch_path, atomic_int *cancel, sqlite3 **out,
                     struct err *e);

/* The same on a scratch database written before (rundb_open_scratch), its
 * tables kept. */
int rundb_reopen_aside(const char *run_path, const char *scratch_path, atomic_int *cancel, sqlite3 **out,
                       struct err *e);

/* A scratch database alone, no run attached (fresh: any old file replaced;
 * else opened as it is), with rundb_open_aside's settings: for a stage that
 * writes before the run can be read. OUT *out: owned by caller. */
int rundb_open_scratch(const char *scratch_path, int fresh, sqlite3 **out, struct err *e);

/* Attaches the scratch database at scratch_path to db as RUNDB_ASIDE, and
 * detaches it. */
int rundb_attach_aside(sqlite3 *db, const char *scratch_path, struct err *e);
int rundb_detach_aside(sqlite3 *db, struct err *e);

/* The ranks of the run in rank order, with the GPU ops of each (its slices
 * on GPU tracks) and its host slices (those on other tracks): what deriving
 * a rank holds in memory grows with them.
 * OUT *ranks, *gpu_ops, *host_slices: n entries each, owned by caller
 * (free). */
int rundb_rank_sizes(sqlite3 *db, int **ranks, int64_t **gpu_ops, int64_t **host_slices, int *n, struct err *e);

#endif

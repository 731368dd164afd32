/*
 * rundb.h — one run's SQLite database (DATA/runs/<id>/run.db): schema,
 * bulk writer used by ingest, and the readers the API needs.
 *
 * Schema (times are integer nanoseconds on the rank's own trace clock, i.e.
 * the file's `ts` x 1000; rank.base_ns aligns ranks; names and categories are
 * ids into `str`):
 *   meta(key, value)                      run-level facts (schema version ...)
 *   rank(rank, file, bytes, format, base_ns, t0, t1, device, distributed,
 *        header, stats)                   one row per trace file
 *   str(id, s)                            interned strings
 *   track(id, rank, kind, pid, tid, name, device, stream, sort, max_depth,
 *         nslices)                        CPU thread or GPU stream lanes
 *   slice(id, track, ts, dur, depth, parent, name, cat, kind, corr, ext, args)
 *                                         ids follow (track, ts, -dur): the
 *                                         table is clustered for range scans
 *   flow(id, rank, cat, fid, ph, track, ts, bp)  flow endpoints, bound lazily
 *   instant(id, track, ts, name, cat, scope, args)
 *   counter(id, rank, name, pid, ts, value)
 *   mem(id, rank, ts, dev_type, dev_id, addr, bytes, total_alloc,
 *       total_reserved, track)            `[memory]` events
 *   note(rank, level, reason, count, example)  what ingest dropped/repaired
 *
 * Writer: rundb_create() opens a new file with journaling off (the file is
 * private to ingest until committed); the importer adds rows through
 * rundb_add_*; slices go to an external sorter so that depth and parent are
 * computed in one pass and rows land in clustered order; rundb_finish_rank()
 * drains the sorter; rundb_close_writer() builds indexes, switches the file
 * to WAL and closes it. One writer is used by one thread.
 *
 * Readers open the committed file read-only per call; they may be called from
 * any thread.
 */
#ifndef TB_RUNDB_H
#define TB_RUNDB_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"
#include "store/model.h"

struct rundb_writer;

/* Creates path (must not exist). sort_memory bounds the sorter's RAM.
 * OUT *out: owned by caller, released by rundb_close_writer/rundb_abort. */
int rundb_create(const char *path, uint64_t sort_memory, const char *tmp_dir, struct rundb_writer **out,
                 struct err *e);

/* Starts a rank: every add until rundb_finish_rank belongs to it. */
int rundb_begin_rank(struct rundb_writer *w, int rank, const char *file, int64_t bytes, struct err *e);

/* Interns s[0..n) (valid UTF-8 expected; invalid bytes are replaced).
 * Returns its id (>= 1). Never fails (the table lives in RAM + SQLite). */
uint32_t rundb_intern(struct rundb_writer *w, const char *s, size_t n);

/* Finds or creates the track of (pid, tid) texts in the current rank.
 * Numeric strings and numbers are the same key ("7" == 7). */
uint32_t rundb_track(struct rundb_writer *w, const char *pid, size_t pid_n, const char *tid, size_t tid_n);

/* Marks a track as a GPU stream (kind from the events seen on it). */
void rundb_track_set_kind(struct rundb_writer *w, uint32_t track, enum tb_track_kind kind);

/* Gives a GPU track its device number when the pid is not the device
 * (XLA's "/device:GPU:N" processes); by default a GPU track's device is its
 * numeric pid, as Kineto writes it. device < 0 is ignored. */
void rundb_track_set_device(struct rundb_writer *w, uint32_t track, int device);

/* Names a process or thread from metadata events ("process_name" ...). */
void rundb_track_set_name(struct rundb_writer *w, uint32_t track, const char *name, size_t n);
void rundb_process_set_name(struct rundb_writer *w, const char *pid, size_t pid_n, const char *name, size_t n);
void rundb_track_set_sort(struct rundb_writer *w, uint32_t track, int64_t sort);

/* Adds rows. Strings inside are borrowed for the call. */
int rundb_add_slice(struct rundb_writer *w, const struct tb_slice *s, struct err *e);
int rundb_add_flow(struct rundb_writer *w, const struct tb_flow *f, struct err *e);
int rundb_add_instant(struct rundb_writer *w, const struct tb_instant *i, struct err *e);
int rundb_add_counter(struct rundb_writer *w, const struct tb_counter *c, struct err *e);
int rundb_add_mem(struct rundb_writer *w, const struct tb_mem *m, struct err *e);

/* Counts one event read from the file (metadata: a ph 'M' event). */
void rundb_count_event(struct rundb_writer *w, int metadata);

/* Records what ingest dropped or repaired (aggregated by reason). */
void rundb_note(struct rundb_writer *w, enum tb_note_level level, const char *reason, const char *example);

/* Stores the trace header (JSON text of the non-event top-level keys) and
 * the facts the importer derived. header is borrowed. */
int rundb_set_rank_header(struct rundb_writer *w, json_t *header, const char *format, int64_t base_ns,
                          struct err *e);

/* Ends the rank: sorts and writes its slices, stores its stats.
 * OUT stats (may be NULL): counts for the caller. */
int rundb_finish_rank(struct rundb_writer *w, struct tb_rank_stats *stats, struct err *e);

/* Builds indexes, switches to WAL, closes. Frees w in all cases. */
int rundb_close_writer(struct rundb_writer *w, struct err *e);

/* Closes and frees w without finishing (the file is left for the caller to delete). */
void rundb_abort(struct rundb_writer *w);

/* Progress hook for long drains: called with the phase name. Optional. */
void rundb_set_phase_hook(struct rundb_writer *w, void (*hook)(void *ctx, const char *phase), void *ctx);

/* Renumbers the ranks of a finished multi-file run by the rank each trace
 * says it is (distributedInfo.rank), when every file says one and no two
 * say the same; otherwise leaves the numbering (from file names, else the
 * order of the files) alone. Only the raw tables exist at that point
 * (rank, track, flow, counter, mem, note): call it before the analyses.
 * OUT map[i]: the new rank of old rank i, for i < n (n = number of ranks;
 * old ranks are 0..n-1 as ingest assigns them); *changed: 1 if any moved.
 * db: read-write handle. */
int rundb_ranks_from_headers(sqlite3 *db, int *map, int n, int *changed, struct err *e);

/* Moves rank from[i] to to[i] (i < n) in the raw tables (rank, track, flow,
 * counter, mem, note) in one transaction; the to[] must be distinct and
 * >= 0, and every rank of the run must be in from[]. Derived tables are the
 * caller's to rebuild. */
int rundb_renumber_ranks(sqlite3 *db, const int *from, const int *to, int n, struct err *e);

/* Copies a committed run database (src_path, read through SQLite so that
 * its WAL is included: a consistent snapshot) into a new file dst_path, the
 * first step of changing a run beside the one readers use. A full disk is
 * ERR_NOSPACE; dst_path may be left partly written (the caller owns its
 * folder and removes it). */
int rundb_copy(const char *src_path, const char *dst_path, struct err *e);

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

#endif

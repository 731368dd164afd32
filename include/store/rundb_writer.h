/*
 * rundb_writer.h — the bulk writer that fills a new run database while
 * ingest parses a trace file.
 *
 * Writer: rundb_create() opens a new file with journaling off (the file is
 * private to ingest until committed); the importer adds rows through
 * rundb_add_*; slices go to an external sorter so that depth and parent are
 * computed in one pass and rows land in clustered order; rundb_finish_rank()
 * drains the sorter; rundb_commit_rows() may commit the rows for readers
 * first; rundb_close_writer() builds indexes, switches the file to WAL
 * and closes it. One writer is used by one thread.
 *
 * The parsing thread never waits for SQLite: rows travel as ops in 1 MiB
 * chunks to a background thread (rundb_writer.c) that applies them; slices
 * go to the external sorter, and rundb_finish_rank (rundb_drain.c) merges
 * them in clustered order on the caller's thread while the background
 * thread inserts the rows; a slice sink (rundb_set_slice_sink) is handed
 * the same numbered rows there, for a consumer of the sorted stream. A spool (rundb_spool.h) is a writer whose ops go
 * to a file instead, for a rank parsed on another thread. Strings passed to rundb_add_* are borrowed for
 * the call. Errors of the background thread surface at the next add,
 * finish or close.
 */
#ifndef TB_RUNDB_WRITER_H
#define TB_RUNDB_WRITER_H

#include <jansson.h>
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
/* The same for `count` events at once (the note's count is events, so a
 * summary note found at the end of a rank says how many it covers). */
void rundb_note_n(struct rundb_writer *w, enum tb_note_level level, const char *reason, const char *example,
                  uint64_t count);

/* Stores the trace header (JSON text of the non-event top-level keys) and
 * the facts the importer derived. header is borrowed. */
int rundb_set_rank_header(struct rundb_writer *w, json_t *header, const char *format, int64_t base_ns,
                          struct err *e);

/* Ends the rank: sorts and writes its slices, stores its stats.
 * OUT stats (may be NULL): counts for the caller. */
int rundb_finish_rank(struct rundb_writer *w, struct tb_rank_stats *stats, struct err *e);

/* Commits the rows of the finished ranks and switches the file to WAL:
 * from here other connections read them (without indexes) while
 * rundb_close_writer builds the indexes in a transaction of its own. At
 * most once, between ranks; optional (rundb_close_writer commits all in
 * one transaction without it). w stays the caller's either way. */
int rundb_commit_rows(struct rundb_writer *w, struct err *e);

/* Builds the indexes (in a transaction of their own after
 * rundb_commit_rows, which switched to WAL; else with the rows, then
 * switches), closes. Frees w in all cases. */
int rundb_close_writer(struct rundb_writer *w, struct err *e);

/* Closes and frees w without finishing (the file is left for the caller to delete). */
void rundb_abort(struct rundb_writer *w);

/* One slice as rundb_finish_rank numbered it, in the order it writes them
 * (id order: each track's slices contiguous, in time order); parent 0 for
 * none; args (args_len bytes, not NUL-terminated, borrowed for the call)
 * are the row's args text, args_len 0 for NULL. */
struct rundb_slice_out {
    int64_t id, track, ts, dur, parent, corr;
    uint32_t name, kind, args_len;
    int depth;
    const char *args;
};

/* A consumer of the sorted stream, called on the job's thread during
 * rundb_finish_rank while the writer thread inserts the same rows: rank
 * first (the rank's span [t0, t1] as the rank row gets it; has_span 0:
 * NULL there), then each slice, and after a track's last slice track_end
 * with its row's max_depth and nslices (present 0: the track has no row).
 * The callbacks must not block for long (the merge waits for them). */
struct rundb_slice_sink {
    void (*rank)(void *ctx, int has_span, int64_t t0, int64_t t1);
    void (*slice)(void *ctx, const struct rundb_slice_out *s);
    void (*track_end)(void *ctx, int64_t track, int present, int max_depth, int64_t nslices);
    void *ctx;
};

/* Feeds sink (copied; NULL: none) every later rank's slices. Optional. */
void rundb_set_slice_sink(struct rundb_writer *w, const struct rundb_slice_sink *sink);

/* Progress hook for long drains: called with the phase name. Optional. */
void rundb_set_phase_hook(struct rundb_writer *w, void (*hook)(void *ctx, const char *phase), void *ctx);

#endif

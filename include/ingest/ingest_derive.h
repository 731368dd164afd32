/*
 * ingest_derive.h — the derived stages of a committed run database, in
 * the order readers see them done (store/rundb_stage.h): summary (overview,
 * operators, kernels, memory), analyses (the GPU analyses), rules (the
 * findings) and timeline (its level of detail).
 *
 * Threads: the job's thread writes run.db (SQLite has one writer per
 * file); a second thread builds the timeline of the trace into the scratch
 * run.db.aside (begun by the import before the indexes, with the summary
 * when it fits: see ingest_derive_early_start; at import the slices' part
 * is built earlier still, from the writer's merge: ingest_derive_stream_start)
 * and a third, once the summary is in, the rules into run.db.rules, both
 * copied in at the end. When the GPU analyses run on the job's thread (one
 * rank, or one thread) they commit their series before the last rank's
 * critical path, and the timeline's thread builds their counter lanes into
 * its scratch meanwhile (analyses_run_then); else the job's thread builds
 * them after the copy. A run of
 * several ranks derives its summary, then its GPU analyses, rank by rank on
 * several threads at once (the job's thread among them; see
 * ingest_derive_threads), each
 * rank into a scratch run.db.r<i> of its own read from run.db; the job's
 * thread copies each finished scratch into run.db in rank order, one
 * transaction each, so ids and rows are those of a serial derive whatever
 * the threads' timing. Ranks run together only while the GPU ops of those
 * in flight stay under a memory budget (DERIVE_MEMORY in ingest_derive.c);
 * a rank alone always runs. Every thread is joined and every scratch file
 * removed before ingest_derive returns; a scratch file a crash leaves
 * goes with its run folder (removed at the next start: the run was
 * still deriving) or is replaced by the next derive. The first failing
 * rank in rank order is the error returned; the stages after it do not
 * run.
 *
 * Ownership: arguments are borrowed for the call.
 */
#ifndef TB_INGEST_DERIVE_H
#define TB_INGEST_DERIVE_H

#include <sqlite3.h>

#include "base/config.h"
#include "base/err.h"

/* The stages, in order (static strings). */
#define INGEST_DERIVE_NSTAGES 4
extern const char *const ingest_derive_stages[INGEST_DERIVE_NSTAGES];

/* Told when a stage starts (done 0) and ends (done 1); on the job's thread. */
typedef void (*ingest_derive_mark)(void *arg, const char *stage, int done);

/* The derive begun early: an import starts it as soon as its rows are
 * committed (rundb_commit_rows), while the job's thread builds the indexes,
 * which neither reads: the timeline's level of detail on a thread of its
 * own into run.db.aside beside db_path, and, when the ranks are at most 8
 * and their summaries fit a memory budget, the summary of each rank into
 * run.db.r<i> on up to threads threads. NULL when no thread could start.
 * With ts (a stream of ingest_derive_stream_start, which it takes; NULL:
 * none) the slices' tables are the stream's: the timeline's thread waits
 * for the stream's end, then adds what it left (timeline_build_trace_rest),
 * or scans when it failed. Every file it writes or reads is open once
 * ingest_derive_early_settle returns (without ts, before this returns), so
 * the run's folder may then be renamed. With feed (derive/slice_feed.h,
 * which it takes, filled by the same drains; NULL: none) the summaries
 * begun here read the host slices it holds; it is freed once they are
 * adopted, or at once when none is begun. Owned by the caller until handed to
 * ingest_derive, which always takes it; ingest_derive_early_free cancels,
 * joins and removes it on the paths that never derive. Not for runs whose
 * ranks are renumbered after the rows are committed (both read the rank
 * numbers). */
struct ingest_derive_early;
struct timeline_stream;
struct slice_feed;
struct ingest_derive_early *ingest_derive_early_start(const char *db_path, int threads, struct timeline_stream *ts,
                                                      struct slice_feed *feed);

/* The timeline's slices built while the rows are written: a stream
 * (timeline_stream.h) into run.db.aside beside db_path, for the writer's
 * slice sink; NULL when it cannot start (the early start then scans). */
struct timeline_stream *ingest_derive_stream_start(const char *db_path);

/* Waits until x's threads hold their files open (x may be NULL). */
void ingest_derive_early_settle(struct ingest_derive_early *x);

/* The run's folder was renamed: db_path is run.db's new path (the thread's
 * open files follow the rename; the scratch's name is remade). x may be
 * NULL. */
void ingest_derive_early_moved(struct ingest_derive_early *x, const char *db_path);

/* Cancels and joins x, removes its scratch, frees it (NULL is fine). */
void ingest_derive_early_free(struct ingest_derive_early *x);

/* Every derived table of the run database at db_path, open read-write as
 * db (its stage table begun by rundb_stage_begin), each stage marked done
 * in run.db once committed. threads: how many ranks may derive at once
 * (1: one after the other on db itself, without scratch files; at most 8).
 * early: the timeline begun at import, or NULL; taken in all cases.
 * mark may be NULL. */
int ingest_derive(sqlite3 *db, const char *db_path, const struct config_rules *rules, int threads,
                  struct ingest_derive_early *early, ingest_derive_mark mark, void *arg, struct err *e);

/* The threads for ranks when jobs ingests (the ingest_workers setting) may
 * derive at once: cores / jobs less the core of the second thread, at
 * least 1 (so a 2-core machine derives its ranks in turn, as the second
 * core is busy with the timeline and rules), at most 8. */
int ingest_derive_threads(int jobs);

#endif

/*
 * rundb_spool.h — one rank parsed beside the run database writer, so that
 * the ranks of a multi-rank run are parsed on several threads while the one
 * SQLite connection stays with the writer.
 *
 * A spool is a struct rundb_writer without a database: the importer fills
 * it through the usual rundb_add_* / rundb_intern / rundb_track calls (on
 * the spool's own thread), and its ops go, in 1 MiB chunks, to an unlinked
 * file in tmp_dir instead of the background writer, so its memory stays
 * bounded (the spool's strings, tracks and one chunk). Ids are local to the
 * spool; rundb_spool_replay() hands the ops to the real writer in order,
 * mapping every string and track id to the writer's. Because ids are given
 * in order of first use on both sides, the run database is the one a
 * serial import writes, byte for byte.
 *
 * Threads: a spool is filled by one thread, then replayed by the writer's
 * thread after a hand-off (a mutex or a join). rundb_spool_cancel may be
 * called from any thread: the next add then fails, so the importer stops.
 */
#ifndef TB_RUNDB_SPOOL_H
#define TB_RUNDB_SPOOL_H

#include "base/err.h"
#include "store/rundb_writer.h"

/* A spool for rank, its file in tmp_dir.
 * OUT *out: owned by caller, released with rundb_abort. */
int rundb_spool_new(const char *tmp_dir, int rank, struct rundb_writer **out, struct err *e);

/* Makes the spool's next add fail with ERR_INTERNAL "cancelled" (another
 * rank failed first). Safe from any thread. */
void rundb_spool_cancel(struct rundb_writer *sp);

/* Replays spool sp into w, which must have begun the same rank
 * (rundb_begin_rank) and received nothing for it yet; afterwards w holds
 * the rank's tracks, names, notes, header and stats as if the importer had
 * written to it, and rundb_finish_rank(w) ends the rank. sp is left empty
 * (the caller still releases it). */
int rundb_spool_replay(struct rundb_writer *w, struct rundb_writer *sp, struct err *e);

#endif

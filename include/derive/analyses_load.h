/*
 * analyses_load.h — one rank's context for the GPU analyses (struct an_ctx,
 * derive/analyses.h), loaded through the store's readers (analyses_read.h
 * for steps and GPU ops, scan.h for the host threads): the GPU streams and
 * ops in (ts, id) order grouped by stream, the launch calls with the
 * operator and annotation open around each, paired with their ops by
 * correlation id, and the host threads' slices read by the same walk.
 *
 * Invariants: those of an_ctx (analyses.h). The host slices are held
 * (c->hrows, c->hthreads; an_hosts_open and an_hthread_of, declared in
 * analyses.h, are defined here) only while a rank has at most
 * c->host_rows_max of them with ids in 32 bits; otherwise none are, and
 * the host cursors and the critical path read run.db: the same rows.
 *
 * Memory: what it loads belongs to c until analyses_load_free; one thread
 * at a time on c->db.
 */
#ifndef TB_ANALYSES_LOAD_H
#define TB_ANALYSES_LOAD_H

#include "base/err.h"
#include "derive/analyses.h"

/* What analyses_preload (analyses.h) read of one rank: its launch calls
 * with their correlation index (base/corrix.h), its host slices, and its
 * GPU streams and ops paired with their launches, as analyses_load_rank
 * would have put them in an an_ctx (with the name classes it looked up).
 * Owned by it until analyses_load_rank takes them (its fields then
 * emptied). */
struct analyses_pre {
    int rank;
    size_t host_rows_max; /* the limit they were held under */
    struct an_launch *launches;
    size_t nlaunches;
    struct corrix *ix;
    struct an_hrow *hrows;
    size_t nhrows;
    struct an_hthread *hthreads;
    size_t nhthreads;
    struct an_ctx *gpu;   /* its ops, mem_bytes, streams, by_stream, stream_ofs,
                           * main_thread and name class cache; the rest empty */
};

/* Loads rank c->rank into c (c->db, c->names and c->host_rows_max set;
 * its arrays empty): steps, launch calls, GPU ops, the main launching
 * thread, the GPU's peaks and the steps' window. The launch calls and
 * host slices are taken from pre when it holds this rank's under the same
 * limit (pre may be NULL), else read. Logs the time of the launch calls
 * and of the steps and GPU ops. Returns 0 or < 0 (e filled). */
int analyses_load_rank(struct an_ctx *c, struct analyses_pre *pre, struct err *e);

/* Frees what analyses_load_rank put in c and empties it (the name class
 * cache too); c->db, c->names and the statements stay. */
void analyses_load_free(struct an_ctx *c);

#endif

/*
 * cp_waits.h — what a wait on the host may be waiting for, for the critical
 * path's walk (analyses/critical_path.c): the stream a cudaStreamSynchronize
 * call waits on, and the host collective (gloo/nccl span) of another thread
 * that a thread idling outside any operator waits for.
 *
 * Both are per-rank indexes loaded once through the store's readers:
 *  - syncs: the profiler's "Stream Sync" cuda_sync events lie on the GPU
 *    track of the stream they wait for and share their correlation id with
 *    the host call; kept sorted by correlation id.
 *  - collectives: spans named with a kclass_comm_op_prefixes prefix (found
 *    through the name index, so a trace without any pays nothing), sorted
 *    by start, with for each k the one of [0..k] that ends last, so "the
 *    collective running at t that ends last" is one binary search.
 *
 * Memory: a struct cp_waits owns its arrays (cp_waits_free). Threads: one
 * per struct; the an_ctx only caches names (an_name).
 */
#ifndef TB_CP_WAITS_H
#define TB_CP_WAITS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "derive/analyses.h"

struct cp_sync {
    int64_t corr;
    uint32_t stream;
};

/* A host collective span of the rank. */
struct cp_coll {
    int64_t ts, end;
    uint32_t track;
};

struct cp_waits {
    struct cp_sync *syncs; /* by corr */
    size_t nsyncs;
    struct cp_coll *colls; /* by start */
    int32_t *colls_last;   /* [k]: the one of colls[0..k] that ends last */
    size_t ncolls;
};

/* Loads both indexes of c's rank into *wt (zeroed first). Returns 0 or < 0
 * (e filled; *wt still to be freed). */
int cp_waits_load(struct an_ctx *c, struct cp_waits *wt, struct err *e);

/* The stream track a host sync call with correlation id corr waits on, 0
 * when the trace does not say (device or event syncs: any stream). */
uint32_t cp_waits_sync_stream(const struct cp_waits *wt, int64_t corr);

/* The collective of a thread other than track that a wait over [a, t)
 * follows: of those starting before t, the one ending last, if after a;
 * -1 none. If it ends before t, the stretch after its end is the waiting
 * thread's own. */
int32_t cp_waits_collective(const struct cp_waits *wt, uint32_t track, int64_t a, int64_t t);

void cp_waits_free(struct cp_waits *wt);

#endif

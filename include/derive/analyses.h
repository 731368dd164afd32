/*
 * analyses.h — the deeper GPU analyses of a run (the "Analyses" page, the
 * `analyses` key of `traceboard analyze --json`): idle time by cause per
 * stream, kernel launch statistics, queue depth, copy bandwidth, kernel-type
 * overlap, attribution to annotations, fusion candidates and the critical
 * path of each step. Computed once at ingest, after summary_run() (it reads
 * the step table) and before timeline_build() (which turns the series below
 * into counter lanes).
 *
 * Owns four tables of run.db (times integer ns on the rank's clock):
 *   analyses(rank, doc)       one JSON document per rank: {"window_ns":
 *        [t0, t1], "steps": n, "<analysis>": {...} per ANALYSES_LIST entry}
 *        (each analysis documents its object in its file's top comment).
 *   anseries(id, rank, kind, key, name, unit)
 *   ansample(series, ts, value) WITHOUT ROWID, key (series, ts): counter
 *        series for the timeline (kind AN_SERIES_QUEUE: key = the stream's
 *        track id; AN_SERIES_COPY: key = enum an_copy). A series is a step
 *        function: each sample holds until the next; two samples at one ts
 *        collapse into the later one.
 *   critseg(rank, step, t0, t1, n, segs): the critical path of each step,
 *        one row a step: its n segments in time order, encoded in the blob
 *        segs (analyses.c: varints, ts and slice as deltas), [t0, t1) their
 *        span. A segment is (ts, dur, cat, track, slice) (cat: enum
 *        an_cp_cat; track and slice: where it lies, slice 0 for a gap
 *        between slices); a step's segments tile it (dur > 0). ~5 k
 *        segments a step made rows the import's costliest insert. Runs
 *        stored before keep critpath(rank, step, ts, dur, cat, track,
 *        slice), a row per segment (WITHOUT ROWID keyed (rank, ts, step), or
 *        earlier a rowid table and its index critpath_rank_ts):
 *        analyses_critpath answers the same from either.
 *
 * Each analysis is one file in server/analyses/ defining
 * `int an_<name>(struct an_ctx *c, json_t *out, struct err *e)` plus one
 * X(<name>) line in ANALYSES_LIST; it fills its JSON object `out` from the
 * rank context (which it must not modify) and may add series and segments.
 *
 * Invariants of the context: ops are the rank's kernels, memcpys and memsets
 * on GPU tracks sorted by (ts, id); streams are the GPU tracks holding them,
 * sorted by track id, and by_stream groups the ops by stream (op->sx), each
 * group in (ts, id) order; launches are the rank's runtime/driver calls
 * carrying a correlation id, sorted by (ts, id); op->launch and launch->gpu
 * index each other (-1: no partner; the first partner wins when a
 * correlation id repeats). Memory: the context holds the rank's GPU ops and
 * launch calls (40- and 48-byte records: 128 MB for the 1.45 M of each of a
 * 10 M event trace), its host threads' slices while they number at most
 * AN_HOST_ROWS (40 bytes each), and is freed before the next rank; an analysis keeps
 * at most a few bytes per op or launch of scratch (a sort key, an index),
 * never a copy of the records; everything else streams. Samples are
 * written in batches, segments a step at a time. JSON built by an analysis belongs to
 * `out`.
 */
#ifndef TB_ANALYSES_H
#define TB_ANALYSES_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "derive/gpuscan.h"

#define ANALYSES_LIST(X)                                                                                    \
    X(idle)                                                                                                 \
    X(launch)                                                                                               \
    X(queue)                                                                                                \
    X(copy)                                                                                                 \
    X(overlap)                                                                                              \
    X(annotations)                                                                                          \
    X(fusion)                                                                                               \
    X(critical_path)

/* What a GPU op does (HTA's kernel types; copies and memsets are memory). */
enum an_type { AN_COMPUTE = 0, AN_COMM = 1, AN_MEMORY = 2, AN_NTYPES };

/* Copy kinds of memcpy/memset ops (from the op's name). */
enum an_copy {
    AN_COPY_NONE = 0, /* a kernel */
    AN_COPY_HTOD,
    AN_COPY_DTOH,
    AN_COPY_DTOD,
    AN_COPY_PTOP,     /* peer to peer (PtoP / DtoD between devices) */
    AN_COPY_MEMSET,
    AN_COPY_OTHER,    /* a memcpy whose direction the name does not say */
    AN_NCOPY
};

/* Critical-path categories (HTA's bound_by, plus sync waits). */
enum an_cp_cat {
    AN_CP_CPU = 0,        /* host work: ops, Python, launch calls' caller */
    AN_CP_DATALOADER,     /* host time inside a DataLoader call */
    AN_CP_GPU_COMPUTE,    /* kernels (and copies) on the path */
    AN_CP_COMM,           /* communication kernels on the path */
    AN_CP_LAUNCH,         /* launch calls and the delay until the GPU starts */
    AN_CP_KERNEL_GAP,     /* gaps between GPU ops on one stream */
    AN_CP_NCAT
};
extern const char *const an_cp_names[AN_CP_NCAT];
extern const char *const an_copy_names[AN_NCOPY];
extern const char *const an_type_names[AN_NTYPES];

enum an_series_kind { AN_SERIES_QUEUE = 1, AN_SERIES_COPY = 2 };

/* The records below are compact (40 and 48 bytes, from 64 and 72): a 10 M
 * event trace holds 1.45 M of each, and the context is the GPU analyses'
 * peak. Slice ids fit 32 bits (analyses_load_rank refuses a run where they do not);
 * an op's stream and device are its stream's (c->streams[o->sx]); the size
 * of a copy or memset is an_op_bytes(); correlation ids are only needed to
 * pair ops with launches, done while loading. */
struct an_op {
    int64_t ts, end;  /* end >= ts */
    uint32_t id;      /* slice id */
    uint32_t name;    /* str id */
    uint32_t sx;      /* index into streams: the GPU track and its device */
    int32_t launch;   /* index into launches, -1 none */
    uint32_t mem;     /* memcpy/memset: index into c->mem_bytes; 0 for a kernel */
    uint8_t kind;     /* TB_K_KERNEL, TB_K_MEMCPY or TB_K_MEMSET */
    uint8_t type;     /* enum an_type */
    uint8_t copy;     /* enum an_copy */
    uint8_t pinned;   /* memcpy: 1 pinned/device memory, 0 pageable, 2 unknown */
};

struct an_launch {
    int64_t ts, end;
    uint32_t id;       /* slice id */
    uint32_t top_id;   /* slice id of the outermost operator around it, 0 none */
    uint32_t name;     /* the runtime call, str id */
    uint32_t op;       /* innermost operator (cpu_op) name, 0 none */
    uint32_t top_op;   /* outermost operator name, 0 none */
    uint32_t annot;    /* innermost user annotation / nn.Module frame, 0 none */
    unsigned thread : 30;   /* the host track (track id; analyses_load_rank refuses 2^30 and up) */
    unsigned annot_src : 2; /* 1: user_annotation (record_function), 2: nn.Module frame */
    int32_t gpu;       /* index into ops of the first op it launched, -1 none */
};

/* A host slice as the context holds it (40 bytes): what a host cursor
 * reads (scan_brief first, so the cursors read these in place), and its
 * id, parent and correlation id for the critical path. */
struct an_hrow {
    struct scan_brief b;
    int64_t corr;
    uint32_t id, parent; /* parent 0: top level */
};

struct an_step {
    int idx;
    char name[64];
    int64_t ts, end;           /* stretched over its GPU work */
    int64_t host_ts, host_end; /* the host span */
};

struct an_stream {
    uint32_t track;
    int32_t device;
    char name[64];             /* "stream 7", as the trace names it */
};

struct an_ctx {
    sqlite3 *db;
    int rank;
    const struct slice_feed *feed; /* the host slices held at import, or NULL (borrowed; analyses_preload's) */
    struct gpuscan_names *names; /* str id -> text and activity */
    struct an_op *ops;
    size_t nops;
    struct an_launch *launches;
    size_t nlaunches;
    struct an_step *steps;
    size_t nsteps;
    struct an_stream *streams;
    size_t nstreams;
    int64_t *mem_bytes;          /* size of each copy/memset (op->mem), -1 unknown */
    size_t nmem;
    uint32_t *by_stream;         /* op indices grouped by stream ... */
    size_t *stream_ofs;          /* ... stream k: by_stream[stream_ofs[k] .. stream_ofs[k+1]) */
    int64_t w0, w1;              /* the steps' window (whole GPU span without steps) */
    uint32_t main_thread;        /* the host track issuing most launches, 0 none */
    double gpu_mem_gbps;         /* device memory bandwidth peak of the GPU, 0 unknown */
    double link_gbps;            /* host link (PCIe/NVLink-C2C) peak per direction, 0 unknown */
    char gpu_name[128];
    size_t host_rows_max;        /* hrows held at most (AN_HOST_ROWS) */
    /* the host threads' slices, read with the launch calls for the host
     * cursors (an_hosts_open) and the critical path; none past
     * AN_HOST_ROWS. Threads in track id order, each's rows in id order. */
    struct an_hrow *hrows;
    size_t nhrows;
    struct an_hthread {
        uint32_t track;
        size_t first, n; /* hrows[first .. first + n) */
    } *hthreads;
    size_t nhthreads;
    /* the writers are analyses.c's; the name-class cache is filled by
     * an_name_class and emptied per rank by analyses_load_free */
    sqlite3_stmt *ins_series, *ins_seg;
    struct an_wbuf *wbuf;  /* samples and segments not yet written */
    uint32_t *ncache_id;   /* name id -> class bits (an_name_class), open addressing */
    uint8_t *ncache_bits;
    size_t ncache_cap, ncache_n;
    char namebuf[4][4096]; /* kernel names of C++ templates run to kilobytes */
    int nameslot;
};

/* One prototype per analysis. */
#define AN_DECL(name) int an_##name(struct an_ctx *c, json_t *out, struct err *e);
ANALYSES_LIST(AN_DECL)
#undef AN_DECL

/* Computes every analysis for every rank of db and stores the four tables
 * (emptied first, so a rerun after a rank renumbering is clean).
 * db: read-write handle on a run whose analysis tables exist. */
int analyses_run(sqlite3 *db, struct err *e);

/* analyses_run committing the series (anseries, ansample) before the last
 * rank's critical path, then calling series_done(arg) on this thread: the
 * series are final, and another connection may read them (the timeline's
 * lanes, ingest_derive.c) while the critical path runs. The analyses
 * stage is not done before analyses_run_then returns: readers of the run
 * wait for its mark; a failure after the call leaves the series committed
 * (a derive that fails fails the import, a rerun drops them). */
struct analyses_pre;
int analyses_run_then(sqlite3 *db, struct analyses_pre *pre, void (*series_done)(void *arg), void *arg,
                      struct err *e);

/* The launch calls, host slices and GPU ops of rank read ahead of the
 * analyses: they need no steps, so ingest_derive.c reads them while the
 * summary that writes the steps is still running. pre (may be NULL) given to
 * analyses_run_then is used instead of reading them again (the same
 * figures either way: the tests compare the two). db: a connection on
 * the run (read only here). The host slices are read from feed where it
 * holds them (derive/slice_feed.h; borrowed, NULL: none). OUT *out: owned
 * by caller (analyses_pre_free, after analyses_run_then). Defined in
 * analyses_load.c. */
struct slice_feed;
int analyses_preload(sqlite3 *db, int rank, const struct slice_feed *feed, struct analyses_pre **out,
                     struct err *e);
void analyses_pre_free(struct analyses_pre *pre);

/* analyses_run holding at most host_rows host slices a rank in memory
 * (analyses_run: AN_HOST_ROWS); past them, or with 0, the host cursors and
 * the critical path read run.db. The same tables either way: the tests
 * compare the two. */
int analyses_run_held(sqlite3 *db, size_t host_rows, struct err *e);

/* The ranks of a multi-rank run in parallel (ingest_derive.c), as
 * summary_run_rank and summary_adopt (summary.h): analyses_run_rank
 * computes one rank into the tables of db (a scratch database with the run
 * attached; the run's step table must hold the rank), analyses_adopt copies
 * them from the scratch attached as RUNDB_ASIDE (series ids renumbered to
 * follow the run's), first creating the tables (last: unused, kept for the
 * rank pass's adopt signature). */
int analyses_run_rank(sqlite3 *db, int rank, struct err *e);
int analyses_adopt(sqlite3 *db, int first, int last, struct err *e);

/* {"<rank>": doc, ...} for the ranks stored (rank < 0: all) — the
 * `analyses` key of analyze --json and the body of the API. NULL when the run
 * predates the analyses (no table). OUT *out: owned by caller. */
int analyses_read(sqlite3 *db, int rank, json_t **out, struct err *e);

/* The critical-path segments of (rank, step) overlapping [t0, t1) as
 * {"step": s, "segments": [[ts, dur, cat, track, slice], ...]} (step < 0:
 * every step), the first 200 000 in (ts, step) order. A blob that does
 * not decode is ERR_DAMAGED. OUT *out: owned by caller. */
int analyses_critpath(sqlite3 *db, int rank, int step, int64_t t0, int64_t t1, json_t **out, struct err *e);

/* For the analyses: add a counter series; *series receives its id. */
int an_series(struct an_ctx *c, int kind, int64_t key, const char *name, const char *unit, int64_t *series,
              struct err *e);
/* A sample of a series (the value from ts on). Samples and segments are
 * buffered and written in order before the rank's document. */
int an_sample(struct an_ctx *c, int64_t series, int64_t ts, double value, struct err *e);
/* A critical-path segment of step idx: a step's segments come together,
 * in time order (one critseg row each). */
int an_segment(struct an_ctx *c, int step, int64_t ts, int64_t dur, int cat, uint32_t track, int64_t slice,
               struct err *e);

/* Host slices held per rank (struct an_hrow: 60 MiB at most): a 458 MB
 * with_stack trace has 1.2 M of them (past the limit the cursors and the
 * critical path read run.db: its GPU analyses took twice as long). */
#define AN_HOST_ROWS ((size_t)1536 << 10)

/* Host cursors (gpuscan.h) over the rank's threads that read the slices
 * the context holds (c->hrows) rather than run.db. Returns a set owned by
 * caller (gpuscan_hosts_close), borrowing c's names and rows; never NULL. */
struct gpuscan_hosts *an_hosts_open(struct an_ctx *c);

/* The held slices of host thread track (c->hthreads), NULL when the
 * context holds none of it. */
const struct an_hthread *an_hthread_of(const struct an_ctx *c, uint32_t track);

/* The text of str id (borrowed from a per-ctx buffer ring of 4; "" none). */
const char *an_name(struct an_ctx *c, uint32_t id);

/* What a name (str id) says, computed once per id and rank: a
 * communication kernel (kclass_comm_kernel), a ProfilerStep span, an
 * "nn.Module: X" frame. Per-op classification otherwise costs a string
 * fetch and a case-insensitive scan for each of millions of ops. */
enum { AN_NAME_COMM = 1, AN_NAME_STEP = 2, AN_NAME_MODULE = 4 };
int an_name_class(struct an_ctx *c, uint32_t id);

/* The size in bytes of memcpy/memset o, -1 unknown or a kernel. */
static inline int64_t an_op_bytes(const struct an_ctx *c, const struct an_op *o)
{
    return o->type == AN_MEMORY ? c->mem_bytes[o->mem] : -1;
}

/* The GPU track (track id) and the device (-1 unknown) of op o. */
static inline uint32_t an_op_stream(const struct an_ctx *c, const struct an_op *o)
{
    return c->streams[o->sx].track;
}
static inline int32_t an_op_device(const struct an_ctx *c, const struct an_op *o)
{
    return c->streams[o->sx].device;
}

/* The index of the first op with ts >= t (binary search), nops if none. */
size_t an_ops_from(const struct an_ctx *c, int64_t t);

/* The index into c->streams of GPU track `track` (binary search), -1 when
 * the rank has no such stream. */
int an_stream_ix(const struct an_ctx *c, uint32_t track);

/* Sorts v[0..n) ascending. */
void an_sort_i64(int64_t *v, size_t n);
/* The q-quantile (0 <= q <= 1) of sorted v[0..n) (n > 0), interpolated
 * linearly between order statistics, as pandas does. */
double an_quantile(const int64_t *v, size_t n, double q);

#endif

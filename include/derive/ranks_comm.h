/*
 * ranks_comm.h — the collectives of the cross-rank comparison (ranks.h):
 * per rank, one scan of its slices for its collectives (NCCL/RCCL kernels,
 * else gloo:/nccl: host spans) with what each one is (collective, process
 * group, dtype, message sizes: from its args or its launching op's), the
 * compute sweep for the per-step overlap, and the matching of calls across
 * ranks by order within (collective, process group).
 *
 * Also declares the rank model ranks.c loads and both modules fill
 * (struct ranks_rank and its steps and instances).
 *
 * Invariants: after ranks_comm_match, every instance found on two or more
 * ranks has wait + transfer = duration (transfer = the shortest rank's
 * duration), one found on a single rank keeps wait = -1; a rank's
 * instances are then in (key, time) order, kstart indexing each key's run.
 * At most RANKS_MAX_INSTANCES instances are kept over all ranks (the budget
 * of struct ranks_comm; truncated says it ran out); at most
 * RANKS_COMM_MAX_KEYS (collective, process group) rows, the last one
 * lumping the rest.
 *
 * Memory: struct ranks_comm owns its name tables and launch lookup
 * (ranks_comm_free); a rank's inst and kstart arrays are allocated here
 * but owned by whoever owns the rank (ranks.c frees them). It reads
 * through the store (stats_read's collective names, store/comm_read.h).
 * Threads: any, with the caller's own read-only handle.
 */
#ifndef TB_RANKS_COMM_H
#define TB_RANKS_COMM_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "store/comm_read.h"

#define RANKS_NPARTS 8            /* breakdown parts, summary_categories[0..7] */
#define RANKS_COMM_MAX_KEYS 256   /* distinct (collective, process group) rows */
#define RANKS_COMM_NAME_LEN 96

struct ranks_step {
    char name[64];
    int64_t ts, dur, part[RANKS_NPARTS];
    int col; /* heat-map column, -1 past RANKS_MAX_STEPS */
};

/* One collective on one rank. */
struct ranks_inst {
    int64_t ts, dur;
    int64_t in_n, out_n; /* message elements, -1 unknown */
    int64_t wait;        /* -1: unmatched */
    uint16_t key;        /* index into keys */
    int16_t step;        /* the rank's step holding its start, -1 none */
};

struct ranks_key {
    char coll[RANKS_COMM_NAME_LEN], pg[RANKS_COMM_NAME_LEN], dtype[32];
    int group_size; /* 0 unknown */
};

struct ranks_rank {
    int rank;
    char *file, *format, *dist; /* owned */
    int64_t base_ns, t0, t1;
    struct ranks_step *steps;
    size_t nsteps;
    int64_t lo, hi; /* slice id range; lo > hi: none */
    int host_comm;  /* collectives are host spans (gloo) */
    struct ranks_inst *inst; /* by time, then by (key, time) once matched */
    size_t ninst;
    size_t *kstart;                /* after matching: key k is inst[kstart[k] .. kstart[k+1]) */
    double comm, compute, overlap; /* per step, ns */
    double end_skew;               /* median end offset vs the others, ns */
    int has_skew;
};

/* Sorted string ids with the collective each name says. */
struct ranks_named {
    uint32_t id;
    char coll[RANKS_COMM_NAME_LEN];
};

struct ranks_names {
    struct ranks_named *v;
    size_t n, cap;
};

struct ranks_comm {
    struct ranks_names kern, ops; /* comm kernel names; comm host-op names */
    uint32_t rpc_id;              /* str id of record_param_comms (0: none) */
    struct ranks_key keys[RANKS_COMM_MAX_KEYS];
    size_t nkeys;
    size_t budget; /* instances still allowed */
    int truncated;
    struct comm_read_launch *launch; /* for message sizes; NULL: unavailable */
};

/* Instances of key k on r, and the j-th of them (after ranks_comm_match).
 * Borrowed: valid while r->inst is. */
static inline size_t ranks_comm_count(const struct ranks_rank *r, size_t k)
{
    return r->kstart[k + 1] - r->kstart[k];
}

static inline struct ranks_inst *ranks_comm_at(const struct ranks_rank *r, size_t k, size_t j)
{
    return &r->inst[r->kstart[k] + j];
}

/* Loads the names of db's collectives (kernels analysis flagged, host spans
 * named like collectives, record_param_comms) and prepares the launch
 * lookups (optional: when they fail only message sizes are lost). cm is
 * zeroed first; call ranks_comm_free even on failure. Errors: ERR_DB. */
int ranks_comm_open(struct ranks_comm *cm, sqlite3 *db, struct err *e);

void ranks_comm_free(struct ranks_comm *cm);

/* Reads r's collectives into r->inst (time order, each with its step):
 * communication kernels when it has any, else host spans of host-side
 * backends (gloo). Errors: ERR_DB. */
int ranks_comm_scan(struct ranks_comm *cm, sqlite3 *db, struct ranks_rank *r, struct err *e);

/* Per step of r: comm = union of its collectives, compute = union of the
 * other kernels, overlap = their intersection; fills r's means over its
 * steps. Call after ranks_comm_scan. Errors: ERR_DB. */
int ranks_comm_overlap(sqlite3 *db, struct ranks_rank *r, struct err *e);

/* ranks_comm_overlap's figures for a rank whose scan found no collective
 * (and was not cut short), without reading a slice: comm and overlap are
 * 0 and compute is the steps' stored kernel time (part[0]), which is that
 * same union of kernels per step when no kernel is a collective (the
 * breakdown gives collective kernels priority, so it equals compute −
 * overlap in general, and compute here). */
void ranks_comm_no_collectives(struct ranks_rank *r);

/* Matches the instances of the nkeys keys across r[0..nr) by order: fills
 * wait, kstart (reordering inst by key), end_skew and has_skew. */
void ranks_comm_match(size_t nkeys, struct ranks_rank *r, size_t nr);

/* The index of the step of r whose [ts, ts+dur) holds t, or -1 (steps in
 * time order). */
int ranks_comm_step_at(const struct ranks_rank *r, int64_t t);

/* The collective a name says: "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)"
 * -> "AllReduce", "gloo:all_reduce" -> "all_reduce", else the name up to
 * its argument list. OUT out[0..n): NUL-terminated, n >= 1. */
void ranks_comm_coll_from_name(const char *name, char *out, size_t n);

/* Median of v[0..n) (v is reordered); 0 when n = 0. */
double ranks_comm_median(double *v, size_t n);

#endif

/*
 * summary_rank.h — the state one rank's analysis carries from pass to pass
 * (derive/summary*.c only; nothing outside the summary modules includes
 * it): the name cache (str id -> text and what the text says), the GPU ops
 * with their correlation index, the host steps, the breakdown interval
 * unions and the operator and kernel aggregations.
 *
 * summary.c's driver creates one struct rankctx per rank, runs the passes
 * in order (summary_walk, summary_steps, summary_metrics, summary_memory)
 * and frees it; every pointer inside is owned by the rankctx. Pointers a
 * lookup returns (summary_rank_name) are borrowed until the next lookup on
 * the same map. One thread: the ingest worker running summary_run.
 */
#ifndef TB_SUMMARY_RANK_H
#define TB_SUMMARY_RANK_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/corrix.h"
#include "base/hmap.h"
#include "derive/ivlist.h"
#include "store/model.h"

struct slice_feed;

/* The SQL below names kinds by number. */
_Static_assert(TB_K_CPU_OP == 1 && TB_K_KERNEL == 6 && TB_TRACK_GPU == 1, "kind numbers used in SQL");

/* Breakdown categories in priority order; "other" is what none covers.
 * Communication kernels are charged first, before compute kernels: a
 * collective running beside compute still holds the step (and SMs), and
 * charging the overlap to compute would hide most of NCCL's time on traces
 * where DDP overlaps it with backward. Host-side communication spans
 * (gloo:/nccl: annotations) keep their place after memset. Both add up to
 * the step's "communication". */
enum cat { C_COMM_K, C_KERNEL, C_MEMCPY, C_MEMSET, C_COMM, C_RUNTIME, C_DATALOADER, C_CPU_EXEC, C_N };

/* ====================================================================== */
/* Names: id -> text and what the text says                               */
/* ====================================================================== */

enum {
    NF_TC = 1 << 0,
    NF_COMM_KERNEL = 1 << 1,
    NF_COMM_OP = 1 << 2,
    NF_TC_ELIGIBLE = 1 << 3,
    NF_DATALOADER = 1 << 4,
    NF_STEP = 1 << 5,
    NF_NOT_OP = 1 << 6, /* cpu_op spans that are not operators (wrappers) */
};

struct name {
    uint32_t id;
    uint8_t flags;
    char *s;
};

/* Zeroed before use (the driver's memset): the flag cache's empty slots
 * then read as id 0, whose flags are 0. */
#define NAMES_FLAG_CACHE 1024
struct names {
    struct hmap map; /* id -> struct name */
    sqlite3_stmt *get;
    /* the flags of the ids met last, by id modulo the size: the walk asks
     * for one per slice (731 k on a 100-step trace), most for a few names */
    uint32_t flag_id[NAMES_FLAG_CACHE];
    uint8_t flag[NAMES_FLAG_CACHE];
};

/* ====================================================================== */
/* Per-rank state                                                         */
/* ====================================================================== */

/* A GPU op (kernel, memcpy, memset). Its correlation id lives only in
 * rankctx.by_corr, which the launches are matched through and which goes
 * before the later passes: 8 bytes an op less at the analysis's peak. */
struct gop {
    int64_t ts, dur;
    int64_t launch_ts, launch_end; /* the launching runtime call; -1 unknown */
    uint32_t name, op;             /* op: innermost operator around the launch */
    int32_t device;
    uint8_t kind, flags;
    float bps, occ;                /* < 0: not given */
    char *limiter;
};

struct hstep {
    uint32_t name;
    int64_t ts, dur;
    uint32_t track;
    int64_t dev_end;
    int64_t ngpu;
};

struct opagg {
    uint32_t name;
    char *shape, *stack;
    int64_t calls, host_self, host_total, dev_self, dev_total, tc_self, tc_total;
    int tc_elig;
};

struct kagg {
    int32_t device;
    uint32_t name, op;
    int64_t calls, total, min, max;
    double bps_w, occ_w;
    int64_t bps_dur, occ_dur;
    uint8_t flags;
    char *limiter;
};

struct frame {
    int64_t id, ts, end;
    uint32_t name;
    uint8_t kind, is_op;
    int op_parent; /* index of the nearest operator frame below, -1 none */
    int64_t child_op_dur, rt_dur, dev_self, dev_children, tc_self, tc_children;
    int tc_elig;
    const char *shape; /* shape_own, or borrowed from the rankctx's feed */
    char *shape_own;
    uint32_t pystack; /* the Python frames open here (struct walk's stack ids), 0 none */
};

/* An allocation event (bytes > 0) of the rank, in (ts, id) order: read
 * once for all threads (each thread's walk had scanned all the rank's
 * events), then read again in that order by the memory pass. `who` is the
 * thread's track until the walk has passed the event, then MEV_WALKED |
 * the innermost operator's name (0: none; str ids stay below 2^31, as
 * tracks do): 16 bytes an event, no more than the (id, operator) pairs
 * that stood here. */
struct memev {
    int64_t ts;
    uint32_t id, who;
};
#define MEV_WALKED 0x80000000u

struct rankctx {
    sqlite3 *db;
    int rank;
    struct names names;
    struct gop *g;
    size_t ng, gcap;
    struct corrix *by_corr;  /* the ops with a correlation id (key) and their index in g, sorted once indexed */
    size_t nby_corr, cap_by_corr;
    struct hstep *hs;
    size_t nhs, hscap;
    struct ivlist cat[C_N];
    struct hmap ops, kernels; /* key text -> struct opagg, struct kagg */
    struct memev *mev;
    size_t nmev;
    int64_t cpu_min, cpu_max, all_min, all_max;
    int has_python;
    int api_ops;  /* Nsight export: its CUDA API calls and NVTX ranges are the operators */
    size_t nhost; /* host steps after picking one thread and one span per name */
    json_t *notes;
    const struct slice_feed *feed; /* the host slices held from the import's stream, or NULL (borrowed) */
};

struct step {
    char *name;
    int64_t ts, end, host_ts, host_dur, ngpu;
    int64_t part[C_N + 1]; /* + other */
};


/* The name of str id (flags from its text), read from the run's str table
 * through nm->get on first use; id 0 is "". Borrowed until the next call
 * (the text itself lives until summary_rank_names_free). */
const struct name *summary_rank_name(struct names *nm, uint32_t id);

/* summary_rank_name(nm, id)->flags, mostly without its hash lookup. */
uint8_t summary_rank_flags(struct names *nm, uint32_t id);

/* Frees the cache and finalizes nm->get. */
void summary_rank_names_free(struct names *nm);

/* Adds op index idx of correlation id corr (not 0) to c->by_corr, as the
 * ops load. */
void summary_rank_corr_add(struct rankctx *c, int64_t corr, uint32_t idx);

/* Sorts c->by_corr, the GPU ops added by correlation id (ops without one
 * are not in it), for summary_rank_corr_first. */
void summary_rank_corr_index(struct rankctx *c);

/* The position in c->by_corr of the first op of corr, c->nby_corr when
 * none (corr 0: none); the ops of corr follow it in index order. */
size_t summary_rank_corr_first(const struct rankctx *c, int64_t corr);

/* hmap_free callbacks for struct opagg and struct kagg values. */
void summary_rank_free_opagg(void *p);
void summary_rank_free_kagg(void *p);

#endif

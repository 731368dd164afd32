/*
 * rules.h — recommendations: the catalog of ../shared/docs/rules.md as code.
 * After the analysis tables are written (analysis.h), rules_run() loads the
 * facts every rule needs once (steps with their breakdown, GPUs and the
 * ranks sharing each, memory summary, world size of each rank), runs each registered rule, orders the findings by
 * the time they could save and stores them in the run database:
 *
 *   finding(rank, ord, id, severity, saving_ns, body)
 *        rank NULL for a finding about the whole run; ord 0.. in display
 *        order; body is the finding as JSON (see rules_add).
 *
 * A rule is one file in server/derive/rules/ defining `const struct
 * rules_def rule_<id>` plus one X(<id>) line in RULES_LIST below. It reads
 * the stored tables (never the trace) through the store's read layer over
 * ctx->db (store/scan.h, scan_span.h, facts.h, stats_read.h, slice_read.h:
 * no rule prepares SQL of its own) and the facts in ctx, and calls
 * rules_add() for each thing worth fixing. The finding table itself is the
 * store's (store/findings.h); rules_findings and rules_adopt read and copy
 * it through there.
 *
 * Thresholds: each rule declares its own in a static `struct config_param`
 * table (key, default, unit, bounds, help) named by its rules_def, so an
 * expert can tune it with `rule_<name> = value` in the config file or
 * `--rule-<name> value`, and rules_off switches rules off. base/config may
 * not include derive/ (STAGE_DEPS), so main hands the tables to the config
 * (rules_config_register -> config_register) before config_defaults; the
 * values then live in config's generic key/value store (struct
 * config_rules) and a rule reads one by key with rules_param(). A rule may
 * read a threshold another rule declares (low_gpu_memory reads
 * low_gpu_utilization's rule_gpu_util_pct); each key is declared once.
 *
 * Invariants: findings carry numbers with units in evidence.lines, the
 * raw figures beside them; saving_ns is an estimate per average step of
 * the rank concerned (0 when a rule cannot estimate, e.g. memory limits),
 * capped once the critical path is known (rules_cap: rules_def.side says
 * which part of the path a fix can take away).
 * Memory: the ctx and its facts belong to rules_run(); findings built by
 * rules_add() belong to the ctx until stored. Readers return new JSON owned
 * by the caller.
 */
#ifndef TB_RULES_H
#define TB_RULES_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "base/config.h"
#include "base/err.h"
#include "derive/gpuscan.h"
#include "derive/ivlist.h"

struct scan_launch;

/* The registry, in evaluation order (a rule that sums up others, like
 * low_gpu_utilization, comes after them): one X(<id>) line per rule. */
#define RULES_LIST(X)                                                                                       \
    X(dataloader_bound)                                                                                     \
    X(kernel_launch_bound)                                                                                  \
    X(gpu_idle_gaps)                                                                                        \
    X(enable_amp)                                                                                           \
    X(excessive_host_sync)                                                                                  \
    X(pageable_memcpy)                                                                                      \
    X(copy_not_overlapped)                                                                                  \
    X(layout_transposes)                                                                                    \
    X(optimizer_dominated)                                                                                  \
    X(unfused_attention)                                                                                    \
    X(low_gpu_memory)                                                                                       \
    X(memory_near_limit)                                                                                    \
    X(memory_growth)                                                                                        \
    X(communication_heavy)                                                                                  \
    X(comm_not_overlapped)                                                                                  \
    X(many_small_collectives)                                                                               \
    X(straggler)                                                                                            \
    X(use_ddp_not_dp)                                                                                       \
    X(ddp_backend)                                                                                          \
    X(shared_gpu)                                                                                           \
    X(low_gpu_utilization)

enum rules_severity { RULES_LOW = 0, RULES_MEDIUM = 1, RULES_HIGH = 2 };

/* What recording one operator costs the host, in ns. Measured on an H200
 * with PyTorch 2.11 (tests/data/h200/launch_bound, facts.json): 1,799
 * operators per step, 14.0 ms per profiled step against 7.45 ms without
 * the profiler, so 3.6 µs per operator; a GPU-bound capture hides part of
 * it (1.7 µs). Host-side savings (launch overhead) are counted net of
 * ops_per_step times this, so a finding never promises the profiler's own
 * cost back. */
#define RULES_OP_OVERHEAD_NS 3500.0

/* Step-breakdown parts, in summary_categories order. */
enum rules_part {
    RULES_KERNEL,
    RULES_MEMCPY,
    RULES_MEMSET,
    RULES_COMM,
    RULES_RUNTIME,
    RULES_DATALOADER,
    RULES_CPU_EXEC,
    RULES_OTHER,
    RULES_NPARTS
};

struct rules_step {
    char name[64];
    int64_t ts, dur;           /* stretched step, ns on the rank's clock */
    int64_t host_ts, host_dur; /* the host ProfilerStep span */
    int64_t part[RULES_NPARTS];
};

struct rules_gpu {
    int device;
    char name[128];
    int64_t memory_bytes; /* 0: unknown */
    double cc;            /* compute capability 9.0; 0: unknown */
    double util, tc_share;
    double compute_util;   /* util without collectives (a collective waiting on a peer is not work); -1: unknown */
    int64_t kernel_ns, tc_ns, window_ns;
    int64_t peak_bytes;    /* peak allocated; -1: unknown */
    int64_t peak_reserved; /* reserved by the caching allocator at the peak; 0: unknown */
    int64_t peak_ts;       /* when the peak is reached; 0: unknown */
    int nshare;            /* ranks of the run reporting this GPU (same id, name, size), >= 1: they
                            * share its memory, each counted with memory_bytes / nshare */
};

/* The framework a rank's advice is written for (framework_of in rules.c):
 * a Kineto trace is PyTorch; an Nsight Systems export is CUDA unless it
 * shows PyTorch (aten:: ops, DataLoader ranges, ATen kernels); any other
 * trace with XLA/TPU tracks is JAX, else PyTorch. */
enum rules_framework { RULES_PYTORCH, RULES_JAX, RULES_CUDA, RULES_NFRAMEWORKS };

/* One piece of advice per framework: a rule keeps a
 *   static const struct rules_advice advice[RULES_NFRAMEWORKS]
 * indexed by rules_rank.framework, and passes advice[fw].text and
 * .snippet to rules_add. text: plain text; snippet: code in the
 * framework's language (Python, or C/CUDA for RULES_CUDA), or NULL. */
struct rules_advice {
    const char *text, *snippet;
};

struct rules_rank {
    int rank;
    enum rules_framework framework;
    int training;                 /* 0: an inference trace (no backward pass, no optimizer step) */
    int compiled;                 /* 1: the model runs under torch.compile (compiled regions in the trace) */
    int capture;                  /* 1: a CUDA/HIP graph capture: launches recorded, the GPU barely ran */
    long pid;                     /* the process of its busiest host thread; -1: unknown */
    struct rules_step *steps; /* steady-state steps: a warm-up first step is left out */
    size_t nsteps;
    int warmup_dropped;           /* 1: the first step (>= 5x the others) was left out */
    int world_size;               /* the job's, from distributedInfo; 0: not given */
    double ops_per_step;          /* framework operators (cpu_op events) per step */
    double overhead_ns;           /* the profiler's own host time per step: ops_per_step x RULES_OP_OVERHEAD_NS */
    int64_t avg_dur;              /* mean step duration, ns */
    double avg_part[RULES_NPARTS]; /* mean of each part, ns */
    struct rules_gpu *gpus;
    size_t ngpus;
    const struct rules_gpu *gpu; /* the busiest GPU, NULL when none */
    json_t *summary;             /* the analysis summary (borrowed by rules) */
    struct scan_launch *launch;  /* its launch calls, read once (rules_launches); NULL until asked */
};

struct rules_ctx {
    sqlite3 *db;
    const struct config_rules *cfg;
    struct rules_rank *ranks;
    size_t nranks;
    json_t *findings; /* array, filled by rules_add */
    size_t launch_rows; /* launch calls held by the ranks' launch readers */
    size_t act_rows;    /* host slices held with them (scan_launch_acts) */
    /* rules_run_held's: the slices held in memory the launch readers'
     * preloads read (NULL once every rank's is done, or none), and whom
     * to tell then */
    const struct scan_held *held;
    void (*held_done)(void *arg);
    void *held_arg;
    size_t npreloaded; /* ranks whose launch reader is preloaded */
};

/* The part of a step's critical path (analyses.h, critical_path) that
 * acting on a finding can take away: its saving is capped by that part
 * per step (rules_cap, derive/rules_cap.h). */
enum rules_side {
    RULES_SIDE_STEP = 0, /* any: never more than the step */
    RULES_SIDE_HOST,     /* host fixes: cpu, dataloader, launch_overhead and kernel_gap (the GPU waits) */
    RULES_SIDE_GPU,      /* GPU-side fixes: gpu_compute (kernels and copies) */
    RULES_SIDE_COMM,     /* communication fixes: communication */
    RULES_NSIDES
};

/* Launch calls held in memory by one run's rules, all ranks together
 * (72 bytes each): past it a rank's launches are looked up one by one. */
#define RULES_LAUNCH_ROWS ((size_t)1 << 20)

/* Host slices (SCAN_HOST_ACTS, 24 bytes each) held by one run's rules, all
 * ranks together: past it a rank's host cursors read run.db. */
#define RULES_ACT_ROWS ((size_t)1 << 21)

/* The launch calls of rank r (store/scan.h), read in one pass the first
 * time a rule asks and shared by the rules that look them up or walk them
 * (kernel_launch_bound, gpu_idle_gaps, excessive_host_sync); preloaded
 * (scan_launch_rows) while the run's total stays within RULES_LAUNCH_ROWS.
 * The same pass keeps the rank's host slices for rules_hosts_open while
 * the run's total stays within RULES_ACT_ROWS.
 * OUT *out: borrowed until rules_run returns. Returns 0 or < 0 (e filled). */
int rules_launches(struct rules_ctx *c, const struct rules_rank *r, struct scan_launch **out, struct err *e);

/* Host cursors over db (derive/gpuscan.h) that read the threads' slices
 * held by launch (rules_launches) rather than run.db. nm is borrowed.
 * Returns a set owned by caller (gpuscan_hosts_close); never NULL. */
struct gpuscan_hosts *rules_hosts_open(sqlite3 *db, const struct scan_launch *launch, struct gpuscan_names *nm);

struct rules_def {
    const char *id;
    const char *doc_url; /* documentation link */
    /* Runs the rule over the whole run (every rank is in ctx). Returns 0
     * or an error status; a rule that finds nothing returns 0. */
    int (*run)(struct rules_ctx *ctx, struct err *e);
    /* The thresholds this rule declares (static; NULL when none), nparams
     * of them: RULES_PARAMS(table) fills both. Keys start with "rule_". */
    const struct config_param *params;
    size_t nparams;
    /* RULES_RUN_LEVEL: its findings are about the whole job, not one
     * rank's code (a straggler, which every rank waits for): they come
     * first, on every rank's list, as the findings of rank null do.
     * RULES_PER_RANK for most rules. */
    int run_level;
    /* What its fix takes off the critical path (RULES_SIDE_STEP when left
     * out): the cap of its savings. */
    enum rules_side side;
};

enum { RULES_PER_RANK = 0, RULES_RUN_LEVEL = 1 };

#define RULES_PARAMS(table) table, sizeof(table) / sizeof((table)[0])

#define X(id) extern const struct rules_def rule_##id;
RULES_LIST(X)
#undef X

/* Records a finding of rule `def` about `rank` (-1: the run) and returns it
 * (owned by ctx) so the rule can add to it. evidence: {lines:[text...],
 * <figures>...}, stolen. link: the run-page route that shows the evidence,
 * as a query string without the run ("view=kernels&q=nchwToNhwc"), or NULL.
 * advice: plain text; snippet: code, or NULL. The title is printf-style. */
json_t *rules_add(struct rules_ctx *ctx, const struct rules_def *def, enum rules_severity sev, int rank,
                  double saving_ns, json_t *evidence, const char *link, const char *advice, const char *snippet,
                  const char *title_fmt, ...) __attribute__((format(printf, 10, 11)));

/* The advice for rank r: infer[fw] on an inference rank when it is given
 * (has text), else train[fw]. infer may be NULL. */
const struct rules_advice *rules_advice_of(const struct rules_rank *r, const struct rules_advice *train,
                                           const struct rules_advice *infer);

/* Formats a duration in ns for evidence text ("129.7 ms", "850 µs") into
 * buf and returns buf. */
const char *rules_fmt_ns(double ns, char *buf, size_t n);
/* Formats bytes ("2.0 GiB", "640 KiB") into buf and returns buf. */
const char *rules_fmt_bytes(double bytes, char *buf, size_t n);

/* The run-page route of the timeline over step s of rank r
 * ("view=timeline&rank=R&start=US&end=US") into buf; returns buf. */
const char *rules_link_step(const struct rules_rank *r, const struct rules_step *s, char *buf, size_t n);

/* The memory-page route of GPU dev of rank r ("view=memory&rank=R&device=D")
 * into buf; returns buf. */
const char *rules_link_memory(const struct rules_rank *r, int dev, char *buf, size_t n);

/* The step of r with the largest part k (or the longest step when k < 0);
 * NULL when r has no steps. */
const struct rules_step *rules_worst_step(const struct rules_rank *r, int k);

/* The index of the step of r holding ts, or -1 (steps are in time order). */
int rules_step_at(const struct rules_rank *r, int64_t ts);

/* The length of [a, b) inside r's steps. *si (start at 0) walks the steps
 * forward: calls must come with a non-decreasing a. OUT *first: the step
 * holding the first in-step part; OUT *most: the step holding most of it
 * (either NULL: not wanted; both *si when [a, b) meets no step). */
int64_t rules_len_in_steps(const struct rules_rank *r, size_t *si, int64_t a, int64_t b, size_t *first, size_t *most);

/* Appends to lines the evidence about g's peak allocated memory (g must know
 * both peak_bytes and memory_bytes): the peak against the rank's share of
 * the GPU and, when ranks share it, how it is split. */
void rules_lines_peak(json_t *lines, const struct rules_gpu *g);

/* The compute of one rank measured against its communication, window by
 * window: compute = the union of the rank's kernels on its GPU streams that
 * are not collectives (kernel_stat.comm), streamed in time order and merged
 * on the fly. Shared by comm_not_overlapped and the ranks comparison.
 *   lo, hi:  the rank's slice id range (ids follow track, then time);
 *   comm:    the communication intervals, normalized;
 *   w:       nw windows (steps), in start order, not overlapping;
 *   comm_ns: OUT comm inside each window (NULL: not wanted);
 *   comp_ns: OUT compute inside each window;
 *   ovl_ns:  OUT the part of that compute that overlaps comm.
 * The OUT arrays hold nw elements; they are overwritten. Returns 0 or
 * ERR_DB (message in e). */
int rules_comm_overlap(sqlite3 *db, int rank, int64_t lo, int64_t hi, const struct ivlist *comm, const struct ivl *w,
                       size_t nw, int64_t *comm_ns, int64_t *comp_ns, int64_t *ovl_ns, struct err *e);

/* Registers every rule's thresholds with the config (config_register), in
 * RULES_LIST order, so the config file, flags and --help know them. Call
 * before config_defaults and before threads start; calling it again is a
 * no-op. Returns 0 or ERR_INVALID (a key declared twice). */
int rules_config_register(struct err *e);

/* The value of the threshold `key` (declared by some rule's params) in
 * ctx's config: set there, else its default. An undeclared key is a bug
 * (assertion). */
double rules_param(const struct rules_ctx *ctx, const char *key);

/* Recomputes the findings of every rank of db (an open read-write handle
 * with the analysis tables) and stores them, replacing earlier ones. db may
 * be a scratch database of rundb_open_aside (the rules read only the run's
 * tables, not the GPU analyses'): rules_adopt then copies the findings from
 * it, attached to the run's handle as RUNDB_ASIDE, in one transaction. */
int rules_run(sqlite3 *db, const struct config_rules *cfg, struct err *e);
int rules_adopt(sqlite3 *db, struct err *e);

/* rules_run reading the launch calls (rules_launches) from held where it
 * holds a track's slices (derive/slice_feed.h: the import's; the same
 * findings); held_done(arg) (may be NULL) is called on this thread as soon
 * as held is read no more, before rules_run_held returns: the import frees
 * the feed then. held NULL: rules_run. */
int rules_run_held(sqlite3 *db, const struct config_rules *cfg, const struct scan_held *held,
                   void (*held_done)(void *arg), void *arg, struct err *e);

/* Caps the stored findings of db by its critical path (analyses_run must
 * have committed; rules_adopt calls it after the copy): each saving is at
 * most its rule's side of the path per steady step (rules_cap.h), said in
 * its evidence; the findings are then reordered by the capped savings and
 * stored again. Nothing changes when no saving exceeds its cap or db has
 * no critical path. Returns 0 or < 0 (e filled). */
int rules_cap(sqlite3 *db, struct err *e);

/* 1 when the first of n step durations is warm-up (n >= 3, and it is five
 * or more times the median of the others): the rules and the caps judge
 * the steps after it. */
int rules_warmup_first(const int64_t *dur, size_t n);

/* The stored findings in display order, as a JSON array of finding
 * objects (rank: null for run-level ones). rank >= 0 keeps that rank's
 * and the run-level findings. ERR_INVALID when db has no finding table.
 * OUT *out: owned by caller. */
int rules_findings(sqlite3 *db, int rank, json_t **out, struct err *e);

#endif

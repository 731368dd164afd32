/*
 * gpuscan.h — reading, per rank, what the host threads and a GPU's streams
 * did over time, streaming over the clustered slice table (ids follow
 * (track, ts, -dur), so one track's slices are one id range in time order).
 * Shared by the rules that explain GPU idle time by host activity
 * (kernel_launch_bound, gpu_idle_gaps); the policy (which stretch counts,
 * how it is labelled) stays in each rule.
 *
 * Owns three readers of the run tables slice, track and str (read-only,
 * through the store's cursors: store/scan.h's id ranges and name lookups):
 *  - the host-activity classification of a slice (enum gpuscan_act) and a
 *    name cache (struct gpuscan_names: str id -> activity, and its text);
 *  - host cursors (struct gpuscan_host, one per thread, made on demand by
 *    struct gpuscan_hosts): the stack of host slices open at the cursor's
 *    time, swept stretch by stretch with the activity of each stretch; a
 *    thread's rows come from run.db, or from memory when the caller read
 *    them already (gpuscan_hosts_hold: one read of the host slices serves
 *    every analysis or rule that sweeps them);
 *  - the GPU ops (kernels, copies, memsets) of one device's streams merged
 *    in start order over a window (struct gpuscan_lanes).
 *
 * Invariants: cursors move forward only (a seek or sweep to an earlier time
 * than the cursor's leaves it where it is; a sweep starts at or after the
 * end of the previous one). Memory is bounded by the trace's shape, not its
 * size: one stack of open slices per host thread (its nesting depth) and
 * one fetched row per GPU stream; rows are streamed from prepared
 * statements, never loaded here (held rows are the caller's, bounded by
 * it). A slice overlapping its parent's end (clock rounding) is cut at
 * that end, so each stack stays ordered by end.
 *
 * Memory: every *_open returns an object owned by the caller, freed by the
 * matching *_close (which accepts NULL). A gpuscan_hosts borrows its
 * gpuscan_names, which must outlive it; the cursors it hands out are
 * borrowed from it (valid until gpuscan_hosts_close); the stack a cursor
 * shows is borrowed until the cursor next moves. All objects hold prepared
 * statements of the db they were opened on: one thread at a time, the db
 * kept open until they are closed. Errors follow err.h (0 or ERR_DB, the
 * SQLite message in e).
 */
#ifndef TB_GPUSCAN_H
#define TB_GPUSCAN_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "store/scan.h"

/* ---------------------------------------------------------------------- */
/* Host activity of a slice                                                 */
/* ---------------------------------------------------------------------- */

/* In priority order (lower wins when slices nest): time inside a DataLoader
 * call that also launches is input time, a sync inside an op is sync time,
 * and so on. GPUSCAN_NONE: no slice saying anything is open (Python the
 * profiler did not record). Rules may number their own buckets from
 * GPUSCAN_NACT on. */
enum gpuscan_act {
    GPUSCAN_DATALOADER, /* a DataLoader call (kclass_dataloader) */
    GPUSCAN_COMM,       /* a collective op (kclass_comm_op: nccl:, gloo: ...) */
    GPUSCAN_SYNC,       /* a runtime/driver call that blocks on the GPU */
    GPUSCAN_LAUNCH,     /* any other runtime/driver call (launches ...) */
    GPUSCAN_OP,         /* a framework op (cpu_op) */
    GPUSCAN_REGION,     /* a user annotation (record_function) */
    GPUSCAN_NONE,       /* nothing open */
    GPUSCAN_NACT
};

/* The activity a slice of this kind (enum tb_kind) and name stands for, or
 * -1 for slices that say nothing about it (the ProfilerStep span, Python
 * frames, GPU-side events). Pure. */
int gpuscan_act_of(const char *name, int kind);

/* ---------------------------------------------------------------------- */
/* Names: str id -> activity (cached) and text                              */
/* ---------------------------------------------------------------------- */

struct gpuscan_names;

/* Opens a name reader over db's str table.
 * OUT *out: owned by caller (gpuscan_names_close). */
int gpuscan_names_open(sqlite3 *db, struct gpuscan_names **out, struct err *e);

/* The activity of a slice of this kind named by str id (gpuscan_act_of of
 * its text; "" when the id is unknown). Cached in a direct-mapped table. */
int gpuscan_names_act(struct gpuscan_names *nm, uint32_t id, int kind);

/* The text of str id into buf (truncated to n), "" when unknown. Returns
 * buf. */
const char *gpuscan_names_text(struct gpuscan_names *nm, uint32_t id, char *buf, size_t n);

/* <0 with the first database error a lookup of nm met (its answer then
 * stood on no name), else 0. Lookups happen inside sweeps that cannot stop
 * on each name; whoever used nm checks this before trusting the result. */
int gpuscan_names_error(const struct gpuscan_names *nm, struct err *e);

/* Frees nm (NULL: nothing). */
void gpuscan_names_close(struct gpuscan_names *nm);

/* ---------------------------------------------------------------------- */
/* Host threads: a cursor per thread, moving forward in time                */
/* ---------------------------------------------------------------------- */

/* An open host slice: where it ends (cut at its parent's end), its name
 * (str id) and its activity (enum gpuscan_act). */
struct gpuscan_frame {
    int64_t end;
    uint32_t name;
    int8_t act;
};

struct gpuscan_hosts;
struct gpuscan_host;

/* Called for each stretch of a sweep, in time order:
 *   act:   the activity then (the highest priority open, GPUSCAN_NONE);
 *   stack: the slices open then that say something about it, outermost
 *          first (borrowed for the call); n of them (0: none);
 *   ns:    the stretch's length (> 0). */
typedef void (*gpuscan_sweep_fn)(void *arg, int act, const struct gpuscan_frame *stack, int n, int64_t ns);

/* The cursors of one db's host threads, opened on demand. nm is borrowed
 * (it outlives the result). Returns a set owned by caller
 * (gpuscan_hosts_close); never NULL. */
struct gpuscan_hosts *gpuscan_hosts_open(sqlite3 *db, struct gpuscan_names *nm);

/* The cursor of thread track (a track id), opened before its first slice
 * on first use; a track without slices gives an empty cursor.
 * OUT *out: borrowed from H (valid until gpuscan_hosts_close). */
int gpuscan_hosts_get(struct gpuscan_hosts *H, int64_t track, struct gpuscan_host **out, struct err *e);

/* Hands H the rows of thread track that a caller has already read: its
 * slices in id order, all of them or only the SCAN_HOST_ACTS ones
 * (store/scan.h: the cursor reads no others), which the cursor then reads
 * instead of run.db. n rows, stride bytes apart (a scan_brief may head a
 * larger record); borrowed: they must outlive H. Before gpuscan_hosts_get
 * of that track. */
void gpuscan_hosts_hold(struct gpuscan_hosts *H, int64_t track, const struct scan_brief *rows, size_t n,
                        size_t stride);

/* Frees H and its cursors (NULL: nothing). */
void gpuscan_hosts_close(struct gpuscan_hosts *H);

/* Moves h to time t (never backwards: an earlier t leaves h where it is);
 * the stack then holds the slices open at t. */
int gpuscan_host_seek(struct gpuscan_host *h, int64_t t, struct err *e);

/* The slices open at h's time, outermost first; OUT *n: how many.
 * Borrowed: valid until h next moves. */
const struct gpuscan_frame *gpuscan_host_stack(const struct gpuscan_host *h, int *n);

/* 1 when a slice of activity act is open at h's time, else 0. */
int gpuscan_host_in(const struct gpuscan_host *h, int act);

/* The activity of a stack of n frames: the highest priority present,
 * GPUSCAN_NONE when none is. */
int gpuscan_stack_act(const struct gpuscan_frame *stack, int n);

/* Reports the thread's activity over [a, b) to fn, stretch by stretch
 * (the stretches add up to b - a); a must not be before the end of the
 * previous sweep of h. Leaves h at b. */
int gpuscan_host_sweep(struct gpuscan_host *h, int64_t a, int64_t b, gpuscan_sweep_fn fn, void *arg,
                       struct err *e);

/* ---------------------------------------------------------------------- */
/* GPU streams of one device, merged in start order                         */
/* ---------------------------------------------------------------------- */

struct gpuscan_lanes;

/* A GPU op: [ts, end) on the rank's clock (ns) and its correlation id
 * (0: none). */
struct gpuscan_op {
    int64_t ts, end, corr;
};

/* Opens the kernel/memcpy/memset slices of the GPU streams of (rank,
 * device) — streams with no device count too — starting before w1, from
 * each stream's last slice starting before w0 on (an op there may still
 * run at w0).
 * OUT *out: owned by caller (gpuscan_lanes_close); NULL on failure. */
int gpuscan_lanes_open(sqlite3 *db, int rank, int device, int64_t w0, int64_t w1, struct gpuscan_lanes **out,
                       struct err *e);

/* The next op of the device in start order (ties: the stream opened
 * first) into *op. Returns 1, 0 when none is left, or ERR_DB. */
int gpuscan_lanes_next(struct gpuscan_lanes *L, struct gpuscan_op *op, struct err *e);

/* Frees L (NULL: nothing). */
void gpuscan_lanes_close(struct gpuscan_lanes *L);

#endif

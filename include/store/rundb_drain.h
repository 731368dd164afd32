/*
 * rundb_drain.h — private to the run database writer (rundb_writer.c and
 * rundb_drain.c): the writer's state, and the end of a rank, which drains
 * the external sorter into slice rows in clustered (track, ts, -dur) order,
 * computing depth and parent in one pass, then writes the rank's tracks,
 * notes, header facts and stats.
 *
 * No other module includes this header: everything outside the writer goes
 * through rundb_writer.h. rundb_spool.c is part of the writer: a spool is a
 * writer with no database whose ops go to a file, replayed later. The state is used by one thread (the ingest job
 * that created the writer) plus the background thread of rundb_writer.c,
 * which touches only the bg_* fields under bg_mu and the SQLite connection
 * while the parsing thread does not (rundb_writer_barrier hands it back).
 */
#ifndef TB_RUNDB_DRAIN_H
#define TB_RUNDB_DRAIN_H

#include <jansson.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "store/model.h"
#include "store/nameids.h"
#include "store/rundb.h"
#include "store/rundb_schema.h"
#include "store/rundb_writer.h"

/* The parse's ops wait for the writer thread in up to BG_QUEUE chunks of
 * BG_CHUNK. The writer stalls while the sorter sorts and writes a full
 * arena (64 MiB: ~0.1 s); 8 chunks let the parse wait through most of it
 * (tiled33's parse 0.59-0.64 s), 32 let it go on (0.55-0.57 s) for 25-30
 * MiB more at the parse's peak, well under the derive's. */
#define BG_CHUNK ((size_t)1 << 20)
#define BG_QUEUE 32

/* ====================================================================== */
/* Writer state                                                           */
/* ====================================================================== */

struct strmap {
    uint64_t *hash;   /* 0 = empty slot */
    uint32_t *id;
    uint64_t *off;    /* offset in arena: [u32 len][bytes] */
    size_t cap, n;
    char *arena;
    size_t arena_len, arena_cap;
};

struct track {
    uint32_t id;
    int rank;
    enum tb_track_kind kind;
    char *pid, *tid, *name;
    size_t pid_n, tid_n;  /* pid/tid may hold NUL bytes: compare by length */
    int64_t sort;
    int has_sort;
    int device;           /* set by rundb_track_set_device; -1: from pid */
    int max_depth;
    uint64_t nslices;
    int64_t first_slice, last_slice;
};

struct trackmap {
    uint64_t *hash;
    uint32_t *idx;    /* index into tracks + 1; 0 = empty */
    size_t cap;
};

struct pname {
    char *pid, *name;
};

struct note {
    int rank;
    enum tb_note_level level;
    char *reason, *example;
    uint64_t count;
};

/* What a slice carries through the sorter besides its key. */
struct slice_payload {
    uint32_t name, cat;
    int64_t corr, ext;
    uint32_t kind;
    uint32_t args_len;
    /* args bytes follow */
};


/* Rows travel to the background writer as ops in 1 MiB chunks: the parsing
 * thread never waits for SQLite, and SQLite never waits for parsing. */
enum op_type { OP_STR = 1, OP_SLICE, OP_FLOW, OP_INSTANT, OP_COUNTER, OP_MEM, OP_ROW, OP_NAMEIDS };

struct op_hdr {
    uint32_t type, len; /* len: payload bytes after the header */
};

struct op_flow {
    int32_t rank;
    uint32_t cat, name, track;
    int64_t ts;
    char ph, bp;
    uint32_t fid_len;
};

struct op_instant {
    uint32_t track, name, cat;
    char scope;
    int64_t ts;
    uint32_t args_len;
};

struct op_counter {
    int32_t rank;
    struct tb_counter c;
};

struct op_mem {
    int32_t rank;
    struct tb_mem m;
};

/* A sorted slice row on its way to SQLite (rundb_drain.c): the merge runs
 * on the job's thread while the writer thread inserts. args bytes follow. */
struct op_row {
    int64_t id, ts, dur, parent, corr, ext; /* parent 0: none */
    uint32_t track, name, cat, kind, depth, args_len;
};

/* A chunk of a name's slice ids (store/nameids.h), the gaps following. */
struct op_nameids {
    int64_t first, last, n;
    uint32_t name, len;
};

#define OP_ALIGN(n) (((n) + 7) & ~(size_t)7)

struct bg_chunk {
    char *buf;
    size_t len, cap;
};

/* Rows inserted per statement by the writer thread: a statement's step,
 * reset and program start cost as much as a row's own work. */
#define RUNDB_BATCH_ROWS 16
#define RUNDB_BATCH_COLS 11 /* the widest row, a slice's (its id left to SQLite) */

/* Rows of one table (slices, flows, memory events) held on the writer
 * thread until RUNDB_BATCH_ROWS of them go in as one statement (many);
 * what is left at the end of a chunk goes one row a statement (one). held
 * points into the chunk, which is reused after it. */
struct rundb_batch {
    sqlite3_stmt *one, *many;
    const char *held[RUNDB_BATCH_ROWS];
    int n;
    void (*bind)(struct rundb_batch *b, sqlite3_stmt *st, int k, const char *d); /* row d at slot k */
    /* the rowid row d must get, NULL: any. The slices' INSERT leaves the
     * id to SQLite, which gives the next after the largest (the file is
     * new and the drain numbers them 1, 2, ... across ranks): an explicit
     * INTEGER PRIMARY KEY costs a uniqueness seek a row. Checked after
     * each statement, so a row out of step fails the import. */
    int64_t (*rowid)(const char *d);
    const char *what;                                                          /* for an error */
    /* what many's integer parameters hold (rundb_batch_int): set 1 for
     * bound's value, 2 for NULL, 0 unknown */
    int64_t bound[RUNDB_BATCH_ROWS * RUNDB_BATCH_COLS];
    uint8_t set[RUNDB_BATCH_ROWS * RUNDB_BATCH_COLS];
};

struct rundb_writer {
    sqlite3 *db;
    /* background writer: the parsing thread fills cur_buf with ops and
     * queues it; bg_main applies them to SQLite and the sorter */
    pthread_t bg_thread;
    int bg_started;
    pthread_mutex_t bg_mu;
    pthread_cond_t bg_get, bg_put, bg_idle;
    struct bg_chunk bg_q[BG_QUEUE];
    int bg_head, bg_count, bg_busy, bg_stop;
    char *bg_free[BG_QUEUE + 2];
    int bg_nfree;
    struct err bg_err;        /* first writer error, under bg_mu */
    atomic_int bg_err_seen;   /* set with bg_err, read without the lock */
    char *cur_buf;
    size_t cur_len, cur_cap;
    int spool_fd;             /* >= 0: a spool (rundb_spool.h), ops go here; else -1 */
    sqlite3_stmt *ins_str, *ins_instant, *ins_counter, *ins_track, *ins_rank, *ins_note;
    struct rundb_batch slices, flows, mems; /* slices: the drain's OP_ROWs */
    sqlite3_stmt *ins_nameids;
    struct nameids_build *names; /* the drained slices' ids by name, until their chunks are flushed */
    struct strmap strs;
    uint32_t next_str;
    struct track *tracks;
    size_t ntracks, tracks_cap;
    size_t rank_first_track;  /* tracks of the current rank start here */
    struct trackmap tmap;
    struct pname *pnames;
    size_t npnames;
    struct note *notes;
    size_t nnotes;
    struct sorter *sorter;
    size_t sort_memory;
    /* every drained slice with a correlation id, for corr_ids
     * (rundb_schema_finish), while they fit a quarter of sort_memory;
     * corr_over once they did not (NULL then: index slice_corr instead) */
    struct rundb_corr *corr;
    size_t ncorr, corr_cap;
    int corr_over;
    char tmp_dir[1024];
    uint64_t seq;
    int64_t next_slice_id;
    int rank;
    int in_rank;
    int rows_committed; /* rundb_commit_rows ran: the indexes come in a transaction of their own */
    struct tb_rank_stats stats;
    int64_t t0, t1;
    json_t *rank_header;      /* the importer's header, until finish_rank */
    const char *rank_format;  /* static */
    int64_t rank_base_ns;
    char *payload_buf;
    size_t payload_cap;
    void (*phase_hook)(void *, const char *);
    void *phase_ctx;
    struct rundb_slice_sink sink; /* slice NULL: none */
};

/* Reserves room for one op of len payload bytes in the current chunk
 * (handing a full chunk on first); returns where the payload goes. */
char *rundb_writer_emit(struct rundb_writer *w, enum op_type type, size_t len);

/* A spool's full chunk appended to its file (rundb_spool.c); a write error
 * is kept as the writer's error, seen by the next add. */
void rundb_spool_put(struct rundb_writer *w);

/* Binds integer v (null: SQL NULL) to parameter p (from 1) of st, b's one
 * or many statement; skipped on many when it holds that already: bindings
 * outlive a reset, and a slot's track, kind, category or rank mostly
 * repeat from one statement to the next (binding every value was a tenth
 * of a slice insert's cost). Defined in rundb_writer.c. */
void rundb_batch_int(struct rundb_batch *b, sqlite3_stmt *st, int p, int64_t v, int null);

/* Binds OP_ROW d's 11 columns (not its id) at slot k of st (rundb_drain.c): the bind of
 * w->slices. */
void rundb_drain_bind_row(struct rundb_batch *b, sqlite3_stmt *st, int k, const char *d);
/* The id the drain gave slice row d (rundb_batch.rowid). */
int64_t rundb_drain_row_id(const char *d);

/* Hands the name_ids chunks still held (every rank drained) to the writer
 * thread: before the rows are committed, so that a run open early finds
 * its slices by name. */
int rundb_drain_names_flush(struct rundb_writer *w, struct err *e);

/* Waits until the background thread has applied everything emitted so far
 * and returns its first error, if any; afterwards the caller may use w->db
 * (the background thread is idle). Defined in rundb_writer.c. */
int rundb_writer_barrier(struct rundb_writer *w, struct err *e);

/* The track with id (1-based) of this writer, or NULL. Borrowed (valid
 * until the next rundb_track call may grow the array). */
static inline struct track *rundb_writer_track_get(struct rundb_writer *w, uint32_t id)
{
    return id >= 1 && id <= w->ntracks ? &w->tracks[id - 1] : NULL;
}

/* Reports a long phase ("sort", "write", "index") to the progress hook. */
static inline void rundb_writer_phase(struct rundb_writer *w, const char *name)
{
    if (w->phase_hook) w->phase_hook(w->phase_ctx, name);
}

/* Steps an INSERT/UPDATE that returns no row and resets it; an error is
 * rundb_db_error(w->db, e, what). */
static inline int rundb_writer_step_done(struct rundb_writer *w, sqlite3_stmt *st, struct err *e, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(w->db, e, what);
}

#endif

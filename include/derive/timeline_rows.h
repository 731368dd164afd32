/*
 * timeline_rows.h — the batched INSERT of the timeline's builds: rows of
 * one table are buffered and written TIMELINE_ROWS_BATCH per statement
 * (one sqlite3_step for 32 rows instead of 32), the rest one by one at
 * timeline_rows_flush. Its users write rows SQL reads back by column: the
 * analyses' samples (~120 k for a 280 MB trace) and mem_alloc; row by row,
 * the VM's per-statement work cost about as much as computing them (the
 * timeline's own tables are packed in chunks instead: timeline_lod.h,
 * timeline_counters.h, timeline_agg.h).
 *
 * Invariants: rows reach the table in the order they were added, so a
 * table's content (and any rowid) is what row-by-row inserts give. A
 * column is an int64 unless its bit is set in the writer's real mask (a
 * double), or in the row's null mask (NULL).
 * The statements are literals (TIMELINE_ROWS32 repeats the placeholders);
 * nothing is built from strings.
 *
 * Memory: the writer is the caller's (on its stack or inside its state)
 * and holds its two statements until timeline_rows_close; it must be
 * flushed before the transaction ends. One thread at a time, the one that
 * owns db.
 *
 * Also here, struct timeline_rows_held: the records a build holds while it
 * counts a track's or a series' level rows (timeline_lod.h), up to a cap;
 * past it the build gives up holding, frees them and reads its input
 * again. Owned by the caller (timeline_rows_held_free), one thread.
 */
#ifndef TB_TIMELINE_ROWS_H
#define TB_TIMELINE_ROWS_H

#include <sqlite3.h>
#include <stdint.h>

#include "base/err.h"
#include "base/varint.h"

#define TIMELINE_ROWS_BATCH 32
#define TIMELINE_ROWS_MAXCOL 10
#define TIMELINE_ROWS4(r) r "," r "," r "," r
/* 32 copies of the placeholder group r, comma separated. */
#define TIMELINE_ROWS32(r) TIMELINE_ROWS4(TIMELINE_ROWS4(r)) "," TIMELINE_ROWS4(TIMELINE_ROWS4(r))

union timeline_rows_val {
    int64_t i;
    double d;
};

struct timeline_rows {
    sqlite3 *db;
    sqlite3_stmt *one, *many; /* one row; TIMELINE_ROWS_BATCH rows */
    const char *what;         /* static: the error's context */
    int ncol, n;
    unsigned real;            /* columns bound as doubles */
    unsigned nulls[TIMELINE_ROWS_BATCH];
    union timeline_rows_val v[TIMELINE_ROWS_BATCH * TIMELINE_ROWS_MAXCOL];
};

/* Prepares sql_one (one row) and sql_many (TIMELINE_ROWS_BATCH rows) for
 * ncol columns (1 to TIMELINE_ROWS_MAXCOL, and ncol placeholders a row in
 * both: asserted); real: the columns (bit c for column c, from 0) that hold
 * doubles. what: static text for errors. On failure w holds nothing
 * (timeline_rows_close is still safe). */
int timeline_rows_open(struct timeline_rows *w, sqlite3 *db, const char *sql_one, const char *sql_many, int ncol,
                       unsigned real, const char *what, struct err *e);

/* Adds a row of ncol values (v[c].d for real columns, else v[c].i; the
 * columns of bit c in nulls are NULL), writing a batch when it is full. */
int timeline_rows_add(struct timeline_rows *w, const union timeline_rows_val *v, unsigned nulls, struct err *e);

/* Writes the rows still buffered. */
int timeline_rows_flush(struct timeline_rows *w, struct err *e);

/* Finalizes the statements (rows still buffered are dropped). */
void timeline_rows_close(struct timeline_rows *w);

/* One row of a packed table (lodpack, clodpack, gpubusypack, taggpack):
 * ins's parameters are the nkeys keys, then the chunk's first and last
 * key, its row count n and its rows; `what` names the table for errors. */
int timeline_rows_chunk(sqlite3 *db, sqlite3_stmt *ins, const int64_t *keys, int nkeys, int64_t first, int64_t last,
                        int64_t n, const struct varint_buf *rows, const char *what, struct err *e);

/* Records of size bytes, at most hold of them; spilled: more were offered
 * since timeline_rows_held_reset (then v is NULL and n 0). */
struct timeline_rows_held {
    void *v;
    size_t n, cap, hold, size;
    int spilled;
};

/* Empty: nothing held, not spilled (the memory is kept for the next). */
void timeline_rows_held_reset(struct timeline_rows_held *h);

/* The slot for one more record (owned by h, valid until the next call), or
 * NULL once more than hold were offered: then h spills and frees them. */
void *timeline_rows_held_add(struct timeline_rows_held *h);

/* Gives up holding (and the memory) until the next reset. */
void timeline_rows_held_spill(struct timeline_rows_held *h);

void timeline_rows_held_free(struct timeline_rows_held *h);

#endif

/*
 * nameids.h — the slices of each name: run.db's name_ids table, which takes
 * the place of an index on slice(name). A search by name, the rules' spans
 * by name (Optimizer.step#, nccl:*) and the counts of the timeline search
 * read a name's slice ids from it, then each row by id.
 *
 * Why not an index: CREATE INDEX on slice(name, track, ts) took 0.42 s of
 * the import's critical path on tiled33 (783 k slices; sort and build),
 * while the ids of a name come for free as the drain numbers the slices.
 *
 * Format: a name's ids ascend (slices are numbered in (track, ts) order, so
 * id order is (track, ts) order) and are cut into chunks, one row each:
 * name_ids(name, first, last, n, ids) with first and last the chunk's least
 * and greatest id, n its count and ids the n-1 gaps after first as LEB128
 * varints (base/varint.h), at most NAMEIDS_CHUNK bytes. The key (name,
 * first) orders a name's chunks. A chunk that does not decode is
 * rundb_damaged.
 *
 * Runs stored before the table existed have the index slice_name on (name,
 * track, ts) instead; the reader answers from it with the same results.
 *
 * Memory: the builder holds at most one partial chunk a name, and flushes
 * them all when together they pass NAMEIDS_HELD_MAX; besides, 40 bytes a
 * name id up to the largest seen (the writer's string table holds more per
 * name). Chunks it hands to emit are borrowed for the call. A reader borrows its connection (one
 * thread at a time) and owns its statements (nameids_close).
 */
#ifndef TB_NAMEIDS_H
#define TB_NAMEIDS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define NAMEIDS_CHUNK 2048          /* bytes of gaps a chunk: the row stays on its page */
#define NAMEIDS_HELD_MAX (8u << 20) /* bytes the builder holds before flushing every name */

/* ---------------------------------------------------------------------- */
/* building (the writer)                                                  */

struct nameids_chunk {
    uint32_t name;
    int64_t first, last, n;
    const uint8_t *ids; /* the n-1 gaps */
    size_t len;
};

typedef int (*nameids_emit_fn)(void *ctx, const struct nameids_chunk *c, struct err *e);

struct nameids_build;

/* A builder whose full chunks go to emit(ctx, ...).
 * OUT: owned by caller (nameids_build_free). */
struct nameids_build *nameids_build_new(nameids_emit_fn emit, void *ctx);

/* Adds slice id under name. Ids must ascend over all calls (as the drain
 * numbers them). Returns emit's status when a chunk is handed on. */
int nameids_build_add(struct nameids_build *b, uint32_t name, int64_t id, struct err *e);

/* Hands on every partial chunk, in name order. */
int nameids_build_flush(struct nameids_build *b, struct err *e);

void nameids_build_free(struct nameids_build *b);

/* ---------------------------------------------------------------------- */
/* reading                                                                */

struct nameids;

/* A reader over db's name_ids, or over slice_name in a run stored before.
 * OUT *out: owned by caller (nameids_close), NULL on failure. */
int nameids_open(sqlite3 *db, struct nameids **out, struct err *e);

/* Starts a walk over the ids of name in [lo, hi], ascending. */
void nameids_begin(struct nameids *c, uint32_t name, int64_t lo, int64_t hi);

/* The next id of the walk: 1 (*id set), 0 at its end, < 0 error. */
int nameids_next(struct nameids *c, int64_t *id, struct err *e);

/* How many ids name has in [lo, hi] (whole chunks counted undecoded).
 * Returns 0 or < 0 on error. */
int nameids_count(struct nameids *c, uint32_t name, int64_t lo, int64_t hi, int64_t *n, struct err *e);

void nameids_close(struct nameids *c);

#endif

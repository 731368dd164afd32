/*
 * sorter.h — an external merge sort of variable-size records, used by ingest
 * to put a trace's slices into (track, start, longest-first) order with
 * bounded memory whatever the trace size.
 *
 * Records are added with a key and an opaque payload. While the in-memory
 * arena (the memory budget) has room they stay in RAM; when it is full the
 * arena is sorted and written as one run to an unlinked temporary file in
 * tmp_dir. sorter_next() then yields records in key order, merging the runs
 * with a heap (or walking the single in-memory run when nothing spilled).
 * Ties keep insertion order (the key includes a sequence number), so the
 * output is deterministic.
 *
 * Lifecycle: sorter_new -> sorter_add* -> sorter_finish -> sorter_next* ->
 * sorter_free. A sorter is used by one thread.
 *
 * Memory: the arena (the budget) while adding; while merging, one read
 * buffer per run, together the budget (each between 64 KiB and 1 MiB), so
 * the whole sort stays near the budget up to ~1000 runs (64 GB of records
 * at the default 64 MiB). Payload pointers returned by
 * sorter_next are borrowed until the next call.
 */
#ifndef TB_SORTER_H
#define TB_SORTER_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct sorter_key {
    uint32_t track;
    int64_t ts;
    int64_t dur; /* sorted descending: parents before children */
    uint64_t seq;
};

struct sorter;

/* budget: bytes of RAM for records (min 1 MiB). tmp_dir: where runs spill.
 * Returns an object owned by the caller (sorter_free). */
struct sorter *sorter_new(size_t budget, const char *tmp_dir);

int sorter_add(struct sorter *s, const struct sorter_key *k, const void *payload, uint32_t n, struct err *e);

/* Ends input. Returns 0 or an I/O error. */
int sorter_finish(struct sorter *s, struct err *e);

/* Next record in order: returns 1 with *k, *payload, *n filled; 0 when
 * done; negative on I/O error. */
int sorter_next(struct sorter *s, struct sorter_key *k, const void **payload, uint32_t *n, struct err *e);

/* Runs written to disk so far (0 when everything fit in RAM). */
int sorter_spilled_runs(const struct sorter *s);

/* The read buffer of each run during the merge (0 before sorter_finish or
 * when nothing spilled). */
size_t sorter_run_buffer(const struct sorter *s);

void sorter_free(struct sorter *s);

#endif

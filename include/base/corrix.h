/*
 * corrix.h — a sorted index from a 64-bit key (a correlation id, as Kineto
 * pairs a launch call with its GPU ops) to positions in the caller's array:
 * 16 bytes an entry, where a hash map took ~100 with its free slots and
 * growth. The summary, the GPU analyses and the rules' launch reader each
 * pair millions of rows by correlation id through one.
 *
 * Entries are sorted by (key, idx), so the entries of one key follow each
 * other in position order and the first is the earliest stored.
 *
 * Memory: the array is the caller's; these functions neither allocate nor
 * keep state. Threads: none.
 */
#ifndef TB_CORRIX_H
#define TB_CORRIX_H

#include <stddef.h>
#include <stdint.h>

struct corrix {
    int64_t key;
    uint32_t idx;
};

/* Sorts v[0..n) by (key, idx). */
void corrix_sort(struct corrix *v, size_t n);

/* The position in sorted v[0..n) of the first entry of key, n when none. */
size_t corrix_first(const struct corrix *v, size_t n, int64_t key);

#endif

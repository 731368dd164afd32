/*
 * tmheap.h — a min-heap of times, each with a 32-bit tag: the ends of what
 * is still running in a sweep over intervals in start order (the GPU-busy
 * counter lane, the analyses' kernel-type overlap, the summary's SM-busy
 * time), so that memory is the concurrency, not the intervals.
 *
 * Order: by t, then by tag. A sweep that needs equal times in a given
 * order (the SM-busy time: the order of the ops) puts that order in the
 * tag; one that does not may pass anything.
 *
 * Memory: the heap owns v (tmheap_free), grown by doubling; an empty heap
 * is { NULL, 0, 0 }. Threads: none.
 */
#ifndef TB_TMHEAP_H
#define TB_TMHEAP_H

#include <stddef.h>
#include <stdint.h>

struct tmheap_item {
    int64_t t;
    uint32_t tag;
};

struct tmheap {
    struct tmheap_item *v; /* v[0] is the least */
    size_t n, cap;
};

void tmheap_push(struct tmheap *h, int64_t t, uint32_t tag);

/* Removes and returns the least item; h must not be empty. */
struct tmheap_item tmheap_pop(struct tmheap *h);

/* 1 when (t, tag) comes before the heap's least item (an empty heap's
 * none), the test a sweep makes to take its next start before the ends. */
int tmheap_before_top(const struct tmheap *h, int64_t t, uint32_t tag);

/* Frees v; h is empty after. */
void tmheap_free(struct tmheap *h);

#endif

/*
 * cp_chain.h — the slices open at a time on one host thread, for the
 * critical path's backward walk (analyses/critical_path.c).
 *
 * A thread's slices are an array in start order, each beginning with a
 * struct cp_node: its end and its parent's index (-1 none, always an
 * earlier one; a parent may end before its child: a record_function
 * entered in a Python frame outlives it). The chain of slice k is k and
 * its parents. Over a stretch of time ending at t, where k is the last
 * slice to start before t, the slices open are the chain's members that
 * end at or after t (the importer nests by start order, so no other slice
 * is open then); the stretch starts at the latest end before t among the
 * others. Only the CP_CHAIN_DEPTH innermost members count: a misnested
 * capture chains frames hundreds deep.
 *
 * The walk asks about the same k, or a near one, stretch after stretch:
 * the chain is kept between calls (the part shared with the last one from
 * their lowest common ancestor out stays, the slices below it change), with
 * the latest end of each CP_CHAIN_BLOCK of it, so that a run of closed
 * ancestors is passed at once rather than each member read by parent.
 *
 * Memory: a struct cp_chain starts zeroed and owns its arrays
 * (cp_chain_free); one thread at a time.
 */
#ifndef TB_CP_CHAIN_H
#define TB_CP_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#define CP_CHAIN_DEPTH 256
#define CP_CHAIN_BLOCK 32

/* The head of each slice of the array a chain reads. */
struct cp_node {
    int64_t end;
    int32_t parent;
};

struct cp_chain {
    int32_t *chain;     /* outermost first */
    int32_t *pos;       /* per slice: its index in chain, -1 not in it */
    int32_t *walk;      /* cp_chain_open's */
    int64_t *end;       /* chain[i]'s end */
    int64_t *block_end; /* the latest end of chain[CP_CHAIN_BLOCK * b ..] */
    size_t n, cap;      /* chain's length; what the arrays hold (>= the slices) */
    int32_t k;          /* whose chain it is, -1 none */
};

/* Forgets the chain held: the thread's n slices were loaded anew. */
void cp_chain_reset(struct cp_chain *c, size_t n);

/* The slices of k's chain open at t (end >= t) into open[] (room for
 * CP_CHAIN_DEPTH), innermost first; *a raised to the latest end before t
 * of the others. slices: the thread's array, of elements size bytes each
 * starting with a struct cp_node, unchanged since cp_chain_reset. k >= 0.
 * Returns how many are open. */
int cp_chain_open(struct cp_chain *c, const void *slices, size_t size, int32_t k, int64_t t, int64_t *a,
                  int32_t *open);

void cp_chain_free(struct cp_chain *c);

#endif

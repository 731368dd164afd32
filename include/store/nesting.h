/*
 * nesting.h — the drawing level (slice.depth) of each slice of a track,
 * assigned in one pass over the track's slices in (ts, -dur) order by the
 * run writer's drain (rundb_drain.c).
 *
 * Real traces do not nest perfectly: Kineto's annotation spans start inside
 * a short Python frame and end long after it, and a GPU stream may run a
 * kernel that starts before the previous one ends (programmatic dependent
 * launch). A plain stack puts each such slice one level deeper and keeps
 * everything after it there, so over a long run the levels grow without
 * bound. Here a slice goes to the lowest level that is free at its start
 * and lies above every open slice that wholly encloses it; so the number
 * of levels stays bounded by what is open at once, whatever the number of
 * steps. Invariants: two slices of one level never overlap in time (a
 * level is free at ts when its last slice ends at or before ts); a slice
 * wholly inside another is drawn above (deeper than) it; a well-nested
 * track gets the same levels as a stack (depth = number of open
 * ancestors). The enclosing slice for analyses (slice.parent) is not
 * decided here.
 *
 * Work per slice is bounded: only the NESTING_SCAN top levels are looked
 * at, so a hostile track of endlessly staircased slices costs O(n), its
 * levels growing as a stack's would. A struct nesting is plain memory used
 * by one thread; nesting_free releases it.
 */
#ifndef TB_NESTING_H
#define TB_NESTING_H

#include <stdint.h>

#define NESTING_SCAN 512

/* How a slice was placed, for the import notes. */
enum nesting_place {
    NESTING_NESTED,  /* it overlaps no open slice partially */
    NESTING_DEEPER,  /* it ends after an open slice it starts in, and is drawn
                        deeper than every such slice */
    NESTING_BESIDE,  /* it ends after an open slice it starts in, and is drawn
                        in a free level under (less deep than) one of them */
};

struct nesting {
    int64_t *end; /* per level: end of the last slice placed there */
    int n, cap;   /* levels in use (the top one is open), allocated */
};

/* Forgets every level (a new track starts). */
void nesting_reset(struct nesting *g);

/* Places the slice [ts, end) (end >= ts) that comes next in (ts, -dur)
 * order on the track and returns its level (>= 0); *how (OUT) says how. */
int nesting_place(struct nesting *g, int64_t ts, int64_t end, enum nesting_place *how);

/* Releases the levels; g may be reused after nesting_reset. */
void nesting_free(struct nesting *g);

#endif

/*
 * ivlist.h — lists of half-open time intervals [a, b) in ns, the arithmetic
 * of GPU busy time: appending (merging with the last one, so lists fed in
 * time order stay short), normalizing into disjoint sorted intervals,
 * union, difference and the length inside a window.
 *
 * A struct ivlist starts zeroed and owns v (ivlist_free). Functions taking
 * two lists need them normalized; out must be a third list (it is reset).
 * Pure and single-threaded; used by the analysis, the rules and the ranks
 * comparison.
 */
#ifndef TB_IVLIST_H
#define TB_IVLIST_H

#include <stddef.h>
#include <stdint.h>

struct ivl {
    int64_t a, b;
};

struct ivlist {
    struct ivl *v; /* owned */
    size_t n, cap;
};

/* Appends [a, b) (nothing when b <= a), merged into the last interval when
 * they overlap or touch. */
void ivlist_add(struct ivlist *l, int64_t a, int64_t b);

/* Sorts and merges into disjoint intervals in time order. */
void ivlist_normalize(struct ivlist *l);

/* out = a - b. */
void ivlist_subtract(const struct ivlist *a, const struct ivlist *b, struct ivlist *out);

/* out = a ∪ b. */
void ivlist_union(const struct ivlist *a, const struct ivlist *b, struct ivlist *out);

/* Length of l ∩ [a, b); *cursor (start at 0) speeds up calls with
 * increasing a. */
int64_t ivlist_len_in(const struct ivlist *l, int64_t a, int64_t b, size_t *cursor);

void ivlist_free(struct ivlist *l);

#endif

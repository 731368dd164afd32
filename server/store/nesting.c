#include "store/nesting.h"

#include <stdlib.h>

#include "base/xmalloc.h"

void nesting_reset(struct nesting *g)
{
    g->n = 0;
}

int nesting_place(struct nesting *g, int64_t ts, int64_t end, enum nesting_place *how)
{
    int lo = g->n > NESTING_SCAN ? g->n - NESTING_SCAN : 0;
    int c = lo - 1, over = -1, level;

    while (g->n && g->end[g->n - 1] <= ts) g->n--;
    if (lo > g->n) lo = g->n;
    /* the deepest open slice that wholly encloses this one; open ones
     * above it overlap it partially */
    for (int L = g->n - 1; L >= lo; L--) {
        if (g->end[L] <= ts) continue;
        if (g->end[L] >= end) {
            c = L;
            break;
        }
        if (over < 0) over = L;
    }
    if (c < lo - 1) c = lo - 1;
    for (level = c + 1; level < g->n && g->end[level] > ts; level++) {
    }
    *how = over < 0 ? NESTING_NESTED : level > over ? NESTING_DEEPER : NESTING_BESIDE;
    if (level == g->n) {
        if (g->n == g->cap) {
            g->cap = g->cap ? g->cap * 2 : 64;
            g->end = xrealloc(g->end, sizeof *g->end * (size_t)g->cap);
        }
        g->n++;
    }
    g->end[level] = end;
    return level;
}

void nesting_free(struct nesting *g)
{
    free(g->end);
    g->end = NULL;
    g->n = g->cap = 0;
}

/* cp_chain.c — the slices open at a time on one host thread (see
 * include/derive/cp_chain.h). */
#include "derive/cp_chain.h"

#include <stdlib.h>

#include "base/xmalloc.h"

static const struct cp_node *node(const void *slices, size_t size, int32_t j)
{
    return (const struct cp_node *)(const void *)((const char *)slices + (size_t)j * size);
}

void cp_chain_reset(struct cp_chain *c, size_t n)
{
    if (c->cap < n) { /* a chain is at most the slices loaded */
        cp_chain_free(c);
        c->cap = n * 2;
        c->chain = xmalloc(c->cap * sizeof *c->chain);
        c->pos = xmalloc(c->cap * sizeof *c->pos);
        c->walk = xmalloc(c->cap * sizeof *c->walk);
        c->end = xmalloc(c->cap * sizeof *c->end);
        c->block_end = xmalloc((c->cap / CP_CHAIN_BLOCK + 1) * sizeof *c->block_end);
    }
    for (size_t j = 0; j < n; j++) c->pos[j] = -1;
    c->n = 0;
    c->k = -1;
}

/* c->chain becomes k's: kept out from the lowest ancestor it shares with
 * the one held, k's own slices below it. */
static void chain_set(struct cp_chain *c, const void *slices, size_t size, int32_t k)
{
    size_t nw = 0;
    int32_t p = k;
    for (; p >= 0 && c->pos[p] < 0; p = node(slices, size, p)->parent) c->walk[nw++] = p;
    size_t keep = p >= 0 ? (size_t)c->pos[p] + 1 : 0;
    for (size_t i = keep; i < c->n; i++) c->pos[c->chain[i]] = -1;
    c->n = keep;
    if (keep % CP_CHAIN_BLOCK) { /* the block cut short: its latest end again */
        size_t b = keep / CP_CHAIN_BLOCK;
        int64_t m = c->end[b * CP_CHAIN_BLOCK];
        for (size_t i = b * CP_CHAIN_BLOCK + 1; i < keep; i++)
            if (c->end[i] > m) m = c->end[i];
        c->block_end[b] = m;
    }
    while (nw > 0) {
        int32_t j = c->walk[--nw];
        size_t i = c->n++;
        int64_t end = node(slices, size, j)->end;
        c->chain[i] = j;
        c->end[i] = end;
        c->pos[j] = (int32_t)i;
        if (i % CP_CHAIN_BLOCK == 0 || end > c->block_end[i / CP_CHAIN_BLOCK]) c->block_end[i / CP_CHAIN_BLOCK] = end;
    }
    c->k = k;
}

int cp_chain_open(struct cp_chain *c, const void *slices, size_t size, int32_t k, int64_t t, int64_t *a,
                  int32_t *open)
{
    int n = 0;
    if (k != c->k) chain_set(c, slices, size, k);
    size_t first = c->n > CP_CHAIN_DEPTH ? c->n - CP_CHAIN_DEPTH : 0;
    for (size_t i = c->n; i-- > first;) {
        /* a whole block inside the window, all ended before t: at once */
        size_t b = i / CP_CHAIN_BLOCK;
        if (i % CP_CHAIN_BLOCK == CP_CHAIN_BLOCK - 1 && i + 1 - CP_CHAIN_BLOCK >= first && c->block_end[b] < t) {
            if (c->block_end[b] > *a) *a = c->block_end[b];
            i -= CP_CHAIN_BLOCK - 1;
            continue;
        }
        if (c->end[i] < t) {
            if (c->end[i] > *a) *a = c->end[i];
        } else {
            open[n++] = c->chain[i];
        }
    }
    return n;
}

void cp_chain_free(struct cp_chain *c)
{
    free(c->chain);
    free(c->pos);
    free(c->walk);
    free(c->end);
    free(c->block_end);
    c->chain = c->pos = c->walk = NULL;
    c->end = c->block_end = NULL;
    c->cap = c->n = 0;
}

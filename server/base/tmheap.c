#include "base/tmheap.h"

#include <stdlib.h>

#include "base/xmalloc.h"

static int less(const struct tmheap_item *a, const struct tmheap_item *b)
{
    return a->t < b->t || (a->t == b->t && a->tag < b->tag);
}

void tmheap_push(struct tmheap *h, int64_t t, uint32_t tag)
{
    if (h->n == h->cap) h->v = xrealloc(h->v, (h->cap = h->cap ? h->cap * 2 : 64) * sizeof *h->v);
    const struct tmheap_item x = { t, tag };
    size_t i = h->n++;
    while (i > 0 && less(&x, &h->v[(i - 1) / 2])) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = x;
}

struct tmheap_item tmheap_pop(struct tmheap *h)
{
    struct tmheap_item top = h->v[0], x = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= h->n) break;
        if (k + 1 < h->n && less(&h->v[k + 1], &h->v[k])) k++;
        if (!less(&h->v[k], &x)) break;
        h->v[i] = h->v[k];
        i = k;
    }
    if (h->n) h->v[i] = x;
    return top;
}

int tmheap_before_top(const struct tmheap *h, int64_t t, uint32_t tag)
{
    const struct tmheap_item x = { t, tag };
    return !h->n || less(&x, &h->v[0]);
}

void tmheap_free(struct tmheap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

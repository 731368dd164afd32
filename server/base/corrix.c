/* corrix.c — a sorted key -> position index (see include/base/corrix.h). */
#include "base/corrix.h"

#include "base/xmalloc.h"

static int cmp(const void *a, const void *b)
{
    const struct corrix *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

void corrix_sort(struct corrix *v, size_t n)
{
    if (n > 1) xqsort(v, n, sizeof *v, cmp);
}

size_t corrix_first(const struct corrix *v, size_t n, int64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && v[lo].key == key ? lo : n;
}

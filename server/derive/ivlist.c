/* ivlist.c — interval lists (see include/derive/ivlist.h). */
#include "derive/ivlist.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

/* Appends [a, b); merges with the last interval when they touch, which
 * keeps lists fed in time order (one track at a time) short. */
void ivlist_add(struct ivlist *l, int64_t a, int64_t b)
{
    if (b <= a) return;
    if (l->n && a <= l->v[l->n - 1].b && b >= l->v[l->n - 1].a) {
        struct ivl *t = &l->v[l->n - 1];
        if (a < t->a) t->a = a;
        if (b > t->b) t->b = b;
        return;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n].a = a;
    l->v[l->n].b = b;
    l->n++;
}

static int cmp_ivl(const void *x, const void *y)
{
    const struct ivl *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

/* Sorts and merges into disjoint intervals in time order. */
void ivlist_normalize(struct ivlist *l)
{
    if (l->n < 2) return;
    xqsort(l->v, l->n, sizeof *l->v, cmp_ivl);
    size_t k = 0;
    for (size_t i = 1; i < l->n; i++) {
        if (l->v[i].a <= l->v[k].b) {
            if (l->v[i].b > l->v[k].b) l->v[k].b = l->v[i].b;
        } else {
            l->v[++k] = l->v[i];
        }
    }
    l->n = k + 1;
}

/* out = a - b (both normalized). */
void ivlist_subtract(const struct ivlist *a, const struct ivlist *b, struct ivlist *out)
{
    size_t j = 0;
    out->n = 0;
    for (size_t i = 0; i < a->n; i++) {
        int64_t s = a->v[i].a, t = a->v[i].b;
        while (j < b->n && b->v[j].b <= s) j++;
        size_t k = j;
        while (s < t && k < b->n && b->v[k].a < t) {
            if (b->v[k].a > s) ivlist_add(out, s, b->v[k].a);
            if (b->v[k].b > s) s = b->v[k].b;
            k++;
        }
        if (s < t) ivlist_add(out, s, t);
    }
}

/* out = a ∪ b (both normalized). */
void ivlist_union(const struct ivlist *a, const struct ivlist *b, struct ivlist *out)
{
    size_t i = 0, j = 0;
    out->n = 0;
    while (i < a->n || j < b->n) {
        const struct ivl *p = (j >= b->n || (i < a->n && a->v[i].a <= b->v[j].a)) ? &a->v[i++] : &b->v[j++];
        ivlist_add(out, p->a, p->b);
    }
}

/* Length of l ∩ [a, b); *cursor speeds up calls with increasing a. */
int64_t ivlist_len_in(const struct ivlist *l, int64_t a, int64_t b, size_t *cursor)
{
    size_t i = *cursor;
    int64_t sum = 0;
    while (i < l->n && l->v[i].b <= a) i++;
    *cursor = i;
    for (; i < l->n && l->v[i].a < b; i++) {
        int64_t s = l->v[i].a > a ? l->v[i].a : a;
        int64_t t = l->v[i].b < b ? l->v[i].b : b;
        if (t > s) sum += t - s;
    }
    return sum;
}

void ivlist_free(struct ivlist *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

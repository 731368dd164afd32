/* tmheap_test — the heap of (time, tag): items come out by time, then by
 * tag, whatever the order they went in (random times with many ties,
 * pushes between pops, negative and extreme times); tmheap_before_top
 * against an empty heap, a smaller, an equal and a larger item; freed
 * empty. */
#include "base/tmheap.h"

#include <stdlib.h>

#include "harness.h"

static int cmp_item(const void *x, const void *y)
{
    const struct tmheap_item *a = x, *b = y;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return (a->tag > b->tag) - (a->tag < b->tag);
}

/* 5000 items, 300 at a time popped between the pushes, against a sort. */
static void test_order(void)
{
    enum { N = 5000 };
    struct tmheap_item *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    REQUIRE(in && out);
    unsigned seed = 3;
    for (int i = 0; i < N; i++) {
        seed = seed * 1103515245u + 12345u;
        in[i].t = (int64_t)((seed >> 8) % 97) - 40; /* many ties, some negative */
        in[i].tag = (uint32_t)(N - i);
    }
    in[7].t = INT64_MIN;
    in[8].t = INT64_MAX;
    struct tmheap h = { NULL, 0, 0 };
    size_t nout = 0, mismatch = 0, during = 0;
    struct tmheap_item *rest = malloc(N * sizeof *rest);
    unsigned char *gone = calloc(N + 1, 1); /* by tag: popped already */
    REQUIRE(rest && gone);
    /* each pop is the least of what is in the heap at that moment */
    for (int i = 0; i < N; i++) {
        tmheap_push(&h, in[i].t, in[i].tag);
        if (i % 300 != 299) continue;
        size_t n = 0;
        for (int j = 0; j <= i; j++)
            if (!gone[in[j].tag]) rest[n++] = in[j];
        qsort(rest, n, sizeof *rest, cmp_item);
        for (size_t k = 0; k < 100; k++) {
            struct tmheap_item x = tmheap_pop(&h);
            mismatch += x.t != rest[k].t || x.tag != rest[k].tag;
            gone[x.tag] = 1;
            out[nout++] = x;
        }
        during += 100;
    }
    while (h.n) out[nout++] = tmheap_pop(&h);
    CHECK_EQ_INT(nout, N);
    CHECK(during > 1000);
    CHECK_EQ_INT(mismatch, 0);
    /* what was left came out in order */
    size_t disorder = 0;
    for (size_t k = during + 1; k < nout; k++) disorder += cmp_item(&out[k - 1], &out[k]) > 0;
    CHECK_EQ_INT(disorder, 0);
    tmheap_free(&h);
    CHECK(h.v == NULL && h.n == 0 && h.cap == 0);
    free(in);
    free(out);
    free(rest);
    free(gone);
}

static void test_before_top(void)
{
    struct tmheap h = { NULL, 0, 0 };
    CHECK(tmheap_before_top(&h, INT64_MAX, UINT32_MAX)); /* nothing to come before */
    tmheap_push(&h, 10, 5);
    tmheap_push(&h, 10, 2);
    CHECK(tmheap_before_top(&h, 9, 100));
    CHECK(tmheap_before_top(&h, 10, 1));
    CHECK(!tmheap_before_top(&h, 10, 2)); /* equal: not before */
    CHECK(!tmheap_before_top(&h, 10, 3));
    CHECK(!tmheap_before_top(&h, 11, 0));
    CHECK_EQ_INT(tmheap_pop(&h).tag, 2);
    CHECK_EQ_INT(tmheap_pop(&h).tag, 5);
    CHECK_EQ_INT(h.n, 0);
    tmheap_free(&h);
}

int main(void)
{
    RUN(test_order);
    RUN(test_before_top);
    return harness_done("tmheap");
}

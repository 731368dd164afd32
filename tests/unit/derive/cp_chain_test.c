/* cp_chain_test.c — the open slices of a thread (cp_chain.c) against a
 * plain walk up the parents from k (the CP_CHAIN_DEPTH innermost members),
 * on threads built as the importer nests them: nested, misnested (frames
 * that outlive their parent), chains deeper than CP_CHAIN_DEPTH of frames
 * long ended, the walk's time going back stretch by stretch and jumping
 * back, with k moving as the walk does. Then two worked cases. */
#include <stdlib.h>
#include <string.h>

#include "derive/cp_chain.h"
#include "harness.h"

struct slice {
    struct cp_node node;
    int64_t ts;
};

/* The reference: k's chain walked by parent. */
static int plain_open(const struct slice *s, int32_t k, int64_t t, int64_t *a, int32_t *open)
{
    int n = 0;
    for (int d = 0; k >= 0 && d < CP_CHAIN_DEPTH; d++, k = s[k].node.parent) {
        if (s[k].node.end < t) {
            if (s[k].node.end > *a) *a = s[k].node.end;
        } else {
            open[n++] = k;
        }
    }
    return n;
}

static unsigned long long seed = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
    return harness_rand(&seed);
}

/* n slices of one of five shapes, parented as rundb_drain does: the latest
 * started still open, the top of a stack popped while it ended before. */
static struct slice *thread(size_t n, int shape, int64_t *last_ts)
{
    struct slice *s = calloc(n, sizeof *s);
    int32_t *stack = calloc(n, sizeof *stack);
    size_t sp = 0;
    int64_t ts = 0;
    for (size_t i = 0; i < n; i++) {
        ts += (int64_t)(rnd() % 3);
        int64_t dur = shape == 0 ? (int64_t)(rnd() % 2 ? rnd() % 20 : rnd() % 400)
                      : shape == 1 ? 1 + (int64_t)(rnd() % 50)          /* short, overlapping */
                      : shape == 2 ? 1000000 - ts + (int64_t)(rnd() % 5) /* all open to the end */
                      : shape == 3 ? 3 + (int64_t)(rnd() % 4) + (rnd() % 50 ? 0 : 1000000) /* a long chain, mostly ended */
                                   : (int64_t)(rnd() % 8);
        s[i].ts = ts;
        s[i].node.end = ts + dur;
        while (sp && s[stack[sp - 1]].node.end <= ts) sp--;
        s[i].node.parent = sp ? stack[sp - 1] : -1;
        stack[sp++] = (int32_t)i;
    }
    free(stack);
    *last_ts = ts;
    return s;
}

static void test_against_parents(void)
{
    struct cp_chain c = { 0 };
    int32_t got[CP_CHAIN_DEPTH], want[CP_CHAIN_DEPTH];
    long stretches = 0, deep = 0, bad = 0;
    for (int iter = 0; iter < 1500; iter++) {
        size_t n = 1 + rnd() % 1200;
        int64_t last;
        struct slice *s = thread(n, iter % 5, &last);
        cp_chain_reset(&c, n);
        int32_t k = (int32_t)n - 1;
        for (int64_t t = last + 600; t > 0;) {
            while (k >= 0 && s[k].ts >= t) k--; /* the last slice to start before t */
            if (k < 0) break;
            int64_t a1 = 0, a2 = 0;
            int n1 = cp_chain_open(&c, s, sizeof *s, k, t, &a1, got), n2 = plain_open(s, k, t, &a2, want);
            if (n1 != n2 || a1 != a2 || memcmp(got, want, (size_t)n1 * sizeof *got) != 0) bad++;
            deep += c.n > CP_CHAIN_DEPTH;
            stretches++;
            int64_t next = rnd() % 8 ? (a2 > s[k].ts ? a2 : s[k].ts) : t - (int64_t)(rnd() % 300);
            t = next < t ? next : t - 1;
        }
        free(s);
    }
    cp_chain_free(&c);
    CHECK_EQ_INT(bad, 0);
    CHECK(stretches > 50000);
    CHECK(deep > 10000); /* chains past CP_CHAIN_DEPTH were met */
}

/* A frame that outlives its parent stays open after it; a parent that
 * ended before t raises the stretch's start. */
static void test_misnested(void)
{
    /* 0 [0, 100), 1 [10, 30) child of 0, 2 [20, 50) child of 1 (outlives it) */
    struct slice s[3] = { { { 100, -1 }, 0 }, { { 30, 0 }, 10 }, { { 50, 1 }, 20 } };
    struct cp_chain c = { 0 };
    int32_t open[CP_CHAIN_DEPTH];
    int64_t a = 20;
    cp_chain_reset(&c, 3);
    CHECK_EQ_INT(cp_chain_open(&c, s, sizeof *s, 2, 40, &a, open), 2);
    CHECK_EQ_INT(open[0], 2); /* innermost first */
    CHECK_EQ_INT(open[1], 0);
    CHECK_EQ_INT(a, 30); /* 1 ended at 30, after 2 started */
    a = 0;
    CHECK_EQ_INT(cp_chain_open(&c, s, sizeof *s, 1, 20, &a, open), 2);
    CHECK_EQ_INT(open[0], 1);
    CHECK_EQ_INT(a, 0);
    /* loaded anew: nothing of the old chain is taken */
    s[1].node.end = 15;
    cp_chain_reset(&c, 3);
    a = 0;
    CHECK_EQ_INT(cp_chain_open(&c, s, sizeof *s, 2, 40, &a, open), 2);
    CHECK_EQ_INT(a, 15);
    cp_chain_free(&c);
}

int main(void)
{
    RUN(test_against_parents);
    RUN(test_misnested);
    return harness_done("cp_chain");
}

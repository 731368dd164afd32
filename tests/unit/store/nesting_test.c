/* nesting_test — drawing levels of a track's slices: a well-nested stack
 * gets the stack's depths; partial overlaps (a Kineto annotation starting
 * in a short Python frame and ending in the next step's frame, overlapping
 * GPU kernels) are kept whole, never share a level with a slice they
 * overlap, and do not push later steps deeper; a hostile staircase costs
 * bounded work per slice. */
#include <stdlib.h>

#include "base/xmalloc.h"
#include "harness.h"
#include "store/nesting.h"

struct sl {
    int64_t ts, end;
    int level;
    enum nesting_place how;
};

static int sl_cmp(const void *x, const void *y)
{
    const struct sl *a = x, *b = y;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->end != b->end) return a->end > b->end ? -1 : 1;
    return 0;
}

/* Sorts as the drain does, places every slice, returns the deepest level. */
static int place_all(struct sl *s, int n)
{
    struct nesting g = { 0 };
    int max = -1;
    qsort(s, (size_t)n, sizeof *s, sl_cmp);
    for (int i = 0; i < n; i++) {
        s[i].level = nesting_place(&g, s[i].ts, s[i].end, &s[i].how);
        if (s[i].level > max) max = s[i].level;
    }
    nesting_free(&g);
    return max;
}

/* Slices of one level never overlap; a slice wholly inside another is
 * deeper. Returns the number of violations. */
static int violations(const struct sl *s, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n && s[j].ts < s[i].end; j++) {
            if (s[j].level == s[i].level && s[j].ts < s[i].end) bad++;
            if (s[j].end <= s[i].end && s[j].level <= s[i].level) bad++;
        }
    return bad;
}

static int count_how(const struct sl *s, int n, enum nesting_place how)
{
    int c = 0;
    for (int i = 0; i < n; i++) c += s[i].how == how;
    return c;
}

static void test_well_nested_is_a_stack(void)
{
    struct sl s[] = { { 0, 100, 0, 0 }, { 10, 50, 0, 0 }, { 20, 30, 0, 0 }, { 30, 40, 0, 0 }, { 60, 90, 0, 0 },
                      { 60, 70, 0, 0 }, { 100, 120, 0, 0 }, { 120, 120, 0, 0 } };
    int n = (int)(sizeof s / sizeof *s);
    CHECK_EQ_INT(place_all(s, n), 2);
    int want[] = { 0, 1, 2, 2, 1, 2, 0, 0 };
    for (int i = 0; i < n; i++) CHECK_EQ_INT(s[i].level, want[i]);
    CHECK_EQ_INT(count_how(s, n, NESTING_NESTED), n);
    CHECK_EQ_INT(violations(s, n), 0);
}

static void test_partial_overlap_placements(void)
{
    /* X, then S starting in X and ending after it, then T starting in S
     * after X ended and ending after S: T takes X's freed level */
    struct sl s[] = { { 0, 100, 0, 0 }, { 50, 150, 0, 0 }, { 120, 200, 0, 0 }, { 130, 140, 0, 0 } };
    CHECK_EQ_INT(place_all(s, 4), 2);
    CHECK_EQ_INT(s[0].level, 0);
    CHECK_EQ_INT(s[1].level, 1);
    CHECK(s[1].how == NESTING_DEEPER);
    CHECK_EQ_INT(s[2].level, 0);
    CHECK(s[2].how == NESTING_BESIDE);
    CHECK_EQ_INT(s[3].level, 2); /* inside S and T: above both */
    CHECK(s[3].how == NESTING_NESTED);
    CHECK_EQ_INT(violations(s, 4), 0);
}

static void test_gpu_sub_lane(void)
{
    /* a split-K reduce starting before its GEMM ends, then the next GEMM */
    struct sl s[] = { { 0, 100, 0, 0 }, { 90, 150, 0, 0 }, { 160, 200, 0, 0 }, { 195, 230, 0, 0 } };
    CHECK_EQ_INT(place_all(s, 4), 1);
    int want[] = { 0, 1, 0, 1 };
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(s[i].level, want[i]);
    CHECK_EQ_INT(count_how(s, 4, NESTING_DEEPER), 2);
}

/* Kineto with_stack steps chained as in a long capture: the step() frame
 * F_i, inside it the record_function enter frame E_i, ProfilerStep#i
 * starting in E_i and ending inside F_{i+1}, an operator stack under it,
 * all under one outer loop frame. */
static int chained_steps(int nsteps, int *bad, int *misnested)
{
    int n = 0, cap = nsteps * 6 + 1;
    struct sl *s = xcalloc((size_t)cap, sizeof *s);
    s[n++] = (struct sl){ 0, (int64_t)nsteps * 100 + 200, 0, 0 };
    for (int i = 0; i < nsteps; i++) {
        int64_t b = 10 + (int64_t)i * 100;
        s[n++] = (struct sl){ b, b + 20, 0, 0 };       /* F_i */
        s[n++] = (struct sl){ b + 2, b + 6, 0, 0 };    /* E_i */
        s[n++] = (struct sl){ b + 4, b + 110, 0, 0 };  /* ProfilerStep#i */
        s[n++] = (struct sl){ b + 30, b + 60, 0, 0 };  /* forward */
        s[n++] = (struct sl){ b + 35, b + 50, 0, 0 };  /* aten::mm */
    }
    int max = place_all(s, n);
    *bad = violations(s, n);
    *misnested = n - count_how(s, n, NESTING_NESTED);
    free(s);
    return max;
}

static void test_chained_steps_stay_bounded(void)
{
    int bad, mis3, mis300;
    int d3 = chained_steps(3, &bad, &mis3);
    CHECK_EQ_INT(bad, 0);
    int d300 = chained_steps(300, &bad, &mis300);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(d300, d3);
    CHECK(d3 <= 6); /* outer, F, E, two ProfilerSteps open at once, forward, mm */
    CHECK(mis300 >= 299); /* every chained step was a partial overlap */
}

static void test_hostile_staircase_is_bounded_work(void)
{
    /* each slice starts inside the previous one and ends after it: levels
     * grow as a stack's would, at bounded cost per slice */
    int n = 200000;
    struct nesting g = { 0 };
    enum nesting_place how;
    int level = 0;
    for (int i = 0; i < n; i++) level = nesting_place(&g, i, (int64_t)n + i, &how);
    CHECK_EQ_INT(level, n - 1);
    nesting_reset(&g);
    CHECK_EQ_INT(nesting_place(&g, 5, 6, &how), 0);
    nesting_free(&g);
}

int main(void)
{
    RUN(test_well_nested_is_a_stack);
    RUN(test_partial_overlap_placements);
    RUN(test_gpu_sub_lane);
    RUN(test_chained_steps_stay_bounded);
    RUN(test_hostile_staircase_is_bounded_work);
    return harness_done("nesting_test");
}

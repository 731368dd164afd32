/* ranks_comm_test — the collectives of the cross-rank comparison on
 * hand-built ranks (no database): what a kernel or span name says, the
 * step an instance starts in, and the matching across ranks (wait and
 * transfer, unmatched tails, end skew on the aligned clocks). The scan and
 * overlap over stored slices are checked through ranks_build in
 * ranks_test.c, on crafted traces imported through the real pipeline. */
#include "derive/ranks_comm.h"

#include <math.h>

#include "base/xmalloc.h"
#include "harness.h"

#define NCCL_AR "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"

static void test_coll_from_name(void)
{
    char b[RANKS_COMM_NAME_LEN];
    ranks_comm_coll_from_name(NCCL_AR, b, sizeof b);
    CHECK_EQ_STR(b, "AllReduce");
    ranks_comm_coll_from_name("ncclKernel_AllGather_RING_LL(ncclWorkElem)", b, sizeof b);
    CHECK_EQ_STR(b, "AllGather");
    ranks_comm_coll_from_name("gloo:all_reduce", b, sizeof b);
    CHECK_EQ_STR(b, "all_reduce");
    ranks_comm_coll_from_name("nccl:_all_gather_base", b, sizeof b); /* ':' prefixes keep underscores */
    CHECK_EQ_STR(b, "_all_gather_base");
    ranks_comm_coll_from_name("c10d::allreduce_(at::Tensor)", b, sizeof b);
    CHECK_EQ_STR(b, "c10d::allreduce_");
    ranks_comm_coll_from_name("nccl:", b, sizeof b); /* nothing after the prefix: the name itself */
    CHECK_EQ_STR(b, "nccl:");
    ranks_comm_coll_from_name(NCCL_AR, b, 4); /* truncated, still terminated */
    CHECK_EQ_STR(b, "All");
}

static void test_median(void)
{
    double odd[] = { 5, 1, 3 }, even[] = { 8, 2, 4, 6 };
    CHECK(ranks_comm_median(odd, 3) == 3);
    CHECK(ranks_comm_median(even, 4) == 5);
    CHECK(ranks_comm_median(NULL, 0) == 0);
}

static void test_step_at(void)
{
    struct ranks_step s[3] = { { "a", 0, 100, { 0 }, 0 }, { "b", 100, 100, { 0 }, 1 }, { "c", 250, 50, { 0 }, 2 } };
    struct ranks_rank r = { .steps = s, .nsteps = 3 };
    CHECK_EQ_INT(ranks_comm_step_at(&r, -1), -1);
    CHECK_EQ_INT(ranks_comm_step_at(&r, 50), 0);
    CHECK_EQ_INT(ranks_comm_step_at(&r, 100), 1); /* starts belong to the step they open */
    CHECK_EQ_INT(ranks_comm_step_at(&r, 220), -1); /* between steps */
    CHECK_EQ_INT(ranks_comm_step_at(&r, 299), 2);
    CHECK_EQ_INT(ranks_comm_step_at(&r, 300), -1);
    r.nsteps = 0;
    CHECK_EQ_INT(ranks_comm_step_at(&r, 50), -1);
}

/* An instance of key k at [ts, ts+dur), not yet matched. */
static struct ranks_inst inst(int64_t ts, int64_t dur, uint16_t k)
{
    return (struct ranks_inst){ ts, dur, -1, -1, -1, k, -1 };
}

static struct ranks_inst *insts(const struct ranks_inst *v, size_t n)
{
    struct ranks_inst *p = xcalloc(n ? n : 1, sizeof *p);
    if (n) memcpy(p, v, n * sizeof *v); /* v may be NULL when n == 0 */
    return p;
}

/* Three ranks, two keys (0: all-reduce, 1: all-gather), in time order.
 * rank 0: key 0 [0, 300) and [460, 500), key 1 [650, 700).
 * rank 1 (clock 1000 behind, base_ns 1000): key 0 [110, 310) and
 *   [450, 510) and [800, 810) (one more, unmatched), key 1 [630, 710); on
 *   the aligned clock each matched call ends 10 later than rank 0's.
 * rank 2: no collectives.
 * key 0 #0: transfer min(300, 200) = 200, rank 0 waits 100;
 * key 0 #1: transfer 40, rank 1 waits 20; key 1: transfer 50, rank 1 waits 30. */
static void test_match(void)
{
    const struct ranks_inst r0[] = { inst(0, 300, 0), inst(460, 40, 0), inst(650, 50, 1) };
    const struct ranks_inst r1[] = { inst(-890, 200, 0), inst(-550, 60, 0), inst(-370, 80, 1), inst(-200, 10, 0) };
    struct ranks_rank rk[3] = { { .rank = 0, .inst = insts(r0, 3), .ninst = 3 },
                                { .rank = 1, .base_ns = 1000, .inst = insts(r1, 4), .ninst = 4 },
                                { .rank = 2, .inst = insts(NULL, 0), .ninst = 0 } };
    ranks_comm_match(2, rk, 3);
    /* per rank, inst in (key, time) order and kstart indexing each key */
    REQUIRE(rk[0].kstart && rk[1].kstart && rk[2].kstart);
    CHECK_EQ_INT(ranks_comm_count(&rk[0], 0), 2);
    CHECK_EQ_INT(ranks_comm_count(&rk[0], 1), 1);
    CHECK_EQ_INT(ranks_comm_count(&rk[1], 0), 3);
    CHECK_EQ_INT(ranks_comm_count(&rk[1], 1), 1);
    CHECK_EQ_INT(ranks_comm_count(&rk[2], 0), 0);
    CHECK_EQ_INT(ranks_comm_count(&rk[2], 1), 0);
    CHECK_EQ_INT(ranks_comm_at(&rk[1], 0, 2)->dur, 10);
    CHECK_EQ_INT(ranks_comm_at(&rk[1], 1, 0)->dur, 80);
    CHECK_EQ_INT(ranks_comm_at(&rk[0], 0, 0)->wait, 100);
    CHECK_EQ_INT(ranks_comm_at(&rk[1], 0, 0)->wait, 0);
    CHECK_EQ_INT(ranks_comm_at(&rk[0], 0, 1)->wait, 0);
    CHECK_EQ_INT(ranks_comm_at(&rk[1], 0, 1)->wait, 20);
    CHECK_EQ_INT(ranks_comm_at(&rk[0], 1, 0)->wait, 0);
    CHECK_EQ_INT(ranks_comm_at(&rk[1], 1, 0)->wait, 30);
    CHECK_EQ_INT(ranks_comm_at(&rk[1], 0, 2)->wait, -1); /* on one rank only */
    /* wait + transfer = duration: transfer is the shortest rank's duration */
    CHECK_EQ_INT(ranks_comm_at(&rk[0], 0, 0)->dur - ranks_comm_at(&rk[0], 0, 0)->wait,
                 ranks_comm_at(&rk[1], 0, 0)->dur - ranks_comm_at(&rk[1], 0, 0)->wait);
    /* end skew on the aligned clocks; the unmatched tail is not looked at */
    CHECK(rk[0].has_skew && fabs(rk[0].end_skew + 10) < 1e-9);
    CHECK(rk[1].has_skew && fabs(rk[1].end_skew - 10) < 1e-9);
    CHECK(!rk[2].has_skew);
    for (int i = 0; i < 3; i++) free(rk[i].inst), free(rk[i].kstart);
}

/* One rank: nothing is matched, so nothing waits and no skew is claimed. */
static void test_match_single_rank(void)
{
    const struct ranks_inst r0[] = { inst(0, 300, 0), inst(460, 40, 0) };
    struct ranks_rank rk = { .inst = insts(r0, 2), .ninst = 2 };
    ranks_comm_match(1, &rk, 1);
    CHECK_EQ_INT(rk.inst[0].wait, -1);
    CHECK_EQ_INT(rk.inst[1].wait, -1);
    CHECK(!rk.has_skew);
    free(rk.inst), free(rk.kstart);
}

int main(void)
{
    RUN(test_coll_from_name);
    RUN(test_median);
    RUN(test_step_at);
    RUN(test_match);
    RUN(test_match_single_rank);
    return harness_done("ranks_comm");
}

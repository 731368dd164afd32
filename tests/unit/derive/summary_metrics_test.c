/* summary_metrics_test — GPU utilization, SM efficiency, occupancy and
 * tensor-core share over the steps' window.
 * Small crafted traces whose answers are worked out by hand (times in µs in
 * the traces, ns in the tables); real traces are checked in
 * summary_golden_test.c. */
#include "summary_fixture.h"

/* Window [0,100): kernels 0-20 (nvjet, 0.5 blocks/SM, occ 50 %) and 10-30
 * (FFMA GEMM, 1.0 blocks/SM, occ 20 %): busy 30; SM efficiency 0.5*10 +
 * min(1.5,1)*10 + 1.0*10 = 25 -> 0.25; occupancy (50*20 + 20*20)/40 = 35 %;
 * tensor-core share 20/40. */
static void test_gpu_metrics(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                         GPU("kernel", "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_TNT", 0, 20,
                             "\"blocks per SM\":0.5,\"est. achieved occupancy %\":50") ","
                         GPU("kernel", "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel_cudnn", 10, 20,
                             "\"blocks per SM\":1.0,\"est. achieved occupancy %\":20"));
    REQUIRE(db != NULL);
    CHECK(fabs(qd(db, "SELECT util FROM gpu") - 0.30) < 1e-9);
    CHECK(fabs(qd(db, "SELECT sm_eff FROM gpu") - 0.25) < 1e-6);
    CHECK(fabs(qd(db, "SELECT occupancy FROM gpu") - 0.35) < 1e-6);
    CHECK(fabs(qd(db, "SELECT tc_share FROM gpu") - 0.5) < 1e-9);
    CHECK_EQ_INT(q1(db, "SELECT memory_bytes FROM gpu"), 1000000);
    CHECK_EQ_INT(q1(db, "SELECT cc = '9.0' FROM gpu"), 1);
    CHECK_EQ_INT(q1(db, "SELECT tc FROM kernel_stat WHERE name LIKE 'nvjet%'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT tc FROM kernel_stat WHERE name LIKE 'sm80_xmma%'"), 0);
    sqlite3_close(db);
}

/* A kernel on stream 8 of device 0. */
#define GPU8(name, ts, dur, args)                                                                      \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":8,\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":8," args "}}"

/* SM efficiency over [10, 110) with two streams whose kernels start where
 * others end, at once, past the window's edges, or without blocks per SM:
 * A [0,30) 0.5 (clipped to 10), B [30,50) 0.25 and D [30,70) 1.0 start as
 * A ends, C [50,60) has none, E [70,80) 0.5 starts as D ends, F [100,130)
 * 2.0 is clipped to 110. SM-busy: 0.5*20 + min(1.25,1)*20 + 1*20 + 0.5*10
 * + min(2,1)*10 = 65 of 100. */
static void test_sm_efficiency_ties(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 10, 100, "") ","
                         GPU("kernel", "a", 0, 30, "\"blocks per SM\":0.5") ","
                         GPU("kernel", "b", 30, 20, "\"blocks per SM\":0.25") ","
                         GPU("kernel", "c", 50, 10, "\"grid\":[1,1,1]") ","
                         GPU8("d", 30, 40, "\"blocks per SM\":1.0") ","
                         GPU8("e", 70, 10, "\"blocks per SM\":0.5") ","
                         GPU8("f", 100, 30, "\"blocks per SM\":2.0"));
    REQUIRE(db != NULL);
    CHECK(fabs(qd(db, "SELECT sm_eff FROM gpu") - 0.65) < 1e-12);
    sqlite3_close(db);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_gpu_metrics);
    RUN(test_sm_efficiency_ties);
    fixture_end();
    return harness_done("summary_metrics");
}

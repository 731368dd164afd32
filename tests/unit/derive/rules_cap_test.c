/* rules_cap_test — savings capped by the critical path (server/derive/
 * rules_cap.c): the limit of each side, a finding capped and one within
 * its cap, a run-level finding (the rank with the most), a rank without a
 * path, low_gpu_utilization's quote of a capped cause, the warm-up step,
 * and the paths read from a crafted trace imported through the real
 * pipeline (figures by hand, as analyses_cp_test's GPU-bound case). Times
 * in the paths are ns, in the findings µs. */
#include "rules_fixture.h"

#include <math.h>

#include "derive/rules_cap.h"

/* A 100 ms step: host 20 ms (cpu, dataloader, launches), GPU compute 60,
 * communication 15, kernel gaps 5; the profiler's cost 8 ms. */
static struct rules_cap_path path(int rank)
{
    struct rules_cap_path p = { .rank = rank, .gap_ns = 5e6, .profiler_ns = 8e6 };
    p.side[RULES_SIDE_STEP] = 100e6;
    p.side[RULES_SIDE_HOST] = 25e6;
    p.side[RULES_SIDE_GPU] = 65e6;
    p.side[RULES_SIDE_COMM] = 20e6;
    return p;
}

static json_t *finding(const char *id, int rank, double saving_us)
{
    return json_pack("{s:s,s:o,s:s,s:f,s:{s:[s]}}", "id", id, "rank", rank >= 0 ? json_integer(rank) : json_null(),
                     "severity", "high", "saving_us", saving_us, "evidence", "lines", "first line");
}

static const char *last_line(json_t *f)
{
    json_t *lines = json_object_get(json_object_get(f, "evidence"), "lines");
    return json_string_value(json_array_get(lines, json_array_size(lines) - 1));
}

static void test_limits(void)
{
    struct rules_cap_path p = path(0);
    CHECK_EQ_INT((int64_t)rules_cap_limit(&p, RULES_SIDE_STEP), 100000000);
    CHECK_EQ_INT((int64_t)rules_cap_limit(&p, RULES_SIDE_HOST), 25000000);
    /* GPU and communication: plus what the profiler's host time may keep off the path */
    CHECK_EQ_INT((int64_t)rules_cap_limit(&p, RULES_SIDE_GPU), 73000000);
    CHECK_EQ_INT((int64_t)rules_cap_limit(&p, RULES_SIDE_COMM), 28000000);
    /* never more than the step */
    p.side[RULES_SIDE_GPU] = 99e6;
    CHECK_EQ_INT((int64_t)rules_cap_limit(&p, RULES_SIDE_GPU), 100000000);
}

static void test_capped(void)
{
    struct rules_cap_path p = path(0);
    json_t *f = finding("enable_amp", 0, 90000); /* 90 ms of a GPU fix: 73 at most */
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_GPU, &p, 1), 1);
    CHECK_EQ_INT((int64_t)fixture_num(f, "saving_us"), 73000);
    json_t *cap = json_object_get(json_object_get(f, "evidence"), "saving_cap");
    CHECK_EQ_STR(fixture_str(cap, "side"), "gpu");
    CHECK_EQ_INT((int64_t)fixture_num(cap, "estimate_us"), 90000);
    CHECK_EQ_INT((int64_t)fixture_num(cap, "path_us"), 65000);
    CHECK_EQ_INT((int64_t)fixture_num(cap, "profiler_us"), 8000);
    CHECK_EQ_STR(last_line(f), "Capped at 73.0 ms per step (the rule's estimate: 90.0 ms): the critical path spends "
                               "only 65.0 ms per step on GPU compute and kernel gaps, plus up to 8.00 ms that the "
                               "profiler's own host time may keep off it");
    CHECK_EQ_STR(fixture_str(f, "severity"), "high"); /* 73 % of the step: still high */
    json_decref(f);
    /* capped to 5 % of the step: a high finding reads medium, and says why */
    struct rules_cap_path q = path(0);
    q.side[RULES_SIDE_HOST] = 5e6;
    f = finding("kernel_launch_bound", 0, 30000);
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_HOST, &q, 1), 1);
    CHECK_EQ_STR(fixture_str(f, "severity"), "medium");
    CHECK_EQ_STR(last_line(f), "Severity medium, not high: the capped saving is 5.0 % of the step");
    CHECK_EQ_STR(fixture_str(json_object_get(json_object_get(f, "evidence"), "saving_cap"), "severity_was"), "high");
    json_decref(f);
    /* under 3 %: low; a medium finding is lowered too, a low one stays */
    q.side[RULES_SIDE_HOST] = 1e6;
    f = finding("kernel_launch_bound", 0, 30000);
    json_object_set_new(f, "severity", json_string("medium"));
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_HOST, &q, 1), 1);
    CHECK_EQ_STR(fixture_str(f, "severity"), "low");
    json_decref(f);
    f = finding("kernel_launch_bound", 0, 30000);
    json_object_set_new(f, "severity", json_string("low"));
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_HOST, &q, 1), 1);
    CHECK_EQ_STR(fixture_str(f, "severity"), "low");
    CHECK(strstr(last_line(f), "Capped at 1.00 ms") != NULL); /* no severity line */
    json_decref(f);
    /* a host fix: no profiler allowance */
    f = finding("kernel_launch_bound", 0, 30000);
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_HOST, &p, 1), 1);
    CHECK_EQ_INT((int64_t)fixture_num(f, "saving_us"), 25000);
    CHECK(strstr(last_line(f), "spends only 25.0 ms per step on host work") != NULL);
    json_decref(f);
    /* any rule: the step */
    f = finding("straggler", 0, 150000);
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_STEP, &p, 1), 1);
    CHECK_EQ_INT((int64_t)fixture_num(f, "saving_us"), 100000);
    CHECK(strstr(last_line(f), "no fix saves more than the 100.0 ms step") != NULL);
    json_decref(f);
}

static void test_within(void)
{
    struct rules_cap_path p = path(0);
    json_t *f = finding("layout_transposes", 0, 20000); /* 20 ms of 73: stays */
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_GPU, &p, 1), 0);
    CHECK_EQ_INT((int64_t)fixture_num(f, "saving_us"), 20000);
    CHECK(json_object_get(json_object_get(f, "evidence"), "saving_cap") == NULL);
    CHECK_EQ_STR(last_line(f), "first line");
    json_decref(f);
    /* no path for its rank: nothing to cap by */
    f = finding("enable_amp", 3, 90000);
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_GPU, &p, 1), 0);
    CHECK_EQ_INT((int64_t)fixture_num(f, "saving_us"), 90000);
    json_decref(f);
}

static void test_run_level(void)
{
    struct rules_cap_path p[2] = { path(0), path(1) };
    p[1].side[RULES_SIDE_COMM] = 40e6; /* rank 1 waits more: 48 ms at most */
    json_t *f = finding("communication_heavy", -1, 60000);
    CHECK_EQ_INT(rules_cap_finding(f, RULES_SIDE_COMM, p, 2), 1);
    CHECK_EQ_INT((int64_t)fixture_num(f, "saving_us"), 48000);
    CHECK(strstr(last_line(f), "the critical path of rank 1 (the most of any rank) spends only 40.0 ms") != NULL);
    json_decref(f);
}

static void test_causes(void)
{
    struct rules_cap_path p = path(0);
    json_t *all = json_array();
    json_t *comm = finding("comm_not_overlapped", 0, 50000);
    json_t *low = json_pack("{s:s,s:i,s:f,s:{s:[s,s],s:s}}", "id", "low_gpu_utilization", "rank", 0, "saving_us", 0.0,
                            "evidence", "lines", "Kernels run 10 % of the steps' time",
                            "Main cause: communication not overlapped with compute (comm_not_overlapped, could save "
                            "~50.0 ms per step): Communication not overlapped",
                            "cause", "comm_not_overlapped");
    json_array_append_new(all, comm);
    json_array_append_new(all, low);
    CHECK_EQ_INT(rules_cap_finding(comm, RULES_SIDE_COMM, &p, 1), 1);
    rules_cap_causes(all);
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(json_object_get(low, "evidence"), "lines"), 1)),
                 "Main cause: communication not overlapped with compute (comm_not_overlapped, could save ~28.0 ms per "
                 "step, capped by the critical path): Communication not overlapped");
    json_decref(all);
}

static void test_warmup(void)
{
    int64_t warm[] = { 60, 10, 11, 9 }, steady[] = { 40, 10, 11, 9 }, two[] = { 90, 10 };
    CHECK_EQ_INT(rules_warmup_first(warm, 4), 1);
    CHECK_EQ_INT(rules_warmup_first(steady, 4), 0);
    CHECK_EQ_INT(rules_warmup_first(two, 2), 0);
}

/* analyses_cp_test's GPU-bound step, imported: three 30 µs kernels queued
 * by launches at 1, 3 and 5 µs; cpu 1, launch 2, gap 3, GPU 90 (µs). */
static void test_paths_of_a_run(void)
{
    const char *ev = STEP(1, 0, 20) "," LAUNCH(1, 1, 1) "," LAUNCH(2, 3, 1) "," LAUNCH(3, 5, 1) ","
        KERNEL("big_gemm", 1, 3, 30) "," KERNEL("big_gemm", 2, 35, 30) "," KERNEL("big_gemm", 3, 66, 30);
    char *dbp = fixture_import(DEV_H100, "", &ev, 1);
    REQUIRE(dbp != NULL);
    struct err e;
    sqlite3 *db;
    struct rules_cap_path *p = NULL;
    size_t n = 0;
    REQUIRE(rundb_open_ro(dbp, &db, &e) == 0);
    CHECK_EQ_INT(rules_cap_paths(db, &p, &n, &e), 0);
    sqlite3_close(db);
    free(dbp);
    REQUIRE(n == 1);
    CHECK_EQ_INT(p[0].rank, 0);
    CHECK_EQ_INT((int64_t)p[0].side[RULES_SIDE_STEP], 96000);
    CHECK_EQ_INT((int64_t)p[0].side[RULES_SIDE_HOST], 6000);
    CHECK_EQ_INT((int64_t)p[0].side[RULES_SIDE_GPU], 93000);
    CHECK_EQ_INT((int64_t)p[0].side[RULES_SIDE_COMM], 3000);
    CHECK_EQ_INT((int64_t)p[0].gap_ns, 3000);
    CHECK_EQ_INT((int64_t)p[0].profiler_ns, 0); /* no operator recorded */
    free(p);
}

/* Through the pipeline (rules_adopt caps): a 60 µs FP32 GEMM per step that
 * enable_amp would halve. When the host span runs on 20 µs past it, the
 * host is the whole path: the GEMM is capped at the profiler's allowance
 * (one operator, 3.5 µs). When the step ends with the GEMM, it is the
 * path and the 30 µs stand. */
#define FFMA "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel_trt"
#define GEMM_STEPS(host)                                                                                \
    STEP(1, 0, host) "," CPU("cpu_op", "aten::mm", 5, 15, "") "," LAUNCH(1, 10, 5) "," KERNEL(FFMA, 1, 20, 60) "," \
    STEP(2, 200, host) "," CPU("cpu_op", "aten::mm", 205, 15, "") "," LAUNCH(2, 210, 5) ","            \
    KERNEL(FFMA, 2, 220, 60)

static void test_pipeline(void)
{
    json_t *f = fixture_findings(DEV_H100, GEMM_STEPS(100));
    REQUIRE(f != NULL);
    json_t *a = fixture_get(f, "enable_amp", 0);
    REQUIRE(a != NULL);
    CHECK(fabs(fixture_estimate(a) - 30.0) < 0.01);
    CHECK(fabs(fixture_num(a, "saving_us") - 3.5) < 0.01);
    CHECK(fixture_has_line(a, "Capped at 3.5 µs per step (the rule's estimate: 30 µs): the critical path spends "
                              "only 0.0 µs per step on GPU compute"));
    json_decref(f);
    f = fixture_findings(DEV_H100, GEMM_STEPS(25));
    REQUIRE(f != NULL);
    a = fixture_get(f, "enable_amp", 0);
    REQUIRE(a != NULL);
    CHECK(fabs(fixture_num(a, "saving_us") - 30.0) < 0.01);
    CHECK(json_object_get(json_object_get(a, "evidence"), "saving_cap") == NULL);
    json_decref(f);
}

int main(void)
{
    fixture_init();
    RUN(test_limits);
    RUN(test_capped);
    RUN(test_within);
    RUN(test_run_level);
    RUN(test_causes);
    RUN(test_warmup);
    RUN(test_paths_of_a_run);
    RUN(test_pipeline);
    fixture_done();
    return harness_done("rules_cap");
}

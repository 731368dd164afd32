/* rules_idle_test — the rules about an idle GPU (kernel_launch_bound,
 * gpu_idle_gaps, low_gpu_utilization) on crafted Kineto traces imported
 * through the real pipeline, each made to fire and not to fire, and the
 * cases that tell them apart: a host busy launching (launch-bound) against
 * a host idle or doing other work between ops (gaps, or nothing), a host
 * in the DataLoader, and waits that a host sync opened. Times in the
 * traces are µs. */
#include "rules_fixture.h"

#include <math.h>

/* ---------------------------------------------------------------------- */
/* Building traces in code                                                  */
/* ---------------------------------------------------------------------- */

/* An operator launching one kernel: the op [op_ts, +op_dur) holds the
 * launch call [l_ts, +l_dur); the kernel runs [k_ts, +k_dur). */
static void op_kernel(struct fixture_trace *b, const char *op, double op_ts, double op_dur, double l_ts, double l_dur,
                      double k_ts, double k_dur, int corr)
{
    fixture_host(b, 1, "cpu_op", op, op_ts, op_dur, 0);
    fixture_host(b, 1, "cuda_runtime", "cudaLaunchKernel", l_ts, l_dur, corr);
    fixture_trace_add(b,
                      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"small_kernel\",\"pid\":0,\"tid\":7,"
                      "\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}}",
                      k_ts, k_dur, corr);
}

/* Launch-bound: 2 steps of 100 µs, 10 ops each, one every 10 µs. Op i
 * covers [t, t+8) with its launch call [t+2, t+7); its 2 µs kernel runs
 * [t+8, t+10). Each kernel is shorter than its launch, and the GPU waits
 * 8 µs before each one while the host is inside the next op: 80 % idle,
 * all of it launch overhead. */
static char *launch_bound_trace(void)
{
    struct fixture_trace b = { 0 };
    int corr = 1;
    for (int s = 0; s < 2; s++) {
        double s0 = 100.0 * s;
        fixture_step(&b, s + 1, s0, 100);
        for (int i = 0; i < 10; i++) {
            double t = s0 + 10.0 * i;
            op_kernel(&b, "aten::add", t, 8, t + 2, 5, t + 8, 2, corr++);
        }
    }
    return b.s;
}

/* The same kernels, one every 20 µs, but the host is idle (or runs code
 * the profiler does not record) for 15 µs of each wait and dispatches the
 * op only in its last 3 µs: the waits are short, but not launch overhead. */
static char *host_idle_trace(void)
{
    struct fixture_trace b = { 0 };
    int corr = 1;
    for (int s = 0; s < 2; s++) {
        double s0 = 200.0 * s;
        fixture_step(&b, s + 1, s0, 200);
        for (int i = 0; i < 10; i++) {
            double t = s0 + 20.0 * i;
            op_kernel(&b, "aten::add", t + 15, 3, t + 16, 1, t + 18, 2, corr++);
        }
    }
    return b.s;
}

/* Launch-bound timing again, but every kernel is followed by .item(): the
 * host is blocked in cudaStreamSynchronize when the GPU runs dry, so the
 * waits are the sync's doing (excessive_host_sync), not the launches'. */
static char *sync_trace(void)
{
    struct fixture_trace b = { 0 };
    int corr = 1;
    for (int s = 0; s < 2; s++) {
        double s0 = 200.0 * s;
        fixture_step(&b, s + 1, s0, 200);
        for (int i = 0; i < 10; i++) {
            double t = s0 + 20.0 * i;
            op_kernel(&b, "aten::add", t, 4, t + 1, 2, t + 4, 2, corr++);
            fixture_host(&b, 1, "cpu_op", "aten::item", t + 5, 5, 0);
            fixture_host(&b, 1, "cuda_runtime", "cudaStreamSynchronize", t + 5, 3, 0);
        }
    }
    return b.s;
}

/* What the host does in python_gap_trace's gaps. */
enum gap_host { GAP_PYTHON, GAP_COLLECTIVE, GAP_AFTER_SYNC, GAP_QUEUED };

/* Steps of 10 ms: a 2 ms kernel, then 4 ms with the host outside any op
 * (Python/NumPy work), or in a gloo collective, or first blocked in a sync
 * until the kernel is done and then in Python; then the op launching a
 * kernel that runs to the step's end. One 4 ms gap per step: 40 %. */
static char *python_gap_trace(enum gap_host what)
{
    struct fixture_trace b = { 0 };
    int corr = 1;
    for (int s = 0; s < 2; s++) {
        double s0 = 10000.0 * s;
        fixture_step(&b, s + 1, s0, 10000);
        op_kernel(&b, "aten::mm", s0, 20, s0 + 5, 5, s0 + 12, 2000, corr++);
        if (what == GAP_COLLECTIVE) fixture_host(&b, 1, "user_annotation", "gloo:all_reduce", s0 + 30, 5960, 0);
        if (what == GAP_AFTER_SYNC) {
            fixture_host(&b, 1, "cpu_op", "aten::item", s0 + 25, 1995, 0);
            fixture_host(&b, 1, "cuda_runtime", "cudaStreamSynchronize", s0 + 26, 1990, 0);
        }
        /* queued: the second kernel is launched right away, and starts 6 ms
         * later (after another stream's work, an event) */
        if (what == GAP_QUEUED) op_kernel(&b, "aten::mm", s0 + 30, 20, s0 + 35, 5, s0 + 6012, 3988, corr++);
        else op_kernel(&b, "aten::mm", s0 + 6000, 20, s0 + 6005, 5, s0 + 6012, 3988, corr++);
    }
    return b.s;
}

/* Steps of 10 ms that spend their first 8 ms in the DataLoader, then
 * launch one kernel running to the step's end. */
static char *dataloader_trace(void)
{
    struct fixture_trace b = { 0 };
    int corr = 1;
    for (int s = 0; s < 2; s++) {
        double s0 = 10000.0 * s;
        fixture_step(&b, s + 1, s0, 10000);
        fixture_host(&b, 1, "user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", s0, 8000,
                     0);
        op_kernel(&b, "aten::mm", s0 + 8000, 20, s0 + 8005, 5, s0 + 8012, 1988, corr++);
    }
    return b.s;
}

/* A busy GPU: each 100 µs step launches two 48 µs kernels ahead of time. */
static char *busy_trace(void)
{
    struct fixture_trace b = { 0 };
    int corr = 1;
    for (int s = 0; s < 2; s++) {
        double s0 = 100.0 * s;
        fixture_step(&b, s + 1, s0, 100);
        op_kernel(&b, "aten::mm", s0, 4, s0 + 1, 2, s0 + 3, 48, corr++);
        op_kernel(&b, "aten::mm", s0 + 5, 4, s0 + 6, 2, s0 + 51, 48, corr++);
    }
    return b.s;
}

static json_t *findings_of(char *events)
{
    json_t *f = fixture_findings(DEV_H100, events);
    free(events);
    return f;
}

#define NEAR(a, b) (fabs((a) - (b)) < 0.01)

/* ---------------------------------------------------------------------- */
/* kernel_launch_bound                                                      */
/* ---------------------------------------------------------------------- */

static void test_launch_bound_fires(void)
{
    json_t *f = findings_of(launch_bound_trace());
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "kernel_launch_bound", 0);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    /* 45 µs of a 100 µs step once the profiler's cost is taken out */
    CHECK_EQ_STR(json_string_value(json_object_get(d, "severity")), "medium");
    CHECK(NEAR(fixture_evnum(d, "idle_pct"), 80.0));
    CHECK(NEAR(fixture_evnum(d, "hostwait_pct"), 100.0));
    CHECK(NEAR(fixture_evnum(d, "overhead_pct"), 100.0));
    CHECK(NEAR(fixture_evnum(d, "overhead_us"), 80.0));
    CHECK(NEAR(fixture_evnum(d, "ops_per_step"), 10.0));
    CHECK(NEAR(fixture_evnum(d, "mean_op_us"), 2.0));
    CHECK(NEAR(fixture_evnum(d, "mean_launch_us"), 5.0));
    /* the median from a histogram of 8 buckets per octave: within 9 % */
    CHECK(fabs(fixture_evnum(d, "median_launch_us") - 5.0) < 0.45);
    CHECK(NEAR(fixture_evnum(d, "shorter_than_launch_pct"), 100.0));
    CHECK(fixture_has_line(d, "GPU idle 80 µs of a 100 µs step (80 %), average of 2 steps"));
    CHECK(fixture_has_line(d, "framework ops 38 %"));  /* 3 of each 8 µs wait in the op itself */
    CHECK(fixture_has_line(d, "CUDA launch calls 62 %"));
    CHECK(fixture_has_line(d, "Where: aten::add 100 %"));
    /* the wait goes, but not the profiler's own 3.5 µs for each of the 10
     * operators recorded per step: 80 - 35 µs */
    CHECK(NEAR(fixture_evnum(d, "profiler_overhead_us"), 35.0));
    CHECK(fixture_has_line(d, "The profiler itself adds about 35 µs per step here (10 operators recorded x ~3.5 µs)"));
    CHECK(NEAR(json_number_value(json_object_get(d, "saving_us")), 45.0));
    CHECK_EQ_STR(json_string_value(json_object_get(d, "link")), "view=timeline&rank=0&start=0.000&end=100.000");
    CHECK(strstr(json_string_value(json_object_get(d, "snippet")), "reduce-overhead") != NULL);
    CHECK(strstr(json_string_value(json_object_get(d, "advice")), "CUDA graphs") != NULL);
    CHECK(strncmp(json_string_value(json_object_get(d, "doc_url")), "https://", 8) == 0);
    /* the waits are short: nothing for gpu_idle_gaps */
    CHECK(!fixture_has(f, "gpu_idle_gaps", -1));
    json_decref(f);
}

static void test_launch_bound_not(void)
{
    /* a busy GPU */
    json_t *f = findings_of(busy_trace());
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "kernel_launch_bound", -1));
    json_decref(f);
    /* the threshold moves the line: 80 % idle is under 85 % */
    struct config keep = fixture_cfg;
    struct err e;
    REQUIRE(config_set(&fixture_cfg, "rule_launch_idle_pct", "85", &e) == 0);
    f = findings_of(launch_bound_trace());
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "kernel_launch_bound", -1));
    json_decref(f);
    fixture_cfg = keep;
}

/* The same short waits, told apart by what the host does in them. */
static void test_launch_bound_vs_host_idle(void)
{
    json_t *f = findings_of(host_idle_trace());
    REQUIRE(f != NULL);
    /* 90 % idle, all of it host-wait, but the host dispatches in only 3 of
     * each 18 µs wait: other host work, not launch overhead */
    CHECK(!fixture_has(f, "kernel_launch_bound", -1));
    CHECK(!fixture_has(f, "gpu_idle_gaps", -1)); /* no wait reaches 1 ms */
    /* the GPU is still mostly idle, and no rule explains it */
    json_t *u = fixture_get(f, "low_gpu_utilization", 0);
    REQUIRE(u != NULL);
    CHECK(json_is_null(json_object_get(json_object_get(u, "evidence"), "cause")));
    CHECK(fixture_has_line(u, "No other rule explains the idle time"));
    json_decref(f);

    /* waits opened by a host sync belong to the sync */
    f = findings_of(sync_trace());
    REQUIRE(f != NULL);
    if (fixture_has(f, "kernel_launch_bound", -1)) fixture_dump(f);
    CHECK(!fixture_has(f, "kernel_launch_bound", -1));
    json_decref(f);

    /* a long stretch of Python between ops is a gap, not launch overhead */
    f = findings_of(python_gap_trace(GAP_PYTHON));
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "kernel_launch_bound", -1));
    CHECK(fixture_has(f, "gpu_idle_gaps", 0));
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* gpu_idle_gaps                                                            */
/* ---------------------------------------------------------------------- */

static void test_idle_gaps_fires(void)
{
    json_t *f = findings_of(python_gap_trace(GAP_PYTHON));
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "gpu_idle_gaps", 0);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(d, "severity")), "high");
    CHECK(NEAR(fixture_evnum(d, "gap_us"), 4000.0));
    CHECK(NEAR(fixture_evnum(d, "share_pct"), 40.0));
    CHECK(NEAR(fixture_evnum(d, "gaps"), 2));
    CHECK_EQ_STR(fixture_evstr(d, "main_host"), "python");
    /* 3988 of each 4000 µs outside any op, then 12 µs in the next one */
    CHECK(NEAR(json_number_value(json_object_get(json_object_get(json_object_get(d, "evidence"), "host_pct"),
                                                 "python")),
               99.7));
    json_t *top = json_array_get(json_object_get(json_object_get(d, "evidence"), "top"), 0);
    REQUIRE(top != NULL);
    CHECK(NEAR(json_number_value(json_object_get(top, "start_us")), 2012.0));
    CHECK(NEAR(json_number_value(json_object_get(top, "dur_us")), 4000.0));
    CHECK_EQ_STR(json_string_value(json_object_get(top, "step")), "ProfilerStep#1");
    CHECK(fixture_has_line(d, "2 gaps of at least 1.00 ms with no GPU work: 4.00 ms of a 10.0 ms step (40 %)"));
    CHECK(fixture_has_line(
        d, "4.00 ms in ProfilerStep#1 at +2.01 ms: the host was running code the profiler did not record"));
    CHECK(NEAR(json_number_value(json_object_get(d, "saving_us")), 4000.0));
    /* the timeline over the largest gap, 10 % margin each side */
    CHECK_EQ_STR(json_string_value(json_object_get(d, "link")), "view=timeline&rank=0&start=1612.000&end=6412.000");
    CHECK(strstr(json_string_value(json_object_get(d, "advice")), "profiler does not record") != NULL);
    CHECK(strstr(json_string_value(json_object_get(d, "snippet")), "record_function") != NULL);
    /* 60 % busy: not low utilization */
    CHECK(!fixture_has(f, "low_gpu_utilization", -1));
    CHECK(!json_is_true(json_object_get(top, "after_sync")));
    json_decref(f);

    /* the host waiting in a collective is named */
    f = findings_of(python_gap_trace(GAP_COLLECTIVE));
    REQUIRE(f != NULL);
    d = fixture_get(f, "gpu_idle_gaps", 0);
    REQUIRE(d != NULL);
    CHECK_EQ_STR(fixture_evstr(d, "main_host"), "collective");
    CHECK(strstr(json_string_value(json_object_get(d, "title")), "waiting in a collective (gloo:all_reduce)") != NULL);
    CHECK(strstr(json_string_value(json_object_get(d, "advice")), "nccl") != NULL);
    json_decref(f);

    /* the op ending the gap was queued before it opened: the GPU waited on a
     * dependency, not on the host (HTA's negative_queue_length) */
    f = findings_of(python_gap_trace(GAP_QUEUED));
    REQUIRE(f != NULL);
    d = fixture_get(f, "gpu_idle_gaps", 0);
    REQUIRE(d != NULL);
    CHECK_EQ_STR(fixture_evstr(d, "main_host"), "queued");
    CHECK(strstr(json_string_value(json_object_get(d, "title")), "already queued") != NULL);
    CHECK(strstr(json_string_value(json_object_get(d, "advice")), "dependency") != NULL);
    json_decref(f);

    /* a gap that opens while the host is blocked in a sync says so */
    f = findings_of(python_gap_trace(GAP_AFTER_SYNC));
    REQUIRE(f != NULL);
    d = fixture_get(f, "gpu_idle_gaps", 0);
    REQUIRE(d != NULL);
    top = json_array_get(json_object_get(json_object_get(d, "evidence"), "top"), 0);
    REQUIRE(top != NULL);
    CHECK(json_is_true(json_object_get(top, "after_sync")));
    CHECK(NEAR(fixture_evnum(d, "after_sync"), 2));
    CHECK(fixture_has_line(d, "after a host sync emptied the GPU's queue"));
    CHECK(fixture_has_line(d, "2 of the 2 gaps opened while the host was blocked in a sync"));
    json_decref(f);
}

static void test_idle_gaps_not(void)
{
    json_t *f = findings_of(busy_trace());
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "gpu_idle_gaps", -1));
    json_decref(f);
    /* with gaps counted from 5 ms, the 4 ms ones do not count */
    struct config keep = fixture_cfg;
    struct err e;
    REQUIRE(config_set(&fixture_cfg, "rule_gap_ms", "5", &e) == 0);
    f = findings_of(python_gap_trace(GAP_PYTHON));
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "gpu_idle_gaps", -1));
    json_decref(f);
    fixture_cfg = keep;
}

/* Gaps spent in the DataLoader: reported, naming the DataLoader, but the
 * time is dataloader_bound's; low utilization names that as its cause. */
static void test_dataloader_gaps(void)
{
    json_t *f = findings_of(dataloader_trace());
    REQUIRE(f != NULL);
    REQUIRE(fixture_has(f, "dataloader_bound", 0));
    json_t *d = fixture_get(f, "gpu_idle_gaps", 0);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    CHECK_EQ_STR(fixture_evstr(d, "main_host"), "dataloader");
    CHECK(strstr(json_string_value(json_object_get(d, "title")), "DataLoader") != NULL);
    CHECK(fixture_has_line(d, "dataloader_bound already counts the DataLoader part (8.00 ms per step)"));
    CHECK_EQ_STR(json_string_value(json_object_get(d, "severity")), "low");
    /* the 12 µs of each gap outside the DataLoader */
    CHECK(NEAR(json_number_value(json_object_get(d, "saving_us")), 12.0));
    /* long waits only: not launch-bound */
    CHECK(!fixture_has(f, "kernel_launch_bound", -1));

    json_t *u = fixture_get(f, "low_gpu_utilization", 0);
    REQUIRE(u != NULL);
    CHECK_EQ_STR(fixture_evstr(u, "cause"), "dataloader_bound");
    CHECK(strstr(json_string_value(json_object_get(u, "title")), "DataLoader") != NULL);
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* low_gpu_utilization                                                      */
/* ---------------------------------------------------------------------- */

static void test_low_utilization(void)
{
    json_t *f = findings_of(launch_bound_trace());
    REQUIRE(f != NULL);
    json_t *u = fixture_get(f, "low_gpu_utilization", 0);
    if (!u) fixture_dump(f);
    REQUIRE(u != NULL);
    json_t *k = fixture_get(f, "kernel_launch_bound", 0);
    REQUIRE(k != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(u, "severity")), "high"); /* under half the threshold */
    CHECK(NEAR(fixture_evnum(u, "util_pct"), 20.0));
    CHECK(NEAR(fixture_evnum(u, "kernel_us"), 20.0));
    CHECK(NEAR(fixture_evnum(u, "idle_us"), 80.0));
    CHECK_EQ_STR(fixture_evstr(u, "cause"), "kernel_launch_bound");
    CHECK(fixture_has_line(u, "Kernels run 20.0 % of the steps' time on GPU 0 (NVIDIA H100 80GB HBM3)"));
    CHECK(fixture_has_line(u, "Main cause: launch overhead"));
    /* a summary: the cause carries the saving, and its view is the link */
    CHECK(NEAR(json_number_value(json_object_get(u, "saving_us")), 0.0));
    CHECK_EQ_STR(json_string_value(json_object_get(u, "link")), json_string_value(json_object_get(k, "link")));
    CHECK(strstr(json_string_value(json_object_get(u, "advice")), "kernel_launch_bound") != NULL);
    /* an inference trace (no backward pass): batch the requests */
    CHECK(strstr(json_string_value(json_object_get(u, "snippet")), "batched forward pass") != NULL);
    json_decref(f);

    /* a busy GPU (96 %) */
    f = findings_of(busy_trace());
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "low_gpu_utilization", -1));
    json_decref(f);

    /* the threshold: 20 % is not under 10 % */
    struct config keep = fixture_cfg;
    struct err e;
    REQUIRE(config_set(&fixture_cfg, "rule_gpu_util_pct", "10", &e) == 0);
    f = findings_of(launch_bound_trace());
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "low_gpu_utilization", -1));
    json_decref(f);
    fixture_cfg = keep;
}

int main(void)
{
    fixture_init();
    RUN(test_launch_bound_fires);
    RUN(test_launch_bound_not);
    RUN(test_launch_bound_vs_host_idle);
    RUN(test_idle_gaps_fires);
    RUN(test_idle_gaps_not);
    RUN(test_dataloader_gaps);
    RUN(test_low_utilization);
    fixture_done();
    return harness_done("rules_idle");
}

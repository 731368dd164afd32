/* rules_memory_test — the GPU memory rules on crafted traces ([memory]
 * events with running totals, as Kineto writes them), each made to fire
 * and not to fire: low_gpu_memory (room for a larger batch on an idle GPU),
 * memory_near_limit (peak close to capacity) and memory_growth (memory at
 * step boundaries rising step after step). Times are µs. */
#include "rules_fixture.h"

#include <math.h>

/* A 1 GiB GPU, so a near-full peak takes few bytes to write down. */
#define DEV_1G                                                                                          \
    "[{\"id\":0,\"name\":\"Test GPU 1GB\",\"totalGlobalMem\":1073741824,\"computeMajor\":8,"             \
    "\"computeMinor\":0,\"numSms\":10}]"
#define H100_BYTES 85029158912.0
#define MIB 1048576L

/* ---------------------------------------------------------------------- */
/* Trace builder                                                           */
/* ---------------------------------------------------------------------- */

static struct fixture_trace tb;
static long tb_total, tb_corr; /* allocated bytes so far; next correlation id */

static void tb_reset(void)
{
    fixture_trace_reset(&tb);
    tb_total = 0;
    tb_corr = 1;
}

static void tb_cpu(const char *cat, const char *name, long ts, long dur)
{
    fixture_trace_add(&tb,
                      "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":%ld,"
                      "\"args\":{}}",
                      cat, name, ts, dur);
}

/* A kernel launched at ts, running from ts + 5 for dur. */
static void tb_kernel(long ts, long dur)
{
    long c = tb_corr++;
    fixture_trace_add(&tb,
                      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,"
                      "\"ts\":%ld,\"dur\":4,\"args\":{\"correlation\":%ld}}",
                      ts, c);
    fixture_trace_add(&tb,
                      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%ld,\"dur\":%ld,"
                      "\"args\":{\"device\":0,\"stream\":7,\"correlation\":%ld}}",
                      ts + 5, dur, c);
}

/* A [memory] event on GPU 0: bytes > 0 allocates at addr, < 0 frees it;
 * the running total follows. */
static void tb_mem(long ts, long addr, long bytes)
{
    tb_total += bytes;
    fixture_trace_add(&tb,
                      "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,"
                      "\"tid\":1,\"ts\":%ld,\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":%ld,\"Bytes\":%ld,"
                      "\"Total Allocated\":%ld,\"Total Reserved\":%ld}}",
                      ts, addr, bytes, tb_total, tb_total + 64 * MIB);
}

/* ---------------------------------------------------------------------- */
/* low_gpu_memory                                                          */
/* ---------------------------------------------------------------------- */

/* Two 1000 µs steps: 100 MiB of weights allocated before them; in each,
 * a kernel of kernel_us and 400 MiB of activations allocated and freed;
 * loader_us of DataLoader at the step's start (0: none). */
static void small_batch_trace(long kernel_us, long loader_us)
{
    tb_reset();
    tb_mem(10, 1, 100 * MIB);
    for (int s = 0; s < 2; s++) {
        long t0 = 100 + s * 1000;
        fixture_step(&tb, s + 1, t0, 1000);
        if (loader_us)
            tb_cpu("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0 + 1, loader_us);
        long t = t0 + 5 + loader_us;
        tb_mem(t + 1, 2, 400 * MIB);
        tb_kernel(t + 2, kernel_us);
        tb_mem(t + kernel_us + 20, 2, -400 * MIB);
    }
}

static void test_low_gpu_memory(void)
{
    small_batch_trace(50, 0);
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *m = fixture_get(f, "low_gpu_memory", 0);
    if (!m) fixture_dump(f);
    REQUIRE(m != NULL);
    json_t *ev = json_object_get(m, "evidence");
    CHECK_EQ_INT((long long)fixture_num(ev, "peak_bytes"), 500 * MIB);
    CHECK_EQ_INT((long long)fixture_num(ev, "kept_bytes"), 100 * MIB);
    CHECK(fabs(fixture_num(ev, "gpu_util_pct") - 5.0) < 0.01);
    /* (90 % of 85029158912 - 100 MiB) / 400 MiB = 182.2 */
    CHECK_EQ_INT((long long)fixture_num(ev, "batch_factor"), 182);
    CHECK_EQ_INT((long long)fixture_num(ev, "ranks_sharing"), 1);
    CHECK_EQ_STR(fixture_str(m, "severity"), "medium"); /* under half the 50 % utilization line */
    CHECK(fixture_num(m, "saving_us") == 0);
    CHECK_EQ_STR(fixture_str(m, "link"), "view=memory&rank=0&device=0");
    CHECK(fixture_has_line(m, "Peak allocated: 500 MiB of 79.2 GiB (0.6 %) on GPU 0 (NVIDIA H100 80GB HBM3)"));
    CHECK(fixture_has_line(m, "About 182 times the batch would still fit below 90 % of the memory"));
    /* no backward pass in the trace: nothing of training is named */
    CHECK(fixture_has_line(m, "Kept across steps (weights, caches): 100 MiB; per batch: 400 MiB"));
    CHECK(strstr(fixture_str(m, "snippet"), "batch_size=8 * bs") != NULL);
    json_decref(f);

    /* a busy GPU (95 %): the batch is not what holds it back */
    small_batch_trace(950, 0);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "low_gpu_memory", -1));
    json_decref(f);

    /* input-bound: loading grows with the batch, so no advice to raise it
     * (dataloader_bound speaks instead) */
    small_batch_trace(50, 800);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "low_gpu_memory", -1));
    CHECK(fixture_has(f, "dataloader_bound", 0));
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* memory_near_limit                                                       */
/* ---------------------------------------------------------------------- */

/* On the 1 GiB GPU: 100 MiB of weights, then in each of two steps
 * aten::empty allocates act_mib of activations, freed later in the step. */
static void big_batch_trace(long act_mib)
{
    tb_reset();
    tb_mem(10, 1, 100 * MIB);
    for (int s = 0; s < 2; s++) {
        long t0 = 100 + s * 1000;
        fixture_step(&tb, s + 1, t0, 1000);
        tb_cpu("cpu_op", "aten::empty", t0 + 10, 20);
        tb_mem(t0 + 20, 2, act_mib * MIB);
        tb_kernel(t0 + 40, 500);
        tb_mem(t0 + 600, 2, -act_mib * MIB);
    }
}

/* 950 MiB were allocated before the trace began (a pool reserved up
 * front); each step allocates and frees 20 MiB. */
static void pre_trace_pool(void)
{
    tb_reset();
    tb_total = 950 * MIB;
    for (int s = 0; s < 2; s++) {
        long t0 = 100 + s * 1000;
        fixture_step(&tb, s + 1, t0, 1000);
        tb_cpu("cpu_op", "aten::empty", t0 + 10, 20);
        tb_mem(t0 + 20, 2, 20 * MIB);
        tb_kernel(t0 + 40, 500);
        tb_mem(t0 + 600, 2, -20 * MIB);
    }
}

static void test_memory_before_trace(void)
{
    pre_trace_pool();
    json_t *f = fixture_findings(DEV_1G, tb.s);
    REQUIRE(f != NULL);
    json_t *m = fixture_get(f, "memory_near_limit", 0);
    if (!m) fixture_dump(f);
    REQUIRE(m != NULL);
    CHECK_EQ_INT((long long)fixture_evnum(m, "before_trace_bytes"), 950 * MIB);
    /* not activation advice: find what holds the memory */
    CHECK(strstr(fixture_str(m, "advice"), "before the trace began") != NULL);
    CHECK(strstr(fixture_str(m, "snippet"), "_record_memory_history") != NULL);
    CHECK(strstr(fixture_str(m, "advice"), "checkpointing") == NULL);
    json_decref(f);
}

static void test_memory_near_limit(void)
{
    big_batch_trace(900);
    json_t *f = fixture_findings(DEV_1G, tb.s);
    REQUIRE(f != NULL);
    json_t *m = fixture_get(f, "memory_near_limit", 0);
    if (!m) fixture_dump(f);
    REQUIRE(m != NULL);
    json_t *ev = json_object_get(m, "evidence");
    CHECK_EQ_INT((long long)fixture_num(ev, "peak_bytes"), 1000 * MIB);
    CHECK_EQ_INT((long long)fixture_num(ev, "memory_bytes"), 1073741824);
    CHECK(fabs(fixture_num(ev, "peak_pct") - 1000.0 / 1024 * 100) < 0.01);
    CHECK_EQ_INT((long long)fixture_num(ev, "reserved_bytes"), 1064 * MIB);
    CHECK_EQ_STR(fixture_str(m, "severity"), "high"); /* 97.7 %: past halfway from 90 % to full */
    CHECK(fixture_num(m, "saving_us") == 0);
    CHECK_EQ_STR(fixture_str(ev, "peak_step"), "ProfilerStep#1");
    json_t *live = json_array_get(json_object_get(ev, "live_by_op"), 0);
    CHECK_EQ_STR(fixture_str(live, "op"), "aten::empty");
    CHECK_EQ_INT((long long)fixture_num(live, "bytes"), 900 * MIB);
    CHECK_EQ_STR(fixture_str(m, "link"), "view=memory&rank=0&device=0");
    CHECK(fixture_has_line(m, "Peak allocated: 1000 MiB of 1.0 GiB (97.7 %) on GPU 0 (Test GPU 1GB)"));
    CHECK(fixture_has_line(m, "Live at the peak: 900 MiB from aten::empty (1 tensors)"));
    /* inference: no activations kept for backward, no optimizer state */
    CHECK(strstr(fixture_str(m, "snippet"), "torch.inference_mode") != NULL);
    CHECK(strstr(fixture_str(m, "advice"), "KV cache") != NULL);
    CHECK(strstr(fixture_str(m, "advice"), "gradient") == NULL);
    json_decref(f);

    /* 91.8 %: over the line but not by much */
    big_batch_trace(840);
    f = fixture_findings(DEV_1G, tb.s);
    REQUIRE(f != NULL);
    m = fixture_get(f, "memory_near_limit", 0);
    CHECK(m != NULL);
    if (m) CHECK_EQ_STR(fixture_str(m, "severity"), "medium");
    json_decref(f);

    /* half the GPU */
    big_batch_trace(400);
    f = fixture_findings(DEV_1G, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "memory_near_limit", -1));
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* memory_growth                                                           */
/* ---------------------------------------------------------------------- */

/* Four 1000 µs steps after 1 GiB of weights; each step allocates 100 MiB
 * of temporaries (freed) and, inside aten::cat, keep_mib that is never
 * freed (a list of outputs kept with their graph). */
static void leak_trace(long keep_mib)
{
    tb_reset();
    tb_mem(10, 1, 1024 * MIB);
    for (int s = 0; s < 4; s++) {
        long t0 = 100 + s * 1000;
        fixture_step(&tb, s + 1, t0, 1000);
        if (keep_mib) {
            tb_cpu("cpu_op", "aten::cat", t0 + 15, 10);
            tb_mem(t0 + 20, 100 + s, keep_mib * MIB);
        }
        tb_mem(t0 + 30, 2, 100 * MIB);
        tb_kernel(t0 + 40, 300);
        tb_mem(t0 + 500, 2, -100 * MIB);
    }
}

static void test_memory_growth(void)
{
    leak_trace(200);
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *m = fixture_get(f, "memory_growth", 0);
    if (!m) fixture_dump(f);
    REQUIRE(m != NULL);
    json_t *ev = json_object_get(m, "evidence");
    CHECK(fabs(fixture_num(ev, "bytes_per_step") - 200.0 * MIB) < 0.5);
    CHECK_EQ_INT((long long)fixture_num(ev, "growing_steps"), 4);
    CHECK(fabs(fixture_num(ev, "growth_bytes") - 800.0 * MIB) < 0.5);
    /* max(64 MiB, 5 % of the 1924 MiB peak) */
    CHECK(fabs(fixture_num(ev, "threshold_bytes") - 0.05 * 1924 * MIB) < 0.5);
    /* (85029158912 - 1924 MiB) / 200 MiB */
    CHECK(fabs(fixture_num(ev, "steps_left") - (H100_BYTES - 1924.0 * MIB) / (200.0 * MIB)) < 0.01);
    json_t *b = json_object_get(ev, "boundary_bytes");
    CHECK_EQ_INT(json_array_size(b), 5);
    CHECK_EQ_INT(json_integer_value(json_array_get(b, 0)), 1024 * MIB);
    CHECK_EQ_INT(json_integer_value(json_array_get(b, 4)), 1824 * MIB);
    json_t *k = json_array_get(json_object_get(ev, "kept_by_op"), 0);
    CHECK_EQ_STR(fixture_str(k, "op"), "aten::cat");
    CHECK_EQ_INT((long long)fixture_num(k, "bytes"), 600 * MIB); /* steps 1-3: still alive after step 4 */
    CHECK_EQ_INT((long long)fixture_num(k, "tensors"), 3);
    CHECK_EQ_STR(fixture_str(m, "severity"), "high");
    CHECK(fixture_num(m, "saving_us") == 0);
    CHECK_EQ_STR(fixture_str(m, "link"), "view=memory&rank=0&device=0");
    CHECK(fixture_has_line(m, "Allocated at step boundaries: 1.0 GiB -> 1.2 GiB -> 1.4 GiB -> 1.6 GiB -> 1.8 GiB"));
    CHECK(fixture_has_line(m, "Grows 200 MiB per step over 4 consecutive steps (800 MiB in all"));
    CHECK(fixture_has_line(m, "At this rate the GPU's 79.2 GiB are full in about 396 steps"));
    CHECK(strstr(fixture_str(m, "snippet"), "detach") != NULL);
    json_decref(f);

    /* the same with the threshold at 5 growing steps: 4 are not enough */
    struct config keep = fixture_cfg;
    struct err e;
    REQUIRE(config_set(&fixture_cfg, "rule_growth_steps", "5", &e) == 0);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "memory_growth", -1));
    json_decref(f);
    fixture_cfg = keep;

    /* steady: every step frees what it allocated */
    leak_trace(0);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "memory_growth", -1));
    json_decref(f);

    /* growing, but 1 MiB a step: 4 MiB is under max(64 MiB, 5 % of peak) */
    leak_trace(1);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "memory_growth", -1));
    json_decref(f);
}

int main(void)
{
    fixture_init();
    RUN(test_low_gpu_memory);
    RUN(test_memory_near_limit);
    RUN(test_memory_before_trace);
    RUN(test_memory_growth);
    fixture_done();
    free(tb.s);
    return harness_done("rules_memory");
}

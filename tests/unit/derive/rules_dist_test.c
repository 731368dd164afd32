/* rules_dist_test — the distributed-training rules (communication_heavy,
 * comm_not_overlapped, straggler, use_ddp_not_dp, ddp_backend) on crafted
 * Kineto traces imported through the real pipeline, each made to fire and
 * not to fire. Times in the traces are µs. */
#include "rules_fixture.h"

#include <math.h>

/* A GPU event on device `dev`, stream `stream` (the fixture's GPU() is
 * device 0, stream 7). */
#define GPU_ON(dev, stream, cat, name, ts, dur, args)                                                    \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":" #dev ",\"tid\":" #stream          \
    ",\"ts\":" #ts ",\"dur\":" #dur ",\"args\":{\"device\":" #dev ",\"stream\":" #stream "," args "}}"
/* A kernel on device 0, stream 8 (NCCL's own stream in real traces). */
#define KERNEL8(name, corr, ts, dur) GPU_ON(0, 8, "kernel", name, ts, dur, "\"correlation\":" #corr)
/* A host span on a second thread (gloo's worker, DDP's reducer). */
#define CPU2(cat, name, ts, dur) X(cat, name, "2", ts, dur, "")

#define NCCL_AR "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"

#define DEV_2xH100                                                                                      \
    "[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"totalGlobalMem\":85029158912,\"computeMajor\":9,"  \
    "\"computeMinor\":0,\"numSms\":132},{\"id\":1,\"name\":\"NVIDIA H100 80GB HBM3\","                   \
    "\"totalGlobalMem\":85029158912,\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}]"

#define GLOO_HEADER(ws) ",\"distributedInfo\":{\"backend\":\"gloo\",\"rank\":0,\"world_size\":" #ws "}"
#define NCCL_HEADER ",\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":2}"

static double num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static const char *str(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Does any evidence line of finding d contain s? */
static int line_has(json_t *d, const char *s)
{
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(json_object_get(d, "evidence"), "lines"), i, l)
        if (strstr(json_string_value(l), s)) return 1;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* communication_heavy and comm_not_overlapped                              */
/* ---------------------------------------------------------------------- */

/* Two 1000 µs steps: a 600 µs GEMM, then a 250 µs all-reduce on its own
 * stream after it (nothing to overlap with): 25 % communication. */
#define COMM_SERIAL                                                                                     \
    STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 600) "," LAUNCH(2, 20, 5) ","      \
    KERNEL8(NCCL_AR, 2, 620, 250) "," STEP(2, 1000, 1000) "," LAUNCH(3, 1010, 5) ","                    \
    KERNEL("gemm", 3, 1020, 600) "," LAUNCH(4, 1020, 5) "," KERNEL8(NCCL_AR, 4, 1620, 250)

/* The same all-reduce running beside the GEMM (DDP-style overlap). */
#define COMM_OVERLAPPED                                                                                 \
    STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 600) "," LAUNCH(2, 20, 5) ","      \
    KERNEL8(NCCL_AR, 2, 100, 250) "," STEP(2, 1000, 1000) "," LAUNCH(3, 1010, 5) ","                    \
    KERNEL("gemm", 3, 1020, 600) "," LAUNCH(4, 1020, 5) "," KERNEL8(NCCL_AR, 4, 1100, 250)

/* A 30 µs all-reduce in a 1000 µs step: 3 %. */
#define COMM_LIGHT                                                                                      \
    STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 600) "," LAUNCH(2, 20, 5) ","      \
    KERNEL8(NCCL_AR, 2, 620, 30) "," STEP(2, 1000, 1000) "," LAUNCH(3, 1010, 5) ","                     \
    KERNEL("gemm", 3, 1020, 600) "," LAUNCH(4, 1020, 5) "," KERNEL8(NCCL_AR, 4, 1620, 30)

/* A 250 µs all-reduce and only 5 µs of compute: nothing to hide behind. */
#define COMM_NO_COMPUTE                                                                                 \
    STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 5) "," LAUNCH(2, 20, 5) ","        \
    KERNEL8(NCCL_AR, 2, 620, 250) "," STEP(2, 1000, 1000) "," LAUNCH(3, 1010, 5) ","                    \
    KERNEL("gemm", 3, 1020, 5) "," LAUNCH(4, 1020, 5) "," KERNEL8(NCCL_AR, 4, 1620, 250)

/* gloo: the collective is a host span on another thread, after the GEMM. */
#define GLOO_SERIAL                                                                                     \
    STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 280) ","                           \
    CPU2("user_annotation", "gloo:all_reduce", 400, 300) "," STEP(2, 1000, 1000) "," LAUNCH(2, 1010, 5) \
    "," KERNEL("gemm", 2, 1020, 280) "," CPU2("user_annotation", "gloo:all_reduce", 1400, 300)

static void test_communication_heavy(void)
{
    json_t *f = fixture_findings(DEV_H100, COMM_SERIAL);
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "communication_heavy", -1);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(d, "rank")), 0); /* one rank: named */
    CHECK_EQ_STR(fixture_severity(d), "medium");                     /* 25 % < 3 x 10 % */
    json_t *ev = json_object_get(d, "evidence");
    CHECK(fabs(num(ev, "share_pct") - 25.0) < 0.01);
    CHECK(fabs(num(ev, "comm_us") - 250.0) < 0.01);
    CHECK(fabs(num(ev, "step_us") - 1000.0) < 0.01);
    CHECK(line_has(d, "250 µs of a 1.00 ms step (25 %)"));
    CHECK(line_has(d, "Largest collective kernel: ncclDevKernel_AllReduce"));
    CHECK(fabs(fixture_estimate(d) - 125.0) < 0.01); /* half the traffic */
    CHECK(strstr(str(d, "link"), "view=timeline&rank=0&start=") != NULL);
    CHECK(strstr(str(d, "snippet"), "no_sync") != NULL);
    json_decref(f);

    f = fixture_findings(DEV_H100, COMM_LIGHT);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "communication_heavy", -1));
    CHECK(!fixture_has(f, "comm_not_overlapped", -1));
    json_decref(f);

    /* a process group of one transfers nothing */
    const char *one = COMM_SERIAL;
    f = fixture_findings_ranks(DEV_H100, GLOO_HEADER(1), &one, 1);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "communication_heavy", -1));
    CHECK(!fixture_has(f, "comm_not_overlapped", -1));
    json_decref(f);
}

static void test_comm_not_overlapped(void)
{
    json_t *f = fixture_findings(DEV_H100, COMM_SERIAL);
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "comm_not_overlapped", -1);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(d, "rank")), 0);
    CHECK_EQ_STR(fixture_severity(d), "high"); /* 25 % of the step could hide */
    json_t *ev = json_object_get(d, "evidence");
    CHECK(fabs(num(ev, "comm_us") - 250.0) < 0.01);
    CHECK(fabs(num(ev, "overlap_pct")) < 0.01);
    CHECK(fabs(num(ev, "exposed_us") - 250.0) < 0.01);
    CHECK(fabs(num(ev, "compute_alone_us") - 600.0) < 0.01);
    CHECK(fabs(fixture_estimate(d) - 250.0) < 0.01); /* all of it could hide behind the GEMM */
    CHECK(line_has(d, "Exposed: 250 µs per step"));
    CHECK(strstr(str(d, "link"), "view=timeline&rank=0&start=") != NULL);
    CHECK(strstr(str(d, "snippet"), "bucket_cap_mb") != NULL);
    json_decref(f);

    /* overlapped with the GEMM: heavy, but hidden */
    f = fixture_findings(DEV_H100, COMM_OVERLAPPED);
    REQUIRE(f != NULL);
    CHECK(fixture_has(f, "communication_heavy", 0));
    CHECK(!fixture_has(f, "comm_not_overlapped", -1));
    json_decref(f);

    /* no compute to hide behind: overlap cannot help */
    f = fixture_findings(DEV_H100, COMM_NO_COMPUTE);
    REQUIRE(f != NULL);
    CHECK(fixture_has(f, "communication_heavy", 0));
    CHECK(!fixture_has(f, "comm_not_overlapped", -1));
    json_decref(f);

    /* gloo: host collectives count, measured against the kernels */
    f = fixture_findings(DEV_H100, GLOO_SERIAL);
    REQUIRE(f != NULL);
    d = fixture_get(f, "comm_not_overlapped", 0);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    ev = json_object_get(d, "evidence");
    CHECK(json_is_true(json_object_get(ev, "host_collectives")));
    CHECK(fabs(num(ev, "comm_us") - 300.0) < 0.01);
    CHECK(fabs(num(d, "saving_us") - 280.0) < 0.01); /* bounded by the compute that runs alone */
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* straggler                                                                */
/* ---------------------------------------------------------------------- */

/* A 10 ms step: a 2 ms GEMM, then a gloo all-reduce from `ar` to the end
 * of the step; the time between is host time nothing recorded (a sleep). */
#define DDP_RANK(ar, ar_dur)                                                                            \
    STEP(1, 0, 10000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 2000) ","                          \
    CPU2("user_annotation", "gloo:all_reduce", ar, ar_dur) "," STEP(2, 10000, 10000) ","                \
    LAUNCH(2, 10010, 5) "," KERNEL("gemm", 2, 10020, 2000) ","                                          \
    CPU2("user_annotation", "gloo:all_reduce", 1##ar, ar_dur)

/* Ranks 0 and 2 wait 7 ms in the all-reduce; rank 1 works 9 ms first. */
static const char *const straggling[] = { DDP_RANK(3000, 7000), DDP_RANK(9000, 1000), DDP_RANK(3000, 7000) };
/* Balanced: every rank works 3 ms and all-reduces for 1 ms. */
#define BALANCED_RANK                                                                                   \
    STEP(1, 0, 4000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 2000) ","                           \
    CPU2("user_annotation", "gloo:all_reduce", 3000, 1000) "," STEP(2, 4000, 4000) ","                  \
    LAUNCH(2, 4010, 5) "," KERNEL("gemm", 2, 4020, 2000) ","                                            \
    CPU2("user_annotation", "gloo:all_reduce", 7000, 1000)
static const char *const balanced[] = { BALANCED_RANK, BALANCED_RANK, BALANCED_RANK };
/* Rank 1 works longer, but nobody waits for it (no collective grows):
 * ranks that do not synchronise are not held up by it. */
static const char *const unsynced[] = { BALANCED_RANK, DDP_RANK(9000, 1000), BALANCED_RANK };

static void test_straggler(void)
{
    json_t *f = fixture_findings_ranks(DEV_H100, "", straggling, 3);
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "straggler", -1);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(d, "rank")), 1);
    CHECK_EQ_STR(str(d, "severity"), "high");
    json_t *ev = json_object_get(d, "evidence");
    CHECK_EQ_INT(json_integer_value(json_object_get(ev, "straggler_rank")), 1);
    CHECK(fabs(num(ev, "own_us") - 9000.0) < 1.0);
    CHECK(fabs(num(ev, "median_own_us") - 3000.0) < 1.0);
    CHECK(fabs(num(ev, "excess_us") - 6000.0) < 1.0);
    CHECK(fabs(num(ev, "others_wait_us") - 6000.0) < 1.0);
    CHECK_EQ_INT(json_integer_value(json_object_get(ev, "steps")), 2);
    json_t *ranks = json_object_get(ev, "ranks");
    CHECK_EQ_INT(json_array_size(ranks), 3);
    CHECK(fabs(num(json_array_get(ranks, 0), "comm_us") - 7000.0) < 1.0);
    CHECK(fabs(num(json_array_get(ranks, 1), "own_us") - 9000.0) < 1.0);
    CHECK(fabs(num(d, "saving_us") - 6000.0) < 1.0);
    CHECK(line_has(d, "Rank 1 works 9.00 ms per step outside collectives"));
    CHECK(line_has(d, "host time outside any recorded operator"));
    CHECK(line_has(d, "<- straggler"));
    CHECK_EQ_STR(str(d, "link"), "view=ranks&rank=1");
    /* straggler is declared run-level in its definition: its finding comes
     * before every finding about one rank's code */
    CHECK_EQ_INT(rule_straggler.run_level, RULES_RUN_LEVEL);
    CHECK_EQ_INT(rule_enable_amp.run_level, RULES_PER_RANK);
    for (size_t i = 0; i < json_array_size(f); i++) {
        json_t *x = json_array_get(f, i);
        if (x == d) break;
        CHECK(!json_is_integer(json_object_get(x, "rank")));
    }
    json_decref(f);

    f = fixture_findings_ranks(DEV_H100, "", balanced, 3);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "straggler", -1));
    json_decref(f);

    f = fixture_findings_ranks(DEV_H100, "", unsynced, 3);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "straggler", -1));
    json_decref(f);

    /* one rank alone has no one to straggle behind */
    f = fixture_findings_ranks(DEV_H100, "", &straggling[1], 1);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "straggler", -1));
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* use_ddp_not_dp                                                           */
/* ---------------------------------------------------------------------- */

/* DataParallel over two GPUs: cuda:0 runs 600 µs per step, cuda:1 300. */
#define DP_TWO(wrapper)                                                                                 \
    STEP(1, 0, 1000) "," CPU("user_annotation", wrapper, 5, 900, "") "," LAUNCH(1, 10, 5) ","          \
    KERNEL("gemm", 1, 20, 600) "," CPU("cuda_runtime", "cudaLaunchKernel", 30, 5, "\"correlation\":2") \
    "," GPU_ON(1, 20, "kernel", "gemm", 40, 300, "\"correlation\":2") "," STEP(2, 1000, 1000) ","      \
    CPU("user_annotation", wrapper, 1005, 900, "") "," LAUNCH(3, 1010, 5) ","                          \
    KERNEL("gemm", 3, 1020, 600) ","                                                                    \
    CPU("cuda_runtime", "cudaLaunchKernel", 1030, 5, "\"correlation\":4") ","                           \
    GPU_ON(1, 20, "kernel", "gemm", 1040, 300, "\"correlation\":4")
#define DP_ONE                                                                                          \
    STEP(1, 0, 1000) "," CPU("user_annotation", "DataParallel.forward", 5, 900, "") ","                 \
    LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 600)

static void test_use_ddp_not_dp(void)
{
    json_t *f = fixture_findings(DEV_2xH100, DP_TWO("DataParallel.forward"));
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "use_ddp_not_dp", -1);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(d, "rank")), 0);
    CHECK_EQ_STR(str(d, "severity"), "high");
    json_t *ev = json_object_get(d, "evidence");
    CHECK_EQ_INT(json_integer_value(json_object_get(ev, "devices")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(ev, "dp_forward_calls")), 2);
    CHECK(fabs(num(ev, "first_device_kernel_us") - 600.0) < 0.01);
    CHECK(fabs(num(ev, "mean_device_kernel_us") - 450.0) < 0.01);
    CHECK(fabs(num(d, "saving_us") - 150.0) < 0.01); /* cuda:0's extra over the mean */
    CHECK(line_has(d, "driving 2 GPUs from one process"));
    CHECK(strstr(str(d, "link"), "view=timeline&rank=0&start=") != NULL);
    CHECK(strstr(str(d, "snippet"), "DDP(") != NULL);
    json_decref(f);

    /* one device: DataParallel is a pass-through */
    f = fixture_findings(DEV_H100, DP_ONE);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "use_ddp_not_dp", -1));
    json_decref(f);

    /* DistributedDataParallel is the fix, not the problem */
    f = fixture_findings(DEV_2xH100, DP_TWO("DistributedDataParallel.forward"));
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "use_ddp_not_dp", -1));
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* ddp_backend                                                              */
/* ---------------------------------------------------------------------- */

/* A DDP rank: a GEMM and a 300 µs gloo all-reduce in a 1000 µs step. */
#define DDP_GPU_RANK                                                                                    \
    STEP(1, 0, 1000) "," CPU("user_annotation", "DistributedDataParallel.forward", 5, 200, "") ","      \
    LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 280) ","                                                 \
    CPU2("user_annotation", "gloo:all_reduce", 400, 300)
/* The same on the CPU only (no kernels). */
#define DDP_CPU_RANK                                                                                    \
    STEP(1, 0, 1000) "," CPU("cpu_op", "aten::mm", 10, 280, "") ","                                     \
    CPU2("user_annotation", "gloo:all_reduce", 400, 300)

static void test_ddp_backend(void)
{
    static const char *const gpu2[] = { DDP_GPU_RANK, DDP_GPU_RANK };
    static const char *const cpu2[] = { DDP_CPU_RANK, DDP_CPU_RANK };
    json_t *f = fixture_findings_ranks(DEV_H100, GLOO_HEADER(2), gpu2, 2);
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "ddp_backend", -1);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    CHECK(json_is_null(json_object_get(d, "rank"))); /* once for the run */
    size_t i, n = 0;
    json_t *x;
    json_array_foreach(f, i, x) n += strcmp(str(x, "id"), "ddp_backend") == 0;
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_STR(str(d, "severity"), "high"); /* 30 % of the step in gloo */
    json_t *ev = json_object_get(d, "evidence");
    CHECK_EQ_STR(str(ev, "backend"), "gloo");
    CHECK_EQ_STR(str(ev, "source"), "distributedInfo");
    CHECK_EQ_INT(json_integer_value(json_object_get(ev, "ranks")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(ev, "world_size")), 2);
    CHECK(json_is_true(json_object_get(ev, "ddp")));
    CHECK(fabs(num(ev, "comm_us") - 300.0) < 0.01);
    CHECK(fabs(num(d, "saving_us") - 150.0) < 0.01);
    CHECK(line_has(d, "backend for CUDA tensors: gloo (distributedInfo, world size 2)"));
    CHECK(line_has(d, "gloo spans"));
    CHECK(strstr(str(d, "link"), "view=timeline&rank=0&start=") != NULL);
    CHECK(strstr(str(d, "snippet"), "cuda:nccl") != NULL);
    json_decref(f);

    /* no header: the gloo host spans and the absence of NCCL tell */
    f = fixture_findings_ranks(DEV_H100, "", gpu2, 2);
    REQUIRE(f != NULL);
    d = fixture_get(f, "ddp_backend", -1);
    CHECK(d != NULL);
    if (d) CHECK_EQ_STR(str(json_object_get(d, "evidence"), "source"), "host spans");
    json_decref(f);

    /* NCCL, or NCCL for CUDA tensors with gloo for CPU ones */
    f = fixture_findings_ranks(DEV_H100, NCCL_HEADER, gpu2, 2);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "ddp_backend", -1));
    json_decref(f);
    f = fixture_findings_ranks(DEV_H100,
                               ",\"distributedInfo\":{\"backend\":\"cpu:gloo,cuda:nccl\",\"rank\":0,\"world_size\":2}",
                               gpu2, 2);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "ddp_backend", -1));
    json_decref(f);

    /* CPU-only training: gloo is the right backend */
    f = fixture_findings_ranks("[]", GLOO_HEADER(2), cpu2, 2);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "ddp_backend", -1));
    json_decref(f);

    /* one process: nothing to reduce */
    f = fixture_findings_ranks(DEV_H100, GLOO_HEADER(1), gpu2, 1);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "ddp_backend", -1));
    json_decref(f);
}

int main(void)
{
    fixture_init();
    RUN(test_communication_heavy);
    RUN(test_comm_not_overlapped);
    RUN(test_straggler);
    RUN(test_use_ddp_not_dp);
    RUN(test_ddp_backend);
    fixture_done();
    return harness_done("rules_dist");
}

/* rules_model_test — the rules about how the model's work is written, on
 * crafted traces, each made to fire and not to fire: optimizer_dominated
 * (an unfused optimizer step owning the GPU) and unfused_attention
 * (softmax and batched matmuls instead of a fused attention kernel). Times
 * are µs as in real traces. */
#include "rules_fixture.h"

#include <math.h>

static struct fixture_trace tb;

/* Two 1000 µs steps: a forward GEMM of gemm_us, then an
 * Optimizer.step#AdamW.step span in which `op` launches 4 kernels of
 * opt_us each. */
static void optimizer_trace(double gemm_us, double opt_us, const char *op)
{
    int corr = 1;
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        double t0 = s * 1000.0, g = t0 + 20;
        fixture_step(&tb, s + 1, t0, 1000);
        fixture_host(&tb, 1, "cpu_op", "aten::mm", t0 + 2, 10, 0);
        fixture_launch(&tb, corr++, t0 + 4, 4, "ampere_sgemm_128x64_nn", g, gemm_us);
        g += gemm_us;
        fixture_host(&tb, 1, "user_annotation", "Optimizer.step#AdamW.step", t0 + 20, 100, 0);
        fixture_host(&tb, 1, "cpu_op", op, t0 + 22, 80, 0);
        for (int k = 0; k < 4; k++, g += opt_us)
            fixture_launch(&tb, corr++, t0 + 24 + 10 * k, 5,
                           "void at::native::multi_tensor_apply_kernel<TensorListMetadata<2>, BinaryOpListAlphaFunctor>",
                           g, opt_us);
    }
}

static void test_optimizer_fires(void)
{
    optimizer_trace(100, 50, "aten::_foreach_mul_"); /* 200 of 300 µs per step */
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *t = fixture_get(f, "optimizer_dominated", 0);
    if (!t) fixture_dump(f);
    REQUIRE(t != NULL);
    CHECK(fabs(fixture_evnum(t, "optimizer_pct") - 200.0 / 3) < 0.01);
    CHECK(fabs(fixture_evnum(t, "optimizer_kernel_us") - 400.0) < 0.01);
    CHECK_EQ_INT((long long)fixture_evnum(t, "kernels"), 8);
    CHECK_EQ_STR(fixture_evstr(t, "optimizer"), "AdamW");
    CHECK(json_is_true(json_object_get(json_object_get(t, "evidence"), "foreach")));
    CHECK(fabs(fixture_estimate(t) - 100.0) < 0.01); /* half of 200 µs per step */
    CHECK(strstr(fixture_str(t, "snippet"), "fused=True") != NULL);
    CHECK(fixture_has_line(t, "Optimizer.step (AdamW): 400 µs of 600 µs GPU kernel time (67 %) in 8 kernels"));
    json_decref(f);
}

static void test_optimizer_quiet(void)
{
    /* 40 of 440 µs: a GEMM-heavy step */
    optimizer_trace(400, 10, "aten::_foreach_mul_");
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "optimizer_dominated", -1));
    json_decref(f);
    /* already fused: nothing to advise, whatever its share */
    optimizer_trace(100, 50, "aten::_fused_adamw_");
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "optimizer_dominated", -1));
    json_decref(f);
}

/* Two 1000 µs steps: bmm (scores), softmax, bmm (values) of attn_us each
 * and an MLP GEMM of mlp_us; flash: a fused attention kernel as well. */
static void attention_trace(double attn_us, double mlp_us, int with_bmm, int flash)
{
    static const char *const gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel";
    int corr = 1;
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        double t0 = s * 1000.0, g = t0 + 50;
        fixture_step(&tb, s + 1, t0, 1000);
        const char *ops[3] = { with_bmm ? "aten::bmm" : "aten::mul", "aten::_softmax", with_bmm ? "aten::bmm" : "aten::mul" };
        const char *ks[3] = { gemm, "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>",
                              gemm };
        for (int k = 0; k < 3; k++, g += attn_us) {
            fixture_host(&tb, 1, "cpu_op", ops[k], t0 + 2 + 10 * k, 8, 0);
            fixture_launch(&tb, corr++, t0 + 3 + 10 * k, 4, ks[k], g, attn_us);
        }
        fixture_host(&tb, 1, "cpu_op", "aten::mm", t0 + 32, 8, 0);
        fixture_launch(&tb, corr++, t0 + 33, 4, gemm, g, mlp_us);
        g += mlp_us;
        if (flash) {
            fixture_host(&tb, 1, "cpu_op", "aten::_scaled_dot_product_flash_attention", t0 + 42, 8, 0);
            fixture_launch(&tb, corr++, t0 + 43, 4, "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits>", g,
                           20);
        }
    }
}

static void test_attention_fires(void)
{
    attention_trace(100, 300, 1, 0); /* 300 of 600 µs */
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *t = fixture_get(f, "unfused_attention", 0);
    if (!t) fixture_dump(f);
    REQUIRE(t != NULL);
    CHECK(fabs(fixture_evnum(t, "attention_pct") - 50.0) < 0.01);
    CHECK(fabs(fixture_evnum(t, "softmax_us") - 200.0) < 0.01);
    CHECK(fabs(fixture_evnum(t, "bmm_us") - 400.0) < 0.01);
    CHECK(fabs(fixture_estimate(t) - 150.0) < 0.01); /* half of 300 µs per step */
    CHECK(strstr(fixture_str(t, "snippet"), "scaled_dot_product_attention") != NULL);
    json_decref(f);
}

static void test_attention_quiet(void)
{
    /* a fused kernel in the trace: the softmax is somewhere else */
    attention_trace(100, 300, 1, 1);
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "unfused_attention", -1));
    json_decref(f);
    /* a softmax without batched matmuls is not attention */
    attention_trace(100, 300, 0, 0);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "unfused_attention", -1));
    json_decref(f);
    /* 30 of 930 µs: under 10 % */
    attention_trace(10, 900, 1, 0);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "unfused_attention", -1));
    json_decref(f);
}

/* deviceProperties of a 32 GB V100 (compute capability 7.0). */
#define DEV_V100                                                                                        \
    "[{\"id\":0,\"name\":\"Tesla V100-SXM2-32GB\",\"totalGlobalMem\":34089730048,\"computeMajor\":7,"  \
    "\"computeMinor\":0,\"numSms\":80}]"

/* Two 1000 µs steps of FP32 SIMT GEMMs (600 µs of each), with a backward
 * pass (an autograd node) or without (inference). */
static void matmul_trace(int training)
{
    int corr = 1;
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        double t0 = s * 1000.0;
        fixture_step(&tb, s + 1, t0, 1000);
        fixture_host(&tb, 1, "cpu_op", "aten::mm", t0 + 2, 10, 0);
        fixture_launch(&tb, corr++, t0 + 4, 4, "volta_sgemm_128x64_nn", t0 + 20, 300);
        fixture_host(&tb, 1, "cpu_op", training ? "autograd::engine::evaluate_function: MmBackward0" : "aten::mm",
                     t0 + 30, 10, 0);
        fixture_launch(&tb, corr++, t0 + 32, 4, "volta_sgemm_128x64_nn", t0 + 330, 300);
    }
}

/* The AMP advice follows the GPU and the context: bf16 (and FP8 on
 * Hopper) for training on an H100, fp16 + GradScaler on a V100, and no
 * loss scaling, optimizer or backward in an inference trace. */
static void test_amp_context(void)
{
    static const struct {
        const char *dev;
        int training;
        const char *has[2], *hasnt[2];
    } cases[] = {
        { DEV_H100, 1, { "bfloat16", "FP8" }, { "GradScaler", "inference_mode" } },
        { DEV_V100, 1, { "GradScaler", "float16" }, { "bf16", "FP8" } },
        { DEV_V100, 0, { "half()", "inference_mode" }, { "GradScaler", "backward" } },
        { DEV_H100, 0, { "bfloat16", "inference_mode" }, { "GradScaler", "backward" } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        matmul_trace(cases[i].training);
        json_t *f = fixture_findings(cases[i].dev, tb.s);
        REQUIRE(f != NULL);
        json_t *t = fixture_get(f, "enable_amp", 0);
        if (!t) fixture_dump(f);
        REQUIRE(t != NULL);
        char all[4096];
        snprintf(all, sizeof all, "%s\n%s", fixture_str(t, "advice"), fixture_str(t, "snippet"));
        for (int k = 0; k < 2; k++) {
            if (!strstr(all, cases[i].has[k])) printf("case %zu lacks %s:\n%s\n", i, cases[i].has[k], all);
            CHECK(strstr(all, cases[i].has[k]) != NULL);
            CHECK(strstr(all, cases[i].hasnt[k]) == NULL);
        }
        json_decref(f);
    }
}

/* Two H100s on one host, ids 0 and 1. */
#define DEV_2H100                                                                                       \
    "[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"totalGlobalMem\":85029158912,\"computeMajor\":9,"  \
    "\"computeMinor\":0,\"numSms\":132},{\"id\":1,\"name\":\"NVIDIA H100 80GB HBM3\","                   \
    "\"totalGlobalMem\":85029158912,\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}]"

/* One 1000 µs step of a rank in process pid launching a 500 µs kernel on
 * GPU dev. Owned by caller. */
static char *rank_events(int pid, int dev)
{
    struct fixture_trace t = { 0 };
    fixture_trace_add(&t, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":%d,"
                          "\"tid\":1,\"ts\":0,\"dur\":1000,\"args\":{}}", pid);
    fixture_trace_add(&t, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":%d,\"tid\":1,\"ts\":2,"
                          "\"dur\":10,\"args\":{}}", pid);
    fixture_trace_add(&t, "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":%d,"
                          "\"tid\":1,\"ts\":4,\"dur\":4,\"args\":{\"correlation\":1}}", pid);
    fixture_trace_add(&t, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_xmma_gemm_bf16bf16_kernel\",\"pid\":%d,"
                          "\"tid\":7,\"ts\":20,\"dur\":500,\"args\":{\"device\":%d,\"stream\":7,\"correlation\":1}}",
                      dev, dev);
    return t.s;
}

static json_t *two_ranks(int pid0, int dev0, int pid1, int dev1)
{
    char *ev[2] = { rank_events(pid0, dev0), rank_events(pid1, dev1) };
    json_t *f = fixture_findings_ranks(DEV_2H100, "", (const char *const *)ev, 2);
    free(ev[0]);
    free(ev[1]);
    return f;
}

/* shared_gpu: two processes of one host on one GPU; not two hosts' GPU 0,
 * not two GPUs of one host. */
static void test_shared_gpu(void)
{
    json_t *f = two_ranks(4100, 0, 4101, 0);
    REQUIRE(f != NULL);
    json_t *t = fixture_get(f, "shared_gpu", -1);
    if (!t) fixture_dump(f);
    REQUIRE(t != NULL);
    CHECK_EQ_STR(fixture_str(t, "severity"), "high");
    CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(t, "evidence"), "ranks")), 2);
    CHECK(fixture_has_line(t, "Ranks 0, 1 all run on GPU 0 (NVIDIA H100 80GB HBM3, 79.2 GiB)"));
    CHECK(strstr(fixture_str(t, "snippet"), "LOCAL_RANK") != NULL);
    json_decref(f);

    f = two_ranks(4100, 0, 912345, 0); /* unrelated process ids: two hosts */
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "shared_gpu", -1));
    json_decref(f);
    f = two_ranks(4100, 0, 4101, 1); /* one host, one GPU each */
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "shared_gpu", -1));
    json_decref(f);
}

/* Two 20 ms steps, each with n all-reduces of dur_us, back to back. */
static void collectives_trace(int n, double dur_us)
{
    int corr = 1;
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        double t0 = s * 20000.0;
        fixture_step(&tb, s + 1, t0, 20000);
        for (int k = 0; k < n; k++)
            fixture_launch(&tb, corr++, t0 + 10 + k * 2, 1,
                           "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                           t0 + 100 + k * dur_us, dur_us);
    }
}

static void test_small_collectives(void)
{
    collectives_trace(60, 100); /* 6 ms of 20 ms */
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *t = fixture_get(f, "many_small_collectives", 0);
    if (!t) fixture_dump(f);
    REQUIRE(t != NULL);
    CHECK(fabs(fixture_evnum(t, "per_step") - 60) < 0.01);
    CHECK(fabs(fixture_evnum(t, "mean_us") - 100) < 0.01);
    CHECK(fabs(fixture_estimate(t) - 3000) < 0.5); /* half of 6 ms */
    CHECK(strstr(fixture_str(t, "snippet"), "bucket_cap_mb") != NULL);
    json_decref(f);
    collectives_trace(20, 100); /* few */
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "many_small_collectives", -1));
    json_decref(f);
    collectives_trace(60, 300); /* not small: bandwidth-bound */
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "many_small_collectives", -1));
    json_decref(f);
}

/* A host-to-device copy on device 0, stream `stream`, launched by a
 * cudaMemcpyAsync with correlation id corr. */
static void htod(int corr, double call_ts, int stream, double ts, double dur)
{
    fixture_host(&tb, 1, "cuda_runtime", "cudaMemcpyAsync", call_ts, 3, corr);
    fixture_trace_add(&tb,
                      "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pinned -> Device)\",\"pid\":0,"
                      "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"device\":0,\"stream\":%d,\"correlation\":%d,"
                      "\"bytes\":8388608}}",
                      stream, ts, dur, stream, corr);
}

/* Two 1000 µs steps: a 150 µs input copy, then 600 µs of kernels on the
 * compute stream (7). where: 0 the copy is on stream 7 before the
 * kernels; 1 on stream 8 before them (stream 7 idle); 2 on stream 8
 * during them (hidden). */
static void copy_trace(int where)
{
    int corr = 1;
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        double t0 = s * 1000.0;
        fixture_step(&tb, s + 1, t0, 1000);
        double c0 = where == 2 ? t0 + 300 : t0 + 20;
        htod(corr++, t0 + 2, where == 0 ? 7 : 8, c0, 150);
        fixture_host(&tb, 1, "cpu_op", "aten::mm", t0 + 10, 10, 0);
        fixture_launch(&tb, corr++, t0 + 12, 4, "sm90_xmma_gemm_bf16bf16_bf16f32_kernel", t0 + 200, 600);
    }
}

static void test_copy_not_overlapped(void)
{
    for (int where = 0; where < 2; where++) {
        copy_trace(where);
        json_t *f = fixture_findings(DEV_H100, tb.s);
        REQUIRE(f != NULL);
        json_t *t = fixture_get(f, "copy_not_overlapped", 0);
        if (!t) fixture_dump(f);
        REQUIRE(t != NULL);
        CHECK(fabs(fixture_evnum(t, "unhidden_us") - 150) < 0.01);
        CHECK(fabs(fixture_evnum(t, "step_pct") - 15) < 0.01);
        CHECK_EQ_STR(fixture_severity(t), "high");
        CHECK(fabs(fixture_estimate(t) - 150) < 0.01);
        CHECK(strstr(fixture_str(t, "snippet"), "non_blocking=True") != NULL);
        CHECK(fixture_has_line(t, "queued on the compute stream itself") == (where == 0));
        json_decref(f);
    }
    copy_trace(2); /* on a side stream under the kernels: hidden */
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "copy_not_overlapped", -1));
    json_decref(f);
}

int main(void)
{
    fixture_init();
    RUN(test_optimizer_fires);
    RUN(test_optimizer_quiet);
    RUN(test_attention_fires);
    RUN(test_attention_quiet);
    RUN(test_amp_context);
    RUN(test_shared_gpu);
    RUN(test_small_collectives);
    RUN(test_copy_not_overlapped);
    fixture_done();
    free(tb.s);
    return harness_done("rules_model");
}

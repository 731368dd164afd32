/* rules_host_test — the host-side rules on crafted traces, each made to
 * fire and not to fire: excessive_host_sync (blocking calls that wait for
 * the GPU and leave it idle), pageable_memcpy (copies staged through
 * pageable host memory) and layout_transposes (NCHW<->NHWC conversion
 * kernels). The traces are built with printf-style helpers because their
 * times follow from loops; times are µs as in real traces. */
#include "rules_fixture.h"

#include <math.h>

/* ---------------------------------------------------------------------- */
/* Trace builder                                                           */
/* ---------------------------------------------------------------------- */

static char tb_buf[1 << 17];
static size_t tb_len;

static void tb_reset(void)
{
    tb_len = 0;
    tb_buf[0] = '\0';
}

static void tb_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tb_add(const char *fmt, ...)
{
    va_list ap;
    if (tb_len) tb_len += (size_t)snprintf(tb_buf + tb_len, sizeof tb_buf - tb_len, ",");
    va_start(ap, fmt);
    tb_len += (size_t)vsnprintf(tb_buf + tb_len, sizeof tb_buf - tb_len, fmt, ap);
    va_end(ap);
    if (tb_len >= sizeof tb_buf) abort(); /* a test trace outgrew the buffer */
}

/* A host event on the main thread; args: JSON members or "". */
static void tb_cpu(const char *cat, const char *name, long ts, long dur, const char *args)
{
    tb_add("{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":%ld,\"args\":{%s}}",
           cat, name, ts, dur, args);
}

/* A GPU event on device 0, stream 7. */
static void tb_gpu(const char *cat, const char *name, long ts, long dur, const char *args)
{
    tb_add("{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%ld,\"dur\":%ld,"
           "\"args\":{\"device\":0,\"stream\":7%s%s}}",
           cat, name, ts, dur, args[0] ? "," : "", args);
}

static void tb_step(int n, long ts, long dur)
{
    char name[32];
    snprintf(name, sizeof name, "ProfilerStep#%d", n);
    tb_cpu("user_annotation", name, ts, dur, "");
}

/* A runtime call and the GPU work it launched, joined by correlation id. */
static void tb_launch(const char *call, long corr, long ts, long dur, const char *gcat, const char *gname, long gts,
                      long gdur, const char *gargs)
{
    char a[160];
    snprintf(a, sizeof a, "\"correlation\":%ld", corr);
    tb_cpu("cuda_runtime", call, ts, dur, a);
    snprintf(a, sizeof a, "\"correlation\":%ld%s%s", corr, gargs[0] ? "," : "", gargs);
    tb_gpu(gcat, gname, gts, gdur, a);
}

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Does some evidence line contain s? */
static int has_line(json_t *f, const char *s)
{
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(json_object_get(f, "evidence"), "lines"), i, l)
        if (strstr(json_string_value(l), s)) return 1;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* excessive_host_sync                                                     */
/* ---------------------------------------------------------------------- */

/* Two 400 µs steps; in each, `items` times: a 20 µs kernel, then .item()
 * (aten::item > aten::_local_scalar_dense > cudaMemcpyAsync DtoH +
 * cudaStreamSynchronize) which waits for the kernel and the copy; the next
 * kernel starts 17 µs after the copy ends. So each .item() blocks the host
 * 18 µs and leaves the GPU idle 17 µs. */
static void host_sync_trace(int items)
{
    long corr = 1;
    tb_reset();
    for (int s = 0; s < 2; s++) {
        long t0 = s * 400;
        tb_step(s + 1, t0, 400);
        for (int i = 0; i < items; i++) {
            long x = t0 + 10 + i * 40;
            tb_launch("cudaLaunchKernel", corr++, x, 5, "kernel", "vectorized_elementwise_kernel", x + 6, 20, "");
            tb_cpu("cpu_op", "aten::item", x + 10, 30, "");
            tb_cpu("cpu_op", "aten::_local_scalar_dense", x + 11, 28, "");
            tb_launch("cudaMemcpyAsync", corr++, x + 12, 4, "gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", x + 27, 2,
                      "\"bytes\":4");
            tb_cpu("cuda_runtime", "cudaStreamSynchronize", x + 17, 13, "");
        }
        /* the last GPU work of the step, launched after the last .item() */
        long x = t0 + 10 + items * 40;
        tb_launch("cudaLaunchKernel", corr++, x, 5, "kernel", "vectorized_elementwise_kernel", x + 6, 20, "");
    }
}

static void test_host_sync_fires(void)
{
    host_sync_trace(6);
    json_t *f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    json_t *h = fixture_get(f, "excessive_host_sync", 0);
    if (!h) fixture_dump(f);
    REQUIRE(h != NULL);
    json_t *ev = json_object_get(h, "evidence");
    CHECK(fabs(num(ev, "calls_per_step") - 6.0) < 1e-9);
    CHECK_EQ_INT((long long)num(ev, "calls"), 12);
    /* 18 µs blocked and 17 µs of GPU idle per .item() */
    CHECK(fabs(num(ev, "blocked_us") - 6 * 18.0) < 0.01);
    CHECK(fabs(num(ev, "idle_us") - 6 * 17.0) < 0.01);
    CHECK(fabs(num(h, "saving_us") - 6 * 17.0) < 0.01);
    /* 102 µs of a 400 µs step: above twice the 10 % threshold */
    CHECK_EQ_STR(str(h, "severity"), "high");
    json_t *op = json_array_get(json_object_get(ev, "by_op"), 0);
    CHECK_EQ_STR(str(op, "op"), "aten::item (via aten::_local_scalar_dense)");
    CHECK_EQ_STR(str(op, "call"), "blocking copy (cudaMemcpyAsync + cudaStreamSynchronize)");
    CHECK(has_line(h, "6.0 host-blocking calls per step waited for the GPU (12 in 2 steps)"));
    CHECK(has_line(h, "aten::item (via aten::_local_scalar_dense)"));
    CHECK(has_line(h, "GPU left idle after them: 102 µs per step"));
    CHECK(strncmp(str(h, "link"), "view=timeline&rank=0&start=", 27) == 0);
    CHECK(strstr(str(h, "snippet"), ".item()") != NULL);
    CHECK(strstr(str(h, "advice"), "non_blocking=True") != NULL);
    json_decref(f);

    /* the count alone: 5 per step above a threshold of 4, while the idle
     * time (85 of 400 µs) is under a threshold raised to 50 % */
    struct config keep = fixture_cfg;
    struct err e;
    REQUIRE(config_set(&fixture_cfg, "rule_sync_pct", "50", &e) == 0);
    host_sync_trace(5);
    f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    CHECK(fixture_has(f, "excessive_host_sync", 0));
    json_decref(f);
    /* and with the count threshold at 5 it is quiet */
    REQUIRE(config_set(&fixture_cfg, "rule_sync_per_step", "5", &e) == 0);
    f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "excessive_host_sync", -1));
    json_decref(f);
    fixture_cfg = keep;
}

/* A cudaMemcpyAsync into pageable host memory blocks by itself (the
 * driver stages it synchronously): six such copies per step, with no sync
 * after them, still count; the same copies into pinned memory do not. */
static void pageable_copy_trace(const char *copy_name)
{
    long corr = 1;
    tb_reset();
    for (int s = 0; s < 2; s++) {
        long t0 = s * 400;
        tb_step(s + 1, t0, 400);
        for (int i = 0; i < 6; i++) {
            long x = t0 + 10 + i * 40;
            tb_launch("cudaLaunchKernel", corr++, x, 5, "kernel", "vectorized_elementwise_kernel", x + 6, 20, "");
            tb_cpu("cpu_op", "aten::to", x + 10, 22, "");
            tb_launch("cudaMemcpyAsync", corr++, x + 12, 18, "gpu_memcpy", copy_name, x + 27, 2, "\"bytes\":4");
        }
        long x = t0 + 10 + 6 * 40;
        tb_launch("cudaLaunchKernel", corr++, x, 5, "kernel", "vectorized_elementwise_kernel", x + 6, 20, "");
    }
}

static void test_host_sync_pageable_copy(void)
{
    pageable_copy_trace("Memcpy DtoH (Device -> Pageable)");
    json_t *f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    json_t *h = fixture_get(f, "excessive_host_sync", 0);
    if (!h) fixture_dump(f);
    REQUIRE(h != NULL);
    CHECK(fabs(num(json_object_get(h, "evidence"), "calls_per_step") - 6.0) < 1e-9);
    json_decref(f);

    pageable_copy_trace("Memcpy DtoH (Device -> Pinned)");
    f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "excessive_host_sync", -1));
    json_decref(f);
}

/* Syncs that find nothing queued cost nothing, and a long wait on a busy
 * GPU (a GPU-bound loop's torch.cuda.synchronize() at the step's end)
 * costs only the short refill gap: neither fires. */
static void test_host_sync_quiet(void)
{
    long corr = 1;
    tb_reset();
    for (int s = 0; s < 2; s++) {
        long t0 = s * 400;
        tb_step(s + 1, t0, 400);
        tb_launch("cudaLaunchKernel", corr++, t0 + 5, 5, "kernel", "k", t0 + 12, 20, "");
        /* eight syncs after the kernel has finished: they return at once */
        for (int i = 0; i < 8; i++) tb_cpu("cuda_runtime", "cudaEventSynchronize", t0 + 100 + i * 20, 3, "");
    }
    json_t *f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "excessive_host_sync", -1));
    json_decref(f);

    /* GPU-bound: a 970 µs kernel, the host waits 955 µs for it in
     * cudaDeviceSynchronize; the next step's kernel starts 30 µs after it
     * ends (3 % of the step) */
    tb_reset();
    for (int s = 0; s < 3; s++) {
        long t0 = s * 1000;
        tb_step(s + 1, t0, 1000);
        tb_launch("cudaLaunchKernel", corr++, t0 + 5, 5, "kernel", "gemm", t0 + 12, 970, "");
        tb_cpu("cuda_runtime", "cudaDeviceSynchronize", t0 + 30, 955, "");
    }
    f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "excessive_host_sync", -1));
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* pageable_memcpy                                                         */
/* ---------------------------------------------------------------------- */

/* Two 1000 µs steps: x.to("cuda") of 4 MiB from pageable (or pinned)
 * memory (the host call 300 µs, the DMA 200 µs inside it), then a kernel
 * whose launch takes 10 µs (what queueing work costs this host). */
static void copy_trace(const char *copy_name, long bytes, long call_dur, long dma_dur)
{
    char args[64];
    long corr = 1;
    snprintf(args, sizeof args, "\"bytes\":%ld", bytes);
    tb_reset();
    for (int s = 0; s < 2; s++) {
        long t0 = s * 1000;
        tb_step(s + 1, t0, 1000);
        tb_cpu("cpu_op", "aten::to", t0 + 5, call_dur + 10, "");
        tb_cpu("cpu_op", "aten::copy_", t0 + 7, call_dur + 6, "");
        tb_launch("cudaMemcpyAsync", corr++, t0 + 10, call_dur, "gpu_memcpy", copy_name, t0 + 10 + call_dur - dma_dur - 5,
                  dma_dur, args);
        tb_launch("cudaLaunchKernel", corr++, t0 + call_dur + 50, 10, "kernel", "k", t0 + call_dur + 65, 100, "");
    }
}

static void test_pageable_fires(void)
{
    copy_trace("Memcpy HtoD (Pageable -> Device)", 4194304, 300, 200);
    json_t *f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    json_t *p = fixture_get(f, "pageable_memcpy", 0);
    if (!p) fixture_dump(f);
    REQUIRE(p != NULL);
    json_t *ev = json_object_get(p, "evidence");
    CHECK(fabs(num(ev, "bytes_per_step") - 4194304.0) < 0.5);
    CHECK(fabs(num(ev, "copies_per_step") - 1.0) < 1e-9);
    /* the host is held 300 µs, 10 of which any queued copy costs */
    CHECK(fabs(num(ev, "time_us") - 290.0) < 0.01);
    CHECK(fabs(num(p, "saving_us") - 290.0) < 0.01);
    CHECK(fabs(num(json_object_get(ev, "htod"), "gpu_us") - 200.0) < 0.01);
    CHECK(json_object_get(ev, "dtoh") == NULL);
    /* 29 % of the step: ten times the 1 % threshold and more */
    CHECK_EQ_STR(str(p, "severity"), "high");
    CHECK_EQ_STR(str(ev, "op"), "aten::to");
    CHECK(has_line(p, "4.0 MiB per step copied through pageable host memory"));
    CHECK(has_line(p, "host to device: 4.0 MiB per step"));
    CHECK(strncmp(str(p, "link"), "view=timeline&rank=0&start=", 27) == 0);
    CHECK(strstr(str(p, "snippet"), "pin_memory=True") != NULL);
    CHECK(strstr(str(p, "snippet"), "non_blocking=True") != NULL);
    json_decref(f);

    /* by volume alone: 2 MiB per step whose copy costs nothing beyond queueing */
    copy_trace("Memcpy HtoD (Pageable -> Device)", 2097152, 10, 2);
    f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    p = fixture_get(f, "pageable_memcpy", 0);
    CHECK(p != NULL);
    if (p) CHECK_EQ_STR(str(p, "severity"), "low");
    json_decref(f);
}

static void test_pageable_quiet(void)
{
    /* the same copy from pinned memory */
    copy_trace("Memcpy HtoD (Pinned -> Device)", 4194304, 300, 200);
    json_t *f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "pageable_memcpy", -1));
    json_decref(f);

    /* pageable, but 64 KiB taking no time beyond queueing */
    copy_trace("Memcpy HtoD (Pageable -> Device)", 65536, 12, 3);
    f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "pageable_memcpy", -1));
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* layout_transposes                                                       */
/* ---------------------------------------------------------------------- */

#define NCHW2NHWC "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, float*)"
#define NHWC2NCHW "void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, float const*, float*)"
#define CONV_NHWC "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_execute_kernel"

/* Two 200 µs steps; aten::cudnn_convolution launches an NCHW->NHWC
 * conversion, the convolution, and an NHWC->NCHW conversion. */
static void conv_trace(long conv_us, long in_us, long out_us)
{
    long corr = 1;
    tb_reset();
    for (int s = 0; s < 2; s++) {
        long t0 = s * 200, g = t0 + 20;
        tb_step(s + 1, t0, 200);
        tb_cpu("cpu_op", "aten::cudnn_convolution", t0 + 2, 30, "");
        tb_launch("cudaLaunchKernel", corr++, t0 + 4, 4, "kernel", NCHW2NHWC, g, in_us, "");
        tb_launch("cudaLaunchKernel", corr++, t0 + 10, 4, "kernel", CONV_NHWC, g + in_us, conv_us, "");
        tb_launch("cudaLaunchKernel", corr++, t0 + 16, 4, "kernel", NHWC2NCHW, g + in_us + conv_us, out_us, "");
    }
}

static void test_layout_transposes(void)
{
    conv_trace(60, 20, 10);
    json_t *f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    json_t *t = fixture_get(f, "layout_transposes", 0);
    if (!t) fixture_dump(f);
    REQUIRE(t != NULL);
    json_t *ev = json_object_get(t, "evidence");
    /* 30 of 90 µs of kernel time */
    CHECK(fabs(num(ev, "transpose_pct") - 100.0 / 3) < 0.01);
    CHECK(fabs(num(ev, "transpose_us") - 60.0) < 0.01);
    CHECK_EQ_INT((long long)num(ev, "calls"), 4);
    CHECK_EQ_STR(str(t, "severity"), "high");
    CHECK(fabs(num(t, "saving_us") - 30.0) < 0.01); /* a third of each step's 90 µs of kernels */
    CHECK_EQ_STR(str(t, "link"), "view=kernels&rank=0&q=nchwToNhwc");
    CHECK_EQ_STR(str(json_array_get(json_object_get(ev, "by_op"), 0), "op"), "aten::cudnn_convolution");
    CHECK(has_line(t, "NCHW<->NHWC conversion kernels: 60 µs of 180 µs kernel time (33.3 %), 4 calls"));
    CHECK(strstr(str(t, "snippet"), "channels_last") != NULL);
    json_decref(f);

    /* most of the conversion time coming back to NCHW: the link says so */
    conv_trace(60, 5, 25);
    f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    t = fixture_get(f, "layout_transposes", 0);
    REQUIRE(t != NULL);
    CHECK_EQ_STR(str(t, "link"), "view=kernels&rank=0&q=nhwcToNchw");
    json_decref(f);

    /* 5 of 205 µs (2.4 %): under the 5 % threshold */
    conv_trace(200, 3, 2);
    f = fixture_findings(DEV_H100, tb_buf);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "layout_transposes", -1));
    json_decref(f);
}

int main(void)
{
    fixture_init();
    RUN(test_host_sync_fires);
    RUN(test_host_sync_quiet);
    RUN(test_host_sync_pageable_copy);
    RUN(test_pageable_fires);
    RUN(test_pageable_quiet);
    RUN(test_layout_transposes);
    fixture_done();
    return harness_done("rules_host");
}

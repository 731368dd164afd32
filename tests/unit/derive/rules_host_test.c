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

static struct fixture_trace tb;

/* A host event on the main thread; args: JSON members or "". */
static void tb_cpu(const char *cat, const char *name, long ts, long dur, const char *args)
{
    fixture_trace_add(&tb,
                      "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":%ld,"
                      "\"args\":{%s}}",
                      cat, name, ts, dur, args);
}

/* A GPU event on device 0, stream 7. */
static void tb_gpu(const char *cat, const char *name, long ts, long dur, const char *args)
{
    fixture_trace_add(&tb,
                      "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%ld,\"dur\":%ld,"
                      "\"args\":{\"device\":0,\"stream\":7%s%s}}",
                      cat, name, ts, dur, args[0] ? "," : "", args);
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
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        long t0 = s * 400;
        fixture_step(&tb, s + 1, t0, 400);
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
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *h = fixture_get(f, "excessive_host_sync", 0);
    if (!h) fixture_dump(f);
    REQUIRE(h != NULL);
    json_t *ev = json_object_get(h, "evidence");
    CHECK(fabs(fixture_num(ev, "calls_per_step") - 6.0) < 1e-9);
    CHECK_EQ_INT((long long)fixture_num(ev, "calls"), 12);
    /* 18 µs blocked and 17 µs of GPU idle per .item() */
    CHECK(fabs(fixture_num(ev, "blocked_us") - 6 * 18.0) < 0.01);
    CHECK(fabs(fixture_num(ev, "idle_us") - 6 * 17.0) < 0.01);
    CHECK(fabs(fixture_num(h, "saving_us") - 6 * 17.0) < 0.01);
    /* 102 µs of a 400 µs step: above twice the 10 % threshold */
    CHECK_EQ_STR(fixture_str(h, "severity"), "high");
    json_t *op = json_array_get(json_object_get(ev, "by_op"), 0);
    CHECK_EQ_STR(fixture_str(op, "op"), "aten::item (via aten::_local_scalar_dense)");
    CHECK_EQ_STR(fixture_str(op, "call"), "blocking copy (cudaMemcpyAsync + cudaStreamSynchronize)");
    CHECK(fixture_has_line(h, "6.0 host-blocking calls per step waited for the GPU (12 in 2 steps)"));
    CHECK(fixture_has_line(h, "aten::item (via aten::_local_scalar_dense)"));
    CHECK(fixture_has_line(h, "GPU left idle after them: 102 µs per step"));
    CHECK(strncmp(fixture_str(h, "link"), "view=timeline&rank=0&start=", 27) == 0);
    CHECK(strstr(fixture_str(h, "snippet"), ".item()") != NULL);
    CHECK(strstr(fixture_str(h, "advice"), "non_blocking=True") != NULL);
    json_decref(f);

    /* the count alone: 5 per step above a threshold of 4, while the idle
     * time (85 of 400 µs) is under a threshold raised to 50 % */
    struct config keep = fixture_cfg;
    struct err e;
    REQUIRE(config_set(&fixture_cfg, "rule_sync_pct", "50", &e) == 0);
    host_sync_trace(5);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(fixture_has(f, "excessive_host_sync", 0));
    json_decref(f);
    /* and with the count threshold at 5 it is quiet */
    REQUIRE(config_set(&fixture_cfg, "rule_sync_per_step", "5", &e) == 0);
    f = fixture_findings(DEV_H100, tb.s);
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
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        long t0 = s * 400;
        fixture_step(&tb, s + 1, t0, 400);
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
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *h = fixture_get(f, "excessive_host_sync", 0);
    if (!h) fixture_dump(f);
    REQUIRE(h != NULL);
    CHECK(fabs(fixture_num(json_object_get(h, "evidence"), "calls_per_step") - 6.0) < 1e-9);
    json_decref(f);

    pageable_copy_trace("Memcpy DtoH (Device -> Pinned)");
    f = fixture_findings(DEV_H100, tb.s);
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
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        long t0 = s * 400;
        fixture_step(&tb, s + 1, t0, 400);
        tb_launch("cudaLaunchKernel", corr++, t0 + 5, 5, "kernel", "k", t0 + 12, 20, "");
        /* eight syncs after the kernel has finished: they return at once */
        for (int i = 0; i < 8; i++) tb_cpu("cuda_runtime", "cudaEventSynchronize", t0 + 100 + i * 20, 3, "");
    }
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "excessive_host_sync", -1));
    json_decref(f);

    /* GPU-bound: a 970 µs kernel, the host waits 955 µs for it in
     * cudaDeviceSynchronize; the next step's kernel starts 30 µs after it
     * ends (3 % of the step) */
    fixture_trace_reset(&tb);
    for (int s = 0; s < 3; s++) {
        long t0 = s * 1000;
        fixture_step(&tb, s + 1, t0, 1000);
        tb_launch("cudaLaunchKernel", corr++, t0 + 5, 5, "kernel", "gemm", t0 + 12, 970, "");
        tb_cpu("cuda_runtime", "cudaDeviceSynchronize", t0 + 30, 955, "");
    }
    f = fixture_findings(DEV_H100, tb.s);
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
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        long t0 = s * 1000;
        fixture_step(&tb, s + 1, t0, 1000);
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
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *p = fixture_get(f, "pageable_memcpy", 0);
    if (!p) fixture_dump(f);
    REQUIRE(p != NULL);
    json_t *ev = json_object_get(p, "evidence");
    CHECK(fabs(fixture_num(ev, "bytes_per_step") - 4194304.0) < 0.5);
    CHECK(fabs(fixture_num(ev, "copies_per_step") - 1.0) < 1e-9);
    /* the host is held 300 µs, 10 of which any queued copy costs */
    CHECK(fabs(fixture_num(ev, "time_us") - 290.0) < 0.01);
    CHECK(fabs(fixture_num(p, "saving_us") - 290.0) < 0.01);
    CHECK(fabs(fixture_num(json_object_get(ev, "htod"), "gpu_us") - 200.0) < 0.01);
    CHECK(json_object_get(ev, "dtoh") == NULL);
    /* 29 % of the step: ten times the 1 % threshold and more */
    CHECK_EQ_STR(fixture_str(p, "severity"), "high");
    CHECK_EQ_STR(fixture_str(ev, "op"), "aten::to");
    CHECK(fixture_has_line(p, "4.0 MiB per step copied through pageable host memory"));
    CHECK(fixture_has_line(p, "host to device: 4.0 MiB per step"));
    CHECK(strncmp(fixture_str(p, "link"), "view=timeline&rank=0&start=", 27) == 0);
    CHECK(strstr(fixture_str(p, "snippet"), "pin_memory=True") != NULL);
    CHECK(strstr(fixture_str(p, "snippet"), "non_blocking=True") != NULL);
    json_decref(f);

    /* by volume alone: 2 MiB per step whose copy costs nothing beyond queueing */
    copy_trace("Memcpy HtoD (Pageable -> Device)", 2097152, 10, 2);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    p = fixture_get(f, "pageable_memcpy", 0);
    CHECK(p != NULL);
    if (p) CHECK_EQ_STR(fixture_str(p, "severity"), "low");
    json_decref(f);
}

static void test_pageable_quiet(void)
{
    /* the same copy from pinned memory */
    copy_trace("Memcpy HtoD (Pinned -> Device)", 4194304, 300, 200);
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "pageable_memcpy", -1));
    json_decref(f);

    /* pageable, but 64 KiB taking no time beyond queueing */
    copy_trace("Memcpy HtoD (Pageable -> Device)", 65536, 12, 3);
    f = fixture_findings(DEV_H100, tb.s);
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
    fixture_trace_reset(&tb);
    for (int s = 0; s < 2; s++) {
        long t0 = s * 200, g = t0 + 20;
        fixture_step(&tb, s + 1, t0, 200);
        tb_cpu("cpu_op", "aten::cudnn_convolution", t0 + 2, 30, "");
        tb_launch("cudaLaunchKernel", corr++, t0 + 4, 4, "kernel", NCHW2NHWC, g, in_us, "");
        tb_launch("cudaLaunchKernel", corr++, t0 + 10, 4, "kernel", CONV_NHWC, g + in_us, conv_us, "");
        tb_launch("cudaLaunchKernel", corr++, t0 + 16, 4, "kernel", NHWC2NCHW, g + in_us + conv_us, out_us, "");
    }
}

static void test_layout_transposes(void)
{
    conv_trace(60, 20, 10);
    json_t *f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    json_t *t = fixture_get(f, "layout_transposes", 0);
    if (!t) fixture_dump(f);
    REQUIRE(t != NULL);
    json_t *ev = json_object_get(t, "evidence");
    /* 30 of 90 µs of kernel time */
    CHECK(fabs(fixture_num(ev, "transpose_pct") - 100.0 / 3) < 0.01);
    CHECK(fabs(fixture_num(ev, "transpose_us") - 60.0) < 0.01);
    CHECK_EQ_INT((long long)fixture_num(ev, "calls"), 4);
    CHECK_EQ_STR(fixture_severity(t), "high");
    CHECK(fabs(fixture_estimate(t) - 30.0) < 0.01); /* a third of each step's 90 µs of kernels */
    CHECK_EQ_STR(fixture_str(t, "link"), "view=kernels&rank=0&q=nchwToNhwc");
    CHECK_EQ_STR(fixture_str(json_array_get(json_object_get(ev, "by_op"), 0), "op"), "aten::cudnn_convolution");
    CHECK(fixture_has_line(t, "NCHW<->NHWC conversion kernels: 60 µs of 180 µs kernel time (33.3 %), 4 calls"));
    CHECK(strstr(fixture_str(t, "snippet"), "channels_last") != NULL);
    json_decref(f);

    /* most of the conversion time coming back to NCHW: the link says so */
    conv_trace(60, 5, 25);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    t = fixture_get(f, "layout_transposes", 0);
    REQUIRE(t != NULL);
    CHECK_EQ_STR(fixture_str(t, "link"), "view=kernels&rank=0&q=nhwcToNchw");
    json_decref(f);

    /* 5 of 205 µs (2.4 %): under the 5 % threshold */
    conv_trace(200, 3, 2);
    f = fixture_findings(DEV_H100, tb.s);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "layout_transposes", -1));
    json_decref(f);
}

/* ---------------------------------------------------------------------- */
/* Advice by framework: an Nsight Systems run                              */
/* ---------------------------------------------------------------------- */

/* An Nsight Systems SQLite export (the tables and columns import_nsys
 * reads) of three 1 ms iterations, NVTX "train_step" ranges: in each, a
 * cudaMemcpy of 8 MiB from pageable memory holds the host 390 µs, then a
 * 480 µs kernel. torch: an NVTX range "aten::copy_" around the copy, as
 * PyTorch under emit_nvtx writes. Times are ns. Returns the file's path
 * (owned by caller) or NULL. */
static char *nsys_copy_db(int torch)
{
    static int seq;
    struct fixture_trace rt = { 0 }, cp = { 0 }, k = { 0 }, nv = { 0 };
    for (long i = 0; i < 3; i++) {
        long s0 = i * 1000000, c = 2 * i + 1;
        fixture_trace_add(&rt, "(%ld, %ld, 0, 1, %ld, 1)", s0 + 10000, s0 + 400000, c);
        fixture_trace_add(&cp, "(%ld, %ld, 0, 7, %ld, 8388608, 1, 0, 2)", s0 + 20000, s0 + 390000, c);
        fixture_trace_add(&rt, "(%ld, %ld, 0, 1, %ld, 2)", s0 + 400000, s0 + 410000, c + 1);
        fixture_trace_add(&k, "(%ld, %ld, 0, 7, %ld, 0, 3, 3, 80, 1, 1, 256, 1, 1)", s0 + 420000, s0 + 900000, c + 1);
        fixture_trace_add(&nv, "(%ld, %ld, 59, 1, 'train_step', 1)", s0, s0 + 1000000);
        if (torch) fixture_trace_add(&nv, "(%ld, %ld, 59, 1, 'aten::copy_', 0)", s0 + 5000, s0 + 401000);
    }
    char *sql = xasprintf(
        "CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"
        "INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','2024.5.1');"
        "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO StringIds VALUES(1,'cudaMemcpy_v3020'),(2,'cudaLaunchKernel_v7000'),"
        " (3,'void stencil<float>(const float *, float *, int)');"
        "CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT, totalMemory INTEGER, smCount INTEGER,"
        " computeMajor INTEGER, computeMinor INTEGER, cuDevice INTEGER);"
        "INSERT INTO TARGET_INFO_GPU VALUES(0, 'NVIDIA H100 80GB HBM3', 85029158912, 132, 9, 0, 0);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,"
        " correlationId INTEGER, nameId INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES %s;"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,"
        " correlationId INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES %s;"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,"
        " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER,"
        " gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES %s;"
        "CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType INTEGER, globalTid INTEGER, text TEXT,"
        " domainId INTEGER);"
        "INSERT INTO NVTX_EVENTS VALUES(0, NULL, 75, 1, 'app', 1), %s;",
        rt.s, cp.s, k.s, nv.s);
    char *path = xasprintf("%s/nsys%d_%s.sqlite", fixture_root, ++seq, torch ? "torch" : "cuda");
    sqlite3 *db = NULL;
    char *msg = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "  nsys_copy_db: %s\n", msg ? msg : sqlite3_errmsg(db));
        free(path);
        path = NULL;
    }
    sqlite3_free(msg);
    sqlite3_close(db);
    free(sql);
    free(rt.s);
    free(cp.s);
    free(k.s);
    free(nv.s);
    return path;
}

/* Does the advice or snippet of some finding in f contain s? */
static int advice_has(json_t *f, const char *s)
{
    size_t i;
    json_t *x;
    json_array_foreach(f, i, x) {
        const char *a = fixture_str(x, "advice"), *c = fixture_str(x, "snippet");
        if ((a && strstr(a, s)) || (c && strstr(c, s))) return 1;
    }
    return 0;
}

/* An Nsight run of a CUDA program gets CUDA advice, never PyTorch's; the
 * same run showing aten:: ranges is PyTorch and keeps PyTorch's. */
static void test_nsight_cuda_advice(void)
{
    char *path = nsys_copy_db(0);
    REQUIRE(path != NULL);
    json_t *f = fixture_findings_file(path);
    REQUIRE(f != NULL);
    json_t *p = fixture_get(f, "pageable_memcpy", 0);
    CHECK(p != NULL);
    if (!p) fixture_dump(f);
    REQUIRE(p != NULL);
    CHECK(fabs(fixture_evnum(p, "bytes_per_step") - 8388608.0) < 0.5);
    CHECK(strstr(fixture_str(p, "advice"), "cudaMallocHost") != NULL);
    CHECK(strstr(fixture_str(p, "advice"), "cudaHostRegister") != NULL);
    CHECK(strstr(fixture_str(p, "snippet"), "cudaMemcpyAsync") != NULL);
    json_t *u = fixture_get(f, "low_gpu_utilization", 0); /* 48 % busy: names the copies as its cause */
    CHECK(u != NULL);
    if (u) {
        CHECK(strstr(fixture_str(u, "advice"), "CUDA graph") != NULL);
        CHECK(fixture_str(u, "snippet") == NULL);
    }
    CHECK(!advice_has(f, "torch"));
    CHECK(!advice_has(f, "DataLoader"));
    CHECK(!advice_has(f, "pin_memory"));
    CHECK(!advice_has(f, "non_blocking"));
    json_decref(f);
    free(path);

    path = nsys_copy_db(1);
    REQUIRE(path != NULL);
    f = fixture_findings_file(path);
    REQUIRE(f != NULL);
    p = fixture_get(f, "pageable_memcpy", 0);
    CHECK(p != NULL);
    if (p) {
        CHECK(strstr(fixture_str(p, "advice"), "pin_memory=True") != NULL);
        CHECK(strstr(fixture_str(p, "snippet"), "non_blocking=True") != NULL);
        CHECK(strstr(fixture_str(p, "advice"), "cudaMallocHost") == NULL);
    }
    json_decref(f);
    free(path);
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
    RUN(test_nsight_cuda_advice);
    fixture_done();
    free(tb.s);
    return harness_done("rules_host");
}

/* analyses_cp_test — the critical path of each step (server/analyses/
 * critical_path.c) on crafted Kineto traces imported through the real
 * pipeline, each case computed by hand: a launch-bound step, a GPU-bound
 * one (queued kernels), a step ending in cudaDeviceSynchronize, a DataLoader
 * call at the step's start, a communication kernel, a blocking copy, and a
 * helper thread (autograd's) that hands over to the main thread, and a main
 * thread waiting for the gloo thread's all-reduce. Every case
 * also checks the invariant: the categories add up to the step's duration
 * and the stored segments tile the step without gap or overlap. Times in
 * the traces are µs, in the figures ns. */
#include "analyses_fixture.h"
#include "derive/analyses_load.h"

/* ---------------------------------------------------------------------- */
/* Building traces in code                                                  */
/* ---------------------------------------------------------------------- */

/* A GPU op on stream 7 (cat "kernel" or "gpu_memcpy"). */
static void gpu(struct fixture_trace *b, const char *cat, const char *name, double ts, double dur, int corr)
{
    fixture_trace_add(b, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%.3f,\"dur\":%.3f,"
                      "\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}}",
                      cat, name, ts, dur, corr);
}

/* ---------------------------------------------------------------------- */
/* Checking a result                                                        */
/* ---------------------------------------------------------------------- */

struct want {
    int64_t cpu, dataloader, gpu, comm, launch, gap; /* µs */
    const char *bound_by;
};

/* Imports the trace, checks step 0's categories against w (µs), the sum
 * invariant on every step and the stored segments. Returns the stored
 * segment count (-1 on failure). */
static int64_t check_path(char *trace, const struct want *w)
{
    char *db = NULL;
    json_t *doc = fixture_analyses(DEV_H100, trace, &db);
    free(trace);
    int64_t nseg = -1;
    if (!doc || !db) {
        CHECK(doc != NULL);
        json_decref(doc);
        free(db);
        return -1;
    }
    json_t *cp = json_object_get(doc, "critical_path");
    json_t *steps = json_object_get(cp, "steps");
    CHECK(json_array_size(steps) >= 1);
    size_t i;
    json_t *s;
    json_array_foreach(steps, i, s) {
        json_t *by = json_object_get(s, "by");
        int64_t sum = 0;
        const char *k;
        json_t *v;
        json_object_foreach(by, k, v) sum += json_integer_value(v);
        CHECK_EQ_INT(sum, json_integer_value(json_object_get(s, "dur")));
    }
    s = json_array_get(steps, 0);
    json_t *by = json_object_get(s, "by");
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "cpu_ns")), w->cpu * 1000);
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "dataloader_ns")), w->dataloader * 1000);
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "gpu_compute_ns")), w->gpu * 1000);
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "communication_ns")), w->comm * 1000);
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "launch_overhead_ns")), w->launch * 1000);
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "kernel_gap_ns")), w->gap * 1000);
    CHECK_EQ_STR(json_string_value(json_object_get(s, "bound_by")), w->bound_by);
    CHECK_EQ_STR(json_string_value(json_object_get(cp, "bound_by")), w->bound_by);
    /* stored: the segments of step 0 tile [ts, ts + dur) in time order */
    int64_t ts = json_integer_value(json_object_get(s, "ts")), dur = json_integer_value(json_object_get(s, "dur"));
    json_t *segs = fixture_segments(db, 0);
    CHECK(segs != NULL);
    int64_t end = ts;
    json_t *g;
    json_array_foreach(segs, i, g) { /* each begins where the one before ends */
        CHECK_EQ_INT(json_integer_value(json_array_get(g, 0)), end);
        CHECK(json_integer_value(json_array_get(g, 1)) > 0);
        end += json_integer_value(json_array_get(g, 1));
    }
    CHECK_EQ_INT(end, ts + dur);
    nseg = (int64_t)json_array_size(segs);
    json_decref(segs);
    CHECK_EQ_INT(nseg, json_integer_value(json_object_get(s, "segments")));
    json_decref(doc);
    free(db);
    return nseg;
}

/* ---------------------------------------------------------------------- */
/* Cases                                                                    */
/* ---------------------------------------------------------------------- */

/* Launch-bound: step [0, 100), op i covers [t, t+8) with its launch call
 * [t+2, t+7) and a 2 µs kernel [t+8, t+10), t = 10 i. The path ends on the
 * last kernel (2 gpu), waits 1 µs after its launch call (launch), and then
 * walks the host: per op 5 µs in the call (launch), 2 + 1 µs of op around
 * it and 2 µs between ops (cpu); the last op's tail after its call is off
 * the path. cpu = 9 * 5 + 2 = 47, launch = 9 * 5 + 5 + 1 = 51. */
static void test_launch_bound(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 100);
    for (int i = 0; i < 10; i++) {
        double t = 10.0 * i;
        fixture_host(&b, 1, "cpu_op", "aten::add", t, 8, 0);
        fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", t + 2, 5, i + 1);
        gpu(&b, "kernel", "small_kernel", t + 8, 2, i + 1);
    }
    struct want w = { .cpu = 47, .gpu = 2, .launch = 51, .bound_by = "launch_overhead" };
    check_path(b.s, &w);
}

/* GPU-bound: three launches [1,2) [3,4) [5,6) queue 30 µs kernels [3,33)
 * [35,65) [66,96); the step stretches to 96. Back from the last kernel:
 * 3 * 30 gpu, gaps 1 + 2 (kernel_gap), the first kernel's wait for its
 * launch [2,3) and the call [1,2) (launch), [0,1) cpu. */
static void test_gpu_bound(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 20);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 1, 1, 1);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 3, 1, 2);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 5, 1, 3);
    gpu(&b, "kernel", "big_gemm", 3, 30, 1);
    gpu(&b, "kernel", "big_gemm", 35, 30, 2);
    gpu(&b, "kernel", "big_gemm", 66, 30, 3);
    struct want w = { .cpu = 1, .gpu = 90, .launch = 2, .gap = 3, .bound_by = "gpu_compute" };
    int64_t n = check_path(b.s, &w);
    CHECK_EQ_INT(n, 8); /* cpu, launch call, launch gap, k1, gap, k2, gap, k3 */
}

/* A step ending in cudaDeviceSynchronize [5, 41) while kernel [3, 40)
 * runs, then an op [42, 48) and the step's end at 50. Back from 50: cpu
 * 2 + 6 + 1; the sync's tail [40, 41) (launch) jumps to the kernel (37
 * gpu; the 35 µs wait is not on the path), its launch gap [2, 3) and call
 * [1, 2) (launch), [0, 1) cpu. */
static void test_device_sync(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 50);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 1, 1, 1);
    gpu(&b, "kernel", "gemm", 3, 37, 1);
    fixture_host(&b, 1, "cuda_runtime", "cudaDeviceSynchronize", 5, 36, 0);
    fixture_host(&b, 1, "cpu_op", "aten::foo", 42, 6, 0);
    struct want w = { .cpu = 10, .gpu = 37, .launch = 3, .bound_by = "gpu_compute" };
    check_path(b.s, &w);
}

/* The same inside aten::item → cudaStreamSynchronize, with a second kernel
 * queued behind the first: the sync waits for the last one. Kernels
 * [3, 20) and [21, 30), sync [6, 31) inside item [5, 32), step [0, 40).
 * Back: cpu [32, 40) 8 + [31, 32) 1; sync tail [30, 31) launch 1; k2 9
 * gpu; gap [20, 21) 1; k1 17 gpu; launch gap [2, 3) 1 + call [1, 2) 1;
 * cpu [0, 1) 1. */
static void test_stream_sync_in_op(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 40);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 1, 1, 1);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 2, 0.5, 2);
    gpu(&b, "kernel", "gemm", 3, 17, 1);
    gpu(&b, "kernel", "reduce", 21, 9, 2);
    fixture_host(&b, 1, "cpu_op", "aten::item", 5, 27, 0);
    fixture_host(&b, 1, "cuda_runtime", "cudaStreamSynchronize", 6, 25, 0);
    struct want w = { .cpu = 10, .gpu = 26, .launch = 3, .gap = 1, .bound_by = "gpu_compute" };
    check_path(b.s, &w);
}

/* A DataLoader call [1, 41) (with an op inside) at the step's start, then
 * one launch [42, 44) whose kernel [45, 55) ends before the step [0, 60):
 * the host is the path. cpu [44, 60) + [41, 42) + [0, 1) = 18, launch 2,
 * dataloader 40 — one merged segment. */
static void test_dataloader(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 60);
    fixture_host(&b, 1, "user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, 40, 0);
    fixture_host(&b, 1, "cpu_op", "aten::stack", 10, 10, 0);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 42, 2, 1);
    gpu(&b, "kernel", "conv", 45, 10, 1);
    struct want w = { .cpu = 18, .dataloader = 40, .launch = 2, .bound_by = "dataloader" };
    int64_t n = check_path(b.s, &w);
    CHECK_EQ_INT(n, 5); /* cpu, dataloader, cpu, launch call, cpu */
}

/* A collective kernel [3, 50) launched at [1, 2) in a step [0, 10). */
static void test_communication(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 10);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 1, 1, 1);
    gpu(&b, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 3, 47, 1);
    struct want w = { .cpu = 1, .comm = 47, .launch = 2, .bound_by = "communication" };
    check_path(b.s, &w);
}

/* A blocking copy: cudaMemcpyAsync [20, 40) into pageable memory whose copy
 * [30, 38) waits behind a kernel [3, 30); step [0, 45). Back: cpu [40, 45)
 * 5; the call's tail [38, 40) launch 2; the copy 8 gpu; the kernel (the
 * stream, not the call, released the copy) 27 gpu; launch gap [2, 3) and
 * call [1, 2); cpu [0, 1). */
static void test_blocking_copy(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 45);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 1, 1, 1);
    gpu(&b, "kernel", "gemm", 3, 27, 1);
    fixture_host(&b, 1, "cuda_runtime", "cudaMemcpyAsync", 20, 20, 2);
    gpu(&b, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 30, 8, 2);
    struct want w = { .cpu = 6, .gpu = 35, .launch = 4, .bound_by = "gpu_compute" };
    check_path(b.s, &w);
}

/* Autograd's thread (tid 2) launches the kernel [26, 60) from an op
 * [20, 30) with its call [22, 25); before the op it has nothing open, so
 * the path hands over to the main thread (the step's), idle in the step
 * span: gpu 34, launch gap 1 + call 3, cpu 2 (op) + 20 (main). */
static void test_helper_thread(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 40);
    fixture_host(&b, 2, "cpu_op", "autograd::engine::evaluate_function: AddBackward0", 20, 10, 0);
    fixture_host(&b, 2, "cuda_runtime", "cudaLaunchKernel", 22, 3, 1);
    gpu(&b, "kernel", "add_kernel", 26, 34, 1);
    struct want w = { .cpu = 22, .gpu = 34, .launch = 4, .bound_by = "gpu_compute" };
    check_path(b.s, &w);
}

/* Two steps: the second's path stops at its start even though its first
 * kernel was launched (and queued) in the first. Step 1 [0, 10) launches
 * k1 [2, 30); step 2's host span [30, 40) launches k2 [35, 60) — step 2 is
 * [30, 60): k2 25 gpu, launch gap [34, 35) 1, call [33, 34) 1, cpu 3. */
static void test_two_steps(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 10);
    fixture_step(&b, 2, 30, 10);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 1, 1, 1);
    gpu(&b, "kernel", "gemm", 2, 28, 1);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 33, 1, 2);
    gpu(&b, "kernel", "gemm", 35, 25, 2);
    char *db = NULL;
    json_t *doc = fixture_analyses(DEV_H100, b.s, &db);
    free(b.s);
    REQUIRE(doc && db);
    json_t *steps = json_object_get(json_object_get(doc, "critical_path"), "steps");
    CHECK_EQ_INT(json_array_size(steps), 2);
    json_t *by = json_object_get(json_array_get(steps, 1), "by");
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "gpu_compute_ns")), 25000);
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "launch_overhead_ns")), 2000);
    CHECK_EQ_INT(json_integer_value(json_object_get(by, "cpu_ns")), 3000);
    json_t *tot = json_object_get(json_object_get(doc, "critical_path"), "totals");
    CHECK_EQ_INT(json_integer_value(json_object_get(tot, "gpu_compute_ns")),
                 25000 + json_integer_value(json_object_get(json_object_get(json_array_get(steps, 0), "by"),
                                                            "gpu_compute_ns")));
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(DISTINCT step) FROM critseg"), 2);
    json_decref(doc);
    free(db);
}

/* DDP with gloo: the main thread (tid 1) launches a kernel from an op
 * [0, 10), then waits in backward() with nothing open while the gloo
 * thread (tid 3) all-reduces [20, 80); an op [90, 100) ends the step. Back
 * from 100: cpu 10 (op) + 10 (after the collective); the wait under it
 * follows gloo:all_reduce, communication 60; main again before it: cpu 10,
 * then the op's 8 + 1 cpu around its launch call [1, 2) (launch 1). When
 * the main thread runs an operator over [10, 90) instead, it is not
 * waiting: all cpu. */
static void gloo_trace(struct fixture_trace *b, int busy)
{
    fixture_step(b, 1, 0, 100);
    fixture_host(b, 1, "cpu_op", "aten::add", 0, 10, 0);
    fixture_host(b, 1, "cuda_runtime", "cudaLaunchKernel", 1, 1, 1);
    gpu(b, "kernel", "add_kernel", 3, 2, 1);
    if (busy) fixture_host(b, 1, "cpu_op", "aten::index", 10, 80, 0);
    fixture_host(b, 3, "user_annotation", "gloo:all_reduce", 20, 60, 0);
    fixture_host(b, 1, "cpu_op", "aten::foo", 90, 10, 0);
}

static void test_gloo_wait(void)
{
    struct fixture_trace b = { 0 };
    gloo_trace(&b, 0);
    struct want w = { .cpu = 39, .comm = 60, .launch = 1, .bound_by = "communication" };
    CHECK_EQ_INT(check_path(b.s, &w), 7); /* cpu, launch, cpu, gap, comm (gloo thread), gap, cpu */
    struct fixture_trace busy = { 0 };
    gloo_trace(&busy, 1);
    struct want w2 = { .cpu = 99, .launch = 1, .bound_by = "cpu" };
    check_path(busy.s, &w2);
}

/* The analyses documents and critical-path blobs of run dbpath as text
 * (owned by caller), NULL on failure. */
static char *tables_text(const char *dbpath)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    char *out = NULL;
    if (sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT group_concat(doc, '|') FROM (SELECT doc FROM analyses ORDER BY rank))"
                           " || '#' ||"
                           " (SELECT group_concat(rank || ',' || step || ',' || t0 || ',' || t1 || ',' || n || ','"
                           " || hex(segs), ';') FROM (SELECT * FROM critseg ORDER BY rank, step))",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        out = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

/* The host slices held in memory (the launch walk's) or read from run.db
 * (past AN_HOST_ROWS; here 0), and the launch walk read ahead of the
 * analyses: the same documents and segments, on traces
 * where the host side matters — a helper thread, a host collective on
 * another thread, a blocking copy, and a main thread whose Python frames
 * misnest across the steps under the profiler's own range (kind trace),
 * with a step starting inside an open chain. */
static void test_held_alike(void)
{
    struct fixture_trace t[4] = { 0 };
    fixture_step(&t[0], 1, 0, 40);
    fixture_host(&t[0], 2, "cpu_op", "autograd::engine::evaluate_function: AddBackward0", 20, 10, 0);
    fixture_host(&t[0], 2, "cuda_runtime", "cudaLaunchKernel", 22, 3, 1);
    gpu(&t[0], "kernel", "add_kernel", 26, 34, 1);
    gloo_trace(&t[1], 0);
    fixture_step(&t[2], 1, 0, 45);
    fixture_host(&t[2], 1, "cuda_runtime", "cudaLaunchKernel", 1, 1, 1);
    gpu(&t[2], "kernel", "gemm", 3, 27, 1);
    fixture_host(&t[2], 1, "cuda_runtime", "cudaMemcpyAsync", 20, 20, 2);
    gpu(&t[2], "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 30, 8, 2);
    fixture_host(&t[3], 1, "trace", "PyTorch Profiler (0)", 0, 200, 0);
    fixture_step(&t[3], 1, 5, 90);
    fixture_step(&t[3], 2, 95, 100);
    fixture_host(&t[3], 1, "python_function", "train.py(10): loop", 2, 150, 0);
    fixture_host(&t[3], 1, "python_function", "nn.Module: Linear_0", 60, 80, 0);
    fixture_host(&t[3], 1, "user_annotation", "forward", 70, 60, 0);
    fixture_host(&t[3], 1, "cpu_op", "aten::linear", 80, 30, 0);
    fixture_host(&t[3], 1, "cuda_runtime", "cudaLaunchKernel", 85, 5, 1);
    gpu(&t[3], "kernel", "gemm", 91, 20, 1);
    fixture_host(&t[3], 1, "cpu_op", "aten::relu", 120, 40, 0);
    fixture_host(&t[3], 1, "cuda_runtime", "cudaDeviceSynchronize", 125, 30, 0);
    fixture_host(&t[3], 1, "cuda_runtime", "cudaLaunchKernel", 160, 2, 2);
    gpu(&t[3], "kernel", "relu", 163, 25, 2);
    for (int k = 0; k < 4; k++) {
        char *dbp = fixture_import(DEV_H100, "", (const char *const *)&t[k].s, 1);
        free(t[k].s);
        REQUIRE(dbp != NULL);
        char *held = tables_text(dbp);
        sqlite3 *db;
        struct err e;
        REQUIRE(sqlite3_open_v2(dbp, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
        CHECK_EQ_INT(analyses_run_held(db, 0, &e), 0);
        char *read = tables_text(dbp);
        /* and with the launch walk read ahead (ingest_derive.c) */
        struct analyses_pre *pre = NULL;
        CHECK_EQ_INT(analyses_preload(db, 0, NULL, &pre, &e), 0);
        CHECK(pre && pre->nlaunches > 0);
        CHECK_EQ_INT(analyses_run_then(db, pre, NULL, NULL, &e), 0);
        CHECK(pre && pre->nlaunches == 0); /* taken */
        analyses_pre_free(pre);
        sqlite3_close(db);
        char *ahead = tables_text(dbp);
        CHECK(held && read && strstr(held, "critical_path") && strstr(held, "#0,"));
        if (held && read) CHECK_EQ_STR(read, held);
        if (held && ahead) CHECK_EQ_STR(ahead, held);
        free(held);
        free(read);
        free(ahead);
        free(dbp);
    }
}

int main(void)
{
    fixture_init();
    RUN(test_launch_bound);
    RUN(test_gpu_bound);
    RUN(test_device_sync);
    RUN(test_stream_sync_in_op);
    RUN(test_dataloader);
    RUN(test_communication);
    RUN(test_blocking_copy);
    RUN(test_helper_thread);
    RUN(test_two_steps);
    RUN(test_gloo_wait);
    RUN(test_held_alike);
    fixture_done();
    return harness_done("analyses_cp");
}

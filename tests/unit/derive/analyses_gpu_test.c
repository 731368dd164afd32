/* analyses_gpu_test — the copy, overlap, annotations and fusion analyses
 * (server/analyses/{copy,overlap,annotations,fusion}.c) on crafted Kineto
 * traces imported through the real pipeline, against figures worked out by
 * hand in each test's comment. Times in the traces are µs; the analyses
 * report ns. Every trace has one ProfilerStep covering all its GPU work, so
 * the window is that step. */
#include "analyses_fixture.h"

#include <math.h>
#define NEAR(a, b) (fabs((a) - (b)) < 1e-6 * (fabs(b) + 1.0))

/* ---------------------------------------------------------------------- */
/* Building traces in code                                                  */
/* ---------------------------------------------------------------------- */

/* A GPU event on device 0, stream `stream` (bytes < 0: none; corr 0: none). */
static void gpu(struct fixture_trace *b, const char *cat, const char *name, int stream, double ts, double dur, int corr,
                long long bytes)
{
    char extra[64] = "";
    if (bytes >= 0) snprintf(extra, sizeof extra, ",\"bytes\":%lld", bytes);
    fixture_trace_add(b,
                      "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
                      "\"args\":{\"device\":0,\"stream\":%d,\"correlation\":%d%s}}",
                      cat, name, stream, ts, dur, stream, corr, extra);
}

/* A gpu_user_annotation on stream 7's track (no stream arg, as Kineto writes it). */
static void gpu_annot(struct fixture_trace *b, const char *name, double ts, double dur)
{
    fixture_trace_add(b,
                      "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%.3f,"
                      "\"dur\":%.3f,\"args\":{\"External id\":1}}",
                      name, ts, dur);
}

/* A launch call [l_ts, +l_dur) and its kernel [k_ts, +k_dur) on stream 7. */
static void launch_kernel(struct fixture_trace *b, const char *kernel, double l_ts, double l_dur, double k_ts,
                          double k_dur, int corr)
{
    fixture_host(b, 1, "cuda_runtime", "cudaLaunchKernel", l_ts, l_dur, corr);
    gpu(b, "kernel", kernel, 7, k_ts, k_dur, corr, -1);
}

static json_t *doc_of(struct fixture_trace *b, char **dbpath)
{
    json_t *doc = fixture_analyses(DEV_H100, b->s, dbpath);
    free(b->s);
    return doc;
}

/* The item of arr whose "name" (or first of "ops") is name, or NULL. */
static json_t *item_named(json_t *arr, const char *key, const char *name)
{
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it) {
        json_t *v = json_object_get(it, key);
        if (json_is_array(v)) v = json_array_get(v, 0);
        if (json_is_string(v) && strcmp(json_string_value(v), name) == 0) return it;
    }
    return NULL;
}

static double num(json_t *o, const char *key) { return fixture_at(o, key, NULL); }

/* ---------------------------------------------------------------------- */
/* copy                                                                     */
/* ---------------------------------------------------------------------- */

/* Step [0, 1000) µs. Copies (bytes / ns = GB/s):
 *   HtoD pinned   1e6 B in 20 µs at 100 (50 GB/s), 2e6 B in 50 µs at 110 (40)
 *                 → 3e6 / 70000 = 42.857 GB/s, best 50, 63 GB/s PCIe5 peak
 *   HtoD pageable 1e6 B in 100 µs at 300 (10 GB/s)
 *   DtoH pageable 5e5 B in 25 µs at 500 (20 GB/s)
 *   DtoD          3.35e6 B in 2 µs at 600 (1675 GB/s: half of 3350)
 *   Memset        1000 B in 0 µs at 700 (counted as 1 ns: 1000 GB/s)
 * A kernel at 800 makes the GPU known (H100 SXM: PCIe Gen5 63 GB/s, HBM3
 * 3350 GB/s). The HtoD lane: 50 at 100, 90 at 110, 40 at 120, 0 at 160, 10 at 300,
 * 0 at 400. Busy union: 60 + 100 + 25 + 2 + 0 = 187 µs. */
static void test_copy(void)
{
    struct fixture_trace b = { 0 };
    fixture_host(&b, 1, "user_annotation", "ProfilerStep#1", 0, 1000, 0);
    gpu(&b, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 7, 100, 20, 0, 1000000);
    gpu(&b, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 8, 110, 50, 0, 2000000);
    gpu(&b, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 300, 100, 0, 1000000);
    gpu(&b, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 7, 500, 25, 0, 500000);
    gpu(&b, "gpu_memcpy", "Memcpy DtoD (Device -> Device)", 7, 600, 2, 0, 3350000);
    gpu(&b, "gpu_memset", "Memset (Device)", 7, 700, 0, 0, 1000);
    gpu(&b, "kernel", "ampere_sgemm_128x64_nn", 7, 800, 10, 0, -1); /* names the GPU: the peaks */
    char *db;
    json_t *doc = doc_of(&b, &db);
    REQUIRE(doc != NULL);
    json_t *cp = json_object_get(doc, "copy");
    json_t *kinds = json_object_get(cp, "kinds");
    REQUIRE(json_array_size(kinds) == 5);
    /* kind order, pageable before pinned */
    json_t *pg = json_array_get(kinds, 0), *pn = json_array_get(kinds, 1);
    CHECK_EQ_STR(json_string_value(json_object_get(pg, "kind")), "HtoD");
    CHECK(json_is_false(json_object_get(pg, "pinned")));
    CHECK_EQ_INT(num(pg, "count"), 1);
    CHECK(NEAR(num(pg, "gbps"), 10.0));
    CHECK(NEAR(num(pg, "share_of_peak"), 10.0 / 63.0));
    CHECK_EQ_STR(json_string_value(json_object_get(pn, "kind")), "HtoD");
    CHECK(json_is_true(json_object_get(pn, "pinned")));
    CHECK_EQ_INT(num(pn, "count"), 2);
    CHECK_EQ_INT(num(pn, "bytes"), 3000000);
    CHECK_EQ_INT(num(pn, "busy_ns"), 70000);
    CHECK(NEAR(num(pn, "gbps"), 3e6 / 70000.0));
    CHECK(NEAR(num(pn, "max_gbps"), 50.0));
    CHECK(NEAR(num(pn, "peak_gbps"), 63.0));
    CHECK(NEAR(num(pn, "share_of_peak"), 3e6 / 70000.0 / 63.0));
    json_t *dh = json_array_get(kinds, 2), *dd = json_array_get(kinds, 3), *ms = json_array_get(kinds, 4);
    CHECK_EQ_STR(json_string_value(json_object_get(dh, "kind")), "DtoH");
    CHECK(json_is_false(json_object_get(dh, "pinned")));
    CHECK(NEAR(num(dh, "gbps"), 20.0));
    CHECK_EQ_STR(json_string_value(json_object_get(dd, "kind")), "DtoD");
    CHECK(NEAR(num(dd, "gbps"), 1675.0));
    CHECK(NEAR(num(dd, "peak_gbps"), 3350.0));
    CHECK(NEAR(num(dd, "share_of_peak"), 0.5));
    CHECK_EQ_STR(json_string_value(json_object_get(ms, "kind")), "Memset");
    CHECK(NEAR(num(ms, "gbps"), 1000.0));
    CHECK_EQ_INT(num(ms, "busy_ns"), 0);
    CHECK_EQ_INT(num(cp, "total_bytes"), 3000000 + 1000000 + 500000 + 3350000 + 1000);
    CHECK_EQ_INT(num(cp, "busy_ns"), 187000);

    /* the counter lanes: one per kind present, HTA's +/− steps */
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM anseries WHERE kind = 2"), 4);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM anseries WHERE kind = 2 AND key = 1"
                                       " AND name = 'Copy bandwidth (HtoD)' AND unit = 'GB/s'"),
                 1);
    static const char hq[] = "SELECT count(*) FROM ansample WHERE series = (SELECT id FROM anseries"
                             " WHERE kind = 2 AND key = 1)";
    CHECK_EQ_INT(fixture_query_int(db, hq), 6);
    static const struct {
        int64_t ts;
        int v;
    } want[] = { { 100000, 50 }, { 110000, 90 }, { 120000, 40 }, { 160000, 0 }, { 300000, 10 }, { 400000, 0 } };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char q[256];
        snprintf(q, sizeof q,
                 "SELECT round(value) FROM ansample WHERE ts = %lld AND series = (SELECT id FROM anseries"
                 " WHERE kind = 2 AND key = 1)",
                 (long long)want[i].ts);
        CHECK_EQ_INT(fixture_query_int(db, q), want[i].v);
    }
    /* the zero-length memset: +1000 at 700 µs, back to 0 one ns later */
    CHECK_EQ_INT(fixture_query_int(db, "SELECT round(value) FROM ansample WHERE ts = 700000 AND series ="
                                       " (SELECT id FROM anseries WHERE kind = 2 AND key = 5)"),
                 1000);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT round(value) FROM ansample WHERE ts = 700001 AND series ="
                                       " (SELECT id FROM anseries WHERE kind = 2 AND key = 5)"),
                 0);
    json_decref(doc);
    free(db);
}

/* ---------------------------------------------------------------------- */
/* overlap                                                                  */
/* ---------------------------------------------------------------------- */

/* Step [0, 1000) µs, device 0:
 *   compute  gemm on stream 7 [100, 300) and [450, 470)
 *   comm     nccl on stream 8 [200, 500)
 *   memory   memcpy on stream 7 [350, 400), memset on stream 9 [455, 458)
 * Sweeping: [100,200) compute; [200,300) compute+comm; [300,350) comm;
 * [350,400) comm+memory; [400,450) comm; [450,455) compute+comm; [455,458)
 * all three; [458,470) compute+comm; [470,500) comm.
 *   compute only 100, comm only 130, memory only 0, compute+comm 117,
 *   compute+memory 0, comm+memory 50, all 3 → 400 µs busy, 600 idle.
 * Unions: compute 220, comm 300, memory 53; overlap (117 + 3) / 300 = 0.4. */
static void test_overlap(void)
{
    struct fixture_trace b = { 0 };
    fixture_host(&b, 1, "user_annotation", "ProfilerStep#1", 0, 1000, 0);
    gpu(&b, "kernel", "ampere_sgemm_128x64_nn", 7, 100, 200, 0, -1);
    gpu(&b, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 8, 200, 300, 0, -1);
    gpu(&b, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 7, 350, 50, 0, 1000);
    gpu(&b, "kernel", "ampere_sgemm_128x64_nn", 7, 450, 20, 0, -1);
    gpu(&b, "gpu_memset", "Memset (Device)", 9, 455, 3, 0, 64);
    json_t *doc = doc_of(&b, NULL);
    REQUIRE(doc != NULL);
    json_t *ov = json_object_get(doc, "overlap");
    CHECK_EQ_INT(num(ov, "window_ns"), 1000000);
    CHECK_EQ_INT(num(ov, "compute_ns"), 220000);
    CHECK_EQ_INT(num(ov, "communication_ns"), 300000);
    CHECK_EQ_INT(num(ov, "memory_ns"), 53000);
    CHECK_EQ_INT(num(ov, "idle_ns"), 600000);
    CHECK(NEAR(num(ov, "comm_overlap_ratio"), 0.4));
    static const int64_t want[7] = { 100000, 130000, 0, 117000, 0, 50000, 3000 };
    static const char *const types[7] = { "compute", "communication", "memory", "compute+communication",
                                          "compute+memory", "communication+memory",
                                          "compute+communication+memory" };
    json_t *combos = json_object_get(ov, "combos");
    REQUIRE(json_array_size(combos) == 7);
    int64_t sum = 0;
    for (size_t i = 0; i < 7; i++) {
        json_t *c = json_array_get(combos, i);
        char joined[96] = "";
        size_t k;
        json_t *t;
        json_array_foreach(json_object_get(c, "types"), k, t) {
            if (k) strcat(joined, "+");
            strcat(joined, json_string_value(t));
        }
        CHECK_EQ_STR(joined, types[i]);
        CHECK_EQ_INT(num(c, "ns"), want[i]);
        sum += (int64_t)num(c, "ns");
    }
    /* the combos split the busy time exactly */
    CHECK_EQ_INT(sum, num(ov, "window_ns") - num(ov, "idle_ns"));
    CHECK(json_object_get(ov, "devices") == NULL); /* one device */
    json_decref(doc);

    /* no communication: the ratio is null, not 0 */
    struct fixture_trace b2 = { 0 };
    fixture_host(&b2, 1, "user_annotation", "ProfilerStep#1", 0, 100, 0);
    gpu(&b2, "kernel", "ampere_sgemm_128x64_nn", 7, 10, 20, 0, -1);
    doc = doc_of(&b2, NULL);
    REQUIRE(doc != NULL);
    ov = json_object_get(doc, "overlap");
    CHECK(json_is_null(json_object_get(ov, "comm_overlap_ratio")));
    CHECK_EQ_INT(num(ov, "compute_ns"), 20000);
    CHECK_EQ_INT(num(ov, "idle_ns"), 80000);
    json_decref(doc);
}

/* ---------------------------------------------------------------------- */
/* annotations                                                              */
/* ---------------------------------------------------------------------- */

/* Step [0, 1000) µs on the host, and a ProfilerStep#1 gpu_user_annotation
 * [0, 1000) that must never take an op.
 *   outer  (record_function) [10, 500)
 *     inner (record_function) [20, 100)
 *       aten::mul [30, 50): launches K1 [200, +10) and K7 [212, +3)
 *     nn.Module: Linear_0 (python frame) [110, 200)
 *       aten::linear [120, 50): launches K2 [220, +30)
 *     aten::add [300, 20): launches K3 [320, +20)          → outer
 *   launch at 600 (no host annotation): K4 [610, +40), inside the GPU
 *     annotations gpu_region [600, 700) ⊃ gpu_inner [605, 640) → gpu_inner
 *   launch at 640: K5 [650, +10)                            → gpu_region
 *   launch at 690: K6 [700, +5), after gpu_region ends      → unattributed
 * Items: gpu_inner 40, nn.Module 30, outer 20, inner 13 (2 ops, 2 calls),
 * gpu_region 10; total 118 µs, 5 unattributed. */
static void test_annotations(void)
{
    struct fixture_trace b = { 0 };
    fixture_host(&b, 1, "user_annotation", "ProfilerStep#1", 0, 1000, 0);
    fixture_host(&b, 1, "user_annotation", "outer", 10, 490, 0);
    fixture_host(&b, 1, "user_annotation", "inner", 20, 80, 0);
    fixture_host(&b, 1, "cpu_op", "aten::mul", 30, 50, 0);
    launch_kernel(&b, "k1", 35, 5, 200, 10, 1);
    launch_kernel(&b, "k7", 45, 5, 212, 3, 7);
    fixture_host(&b, 1, "python_function", "nn.Module: Linear_0", 110, 90, 0);
    fixture_host(&b, 1, "cpu_op", "aten::linear", 120, 50, 0);
    launch_kernel(&b, "k2", 130, 5, 220, 30, 2);
    fixture_host(&b, 1, "cpu_op", "aten::add", 300, 20, 0);
    launch_kernel(&b, "k3", 305, 5, 320, 20, 3);
    launch_kernel(&b, "k4", 600, 5, 610, 40, 4);
    launch_kernel(&b, "k5", 640, 5, 650, 10, 5);
    launch_kernel(&b, "k6", 690, 5, 700, 5, 6);
    gpu_annot(&b, "ProfilerStep#1", 0, 1000);
    gpu_annot(&b, "gpu_region", 600, 100);
    gpu_annot(&b, "gpu_inner", 605, 35);
    json_t *doc = doc_of(&b, NULL);
    REQUIRE(doc != NULL);
    json_t *an = json_object_get(doc, "annotations");
    CHECK_EQ_INT(num(an, "total_ns"), 118000);
    CHECK_EQ_INT(num(an, "attributed_ns"), 113000);
    CHECK_EQ_INT(num(an, "unattributed_ns"), 5000);
    json_t *items = json_object_get(an, "items");
    REQUIRE(json_array_size(items) == 5);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(items, 0), "name")), "gpu_inner");
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(items, 1), "name")), "nn.Module: Linear_0");
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(items, 2), "name")), "outer");
    static const struct {
        const char *name, *source;
        int64_t ns, ops, calls;
    } want[] = { { "gpu_inner", "gpu_annotation", 40000, 1, 1 },
                 { "nn.Module: Linear_0", "module", 30000, 1, 1 },
                 { "outer", "record_function", 20000, 1, 1 },
                 { "inner", "record_function", 13000, 2, 2 },
                 { "gpu_region", "gpu_annotation", 10000, 1, 1 } };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        json_t *it = item_named(items, "name", want[i].name);
        CHECK(it != NULL);
        if (!it) continue;
        CHECK_EQ_STR(json_string_value(json_object_get(it, "source")), want[i].source);
        CHECK_EQ_INT(num(it, "gpu_ns"), want[i].ns);
        CHECK_EQ_INT(num(it, "ops"), want[i].ops);
        CHECK_EQ_INT(num(it, "calls"), want[i].calls);
    }
    CHECK(item_named(items, "name", "ProfilerStep#1") == NULL);
    /* HTA's breakdown of the gpu_user_annotation slices themselves */
    json_t *ga = json_object_get(an, "gpu_annotations");
    REQUIRE(json_array_size(ga) == 3);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(ga, 0), "name")), "ProfilerStep#1");
    json_t *gr = item_named(ga, "name", "gpu_region");
    REQUIRE(gr != NULL);
    CHECK_EQ_INT(num(gr, "count"), 1);
    CHECK_EQ_INT(num(gr, "sum_ns"), 100000);
    CHECK_EQ_INT(num(gr, "max_ns"), 100000);
    CHECK(NEAR(num(gr, "mean_ns"), 100000.0));
    json_decref(doc);
}

/* ---------------------------------------------------------------------- */
/* fusion                                                                   */
/* ---------------------------------------------------------------------- */

/* Step [0, 2000) µs.
 * (a) aten::foo, 5 times at T = 100 r + 10: launches [T+2, T+12, T+22)
 *     of 8 µs each, kernels k_a, k_b, k_c at T+10, T+20, T+30 of 4 µs:
 *     3 short kernels (mean 4 µs), gaps 6 µs, launch 8 µs → cost 8 µs;
 *     saving (3 − 1) × 5 × 8000 = 80000 ns; gpu 60 µs, launch 120 µs.
 * (b) 3 times at B = 600 + 100 j: aten::add (one 2 µs elementwise kernel at
 *     B+10, launched [B+2, +5)) then aten::mul (one at B+20, launched
 *     [B+14, +5)) then aten::mm with a 50 µs GEMM that ends the chain.
 *     Chain [add, mul]: 3 times, 2 kernels, launch mean 5 µs, gap 8 µs
 *     → saving 1 × 3 × 8000 = 24000 ns.
 * aten::big launches two 30 µs kernels: too long to be a candidate. */
static void test_fusion(void)
{
    struct fixture_trace b = { 0 };
    int corr = 1;
    fixture_host(&b, 1, "user_annotation", "ProfilerStep#1", 0, 2000, 0);
    for (int r = 0; r < 5; r++) {
        double t = 100.0 * r + 10;
        fixture_host(&b, 1, "cpu_op", "aten::foo", t, 40, 0);
        launch_kernel(&b, "k_a", t + 2, 8, t + 10, 4, corr++);
        launch_kernel(&b, "k_b", t + 12, 8, t + 20, 4, corr++);
        launch_kernel(&b, "k_c", t + 22, 8, t + 30, 4, corr++);
    }
    for (int j = 0; j < 3; j++) {
        double t = 600.0 + 100 * j;
        fixture_host(&b, 1, "cpu_op", "aten::add", t, 10, 0);
        launch_kernel(&b, "void at::native::vectorized_elementwise_kernel<4, add>", t + 2, 5, t + 10, 2, corr++);
        fixture_host(&b, 1, "cpu_op", "aten::mul", t + 12, 10, 0);
        launch_kernel(&b, "void at::native::vectorized_elementwise_kernel<4, mul>", t + 14, 5, t + 20, 2, corr++);
        fixture_host(&b, 1, "cpu_op", "aten::mm", t + 30, 10, 0);
        launch_kernel(&b, "ampere_sgemm_128x64_nn", t + 32, 5, t + 40, 50, corr++);
    }
    fixture_host(&b, 1, "cpu_op", "aten::big", 1500, 10, 0);
    launch_kernel(&b, "big_a", 1502, 3, 1510, 30, corr++);
    launch_kernel(&b, "big_b", 1505, 3, 1540, 30, corr++);
    json_t *doc = doc_of(&b, NULL);
    REQUIRE(doc != NULL);
    json_t *fu = json_object_get(doc, "fusion");
    json_t *items = json_object_get(fu, "items");
    REQUIRE(json_array_size(items) == 2);
    json_t *op = json_array_get(items, 0), *ch = json_array_get(items, 1);
    CHECK_EQ_STR(json_string_value(json_object_get(op, "kind")), "op");
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(op, "ops"), 0)), "aten::foo");
    json_t *ks = json_object_get(op, "kernels");
    REQUIRE(json_array_size(ks) == 3);
    CHECK_EQ_STR(json_string_value(json_array_get(ks, 0)), "k_a");
    CHECK_EQ_STR(json_string_value(json_array_get(ks, 2)), "k_c");
    CHECK_EQ_INT(num(op, "count"), 5);
    CHECK_EQ_INT(num(op, "kernels_per_call"), 3);
    CHECK_EQ_INT(num(op, "gpu_ns"), 60000);
    CHECK_EQ_INT(num(op, "launch_ns"), 120000);
    CHECK(NEAR(num(op, "mean_kernel_ns"), 4000.0));
    CHECK(NEAR(num(op, "avg_launch_delay_ns"), 0.0));
    CHECK_EQ_INT(num(op, "saving_ns"), 80000);

    CHECK_EQ_STR(json_string_value(json_object_get(ch, "kind")), "chain");
    json_t *ops = json_object_get(ch, "ops");
    REQUIRE(json_array_size(ops) == 2);
    CHECK_EQ_STR(json_string_value(json_array_get(ops, 0)), "aten::add");
    CHECK_EQ_STR(json_string_value(json_array_get(ops, 1)), "aten::mul");
    CHECK_EQ_INT(num(ch, "count"), 3);
    CHECK_EQ_INT(num(ch, "kernels_per_call"), 2);
    CHECK_EQ_INT(num(ch, "gpu_ns"), 12000);
    CHECK_EQ_INT(num(ch, "launch_ns"), 30000);
    CHECK(NEAR(num(ch, "avg_launch_delay_ns"), 2000.0)); /* 3 µs (add) and 1 µs (mul) after the launch ends */
    CHECK_EQ_INT(num(ch, "saving_ns"), 24000);

    CHECK_EQ_INT(num(fu, "candidates"), 2);
    CHECK_EQ_INT(num(fu, "saving_ns"), 104000);
    const char *adv = json_string_value(json_object_get(fu, "advice"));
    CHECK(adv && strstr(adv, "torch.compile") && strstr(adv, "aten::foo"));
    json_decref(doc);
}

int main(void)
{
    fixture_init();
    RUN(test_copy);
    RUN(test_overlap);
    RUN(test_annotations);
    RUN(test_fusion);
    fixture_done();
    return harness_done("analyses_gpu");
}

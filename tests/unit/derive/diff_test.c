/* diff_test — comparing two runs (server/derive/diff.c) on crafted traces imported
 * through the real pipeline (rules_fixture.h), with hand-computed figures:
 *
 *   A, per step (2 steps of 1000 µs): aten::mm -> GEMM "sm80_xmma_gemm_f32f32_ffma" 400 µs,
 *      aten::relu -> elementwise kernel 100 µs, aten::sum -> reduce kernel 50 µs.
 *   B, per step (2 steps of 500 µs): aten::mm -> "nvjet_sm90_tst_gemm" 100 µs,
 *      aten::relu -> the same elementwise kernel, now 200 µs, aten::sum -> reduce 50 µs,
 *      and aten::add (host only, new).
 *
 * So: speedup 2.0; kernel time per step 550 -> 350 µs; kernels by name:
 * the xmma GEMM removed, nvjet added, elementwise slower (ratio 2), reduce
 * same; by family GEMM 400 -> 100 faster; operators (device self time):
 * mm faster, relu slower, sum same, add added. */
#include "rules_fixture.h"

#include <math.h>

#include "derive/diff.h"

#define K_XMMA "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_ffma"
#define K_NVJET "nvjet_sm90_tst_256x128_h_bz_NNT"
#define K_ELEM "void at::native::vectorized_elementwise_kernel<4, at::native::relu>(int)"
#define K_RED "void at::native::reduce_kernel<128, 4>(float)"

#define OP(name, ts, dur) CPU("cpu_op", name, ts, dur, "")

/* One step of A: step start, op/launch/kernel start times (µs literals). */
#define A_STEP(n, t0, c1, c2, c3, m, l1, g0, r, l2, g1, su, l3, g2)                                     \
    STEP(n, t0, 1000) "," OP("aten::mm", m, 100) "," LAUNCH(c1, l1, 5) "," KERNEL(K_XMMA, c1, g0, 400) "," \
    OP("aten::relu", r, 50) "," LAUNCH(c2, l2, 5) "," KERNEL(K_ELEM, c2, g1, 100) ","                    \
    OP("aten::sum", su, 50) "," LAUNCH(c3, l3, 5) "," KERNEL(K_RED, c3, g2, 50)

#define TRACE_A                                                                                         \
    A_STEP(1, 0, 1, 2, 3, 10, 20, 300, 150, 160, 750, 230, 240, 900) ","                                \
    A_STEP(2, 1000, 4, 5, 6, 1010, 1020, 1300, 1150, 1160, 1750, 1230, 1240, 1900)

#define B_STEP(n, t0, c1, c2, c3, m, l1, g0, r, l2, g1, su, l3, g2, add)                                \
    STEP(n, t0, 500) "," OP("aten::mm", m, 100) "," LAUNCH(c1, l1, 5) "," KERNEL(K_NVJET, c1, g0, 100) "," \
    OP("aten::relu", r, 50) "," LAUNCH(c2, l2, 5) "," KERNEL(K_ELEM, c2, g1, 200) ","                    \
    OP("aten::sum", su, 20) "," LAUNCH(c3, l3, 5) "," KERNEL(K_RED, c3, g2, 50) "," OP("aten::add", add, 20)

#define TRACE_B                                                                                         \
    B_STEP(1, 0, 1, 2, 3, 10, 20, 120, 150, 160, 230, 210, 215, 440, 300) ","                           \
    B_STEP(2, 500, 4, 5, 6, 510, 520, 620, 650, 660, 730, 710, 715, 940, 800)

/* Imports one run of the given rank files; returns its run.db path (owned). */
static char *import(const char *const *events, int n)
{
    struct err e;
    struct ingest_file files[4];
    char *paths[4], id[CATALOG_ID_LEN + 1], *out = NULL;

    for (int i = 0; i < n; i++) {
        paths[i] = fixture_write(DEV_H100, "", events[i], i);
        files[i] = (struct ingest_file){ paths[i], paths[i], 0 };
    }
    struct ingest_request req = { NULL, files, n, NULL };
    if (ingest_run(fixture_cat, &fixture_cfg, &req, NULL, id, &e) != 0) fprintf(stderr, "import: %s\n", e.msg);
    else out = xasprintf("%s/runs/%s/run.db", fixture_root, id);
    for (int i = 0; i < n; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    return out;
}

static char *db_a, *db_b, *db_ab;

static int near(json_t *v, double want)
{
    return json_is_number(v) && fabs(json_number_value(v) - want) < 1e-6;
}

/* The row called name in a diff_table answer (borrowed), or NULL. */
static json_t *row(json_t *t, const char *name)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(t, "rows"), i, r)
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0) return r;
    return NULL;
}

static json_t *table(struct diff *d, struct diff_query q)
{
    struct err e;
    json_t *t = NULL;
    if (q.limit == 0) q.limit = 100;
    if (q.threshold == 0) q.threshold = DIFF_THRESHOLD_DEFAULT;
    if (diff_table(d, &q, &t, &e) != 0) fprintf(stderr, "diff_table: %s\n", e.msg);
    return t;
}

static void test_overview(void)
{
    struct diff *d;
    struct err e;
    json_t *o;

    REQUIRE(diff_open(db_a, -1, db_b, -1, &d, &e) == 0);
    REQUIRE(diff_overview(d, DIFF_THRESHOLD_DEFAULT, &o, &e) == 0);
    json_t *a = json_object_get(o, "a"), *b = json_object_get(o, "b");
    CHECK_EQ_INT(json_integer_value(json_object_get(a, "steps")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(b, "steps")), 2);
    CHECK(near(json_object_get(json_object_get(a, "average"), "dur_us"), 1000.0));
    CHECK(near(json_object_get(json_object_get(b, "average"), "dur_us"), 500.0));
    CHECK(near(json_object_get(o, "speedup"), 2.0));
    CHECK(near(json_object_get(json_object_get(json_object_get(a, "average"), "breakdown_us"), "kernel"), 550.0));
    CHECK(near(json_object_get(json_object_get(json_object_get(b, "average"), "breakdown_us"), "kernel"), 350.0));
    json_t *delta = json_object_get(o, "delta");
    CHECK(near(json_object_get(delta, "dur_us"), -500.0));
    CHECK(near(json_object_get(json_object_get(delta, "breakdown_us"), "kernel"), -200.0));
    CHECK(near(json_object_get(a, "kernel_us"), 550.0));
    CHECK(near(json_object_get(delta, "kernel_us"), -200.0));
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(a, "device"), "name")), "NVIDIA H100 80GB HBM3");
    json_t *kc = json_object_get(o, "kernels");
    CHECK_EQ_INT(json_integer_value(json_object_get(kc, "added")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(kc, "removed")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(kc, "slower")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(kc, "same")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(kc, "faster")), 0);
    json_t *fc = json_object_get(o, "kernel_families");
    CHECK_EQ_INT(json_integer_value(json_object_get(fc, "faster")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(fc, "added")), 0);
    json_decref(o);
    diff_close(d);
}

static void test_kernels(void)
{
    struct diff *d;
    struct err e;

    REQUIRE(diff_open(db_a, -1, db_b, -1, &d, &e) == 0);
    json_t *t = table(d, (struct diff_query){ .kind = DIFF_KERNELS, .per_step = 1, .desc = 1 });
    REQUIRE(t != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(t, "total")), 4);
    /* Sorted by |delta| descending: the removed GEMM first. */
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "name")), K_XMMA);
    json_t *r = row(t, K_XMMA);
    REQUIRE(r != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(r, "status")), "removed");
    CHECK(near(json_object_get(r, "a_us"), 400.0));
    CHECK(json_is_null(json_object_get(r, "b_us")));
    CHECK(near(json_object_get(r, "delta_us"), -400.0));
    CHECK(near(json_object_get(r, "a_calls"), 1.0));
    CHECK(json_is_null(json_object_get(r, "ratio")));
    r = row(t, K_NVJET);
    REQUIRE(r != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(r, "status")), "added");
    CHECK(near(json_object_get(r, "b_us"), 100.0));
    CHECK(json_is_true(json_object_get(r, "tensor_cores")));
    r = row(t, K_ELEM);
    REQUIRE(r != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(r, "status")), "slower");
    CHECK(near(json_object_get(r, "ratio"), 2.0));
    CHECK(near(json_object_get(r, "delta_us"), 100.0));
    r = row(t, K_RED);
    REQUIRE(r != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(r, "status")), "same");
    CHECK(near(json_object_get(r, "ratio"), 1.0));
    json_decref(t);

    /* Totals instead of per step. */
    t = table(d, (struct diff_query){ .kind = DIFF_KERNELS, .per_step = 0, .desc = 1 });
    CHECK(near(json_object_get(row(t, K_XMMA), "a_us"), 800.0));
    CHECK(near(json_object_get(row(t, K_XMMA), "a_calls"), 2.0));
    json_decref(t);

    /* Status filter, name filter, sort by name and paging. */
    t = table(d, (struct diff_query){ .kind = DIFF_KERNELS, .per_step = 1,
                                      .status_mask = 1u << DIFF_ADDED | 1u << DIFF_REMOVED });
    CHECK_EQ_INT(json_integer_value(json_object_get(t, "total")), 2);
    CHECK_EQ_INT(json_array_size(json_object_get(t, "rows")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(t, "counts"), "same")), 1);
    json_decref(t);
    t = table(d, (struct diff_query){ .kind = DIFF_KERNELS, .per_step = 1, .q = "GEMM" });
    CHECK_EQ_INT(json_integer_value(json_object_get(t, "total")), 1); /* case-insensitive: the xmma one */
    json_decref(t);
    t = table(d, (struct diff_query){ .kind = DIFF_KERNELS, .per_step = 1, .q = "%" });
    CHECK_EQ_INT(json_integer_value(json_object_get(t, "total")), 0); /* literal, not a wildcard */
    json_decref(t);
    t = table(d, (struct diff_query){ .kind = DIFF_KERNELS, .per_step = 1, .sort = 3, .desc = 0, .offset = 1,
                                      .limit = 2 });
    CHECK_EQ_INT(json_integer_value(json_object_get(t, "total")), 4);
    CHECK_EQ_INT(json_array_size(json_object_get(t, "rows")), 2);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "name")), K_XMMA);
    json_decref(t);

    /* A threshold of 150 %: the 2x slower kernel becomes "same". */
    t = table(d, (struct diff_query){ .kind = DIFF_KERNELS, .per_step = 1, .threshold = 1.5 });
    CHECK_EQ_STR(json_string_value(json_object_get(row(t, K_ELEM), "status")), "same");
    json_decref(t);

    /* Families: the GEMMs meet. */
    t = table(d, (struct diff_query){ .kind = DIFF_KERNELS, .family = 1, .per_step = 1, .desc = 1 });
    r = row(t, "GEMM");
    REQUIRE(r != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(r, "status")), "faster");
    CHECK(near(json_object_get(r, "a_us"), 400.0));
    CHECK(near(json_object_get(r, "b_us"), 100.0));
    CHECK(near(json_object_get(r, "ratio"), 0.25));
    CHECK_EQ_INT(json_integer_value(json_object_get(t, "total")), 3);
    json_decref(t);
    diff_close(d);
}

static void test_operators(void)
{
    struct diff *d;
    struct err e;

    REQUIRE(diff_open(db_a, -1, db_b, -1, &d, &e) == 0);
    json_t *t = table(d, (struct diff_query){ .kind = DIFF_OPERATORS, .per_step = 1, .desc = 1 });
    REQUIRE(t != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(t, "metric")), "device_self");
    CHECK_EQ_STR(json_string_value(json_object_get(row(t, "aten::mm"), "status")), "faster");
    CHECK(near(json_object_get(row(t, "aten::mm"), "a_us"), 400.0));
    CHECK(near(json_object_get(row(t, "aten::mm"), "b_us"), 100.0));
    CHECK_EQ_STR(json_string_value(json_object_get(row(t, "aten::relu"), "status")), "slower");
    CHECK_EQ_STR(json_string_value(json_object_get(row(t, "aten::sum"), "status")), "same");
    CHECK_EQ_STR(json_string_value(json_object_get(row(t, "aten::add"), "status")), "added");
    CHECK(json_is_null(json_object_get(row(t, "aten::add"), "a_calls")));
    CHECK(near(json_object_get(row(t, "aten::add"), "b_calls"), 1.0));
    json_decref(t);
    diff_close(d);
}

/* Two ranks of one run: the same file on both sides. */
static void test_ranks(void)
{
    struct diff *d;
    struct err e;
    json_t *o;

    REQUIRE(diff_open(db_ab, 1, db_ab, 0, &d, &e) == 0);
    CHECK_EQ_INT(diff_rank(d, 0), 1);
    CHECK_EQ_INT(diff_rank(d, 1), 0);
    REQUIRE(diff_overview(d, DIFF_THRESHOLD_DEFAULT, &o, &e) == 0);
    CHECK(near(json_object_get(o, "speedup"), 0.5));
    CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(o, "a"), "ranks")), 2);
    json_decref(o);
    diff_close(d);

    /* The same run against itself: nothing changed. */
    REQUIRE(diff_open(db_a, -1, db_a, -1, &d, &e) == 0);
    REQUIRE(diff_overview(d, DIFF_THRESHOLD_DEFAULT, &o, &e) == 0);
    CHECK(near(json_object_get(o, "speedup"), 1.0));
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(o, "kernels"), "same")), 3);
    json_decref(o);
    diff_close(d);
}

static void test_errors(void)
{
    struct diff *d = NULL;
    struct err e;
    unsigned mask;
    int sort;

    CHECK_EQ_INT(diff_open(db_a, 7, db_b, -1, &d, &e), ERR_NOT_FOUND);
    CHECK(d == NULL);
    CHECK(strstr(e.msg, "rank 7") != NULL);
    CHECK_EQ_INT(diff_open(db_a, -1, "/nonexistent/run.db", -1, &d, &e), ERR_NOT_FOUND);
    CHECK_EQ_INT(diff_open("/nonexistent/run.db", -1, db_b, -1, &d, &e), ERR_NOT_FOUND);
    CHECK_EQ_INT(diff_parse_status("added,slower", "status", &mask, &e), 0);
    CHECK_EQ_INT(mask, (1u << DIFF_ADDED) | (1u << DIFF_SLOWER));
    CHECK_EQ_INT(diff_parse_status("added,bogus", "status", &mask, &e), ERR_INVALID);
    CHECK(strstr(e.msg, "'status'") != NULL);
    CHECK_EQ_INT(diff_parse_sort("ratio", "sort", &sort, &e), 0);
    CHECK_EQ_STR(diff_sort_names[sort], "ratio");
    CHECK_EQ_INT(diff_parse_sort("name; DROP", "sort", &sort, &e), ERR_INVALID);
}

static void check_family(const char *name, const char *want)
{
    char *f = diff_kernel_family(name);
    CHECK_EQ_STR(f, want);
    free(f);
}

static void test_family(void)
{
    check_family(K_XMMA, "GEMM");
    check_family(K_NVJET, "GEMM");
    check_family("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nt_align1>(int)", "GEMM");
    check_family("void gemv2T_kernel_val<int, int, float>(float)", "GEMV");
    check_family("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "NCCL AllReduce");
    check_family("ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)", "NCCL AllGather");
    check_family("void cudnn::cnn::conv2d_grouped_direct_kernel<float>(int)", "convolution");
    check_family("flash_fwd_kernel<Flash_fwd_kernel_traits<128>>", "attention");
    check_family(K_ELEM, "vectorized_elementwise_kernel");
    check_family("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::X>(int)",
                 "multi_tensor_apply_kernel");
    check_family("Memset", "Memset");
}

int main(void)
{
    const char *a[] = { TRACE_A }, *b[] = { TRACE_B }, *ab[] = { TRACE_A, TRACE_B };

    fixture_init();
    db_a = import(a, 1);
    db_b = import(b, 1);
    db_ab = import(ab, 2);
    if (!db_a || !db_b || !db_ab) return 1;
    RUN(test_overview);
    RUN(test_kernels);
    RUN(test_operators);
    RUN(test_ranks);
    RUN(test_errors);
    RUN(test_family);
    free(db_a);
    free(db_b);
    free(db_ab);
    fixture_done();
    return harness_done("diff");
}

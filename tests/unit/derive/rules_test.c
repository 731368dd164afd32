/* rules_test — the rule engine (ordering, storage, switches, thresholds from
 * the config) and the input and precision rules (dataloader_bound,
 * enable_amp) on crafted traces, each made to fire and not to fire. The
 * other rules have their own rules_<group>_test.c; the real traces are
 * checked in rules_golden_test.c. */
#include "rules_fixture.h"

#include <math.h>

/* Two steps of 100 µs: DataLoader 70 µs of each, one 10 µs kernel. */
#define INPUT_BOUND                                                                                     \
    STEP(1, 0, 100) "," CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 5, 70, \
                            "") ","                                                                     \
    LAUNCH(1, 80, 5) "," KERNEL("k", 1, 86, 10) "," STEP(2, 100, 100) ","                               \
    CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 105, 70, "") "," \
    LAUNCH(2, 180, 5) "," KERNEL("k", 2, 186, 10)

/* The same steps with the loader taking 3 µs of 100 (3 %). */
#define INPUT_FINE                                                                                      \
    STEP(1, 0, 100) "," CPU("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 2, 3, \
                            "") ","                                                                     \
    CPU("cpu_op", "aten::mm", 6, 90, "") "," LAUNCH(1, 10, 5) "," KERNEL("k", 1, 16, 80) ","            \
    STEP(2, 100, 100) ","                                                                               \
    CPU("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 102, 3, "") "," \
    CPU("cpu_op", "aten::mm", 106, 90, "") "," LAUNCH(2, 110, 5) "," KERNEL("k", 2, 116, 80)

static void test_dataloader_bound(void)
{
    json_t *f = fixture_findings(DEV_H100, INPUT_BOUND);
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "dataloader_bound", 0);
    if (!d) fixture_dump(f);
    REQUIRE(d != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(d, "severity")), "high");
    json_t *ev = json_object_get(d, "evidence");
    CHECK(fabs(json_number_value(json_object_get(ev, "share_pct")) - 70.0) < 0.01);
    CHECK(json_is_true(json_object_get(ev, "single_process")));
    CHECK(strstr(json_string_value(json_array_get(json_object_get(ev, "lines"), 0)), "70 µs of a 100 µs step (70 %)") !=
          NULL);
    CHECK(fabs(json_number_value(json_object_get(d, "saving_us")) - 70.0) < 0.01);
    /* the link opens the timeline on the worst step */
    CHECK(strstr(json_string_value(json_object_get(d, "link")), "view=timeline&rank=0&start=") != NULL);
    CHECK(json_is_string(json_object_get(d, "snippet")));
    CHECK(strstr(json_string_value(json_object_get(d, "snippet")), "num_workers") != NULL);
    CHECK(strncmp(json_string_value(json_object_get(d, "doc_url")), "https://", 8) == 0);
    json_decref(f);

    f = fixture_findings(DEV_H100, INPUT_FINE);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "dataloader_bound", -1));
    json_decref(f);
}

/* Config: a threshold moves the line; rules_off switches a rule off. */
static void test_thresholds_and_switches(void)
{
    struct config keep = fixture_cfg;
    struct err e;
    REQUIRE(config_set(&fixture_cfg, "rule_dataloader_pct", "2", &e) == 0);
    json_t *f = fixture_findings(DEV_H100, INPUT_FINE);
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "dataloader_bound", 0);
    CHECK(d != NULL);
    if (d) CHECK_EQ_STR(json_string_value(json_object_get(d, "severity")), "medium");
    json_decref(f);
    fixture_cfg = keep;

    REQUIRE(config_set(&fixture_cfg, "rules_off", "enable_amp, dataloader_bound", &e) == 0);
    f = fixture_findings(DEV_H100, INPUT_BOUND);
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "dataloader_bound", -1));
    json_decref(f);
    fixture_cfg = keep;

    CHECK(config_set(&fixture_cfg, "rule_dataloader_pct", "-1", &e) != 0);
    CHECK(config_set(&fixture_cfg, "rule_dataloader_pct", "101", &e) != 0);
    CHECK(config_set(&fixture_cfg, "rule_dataloader_pct", "1e2", &e) != 0);
    CHECK(config_set(&fixture_cfg, "rules_off", "a;DROP", &e) != 0);
    fixture_cfg = keep;
}

/* 100 µs steps: aten::mm launches a 60 µs GEMM; on SIMT (FFMA) it asks for
 * AMP; on tensor cores (nvjet), or on a GPU without tensor cores, not. */
#define MATMUL_STEPS(kname)                                                                             \
    STEP(1, 0, 100) "," CPU("cpu_op", "aten::mm", 5, 20, "") "," LAUNCH(1, 10, 5) "," KERNEL(kname, 1, 20, 60) "," \
    STEP(2, 100, 100) "," CPU("cpu_op", "aten::mm", 105, 20, "") "," LAUNCH(2, 110, 5) ","              \
    KERNEL(kname, 2, 120, 60)
#define FFMA_GEMM "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel_trt"
#define NVJET_GEMM "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT"

static void test_enable_amp(void)
{
    json_t *f = fixture_findings(DEV_H100, MATMUL_STEPS(FFMA_GEMM));
    REQUIRE(f != NULL);
    json_t *a = fixture_get(f, "enable_amp", 0);
    if (!a) fixture_dump(f);
    REQUIRE(a != NULL);
    json_t *ev = json_object_get(a, "evidence");
    CHECK(fabs(json_number_value(json_object_get(ev, "eligible_pct")) - 100.0) < 0.01);
    CHECK(fabs(json_number_value(json_object_get(ev, "tensor_core_pct"))) < 0.01);
    CHECK_EQ_STR(fixture_severity(a), "high");
    /* half the GEMM time per step */
    CHECK(fabs(fixture_estimate(a) - 30.0) < 0.01);
    /* no backward pass in the trace: inference advice (rules_model_test
     * covers training and the GPU generations) */
    CHECK(strstr(json_string_value(json_object_get(a, "snippet")), "torch.inference_mode") != NULL);
    CHECK(strstr(json_string_value(json_object_get(a, "link")), "view=kernels") != NULL);
    json_decref(f);

    f = fixture_findings(DEV_H100, MATMUL_STEPS(NVJET_GEMM));
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "enable_amp", -1));
    json_decref(f);

    /* a SIMT GEMM of 2 µs in a 100 µs step: the step is not the GPU's */
    f = fixture_findings(DEV_H100, STEP(1, 0, 100) "," CPU("cpu_op", "aten::mm", 5, 20, "") "," LAUNCH(1, 10, 5) ","
                         KERNEL(FFMA_GEMM, 1, 20, 2) "," STEP(2, 100, 100) "," CPU("cpu_op", "aten::mm", 105, 20, "")
                         "," LAUNCH(2, 110, 5) "," KERNEL(FFMA_GEMM, 2, 120, 2));
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "enable_amp", -1));
    json_decref(f);

    f = fixture_findings(DEV_P40, MATMUL_STEPS(FFMA_GEMM));
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "enable_amp", -1));
    json_decref(f);
}

/* Conversions at 25 % of kernel time, but 0.2 % of a 10 ms step spent
 * mostly on the host: no layout advice (it could not shorten the step). */
static void test_layout_sliver(void)
{
#define NCHW2NHWC_K "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)0>()"
    json_t *f = fixture_findings(DEV_H100, STEP(1, 0, 10000) "," CPU("cpu_op", "aten::cudnn_convolution", 5, 20, "") ","
                                 LAUNCH(1, 6, 3) "," KERNEL(NCHW2NHWC_K, 1, 10, 20) "," LAUNCH(2, 12, 3) ","
                                 KERNEL("sm90_xmma_fprop_implicit_gemm_tf32f32_nhwc", 2, 30, 60));
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "layout_transposes", -1));
    json_decref(f);
}

/* A first step ten times the others (JIT compilation) is left out: the
 * input-bound first step does not make the steady steps input-bound. */
static void test_warmup_step_left_out(void)
{
    json_t *f = fixture_findings(DEV_H100, STEP(1, 0, 1000) ","
                                 CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 5,
                                     900, "") ","
                                 LAUNCH(1, 950, 5) "," KERNEL("k", 1, 960, 30) ","
                                 STEP(2, 1000, 100) "," CPU("cpu_op", "aten::mm", 1005, 90, "") "," LAUNCH(2, 1010, 5) ","
                                 KERNEL("k", 2, 1016, 80) "," STEP(3, 1100, 100) "," CPU("cpu_op", "aten::mm", 1105, 90, "")
                                 "," LAUNCH(3, 1110, 5) "," KERNEL("k", 3, 1116, 80));
    REQUIRE(f != NULL);
    CHECK(!fixture_has(f, "dataloader_bound", -1));
    json_decref(f);
    /* the same first step among steps of its own size is analysed */
    f = fixture_findings(DEV_H100, STEP(1, 0, 1000) ","
                         CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 5, 900, "")
                         "," LAUNCH(1, 950, 5) "," KERNEL("k", 1, 960, 30) "," STEP(2, 1000, 1000) ","
                         CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1005, 900, "")
                         "," LAUNCH(2, 1950, 5) "," KERNEL("k", 2, 1960, 30) "," STEP(3, 2000, 1000) ","
                         CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 2005, 900, "")
                         "," LAUNCH(3, 2950, 5) "," KERNEL("k", 3, 2960, 30));
    REQUIRE(f != NULL);
    json_t *d = fixture_get(f, "dataloader_bound", 0);
    CHECK(d != NULL);
    if (d) CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(d, "evidence"), "steps")), 3);
    json_decref(f);
}

/* Findings come out ordered by the time they could save, are stored with
 * the run and survive a second read; the text fields hold no NULs. */
static void test_order_and_storage(void)
{
    /* input-bound (saves ~70 µs) and a SIMT GEMM (saves ~5 µs) */
    json_t *f = fixture_findings(DEV_H100, STEP(1, 0, 100) ","
                                 CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
                                     5, 70, "") ","
                                 CPU("cpu_op", "aten::mm", 78, 8, "") "," LAUNCH(1, 80, 5) ","
                                 KERNEL(FFMA_GEMM, 1, 86, 10));
    REQUIRE(f != NULL);
    REQUIRE(json_array_size(f) >= 2);
    double prev = INFINITY;
    size_t i;
    json_t *x;
    json_array_foreach(f, i, x) {
        double s = json_number_value(json_object_get(x, "saving_us"));
        CHECK(s <= prev);
        prev = s;
        CHECK(json_is_string(json_object_get(x, "title")));
        CHECK(json_is_string(json_object_get(x, "advice")));
        CHECK(json_is_array(json_object_get(json_object_get(x, "evidence"), "lines")));
    }
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(f, 0), "id")), "dataloader_bound");
    json_decref(f);
}

/* Rules run aside (on a scratch database with the run attached, as the
 * ingest's second thread does) store the findings they store in place:
 * rules_adopt copies them over the run's own, which it replaces. */
static void test_aside(void)
{
    struct err e;
    const char *ev = STEP(1, 0, 100) ","
                     CPU("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 5, 70, "")
                     "," CPU("cpu_op", "aten::mm", 78, 8, "") "," LAUNCH(1, 80, 5) "," KERNEL(FFMA_GEMM, 1, 86, 10);
    char *dbp = fixture_import(DEV_H100, "", &ev, 1);
    REQUIRE(dbp != NULL);
    char *scratch = xasprintf("%s.aside", dbp);
    sqlite3 *db, *sc;
    json_t *before = NULL, *after = NULL;
    REQUIRE(sqlite3_open(dbp, &db) == SQLITE_OK);
    REQUIRE(rules_findings(db, -1, &before, &e) == 0);
    REQUIRE(json_array_size(before) >= 2);
    /* the run's own findings, garbled: adopt must replace them, not add */
    REQUIRE(sqlite3_exec(db, "UPDATE finding SET body = '{}'; INSERT INTO finding SELECT * FROM finding", NULL, NULL,
                         NULL) == SQLITE_OK);
    REQUIRE(rundb_open_aside(dbp, scratch, NULL, &sc, &e) == 0);
    CHECK_EQ_INT(rules_run(sc, &fixture_cfg.rules, &e), 0);
    sqlite3_close(sc);
    REQUIRE(rundb_attach_aside(db, scratch, &e) == 0);
    CHECK_EQ_INT(rules_adopt(db, &e), 0);
    CHECK_EQ_INT(rundb_detach_aside(db, &e), 0);
    REQUIRE(rules_findings(db, -1, &after, &e) == 0);
    CHECK(json_equal(before, after));
    sqlite3_close(db);
    unlink(scratch);
    json_decref(before);
    json_decref(after);
    free(scratch);
    free(dbp);
}

static void test_formatting(void)
{
    char b[32];
    CHECK_EQ_STR(rules_fmt_ns(129.7e6, b, sizeof b), "129.7 ms");
    CHECK_EQ_STR(rules_fmt_ns(2.5e6, b, sizeof b), "2.50 ms");
    CHECK_EQ_STR(rules_fmt_ns(850e3, b, sizeof b), "850 µs");
    CHECK_EQ_STR(rules_fmt_ns(1.5e9, b, sizeof b), "1.50 s");
    CHECK_EQ_STR(rules_fmt_bytes(2.0 * 1024 * 1024 * 1024, b, sizeof b), "2.0 GiB");
    CHECK_EQ_STR(rules_fmt_bytes(640 * 1024, b, sizeof b), "640 KiB");
    CHECK_EQ_STR(rules_fmt_bytes(12, b, sizeof b), "12 B");
}

int main(void)
{
    fixture_init();
    RUN(test_dataloader_bound);
    RUN(test_thresholds_and_switches);
    RUN(test_enable_amp);
    RUN(test_layout_sliver);
    RUN(test_warmup_step_left_out);
    RUN(test_order_and_storage);
    RUN(test_aside);
    RUN(test_formatting);
    fixture_done();
    return harness_done("rules");
}

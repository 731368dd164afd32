/* rules_golden_test — the recommendations on the real H100 traces of
 * ../shared/traces, against what each scenario was built to show
 * (facts.json): the findings it must get, and no finding outside the ones
 * the scenario justifies (every id a trace gets is listed below with the
 * reason it is right). Skipped when ../shared is absent. */
#include "rules_fixture.h"

#include <dirent.h>

struct scenario {
    const char *dir;
    const char *must[4];      /* ids that must fire */
    int must_rank[4];         /* their rank, -1: any or the run */
    const char *justified[8]; /* every id allowed to fire (must included) */
};

static const struct scenario scenarios[] = {
    /* num_workers=0, CPU-heavy Dataset: 96 % of the step waits for data, so
     * the GPU idles (low utilization, idle gaps with the host inside the
     * DataLoader); the loader also copies from pageable memory (the fix,
     * workers8, pins it). Layout conversions are 10 % of kernel time but
     * 0.1 % of the step: not worth a finding. */
    { "dataloader_workers0",
      { "dataloader_bound", "low_gpu_utilization" },
      { 0, 0 },
      { "dataloader_bound", "low_gpu_utilization", "gpu_idle_gaps", "pageable_memcpy" } },
    /* the fix: the loader is off the critical path; what is left is a small
     * CNN at batch 32, host-bound on launches, with cuDNN NCHW<->NHWC
     * conversions at 10 % of kernel time (3.6 % of the step) and memory to
     * spare for a larger batch */
    { "dataloader_workers8",
      { NULL },
      { 0 },
      { "kernel_launch_bound", "layout_transposes", "low_gpu_utilization", "low_gpu_memory" } },
    /* FP32 GEMMs on SIMT units with TF32 off; the GPU is 97 % busy */
    { "matmul_fp32_strict", { "enable_amp" }, { 0 }, { "enable_amp" } },
    /* the same under bf16 autocast: nvjet tensor-core GEMMs; the shorter
     * kernels leave 37 % of the profiled step waiting on launches, and the
     * foreach AdamW step is now 53 % of kernel time */
    { "matmul_amp", { "optimizer_dominated" }, { 0 }, { "kernel_launch_bound", "optimizer_dominated" } },
    /* DDP over gloo on GPUs; rank 2 sleeps 30 ms per step: the others wait
     * in gloo all-reduces (not gap findings of their own), rank 2's GPU
     * idles through its sleep; all four processes share the one H100 */
    { "ddp_gloo_4ranks",
      { "ddp_backend", "straggler", "low_gpu_utilization", "shared_gpu" },
      { -1, 2, 0, -1 },
      { "ddp_backend", "straggler", "communication_heavy", "low_gpu_utilization", "gpu_idle_gaps",
        "low_gpu_memory", "shared_gpu" } },
    /* Triton kernels of ~10 µs behind ~8 µs launches: launch-bound; the
     * compiled model leaves the (eager, foreach) AdamW step at 68 % of the
     * kernel time */
    { "torch_compile",
      { "kernel_launch_bound", "optimizer_dominated" },
      { 0, 0 },
      { "kernel_launch_bound", "optimizer_dominated", "low_gpu_utilization", "low_gpu_memory" } },
    /* 525 small ops per step in eager mode; an unfused AdamW step */
    { "transformer_with_stack",
      { "kernel_launch_bound" },
      { 0 },
      { "kernel_launch_bound", "gpu_idle_gaps", "low_gpu_utilization", "low_gpu_memory" } },
};

static json_t *import_dir(const char *dir)
{
    char *paths[16];
    struct err e;
    struct ingest_file files[16];
    char id[CATALOG_ID_LEN + 1];
    int n = 0;
    json_t *out = NULL;
    DIR *d = opendir(dir);
    struct dirent *de;
    if (!d) return NULL;
    while ((de = readdir(d)) != NULL && n < 16) {
        if (!strstr(de->d_name, ".pt.trace.json")) continue;
        paths[n] = xasprintf("%s/%s", dir, de->d_name);
        files[n] = (struct ingest_file){ paths[n], paths[n], 0 };
        n++;
    }
    closedir(d);
    struct ingest_request req = { NULL, files, n, NULL };
    if (n && ingest_run(fixture_cat, &fixture_cfg, &req, NULL, id, &e) == 0) {
        char *dbp = xasprintf("%s/runs/%s/run.db", fixture_root, id);
        sqlite3 *db;
        if (rundb_open_ro(dbp, &db, &e) == 0) {
            if (rules_findings(db, -1, &out, &e) != 0) out = NULL;
            sqlite3_close(db);
        }
        free(dbp);
    } else if (n) {
        fprintf(stderr, "%s: %s\n", dir, e.msg);
    }
    for (int i = 0; i < n; i++) free(paths[i]);
    return out;
}

static int in_list(const char *const *list, size_t n, const char *id)
{
    for (size_t i = 0; i < n && list[i]; i++)
        if (strcmp(list[i], id) == 0) return 1;
    return 0;
}

static void test_scenarios(void)
{
    const char *shared = harness_shared();
    for (size_t k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++) {
        const struct scenario *s = &scenarios[k];
        char *dir = xasprintf("%s/traces/%s", shared, s->dir);
        json_t *f = import_dir(dir);
        free(dir);
        CHECK(f != NULL);
        if (!f) continue;
        fprintf(stderr, "%s:\n", s->dir);
        fixture_dump(f);
        for (size_t i = 0; i < 4 && s->must[i]; i++) {
            int ok = fixture_has(f, s->must[i], s->must_rank[i]);
            if (!ok) fprintf(stderr, "FAIL: %s lacks %s (rank %d)\n", s->dir, s->must[i], s->must_rank[i]);
            CHECK(ok);
        }
        size_t i;
        json_t *x;
        json_array_foreach(f, i, x) {
            const char *id = json_string_value(json_object_get(x, "id"));
            int ok = in_list(s->justified, 8, id);
            if (!ok) fprintf(stderr, "FAIL: %s gets %s, which the scenario does not justify\n", s->dir, id);
            CHECK(ok);
        }
        json_decref(f);
    }
}

/* The straggler finding names rank 2, and only rank 2. */
static void test_straggler_is_rank2(void)
{
    char *dir = xasprintf("%s/traces/ddp_gloo_4ranks", harness_shared());
    json_t *f = import_dir(dir);
    free(dir);
    REQUIRE(f != NULL);
    size_t i, n = 0;
    json_t *x;
    json_array_foreach(f, i, x) {
        if (strcmp(json_string_value(json_object_get(x, "id")), "straggler") != 0) continue;
        n++;
        CHECK_EQ_INT(json_integer_value(json_object_get(x, "rank")), 2);
    }
    CHECK_EQ_INT(n, 1);
    /* ranks 0, 1 and 3 idle only inside collectives: the communication
     * findings cover them, no gap finding of their own */
    json_array_foreach(f, i, x) {
        if (strcmp(json_string_value(json_object_get(x, "id")), "gpu_idle_gaps") != 0) continue;
        CHECK_EQ_INT(json_integer_value(json_object_get(x, "rank")), 2);
    }
    json_decref(f);
}

int main(void)
{
    char *probe = xasprintf("%s/traces", harness_shared());
    DIR *d = opendir(probe);
    free(probe);
    if (!d) {
        printf("rules_golden: skipped (../shared/traces not found)\nrules_golden: 0 passed, 0 failed\n");
        return 0;
    }
    closedir(d);
    fixture_init();
    RUN(test_scenarios);
    RUN(test_straggler_is_rank2);
    fixture_done();
    return harness_done("rules_golden");
}

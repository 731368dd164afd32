/* analysis_golden_test — the analysis against real traces and published
 * figures:
 *  - every scenario in ../shared/traces: each step within 5 % of the
 *    wall-clock step time measured outside the profiler (facts.json);
 *  - the TensorBoard plugin's ResNet-50 sample: average breakdown, GPU
 *    utilization, SM efficiency and occupancy within 1 % of the plugin's own
 *    figures (anchors-tb-plugin-hta.md §1.13);
 *  - HTA's nccl_data: communication ≈ 15.6 ms per step (its 21 NCCL kernels);
 *  - FP32 FFMA GEMMs are not tensor-core work, nvjet GEMMs are.
 * Skips (with a line saying so) when ../shared is not there. */
#include "analysis.h"
#include "catalog.h"
#include "fsutil.h"
#include "harness.h"
#include "ingest.h"
#include "rundb.h"
#include "xmalloc.h"

#include <dirent.h>
#include <math.h>
#include <unistd.h>

static char root[] = "/tmp/tb_golden_XXXXXX";
static struct config cfg;
static struct catalog *cat;

/* Imports every *.json[.gz] file in dir (or the one file) as one run and
 * returns its report (owned by caller), NULL on failure. */
static json_t *analyse(const char *path, int whole_dir)
{
    struct err e;
    char *paths[16];
    struct ingest_file files[16];
    int n = 0;
    if (whole_dir) {
        DIR *d = opendir(path);
        struct dirent *de;
        if (!d) return NULL;
        while ((de = readdir(d)) != NULL && n < 16) {
            if (!strstr(de->d_name, ".json") || strcmp(de->d_name, "facts.json") == 0) continue;
            paths[n] = xasprintf("%s/%s", path, de->d_name);
            files[n].path = files[n].name = paths[n];
            files[n].owned = 0;
            n++;
        }
        closedir(d);
    } else {
        paths[0] = xstrdup(path);
        files[0].path = files[0].name = paths[0];
        files[0].owned = 0;
        n = 1;
    }
    json_t *rep = NULL;
    char id[CATALOG_ID_LEN + 1];
    struct ingest_request req = { NULL, files, n, NULL };
    if (n && ingest_run(cat, &cfg, &req, NULL, id, &e) == 0) {
        char *dbp = xasprintf("%s/runs/%s/run.db", root, id);
        sqlite3 *db;
        if (rundb_open_ro(dbp, &db, &e) == 0) {
            if (analysis_report(db, path, 50, &rep, &e) != 0) rep = NULL;
            sqlite3_close(db);
        }
        free(dbp);
    } else if (n) {
        fprintf(stderr, "%s: %s\n", path, e.msg);
    }
    for (int i = 0; i < n; i++) free(paths[i]);
    return rep;
}

static double avg_part(json_t *rank, const char *k)
{
    return json_number_value(json_object_get(json_object_get(json_object_get(rank, "average"), "breakdown_us"), k));
}

static int near(double got, double want, double rel)
{
    return fabs(got - want) <= rel * fabs(want);
}

static void test_step_times_match_wall_clock(void)
{
    char *dir = xasprintf("%s/traces", harness_shared());
    DIR *d = opendir(dir);
    struct dirent *de;
    int scenarios = 0;
    REQUIRE(d != NULL);
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char *sdir = xasprintf("%s/%s", dir, de->d_name);
        char *facts_path = xasprintf("%s/facts.json", sdir);
        json_t *facts = json_load_file(facts_path, 0, NULL);
        json_t *wall = json_object_get(facts, "step_wall_s");
        if (json_array_size(wall)) {
            json_t *rep = analyse(sdir, 1);
            CHECK(rep != NULL);
            json_t *rank;
            size_t ri;
            json_array_foreach(json_object_get(rep, "ranks"), ri, rank) {
                json_t *st;
                size_t si;
                CHECK(json_array_size(json_object_get(rank, "steps")) >= 3);
                json_array_foreach(json_object_get(rank, "steps"), si, st) {
                    const char *name = json_string_value(json_object_get(st, "name"));
                    const char *hash = strchr(name, '#');
                    REQUIRE(hash != NULL);
                    double want = json_number_value(json_array_get(wall, (size_t)atoi(hash + 1))) * 1e6;
                    double got = json_number_value(json_object_get(st, "dur_us"));
                    if (!near(got, want, 0.05)) {
                        fprintf(stderr, "%s rank %zu %s: %.1f us, wall clock %.1f us\n", de->d_name, ri, name, got,
                                want);
                        CHECK(0);
                    } else {
                        CHECK(1);
                    }
                }
            }
            json_decref(rep);
            scenarios++;
        }
        json_decref(facts);
        free(facts_path);
        free(sdir);
    }
    closedir(d);
    free(dir);
    CHECK(scenarios >= 6);
}

static void test_tb_plugin_sample(void)
{
    char *p = xasprintf("%s/corpus/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
                        harness_shared());
    json_t *rep = analyse(p, 0);
    free(p);
    REQUIRE(rep != NULL);
    json_t *r = json_array_get(json_object_get(rep, "ranks"), 0);
    /* the plugin's own figures (µs per step, 6 steps) */
    static const struct {
        const char *k;
        double v;
    } want[] = { { "kernel", 98589 },    { "memcpy", 1915 },    { "memset", 89 },      { "communication", 0 },
                 { "runtime", 2908 },    { "dataloader", 59262 }, { "cpu_exec", 13674 }, { "other", 1156 } };
    double total = json_number_value(json_object_get(json_object_get(r, "average"), "dur_us"));
    CHECK(near(total, 177592, 0.01));
    CHECK_EQ_INT(json_array_size(json_object_get(r, "steps")), 6);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        double got = avg_part(r, want[i].k);
        /* 1 % of the figure, or of the step for a figure of zero */
        int ok = want[i].v > 0 ? near(got, want[i].v, 0.01) : fabs(got) <= 0.01 * total;
        if (!ok) fprintf(stderr, "tb sample %s: %.1f, plugin %.1f\n", want[i].k, got, want[i].v);
        CHECK(ok);
    }
    CHECK(near(json_number_value(json_object_get(r, "gpu_utilization")), 0.555, 0.01));
    CHECK(near(json_number_value(json_object_get(r, "sm_efficiency")), 0.547, 0.01));
    CHECK(near(json_number_value(json_object_get(r, "achieved_occupancy")), 0.491, 0.01));
    json_decref(rep);
}

static void test_nccl_is_communication(void)
{
    char *p = xasprintf("%s/corpus/hta/tests/data/nccl_parser_config/nccl_data.json.gz", harness_shared());
    json_t *rep = analyse(p, 0);
    free(p);
    REQUIRE(rep != NULL);
    json_t *r = json_array_get(json_object_get(rep, "ranks"), 0);
    double comm = avg_part(r, "communication");
    fprintf(stderr, "nccl_data: communication %.1f us per step\n", comm);
    CHECK(near(comm, 15625, 0.05)); /* 46,876 µs of NCCL kernels over 3 steps */
    json_decref(rep);
}

/* Every kernel of the FP32 run's GEMMs is FFMA; AMP's are nvjet. */
static void test_tensor_cores_on_h100(void)
{
    char *p = xasprintf("%s/traces/matmul_fp32_strict", harness_shared());
    json_t *rep = analyse(p, 1);
    free(p);
    REQUIRE(rep != NULL);
    json_t *r = json_array_get(json_object_get(rep, "ranks"), 0), *k;
    size_t i;
    int gemms = 0;
    json_array_foreach(json_object_get(r, "top_kernels"), i, k) {
        const char *name = json_string_value(json_object_get(k, "name"));
        if (strstr(name, "gemm")) {
            gemms++;
            CHECK(!json_is_true(json_object_get(k, "tensor_cores")));
        }
    }
    CHECK(gemms >= 2);
    CHECK(json_number_value(json_object_get(r, "tensor_core_share")) == 0.0);
    json_decref(rep);

    p = xasprintf("%s/traces/matmul_amp", harness_shared());
    rep = analyse(p, 1);
    free(p);
    REQUIRE(rep != NULL);
    r = json_array_get(json_object_get(rep, "ranks"), 0);
    int nvjet = 0;
    json_array_foreach(json_object_get(r, "top_kernels"), i, k) {
        const char *name = json_string_value(json_object_get(k, "name"));
        if (strncmp(name, "nvjet", 5) == 0) {
            nvjet++;
            CHECK(json_is_true(json_object_get(k, "tensor_cores")));
        }
    }
    CHECK(nvjet >= 2);
    CHECK(json_number_value(json_object_get(r, "tensor_core_share")) > 0.2);
    json_decref(rep);
}

static void test_dataloader_bound(void)
{
    char *p = xasprintf("%s/traces/dataloader_workers0", harness_shared());
    json_t *rep = analyse(p, 1);
    free(p);
    REQUIRE(rep != NULL);
    json_t *r = json_array_get(json_object_get(rep, "ranks"), 0);
    double dl = avg_part(r, "dataloader");
    double total = json_number_value(json_object_get(json_object_get(r, "average"), "dur_us"));
    CHECK(dl / total > 0.9);
    json_decref(rep);
}

int main(void)
{
    struct err e;
    char *probe = xasprintf("%s/traces", harness_shared());
    if (access(probe, R_OK) != 0) {
        printf("analysis_golden: skipped (%s not found; set TB_SHARED)\n", probe);
        free(probe);
        return 0;
    }
    free(probe);
    if (!mkdtemp(root)) return 1;
    config_defaults(&cfg);
    snprintf(cfg.data_dir, sizeof cfg.data_dir, "%s", root);
    cfg.keep_sources = 0;
    if (catalog_open(root, &cat, &e) != 0) return 1;
    RUN(test_step_times_match_wall_clock);
    RUN(test_tb_plugin_sample);
    RUN(test_nccl_is_communication);
    RUN(test_tensor_cores_on_h100);
    RUN(test_dataloader_bound);
    catalog_close(cat);
    fsutil_rmtree(root, &e);
    return harness_done("analysis_golden");
}

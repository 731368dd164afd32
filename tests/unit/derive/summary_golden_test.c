/* summary_golden_test — the summary tables against real traces and published
 * figures:
 *  - every scenario in ../shared/traces: each step within 5 % of the
 *    wall-clock step time measured outside the profiler (facts.json);
 *  - the TensorBoard plugin's ResNet-50 sample: average breakdown, GPU
 *    utilization, SM efficiency and occupancy within 1 % of the plugin's own
 *    figures (anchors-tb-plugin-hta.md §1.13);
 *  - HTA's nccl_data: communication ≈ 15.6 ms per step (its 21 NCCL kernels);
 *  - FP32 FFMA GEMMs are not tensor-core work, nvjet GEMMs are.
 * Skips (with a line saying so) when ../shared is not there. */
#include "base/fsutil.h"
#include "derive/summary.h"
#include "derive/summary_report.h"
#include "store/catalog.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "ingest/ingest.h"
#include "store/rundb.h"

#include <dirent.h>
#include <math.h>
#include <unistd.h>
#include <zlib.h>

static char root[] = "/tmp/tb_golden_XXXXXX";
static struct config cfg;
static struct catalog *cat;

/* Imports every *.json[.gz] file in dir (or the one file) as one run and
 * returns its report (owned by caller), NULL on failure. OUT *dbo (may be
 * NULL): the run database, open read-only, owned by caller. */
static json_t *analyse_db(const char *path, int whole_dir, sqlite3 **dbo)
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
            if (summary_report(db, path, 50, &rep, &e) != 0) rep = NULL;
            if (dbo) *dbo = db;
            else sqlite3_close(db);
        }
        free(dbp);
    } else if (n) {
        fprintf(stderr, "%s: %s\n", path, e.msg);
    }
    for (int i = 0; i < n; i++) free(paths[i]);
    return rep;
}

static json_t *analyse(const char *path, int whole_dir)
{
    return analyse_db(path, whole_dir, NULL);
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

/* Whole gzip file as bytes; owned by caller, NULL on error. */
static char *gz_slurp(const char *path, size_t *n)
{
    gzFile gz = gzopen(path, "rb");
    size_t cap = 1 << 20;
    int got;
    char *buf;
    if (!gz) return NULL;
    buf = xmalloc(cap);
    *n = 0;
    while ((got = gzread(gz, buf + *n, (unsigned)(cap - *n))) > 0) {
        *n += (size_t)got;
        if (*n == cap) buf = xrealloc(buf, cap *= 2);
    }
    gzclose(gz);
    return buf;
}

/* JAX 0.11's jit MLP (jax.profiler.trace, Perfetto JSON): the report
 * against a count made here with jansson from the file itself: kernels =
 * X events on the "/device:GPU:0" process not named Memcpy*, steps = host
 * events with a step_num arg (StepTraceAnnotation "train"). */
static void test_jax_mlp(void)
{
    char *dir = xasprintf("%s/traces/jax_mlp/plugins/profile", harness_shared()), *path = NULL;
    DIR *d = opendir(dir);
    struct dirent *de;
    REQUIRE(d != NULL);
    while (!path && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char *p = xasprintf("%s/%s/perfetto_trace.json.gz", dir, de->d_name);
        if (access(p, R_OK) == 0) path = p;
        else free(p);
    }
    closedir(d);
    free(dir);
    REQUIRE(path != NULL);

    size_t n;
    char *buf = gz_slurp(path, &n);
    REQUIRE(buf != NULL);
    json_error_t je;
    json_t *doc = json_loadb(buf, n, 0, &je), *ev;
    free(buf);
    REQUIRE(doc != NULL);
    json_int_t gpu_pid = -1;
    size_t i;
    long kernels = 0, steps = 0;
    double kernel_us = 0;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, ev) {
        const char *nm = json_string_value(json_object_get(ev, "name"));
        const char *pn = json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
        if (nm && pn && strcmp(nm, "process_name") == 0 && strcmp(pn, "/device:GPU:0") == 0)
            gpu_pid = json_integer_value(json_object_get(ev, "pid"));
    }
    json_array_foreach(json_object_get(doc, "traceEvents"), i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *nm = json_string_value(json_object_get(ev, "name"));
        if (!ph || strcmp(ph, "X") != 0 || !nm) continue;
        if (json_integer_value(json_object_get(ev, "pid")) == gpu_pid) {
            if (strncmp(nm, "Memcpy", 6) == 0) continue;
            kernels++;
            kernel_us += json_number_value(json_object_get(ev, "dur"));
        } else if (json_object_get(json_object_get(ev, "args"), "step_num")) {
            steps++;
        }
    }
    json_decref(doc);
    REQUIRE(gpu_pid >= 0);

    sqlite3 *db = NULL;
    json_t *rep = analyse_db(path, 0, &db);
    free(path);
    REQUIRE(rep != NULL && db != NULL);
    sqlite3_stmt *st;
    long stored = -1;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM slice s JOIN track t ON t.id=s.track WHERE t.kind=1 AND "
                               "t.device=0 AND s.kind=6", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) stored = (long)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    CHECK_EQ_INT(stored, kernels);

    json_t *r = json_array_get(json_object_get(rep, "ranks"), 0), *k, *s;
    long calls = 0;
    json_array_foreach(json_object_get(r, "top_kernels"), i, k) {
        calls += (long)json_integer_value(json_object_get(k, "calls"));
    }
    CHECK_EQ_INT(calls, kernels);
    json_t *g = json_array_get(json_object_get(r, "gpus"), 0);
    CHECK_EQ_INT(json_array_size(json_object_get(r, "gpus")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(g, "device")), 0);
    CHECK(near(json_number_value(json_object_get(g, "kernel_us")), kernel_us, 1e-6));
    double util = json_number_value(json_object_get(r, "gpu_utilization"));
    CHECK(util > 0.0 && util < 1.0);
    CHECK_EQ_INT(json_array_size(json_object_get(r, "steps")), steps);
    json_array_foreach(json_object_get(r, "steps"), i, s) {
        char want[32];
        snprintf(want, sizeof want, "train#%zu", i);
        CHECK_EQ_STR(json_string_value(json_object_get(s, "name")), want);
        /* each step ran the same jitted work on the GPU */
        CHECK(json_number_value(json_object_get(json_object_get(s, "breakdown_us"), "kernel")) > 400);
    }
    fprintf(stderr, "jax_mlp: %ld kernels, %.1f us, %ld steps, GPU utilization %.3f\n", kernels, kernel_us, steps, util);
    json_decref(rep);
}

int main(void)
{
    struct err e;
    char *probe = xasprintf("%s/traces", harness_shared());
    if (access(probe, R_OK) != 0) {
        printf("summary_golden: skipped (%s not found; set TB_SHARED)\n", probe);
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
    RUN(test_jax_mlp);
    catalog_close(cat);
    fsutil_rmtree(root, &e);
    return harness_done("summary_golden");
}

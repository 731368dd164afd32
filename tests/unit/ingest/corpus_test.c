/* corpus_test.c — every public trace in ../shared/corpus either imports or
 * is refused with the right message, as the table below states for each
 * file; every project trace in ../shared/traces imports. For imported files
 * the event count equals MANIFEST.md's "events" column (traceEvents
 * entries), the [memory] and kernel counts match its columns, the stats add
 * up (slices+flows+instants+counters+mems+metadata+dropped == events), and
 * the slice tree is consistent. The 8 DLRM ranks are also imported as one
 * 8-rank run.
 *
 * When the shared folder is missing the test says so and passes, unless
 * TB_REQUIRE_SHARED=1 (then it fails). */
#include <dirent.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "ingest/importer.h"
#include "store/rundb.h"
#include "store/rundb_writer.h"

/* loads: 1 = imports with exactly `events` events (and `mems` [memory]
 * events, `kernels` kernel slices); 0 = refused (ERR_UNSUPPORTED) with a
 * message containing `refusal`. Counts are MANIFEST.md's columns. */
struct expect {
    const char *path; /* relative to corpus/ or traces/ */
    int loads;
    long events, mems, kernels;
    const char *refusal;
};

static const struct expect corpus[] = {
    { "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz", 1, 82276, 0, 9538, NULL },
    { "kineto/tb_plugin/samples/resnet50_profiler_api_num_workers_0/worker0.pt.trace.json.gz", 1, 73639, 0, 9564, NULL },
    { "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz", 1, 75718, 12838, 8772, NULL },
    { "kineto/tb_plugin/samples/resnet50_autograd_api_num_workers_0/worker0.pt.trace.json.gz", 1, 79711, 0, 9329, NULL },
    { "kineto/tb_plugin/test/gpu_metrics_input.json", 1, 340, 0, 30, NULL },
    { "kineto/docs/traces/before_fix_trace.json", 1, 75, 0, 1, NULL },
    { "kineto/docs/traces/after_fix_trace.json", 1, 75, 0, 1, NULL },
    { "hta/tests/data/trace_filter/sampled_rank-0.json.gz", 1, 4855, 0, 1154, NULL },
    { "hta/tests/data/trace_filter/sampled_rank-1.json.gz", 1, 4720, 0, 1104, NULL },
    { "hta/tests/data/df_index_resolver/df_index_resolver.json.gz", 1, 216092, 28010, 19370, NULL },
    { "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 1, 68692, 0, 4350, NULL },
    { "hta/tests/data/nccl_parser_config/nccl_data.json.gz", 1, 40573, 0, 2700, NULL },
    { "hta/tests/data/negative_queue_length_values_check/rank0.json.gz", 1, 108936, 0, 6080, NULL },
    { "hta/tests/data/trace_diff/control/control.json.gz", 1, 109123, 0, 8568, NULL },
    { "hta/tests/data/trace_diff/test/test.json.gz", 1, 105167, 0, 9876, NULL },
    { "hta/tests/data/mtia_trace_single_rank/mtia_rank_0.json.gz", 1, 455739, 0, 0, NULL },
    { "hta/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz", 1, 16158, 0, 0, NULL },
    { "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 1, 220, 0, 14, NULL },
    { "hta/tests/data/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 1, 7604, 0, 0, NULL },
    { "hta/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz", 1, 4222, 0, 0, NULL },
    { "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 1, 1408, 0, 79, NULL },
    { "hta/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", 1, 149, 0, 3, NULL },
    { "hta/tests/data/critical_path/end_to_end/simple_add/output/overlaid_critical_path_trace.json.gz", 1, 1732, 0, 79, NULL },
    { "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz", 1, 1344, 0, 130, NULL },
    { "hta/tests/data/triton_example/triton_example.json.gz", 1, 71, 0, 1, NULL },
    { "hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz", 1, 2467, 0, 0, NULL },
    { "hta/tests/data/rank_unavailable/rank_not_found.json.gz", 1, 2467, 0, 0, NULL },
    { "hta/tests/data/distributed_info_unavailable/distributed_info_not_found.json.gz", 1, 2467, 0, 0, NULL },
    { "hta/tests/data/execution_trace/benchmark_simple_add_et.json.gz", 0, 0, 0, 0, "PyTorch execution trace" },
    { "hta/tests/data/execution_trace/benchmark_simple_add_trace.json.gz", 1, 111, 0, 4, NULL },
    { "hta/tests/data/memory_analysis/memory_timeline.raw.gz", 0, 0, 0, 0, "raw memory timeline" },
    { "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", 1, 2551, 236, 60, NULL },
    { "tracelens/tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz", 1, 2653, 236, 60, NULL },
    { "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 1, 18221, 2450, 1465, NULL },
    { "tracelens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 1, 18090, 2692, 1516, NULL },
    { "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz", 1, 132152, 13474, 4330, NULL },
    { "tracelens/tests/traces/b200/eager_trace.json.gz", 1, 24656, 0, 768, NULL },
    { "tracelens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz", 1, 2443, 0, 562, NULL },
    { "tracelens/tests/traces/torch_compile_triton/trace.json.gz", 1, 246, 0, 12, NULL },
    { "tracelens/tests/traces/mi300/ddp_resnet18_no_pool/train_resnet18.json.gz", 1, 29746, 210, 2360, NULL },
    { "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz", 1, 56451, 0, 2995, NULL },
    { "tracelens/tests/traces/inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz", 1, 2058, 0, 555, NULL },
    { "tracelens/tests/traces/inference/vllm_decode_full/graph_execution.json.gz", 1, 1993, 0, 425, NULL },
    { "tracelens/tests/traces/inference/vllm_decode_full/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz", 1, 131243, 1184, 7, NULL },
    { "tracelens/tests/rocprof/908_results.json.gz", 0, 0, 0, 0, "rocprofiler-sdk JSON" },
    { "tracelens/tests/traces/mi300/jax_conv_minimal_08/tw003.xplane.pb", 0, 0, 0, 0, "XPlane protobuf" },
    { "tracelens/tests/traces/mi300/jax_conv_minimal_legacy/chi-mi300x-013.ord.vultr.cpe.ice.amd.com.xplane.pb", 0, 0, 0, 0, "XPlane protobuf" },
    { "param/et_replay/tests/inputs/resnet_kineto.json.gz", 1, 111631, 0, 9628, NULL },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json", 1, 3290, 0, 245, NULL },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json", 1, 3424, 0, 310, NULL },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json", 1, 3268, 0, 246, NULL },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json", 1, 3474, 0, 315, NULL },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker4_step_12.1694128201547.pt.trace.json", 1, 3310, 0, 251, NULL },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker5_step_12.1694128201549.pt.trace.json", 1, 3250, 0, 245, NULL },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker6_step_12.1694128201553.pt.trace.json", 1, 3272, 0, 246, NULL },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker7_step_12.1694128201553.pt.trace.json", 1, 3250, 0, 246, NULL },
    { "deepseek_profile_data/train.json.gz", 1, 14240, 0, 963, NULL },
    { "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", 1, 99, 0, 5, NULL },
    { "pipit/pipit/tests/data/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite", 1, 4639, 0, 1312, NULL },
    { "tf_profiler/demo/plugins/profile/GPU-multi-worker/34.83.195.179_6003.xplane.pb", 0, 0, 0, 0, "XPlane protobuf" },
};

/* ../shared/traces: made for this project on an H100 (counts from Python's
 * json module: len(traceEvents)); kernels < 0 = not checked. */
static const struct expect traces[] = {
    { "dataloader_workers0/dataloader_workers0.1795344319821514665.pt.trace.json.gz", 1, 257393, -1, -1, NULL },
    { "dataloader_workers8/dataloader_workers8.1795344338874887746.pt.trace.json.gz", 1, 2393, -1, -1, NULL },
    { "ddp_gloo_4ranks/rank0.1795344527679083192.pt.trace.json.gz", 1, 1805, -1, -1, NULL },
    { "ddp_gloo_4ranks/rank1.1795344527678531866.pt.trace.json.gz", 1, 1805, -1, -1, NULL },
    { "ddp_gloo_4ranks/rank2.1795344527682144596.pt.trace.json.gz", 1, 1805, -1, -1, NULL },
    { "ddp_gloo_4ranks/rank3.1795344527681019308.pt.trace.json.gz", 1, 1805, -1, -1, NULL },
    { "jax_mlp/plugins/profile/2026_11_22_10_48_58/perfetto_trace.json.gz", 1, 9755, -1, -1, NULL },
    { "jax_mlp/plugins/profile/2026_11_22_10_48_58/vm.trace.json.gz", 1, 9755, -1, -1, NULL },
    { "matmul_amp/matmul_amp.1795344374941025894.pt.trace.json.gz", 1, 4981, -1, -1, NULL },
    { "matmul_fp32_strict/matmul_fp32_strict.1795344362151515179.pt.trace.json.gz", 1, 3661, -1, -1, NULL },
    { "torch_compile/torch_compile.1795344511011536605.pt.trace.json.gz", 1, 1609, -1, -1, NULL },
    { "transformer_with_stack/transformer_with_stack.1795344489086084483.pt.trace.json.gz", 1, 32924, -1, -1, NULL },
};

#define NCORPUS (sizeof corpus / sizeof corpus[0])
#define NTRACES (sizeof traces / sizeof traces[0])

static char tmpdir[] = "/tmp/corpus_test-XXXXXX";

/* ====================================================================== */
/* walking the shared folders                                             */

struct found {
    char **rel;
    size_t n, cap;
};

static void walk(const char *root, const char *rel, struct found *out)
{
    char *dir = rel[0] ? xasprintf("%s/%s", root, rel) : xstrdup(root);
    DIR *d = opendir(dir);
    struct dirent *de;
    if (!d) {
        free(dir);
        return;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char *r = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
        char *full = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
            walk(root, r, out);
            free(r);
        } else {
            if (out->n == out->cap) {
                out->cap = out->cap ? out->cap * 2 : 64;
                out->rel = xrealloc(out->rel, sizeof *out->rel * out->cap);
            }
            out->rel[out->n++] = r;
        }
        free(full);
    }
    closedir(d);
    free(dir);
}

static void found_free(struct found *f)
{
    for (size_t i = 0; i < f->n; i++) free(f->rel[i]);
    free(f->rel);
}

/* ====================================================================== */
/* one import                                                             */

/* What one file gave; filled by a worker thread, checked on the main one. */
struct outcome {
    const struct expect *x;
    char *path;
    int rc;
    char msg[512];
    struct tb_rank_stats st;
    /* from the database */
    long db_stats[8]; /* events slices flows instants counters mems metadata dropped, from rank.stats */
    long db_slices, db_flows, db_mems, db_kernels, bad_tree, neg_dur;
    double secs;
};

static long q_long(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "SQL error in %s: %s\n", sql, sqlite3_errmsg(db));
        return -2;
    }
    if (sqlite3_step(st) == SQLITE_ROW) v = (long)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void import_one(struct outcome *o, int idx)
{
    char *db = xasprintf("%s/run%d.db", tmpdir, idx);
    struct rundb_writer *w;
    struct err e;
    struct instream_limits lim = { 64ull << 30, 200, 0 };
    struct import_ctx ctx = { NULL, NULL, 64u << 20, NULL };
    struct timespec t0, t1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    o->rc = rundb_create(db, 64u << 20, tmpdir, &w, &e);
    if (o->rc == 0 && (o->rc = rundb_begin_rank(w, 0, o->x->path, fsutil_file_size(o->path), &e)) != 0) rundb_abort(w);
    else if (o->rc == 0 && (o->rc = importer_import_file(o->path, o->x->path, &lim, w, &ctx, &e)) != 0) rundb_abort(w);
    else if (o->rc == 0 && (o->rc = rundb_finish_rank(w, &o->st, &e)) != 0) rundb_abort(w);
    else if (o->rc == 0) o->rc = rundb_close_writer(w, &e);
    if (o->rc) snprintf(o->msg, sizeof o->msg, "%s", e.msg);
    sqlite3 *h;
    if (o->rc == 0 && rundb_open_ro(db, &h, &e) == 0) {
        static const char *keys[8] = { "events", "slices", "flows", "instants", "counters", "mems", "metadata", "dropped" };
        for (int k = 0; k < 8; k++) {
            char *sql = xasprintf("SELECT json_extract(stats,'$.%s') FROM rank", keys[k]);
            o->db_stats[k] = q_long(h, sql);
            free(sql);
        }
        o->db_slices = q_long(h, "SELECT count(*) FROM slice");
        o->db_flows = q_long(h, "SELECT count(*) FROM flow");
        o->db_mems = q_long(h, "SELECT count(*) FROM mem");
        o->db_kernels = q_long(h, "SELECT count(*) FROM slice WHERE kind=6"); /* TB_K_KERNEL */
        o->neg_dur = q_long(h, "SELECT count(*) FROM slice WHERE dur < 0");
        /* a child is on its parent's track and starts inside it, at
         * another level (deeper when wholly inside); no two slices of one
         * level overlap */
        o->bad_tree = q_long(h, "SELECT count(*) FROM slice c JOIN slice p ON p.id=c.parent WHERE p.track != c.track"
                                " OR c.depth = p.depth OR (c.depth < p.depth AND c.ts + c.dur <= p.ts + p.dur)"
                                " OR c.ts < p.ts OR c.ts >= p.ts + p.dur")
                      + q_long(h, "SELECT count(*) FROM (SELECT ts, lag(ts + dur) OVER (PARTITION BY track, depth"
                                  " ORDER BY ts, id) AS pe FROM slice) WHERE pe > ts");
        sqlite3_close(h);
    }
    unlink(db);
    free(db);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    o->secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

/* Imports run on a few threads: each has its own writer and database. */
struct pool {
    struct outcome *o;
    size_t n, next;
    pthread_mutex_t mu;
};

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n) return NULL;
        import_one(&p->o[i], (int)i);
    }
}

static void run_all(struct outcome *o, size_t n)
{
    struct pool p = { o, n, 0, PTHREAD_MUTEX_INITIALIZER };
    pthread_t th[4];
    int nth = 0;
    for (int i = 0; i < 4; i++)
        if (pthread_create(&th[i], NULL, worker, &p) == 0) nth++;
    if (nth == 0) worker(&p);
    for (int i = 0; i < nth; i++) pthread_join(th[i], NULL);
}

static void check_outcome(const struct outcome *o, const char *suite)
{
    const struct expect *x = o->x;
    char where[600];
    snprintf(where, sizeof where, "%s/%s", suite, x->path);
    harness_current = where;
    if (!x->loads) {
        CHECK_EQ_INT(o->rc, ERR_UNSUPPORTED);
        if (!strstr(o->msg, x->refusal)) fprintf(stderr, "  %s: refusal was: %s\n", x->path, o->msg);
        CHECK(strstr(o->msg, x->refusal) != NULL);
        CHECK(strstr(o->msg, x->path) != NULL); /* the message names the file */
        return;
    }
    if (o->rc != 0) fprintf(stderr, "  %s: import failed: %s\n", x->path, o->msg);
    REQUIRE(o->rc == 0);
    const struct tb_rank_stats *s = &o->st;
    CHECK_EQ_INT(s->events, x->events);
    CHECK_EQ_INT(s->slices + s->flows + s->instants + s->counters + s->mems + s->metadata + s->dropped, s->events);
    if (x->mems >= 0) CHECK_EQ_INT(s->mems, x->mems);
    if (x->kernels >= 0) CHECK_EQ_INT(o->db_kernels, x->kernels);
    /* the stats stored in the rank table agree with the rows */
    long sum = 0;
    for (int k = 1; k < 8; k++) sum += o->db_stats[k];
    CHECK_EQ_INT(o->db_stats[0], x->events);
    CHECK_EQ_INT(sum, x->events);
    CHECK_EQ_INT(o->db_stats[1], o->db_slices);
    CHECK_EQ_INT(o->db_stats[2], o->db_flows);
    CHECK_EQ_INT(o->db_stats[5], o->db_mems);
    CHECK_EQ_INT(o->neg_dur, 0);
    CHECK_EQ_INT(o->bad_tree, 0);
}

/* ====================================================================== */
/* tests                                                                  */

static void test_corpus(const char *root)
{
    struct found f = { 0 };
    walk(root, "", &f);
    struct outcome *o = xcalloc(NCORPUS, sizeof *o);
    char *seen = xcalloc(NCORPUS, 1);
    size_t n = 0;

    for (size_t i = 0; i < f.n; i++) {
        if (strcmp(f.rel[i], "MANIFEST.md") == 0) continue;
        size_t j = 0;
        while (j < NCORPUS && strcmp(corpus[j].path, f.rel[i]) != 0) j++;
        if (j == NCORPUS) {
            fprintf(stderr, "FAIL corpus: %s is not in the table: say whether it loads or is refused\n", f.rel[i]);
            harness_fail++;
            continue;
        }
        seen[j] = 1;
        o[n].x = &corpus[j];
        o[n].path = xasprintf("%s/%s", root, f.rel[i]);
        n++;
    }
    for (size_t j = 0; j < NCORPUS; j++) {
        if (!seen[j]) {
            fprintf(stderr, "FAIL corpus: %s is in the table but not in %s\n", corpus[j].path, root);
            harness_fail++;
        }
    }
    run_all(o, n);
    int loaded = 0, refused = 0;
    for (size_t i = 0; i < n; i++) {
        check_outcome(&o[i], "corpus");
        if (o[i].rc == 0) loaded++;
        else refused++;
        free(o[i].path);
    }
    printf("corpus: %d files loaded, %d refused\n", loaded, refused);
    free(o);
    free(seen);
    found_free(&f);
}

static void test_traces(const char *root)
{
    struct found f = { 0 };
    walk(root, "", &f);
    struct outcome *o = xcalloc(NTRACES, sizeof *o);
    size_t n = 0;
    int unknown = 0;

    for (size_t i = 0; i < f.n; i++) {
        const char *r = f.rel[i];
        size_t l = strlen(r);
        int json = (l > 5 && strcmp(r + l - 5, ".json") == 0) || (l > 8 && strcmp(r + l - 8, ".json.gz") == 0);
        const char *base = strrchr(r, '/');
        if (!json || strcmp(base ? base + 1 : r, "facts.json") == 0) continue;
        size_t j = 0;
        while (j < NTRACES && strcmp(traces[j].path, r) != 0) j++;
        if (j == NTRACES) {
            /* a new scenario: it must load; its count is not known here */
            fprintf(stderr, "note: traces/%s is not in the table (checked for loading only)\n", r);
            unknown++;
            continue;
        }
        o[n].x = &traces[j];
        o[n].path = xasprintf("%s/%s", root, r);
        n++;
    }
    CHECK_EQ_INT(n, NTRACES);
    run_all(o, n);
    for (size_t i = 0; i < n; i++) {
        check_outcome(&o[i], "traces");
        free(o[i].path);
    }
    printf("traces: %zu files loaded (%d not in the table)\n", n, unknown);
    free(o);
    found_free(&f);
}

/* The eight DLRM ranks as one run: one writer, ranks 0..7, the headers'
 * distributedInfo.rank matching. */
static void test_dlrm_run(const char *root)
{
    char *db = xasprintf("%s/dlrm.db", tmpdir);
    struct rundb_writer *w;
    struct err e;
    struct instream_limits lim = { 64ull << 30, 200, 0 };
    long total = 0, want = 0;
    int k = 0;

    REQUIRE(rundb_create(db, 64u << 20, tmpdir, &w, &e) == 0);
    for (size_t j = 0; j < NCORPUS; j++) {
        if (!strstr(corpus[j].path, "dlrm_kineto/worker")) continue;
        char *path = xasprintf("%s/%s", root, corpus[j].path);
        struct import_ctx ctx = { NULL, NULL, 0, NULL };
        struct tb_rank_stats st;
        int rank = corpus[j].path[strlen("param/et_replay/tests/inputs/dlrm_kineto/worker")] - '0';
        int rc = rundb_begin_rank(w, rank, corpus[j].path, fsutil_file_size(path), &e);
        if (rc == 0) rc = importer_import_file(path, corpus[j].path, &lim, w, &ctx, &e);
        if (rc == 0) rc = rundb_finish_rank(w, &st, &e);
        free(path);
        if (rc != 0) fprintf(stderr, "dlrm rank %d: %s\n", rank, e.msg);
        if (rc != 0) {
            rundb_abort(w);
            free(db);
        }
        REQUIRE(rc == 0);
        total += (long)st.events;
        want += corpus[j].events;
        k++;
    }
    CHECK_EQ_INT(rundb_close_writer(w, &e), 0);
    CHECK_EQ_INT(k, 8);
    CHECK_EQ_INT(total, want);
    sqlite3 *h;
    REQUIRE(rundb_open_ro(db, &h, &e) == 0);
    CHECK_EQ_INT(q_long(h, "SELECT count(*) FROM rank"), 8);
    CHECK_EQ_INT(q_long(h, "SELECT count(*) FROM rank WHERE json_extract(distributed,'$.rank') = rank"), 8);
    CHECK_EQ_INT(q_long(h, "SELECT count(*) FROM rank WHERE json_extract(distributed,'$.world_size') = 8"), 8);
    CHECK_EQ_INT(q_long(h, "SELECT count(DISTINCT rank) FROM track"), 8);
    CHECK_EQ_INT(q_long(h, "SELECT sum(json_extract(stats,'$.events')) FROM rank"), want);
    /* slice ids are unique across ranks and tracks belong to one rank */
    CHECK_EQ_INT(q_long(h, "SELECT count(*) FROM slice s JOIN track t ON t.id=s.track WHERE t.rank IS NULL"), 0);
    CHECK(q_long(h, "SELECT count(*) FROM rank WHERE device LIKE '%V100%'") == 8);
    sqlite3_close(h);
    free(db);
}

int main(void)
{
    char *corpus_root = xasprintf("%s/corpus", harness_shared());
    char *traces_root = xasprintf("%s/traces", harness_shared());
    struct stat st;
    const char *req = getenv("TB_REQUIRE_SHARED");

    if (stat(corpus_root, &st) != 0 || stat(traces_root, &st) != 0) {
        printf("corpus_test: SKIPPED: %s or %s not found (set TB_SHARED to the shared folder)\n", corpus_root,
               traces_root);
        if (req && strcmp(req, "1") == 0) harness_fail++;
        free(corpus_root);
        free(traces_root);
        return harness_done("corpus");
    }
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    harness_current = "corpus";
    test_corpus(corpus_root);
    harness_current = "traces";
    test_traces(traces_root);
    harness_current = "dlrm";
    test_dlrm_run(corpus_root);
    struct err e;
    fsutil_rmtree(tmpdir, &e);
    free(corpus_root);
    free(traces_root);
    return harness_done("corpus");
}

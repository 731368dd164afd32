/* ranks_test — the cross-rank comparison (ranks_build) on crafted Kineto
 * traces imported through the real pipeline (ingest_run: parse, analysis,
 * rules), checked against numbers worked out by hand. Times in the traces
 * are µs. */
#include "rules_fixture.h"

#include <math.h>

#include "derive/ranks.h"

/* A GPU event on device 0, stream 8 (NCCL's own stream in real traces),
 * with more args. */
#define KERNEL8A(name, corr, ts, dur, args)                                                             \
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0,\"tid\":8,\"ts\":" #ts             \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":8,\"correlation\":" #corr args "}}"
/* A host span on a second thread (gloo's worker). */
#define CPU2(cat, name, ts, dur) X(cat, name, "2", ts, dur, "")

#define NCCL_AR "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
#define NCCL_AG "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
/* record_param_comms around a launch: what PyTorch records for a collective. */
#define RPC(ts, dur)                                                                                    \
    CPU("cpu_op", "record_param_comms", ts, dur,                                                        \
        "\"Collective name\":\"allreduce\",\"In msg nelems\":4096,\"dtype\":\"Float\"")
#define AG_ARGS                                                                                         \
    ",\"Collective name\":\"_allgather_base\",\"In msg nelems\":1024,\"Out msg nelems\":2048,"          \
    "\"Group size\":2,\"dtype\":\"Float\",\"Process Group Description\":\"default_pg\""

/* NCCL, one 1000 µs step per rank.
 * rank 0: GEMM [20, 620); all-reduce [500, 800) (launched inside
 *   record_param_comms); all-gather [850, 900).
 *   comm 300 + 50 = 350, compute 600, overlap [500, 620) = 120.
 * rank 1: GEMM [20, 420); all-reduce [300, 500); all-gather [600, 680);
 *   one more all-reduce [900, 950) that rank 0 never ran (unmatched).
 *   comm 200 + 80 + 50 = 330, compute 400, overlap [300, 420) = 120.
 * Matched all-reduce: transfer min(300, 200) = 200, rank 0 waits 100.
 * All-gather: transfer min(50, 80) = 50, rank 1 waits 30. */
static const char *const nccl_pair[] = {
    STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 600) "," RPC(15, 20) "," LAUNCH(2, 20, 5)
    "," KERNEL8A(NCCL_AR, 2, 500, 300, "") "," LAUNCH(3, 40, 5) "," KERNEL8A(NCCL_AG, 3, 850, 50, AG_ARGS),
    STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 400) "," RPC(15, 20) "," LAUNCH(2, 20, 5)
    "," KERNEL8A(NCCL_AR, 2, 300, 200, "") "," LAUNCH(3, 40, 5) "," KERNEL8A(NCCL_AG, 3, 600, 80, AG_ARGS)
    "," RPC(50, 20) "," LAUNCH(4, 55, 5) "," KERNEL8A(NCCL_AR, 4, 900, 50, ""),
};

/* gloo, two 10 ms steps: a 2 ms GEMM, then a host-side all-reduce to the
 * end of the step. Ranks 0 and 2 all-reduce for 7 ms; rank 1 works 9 ms
 * first (the straggler) and all-reduces for 1 ms. */
#define DDP_RANK(ar, ar_dur)                                                                            \
    STEP(1, 0, 10000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 2000) ","                          \
    CPU2("user_annotation", "gloo:all_reduce", ar, ar_dur) "," STEP(2, 10000, 10000) ","                \
    LAUNCH(2, 10010, 5) "," KERNEL("gemm", 2, 10020, 2000) ","                                          \
    CPU2("user_annotation", "gloo:all_reduce", 1##ar, ar_dur)
static const char *const straggling[] = { DDP_RANK(3000, 7000), DDP_RANK(9000, 1000), DDP_RANK(3000, 7000) };

/* Imports the rank files and returns ranks_build's answer (NULL on failure). */
static json_t *build(const char *header, const char *const *events, int n)
{
    struct err e;
    struct ingest_file files[8];
    char *paths[8];
    char id[CATALOG_ID_LEN + 1];
    json_t *out = NULL;
    for (int i = 0; i < n; i++) {
        paths[i] = fixture_write(DEV_H100, header, events[i], i);
        files[i] = (struct ingest_file){ paths[i], paths[i], 0 };
    }
    struct ingest_request req = { NULL, files, n, NULL };
    if (ingest_run(fixture_cat, &fixture_cfg, &req, NULL, id, &e) != 0) {
        fprintf(stderr, "import failed: %s\n", e.msg);
    } else {
        char *dbp = xasprintf("%s/runs/%s/run.db", fixture_root, id);
        sqlite3 *db;
        if (rundb_open_ro(dbp, &db, &e) == 0) {
            if (ranks_build(db, 10, &out, &e) != 0) fprintf(stderr, "ranks_build: %s\n", e.msg);
            sqlite3_close(db);
        }
        free(dbp);
    }
    for (int i = 0; i < n; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    return out;
}

static double num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static int near(double a, double b)
{
    return fabs(a - b) < 0.01;
}

/* The comm_ops row of a collective, or NULL. Borrowed. */
static json_t *op_named(json_t *d, const char *coll)
{
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(d, "comm_ops"), i, o)
        if (strcmp(json_string_value(json_object_get(o, "collective")), coll) == 0) return o;
    return NULL;
}

static void test_nccl_overlap_and_matching(void)
{
    json_t *d = build("", nccl_pair, 2);
    REQUIRE(d != NULL);
    CHECK(json_is_true(json_object_get(d, "comparable")));
    json_t *ranks = json_object_get(d, "ranks");
    REQUIRE(json_array_size(ranks) == 2);
    json_t *r0 = json_array_get(ranks, 0), *r1 = json_array_get(ranks, 1);
    /* overlap per step (one step) */
    CHECK(near(num(r0, "comm_us"), 350));
    CHECK(near(num(r0, "compute_us"), 600));
    CHECK(near(num(r0, "overlap_us"), 120));
    CHECK(near(num(r0, "exposed_us"), 230));
    CHECK(near(num(r1, "comm_us"), 330));
    CHECK(near(num(r1, "compute_us"), 400));
    CHECK(near(num(r1, "overlap_us"), 120));
    CHECK(json_is_false(json_object_get(r0, "host_collectives")));
    /* unequal counts: rank 1's third collective has no partner */
    CHECK_EQ_INT(json_integer_value(json_object_get(r0, "collectives")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(r1, "collectives")), 3);
    CHECK_EQ_INT(json_integer_value(json_object_get(r1, "collectives_matched")), 2);
    /* waiting vs transfer: wait + transfer = duration of matched calls */
    CHECK(near(num(r0, "wait_us"), 100));
    CHECK(near(num(r0, "transfer_us"), 250));
    CHECK(near(num(r1, "wait_us"), 30));
    CHECK(near(num(r1, "transfer_us"), 250));

    json_t *ar = op_named(d, "allreduce"), *ag = op_named(d, "_allgather_base");
    REQUIRE(ar != NULL && ag != NULL);
    CHECK(json_array_get(json_object_get(d, "comm_ops"), 0) == ar); /* longest first */
    CHECK_EQ_INT(json_integer_value(json_object_get(ar, "in_nelems_max")), 4096); /* from record_param_comms */
    CHECK_EQ_INT(json_integer_value(json_object_get(ar, "bytes_max")), 4096 * 4);
    CHECK_EQ_INT(json_integer_value(json_object_get(ar, "calls")), 2);
    CHECK(near(num(ar, "dur_us"), 550));
    CHECK(near(num(ar, "wait_us"), 100));
    CHECK(near(num(ar, "transfer_us"), 400));
    json_t *ar1 = json_array_get(json_object_get(ar, "ranks"), 1);
    CHECK(near(num(ar1, "dur_us"), 250));
    CHECK(near(num(ar1, "wait_us"), 0));
    CHECK(near(num(ar1, "transfer_us"), 200));
    CHECK_EQ_STR(json_string_value(json_object_get(ag, "group")), "default_pg");
    CHECK_EQ_STR(json_string_value(json_object_get(ag, "dtype")), "Float");
    CHECK_EQ_INT(json_integer_value(json_object_get(ag, "group_size")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(ag, "in_nelems_max")), 1024);
    CHECK_EQ_INT(json_integer_value(json_object_get(ag, "out_nelems_max")), 2048);
    CHECK(near(num(ag, "wait_us"), 30));
    CHECK(near(num(ag, "transfer_us"), 100));

    /* top kernels: the GEMM ran 600 and 400 µs */
    json_t *k = NULL, *x;
    size_t i;
    json_array_foreach(json_object_get(d, "kernels"), i, x)
        if (strcmp(json_string_value(json_object_get(x, "name")), "gemm") == 0) k = x;
    REQUIRE(k != NULL);
    CHECK(near(num(k, "min_us"), 400));
    CHECK(near(num(k, "max_us"), 600));
    CHECK(near(num(k, "median_us"), 500));
    CHECK_EQ_INT(json_integer_value(json_object_get(k, "max_rank")), 0);
    CHECK(json_is_null(json_object_get(d, "straggler")));
    json_decref(d);
}

static void test_gloo_straggler(void)
{
    json_t *d = build("", straggling, 3);
    REQUIRE(d != NULL);
    json_t *ranks = json_object_get(d, "ranks");
    REQUIRE(json_array_size(ranks) == 3);
    json_t *r0 = json_array_get(ranks, 0), *r1 = json_array_get(ranks, 1);
    CHECK(json_is_true(json_object_get(r0, "host_collectives")));
    CHECK(near(num(r0, "comm_us"), 7000));
    CHECK(near(num(r0, "compute_us"), 2000));
    CHECK(near(num(r0, "overlap_us"), 0));
    CHECK(near(num(r1, "comm_us"), 1000));
    /* each all-reduce: transfer 1000 (rank 1's), the others wait 6000 */
    CHECK(near(num(r0, "wait_us"), 12000));
    CHECK(near(num(r0, "transfer_us"), 2000));
    CHECK(near(num(r1, "wait_us"), 0));
    json_t *ar = op_named(d, "all_reduce");
    REQUIRE(ar != NULL);
    CHECK(near(num(ar, "wait_us"), 24000));
    CHECK(near(num(ar, "transfer_us"), 6000));
    /* heat map: 3 ranks x 2 steps of 10 ms */
    json_t *hm = json_object_get(d, "heatmap");
    CHECK_EQ_INT(json_array_size(json_object_get(hm, "steps")), 2);
    CHECK_EQ_STR(json_string_value(json_array_get(json_object_get(hm, "steps"), 1)), "ProfilerStep#2");
    CHECK_EQ_INT(json_array_size(json_object_get(hm, "dur_us")), 3);
    CHECK(near(json_number_value(json_array_get(json_array_get(json_object_get(hm, "dur_us"), 2), 1)), 10000));
    /* straggler: the stored finding plus per-step evidence */
    json_t *s = json_object_get(d, "straggler");
    REQUIRE(json_is_object(s));
    CHECK_EQ_INT(json_integer_value(json_object_get(s, "rank")), 1);
    CHECK(near(num(s, "late_us"), 6000));
    json_t *steps = json_object_get(s, "steps");
    REQUIRE(json_array_size(steps) == 2);
    json_t *s0 = json_array_get(steps, 0);
    CHECK_EQ_STR(json_string_value(json_object_get(s0, "name")), "ProfilerStep#1");
    CHECK(near(num(s0, "own_us"), 9000));
    CHECK(near(num(s0, "others_own_us"), 3000));
    CHECK(near(num(s0, "late_us"), 6000));
    CHECK_EQ_INT(json_integer_value(json_object_get(s0, "collectives")), 1);
    CHECK(json_array_size(json_object_get(s, "lines")) > 2);
    CHECK_EQ_STR(json_string_value(json_object_get(s, "link")), "view=ranks&rank=1");
    json_decref(d);
}

static void test_single_rank(void)
{
    json_t *d = build(",\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":0,\"world_size\":2}", &nccl_pair[1], 1);
    REQUIRE(d != NULL);
    CHECK(json_is_false(json_object_get(d, "comparable")));
    CHECK_EQ_INT(json_array_size(json_object_get(d, "ranks")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(d, "world_size")), 2);
    json_t *r0 = json_array_get(json_object_get(d, "ranks"), 0);
    CHECK_EQ_STR(json_string_value(json_object_get(r0, "backend")), "nccl");
    CHECK(json_is_null(json_object_get(r0, "base_ns")));
    CHECK(json_is_null(json_object_get(r0, "end_skew_us")));
    CHECK(near(num(r0, "comm_us"), 330)); /* overlap still measured */
    json_t *ar = op_named(d, "allreduce");
    REQUIRE(ar != NULL);
    CHECK(json_is_null(json_object_get(ar, "wait_us"))); /* nothing to match against */
    CHECK_EQ_STR(json_string_value(json_object_get(d, "alignment")), "trace clock");
    json_decref(d);
}

/* Ranks that numbered their steps differently (#1, #2 and #5, #6): no name
 * is common, so the heat map matches steps by position. */
static void test_steps_by_index(void)
{
    static const char *const shifted[] = {
        STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 500) "," STEP(2, 1000, 1000) ","
        LAUNCH(2, 1010, 5) "," KERNEL("gemm", 2, 1020, 500),
        STEP(5, 0, 1200) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 500) "," STEP(6, 1200, 900) ","
        LAUNCH(2, 1210, 5) "," KERNEL("gemm", 2, 1220, 500),
    };
    json_t *d = build("", shifted, 2);
    REQUIRE(d != NULL);
    json_t *hm = json_object_get(d, "heatmap");
    CHECK_EQ_STR(json_string_value(json_object_get(hm, "matched_by")), "index");
    CHECK_EQ_INT(json_array_size(json_object_get(hm, "steps")), 2);
    json_t *row1 = json_array_get(json_object_get(hm, "dur_us"), 1);
    CHECK(near(json_number_value(json_array_get(row1, 0)), 1200));
    CHECK(near(json_number_value(json_array_get(row1, 1)), 900));
    CHECK(near(num(hm, "min_us"), 900));
    CHECK(near(num(hm, "max_us"), 1200));
    json_decref(d);

    d = build("", straggling, 3); /* same names everywhere: by name */
    REQUIRE(d != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(d, "heatmap"), "matched_by")), "name");
    json_decref(d);
}

static void test_clock_alignment(void)
{
    /* the same pair with Kineto base times 5 ms apart: rank 1's clock runs
     * 5 ms behind, so with the base added both all-gathers end at... the
     * numbers of rank 1 shift by 5000 µs on the aligned clock */
    char *a = fixture_write(DEV_H100, ",\"baseTimeNanoseconds\":1000000000000", nccl_pair[0], 0);
    char *b = fixture_write(DEV_H100, ",\"baseTimeNanoseconds\":1000005000000", nccl_pair[1], 1);
    struct err e;
    struct ingest_file files[2] = { { a, a, 0 }, { b, b, 0 } };
    struct ingest_request req = { NULL, files, 2, NULL };
    char id[CATALOG_ID_LEN + 1];
    REQUIRE(ingest_run(fixture_cat, &fixture_cfg, &req, NULL, id, &e) == 0);
    char *dbp = xasprintf("%s/runs/%s/run.db", fixture_root, id);
    sqlite3 *db;
    json_t *d = NULL;
    if (rundb_open_ro(dbp, &db, &e) == 0) {
        CHECK(ranks_build(db, 5, &d, &e) == 0);
        sqlite3_close(db);
    }
    free(dbp);
    unlink(a), unlink(b), free(a), free(b);
    REQUIRE(d != NULL);
    CHECK_EQ_STR(json_string_value(json_object_get(d, "alignment")), "baseTimeNanoseconds");
    json_t *r0 = json_array_get(json_object_get(d, "ranks"), 0), *r1 = json_array_get(json_object_get(d, "ranks"), 1);
    CHECK_EQ_STR(json_string_value(json_object_get(r1, "base_ns")), "1000005000000");
    CHECK(near(num(r0, "offset_us"), 0));
    CHECK(near(num(r1, "offset_us"), 5000));
    /* matched calls end: all-reduce 800 vs 5500, all-gather 900 vs 5680:
     * rank 1 ends 4700 and 4780 later, median 4740 */
    CHECK(near(num(r1, "end_skew_us"), 4740));
    CHECK(near(num(r0, "end_skew_us"), -4740));
    json_decref(d);
}

/* SQLITE_TRACE_STMT callback: counts statements that read the slice table. */
static int count_slice_reads(unsigned type, void *ctx, void *p, void *x)
{
    const char *sql = sqlite3_sql((sqlite3_stmt *)p);
    (void)type, (void)x;
    if (sql && strstr(sql, "FROM slice")) (*(int *)ctx)++;
    return 0;
}

/* Issue 21: the Ranks tab took 1.3 s on a single-GPU run of 100 steps,
 * sweeping every slice for collectives and then every kernel for an
 * overlap that cannot exist. A run without collectives must be answered
 * from the stored tables alone, with the same figures: compute = the
 * kernel union per step (two overlapping GEMMs: [20, 620) and [300, 900)
 * = 880 µs, then 500 µs), comm = overlap = 0. */
static void test_no_collectives_reads_no_slices(void)
{
    static const char *const plain = STEP(1, 0, 1000) "," LAUNCH(1, 10, 5) "," KERNEL("gemm", 1, 20, 600) ","
        LAUNCH(2, 15, 5) "," KERNEL("gemm", 2, 300, 600) "," STEP(2, 1000, 1000) "," LAUNCH(3, 1010, 5) ","
        KERNEL("gemm", 3, 1020, 500);
    char *path = fixture_write(DEV_H100, "", plain, 0);
    struct ingest_file files[1] = { { path, path, 0 } };
    struct ingest_request req = { NULL, files, 1, NULL };
    char id[CATALOG_ID_LEN + 1];
    struct err e;
    REQUIRE(ingest_run(fixture_cat, &fixture_cfg, &req, NULL, id, &e) == 0);
    char *dbp = xasprintf("%s/runs/%s/run.db", fixture_root, id);
    sqlite3 *db;
    json_t *d = NULL;
    int reads = 0;
    if (rundb_open_ro(dbp, &db, &e) == 0) {
        sqlite3_trace_v2(db, SQLITE_TRACE_STMT, count_slice_reads, &reads);
        CHECK(ranks_build(db, 5, &d, &e) == 0);
        sqlite3_close(db);
    }
    free(dbp);
    unlink(path);
    free(path);
    REQUIRE(d != NULL);
    CHECK_EQ_INT(reads, 0);
    json_t *r0 = json_array_get(json_object_get(d, "ranks"), 0);
    CHECK(near(num(r0, "compute_us"), (880 + 500) / 2.0));
    CHECK(near(num(r0, "comm_us"), 0));
    CHECK(near(num(r0, "overlap_us"), 0));
    CHECK_EQ_INT(json_array_size(json_object_get(d, "comm_ops")), 0);
    json_decref(d);
}

int main(void)
{
    fixture_init();
    RUN(test_nccl_overlap_and_matching);
    RUN(test_gloo_straggler);
    RUN(test_single_rank);
    RUN(test_steps_by_index);
    RUN(test_clock_alignment);
    RUN(test_no_collectives_reads_no_slices);
    fixture_done();
    return harness_done("ranks");
}

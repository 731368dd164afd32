/* analyses_load_test — one rank's context for the GPU analyses
 * (server/derive/analyses_load.c) on a crafted trace imported through the
 * real pipeline: the launch calls with the operator and annotation open
 * around each, the ops paired with them, and the host threads' slices held
 * for the host cursors and the critical path (every slice of each host
 * thread, in id order, as run.db has them), or none past the limit. */
#include "analyses_fixture.h"
#include "derive/analyses_load.h"

/* Thread 1: a step, a Python frame and a module frame around an op that
 * launches two kernels; thread 2: an annotation around a launch. */
static char *trace(void)
{
    struct fixture_trace b = { 0 };
    fixture_step(&b, 1, 0, 100);
    fixture_host(&b, 1, "python_function", "train.py(10): step", 1, 90, 0);
    fixture_host(&b, 1, "python_function", "nn.Module: Linear_0", 2, 80, 0);
    fixture_host(&b, 1, "cpu_op", "aten::linear", 10, 30, 0);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 12, 5, 1);
    fixture_host(&b, 1, "cuda_runtime", "cudaLaunchKernel", 20, 5, 2);
    fixture_host(&b, 2, "user_annotation", "my_region", 50, 20, 0);
    fixture_host(&b, 2, "cuda_runtime", "cudaLaunchKernel", 55, 5, 3);
    for (int k = 1; k <= 3; k++)
        fixture_trace_add(&b,
                          "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":5,"
                          "\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}}",
                          k, 20 * k + 10, k);
    return b.s;
}

/* Loads rank 0 of dbp holding at most host_rows host slices, taking
 * pre's launch calls when it has them (pre may be NULL). */
static int load_pre(sqlite3 *db, size_t host_rows, struct analyses_pre *pre, struct an_ctx *c, struct err *e)
{
    memset(c, 0, sizeof *c);
    c->db = db;
    c->host_rows_max = host_rows;
    if (gpuscan_names_open(db, &c->names, e)) return -1;
    return analyses_load_rank(c, pre, e);
}

static int load(sqlite3 *db, size_t host_rows, struct an_ctx *c, struct err *e)
{
    return load_pre(db, host_rows, NULL, c, e);
}

static void test_load(void)
{
    char *t = trace();
    char *dbp = fixture_import(DEV_H100, "", (const char *const *)&t, 1);
    free(t);
    REQUIRE(dbp != NULL);
    sqlite3 *db;
    struct err e;
    REQUIRE(rundb_open_ro(dbp, &db, &e) == 0);
    struct an_ctx c;
    CHECK_EQ_INT(load(db, AN_HOST_ROWS, &c, &e), 0);
    CHECK_EQ_INT(c.nops, 3);
    CHECK_EQ_INT(c.nlaunches, 3);
    for (size_t i = 0; i < c.nlaunches && i < 3; i++) CHECK_EQ_INT(c.launches[i].gpu, (int64_t)i);
    CHECK_EQ_STR(an_name(&c, c.launches[0].op), "aten::linear");
    CHECK_EQ_STR(an_name(&c, c.launches[0].annot), "nn.Module: Linear_0");
    CHECK_EQ_INT(c.launches[0].annot_src, 2);
    CHECK_EQ_STR(an_name(&c, c.launches[2].annot), "my_region");
    CHECK_EQ_INT(c.launches[2].annot_src, 1);
    /* held: every slice of each host thread, in id order */
    CHECK_EQ_INT(c.nhthreads, fixture_query_int(dbp, "SELECT count(*) FROM track WHERE kind != 1 AND nslices > 0"));
    CHECK_EQ_INT(c.nhrows, fixture_query_int(dbp, "SELECT count(*) FROM slice s JOIN track t ON t.id = s.track"
                                                  " WHERE t.kind != 1"));
    for (size_t i = 0; i < c.nhthreads; i++) {
        const struct an_hthread *h = &c.hthreads[i];
        CHECK(an_hthread_of(&c, h->track) == h);
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM slice WHERE track = %u", h->track);
        CHECK_EQ_INT(h->n, fixture_query_int(dbp, sql));
        snprintf(sql, sizeof sql, "SELECT min(id) FROM slice WHERE track = %u", h->track);
        if (h->n) CHECK_EQ_INT(c.hrows[h->first].id, fixture_query_int(dbp, sql));
        for (size_t k = 1; k < h->n; k++) {
            const struct an_hrow *a = &c.hrows[h->first + k - 1], *b = &c.hrows[h->first + k];
            CHECK(a->id < b->id && a->b.ts <= b->b.ts);
        }
        if (i) CHECK(c.hthreads[i - 1].track < h->track);
    }
    uint32_t gpu = (uint32_t)fixture_query_int(dbp, "SELECT id FROM track WHERE kind = 1");
    CHECK(an_hthread_of(&c, gpu) == NULL);
    analyses_load_free(&c);
    CHECK_EQ_INT(c.nhrows + c.nhthreads + c.nops + c.nlaunches, 0);
    gpuscan_names_close(c.names);
    /* past the limit: none held, the same launches */
    CHECK_EQ_INT(load(db, 3, &c, &e), 0);
    CHECK_EQ_INT(c.nhthreads, 0);
    CHECK_EQ_INT(c.nhrows, 0);
    CHECK(an_hthread_of(&c, c.launches[0].thread) == NULL);
    CHECK_EQ_INT(c.nlaunches, 3);
    analyses_load_free(&c);
    gpuscan_names_close(c.names);
    sqlite3_close(db);
    free(dbp);
}

/* The launch calls read ahead (analyses_preload, before the steps exist in
 * the ingest) are the ones the load reads, taken whole into the context;
 * a read-ahead of another rank, or held under another limit, is left and
 * the load reads its own. */
static void test_preload(void)
{
    char *t = trace();
    char *dbp = fixture_import(DEV_H100, "", (const char *const *)&t, 1);
    free(t);
    REQUIRE(dbp != NULL);
    sqlite3 *db;
    struct err e;
    REQUIRE(rundb_open_ro(dbp, &db, &e) == 0);
    struct an_ctx read, took;
    struct analyses_pre *pre = NULL;
    CHECK_EQ_INT(load(db, AN_HOST_ROWS, &read, &e), 0);
    CHECK_EQ_INT(analyses_preload(db, 0, NULL, &pre, &e), 0);
    REQUIRE(pre != NULL);
    CHECK_EQ_INT(pre->nlaunches, 3);
    CHECK_EQ_INT(pre->nhrows, read.nhrows);
    REQUIRE(pre->gpu != NULL);
    CHECK_EQ_INT(pre->gpu->nops, 3);
    const struct an_launch *want = pre->launches;
    const struct an_op *want_ops = pre->gpu->ops;
    CHECK_EQ_INT(load_pre(db, AN_HOST_ROWS, pre, &took, &e), 0);
    CHECK(took.launches == want && took.ops == want_ops); /* moved, not copied */
    CHECK(pre->launches == NULL && pre->hrows == NULL && pre->ix == NULL && pre->nlaunches == 0 && pre->gpu == NULL);
    CHECK_EQ_INT(took.nstreams, read.nstreams);
    if (took.nstreams == read.nstreams) {
        CHECK(memcmp(took.stream_ofs, read.stream_ofs, (read.nstreams + 1) * sizeof *read.stream_ofs) == 0);
        CHECK(memcmp(took.by_stream, read.by_stream, read.nops * sizeof *read.by_stream) == 0);
        for (size_t i = 0; i < read.nstreams; i++) {
            CHECK_EQ_INT(took.streams[i].track, read.streams[i].track);
            CHECK_EQ_STR(took.streams[i].name, read.streams[i].name);
        }
    }
    CHECK_EQ_INT(took.nmem, read.nmem);
    CHECK_EQ_INT(took.nlaunches, read.nlaunches);
    CHECK_EQ_INT(took.nops, read.nops);
    CHECK_EQ_INT(took.nhthreads, read.nhthreads);
    CHECK_EQ_INT(took.nhrows, read.nhrows);
    CHECK_EQ_INT(took.main_thread, read.main_thread);
    if (took.nlaunches == read.nlaunches)
        CHECK(memcmp(took.launches, read.launches, read.nlaunches * sizeof *read.launches) == 0);
    if (took.nops == read.nops) CHECK(memcmp(took.ops, read.ops, read.nops * sizeof *read.ops) == 0);
    if (took.nhrows == read.nhrows) CHECK(memcmp(took.hrows, read.hrows, read.nhrows * sizeof *read.hrows) == 0);
    analyses_load_free(&took);
    gpuscan_names_close(took.names);
    analyses_pre_free(pre);
    /* another rank's, or under another limit: not taken */
    for (int k = 0; k < 2; k++) {
        pre = NULL;
        CHECK_EQ_INT(analyses_preload(db, 0, NULL, &pre, &e), 0);
        REQUIRE(pre != NULL);
        if (k == 0) pre->rank = 5;
        CHECK_EQ_INT(load_pre(db, k == 0 ? AN_HOST_ROWS : 3, pre, &took, &e), 0);
        CHECK(pre->launches != NULL && pre->nlaunches == 3);
        CHECK_EQ_INT(took.nlaunches, 3);
        CHECK(took.launches != pre->launches);
        CHECK_EQ_INT(took.nhrows, k == 0 ? read.nhrows : 0);
        analyses_load_free(&took);
        gpuscan_names_close(took.names);
        analyses_pre_free(pre);
    }
    analyses_load_free(&read);
    gpuscan_names_close(read.names);
    analyses_pre_free(NULL);
    sqlite3_close(db);
    free(dbp);
}

int main(void)
{
    fixture_init();
    RUN(test_load);
    RUN(test_preload);
    fixture_done();
    return harness_done("analyses_load");
}

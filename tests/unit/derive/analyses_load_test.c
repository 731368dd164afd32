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

/* Loads rank 0 of dbp holding at most host_rows host slices. */
static int load(sqlite3 *db, size_t host_rows, struct an_ctx *c, struct err *e)
{
    memset(c, 0, sizeof *c);
    c->db = db;
    c->host_rows_max = host_rows;
    if (gpuscan_names_open(db, &c->names, e)) return -1;
    return analyses_load_rank(c, e);
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

int main(void)
{
    fixture_init();
    RUN(test_load);
    fixture_done();
    return harness_done("analyses_load");
}

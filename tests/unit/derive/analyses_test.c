/* analyses_test — the driver of the deeper analyses (server/derive/analyses.c):
 * every registered analysis gets its object in each rank's document, the
 * context's window and GPU peaks, stream names, idempotent reruns (a rank
 * renumbering reruns the analyses on a stored run), and the readers on a
 * run stored before the analyses existed, the compact context (its record
 * sizes, slice ids past 32 bits refused), and the launch outliers and the
 * batched sample writes past their buffers. The figures of each analysis
 * are tested in analyses_{hta,gpu,cp}_test.c. */
#include "analyses_fixture.h"

/* One step: an op under a record_function launching a kernel on stream 7
 * (no thread_name metadata: the stream is named from its tid) and a
 * pageable copy. */
static const char trace[] =
    STEP(1, 100, 200) ","
    CPU("user_annotation", "fwd", 105, 150, "") ","
    CPU("cpu_op", "aten::mm", 110, 40, "") ","
    LAUNCH(7, 115, 10) ","
    KERNEL("gemm", 7, 130, 60) ","
    CPU("cuda_runtime", "cudaMemcpyAsync", 160, 20, "\"correlation\":8") ","
    GPU("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 200, 50, "\"correlation\":8,\"bytes\":1000000");

static const char *const names[] = {
#define AN_NAME(n) #n,
    ANALYSES_LIST(AN_NAME)
#undef AN_NAME
};

static char *text_of(const char *dbpath)
{
    struct err e;
    sqlite3 *db;
    json_t *all = NULL;
    char *s = NULL;
    if (rundb_open_ro(dbpath, &db, &e) != 0) return NULL;
    if (analyses_read(db, -1, &all, &e) == 0 && all) s = json_dumps(all, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(all);
    sqlite3_close(db);
    return s;
}

static void test_document(void)
{
    char *db = NULL;
    json_t *doc = fixture_analyses(DEV_H100, trace, &db);
    REQUIRE(doc != NULL);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) CHECK(json_is_object(json_object_get(doc, names[i])));
    CHECK_EQ_INT(json_integer_value(json_object_get(doc, "steps")), 1);
    json_t *w = json_object_get(doc, "window_ns");
    /* the step stretched over the GPU work it launched: 100 µs .. 300 µs */
    CHECK_EQ_INT(json_integer_value(json_array_get(w, 0)), 100000);
    CHECK_EQ_INT(json_integer_value(json_array_get(w, 1)), 300000);
    json_t *gpu = json_object_get(doc, "gpu");
    CHECK_EQ_STR(json_string_value(json_object_get(gpu, "name")), "NVIDIA H100 80GB HBM3");
    CHECK(fixture_at(doc, "gpu", "memory_gbps", NULL) == 3350.0);
    CHECK(fixture_at(doc, "gpu", "link_gbps", NULL) == 63.0);
    /* an unnamed GPU track is "stream <tid>" */
    json_t *q = json_array_get(json_object_get(json_object_get(doc, "queue"), "streams"), 0);
    CHECK_EQ_STR(json_string_value(json_object_get(q, "name")), "stream 7");
    /* the launch joined its op and the annotation around it */
    json_t *it = json_array_get(json_object_get(json_object_get(doc, "annotations"), "items"), 0);
    CHECK_EQ_STR(json_string_value(json_object_get(it, "name")), "fwd");
    CHECK(fixture_query_int(db, "SELECT count(*) FROM anseries WHERE kind = 2") == 1); /* HtoD lane */
    CHECK(fixture_query_int(db, "SELECT sum(n) FROM critseg") > 0);
    json_decref(doc);

    /* a rerun (what a rank renumbering does) gives the same tables */
    char *before = text_of(db);
    int64_t nseg = fixture_query_int(db, "SELECT sum(n) FROM critseg");
    int64_t nsam = fixture_query_int(db, "SELECT count(*) FROM ansample");
    struct err e;
    sqlite3 *rw;
    REQUIRE(sqlite3_open_v2(db, &rw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK_EQ_INT(analyses_run(rw, &e), 0);
    sqlite3_close(rw);
    char *after = text_of(db);
    REQUIRE(before && after);
    CHECK_EQ_STR(after, before);
    CHECK(fixture_query_int(db, "SELECT sum(n) FROM critseg") == nseg);
    CHECK(fixture_query_int(db, "SELECT count(*) FROM ansample") == nsam);
    free(before);
    free(after);

    /* segments read back by window and step */
    REQUIRE(rundb_open_ro(db, &rw, &e) == 0);
    json_t *cp = NULL;
    CHECK_EQ_INT(analyses_critpath(rw, 0, 0, 0, INT64_MAX, &cp, &e), 0);
    int64_t sum = 0;
    size_t i;
    json_t *sg;
    json_array_foreach(json_object_get(cp, "segments"), i, sg) sum += json_integer_value(json_array_get(sg, 1));
    CHECK_EQ_INT(sum, 200000); /* the path covers the step */
    CHECK_EQ_INT(json_array_size(json_object_get(cp, "categories")), AN_CP_NCAT);
    json_decref(cp);
    CHECK_EQ_INT(analyses_critpath(rw, 0, 0, 0, 100000, &cp, &e), 0); /* before the step */
    CHECK_EQ_INT(json_array_size(json_object_get(cp, "segments")), 0);
    json_decref(cp);
    sqlite3_close(rw);
    free(db);
}

/* The trace above stored as a run, opened read-write (NULL on failure);
 * *db receives its path (owned by caller). */
static sqlite3 *open_stored(char **db)
{
    json_t *doc = fixture_analyses(DEV_H100, trace, db);
    json_decref(doc);
    sqlite3 *rw = NULL;
    if (*db && sqlite3_open_v2(*db, &rw, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(rw);
        rw = NULL;
    }
    return rw;
}

/* A run stored before the analyses: no tables. The readers say so instead
 * of failing on SQL. */
static void test_old_run(void)
{
    char *db = NULL;
    sqlite3 *rw = open_stored(&db);
    REQUIRE(rw != NULL);
    CHECK(sqlite3_exec(rw, "DROP TABLE analyses; DROP TABLE critseg", NULL, NULL, NULL) == SQLITE_OK);
    struct err e;
    json_t *out = (json_t *)1;
    CHECK_EQ_INT(analyses_read(rw, -1, &out, &e), 0);
    CHECK(out == NULL);
    CHECK_EQ_INT(analyses_critpath(rw, 0, -1, 0, INT64_MAX, &out, &e), ERR_NOT_FOUND);
    CHECK(strstr(e.msg, "before") != NULL);
    sqlite3_close(rw);
    free(db);
}

/* A trace with no GPU work: every analysis still answers, with empty
 * figures, and the window is empty. */
static void test_no_gpu(void)
{
    json_t *doc = fixture_analyses(DEV_H100, CPU("cpu_op", "aten::add", 1, 5, ""), NULL);
    REQUIRE(doc != NULL);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) CHECK(json_is_object(json_object_get(doc, names[i])));
    CHECK(fixture_at(doc, "launch", "count", NULL) == 0);
    json_decref(doc);
}

/* The context holds every GPU op and launch call of a rank: at 10 M events
 * 1.45 M of each, the GPU analyses' peak memory (docs/performance.md). */
static void test_compact_records(void)
{
    CHECK(sizeof(struct an_op) <= 40);
    CHECK(sizeof(struct an_launch) <= 48);
}

/* The records hold slice ids in 32 bits: a run past them is refused with a
 * clear error instead of pairing the wrong slices. */
static void test_wide_ids(void)
{
    char *db = NULL;
    sqlite3 *rw = open_stored(&db);
    sqlite3_stmt *st;
    REQUIRE(rw != NULL);
    /* every id moved past 2^32, as the tracks' id ranges and the parents */
    static const char *const moves[] = {
        "UPDATE slice SET id = id + ?1, parent = CASE WHEN parent != 0 THEN parent + ?1 ELSE 0 END",
        "UPDATE track SET first_slice = first_slice + ?1, last_slice = last_slice + ?1 WHERE nslices > 0",
    };
    for (size_t i = 0; i < 2; i++) {
        REQUIRE(sqlite3_prepare_v2(rw, moves[i], -1, &st, NULL) == SQLITE_OK);
        sqlite3_bind_int64(st, 1, (int64_t)1 << 32);
        CHECK(sqlite3_step(st) == SQLITE_DONE);
        sqlite3_finalize(st);
    }
    struct err e;
    CHECK_EQ_INT(analyses_run(rw, &e), ERR_TOO_LARGE);
    CHECK(strstr(e.msg, "32 bits") != NULL);
    sqlite3_close(rw);
    free(db);
}

/* 60 launches, each 10 µs over the runtime cutoff: all count, the first 50
 * (equal excess: in launch order) are listed; their 120 queue samples
 * cross the 32-row write batches and all arrive. */
static void test_many_outliers(void)
{
    char *events = xmalloc(60 * 512 + 256);
    size_t n = (size_t)sprintf(events, "%s", STEP(1, 900, 7000));
    for (int i = 0; i < 60; i++) {
        int corr = 100 + i, ts = 1000 + 100 * i, kts = ts + 70;
        n += (size_t)sprintf(events + n,
                             ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":0,"
                             "\"tid\":1,\"ts\":%d,\"dur\":60,\"args\":{\"correlation\":%d}}"
                             ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%d,"
                             "\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}}",
                             ts, corr, kts, corr);
    }
    char *db = NULL;
    json_t *doc = fixture_analyses(DEV_H100, events, &db);
    free(events);
    REQUIRE(doc != NULL);
    json_t *l = json_object_get(doc, "launch");
    CHECK_EQ_INT(fixture_at(l, "count", NULL), 60);
    CHECK_EQ_INT(fixture_at(l, "runtime_outliers", NULL), 60);
    json_t *out = json_object_get(l, "outliers");
    CHECK_EQ_INT(json_array_size(out), 50);
    int64_t prev = -1;
    for (size_t i = 0; i < json_array_size(out); i++) {
        int64_t ts = json_integer_value(json_object_get(json_array_get(out, i), "ts"));
        CHECK(ts > prev);
        prev = ts;
    }
    CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(out, 49), "ts")), (1000 + 100 * 49) * 1000);
    /* each launch raises the queue to 1 and its kernel's start lowers it */
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM ansample s JOIN anseries a ON a.id = s.series"
                                       " WHERE a.kind = 1"), 120);
    json_decref(doc);
    free(db);
}

int main(void)
{
    fixture_init();
    RUN(test_document);
    RUN(test_old_run);
    RUN(test_no_gpu);
    RUN(test_compact_records);
    RUN(test_wide_ids);
    RUN(test_many_outliers);
    fixture_done();
    return harness_done("analyses");
}

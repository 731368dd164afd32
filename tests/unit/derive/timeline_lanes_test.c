/* timeline_lanes_test — the analyses' counter lanes built aside (the
 * import's timeline thread, ingest_derive.c): timeline_build_trace and
 * timeline_build_analyses on a scratch database with the run attached give
 * the counter tables built on run.db itself (the analyses' series read
 * from the attached run, the aggregates' tables created in the scratch
 * without touching the run's), and timeline_adopt copies them all. */
#include "analyses_fixture.h"
#include "derive/timeline.h"

/* A kernel launched under an op and a pageable copy: a queue lane and an
 * HtoD lane beside the trace's own series. */
static const char trace[] =
    STEP(1, 100, 200) ","
    CPU("cpu_op", "aten::mm", 110, 40, "") ","
    LAUNCH(7, 115, 10) ","
    KERNEL("gemm", 7, 130, 60) ","
    CPU("cuda_runtime", "cudaMemcpyAsync", 160, 20, "\"correlation\":8") ","
    GPU("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 200, 50, "\"correlation\":8,\"bytes\":1000000");

static const char *const tables[] = { "cseries", "clodpack", "cagg", "cagg_level" };

/* Rows of table t in one schema and not the other, both ways (-1: failed). */
static int64_t differ(sqlite3 *db, const char *a, const char *b, const char *t)
{
    char *sql = sqlite3_mprintf("SELECT (SELECT count(*) FROM (SELECT * FROM %s.%s EXCEPT SELECT * FROM %s.%s))"
                                " + (SELECT count(*) FROM (SELECT * FROM %s.%s EXCEPT SELECT * FROM %s.%s))"
                                " + abs((SELECT count(*) FROM %s.%s) - (SELECT count(*) FROM %s.%s))",
                                a, t, b, t, b, t, a, t, a, t, b, t);
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_free(sql);
    return n;
}

static void test_lanes_aside(void)
{
    char *db = fixture_analyses_db(DEV_H100, trace);
    REQUIRE(db != NULL);
    REQUIRE(fixture_query_int(db, "SELECT count(*) FROM cseries WHERE src = 4") >= 2);
    int64_t cagg = fixture_query_int(db, "SELECT count(*) FROM cagg");
    REQUIRE(cagg > 0);
    struct err e;
    char *scratch = xasprintf("%s.lanes", db);
    sqlite3 *sc = NULL, *rw;
    /* as at import: the scratch's connection opened and the trace's tables
     * built before the analyses create their tables (it must not go by the
     * run's schema as it read it then) */
    REQUIRE(sqlite3_open_v2(db, &rw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    CHECK(sqlite3_exec(rw, "ALTER TABLE anseries RENAME TO an_keep; ALTER TABLE ansample RENAME TO as_keep", NULL,
                       NULL, NULL) == SQLITE_OK);
    REQUIRE(rundb_open_aside(db, scratch, NULL, &sc, &e) == 0);
    CHECK_EQ_INT(timeline_build_trace(sc, &e), 0);
    CHECK(sqlite3_exec(rw, "ALTER TABLE an_keep RENAME TO anseries; ALTER TABLE as_keep RENAME TO ansample", NULL,
                       NULL, NULL) == SQLITE_OK);
    sqlite3_close(rw);
    CHECK_EQ_INT(timeline_build_analyses(sc, &e), 0);
    sqlite3_close(sc);
    /* the run's own tables untouched */
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM cagg"), cagg);

    REQUIRE(sqlite3_open_v2(db, &rw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    char *att = sqlite3_mprintf("ATTACH %Q AS s", scratch);
    REQUIRE(sqlite3_exec(rw, att, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_free(att);
    CHECK(differ(rw, "s", "s", "cseries") == 0); /* the query works */
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        int64_t d = differ(rw, "main", "s", tables[i]);
        if (d != 0) fprintf(stderr, "table %s: %lld rows differ\n", tables[i], (long long)d);
        CHECK_EQ_INT(d, 0);
    }
    /* the adopt copies the aggregates too: a run without them gets them back */
    CHECK(sqlite3_exec(rw, "DETACH s; DROP TABLE cagg; DROP TABLE cagg_level; DELETE FROM cseries WHERE src = 4",
                       NULL, NULL, NULL) == SQLITE_OK);
    CHECK_EQ_INT(rundb_attach_aside(rw, scratch, &e), 0);
    CHECK_EQ_INT(timeline_adopt(rw, &e), 0);
    CHECK_EQ_INT(rundb_detach_aside(rw, &e), 0);
    sqlite3_close(rw);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM cagg"), cagg);
    CHECK(fixture_query_int(db, "SELECT count(*) FROM cseries WHERE src = 4") >= 2);
    unlink(scratch);
    free(scratch);
    free(db);
}

int main(void)
{
    fixture_init();
    RUN(test_lanes_aside);
    fixture_done();
    return harness_done("timeline_lanes");
}

/* timeline_test — the bucket grid shared by the build and the query, a
 * database without the level-of-detail tables (a run imported before them)
 * says so, and the LOD built aside (a scratch database, another thread at
 * ingest) is the one built in place; its errors and cancelling surface. */
#include "timeline_fixture.h"

/* Buckets are floor and ceil of t / 2^level for either sign of t. */
static void test_buckets(void)
{
    CHECK(timeline_bucket_of(0, 3) == 0);
    CHECK(timeline_bucket_of(7, 3) == 0);
    CHECK(timeline_bucket_of(8, 3) == 1);
    CHECK(timeline_bucket_of(-1, 3) == -1);
    CHECK(timeline_bucket_of(-8, 3) == -1);
    CHECK(timeline_bucket_of(-9, 3) == -2);
    CHECK(timeline_bucket_ceil(8, 3) == 1);
    CHECK(timeline_bucket_ceil(9, 3) == 2);
    CHECK(timeline_bucket_ceil(-9, 3) == -1);
    CHECK(timeline_bucket_ceil(0, 5) == 0);
}

/* A database without the tables (a run imported before them) says so. */
static void test_absent(void)
{
    sqlite3 *db;
    struct err e;
    char *p = xasprintf("%s/empty.db", root);
    REQUIRE(sqlite3_open(p, &db) == SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE slice(id INTEGER PRIMARY KEY)", NULL, NULL, NULL);
    CHECK_EQ_INT(timeline_present(db, &e), 0);
    sqlite3_close(db);
    free(p);
}

static int64_t rows(sqlite3 *db, const char *t)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", t);
    return one(db, sql);
}

/* The tables built aside and adopted equal those built in place, on a run
 * whose old LOD tables are still there (a re-derivation): the aside build
 * must not read or drop the run's own. */
static void test_aside(void)
{
    struct err e;
    blen = 0;
    out("[");
    nest(0, 0, 400000);
    for (int i = 0; i < 64; i++) { /* a counter and GPU ops: series of both kinds */
        out(",{\"ph\":\"C\",\"name\":\"q\",\"pid\":1,\"tid\":1,\"ts\":%d,\"args\":{\"v\":%d}}", i * 6, i % 7);
        out(",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":3}", i * 6);
    }
    sqlite3 *ro = import();
    REQUIRE(ro != NULL);
    char *src = xstrdup(sqlite3_db_filename(ro, "main"));
    sqlite3_close(ro);
    char *a = xasprintf("%s/inplace.db", root), *b = xasprintf("%s/aside.db", root);
    char *scratch = xasprintf("%s/aside.db.aside", root);
    REQUIRE(fsutil_copy(src, a, &e) == 0);
    REQUIRE(fsutil_copy(src, b, &e) == 0);
    sqlite3 *da, *dbb;
    REQUIRE(sqlite3_open(a, &da) == SQLITE_OK);
    REQUIRE(sqlite3_open(b, &dbb) == SQLITE_OK);
    CHECK_EQ_INT(timeline_build(da, &e), 0);
    sqlite3 *sc;
    REQUIRE(rundb_open_aside(b, scratch, NULL, &sc, &e) == 0);
    CHECK_EQ_INT(timeline_build_trace(sc, &e), 0);
    sqlite3_close(sc);
    REQUIRE(rundb_attach_aside(dbb, scratch, &e) == 0);
    CHECK_EQ_INT(timeline_adopt(dbb, &e), 0);
    CHECK_EQ_INT(rundb_detach_aside(dbb, &e), 0);
    CHECK_EQ_INT(timeline_build_analyses(dbb, &e), 0);
    sqlite3_close(dbb);
    static const char *const tables[] = { "lodpack", "lod_level", "cseries", "clodpack", "gpubusypack", "taggpack", "tagg_level", "topen", "cagg" };
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) CHECK(rows(da, tables[i]) > 0);
    CHECK_EQ_INT(differ_all(da, b, tables, sizeof tables / sizeof tables[0]), 0);
    sqlite3_close(da);
    free(src);
    free(a);
    free(b);
    free(scratch);
}

/* The aside build on a run database that is not one, or cancelled, fails
 * with a message instead of building anything. */
static int aside_build(const char *run, const char *scratch, atomic_int *cancel, struct err *e)
{
    sqlite3 *sc;
    int rc = rundb_open_aside(run, scratch, cancel, &sc, e);
    if (rc == 0) {
        rc = timeline_build_trace(sc, e);
        sqlite3_close(sc);
    }
    return rc;
}

static void test_aside_errors(void)
{
    struct err e;
    char *bad = xasprintf("%s/notadb", root), *scratch = xasprintf("%s/notadb.aside", root);
    FILE *f = fopen(bad, "w");
    REQUIRE(f != NULL);
    for (int i = 0; i < 1000; i++) fputs("not a database, ", f);
    fclose(f);
    CHECK(aside_build(bad, scratch, NULL, &e) != 0);
    CHECK(e.msg[0] != 0);

    atomic_int cancel = 1;
    sqlite3 *ro = import();
    REQUIRE(ro != NULL);
    char *src = xstrdup(sqlite3_db_filename(ro, "main"));
    sqlite3_close(ro);
    CHECK(aside_build(src, scratch, &cancel, &e) != 0);
    CHECK(strstr(e.msg, "interrupt") != NULL);
    atomic_store(&cancel, 0);
    CHECK_EQ_INT(aside_build(src, scratch, &cancel, &e), 0);
    free(src);
    free(bad);
    free(scratch);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_buckets);
    RUN(test_absent);
    RUN(test_aside);
    RUN(test_aside_errors);
    fixture_end();
    return harness_done("timeline");
}

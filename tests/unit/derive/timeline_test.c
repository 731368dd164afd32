/* timeline_test — the bucket grid shared by the build and the query,
 * and a database without the level-of-detail tables (a run imported before
 * them) says so. */
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

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_buckets);
    RUN(test_absent);
    fixture_end();
    return harness_done("timeline");
}

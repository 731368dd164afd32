/* rundb_schema_test — the tables of a run database, then the version stamp
 * and the indexes built after the load; a second create is refused. */
#include "harness.h"
#include "store/rundb_schema.h"

static int64_t count(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -2;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static void test_schema(void)
{
    sqlite3 *db;
    struct err e;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK_EQ_INT(rundb_schema_create(db, &e), 0);
    CHECK_EQ_INT(count(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 10);
    CHECK_EQ_INT(count(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"), 0);
    CHECK_EQ_INT(rundb_schema_finish(db, &e), 0);
    CHECK_EQ_INT(count(db, "SELECT value FROM meta WHERE key = 'schema_version'"), RUNDB_SCHEMA_VERSION);
    CHECK_EQ_INT(count(db, "SELECT count(*) FROM sqlite_master WHERE name = 'slice_corr'"), 1);
    CHECK_EQ_INT(rundb_schema_create(db, &e), ERR_DB);
    CHECK(strstr(e.msg, "cannot initialise the run database") != NULL);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_schema);
    return harness_done("rundb_schema_test");
}

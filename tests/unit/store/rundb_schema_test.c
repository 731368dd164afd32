/* rundb_schema_test — the tables of a run database with the indexes of the
 * tables filled during the parse, then the version stamp and the slices'
 * one index (on corr) built after the load, none on name (name_ids holds
 * each name's slices); a second create is refused. */
#include "rundb_fixture.h"
#include "store/rundb_schema.h"


static void test_schema(void)
{
    sqlite3 *db;
    struct err e;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK_EQ_INT(rundb_schema_create(db, &e), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 11);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'name_ids'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
                        " AND tbl_name IN ('flow', 'mem', 'instant', 'counter')"),
                 6);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'slice'"), 0);
    CHECK_EQ_INT(rundb_schema_finish(db, &e), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'slice'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT value FROM meta WHERE key = 'schema_version'"), RUNDB_SCHEMA_VERSION);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'slice_corr'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'slice_name'"), 0);
    CHECK_EQ_INT(rundb_schema_create(db, &e), ERR_DB);
    CHECK(strstr(e.msg, "cannot initialise the run database") != NULL);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_schema);
    return harness_done("rundb_schema_test");
}

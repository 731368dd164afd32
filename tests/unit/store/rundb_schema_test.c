/* rundb_schema_test — the tables of a run database with the indexes of the
 * tables filled during the parse, then the version stamp and the slices'
 * lookup by correlation id built after the load: corr_ids from the pairs
 * the writer kept, else an index on corr; none on name (name_ids holds each
 * name's slices); a second create is refused. */
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
    /* without the pairs (too many to keep): the index on corr */
    CHECK_EQ_INT(rundb_schema_finish(db, 0, NULL, 0, &e), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'slice'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT value FROM meta WHERE key = 'schema_version'"), RUNDB_SCHEMA_VERSION);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'slice_corr'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'corr_ids'"), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'slice_name'"), 0);
    CHECK_EQ_INT(rundb_schema_create(db, &e), ERR_DB);
    CHECK(strstr(e.msg, "cannot initialise the run database") != NULL);
    sqlite3_close(db);
}

/* With the pairs: corr_ids holds them in (corr, id) order, whatever order
 * they came in (here 70, more than a statement's 32), and no index on slice
 * is built. */
static void test_corr_ids(void)
{
    sqlite3 *db;
    struct err e;
    struct rundb_corr pairs[70];
    for (int i = 0; i < 70; i++) pairs[i] = (struct rundb_corr){ 1000 - (i % 7), 70 - i };
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK_EQ_INT(rundb_schema_create(db, &e), 0);
    CHECK_EQ_INT(rundb_schema_finish(db, 1, pairs, 70, &e), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'slice'"), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM corr_ids"), 70);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM corr_ids WHERE corr = 994"), 10);
    CHECK_EQ_INT(q1(db, "SELECT min(id) FROM corr_ids WHERE corr = 1000"), 7);
    CHECK_EQ_INT(q1(db, "SELECT group_concat(id) = '7,14,21,28,35,42,49,56,63,70' FROM"
                        " (SELECT id FROM corr_ids WHERE corr = 1000 ORDER BY corr, id)"),
                 1);
    CHECK_EQ_INT(pairs[0].corr, 994); /* sorted in place */
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_schema);
    RUN(test_corr_ids);
    return harness_done("rundb_schema_test");
}

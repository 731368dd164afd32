/* rundb_stage_test — a run's derived stages are answered "computing" until
 * marked done; a run without the table counts as derived. */
#include "harness.h"
#include "store/rundb_stage.h"

#include <string.h>

static void test_stages(void)
{
    sqlite3 *db;
    struct err e;
    json_t *j;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    /* no table: derived before stages existed */
    CHECK_EQ_INT(rundb_stage_check(db, "summary", &e), 0);
    CHECK_EQ_INT(rundb_stage_json(db, &j, &e), 0);
    CHECK(json_is_null(j));
    json_decref(j);

    const char *names[] = { "summary", "analyses", "timeline" };
    REQUIRE(rundb_stage_begin(db, names, 3, &e) == 0);
    CHECK_EQ_INT(rundb_stage_check(db, "summary", &e), ERR_COMPUTING);
    CHECK(strstr(e.msg, "the summary stage: 0 of 3 stages done") != NULL);
    CHECK_EQ_INT(rundb_stage_mark(db, "summary", "running", 0, &e), 0);
    CHECK_EQ_INT(rundb_stage_check(db, "summary", &e), ERR_COMPUTING);
    CHECK(strstr(e.msg, "running: summary") != NULL);
    CHECK_EQ_INT(rundb_stage_mark(db, "summary", "done", 1.5, &e), 0);
    CHECK_EQ_INT(rundb_stage_check(db, "summary", &e), 0);
    CHECK_EQ_INT(rundb_stage_check(db, "timeline", &e), ERR_COMPUTING);
    CHECK(strstr(e.msg, "1 of 3") != NULL);
    CHECK_EQ_INT(rundb_stage_check(db, "no_such_stage", &e), 0);
    CHECK_EQ_INT(rundb_stage_mark(db, "no_such_stage", "done", 0, &e), ERR_NOT_FOUND);

    REQUIRE(rundb_stage_json(db, &j, &e) == 0);
    CHECK_EQ_INT(json_array_size(j), 3);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(j, 0), "state")), "done");
    CHECK(json_real_value(json_object_get(json_array_get(j, 0), "seconds")) == 1.5);
    CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(j, 2), "name")), "timeline");
    CHECK(json_is_null(json_object_get(json_array_get(j, 2), "seconds")));
    json_decref(j);

    /* a derive run again starts over */
    REQUIRE(rundb_stage_begin(db, names, 3, &e) == 0);
    CHECK_EQ_INT(rundb_stage_check(db, "summary", &e), ERR_COMPUTING);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_stages);
    return harness_done("rundb_stage_test");
}

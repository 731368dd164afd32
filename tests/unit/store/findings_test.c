/* findings_test — the finding table: a run without it reads as ERR_INVALID
 * (imported before recommendations), rows come back in ord order and a
 * rank's list holds its rows and the NULL-rank ones; a replace that fails
 * half-way (a trigger refuses a row) leaves the earlier rows; adopting
 * copies the scratch database's table over the run's. */
#include <sqlite3.h>
#include <string.h>

#include "harness.h"
#include "store/findings.h"

static const char *id_at(json_t *arr, size_t i)
{
    return json_string_value(json_object_get(json_array_get(arr, i), "id"));
}

static void test_replace_read(void)
{
    sqlite3 *db;
    struct err e;
    json_t *out;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK_EQ_INT(findings_read(db, -1, &out, &e), ERR_INVALID);
    CHECK(out == NULL);
    CHECK_EQ_INT(findings_ensure(db, &e), 0);
    CHECK_EQ_INT(findings_ensure(db, &e), 0); /* twice is fine */
    struct findings_row rows[] = {
        { -1, "shared_gpu", "high", 5000, "{\"id\":\"shared_gpu\",\"rank\":null}" },
        { 1, "enable_amp", "medium", 3000, "{\"id\":\"enable_amp\",\"rank\":1}" },
        { 0, "gpu_idle_gaps", "low", 1000, "{\"id\":\"gpu_idle_gaps\",\"rank\":0}" },
        { 0, "broken", "low", 0, "not json" },
    };
    REQUIRE(findings_replace(db, rows, 4, &e) == 0);
    REQUIRE(findings_read(db, -1, &out, &e) == 0);
    CHECK_EQ_INT(json_array_size(out), 3); /* the body that does not parse is left out */
    CHECK_EQ_STR(id_at(out, 0), "shared_gpu");
    CHECK_EQ_STR(id_at(out, 1), "enable_amp");
    CHECK_EQ_STR(id_at(out, 2), "gpu_idle_gaps");
    json_decref(out);
    REQUIRE(findings_read(db, 0, &out, &e) == 0);
    CHECK_EQ_INT(json_array_size(out), 2);
    CHECK_EQ_STR(id_at(out, 0), "shared_gpu");
    CHECK_EQ_STR(id_at(out, 1), "gpu_idle_gaps");
    json_decref(out);

    /* a failure in the middle: nothing changes */
    REQUIRE(sqlite3_exec(db,
                         "CREATE TRIGGER no_bad BEFORE INSERT ON finding WHEN NEW.id = 'bad'"
                         " BEGIN SELECT RAISE(ABORT, 'refused'); END",
                         NULL, NULL, NULL) == SQLITE_OK);
    struct findings_row bad[] = { { 2, "ok", "low", 0, "{\"id\":\"ok\"}" }, { 2, "bad", "low", 0, "{}" } };
    CHECK(findings_replace(db, bad, 2, &e) < 0);
    CHECK(strstr(e.msg, "refused") != NULL);
    REQUIRE(findings_read(db, -1, &out, &e) == 0);
    CHECK_EQ_INT(json_array_size(out), 3);
    json_decref(out);
    CHECK_EQ_INT(findings_replace(db, bad, 1, &e), 0);
    REQUIRE(findings_read(db, -1, &out, &e) == 0);
    CHECK_EQ_INT(json_array_size(out), 1);
    CHECK_EQ_STR(id_at(out, 0), "ok");
    json_decref(out);
    sqlite3_close(db);
}

static void test_adopt(void)
{
    sqlite3 *db;
    struct err e;
    json_t *out;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    REQUIRE(findings_ensure(db, &e) == 0);
    struct findings_row old = { 0, "old", "low", 0, "{\"id\":\"old\"}" };
    REQUIRE(findings_replace(db, &old, 1, &e) == 0);
    CHECK(findings_adopt(db, &e) != 0); /* nothing attached */
    REQUIRE(findings_read(db, -1, &out, &e) == 0);
    CHECK_EQ_INT(json_array_size(out), 1); /* rolled back */
    json_decref(out);
    REQUIRE(sqlite3_exec(db,
                         "ATTACH ':memory:' AS aside;"
                         "CREATE TABLE aside.finding(rank INTEGER, ord INTEGER, id TEXT, severity TEXT,"
                         " saving_ns INTEGER, body TEXT);"
                         "INSERT INTO aside.finding VALUES(NULL, 0, 'new', 'high', 1, '{\"id\":\"new\"}');"
                         "INSERT INTO aside.finding VALUES(3, 1, 'two', 'low', 1, '{\"id\":\"two\"}');",
                         NULL, NULL, NULL) == SQLITE_OK);
    CHECK_EQ_INT(findings_adopt(db, &e), 0);
    REQUIRE(findings_read(db, 0, &out, &e) == 0);
    CHECK_EQ_INT(json_array_size(out), 1);
    CHECK_EQ_STR(id_at(out, 0), "new");
    json_decref(out);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_replace_read);
    RUN(test_adopt);
    return harness_done("findings");
}

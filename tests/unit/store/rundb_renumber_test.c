/* rundb_renumber_test — ranks taken from the traces' distributedInfo, and a
 * renumbering asked for; the raw tables move together. */
#include "rundb_fixture.h"
#include "store/rundb_renumber.h"

static void test_from_headers(void)
{
    struct err e;
    char *path = fixture_path("three.db");
    REQUIRE(fixture_run(path, 3) == 0); /* rank r says it is 2 - r */
    sqlite3 *db;
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    int64_t gpu_track_of_0 = q1(db, "SELECT id FROM track WHERE rank = 0 AND kind = 1");
    int map[3], changed = 0;
    CHECK_EQ_INT(rundb_ranks_from_headers(db, map, 3, &changed, &e), 0);
    CHECK_EQ_INT(changed, 1);
    CHECK_EQ_INT(map[0], 2);
    CHECK_EQ_INT(map[1], 1);
    CHECK_EQ_INT(map[2], 0);
    CHECK_EQ_INT(q1(db, "SELECT rank FROM rank WHERE file = 'rank0.json'"), 2);
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT rank FROM track WHERE id = %lld", (long long)gpu_track_of_0);
    CHECK_EQ_INT(q1(db, sql), 2);
    /* now every file says what it is: nothing moves */
    CHECK_EQ_INT(rundb_ranks_from_headers(db, map, 3, &changed, &e), 0);
    CHECK_EQ_INT(changed, 0);

    int from[] = { 0, 1, 2 }, to[] = { 5, 6, 7 };
    CHECK_EQ_INT(rundb_renumber_ranks(db, from, to, 3, &e), 0);
    CHECK_EQ_INT(q1(db, "SELECT min(rank) FROM track"), 5);
    CHECK_EQ_INT(q1(db, "SELECT rank FROM rank WHERE file = 'rank2.json'"), 5);
    sqlite3_close(db);
    free(path);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_from_headers);
    fixture_cleanup();
    return harness_done("rundb_renumber_test");
}

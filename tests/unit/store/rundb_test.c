/* rundb_test — the read side of a run database: opening read-only with the
 * damage checks, settling a request's rank, the LIKE pattern, the copy. */
#include "rundb_fixture.h"

#include <fcntl.h>

static void test_like(void)
{
    char *p = rundb_like_pattern("50%_a\\b");
    CHECK_EQ_STR(p, "%50\\%\\_a\\\\b%");
    free(p);
    p = rundb_like_pattern("");
    CHECK_EQ_STR(p, "%%");
    free(p);
}

static void test_open_and_pick_rank(void)
{
    struct err e;
    char *path = fixture_path("two.db");
    REQUIRE(fixture_run(path, 2) == 0);
    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    int rank = -1;
    int64_t t0, t1;
    json_t *ranks = json_array();
    CHECK_EQ_INT(rundb_pick_rank(db, "r", 0, 0, &rank, &t0, &t1, ranks, &e), 0);
    CHECK_EQ_INT(rank, 0);
    CHECK_EQ_INT(json_array_size(ranks), 2);
    CHECK_EQ_INT(t0, 100);
    CHECK_EQ_INT(rundb_pick_rank(db, "r", 1, 1, &rank, &t0, &t1, NULL, &e), 0);
    CHECK_EQ_INT(rank, 1);
    CHECK_EQ_INT(rundb_pick_rank(db, "r", 1, 7, &rank, &t0, &t1, NULL, &e), ERR_NOT_FOUND);
    CHECK_EQ_STR(e.msg, "run r has no rank 7");
    json_decref(ranks);
    sqlite3_close(db);

    char *copy = fixture_path("copy.db");
    CHECK_EQ_INT(rundb_copy(path, copy, &e), 0);
    REQUIRE(rundb_open_ro(copy, &db, &e) == 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice"), 12);
    sqlite3_close(db);
    free(copy);
    free(path);
}

static void test_damaged(void)
{
    struct err e;
    sqlite3 *db = NULL;
    char *path = fixture_path("empty.db");
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    REQUIRE(fd >= 0);
    close(fd);
    CHECK_EQ_INT(rundb_open_ro(path, &db, &e), ERR_DAMAGED);
    CHECK(db == NULL);
    free(path);
    path = fixture_path("none.db");
    CHECK_EQ_INT(rundb_open_ro(path, &db, &e), ERR_NOT_FOUND);
    free(path);
}

int main(void)
{
    RUN(test_like);
    if (fixture_dir() != 0) return 1;
    RUN(test_open_and_pick_rank);
    RUN(test_damaged);
    fixture_cleanup();
    return harness_done("rundb_test");
}

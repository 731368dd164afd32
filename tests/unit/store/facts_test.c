/* facts_test — the facts the rules load: ranks with their format and
 * distributedInfo, a rank's steps in index order with every breakdown
 * part, its GPUs (compute capability parsed, unknown as 0), its summary,
 * its busiest process (CPU threads only) and operator count; names probed
 * by LIKE (ASCII case ignored, '\' escapes) or exact text; track names per
 * rank; too many patterns and a missing table are errors, never "no". */
#include <sqlite3.h>
#include <string.h>

#include "harness.h"
#include "store/facts.h"
#include "store/model.h"

/* NULL when the tables cannot be made (the failure is counted). */
static sqlite3 *make_db(void)
{
    sqlite3 *db;
    char sql[2048];
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return NULL;
    snprintf(sql, sizeof sql,
             "CREATE TABLE rank(rank INTEGER PRIMARY KEY, format TEXT, distributed TEXT);"
             "INSERT INTO rank VALUES(1, 'nsys', NULL), (0, 'kineto', '{\"world_size\":2}');"
             "CREATE TABLE step(rank INTEGER, idx INTEGER, name TEXT, ts INTEGER, dur INTEGER, host_ts INTEGER,"
             " host_dur INTEGER, kernel INTEGER, memcpy INTEGER, memset INTEGER, comm INTEGER, runtime INTEGER,"
             " dataloader INTEGER, cpu_exec INTEGER, other INTEGER);"
             "INSERT INTO step VALUES(0, 1, 'ProfilerStep#2', 200, 90, 201, 80, 1, 2, 3, 4, 5, 6, 7, 8),"
             " (0, 0, 'ProfilerStep#1', 100, 95, 101, 85, 10, 20, 30, 40, 50, 60, 70, 80),"
             " (1, 0, 'other rank', 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0);"
             "CREATE TABLE gpu(rank INTEGER, device INTEGER, name TEXT, memory_bytes INTEGER, cc TEXT, util REAL,"
             " tc_share REAL, kernel_ns INTEGER, tc_ns INTEGER, window_ns INTEGER);"
             "INSERT INTO gpu VALUES(0, 1, NULL, 0, NULL, 0.1, 0, 5, 0, 50), (0, 0, 'H100', 80, '9.0', 0.5, 0.25,"
             " 100, 25, 200);"
             "CREATE TABLE analysis(rank INTEGER PRIMARY KEY, summary TEXT);"
             "INSERT INTO analysis VALUES(0, '{\"a\":1}'), (1, 'not json');"
             "CREATE TABLE op_stat(rank INTEGER, name TEXT, calls INTEGER);"
             "INSERT INTO op_stat VALUES(0, 'aten::mm', 30), (0, 'aten::add', 12), (1, 'aten::mm', 5);"
             "CREATE TABLE track(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, pid TEXT, name TEXT,"
             " nslices INTEGER);"
             "INSERT INTO track VALUES(1, 0, %d, '42', 'thread 1', 10), (2, 0, %d, '43', 'thread 2', 20),"
             " (3, 0, %d, '44', 'stream 7', 900), (4, 1, %d, 'x', '/device:TPU:0', 5);"
             "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT NOT NULL);"
             "INSERT INTO str VALUES(1, 'aten::mm'), (2, 'ATEN::ADD'), (3, 'train_step'), (4, 'trainXstep'),"
             " (5, 'cudaLaunchKernel');",
             TB_TRACK_CPU, TB_TRACK_CPU, TB_TRACK_GPU, TB_TRACK_CPU);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    CHECK_EQ_INT(rc, SQLITE_OK);
    if (rc == SQLITE_OK) return db;
    sqlite3_close(db);
    return NULL;
}

static void test_rank_facts(void)
{
    sqlite3 *db = make_db();
    struct err e;
    struct facts_rank *r;
    REQUIRE(db != NULL);
    struct facts_step *s;
    struct facts_gpu *g;
    size_t n;
    REQUIRE(facts_ranks(db, &r, &n, &e) == 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(r[0].rank, 0);
    CHECK_EQ_STR(r[0].format, "kineto");
    CHECK_EQ_STR(r[0].distributed, "{\"world_size\":2}");
    CHECK(r[1].distributed == NULL);
    facts_ranks_free(r, n);

    REQUIRE(facts_steps(db, 0, &s, &n, &e) == 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_STR(s[0].name, "ProfilerStep#1");
    CHECK_EQ_INT(s[0].host_dur, 85);
    CHECK_EQ_INT(s[0].part[0], 10);
    CHECK_EQ_INT(s[0].part[FACTS_NPARTS - 1], 80);
    CHECK_EQ_INT(s[1].ts, 200);
    free(s);

    REQUIRE(facts_gpus(db, 0, &g, &n, &e) == 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(g[0].device, 0);
    CHECK_EQ_STR(g[0].name, "H100");
    CHECK(g[0].cc == 9.0);
    CHECK(g[0].tc_share == 0.25);
    CHECK_EQ_INT(g[0].window_ns, 200);
    CHECK_EQ_STR(g[1].name, "");
    CHECK(g[1].cc == 0);
    free(g);

    json_t *sum;
    REQUIRE(facts_summary(db, 0, &sum, &e) == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(sum, "a")), 1);
    json_decref(sum);
    CHECK_EQ_INT(facts_summary(db, 1, &sum, &e), 0);
    CHECK(sum == NULL);
    CHECK_EQ_INT(facts_summary(db, 7, &sum, &e), 0);
    CHECK(sum == NULL);

    long pid;
    double calls;
    REQUIRE(facts_busiest_pid(db, 0, &pid, &e) == 0);
    CHECK_EQ_INT(pid, 43); /* the GPU stream's slices do not count */
    REQUIRE(facts_busiest_pid(db, 1, &pid, &e) == 0);
    CHECK_EQ_INT(pid, -1); /* not a number */
    REQUIRE(facts_op_calls(db, 0, &calls, &e) == 0);
    CHECK(calls == 42);
    REQUIRE(facts_op_calls(db, 9, &calls, &e) == 0);
    CHECK(calls == 0);
    sqlite3_close(db);
}

static void test_names(void)
{
    sqlite3 *db = make_db();
    struct err e;
    struct facts_names *c;
    REQUIRE(db != NULL);
    uint32_t id;
    const char *s;
    static const char *const aten[] = { "nothing%", "aten::%" };
    REQUIRE(facts_names_open(db, FACTS_LIKE, aten, 2, &c, &e) == 0);
    CHECK_EQ_INT(facts_names_next(c, &id, &s, &e), 1);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(facts_names_next(c, &id, &s, &e), 1);
    CHECK_EQ_STR(s, "ATEN::ADD"); /* LIKE ignores ASCII case */
    CHECK_EQ_INT(facts_names_next(c, &id, &s, &e), 0);
    facts_names_close(c);

    static const char *const escaped[] = { "train\\_step" }, *const wild[] = { "train_step" };
    REQUIRE(facts_names_open(db, FACTS_LIKE, wild, 1, &c, &e) == 0);
    int k = 0;
    while (facts_names_next(c, &id, NULL, &e) == 1) k++;
    CHECK_EQ_INT(k, 2); /* '_' is any one character */
    facts_names_close(c);
    REQUIRE(facts_names_open(db, FACTS_LIKE, escaped, 1, &c, &e) == 0);
    CHECK_EQ_INT(facts_names_next(c, &id, NULL, &e), 1);
    CHECK_EQ_INT(id, 3);
    CHECK_EQ_INT(facts_names_next(c, &id, NULL, &e), 0);
    facts_names_close(c);

    static const char *const exact[] = { "cudaLaunchKernel", "aten::add" }, *const lower[] = { "cudalaunchkernel" };
    REQUIRE(facts_names_open(db, FACTS_EQUAL, exact, 2, &c, &e) == 0);
    CHECK_EQ_INT(facts_names_next(c, &id, NULL, &e), 1);
    CHECK_EQ_INT(id, 5); /* exact text: ATEN::ADD is not aten::add */
    CHECK_EQ_INT(facts_names_next(c, &id, NULL, &e), 0);
    facts_names_close(c);
    CHECK_EQ_INT(facts_names_exist(db, FACTS_EQUAL, lower, 1, &e), 0);
    CHECK_EQ_INT(facts_names_exist(db, FACTS_LIKE, lower, 1, &e), 1);

    static const char *const nine[9] = { "a", "b", "c", "d", "e", "f", "g", "h", "i" };
    CHECK_EQ_INT(facts_names_exist(db, FACTS_LIKE, nine, 9, &e), ERR_INVALID);
    CHECK_EQ_INT(facts_names_exist(db, FACTS_LIKE, nine, 8, &e), 0);

    static const char *const tpu[] = { "%XLA%", "/device:%" };
    CHECK_EQ_INT(facts_track_named(db, 1, tpu, 2, &e), 1);
    CHECK_EQ_INT(facts_track_named(db, 0, tpu, 2, &e), 0);
    sqlite3_close(db);
}

/* A failed query is an error, not an empty answer. */
static void test_errors(void)
{
    sqlite3 *db;
    struct err e;
    struct facts_step *s = (struct facts_step *)1;
    size_t n = 9;
    double calls;
    static const char *const any[] = { "%" };
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK(facts_steps(db, 0, &s, &n, &e) < 0);
    CHECK(s == NULL);
    CHECK_EQ_INT(n, 0);
    CHECK(strstr(e.msg, "step") != NULL);
    CHECK(facts_op_calls(db, 0, &calls, &e) < 0);
    CHECK(strstr(e.msg, "op_stat") != NULL);
    CHECK(facts_names_exist(db, FACTS_LIKE, any, 1, &e) < 0);
    CHECK(facts_track_named(db, 0, any, 1, &e) < 0);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_rank_facts);
    RUN(test_names);
    RUN(test_errors);
    return harness_done("facts");
}

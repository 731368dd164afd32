/* rank_read_test — what the Ranks page reads: every rank in rank order
 * with its slice id range (lo > hi for a rank without slices, NULL text
 * kept NULL), the steps in (rank, index) order with their breakdown, and
 * the top kernels over all ranks with each rank's time and calls (a rank
 * that never ran a kernel has no row); a missing table is an error, never
 * "no rows". */
#include <sqlite3.h>
#include <string.h>

#include "harness.h"
#include "store/rank_read.h"

static const char tables_sql[] =
    "CREATE TABLE rank(rank INTEGER PRIMARY KEY, file TEXT, format TEXT, base_ns INTEGER, t0 INTEGER, t1 INTEGER,"
    " distributed TEXT);"
    "INSERT INTO rank VALUES(1, 'b.json', 'kineto', 7, 10, 20, NULL), (0, 'a.json', 'kineto', 5, 0, 30, '{}');"
    "CREATE TABLE track(id INTEGER PRIMARY KEY, rank INTEGER, nslices INTEGER, first_slice INTEGER,"
    " last_slice INTEGER);"
    "INSERT INTO track VALUES(1, 0, 3, 1, 3), (2, 0, 2, 4, 5), (3, 0, 0, 99, 0), (4, 1, 0, NULL, NULL);"
    "CREATE TABLE step(rank INTEGER, idx INTEGER, name TEXT, ts INTEGER, dur INTEGER, kernel INTEGER,"
    " memcpy INTEGER, memset INTEGER, comm INTEGER, runtime INTEGER, dataloader INTEGER, cpu_exec INTEGER,"
    " other INTEGER);"
    "INSERT INTO step VALUES(1, 0, 'ProfilerStep#1', 10, 5, 1, 2, 3, 4, 5, 6, 7, 8),"
    " (0, 1, NULL, 20, 9, 0, 0, 0, 0, 0, 0, 0, 9), (0, 0, 'ProfilerStep#1', 0, 10, 10, 0, 0, 0, 0, 0, 0, 0);"
    "CREATE TABLE kernel_stat(rank INTEGER, device INTEGER, name TEXT, op TEXT, calls INTEGER, total INTEGER,"
    " comm INTEGER);"
    "INSERT INTO kernel_stat VALUES(0, 0, 'gemm', 'aten::mm', 2, 100, 0), (0, 1, 'gemm', 'aten::mm', 1, 50, 0),"
    " (1, 0, 'gemm', 'aten::mm', 4, 300, 0), (1, 0, 'nccl', '', 1, 200, 1), (0, 0, 'tiny', '', 1, 1, 0);";

static void test_ranks(sqlite3 *db)
{
    struct err e;
    struct rank_read_rank *r;
    size_t n;
    REQUIRE(rank_read_ranks(db, &r, &n, &e) == 0);
    REQUIRE(n == 2);
    CHECK_EQ_INT(r[0].rank, 0);
    CHECK_EQ_STR(r[0].file, "a.json");
    CHECK_EQ_STR(r[0].dist, "{}");
    CHECK_EQ_INT(r[0].base_ns, 5);
    CHECK_EQ_INT(r[0].t1, 30);
    CHECK_EQ_INT(r[0].lo, 1); /* the empty track 3 does not widen the range */
    CHECK_EQ_INT(r[0].hi, 5);
    CHECK_EQ_INT(r[1].rank, 1);
    CHECK(r[1].dist == NULL);
    CHECK(r[1].lo > r[1].hi);
    rank_read_ranks_free(r, n);
}

static void test_steps(sqlite3 *db)
{
    struct err e;
    struct rank_read_steps *c;
    struct rank_read_step s;
    REQUIRE(rank_read_steps_open(db, &c, &e) == 0);
    REQUIRE(rank_read_steps_next(c, &s, &e) == 1);
    CHECK_EQ_INT(s.rank, 0);
    CHECK_EQ_STR(s.name, "ProfilerStep#1");
    CHECK_EQ_INT(s.part[0], 10);
    REQUIRE(rank_read_steps_next(c, &s, &e) == 1);
    CHECK_EQ_STR(s.name, "");
    CHECK_EQ_INT(s.ts, 20);
    CHECK_EQ_INT(s.part[RANK_READ_NPARTS - 1], 9);
    REQUIRE(rank_read_steps_next(c, &s, &e) == 1);
    CHECK_EQ_INT(s.rank, 1);
    CHECK_EQ_INT(s.dur, 5);
    CHECK_EQ_INT(s.part[3], 4);
    CHECK_EQ_INT(rank_read_steps_next(c, &s, &e), 0);
    rank_read_steps_close(c);
}

static void test_kernels(sqlite3 *db)
{
    struct err e;
    struct rank_read_kernels *c;
    const char *name;
    int64_t total, t, calls;
    int comm, rk;
    REQUIRE(rank_read_kernels_open(db, 2, &c, &e) == 0);
    REQUIRE(rank_read_kernels_next(c, &name, &total, &comm, &e) == 1);
    CHECK_EQ_STR(name, "gemm");
    CHECK_EQ_INT(total, 450);
    CHECK_EQ_INT(comm, 0);
    REQUIRE(rank_read_kernel_ranks_next(c, &rk, &t, &calls, &e) == 1);
    CHECK_EQ_INT(rk, 0); /* both devices of rank 0 together */
    CHECK_EQ_INT(t, 150);
    CHECK_EQ_INT(calls, 3);
    REQUIRE(rank_read_kernel_ranks_next(c, &rk, &t, &calls, &e) == 1);
    CHECK_EQ_INT(rk, 1);
    CHECK_EQ_INT(t, 300);
    CHECK_EQ_INT(rank_read_kernel_ranks_next(c, &rk, &t, &calls, &e), 0);
    REQUIRE(rank_read_kernels_next(c, &name, &total, &comm, &e) == 1);
    CHECK_EQ_STR(name, "nccl");
    CHECK_EQ_INT(comm, 1);
    REQUIRE(rank_read_kernel_ranks_next(c, &rk, &t, &calls, &e) == 1);
    CHECK_EQ_INT(rk, 1);
    CHECK_EQ_INT(rank_read_kernel_ranks_next(c, &rk, &t, &calls, &e), 0);
    CHECK_EQ_INT(rank_read_kernels_next(c, &name, &total, &comm, &e), 0); /* top 2: "tiny" left out */
    rank_read_kernels_close(c);
}

static void test_errors(void)
{
    sqlite3 *db;
    struct err e;
    struct rank_read_rank *r = (struct rank_read_rank *)1;
    struct rank_read_steps *s = (struct rank_read_steps *)1;
    struct rank_read_kernels *k = (struct rank_read_kernels *)1;
    size_t n = 3;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK(rank_read_ranks(db, &r, &n, &e) < 0);
    CHECK(r == NULL);
    CHECK_EQ_INT(n, 0);
    CHECK(rank_read_steps_open(db, &s, &e) < 0);
    CHECK(strstr(e.msg, "step") != NULL);
    CHECK(s == NULL);
    CHECK(rank_read_kernels_open(db, 5, &k, &e) < 0);
    CHECK(strstr(e.msg, "kernel_stat") != NULL);
    CHECK(k == NULL);
    sqlite3_close(db);
}

static void test_reads(void)
{
    sqlite3 *db = NULL;
    int made =
        sqlite3_open(":memory:", &db) == SQLITE_OK && sqlite3_exec(db, tables_sql, NULL, NULL, NULL) == SQLITE_OK;
    REQUIRE(made);
    test_ranks(db);
    test_steps(db);
    test_kernels(db);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_reads);
    RUN(test_errors);
    return harness_done("rank_read");
}

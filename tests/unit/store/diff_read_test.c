/* diff_read_test — the two sides of a comparison: B attached to A (a
 * missing B refused), each side's ranks, steps, step averages, busiest GPU
 * (NULL columns flagged), kernel time and stored summary read from its own
 * schema; a run without the step table says so; the table of A against B
 * counts added, removed, faster and slower names, sorts, filters by a LIKE
 * pattern and by status, pages, and flags the NULL side of a row. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "rundb_fixture.h"
#include "store/diff_read.h"

static const char derived_a[] =
    "CREATE TABLE step(rank INTEGER, idx INTEGER, name TEXT, ts INTEGER, dur INTEGER, kernel INTEGER,"
    " memcpy INTEGER, memset INTEGER, comm INTEGER, runtime INTEGER, dataloader INTEGER, cpu_exec INTEGER,"
    " other INTEGER);"
    "INSERT INTO step VALUES(0, 0, 's', 0, 100, 10, 0, 0, 0, 0, 0, 0, 90), (0, 1, 's', 100, 300, 30, 0, 0, 0, 0, 0,"
    " 0, 270), (1, 0, 's', 0, 7, 0, 0, 0, 0, 0, 0, 0, 7);"
    "CREATE TABLE kernel_stat(rank INTEGER, device INTEGER, name TEXT, calls INTEGER, total INTEGER, tc INTEGER);"
    "INSERT INTO kernel_stat VALUES(0, 0, 'gemm', 2, 100, 1), (0, 0, 'conv', 1, 50, 0), (1, 0, 'other', 1, 999, 0);"
    "CREATE TABLE op_stat(rank INTEGER, name TEXT, calls INTEGER, dev_self INTEGER, host_self INTEGER);"
    "INSERT INTO op_stat VALUES(0, 'aten::mm', 2, 0, 40);"
    "CREATE TABLE gpu(rank INTEGER, device INTEGER, name TEXT, memory_bytes INTEGER, cc TEXT, util REAL,"
    " sm_eff REAL, tc_share REAL, kernel_ns INTEGER);"
    "INSERT INTO gpu VALUES(0, 0, 'small', 1, '8.0', 0.1, 0.1, 0.1, 10), (0, 1, 'H100', NULL, '9.0', 0.5, NULL,"
    " 0.25, 99);"
    "CREATE TABLE analysis(rank INTEGER PRIMARY KEY, summary TEXT);"
    "INSERT INTO analysis VALUES(0, '{\"peak_memory\":{}}');";

static const char derived_b[] =
    "CREATE TABLE step(rank INTEGER, idx INTEGER, name TEXT, ts INTEGER, dur INTEGER, kernel INTEGER,"
    " memcpy INTEGER, memset INTEGER, comm INTEGER, runtime INTEGER, dataloader INTEGER, cpu_exec INTEGER,"
    " other INTEGER);"
    "CREATE TABLE kernel_stat(rank INTEGER, device INTEGER, name TEXT, calls INTEGER, total INTEGER, tc INTEGER);"
    "INSERT INTO kernel_stat VALUES(0, 0, 'gemm', 2, 50, 0), (0, 0, 'attn', 3, 30, 0);"
    "CREATE TABLE op_stat(rank INTEGER, name TEXT, calls INTEGER, dev_self INTEGER, host_self INTEGER);"
    "INSERT INTO op_stat VALUES(0, 'aten::mm', 2, 5, 40);"
    "CREATE TABLE gpu(rank INTEGER, device INTEGER, name TEXT, memory_bytes INTEGER, cc TEXT, util REAL,"
    " sm_eff REAL, tc_share REAL, kernel_ns INTEGER);"
    "CREATE TABLE analysis(rank INTEGER PRIMARY KEY, summary TEXT);";

static void add_tables(const char *path, const char *sql)
{
    sqlite3 *db;
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
}

static void test_sides(sqlite3 *db)
{
    struct err e;
    int *ranks;
    size_t n;
    int64_t v;
    double avg[9];
    char *text;
    struct diff_read_gpu g;

    CHECK_EQ_INT(diff_read_has_steps(db, 0, &e), 1);
    CHECK_EQ_INT(diff_read_has_steps(db, 1, &e), 1);
    REQUIRE(diff_read_ranks(db, 0, &ranks, &n, &e) == 0);
    CHECK_EQ_INT(n, 2);
    free(ranks);
    REQUIRE(diff_read_ranks(db, 1, &ranks, &n, &e) == 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(ranks[0], 0);
    free(ranks);
    REQUIRE(diff_read_step_count(db, 0, 0, &v, &e) == 0);
    CHECK_EQ_INT(v, 2);
    REQUIRE(diff_read_step_count(db, 1, 0, &v, &e) == 0);
    CHECK_EQ_INT(v, 0);
    CHECK_EQ_INT(diff_read_op_device(db, 0, 0, &e), 0);
    CHECK_EQ_INT(diff_read_op_device(db, 1, 0, &e), 1);
    CHECK_EQ_INT(diff_read_step_avg(db, 0, 0, avg, &e), 1);
    CHECK(avg[0] == 200 && avg[1] == 20 && avg[8] == 180);
    REQUIRE(diff_read_gpu(db, 0, 0, &g, &e) == 1);
    CHECK_EQ_STR(g.name, "H100");
    CHECK_EQ_STR(g.cc, "9.0");
    CHECK_EQ_INT(g.nulls, 2 | 16);
    CHECK(g.share[0] == 0.5 && g.share[2] == 0.25);
    free(g.name);
    free(g.cc);
    CHECK_EQ_INT(diff_read_gpu(db, 1, 0, &g, &e), 0);
    REQUIRE(diff_read_kernel_ns(db, 0, 0, &v, &e) == 0);
    CHECK_EQ_INT(v, 150);
    REQUIRE(diff_read_kernel_ns(db, 1, 3, &v, &e) == 0);
    CHECK_EQ_INT(v, 0);
    REQUIRE(diff_read_summary(db, 0, 0, &text, &e) == 0);
    CHECK(text && strstr(text, "peak_memory") != NULL);
    free(text);
    REQUIRE(diff_read_summary(db, 1, 0, &text, &e) == 0);
    CHECK(text == NULL);
}

static void test_table(sqlite3 *db)
{
    struct err e;
    int64_t c[5];
    struct diff_read_q q = { .kernels = 1, .diva = 1, .divb = 1, .thr = 0.05, .minabs = 1, .mask = 31, .desc = 1,
                             .limit = -1 };
    struct diff_read_rows *cur;
    struct diff_read_row r;

    REQUIRE(diff_read_counts(db, &q, c, 5, &e) == 0);
    CHECK(c[0] == 1 && c[1] == 1 && c[2] == 1 && c[3] == 0 && c[4] == 0);
    /* by change, largest first, ties by name: conv and gemm both lost 50 */
    REQUIRE(diff_read_rows_open(db, &q, &cur, &e) == 0);
    REQUIRE(diff_read_rows_next(cur, &r, &e) == 1);
    CHECK_EQ_STR(r.name, "conv");
    CHECK_EQ_INT(r.status, 1);
    CHECK_EQ_INT(r.nulls, 1 << DIFF_READ_B_CALLS | 1 << DIFF_READ_B_T | 1 << DIFF_READ_RATIO);
    CHECK(r.v[DIFF_READ_A_T] == 50 && r.v[DIFF_READ_DELTA] == -50);
    REQUIRE(diff_read_rows_next(cur, &r, &e) == 1);
    CHECK_EQ_STR(r.name, "gemm");
    CHECK_EQ_INT(r.status, 2);
    CHECK_EQ_INT(r.nulls, 0);
    CHECK(r.v[DIFF_READ_RATIO] == 0.5);
    CHECK_EQ_INT(r.tc, 1);
    REQUIRE(diff_read_rows_next(cur, &r, &e) == 1);
    CHECK_EQ_STR(r.name, "attn");
    CHECK_EQ_INT(r.status, 0);
    CHECK_EQ_INT(r.nulls, 1 << DIFF_READ_A_CALLS | 1 << DIFF_READ_A_T | 1 << DIFF_READ_RATIO);
    CHECK_EQ_INT(diff_read_rows_next(cur, &r, &e), 0);
    diff_read_rows_close(cur);

    /* a filter, a status mask, per-step divisors, a page */
    q.like = "%m%";
    q.divb = 2;
    q.mask = 1u << 2;
    q.sort = 3; /* name */
    q.desc = 0;
    REQUIRE(diff_read_counts(db, &q, c, 5, &e) == 0);
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 1);
    REQUIRE(diff_read_rows_open(db, &q, &cur, &e) == 0);
    REQUIRE(diff_read_rows_next(cur, &r, &e) == 1);
    CHECK_EQ_STR(r.name, "gemm");
    CHECK(r.v[DIFF_READ_B_T] == 25 && r.v[DIFF_READ_B_CALLS] == 1);
    CHECK_EQ_INT(diff_read_rows_next(cur, &r, &e), 0);
    diff_read_rows_close(cur);
    q.like = NULL;
    q.mask = 31;
    q.limit = 1;
    q.offset = 1;
    REQUIRE(diff_read_rows_open(db, &q, &cur, &e) == 0);
    REQUIRE(diff_read_rows_next(cur, &r, &e) == 1);
    CHECK_EQ_STR(r.name, "conv");
    CHECK_EQ_INT(diff_read_rows_next(cur, &r, &e), 0);
    diff_read_rows_close(cur);

    /* operators: host self time unless told device time */
    struct diff_read_q o = { .diva = 1, .divb = 1, .thr = 0.05, .mask = 31, .limit = -1 };
    REQUIRE(diff_read_rows_open(db, &o, &cur, &e) == 0);
    REQUIRE(diff_read_rows_next(cur, &r, &e) == 1);
    CHECK(r.v[DIFF_READ_A_T] == 40 && r.v[DIFF_READ_B_T] == 40 && r.status == 4);
    diff_read_rows_close(cur);
    o.op_device = 1;
    REQUIRE(diff_read_rows_open(db, &o, &cur, &e) == 0);
    REQUIRE(diff_read_rows_next(cur, &r, &e) == 1);
    CHECK(r.v[DIFF_READ_A_T] == 0 && r.v[DIFF_READ_B_T] == 5);
    diff_read_rows_close(cur);
}

static void test_diff_read(void)
{
    struct err e;
    sqlite3 *db = (sqlite3 *)1;
    char *a = fixture_path("a.db"), *b = fixture_path("b.db"), *c = fixture_path("c.db"), *x = fixture_path("x.db");
    REQUIRE(fixture_run(a, 2) == 0);
    REQUIRE(fixture_run(b, 1) == 0);
    REQUIRE(fixture_run(c, 1) == 0);
    add_tables(a, derived_a);
    add_tables(b, derived_b);

    REQUIRE(diff_read_open(a, b, &db, &e) == 0);
    test_sides(db);
    test_table(db);
    sqlite3_close(db);

    CHECK(diff_read_open(a, x, &db, &e) < 0);
    CHECK(db == NULL);
    REQUIRE(diff_read_open(a, c, &db, &e) == 0);
    CHECK_EQ_INT(diff_read_has_steps(db, 1, &e), 0);
    int64_t v;
    CHECK(diff_read_step_count(db, 1, 0, &v, &e) < 0);
    CHECK(strstr(e.msg, "step") != NULL);
    sqlite3_close(db);
    free(a);
    free(b);
    free(c);
    free(x);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_diff_read);
    fixture_cleanup();
    return harness_done("diff_read");
}

/* stats_read_test — the statistics the rules weigh: the top collective
 * kernel and the collectives' totals of a rank (others' not counted), the
 * layout conversions against all kernels and the operators around them,
 * attention by hand against fused kernels, tensor-core-eligible operator
 * time, the names of collectives (record_param_comms too for the Ranks
 * page), memory allocated before a sample and the tensors live at a time
 * or kept over a window (CUDA devices only, by operator); a missing table is an error, never "nothing found". */
#include <sqlite3.h>
#include <string.h>

#include "harness.h"
#include "store/stats_read.h"

static const char tables_sql[] =
    "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT NOT NULL);"
    "INSERT INTO str VALUES(1, 'ncclKernel_AllReduce'), (2, 'nccl:all_reduce'), (3, 'aten::mm'), (4, 'gemm'),"
    " (5, 'aten::copy_'), (6, 'record_param_comms');"
    "CREATE TABLE kernel_stat(rank INTEGER, device INTEGER, name TEXT, op TEXT, calls INTEGER, total INTEGER,"
    " comm INTEGER);"
    "INSERT INTO kernel_stat VALUES"
    " (0, 0, 'ncclKernel_AllReduce', '', 10, 500, 1), (0, 0, 'ncclKernel_Small', '', 90, 100, 1),"
    " (1, 0, 'ncclKernel_Big', '', 1, 9000, 1),"
    " (0, 0, 'gemm', 'aten::mm', 5, 1000, 0), (0, 0, 'nchwToNhwcKernel', 'aten::conv', 4, 300, 0),"
    " (0, 0, 'nhwcToNchwKernel', '', 2, 200, 0), (0, 0, 'softmax_kernel', 'aten::_softmax', 3, 60, 0),"
    " (0, 0, 'bmm_kernel', 'aten::bmm', 6, 90, 0),"
    " (2, 0, 'fmha_fwd', 'x', 1, 10, 0);"
    "CREATE TABLE op_stat(rank INTEGER, name TEXT, dev_self INTEGER, tc_self INTEGER, tc_eligible INTEGER);"
    "INSERT INTO op_stat VALUES(0, 'aten::mm', 700, 100, 1), (0, 'aten::mm', 300, 0, 1), (0, 'aten::bmm', 900, 0, 1),"
    " (0, 'aten::add', 5000, 0, 0);"
    "CREATE TABLE mem(id INTEGER PRIMARY KEY, rank INTEGER, ts INTEGER, dev_type INTEGER, dev_id INTEGER,"
    " bytes INTEGER, total_alloc INTEGER);"
    "INSERT INTO mem VALUES(1, 0, 100, 1, 0, 64, -1), (2, 0, 150, 0, 0, 8, 5000), (3, 0, 200, 1, 0, 32, 1032),"
    " (4, 0, 300, 1, 0, 16, 2016);"
    "CREATE TABLE mem_alloc(id INTEGER PRIMARY KEY, rank INTEGER, dev_type INTEGER, dev_id INTEGER,"
    " bytes INTEGER, alloc_ts INTEGER, free_ts INTEGER, op INTEGER);"
    "INSERT INTO mem_alloc VALUES(1, 0, 1, 0, 100, 10, NULL, 3), (2, 0, 1, 0, 50, 20, 500, 3),"
    " (3, 0, 1, 0, 400, 30, 40, 5), (4, 0, 1, 0, 70, 50, NULL, 0), (5, 0, 0, 0, 999, 10, NULL, 3),"
    " (6, 0, 1, 0, 0, 10, NULL, 5);";

static void test_kernels(sqlite3 *db)
{
    struct err e;
    char top[64];
    long long calls;
    double total, c2, t2;
    REQUIRE(stats_read_top_comm_kernel(db, 0, top, sizeof top, &calls, &total, &e) == 0);
    CHECK_EQ_STR(top, "ncclKernel_AllReduce");
    CHECK_EQ_INT(calls, 10);
    CHECK(total == 500);
    REQUIRE(stats_read_top_comm_kernel(db, 2, top, sizeof top, &calls, &total, &e) == 0);
    CHECK_EQ_STR(top, "");
    REQUIRE(stats_read_comm_totals(db, 0, &c2, &t2, &e) == 0);
    CHECK(c2 == 100 && t2 == 600);
    CHECK_EQ_INT(stats_read_has_comm_kernel(db, 1, &e), 1);
    CHECK_EQ_INT(stats_read_has_comm_kernel(db, 2, &e), 0);

    struct stats_read_transposes t;
    REQUIRE(stats_read_transposes(db, 0, &t, &e) == 1);
    CHECK(t.kernel_ns == 500 + 100 + 1000 + 300 + 200 + 60 + 90);
    CHECK(t.transpose_ns == 500);
    CHECK(t.back_ns == 200);
    CHECK_EQ_INT(t.calls, 6);
    struct stats_read_group *g;
    size_t n;
    REQUIRE(stats_read_transposes_by_op(db, 0, &g, &n, &e) == 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_STR(g[0].name, "aten::conv");
    CHECK_EQ_STR(g[1].name, "(no operator)");
    CHECK_EQ_INT(g[1].count, 2);
    stats_read_groups_free(g, n);

    struct stats_read_attention a;
    REQUIRE(stats_read_attention(db, 0, &a, &e) == 1);
    CHECK(a.softmax_ns == 60 && a.bmm_ns == 90 && a.fused_ns == 0);
    CHECK_EQ_INT(a.softmax_calls, 3);
    CHECK_EQ_INT(a.bmm_calls, 6);
    CHECK(a.kernel_ns == 1000 + 300 + 200 + 60 + 90); /* collectives left out */
    REQUIRE(stats_read_attention(db, 2, &a, &e) == 1);
    CHECK(a.fused_ns == 10);

    double ns, tc;
    REQUIRE(stats_read_amp_eligible(db, 0, &ns, &tc, top, sizeof top, &e) == 0);
    CHECK(ns == 1900 && tc == 100);
    CHECK_EQ_STR(top, "aten::mm"); /* 1000 summed over its rows beats aten::bmm's 900 */

    struct stats_read_names *c;
    uint32_t id;
    const char *s;
    int kernel, seen = 0;
    REQUIRE(stats_read_comm_names_open(db, &c, &e) == 0);
    while (stats_read_comm_names_next(c, &id, &s, &kernel, &e) == 1) {
        /* aten:: has a ':' early too: the rule sorts out which spans are collectives */
        int want = id == 1 ? 1 : 0;
        CHECK_EQ_INT(kernel, want);
        seen |= id == 1 ? 1 : id == 2 ? 2 : id == 3 || id == 5 ? 4 : 8;
    }
    CHECK_EQ_INT(seen, 7);
    stats_read_names_close(c);
    /* the Ranks page's walk adds record_param_comms, the rules' does not */
    seen = 0;
    REQUIRE(stats_read_comm_names_rpc_open(db, &c, &e) == 0);
    while (stats_read_comm_names_next(c, &id, &s, &kernel, &e) == 1) seen |= id == 6 ? 16 : id == 1 ? 1 : 0;
    CHECK_EQ_INT(seen, 17);
    stats_read_names_close(c);
}

static void test_memory(sqlite3 *db)
{
    struct err e;
    int64_t v;
    struct stats_read_group *g;
    size_t n;
    REQUIRE(stats_read_alloc_at(db, 0, 0, 120, &v, &e) == 0);
    CHECK_EQ_INT(v, 1000); /* the CPU sample at 150 and the one without a total are skipped */
    REQUIRE(stats_read_alloc_at(db, 0, 0, 301, &v, &e) == 0);
    CHECK_EQ_INT(v, -1);

    REQUIRE(stats_read_live_at(db, 0, 0, 35, &g, &n, &e) == 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_STR(g[0].name, "aten::copy_");
    CHECK(g[0].total == 400);
    CHECK_EQ_INT(g[1].id, 3);
    CHECK(g[1].total == 150);
    CHECK_EQ_INT(g[1].count, 2);
    stats_read_groups_free(g, n);

    /* allocated in [20, 60), alive at 500: the free at 500 counts as alive */
    REQUIRE(stats_read_kept(db, 0, 0, 20, 60, 500, &g, &n, &e) == 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(g[0].id, 0);
    CHECK(g[0].name == NULL);
    CHECK(g[0].total == 70);
    CHECK(g[1].total == 50);
    stats_read_groups_free(g, n);
}

static void test_stats(void)
{
    sqlite3 *db;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, tables_sql, NULL, NULL, NULL) == SQLITE_OK);
    test_kernels(db);
    test_memory(db);
    sqlite3_close(db);
}

static void test_errors(void)
{
    sqlite3 *db;
    struct err e;
    struct stats_read_transposes t;
    struct stats_read_group *g = (struct stats_read_group *)1;
    size_t n = 3;
    double a, b;
    char top[8];
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK(stats_read_transposes(db, 0, &t, &e) < 0);
    CHECK(strstr(e.msg, "kernel_stat") != NULL);
    CHECK(stats_read_comm_totals(db, 0, &a, &b, &e) < 0);
    CHECK(stats_read_has_comm_kernel(db, 0, &e) < 0);
    CHECK(stats_read_amp_eligible(db, 0, &a, &b, top, sizeof top, &e) < 0);
    CHECK(strstr(e.msg, "op_stat") != NULL);
    CHECK(stats_read_live_at(db, 0, 0, 0, &g, &n, &e) < 0);
    CHECK(g == NULL);
    CHECK_EQ_INT(n, 0);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_stats);
    RUN(test_errors);
    return harness_done("stats_read");
}

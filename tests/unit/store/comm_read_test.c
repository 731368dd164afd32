/* comm_read_test — what the Ranks page reads for collectives: the scan of
 * one rank's id range keeps kernels, CPU ops and annotations (not runtime
 * calls), tells a CPU thread from a GPU-side copy and hands the args over;
 * the launch walk finds a kernel's runtime call by correlation id inside
 * the range only (corr 0 never) and climbs parents with their args; a
 * missing table is an error, never "nothing found". */
#include <sqlite3.h>
#include <string.h>

#include "harness.h"
#include "store/comm_read.h"
#include "store/model.h"

static void make_tables(sqlite3 *db)
{
    /* rank 0: CPU thread track 1, GPU stream track 2; rank 1: track 3 */
    char *sql = sqlite3_mprintf(
        "CREATE TABLE track(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER);"
        "INSERT INTO track VALUES(1, 0, %d), (2, 0, %d), (3, 1, %d);"
        "CREATE TABLE slice(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, dur INTEGER, parent INTEGER,"
        " name INTEGER, kind INTEGER, corr INTEGER, args TEXT);"
        "INSERT INTO slice VALUES"
        " (1, 1, 0, 100, 0, 10, %d, 0, '{\"In msg nelems\": 8}'),"  /* record_param_comms */
        " (2, 1, 5, 90, 1, 11, %d, 0, NULL),"                       /* c10d::allreduce_ */
        " (3, 1, 10, 5, 2, 12, %d, 7, NULL),"                       /* cudaLaunchKernel */
        " (4, 2, 20, 50, 0, 13, %d, 7, NULL),"                      /* ncclKernel */
        " (5, 2, 20, 50, 0, 14, %d, 0, NULL),"                      /* GPU-side annotation */
        " (6, 3, 0, 1, 0, 12, %d, 7, NULL);",                       /* rank 1's call, same corr */
        TB_TRACK_CPU, TB_TRACK_GPU, TB_TRACK_CPU, TB_K_CPU_OP, TB_K_CPU_OP, TB_K_RUNTIME, TB_K_KERNEL,
        TB_K_USER_ANNOTATION, TB_K_RUNTIME);
    REQUIRE(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_free(sql);
}

static void test_scan(sqlite3 *db)
{
    struct err e;
    struct comm_read_scan *c;
    struct comm_read_slice s;
    REQUIRE(comm_read_scan_open(db, 0, 1, 5, &c, &e) == 0);
    REQUIRE(comm_read_scan_next(c, &s, &e) == 1);
    CHECK_EQ_INT(s.name, 10);
    CHECK_EQ_INT(s.kernel, 0);
    CHECK_EQ_INT(s.on_cpu, 1);
    CHECK(s.args && strstr(s.args, "msg") != NULL);
    REQUIRE(comm_read_scan_next(c, &s, &e) == 1);
    CHECK_EQ_INT(s.name, 11);
    CHECK(s.args == NULL);
    REQUIRE(comm_read_scan_next(c, &s, &e) == 1); /* the runtime call 3 is left out */
    CHECK_EQ_INT(s.name, 13);
    CHECK_EQ_INT(s.kernel, 1);
    CHECK_EQ_INT(s.corr, 7);
    CHECK_EQ_INT(s.ts, 20);
    CHECK_EQ_INT(s.dur, 50);
    CHECK_EQ_INT(s.on_cpu, 0);
    REQUIRE(comm_read_scan_next(c, &s, &e) == 1);
    CHECK_EQ_INT(s.name, 14);
    CHECK_EQ_INT(s.on_cpu, 0); /* an annotation on the GPU stream */
    CHECK_EQ_INT(comm_read_scan_next(c, &s, &e), 0);
    comm_read_scan_close(c);
}

static void test_launch(sqlite3 *db)
{
    struct err e;
    struct comm_read_launch *l;
    int64_t parent;
    uint32_t name;
    const char *args;
    REQUIRE(comm_read_launch_open(db, &l, &e) == 0);
    CHECK_EQ_INT(comm_read_launch_parent(l, 7, 1, 5, &parent, &e), 1);
    CHECK_EQ_INT(parent, 2);
    CHECK_EQ_INT(comm_read_launch_parent(l, 7, 6, 6, &parent, &e), 1); /* rank 1's own call */
    CHECK_EQ_INT(parent, 0);
    CHECK_EQ_INT(comm_read_launch_parent(l, 7, 4, 5, &parent, &e), 0); /* the kernel itself is no launch */
    CHECK_EQ_INT(comm_read_launch_parent(l, 0, 1, 6, &parent, &e), 0);
    REQUIRE(comm_read_launch_slice(l, 2, &name, &args, &parent, &e) == 1);
    CHECK_EQ_INT(name, 11);
    CHECK(args == NULL);
    CHECK_EQ_INT(parent, 1);
    REQUIRE(comm_read_launch_slice(l, parent, &name, &args, &parent, &e) == 1);
    CHECK_EQ_INT(name, 10);
    CHECK(args && strstr(args, "nelems") != NULL);
    CHECK_EQ_INT(parent, 0);
    CHECK_EQ_INT(comm_read_launch_slice(l, 99, &name, &args, &parent, &e), 0);
    comm_read_launch_release(l);
    comm_read_launch_close(l);
}

static void test_reads(void)
{
    sqlite3 *db;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    make_tables(db);
    test_scan(db);
    test_launch(db);
    /* the same with corr_ids, as the writer makes it now */
    REQUIRE(sqlite3_exec(db,
                         "CREATE TABLE corr_ids(corr INTEGER, id INTEGER, PRIMARY KEY(corr, id)) WITHOUT ROWID;"
                         "INSERT INTO corr_ids SELECT corr, id FROM slice WHERE corr != 0;"
                         "UPDATE slice SET corr = -corr", /* only corr_ids may be read */
                         NULL, NULL, NULL) == SQLITE_OK);
    test_launch(db);
    sqlite3_close(db);
}

static void test_errors(void)
{
    sqlite3 *db;
    struct err e;
    struct comm_read_scan *c = (struct comm_read_scan *)1;
    struct comm_read_launch *l = (struct comm_read_launch *)1;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK(comm_read_scan_open(db, 0, 1, 9, &c, &e) < 0);
    CHECK(strstr(e.msg, "slice") != NULL);
    CHECK(c == NULL);
    CHECK(comm_read_launch_open(db, &l, &e) < 0);
    CHECK(l == NULL);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_reads);
    RUN(test_errors);
    return harness_done("comm_read");
}

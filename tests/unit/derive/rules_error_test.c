/* rules_error_test — a rule whose query fails reports the error: a broken
 * run.db must never read as "no finding". enable_amp with no op_stat table
 * (a prepare failure), excessive_host_sync over a run whose slice pages are
 * garbled (a failure in the middle of the slice cursor's scan);
 * comm_not_overlapped over garbled pages or without kernel_stat;
 * ddp_backend, use_ddp_not_dp and dataloader_bound without their tables. */
#include <fcntl.h>
#include <unistd.h>

#include "base/config.h"
#include "derive/rules.h"
#include "harness.h"
#include "store/scan.h"

static struct config cfg;

/* Runs def over db with the one rank r; returns its status, e filled. */
static int run_rule(const struct rules_def *def, sqlite3 *db, struct rules_rank *r, struct err *e)
{
    struct rules_ctx ctx = { .db = db, .cfg = &cfg.rules, .ranks = r, .nranks = 1, .findings = json_array() };
    err_clear(e);
    int rc = def->run(&ctx, e);
    CHECK_EQ_INT(json_array_size(ctx.findings), 0);
    json_decref(ctx.findings);
    scan_launch_close(r->launch); /* rules_run's, when a rule read the launch calls */
    r->launch = NULL;
    return rc;
}

static void test_enable_amp_missing_table(void)
{
    sqlite3 *db;
    struct err e;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    struct rules_gpu g = { 0 };
    g.cc = 8.0;
    g.kernel_ns = 1000000;
    struct rules_rank r = { 0 };
    r.gpu = &g;
    CHECK(run_rule(&rule_enable_amp, db, &r, &e) < 0);
    CHECK(strstr(e.msg, "op_stat") != NULL);
    sqlite3_close(db);
}

/* A run.db at dir/run.db whose slice table (2000 CPU-thread slices of
 * kind 4 named str 1, made by the caller's sql after the tables) spans
 * pages, with its last page garbled; opened read-only into *db. */
static void garbled_db(char *dir, const char *sql, sqlite3 **db)
{
    REQUIRE(mkdtemp(dir) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/run.db", dir);
    REQUIRE(sqlite3_open(path, db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(*db,
                         "PRAGMA page_size=1024;"
                         "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT);"
                         "CREATE TABLE track(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, nslices INTEGER,"
                         " first_slice INTEGER, last_slice INTEGER);"
                         "INSERT INTO track VALUES(1, 0, 0, 2000, 1, 2000);"
                         "CREATE TABLE slice(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, dur INTEGER,"
                         " parent INTEGER, name INTEGER, kind INTEGER, corr INTEGER, args TEXT);"
                         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
                         " INSERT INTO slice SELECT i, 1, i * 100, 10, NULL, 1, 4, 0,"
                         " '{\"pad\":\"................................\"}' FROM n;",
                         NULL, NULL, NULL) == SQLITE_OK);
    REQUIRE(sqlite3_exec(*db, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(*db);
    /* garble the last page: a leaf of the slice table */
    int fd = open(path, O_RDWR);
    REQUIRE(fd >= 0);
    off_t end = lseek(fd, 0, SEEK_END);
    char junk[1024];
    memset(junk, 0x5a, sizeof junk);
    REQUIRE(pwrite(fd, junk, sizeof junk, end - 1024) == 1024);
    close(fd);
    REQUIRE(sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
}

static void garbled_done(const char *dir, sqlite3 *db)
{
    char path[64];
    snprintf(path, sizeof path, "%s/run.db", dir);
    sqlite3_close(db);
    unlink(path);
    rmdir(dir);
}

/* One step of 1 ms, the rank in a job of two. */
static struct rules_step one_step = { .ts = 0, .dur = 1000000 };

static void one_rank(struct rules_rank *r)
{
    memset(r, 0, sizeof *r);
    r->steps = &one_step;
    r->nsteps = 1;
    r->avg_dur = one_step.dur;
    r->world_size = 2;
}

static void test_host_sync_garbled(void)
{
    char dir[] = "/tmp/tb_rules_err_XXXXXX";
    sqlite3 *db;
    /* one CPU thread with many sync calls: the slice table spans pages */
    garbled_db(dir, "INSERT INTO str VALUES(1, 'cudaDeviceSynchronize');", &db);
    struct rules_rank r;
    one_rank(&r);
    r.world_size = 0;
    struct err e;
    CHECK(run_rule(&rule_excessive_host_sync, db, &r, &e) < 0);
    CHECK(strstr(e.msg, "malformed") != NULL);
    garbled_done(dir, db);
}

/* comm_not_overlapped took a failed scan of a rank's collectives for a
 * rank without any, and a failed name query for a run without any. */
static void test_comm_overlap_errors(void)
{
    char dir[] = "/tmp/tb_rules_err_XXXXXX";
    sqlite3 *db;
    garbled_db(dir,
               "INSERT INTO str VALUES(1, 'gloo:all_reduce');"
               "CREATE TABLE kernel_stat(rank INTEGER, name TEXT, calls INTEGER, total INTEGER, comm INTEGER);"
               "UPDATE slice SET kind = 1;",
               &db);
    struct rules_rank r;
    one_rank(&r);
    r.avg_part[RULES_COMM] = 500000;
    struct err e;
    CHECK(run_rule(&rule_comm_not_overlapped, db, &r, &e) < 0);
    CHECK(strstr(e.msg, "malformed") != NULL);
    garbled_done(dir, db);

    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT)", NULL, NULL, NULL) == SQLITE_OK);
    CHECK(run_rule(&rule_comm_not_overlapped, db, &r, &e) < 0);
    CHECK(strstr(e.msg, "kernel_stat") != NULL);
    sqlite3_close(db);
}

/* The rules that read the rank table or probe the string table: a
 * missing table is their error, not a run without DataParallel or gloo. */
static void test_missing_tables(void)
{
    sqlite3 *db;
    struct err e;
    struct rules_gpu g[2] = { { 0 }, { 0 } };
    g[0].kernel_ns = g[1].kernel_ns = 1000000;
    g[1].device = 1;
    struct rules_rank r;
    one_rank(&r);
    r.gpus = g;
    r.ngpus = 2;
    r.gpu = &g[0];
    r.avg_part[RULES_DATALOADER] = 500000;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK(run_rule(&rule_ddp_backend, db, &r, &e) < 0);
    CHECK(strstr(e.msg, "rank") != NULL);
    CHECK(run_rule(&rule_use_ddp_not_dp, db, &r, &e) < 0);
    CHECK(strstr(e.msg, "str") != NULL);
    CHECK(run_rule(&rule_dataloader_bound, db, &r, &e) < 0);
    CHECK(strstr(e.msg, "str") != NULL);
    sqlite3_close(db);
}

int main(void)
{
    config_defaults(&cfg);
    RUN(test_enable_amp_missing_table);
    RUN(test_host_sync_garbled);
    RUN(test_comm_overlap_errors);
    RUN(test_missing_tables);
    return harness_done("rules_error_test");
}

/* rules_error_test — a rule whose query fails reports the error: a broken
 * run.db must never read as "no finding". enable_amp with no op_stat table
 * (a prepare failure), excessive_host_sync over a run whose slice pages are
 * garbled (a failure in the middle of the slice cursor's scan). */
#include <fcntl.h>
#include <unistd.h>

#include "base/config.h"
#include "derive/rules.h"
#include "harness.h"

static struct config cfg;

/* Runs def over db with the one rank r; returns its status, e filled. */
static int run_rule(const struct rules_def *def, sqlite3 *db, struct rules_rank *r, struct err *e)
{
    struct rules_ctx ctx = { db, &cfg.rules, r, 1, json_array() };
    err_clear(e);
    int rc = def->run(&ctx, e);
    CHECK_EQ_INT(json_array_size(ctx.findings), 0);
    json_decref(ctx.findings);
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

static void test_host_sync_garbled(void)
{
    char dir[] = "/tmp/tb_rules_err_XXXXXX";
    REQUIRE(mkdtemp(dir) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/run.db", dir);
    sqlite3 *db;
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    /* one CPU thread with many sync calls: the slice table spans pages */
    REQUIRE(sqlite3_exec(db,
                         "PRAGMA page_size=1024;"
                         "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT);"
                         "INSERT INTO str VALUES(1, 'cudaDeviceSynchronize');"
                         "CREATE TABLE track(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, nslices INTEGER,"
                         " first_slice INTEGER, last_slice INTEGER);"
                         "INSERT INTO track VALUES(1, 0, 0, 2000, 1, 2000);"
                         "CREATE TABLE slice(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, dur INTEGER,"
                         " parent INTEGER, name INTEGER, kind INTEGER, corr INTEGER, args TEXT);"
                         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
                         " INSERT INTO slice SELECT i, 1, i * 100, 10, NULL, 1, 4, 0,"
                         " '{\"pad\":\"................................\"}' FROM n;",
                         NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    /* garble the last page: a leaf of the slice table */
    int fd = open(path, O_RDWR);
    REQUIRE(fd >= 0);
    off_t end = lseek(fd, 0, SEEK_END);
    char junk[1024];
    memset(junk, 0x5a, sizeof junk);
    REQUIRE(pwrite(fd, junk, sizeof junk, end - 1024) == 1024);
    close(fd);
    REQUIRE(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);

    struct rules_step step = { 0 };
    step.ts = 0;
    step.dur = 1000000;
    struct rules_rank r = { 0 };
    r.steps = &step;
    r.nsteps = 1;
    r.avg_dur = step.dur;
    struct err e;
    CHECK(run_rule(&rule_excessive_host_sync, db, &r, &e) < 0);
    CHECK(strstr(e.msg, "malformed") != NULL);
    sqlite3_close(db);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    config_defaults(&cfg);
    RUN(test_enable_amp_missing_table);
    RUN(test_host_sync_garbled);
    return harness_done("rules_error_test");
}

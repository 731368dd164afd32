/* analyses_read_test — what the deeper analyses read of one rank: its
 * steps in time order, its GPU streams (not its CPU threads, not another
 * rank's) with the kernels and copies on each in id order, args only for
 * copies, its host threads' slices, and its busiest GPU's name; a missing
 * table is an error, never "nothing found". */
#include <sqlite3.h>
#include <string.h>

#include "rundb_fixture.h"
#include "store/analyses_read.h"

static const char derived[] =
    "CREATE TABLE step(rank INTEGER, idx INTEGER, name TEXT, ts INTEGER, dur INTEGER, host_ts INTEGER,"
    " host_dur INTEGER);"
    "INSERT INTO step VALUES(0, 1, NULL, 500, 100, 450, 20), (0, 0, 'ProfilerStep#0', 100, 400, 90, 10),"
    " (1, 0, 'other', 0, 1, 0, 1);"
    "CREATE TABLE gpu(rank INTEGER, device INTEGER, name TEXT, kernel_ns INTEGER);"
    "INSERT INTO gpu VALUES(0, 0, 'T4', 5), (0, 1, 'NVIDIA H100', 50), (1, 0, 'A100', 1);";

static void test_steps(sqlite3 *db)
{
    struct err e;
    struct analyses_read_steps *c;
    struct analyses_read_step s;
    REQUIRE(analyses_read_steps_open(db, 0, &c, &e) == 0);
    REQUIRE(analyses_read_steps_next(c, &s, &e) == 1);
    CHECK_EQ_INT(s.idx, 0);
    CHECK_EQ_STR(s.name, "ProfilerStep#0");
    CHECK(s.ts == 100 && s.dur == 400 && s.host_ts == 90 && s.host_dur == 10);
    REQUIRE(analyses_read_steps_next(c, &s, &e) == 1);
    CHECK_EQ_INT(s.idx, 1);
    CHECK_EQ_STR(s.name, "");
    CHECK_EQ_INT(analyses_read_steps_next(c, &s, &e), 0);
    analyses_read_steps_close(c);
}

static void test_gpu(sqlite3 *db)
{
    struct err e;
    struct analyses_read_gpu *c;
    struct analyses_read_stream s;
    struct analyses_read_op o;
    char name[32];
    REQUIRE(analyses_read_gpu_open(db, 1, &c, &e) == 0);
    REQUIRE(analyses_read_streams_next(c, &s, &e) == 1);
    CHECK(s.first <= s.last);
    REQUIRE(analyses_read_ops_next(c, &o, &e) == 1);
    CHECK_EQ_INT(o.kind, TB_K_KERNEL);
    CHECK(o.ts == 300 && o.dur == 50 && o.corr == 11);
    CHECK(o.args == NULL && o.nargs == 0);
    int64_t first = o.id;
    REQUIRE(analyses_read_ops_next(c, &o, &e) == 1);
    CHECK_EQ_INT(o.kind, TB_K_MEMCPY);
    CHECK(o.id > first);
    CHECK(o.args && strcmp(o.args, "{\"a\":1}") == 0 && o.nargs == 7);
    REQUIRE(analyses_read_ops_next(c, &o, &e) == 1);
    CHECK_EQ_INT(o.corr, 12);
    CHECK_EQ_INT(analyses_read_ops_next(c, &o, &e), 0); /* the CPU thread's ops are not GPU ops */
    CHECK_EQ_INT(analyses_read_streams_next(c, &s, &e), 0);
    analyses_read_gpu_close(c);

    CHECK_EQ_INT(analyses_read_gpu_name(db, 0, name, sizeof name, &e), 1);
    CHECK_EQ_STR(name, "NVIDIA H100");
    CHECK_EQ_INT(analyses_read_gpu_name(db, 7, name, sizeof name, &e), 0);
}

/* Rank 1's host thread (not its GPU stream): mm, then two launches inside
 * it, ids counted from the range's first; with a gap that nslices tells,
 * the ids are read; one it does not tell is an error. */
static void test_hosts(sqlite3 *db)
{
    struct err e;
    struct analyses_read_hosts *c;
    struct analyses_read_hslice r[3];
    int64_t track, first, last;
    REQUIRE(analyses_read_hosts_open(db, 1, &c, &e) == 0);
    REQUIRE(analyses_read_hosts_next(c, &track, &first, &last, &e) == 1);
    CHECK(last == first + 2);
    for (int i = 0; i < 3; i++) REQUIRE(analyses_read_hslices_next(c, &r[i], &e) == 1);
    CHECK_EQ_INT(analyses_read_hslices_next(c, &r[0], &e), 0);
    CHECK_EQ_INT(analyses_read_hosts_next(c, &track, &first, &last, &e), 0);
    analyses_read_hosts_close(c);
    CHECK(r[0].id == first && r[1].id == first + 1 && r[2].id == first + 2);
    CHECK(r[0].kind == TB_K_CPU_OP && r[0].ts == 100 && r[0].dur == 1000 && r[0].parent == 0 && r[0].corr == 0);
    CHECK(r[1].kind == TB_K_RUNTIME && r[1].ts == 200 && r[1].parent == first && r[1].corr == 11);
    CHECK(r[2].corr == 12 && r[2].parent == first);
    CHECK_EQ_INT(r[1].name, r[2].name);

    char sql[160];
    snprintf(sql, sizeof sql, "DELETE FROM slice WHERE id = %lld; UPDATE track SET nslices = 2 WHERE id = %lld",
             (long long)(first + 1), (long long)track);
    REQUIRE(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    REQUIRE(analyses_read_hosts_open(db, 1, &c, &e) == 0);
    REQUIRE(analyses_read_hosts_next(c, &track, &first, &last, &e) == 1);
    REQUIRE(analyses_read_hslices_next(c, &r[0], &e) == 1);
    REQUIRE(analyses_read_hslices_next(c, &r[1], &e) == 1);
    CHECK_EQ_INT(analyses_read_hslices_next(c, &r[2], &e), 0);
    analyses_read_hosts_close(c);
    CHECK(r[0].id == first && r[1].id == first + 2 && r[1].corr == 12);

    snprintf(sql, sizeof sql, "UPDATE track SET nslices = 3 WHERE id = %lld", (long long)track);
    REQUIRE(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    REQUIRE(analyses_read_hosts_open(db, 1, &c, &e) == 0);
    REQUIRE(analyses_read_hosts_next(c, &track, &first, &last, &e) == 1);
    int rc;
    while ((rc = analyses_read_hslices_next(c, &r[0], &e)) == 1) {}
    CHECK(rc < 0);
    CHECK(strstr(e.msg, "gap") != NULL);
    analyses_read_hosts_close(c);
}

static void test_analyses_read(void)
{
    struct err e;
    sqlite3 *db;
    char *path = fixture_path("an.db");
    REQUIRE(fixture_run(path, 2) == 0);
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    struct analyses_read_steps *s = (struct analyses_read_steps *)1;
    CHECK(analyses_read_steps_open(db, 0, &s, &e) < 0);
    CHECK(strstr(e.msg, "step") != NULL);
    CHECK(s == NULL);
    char name[8];
    CHECK(analyses_read_gpu_name(db, 0, name, sizeof name, &e) < 0);
    REQUIRE(sqlite3_exec(db, derived, NULL, NULL, NULL) == SQLITE_OK);
    test_steps(db);
    test_gpu(db);
    test_hosts(db);
    sqlite3_close(db);
    free(path);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_analyses_read);
    fixture_cleanup();
    return harness_done("analyses_read");
}

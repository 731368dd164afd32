/* analyses_critpath_test — the critpath table's layout (server/derive/
 * analyses.c): its key (rank, ts, step) is the only order it is read by, so
 * the import builds no index after the segments; GET /critpath's query
 * searches the key without a sort; rows written out of key order (steps
 * that overlap) read back in (ts, step) order; and a run stored before (a
 * rowid table with its index critpath_rank_ts) answers every query the
 * same. */
#include "analyses_fixture.h"

/* Three steps of one kernel each; the segments tile each step. */
static const char trace[] =
    STEP(1, 100, 100) ","
    CPU("cpu_op", "aten::mm", 110, 40, "") ","
    LAUNCH(7, 115, 10) ","
    KERNEL("gemm", 7, 130, 60) ","
    STEP(2, 200, 100) ","
    CPU("cpu_op", "aten::mm", 210, 40, "") ","
    LAUNCH(8, 215, 10) ","
    KERNEL("gemm", 8, 230, 60) ","
    STEP(3, 300, 100) ","
    CPU("cpu_op", "aten::add", 310, 40, "") ","
    LAUNCH(9, 315, 10) ","
    KERNEL("add", 9, 330, 60);

/* GET /critpath's statement (analyses_critpath). */
#define READ_SQL                                                                                                  \
    "SELECT ts, dur, cat, track, slice FROM critpath WHERE rank = ?1 AND (?2 < 0 OR step = ?2)"                   \
    " AND ts < ?4 AND ts + dur > ?3 ORDER BY ts LIMIT 200000"

/* The query plan of sql on db as one line ("|"-separated details). */
static void plan_of(sqlite3 *db, const char *sql, char *out, size_t n)
{
    char q[512];
    sqlite3_stmt *st;
    out[0] = 0;
    snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) return;
    size_t k = 0;
    while (sqlite3_step(st) == SQLITE_ROW && k + 1 < n)
        k += (size_t)snprintf(out + k, n - k, "%s|", (const char *)sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
}

/* analyses_critpath of (rank 0, step, [t0, t1)) on db as compact JSON
 * (owned by caller), NULL on failure. */
static char *answer(sqlite3 *db, int step, int64_t t0, int64_t t1)
{
    struct err e;
    json_t *out = NULL;
    if (analyses_critpath(db, 0, step, t0, t1, &out, &e) != 0) return NULL;
    char *s = json_dumps(out, JSON_COMPACT);
    json_decref(out);
    return s;
}

/* The answers of a few windows and steps, concatenated (owned by caller). */
static char *answers(sqlite3 *db)
{
    static const int64_t win[][2] = { { INT64_MIN, INT64_MAX }, { 0, 150000 }, { 150000, 250000 },
                                      { 199999, 200001 }, { 400000, INT64_MAX } };
    char *all = xstrdup("");
    for (int step = -1; step < 3; step++)
        for (size_t i = 0; i < sizeof win / sizeof win[0]; i++) {
            char *a = answer(db, step, win[i][0], win[i][1]);
            char *n = xasprintf("%s%s\n", all, a ? a : "(failed)");
            free(a);
            free(all);
            all = n;
        }
    return all;
}

/* The import stores the key and nothing beside it. */
static void test_layout(void)
{
    char *db = fixture_analyses_db(DEV_H100, trace);
    REQUIRE(db != NULL);
    CHECK(fixture_query_int(db, "SELECT count(DISTINCT step) FROM critpath") == 3);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                       " AND tbl_name = 'critpath' AND sql IS NOT NULL"),
                 0);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM pragma_table_list WHERE name = 'critpath' AND wr"), 1);
    struct err e;
    sqlite3 *ro;
    REQUIRE(rundb_open_ro(db, &ro, &e) == 0);
    char plan[512];
    plan_of(ro, READ_SQL, plan, sizeof plan);
    CHECK(strstr(plan, "USING PRIMARY KEY (rank=? AND ts<?)") != NULL);
    CHECK(strstr(plan, "TEMP B-TREE") == NULL);
    sqlite3_close(ro);
    free(db);
}

/* Segments of overlapping steps (one starting where another's segment
 * does) read back in (ts, step) order whatever order they were written
 * in; the old layout, rows in step order, answers the same. */
static void test_old_layout_alike(void)
{
    char *db = fixture_analyses_db(DEV_H100, trace);
    REQUIRE(db != NULL);
    sqlite3 *rw;
    REQUIRE(sqlite3_open_v2(db, &rw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    /* step 2 overlaps step 1 and starts at 200 µs like step 1's second
     * segment: written after step 1, before it in key order */
    CHECK(sqlite3_exec(rw,
                       "INSERT INTO critpath(rank, step, ts, dur, cat, track, slice) VALUES"
                       " (0, 2, 180000, 20000, 0, 1, 0), (0, 2, 200000, 90000, 2, 1, 0)",
                       NULL, NULL, NULL) == SQLITE_OK);
    char *now = answers(rw);
    CHECK(strstr(now, "[180000,20000,0,1,0]") != NULL && strstr(now, "[200000,90000,2,1,0]") != NULL);
    /* the layout of runs stored before: a rowid table in write order
     * (rank, step, then time) and its index */
    CHECK(sqlite3_exec(rw,
                       "CREATE TABLE old AS SELECT * FROM critpath ORDER BY rank, step, ts; DROP TABLE critpath;"
                       "CREATE TABLE critpath(rank INTEGER, step INTEGER, ts INTEGER, dur INTEGER, cat INTEGER,"
                       " track INTEGER, slice INTEGER);"
                       "INSERT INTO critpath SELECT * FROM old ORDER BY rowid; DROP TABLE old;"
                       "CREATE INDEX critpath_rank_ts ON critpath(rank, ts)",
                       NULL, NULL, NULL) == SQLITE_OK);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM pragma_table_list WHERE name = 'critpath' AND wr"), 0);
    char *before = answers(rw);
    CHECK_EQ_STR(before, now);
    free(now);
    free(before);
    sqlite3_close(rw);
    free(db);
}

int main(void)
{
    fixture_init();
    RUN(test_layout);
    RUN(test_old_layout_alike);
    fixture_done();
    return harness_done("analyses_critpath");
}

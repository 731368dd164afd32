/* analyses_critpath_test — the critical path's storage (server/derive/
 * analyses.c): one critseg row a step, its segments in a blob; GET
 * /critpath's answer (analyses_critpath) cut by window and step, in
 * (ts, step) order even when steps overlap; a blob that does not decode is
 * a damaged run, not a wrong answer; and runs stored before (a row per
 * segment in critpath, WITHOUT ROWID or a rowid table with its index)
 * answer every query the same. */
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

/* analyses_critpath of (rank 0, step, [t0, t1)) on db as compact JSON
 * (owned by caller), NULL on failure (e filled). */
static char *answer(sqlite3 *db, int step, int64_t t0, int64_t t1, struct err *e)
{
    json_t *out = NULL;
    if (analyses_critpath(db, 0, step, t0, t1, &out, e) != 0) return NULL;
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
            struct err e;
            char *a = answer(db, step, win[i][0], win[i][1], &e);
            char *n = xasprintf("%s%s\n", all, a ? a : "(failed)");
            free(a);
            free(all);
            all = n;
        }
    return all;
}

/* The format analyses.c documents, written here independently: per
 * segment LEB128 varints of zigzag(ts - previous ts), dur, cat, track,
 * zigzag(slice - previous slice), the previous ones 0 at the start. */
static size_t put_u(uint8_t *p, uint64_t v)
{
    size_t k = 0;
    for (; v >= 0x80; v >>= 7) p[k++] = (uint8_t)(v | 0x80);
    p[k++] = (uint8_t)v;
    return k;
}

static size_t put_z(uint8_t *p, int64_t v)
{
    return put_u(p, v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1);
}

/* Writes critseg's row for (rank 0, step) of the n segments seg[i] =
 * {ts, dur, cat, track, slice} on db; the blob cut to cut bytes when
 * cut > 0. */
static int put_step(sqlite3 *db, int step, const int64_t (*seg)[5], size_t n, size_t cut)
{
    uint8_t blob[512];
    size_t len = 0;
    int64_t ts = 0, slice = 0, t0 = INT64_MAX, t1 = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        len += put_z(blob + len, seg[i][0] - ts);
        len += put_u(blob + len, (uint64_t)seg[i][1]);
        len += put_u(blob + len, (uint64_t)seg[i][2]);
        len += put_u(blob + len, (uint64_t)seg[i][3]);
        len += put_z(blob + len, seg[i][4] - slice);
        ts = seg[i][0];
        slice = seg[i][4];
        if (seg[i][0] < t0) t0 = seg[i][0];
        if (seg[i][0] + seg[i][1] > t1) t1 = seg[i][0] + seg[i][1];
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT INTO critseg(rank, step, t0, t1, n, segs) VALUES(0, ?, ?, ?, ?, ?)", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(st, 1, step);
    sqlite3_bind_int64(st, 2, t0);
    sqlite3_bind_int64(st, 3, t1);
    sqlite3_bind_int64(st, 4, (int64_t)n);
    sqlite3_bind_blob(st, 5, blob, (int)(cut ? cut : len), SQLITE_TRANSIENT);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
    sqlite3_finalize(st);
    return rc;
}

/* One row a step, no index, and each row's count is what its blob holds:
 * the segments tile the step. */
static void test_layout(void)
{
    char *db = fixture_analyses_db(DEV_H100, trace);
    REQUIRE(db != NULL);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM critseg"), 3);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(DISTINCT step) FROM critseg"), 3);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM sqlite_master WHERE tbl_name = 'critseg'"
                                       " AND type = 'index'"),
                 0);
    CHECK_EQ_INT(fixture_query_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'critpath'"), 0);
    for (int step = 0; step < 3; step++) {
        char sql[160];
        json_t *segs = fixture_segments(db, step);
        REQUIRE(segs != NULL);
        snprintf(sql, sizeof sql, "SELECT n FROM critseg WHERE step = %d", step);
        CHECK_EQ_INT((int64_t)json_array_size(segs), fixture_query_int(db, sql));
        snprintf(sql, sizeof sql, "SELECT t0 FROM critseg WHERE step = %d", step);
        int64_t end = fixture_query_int(db, sql);
        CHECK_EQ_INT(end, (step + 1) * 100000);
        size_t i;
        json_t *g;
        json_array_foreach(segs, i, g) {
            CHECK_EQ_INT(json_integer_value(json_array_get(g, 0)), end);
            end += json_integer_value(json_array_get(g, 1));
        }
        snprintf(sql, sizeof sql, "SELECT t1 FROM critseg WHERE step = %d", step);
        CHECK_EQ_INT(end, fixture_query_int(db, sql));
        json_decref(segs);
    }
    free(db);
}

/* A step that overlaps another (one of its segments starts where one of
 * step 1's does) reads back in (ts, step) order; the windows cut segments,
 * not steps; the layouts of runs stored before, rows in write order,
 * answer the same. */
static void test_overlap_and_old_layouts(void)
{
    char *db = fixture_analyses_db(DEV_H100, trace);
    REQUIRE(db != NULL);
    sqlite3 *rw;
    REQUIRE(sqlite3_open_v2(db, &rw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    /* a fourth step (index 3, the last row) from 180 to 290 µs */
    static const int64_t over[][5] = { { 180000, 20000, 0, 1, 0 }, { 200000, 90000, 2, 1, 7 } };
    REQUIRE(put_step(rw, 3, over, 2, 0) == 0);
    char *now = answers(rw);
    const char *a = strstr(now, "[180000,20000,0,1,0]"), *b = strstr(now, "[200000,90000,2,1,7]");
    CHECK(a != NULL && b != NULL && a < b);
    /* step 1's first segment starts at 200 µs too: before step 3's (ts,
     * then step); step 3's first ends there, out of the window */
    json_t *all = NULL;
    struct err e;
    REQUIRE(analyses_critpath(rw, 0, -1, 200000, 200001, &all, &e) == 0);
    json_t *segs = json_object_get(all, "segments");
    CHECK_EQ_INT((int64_t)json_array_size(segs), 2);
    CHECK_EQ_INT(json_integer_value(json_array_get(json_array_get(segs, 0), 0)), 200000);
    char *second = json_dumps(json_array_get(segs, 1), JSON_COMPACT);
    CHECK_EQ_STR(second, "[200000,90000,2,1,7]");
    free(second);
    json_decref(all);
    /* the layouts of runs stored before, rebuilt from the answer of every
     * step: the WITHOUT ROWID table keyed (rank, ts, step) ... */
    CHECK(sqlite3_exec(rw,
                       "CREATE TABLE critpath(rank INTEGER, step INTEGER, ts INTEGER, dur INTEGER, cat INTEGER,"
                       " track INTEGER, slice INTEGER, PRIMARY KEY(rank, ts, step)) WITHOUT ROWID",
                       NULL, NULL, NULL) == SQLITE_OK);
    for (int step = 0; step < 4; step++) {
        json_t *out = NULL;
        REQUIRE(analyses_critpath(rw, 0, step, INT64_MIN, INT64_MAX, &out, &e) == 0);
        size_t i;
        json_t *g;
        json_array_foreach(json_object_get(out, "segments"), i, g) {
            char *sql = xasprintf("INSERT INTO critpath VALUES(0, %d, %lld, %lld, %lld, %lld, %lld)", step,
                                  (long long)json_integer_value(json_array_get(g, 0)),
                                  (long long)json_integer_value(json_array_get(g, 1)),
                                  (long long)json_integer_value(json_array_get(g, 2)),
                                  (long long)json_integer_value(json_array_get(g, 3)),
                                  (long long)json_integer_value(json_array_get(g, 4)));
            CHECK(sqlite3_exec(rw, sql, NULL, NULL, NULL) == SQLITE_OK);
            free(sql);
        }
        json_decref(out);
    }
    CHECK(sqlite3_exec(rw, "DROP TABLE critseg", NULL, NULL, NULL) == SQLITE_OK);
    char *keyed = answers(rw);
    CHECK_EQ_STR(keyed, now);
    /* ... and before it a rowid table in write order with its index */
    CHECK(sqlite3_exec(rw,
                       "CREATE TABLE old AS SELECT * FROM critpath ORDER BY rank, step, ts; DROP TABLE critpath;"
                       "CREATE TABLE critpath(rank INTEGER, step INTEGER, ts INTEGER, dur INTEGER, cat INTEGER,"
                       " track INTEGER, slice INTEGER);"
                       "INSERT INTO critpath SELECT * FROM old ORDER BY rowid; DROP TABLE old;"
                       "CREATE INDEX critpath_rank_ts ON critpath(rank, ts)",
                       NULL, NULL, NULL) == SQLITE_OK);
    char *rowid = answers(rw);
    CHECK_EQ_STR(rowid, now);
    free(now);
    free(keyed);
    free(rowid);
    sqlite3_close(rw);
    free(db);
}

/* A blob cut short, one longer than its count says, or a category out of
 * range: ERR_DAMAGED naming the run, never a partial answer; the steps
 * beside it still answer. */
static void test_damaged_blob(void)
{
    static const int64_t seg[][5] = { { 500000, 10, 2, 1, 0 }, { 500010, 20, 0, 1, 5 } };
    static const int64_t badcat[][5] = { { 700000, 10, AN_CP_NCAT, 1, 0 } };
    for (int k = 0; k < 3; k++) {
        char *db = fixture_analyses_db(DEV_H100, trace);
        REQUIRE(db != NULL);
        sqlite3 *rw;
        REQUIRE(sqlite3_open_v2(db, &rw, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
        if (k == 0) REQUIRE(put_step(rw, 3, seg, 2, 7) == 0);
        if (k == 1) {
            REQUIRE(put_step(rw, 3, seg, 2, 0) == 0);
            REQUIRE(sqlite3_exec(rw, "UPDATE critseg SET n = 1 WHERE step = 3", NULL, NULL, NULL) == SQLITE_OK);
        }
        if (k == 2) REQUIRE(put_step(rw, 3, badcat, 1, 0) == 0);
        struct err e;
        char *a = answer(rw, -1, INT64_MIN, INT64_MAX, &e);
        CHECK(a == NULL);
        if (!a) {
            CHECK_EQ_INT(e.code, ERR_DAMAGED);
            CHECK(strstr(e.msg, "critical-path") != NULL);
        }
        free(a);
        char *one = answer(rw, 0, INT64_MIN, INT64_MAX, &e);
        CHECK(one != NULL && strstr(one, "[100000,") != NULL);
        free(one);
        sqlite3_close(rw);
        free(db);
    }
}

int main(void)
{
    fixture_init();
    RUN(test_layout);
    RUN(test_overlap_and_old_layouts);
    RUN(test_damaged_blob);
    fixture_done();
    return harness_done("analyses_critpath");
}

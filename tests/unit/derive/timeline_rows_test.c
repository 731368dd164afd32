/* timeline_rows_test — the batched INSERT of the timeline's builds: rows
 * reach the table in the order they were added (whole batches, then the
 * rest one by one at the flush), with their doubles and NULLs, and a
 * failing batch reports the writer's context; held records up to a cap;
 * a packed table's row with its keys, bounds, count and bytes. */
#include <sqlite3.h>

#include <string.h>

#include "harness.h"
#include "derive/timeline_rows.h"

#define T_SQL "INSERT INTO t(a, b, c) VALUES"
#define T_ROW "(?,?,?)"

/* 70 rows: two batches of 32 and 6 flushed one by one, in order. */
static void test_order(void)
{
    sqlite3 *db;
    struct err e;
    struct timeline_rows w;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE t(a INTEGER, b REAL, c INTEGER)", NULL, NULL, NULL) == SQLITE_OK);
    REQUIRE(timeline_rows_open(&w, db, T_SQL T_ROW, T_SQL TIMELINE_ROWS32(T_ROW), 3, 1u << 1, "rows test", &e) == 0);
    for (int i = 0; i < 70; i++) {
        union timeline_rows_val v[3] = { { .i = (int64_t)i << 33 }, { .d = i + 0.25 }, { .i = -i } };
        CHECK_EQ_INT(timeline_rows_add(&w, v, i % 5 == 0 ? 1u << 2 : 0, &e), 0);
    }
    sqlite3_stmt *st;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 64); /* the batches only */
    sqlite3_finalize(st);
    CHECK_EQ_INT(timeline_rows_flush(&w, &e), 0);
    REQUIRE(sqlite3_prepare_v2(db, "SELECT rowid, a, b, typeof(b), c FROM t ORDER BY rowid", -1, &st, NULL) ==
            SQLITE_OK);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        CHECK_EQ_INT(sqlite3_column_int64(st, 0), n + 1);
        CHECK_EQ_INT(sqlite3_column_int64(st, 1), (int64_t)n << 33);
        CHECK(sqlite3_column_double(st, 2) == n + 0.25);
        CHECK_EQ_STR((const char *)sqlite3_column_text(st, 3), "real");
        if (n % 5 == 0) CHECK(sqlite3_column_type(st, 4) == SQLITE_NULL);
        else CHECK_EQ_INT(sqlite3_column_int64(st, 4), -n);
        n++;
    }
    sqlite3_finalize(st);
    CHECK_EQ_INT(n, 70);
    timeline_rows_close(&w);
    sqlite3_close(db);
}

/* A constraint broken inside a batch, or at the flush, fails with the
 * writer's context in the message. */
static void test_errors(void)
{
    sqlite3 *db;
    struct err e;
    struct timeline_rows w;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b REAL, c INTEGER)", NULL, NULL, NULL) ==
            SQLITE_OK);
    REQUIRE(timeline_rows_open(&w, db, T_SQL T_ROW, T_SQL TIMELINE_ROWS32(T_ROW), 3, 0, "rows test", &e) == 0);
    int rc = 0;
    for (int i = 0; i < TIMELINE_ROWS_BATCH && rc == 0; i++) {
        union timeline_rows_val v[3] = { { .i = i == 20 ? 3 : i }, { .i = 0 }, { .i = 0 } };
        rc = timeline_rows_add(&w, v, 0, &e);
    }
    CHECK(rc != 0);
    CHECK(strstr(e.msg, "rows test") != NULL);
    union timeline_rows_val v[3] = { { .i = 100 }, { .i = 0 }, { .i = 0 } };
    CHECK_EQ_INT(timeline_rows_add(&w, v, 0, &e), 0);
    CHECK_EQ_INT(timeline_rows_add(&w, v, 0, &e) + timeline_rows_flush(&w, &e) != 0, 1);
    CHECK(strstr(e.msg, "rows test") != NULL);
    timeline_rows_close(&w);
    /* a statement that does not prepare leaves nothing to close */
    CHECK(timeline_rows_open(&w, db, "INSERT INTO nope VALUES(?)", "INSERT INTO nope VALUES(?)", 1, 0, "x", &e) != 0);
    CHECK(w.one == NULL && w.many == NULL);
    timeline_rows_close(&w);
    sqlite3_close(db);
}

/* Held records: kept in order up to the cap; one more spills and frees
 * them until the next reset, as does an explicit spill. */
static void test_held(void)
{
    struct timeline_rows_held h = { .hold = 1500, .size = sizeof(int64_t) };
    for (int64_t i = 0; i < 1500; i++) {
        int64_t *v = timeline_rows_held_add(&h);
        REQUIRE(v != NULL);
        *v = i * 7;
    }
    CHECK_EQ_INT(h.n, 1500);
    CHECK(!h.spilled);
    int same = 1;
    for (size_t i = 0; i < h.n; i++) same &= ((int64_t *)h.v)[i] == (int64_t)i * 7;
    CHECK(same);
    CHECK(timeline_rows_held_add(&h) == NULL);
    CHECK(h.spilled && h.v == NULL && h.n == 0);
    CHECK(timeline_rows_held_add(&h) == NULL);
    timeline_rows_held_reset(&h);
    CHECK(timeline_rows_held_add(&h) != NULL);
    CHECK_EQ_INT(h.n, 1);
    timeline_rows_held_spill(&h);
    CHECK(timeline_rows_held_add(&h) == NULL);
    timeline_rows_held_reset(&h);
    h.hold = 0; /* holds nothing */
    CHECK(timeline_rows_held_add(&h) == NULL && h.spilled);
    timeline_rows_held_free(&h);
}

/* A packed table's row: the keys, the chunk's bounds and count, its
 * bytes; a second row with the same key is refused with a message. */
static void test_chunk(void)
{
    sqlite3 *db;
    sqlite3_stmt *ins, *q;
    struct err e;
    struct varint_buf rows = { NULL, 0, 0 };
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db,
                         "CREATE TABLE p(a INTEGER, b INTEGER, first INTEGER, last INTEGER, n INTEGER, rows BLOB,"
                         " PRIMARY KEY(a, b, first)) WITHOUT ROWID",
                         NULL, NULL, NULL) == SQLITE_OK);
    REQUIRE(sqlite3_prepare_v2(db, "INSERT INTO p VALUES(?,?,?,?,?,?)", -1, &ins, NULL) == SQLITE_OK);
    varint_buf_put(&rows, 300);
    varint_buf_put(&rows, 1);
    const int64_t keys[2] = { 7, -3 };
    CHECK_EQ_INT(timeline_rows_chunk(db, ins, keys, 2, 100, 140, 2, &rows, "test (chunk)", &e), 0);
    REQUIRE(sqlite3_prepare_v2(db, "SELECT a, b, first, last, n, hex(rows) FROM p", -1, &q, NULL) == SQLITE_OK);
    REQUIRE(sqlite3_step(q) == SQLITE_ROW);
    CHECK_EQ_INT(sqlite3_column_int64(q, 0), 7);
    CHECK_EQ_INT(sqlite3_column_int64(q, 1), -3);
    CHECK_EQ_INT(sqlite3_column_int64(q, 2), 100);
    CHECK_EQ_INT(sqlite3_column_int64(q, 3), 140);
    CHECK_EQ_INT(sqlite3_column_int64(q, 4), 2);
    CHECK_EQ_STR((const char *)sqlite3_column_text(q, 5), "AC0201");
    sqlite3_finalize(q);
    CHECK(timeline_rows_chunk(db, ins, keys, 2, 100, 150, 2, &rows, "test (chunk)", &e) != 0);
    CHECK(strstr(e.msg, "test (chunk)") != NULL);
    varint_buf_free(&rows);
    sqlite3_finalize(ins);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_order);
    RUN(test_errors);
    RUN(test_held);
    RUN(test_chunk);
    return harness_done("timeline_rows");
}

/* summary_memory_test — allocations paired with frees, peaks, and memory
 * events without totals.
 * Small crafted traces whose answers are worked out by hand (times in µs in
 * the traces, ns in the tables); real traces are checked in
 * summary_golden_test.c. */
#include "summary_fixture.h"

#include "derive/summary_memory.h"

#define MEM(ts, addr, bytes, total)                                                                     \
    "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1," \
    "\"ts\":" #ts ",\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":" #addr ",\"Bytes\":" #bytes  \
    ",\"Total Allocated\":" #total ",\"Total Reserved\":4096}}"

static void test_memory_pairing(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                         CPU("cpu_op", "aten::empty", 10, 5, "") ","
                         MEM(12, 1000, 100, 100) "," MEM(20, 2000, 300, 400) "," MEM(45, 1000, -100, 300) ","
                         MEM(50, 3000, -64, 236));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM mem_alloc"), 3);
    CHECK_EQ_INT(q1(db, "SELECT free_ts - alloc_ts FROM mem_alloc WHERE addr = 1000"), 33000);
    CHECK_EQ_INT(q1(db, "SELECT s.s = 'aten::empty' FROM mem_alloc m JOIN str s ON s.id = m.op WHERE addr = 1000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT op FROM mem_alloc WHERE addr = 2000"), 0); /* no op running at 20 */
    CHECK_EQ_INT(q1(db, "SELECT free_ts IS NULL FROM mem_alloc WHERE addr = 2000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT alloc_ts IS NULL AND bytes < 0 FROM mem_alloc WHERE addr = 3000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.peak_memory.\"0\".bytes') FROM analysis"), 400);
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.peak_memory.\"0\".ts') FROM analysis"), 20000);
    /* per step: allocated at its end, and its peak */
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.step_memory.\"0\"[0].end') FROM analysis"), 236);
    CHECK_EQ_INT(q1(db, "SELECT json_extract(summary, '$.step_memory.\"0\"[0].peak') FROM analysis"), 400);
    sqlite3_close(db);
}

/* Old traces log [memory] without running totals: pairing still works, and
 * the peak is unknown (absent), never 0 bytes. */
static void test_memory_without_totals(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                         "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":12,"
                         "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":1000,\"Bytes\":100}},"
                         "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":40,"
                         "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":1000,\"Bytes\":-100}}");
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM mem_alloc WHERE free_ts IS NOT NULL"), 1);
    CHECK_EQ_INT(q1(db, "SELECT json_type(summary, '$.peak_memory.\"0\"') IS NULL FROM analysis"), 1);
    sqlite3_close(db);
}

/* A [memory] event of thread tid (pid = tid, as X writes them). */
#define MEMT(tid, ts, addr, bytes)                                                                      \
    "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":" #tid      \
    ",\"tid\":" #tid ",\"ts\":" #ts ",\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":" #addr      \
    ",\"Bytes\":" #bytes ",\"Total Allocated\":1,\"Total Reserved\":4096}}"

/* The allocation events are read once for all threads, in (ts, id) order:
 * each goes to the operator running on its own thread at its time, the
 * same instant on two threads included, and one on a thread without
 * slices to none. */
static void test_memory_events_by_thread(void)
{
    sqlite3 *db = import(X("user_annotation", "ProfilerStep#1", "1", 0, 100, "") ","
                         X("cpu_op", "aten::empty", "1", 10, 5, "") ","
                         X("cpu_op", "aten::zeros", "2", 10, 20, "") ","
                         MEMT(2, 20, 3000, 50) "," MEMT(1, 12, 1000, 100) "," MEMT(2, 12, 2000, 200) ","
                         MEMT(1, 20, 4000, 8) "," MEMT(3, 14, 5000, 1) "," MEMT(1, 13, 1000, -100));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM mem_alloc"), 5);
    CHECK_EQ_INT(q1(db, "SELECT s.s = 'aten::empty' FROM mem_alloc m JOIN str s ON s.id = m.op WHERE addr = 1000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT s.s = 'aten::zeros' FROM mem_alloc m JOIN str s ON s.id = m.op WHERE addr = 2000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT s.s = 'aten::zeros' FROM mem_alloc m JOIN str s ON s.id = m.op WHERE addr = 3000"), 1);
    CHECK_EQ_INT(q1(db, "SELECT op FROM mem_alloc WHERE addr = 4000"), 0); /* thread 1 runs no op at 20 */
    CHECK_EQ_INT(q1(db, "SELECT op FROM mem_alloc WHERE addr = 5000"), 0); /* thread 3 has no slices */

    struct rankctx c;
    struct err e;
    memset(&c, 0, sizeof c);
    c.db = db;
    REQUIRE(summary_memory_events(&c, &e) == 0);
    CHECK_EQ_INT(c.nmev, 5); /* the free is not an allocation */
    static const int64_t want_ts[] = { 12000, 12000, 14000, 20000, 20000 };
    for (size_t i = 0; i < c.nmev && i < 5; i++) {
        CHECK_EQ_INT(c.mev[i].ts, want_ts[i]);
        CHECK(i == 0 || c.mev[i].id > c.mev[i - 1].id || c.mev[i].ts > c.mev[i - 1].ts);
    }
    for (size_t i = 0; i < c.nmev; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT track = %u AND bytes > 0 FROM mem WHERE id = %u", c.mev[i].who, c.mev[i].id);
        CHECK_EQ_INT(q1(db, sql), 1);
    }
    free(c.mev);

    /* a track past 31 bits (MEV_WALKED marks a walked event) is refused,
     * and the message names it (run.db is read-only here: a temporary
     * copy of mem stands in for it) */
    REQUIRE(sqlite3_exec(db, "CREATE TEMP TABLE mem AS SELECT * FROM main.mem;"
                             "UPDATE temp.mem SET track = 2147483648 WHERE addr = 4000",
                         NULL, NULL, NULL) == SQLITE_OK);
    memset(&c, 0, sizeof c);
    c.db = db;
    CHECK(summary_memory_events(&c, &e) == ERR_INVALID);
    CHECK(strstr(e.msg, "track id 2147483648 does not fit 31 bits") != NULL);
    free(c.mev);
    sqlite3_close(db);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_memory_pairing);
    RUN(test_memory_without_totals);
    RUN(test_memory_events_by_thread);
    fixture_end();
    return harness_done("summary_memory");
}

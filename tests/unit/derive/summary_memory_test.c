/* summary_memory_test — allocations paired with frees, peaks, and memory
 * events without totals.
 * Small crafted traces whose answers are worked out by hand (times in µs in
 * the traces, ns in the tables); real traces are checked in
 * summary_golden_test.c. */
#include "summary_fixture.h"

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

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_memory_pairing);
    RUN(test_memory_without_totals);
    fixture_end();
    return harness_done("summary_memory");
}

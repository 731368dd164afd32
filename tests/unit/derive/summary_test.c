/* summary_test — the driver: a trace without ProfilerStep spans is one step.
 * Small crafted traces whose answers are worked out by hand (times in µs in
 * the traces, ns in the tables); real traces are checked in
 * summary_golden_test.c. */
#include "summary_fixture.h"

static void test_no_steps_is_one_step(void)
{
    sqlite3 *db = import(CPU("cpu_op", "aten::add", 5, 10, "") "," CPU("cpu_op", "aten::mul", 40, 10, ""));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM step"), 1);
    CHECK_EQ_INT(q1(db, "SELECT ts FROM step"), 5000);
    CHECK_EQ_INT(q1(db, "SELECT dur FROM step"), 45000);
    CHECK_EQ_INT(q1(db, "SELECT cpu_exec FROM step"), 20000);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM gpu"), 0); /* no kernels, no GPU rows */
    sqlite3_close(db);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_no_steps_is_one_step);
    fixture_end();
    return harness_done("summary");
}

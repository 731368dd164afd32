/* summary_report_test — the shape of the `analyze --json` report.
 * Small crafted traces whose answers are worked out by hand (times in µs in
 * the traces, ns in the tables); real traces are checked in
 * summary_golden_test.c. */
#include "summary_fixture.h"

/* The report is what `analyze --json` prints: the shape. */
static void test_report_shape(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#7", 0, 100, "") ","
                         CPU("cuda_runtime", "cudaLaunchKernel", 10, 5, "\"correlation\":1") ","
                         GPU("kernel", "k", 20, 10, "\"correlation\":1"));
    REQUIRE(db != NULL);
    json_t *rep = NULL;
    struct err e;
    REQUIRE(summary_report(db, "x", 5, &rep, &e) == 0);
    json_t *r0 = json_array_get(json_object_get(rep, "ranks"), 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(rep, "run"), "ranks")), 1);
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(r0, "device"), "name")), "Test GPU");
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(r0, "device"), "compute_capability")), "9.0");
    json_t *s0 = json_array_get(json_object_get(r0, "steps"), 0);
    CHECK_EQ_STR(json_string_value(json_object_get(s0, "name")), "ProfilerStep#7");
    CHECK(fabs(json_number_value(json_object_get(s0, "dur_us")) - 100.0) < 1e-9);
    json_t *bd = json_object_get(s0, "breakdown_us");
    CHECK_EQ_INT(json_object_size(bd), 8);
    CHECK(fabs(json_number_value(json_object_get(bd, "kernel")) - 10.0) < 1e-9);
    CHECK(fabs(json_number_value(json_object_get(r0, "gpu_utilization")) - 0.1) < 1e-9);
    CHECK(json_is_array(json_object_get(rep, "recommendations")));
    json_decref(rep);
    sqlite3_close(db);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_report_shape);
    fixture_end();
    return harness_done("summary_report");
}

/* summary_walk_test — the operator tree and launches, seen in the operator and
 * kernel tables they feed.
 * Small crafted traces whose answers are worked out by hand (times in µs in
 * the traces, ns in the tables); real traces are checked in
 * summary_golden_test.c. */
#include "summary_fixture.h"

#include "derive/summary_walk.h"

/* linear [0,50) > addmm [10,40) > launch [15,20) -> kernel of 30; a second
 * addmm with other shapes launches nothing. */
static void test_operator_and_kernel_tables(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 200, "") ","
                         CPU("cpu_op", "aten::linear", 0, 50, "\"Input Dims\":[[4,8],[8,8]]") ","
                         CPU("cpu_op", "aten::addmm", 10, 30, "\"Input Dims\":[[8],[4,8],[8,8]]") ","
                         CPU("cuda_runtime", "cudaLaunchKernel", 15, 5, "\"correlation\":5") ","
                         CPU("cpu_op", "aten::addmm", 100, 10, "\"Input Dims\":[[2],[2,2],[2,2]]") ","
                         GPU("kernel", "gemm_kernel", 50, 30, "\"correlation\":5"));
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT host_total FROM op_stat WHERE name = 'aten::linear'"), 50000);
    CHECK_EQ_INT(q1(db, "SELECT host_self FROM op_stat WHERE name = 'aten::linear'"), 20000);
    CHECK_EQ_INT(q1(db, "SELECT dev_self FROM op_stat WHERE name = 'aten::linear'"), 0);
    CHECK_EQ_INT(q1(db, "SELECT dev_total FROM op_stat WHERE name = 'aten::linear'"), 30000);
    CHECK_EQ_INT(q1(db, "SELECT tc_eligible FROM op_stat WHERE name = 'aten::linear'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM op_stat WHERE name = 'aten::addmm'"), 2); /* by shape */
    CHECK_EQ_INT(q1(db, "SELECT sum(calls) FROM op_stat WHERE name = 'aten::addmm'"), 2);
    CHECK_EQ_INT(q1(db, "SELECT host_self FROM op_stat WHERE name = 'aten::addmm' AND shape = '[[8],[4,8],[8,8]]'"),
                 25000);
    CHECK_EQ_INT(q1(db, "SELECT dev_self FROM op_stat WHERE name = 'aten::addmm' AND shape = '[[8],[4,8],[8,8]]'"),
                 30000);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM op_stat WHERE name = 'ProfilerStep#1'"), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM kernel_stat"), 1);
    CHECK_EQ_INT(q1(db, "SELECT op = 'aten::addmm' FROM kernel_stat"), 1);
    CHECK_EQ_INT(q1(db, "SELECT calls FROM kernel_stat"), 1);
    CHECK_EQ_INT(q1(db, "SELECT total FROM kernel_stat"), 30000);
    sqlite3_close(db);
}

/* A thread whose slices hold every id of its range has them counted, not
 * read; one with a gap reads them (a slice gone, nslices said so); one
 * whose count claims no gap where there is one is an error, not ids
 * counted wrong. */
static void test_slice_ids(void)
{
    sqlite3 *db = import(CPU("user_annotation", "ProfilerStep#1", 0, 200, "") ","
                         CPU("cpu_op", "aten::linear", 1, 49, "\"Input Dims\":[[4,8],[8,8]]") ","
                         CPU("cpu_op", "aten::addmm", 10, 30, "\"Input Dims\":[[8],[4,8],[8,8]]"));
    REQUIRE(db != NULL);
    struct err e;
    CHECK_EQ_INT(q1(db, "SELECT host_self FROM op_stat WHERE name = 'aten::linear'"), 19000);
    char *path = xstrdup(sqlite3_db_filename(db, "main"));
    sqlite3_close(db);
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    free(path);
    /* the step goes: linear, at the range's second id, is addmm's parent */
    REQUIRE(sqlite3_exec(db,
                         "DELETE FROM slice WHERE id = (SELECT first_slice FROM track WHERE kind != 1 AND nslices > 0);"
                         "UPDATE track SET nslices = nslices - 1 WHERE kind != 1 AND nslices > 0",
                         NULL, NULL, NULL) == SQLITE_OK);
    CHECK_EQ_INT(summary_run(db, &e), 0);
    CHECK_EQ_INT(q1(db, "SELECT host_self FROM op_stat WHERE name = 'aten::linear'"), 19000);
    CHECK_EQ_INT(q1(db, "SELECT host_total FROM op_stat WHERE name = 'aten::addmm'"), 30000);
    REQUIRE(sqlite3_exec(db, "UPDATE track SET nslices = nslices + 1 WHERE kind != 1 AND nslices > 0", NULL, NULL,
                         NULL) == SQLITE_OK);
    CHECK(summary_run(db, &e) < 0);
    CHECK(strstr(e.msg, "gap") != NULL);
    sqlite3_close(db);
}

/* Appends a Python frame chain (outermost first) at base µs, each frame
 * 1 µs inside the one around it, with aten::add at its heart. */
static void chain(char *buf, size_t n, int base, const char *const *names, int k)
{
    size_t len = strlen(buf);
    for (int i = 0; i < k; i++)
        len += (size_t)snprintf(buf + len, n - len,
                                "%s{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"%s\",\"pid\":1,"
                                "\"tid\":1,\"ts\":%d,\"dur\":%d,\"args\":{}}",
                                len ? "," : "", names[i], base + i, 1000 - 2 * i);
    snprintf(buf + len, n - len,
             ",{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add\",\"pid\":1,\"tid\":1,\"ts\":%d,"
             "\"dur\":10,\"args\":{}}",
             base + 100);
}

/* An operator's stack is the text of its innermost 8 Python frames:
 * chains that differ only further out group together, however deep. */
static void test_python_stacks(void)
{
    static const char *const f[] = { "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9" };
    static const char *const g[] = { "g0", "g1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9" };
    char buf[8192] = "";
    chain(buf, sizeof buf, 0, f, 10);
    chain(buf, sizeof buf, 2000, g, 10);
    chain(buf, sizeof buf, 4000, f + 7, 3);
    chain(buf, sizeof buf, 6000, f + 2, 8);
    sqlite3 *db = import(buf);
    REQUIRE(db != NULL);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM op_stat WHERE name = 'aten::add'"), 2);
    CHECK_EQ_INT(q1(db, "SELECT calls FROM op_stat WHERE name = 'aten::add' AND stack = ?",
                    "f9\nf8\nf7\nf6\nf5\nf4\nf3\nf2"),
                 3);
    CHECK_EQ_INT(q1(db, "SELECT calls FROM op_stat WHERE name = 'aten::add' AND stack = ?", "f9\nf8\nf7"), 1);
    sqlite3_close(db);
}

/* Each case's args give its shape (NULL: none). */
static void check_shapes(const char *const (*cases)[2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *got = summary_walk_shapes(cases[i][0], strlen(cases[i][0]));
        if (cases[i][1]) {
            CHECK(got != NULL);
            if (got) CHECK_EQ_STR(got, cases[i][1]);
        } else {
            CHECK(got == NULL);
        }
        if ((got == NULL) != (cases[i][1] == NULL) || (got && strcmp(got, cases[i][1])))
            fprintf(stderr, "case %zu: %s -> %s\n", i, cases[i][0], got ? got : "NULL");
        free(got);
    }
}

/* Shapes (args text, expected; NULL: none). The reader follows jtok's span
 * grammar: only a top-level member counts, brackets and quotes inside
 * strings are text, escaped names are decoded, and args that stop parsing
 * before the member have none. */
static void test_shapes(void)
{
    static const char *const cases[][2] = {
        { "{\"Input Dims\": [[4, 8], [8]]}", "[[4,8],[8]]" },
        { "{\"Input dims\":[[2]]}", "[[2]]" },
        { " \n{ \"a\" : 1 , \"Input Dims\"\t:\n[[3]] }", "[[3]]" },
        { "{{\"Input Dims\":[[3]]}", "[[3]]" }, /* jtok takes a second '{' */
        { "{,\"Input Dims\":[[3]]}", "[[3]]" },
        { "{\"Input\\u0020Dims\":[[5]]}", "[[5]]" },
        { "{\"Input Dims\":\"[[1]]\",\"Input Dims\":[[6]]}", "[[6]]" }, /* the first array */
        { "{\"Input Dims\":[[1]],\"Input Dims\":[[6]]}", "[[1]]" },
        { "{\"a\":{\"Input Dims\":[[9]]},\"b\":[[\"Input Dims\"]]}", NULL },
        { "{\"s\":\"\\\"Input Dims\\\":[[7]]\"}", NULL },
        { "{\"Concrete Inputs\":[\"]\",\"[1, 2]\",\"\\\"]\"],\"Input Dims\":[[5, 6]]}", "[[5,6]]" },
        { "{\"a\":\"x\\\\\",\"Input Dims\":[[2]]}", "[[2]]" },
        { "{\"a\":-1.5e3,\"b\":-Infinity,\"c\":NaN,\"d\":true,\"e\":null,\"f\":false,\"g\":Infinity,"
          "\"Input Dims\":[[1]]}",
          "[[1]]" },
        { "{\"Input Dims\":[[\"a b\", \"c\\\"] d\"]]}", "[[\"a b\",\"c\\\"] d\"]]" },
        { "{\"Input Dims\":[]}", NULL },
        { "{\"Input Dims\":[ ]}", NULL },
        { "{\"a\":1 \"Input Dims\":[[1]]}", NULL },
        { "{\"a\":tru,\"Input Dims\":[[1]]}", NULL },
        { "{\"a\":-,\"Input Dims\":[[1]]}", "[[1]]" }, /* jtok reads "-" as a number */
        { "{\"a\":[1,\"Input Dims\":[[1]]}", NULL },
        { "{\"a\":\"x,\"Input Dims\":[[1]]}", NULL },
        { "{\"Input Dims\":[[1,2]", NULL },
        { "{\"Input Dims\":[[1]]", NULL },    /* a member ends at ',' or '}' */
        { "{\"a\":1}\"Input Dims\":[[1]]}", NULL },
        { "[[1]]", NULL },
        { "", NULL },
    };
    check_shapes(cases, sizeof cases / sizeof cases[0]);
    /* the length bounds the text: a member past n is not seen */
    const char *t = "{\"a\":1,\"Input Dims\":[[1]]}";
    char *got = summary_walk_shapes(t, 7);
    CHECK(got == NULL);
    free(got);
}

/* Values longer than the 16 bytes summary_walk scans at once: quotes,
 * escapes and brackets at every offset of a block, strings that open in
 * one block and close in another, a backslash after a run of plain
 * blocks, and arrays that never close. */
static void test_shapes_long(void)
{
    static const char *const cases[][2] = {
        { "{\"Input Strides\":[[1024, 1], [512, 1], [256, 1], [128, 1]],\"Input Dims\":[[4, 8], [8]]}",
          "[[4,8],[8]]" },
        { "{\"Concrete Inputs\":[\"\", \"[32, 256, 512]\", \"]]]]}}}}\", \"False\"],\"Input Dims\":[[1]]}", "[[1]]" },
        { "{\"a\":[\"xxxxxxxxxxxx]]]]]]]]]]]]]]]]]]yyy\", [1]],\"Input Dims\":[[2]]}", "[[2]]" },
        { "{\"a\":[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], \"x\\\"]]]\", [3]],\"Input Dims\":[[2]]}", "[[2]]" },
        { "{\"Input Strides\":[[1024, 1], [512, 1], [256, 1], [128, 1],\"Input Dims\":[[1]]}", NULL },
        { "{\"Input Dims\":[[1024, 1024, 3], [\"a long name [with] {brackets}\"], [16, 16]]}",
          "[[1024,1024,3],[\"a long name [with] {brackets}\"],[16,16]]" },
        { "{\"Input Dims\":[[1024, 1024, 3], [1024, 1024, 3], [1024, 1024, 3], [1024, 1024, 3]]",
          NULL },
    };
    check_shapes(cases, sizeof cases / sizeof cases[0]);
    /* the same member at every alignment: a leading string of 0..47
     * bytes moves the value's quotes, escapes and brackets through each
     * position of a block */
    char args[256], want[128];
    for (int pad = 0; pad < 48; pad++) {
        snprintf(args, sizeof args,
                 "{\"p\":\"%.*s\",\"q\":[\"%.*s]\\\"[ {\", [7, \"}\"], [[8]]],"
                 "\"Input Dims\":[[\"%.*s]\\\"[ {\", 7], [8]]}",
                 pad, "................................................", pad % 17, "zzzzzzzzzzzzzzzzz", pad % 19,
                 "yyyyyyyyyyyyyyyyyyy");
        snprintf(want, sizeof want, "[[\"%.*s]\\\"[ {\",7],[8]]", pad % 19, "yyyyyyyyyyyyyyyyyyy");
        char *got = summary_walk_shapes(args, strlen(args));
        CHECK(got != NULL);
        if (got) CHECK_EQ_STR(got, want);
        free(got);
        /* cut before the end: the array never closes */
        got = summary_walk_shapes(args, strlen(args) - 3);
        CHECK(got == NULL);
        free(got);
    }
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_operator_and_kernel_tables);
    RUN(test_python_stacks);
    RUN(test_slice_ids);
    RUN(test_shapes);
    RUN(test_shapes_long);
    fixture_end();
    return harness_done("summary_walk");
}

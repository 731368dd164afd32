/* import_nsys_test.c — the Nsight Systems SQLite importer.
 *
 * The two pipit exports in ../shared (Nsight 2022.2 and 2024.5; skipped when
 * ../shared is absent) are imported and their stored counts compared with
 * counts this test takes from the source file with its own SQL (the
 * crafted database is in import_nsys_rows_test.c). Broken databases (no StringIds, a
 * missing column, no Nsight tables, garbage after the magic) must fail with
 * ERR_INVALID and a message that says what is missing. */
#include "import_nsys_fixture.h"

static void check_sample(const char *rel, const char *gpu, long long want_kernels)
{
    char *path = xasprintf("%s/corpus/pipit/pipit/tests/data/%s", harness_shared(), rel);
    if (access(path, R_OK) != 0) {
        printf("skip: %s not found\n", path);
        free(path);
        return;
    }
    sqlite3 *src;
    REQUIRE(sqlite3_open_v2(path, &src, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    long long k = src_count(src, "CUPTI_ACTIVITY_KIND_KERNEL", NULL);
    long long mc = src_count(src, "CUPTI_ACTIVITY_KIND_MEMCPY", NULL);
    long long ms = src_count(src, "CUPTI_ACTIVITY_KIND_MEMSET", NULL);
    long long rt = src_count(src, "CUPTI_ACTIVITY_KIND_RUNTIME", "eventClass = 0");
    long long drv = src_count(src, "CUPTI_ACTIVITY_KIND_RUNTIME", "eventClass = 1");
    long long nv = src_count(src, "NVTX_EVENTS", "eventType IN (59, 60) AND \"end\" IS NOT NULL");
    long long pageable = src_count(src, "CUPTI_ACTIVITY_KIND_MEMCPY", "srcKind = 0 OR dstKind = 0");
    long long corr = src_count(src, "CUPTI_ACTIVITY_KIND_KERNEL",
                               "correlationId IN (SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME"
                               " WHERE eventClass IN (0, 1))");
    sqlite3_close(src);
    CHECK_EQ_INT(k, want_kernels);

    struct result r;
    import_path(path, rel, &r);
    if (r.rc != 0) fprintf(stderr, "  %s: %s\n", rel, r.e.msg);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "nsys");
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice WHERE kind = 6"), k);
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice WHERE kind = 7"), mc);
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice WHERE kind = 8"), ms);
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice WHERE kind = 4"), rt);
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice WHERE kind = 5"), drv);
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice WHERE kind = 2"), nv);
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice s JOIN str n ON n.id = s.name WHERE s.kind = 7"
                          " AND n.s LIKE '%Pageable%'"),
                 pageable);
    /* every kernel joins its launch call by correlation */
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice k WHERE k.kind = 6 AND EXISTS(SELECT 1 FROM slice c"
                          " WHERE c.kind IN (4, 5) AND c.corr = k.corr)"),
                 corr);
    /* GPU ops on GPU tracks with a device; runtime calls on CPU threads */
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice s JOIN track t ON t.id = s.track WHERE s.kind IN (6, 7, 8)"
                          " AND (t.kind != 1 OR t.device IS NULL)"),
                 0);
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice s JOIN track t ON t.id = s.track WHERE s.kind IN (4, 5)"
                          " AND t.kind != 0"),
                 0);
    char buf[256];
    CHECK_EQ_STR(qs(r.db, "SELECT name FROM gpu WHERE rank = 0 ORDER BY kernel_ns DESC LIMIT 1", buf, sizeof buf),
                 gpu);
    CHECK_EQ_STR(qs(r.db, "SELECT cc FROM gpu WHERE rank = 0 LIMIT 1", buf, sizeof buf), "8.0");
    CHECK(q1(r.db, "SELECT memory_bytes FROM gpu WHERE rank = 0 LIMIT 1") > (30ll << 30));
    /* the main thread is named from ThreadNames */
    CHECK(q1(r.db, "SELECT count(*) FROM track WHERE kind = 0 AND name IS NOT NULL") >= 1);
    /* the CUPTI version suffix is gone: the rules look for cudaLaunchKernel */
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM str WHERE s LIKE 'cuda%\\_v____' ESCAPE '\\'"), 0);
    CHECK(q1(r.db, "SELECT count(*) FROM step WHERE rank = 0") >= 1);
    printf("%s: kernels %lld, memcpy %lld, memset %lld, runtime %lld, driver %lld, nvtx ranges %lld\n", rel, k, mc,
           ms, rt, drv, nv);
    result_free(&r);
    free(path);
}

static void test_pipit_2022(void)
{
    check_sample("saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "NVIDIA A100-SXM4-40GB", 5);
}

static void test_pipit_2024(void)
{
    check_sample("cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite", "NVIDIA A100-SXM4-80GB", 1312);
}


static void expect_invalid(const char *sql, const char *needle)
{
    char *path = make_db(sql);
    REQUIRE(path != NULL);
    struct result r;
    import_path(path, "broken.sqlite", &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    if (!strstr(r.e.msg, needle)) fprintf(stderr, "  message was: %s\n", r.e.msg);
    CHECK(strstr(r.e.msg, needle) != NULL);
    CHECK(strstr(r.e.msg, "broken.sqlite") != NULL);
    result_free(&r);
    free(path);
}

static void test_broken(void)
{
    /* activity without StringIds */
    expect_invalid("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, streamId, correlationId,"
                   " demangledName);",
                   "no StringIds table");
    /* a column renamed in some future version: the message names version, table and column */
    expect_invalid("CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"
                   "INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','2031.1.0');"
                   "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                   "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start, end, deviceId, streamNumber, correlationId,"
                   " demangledName);",
                   "Nsight Systems 2031.1.0 export (schema ?) cannot be read: table "
                   "CUPTI_ACTIVITY_KIND_KERNEL has no column 'streamId'");
    /* an SQLite database that is not an export */
    expect_invalid("CREATE TABLE notes(id INTEGER, body TEXT);", "not a readable Nsight Systems export");
    /* a view with the right name does not count as the table */
    expect_invalid("CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);"
                   "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT 1 AS start;",
                   "not a readable Nsight Systems export");

    /* the magic followed by garbage */
    char *path = xasprintf("%s/garbage.sqlite", tmpdir);
    FILE *f = fopen(path, "wb");
    REQUIRE(f != NULL);
    char junk[4096];
    memset(junk, 0x5a, sizeof junk);
    memcpy(junk, "SQLite format 3", 16);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    struct result r;
    import_path(path, "broken.sqlite", &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(r.e.msg[0] != '\0');
    result_free(&r);
    free(path);
}

int main(void)
{
    struct err e;
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_pipit_2022);
    RUN(test_pipit_2024);
    RUN(test_broken);
    fsutil_rmtree(tmpdir, &e);
    return harness_done("import_nsys");
}

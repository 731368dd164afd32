/* import_nsys_test.c — the Nsight Systems SQLite importer.
 *
 * The two pipit exports in ../shared (Nsight 2022.2 and 2024.5; skipped when
 * ../shared is absent) are imported and their stored counts compared with
 * counts this test takes from the source file with its own SQL. A crafted
 * Nsight-like database checks names, kinds, correlation, thread naming and
 * NVTX steps through the analysis; broken databases (no StringIds, a
 * missing column, no Nsight tables, garbage after the magic) must fail with
 * ERR_INVALID and a message that says what is missing. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "base/fsutil.h"
#include "derive/summary.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "ingest/importer.h"
#include "store/rundb.h"
#include "store/rundb_writer.h"

static char tmpdir[] = "/tmp/tb_import_nsys_XXXXXX";
static int nfiles;

struct result {
    int rc;
    struct err e;
    const char *format;
    sqlite3 *db; /* read-write handle on the finished run, analysed */
};

/* Imports the file at path into a new run database and runs the analysis. */
static void import_path(const char *path, const char *name, struct result *r)
{
    char *db = xasprintf("%s/run%d.db", tmpdir, nfiles++);
    struct rundb_writer *w;
    struct instream_limits lim = { 1ull << 30, 200 };
    struct import_ctx ctx = { NULL, NULL, 0, NULL };

    memset(r, 0, sizeof *r);
    if ((r->rc = rundb_create(db, 1u << 20, tmpdir, &w, &r->e)) != 0) goto out;
    if ((r->rc = rundb_begin_rank(w, 0, name, 0, &r->e)) != 0) {
        rundb_abort(w);
        goto out;
    }
    r->rc = importer_import_file(path, name, &lim, w, &ctx, &r->e);
    r->format = ctx.format;
    struct tb_rank_stats st;
    if (r->rc == 0) r->rc = rundb_finish_rank(w, &st, &r->e);
    /* every row read is stored or counted as dropped */
    if (r->rc == 0) CHECK_EQ_INT(st.slices + st.instants + st.dropped, st.events);
    if (r->rc != 0) {
        rundb_abort(w);
        goto out;
    }
    if ((r->rc = rundb_close_writer(w, &r->e)) != 0) goto out;
    if (sqlite3_open_v2(db, &r->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        r->rc = -1;
        goto out;
    }
    r->rc = summary_run(r->db, &r->e);
out:
    free(db);
}

static void result_free(struct result *r)
{
    sqlite3_close(r->db);
    r->db = NULL;
}

/* One integer from sql (-1 on error or no row). */
static long long q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "  query failed: %s: %s\n", sql, db ? sqlite3_errmsg(db) : "no db");
        return -1;
    }
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* One text from sql into buf ("" when none). */
static const char *qs(sqlite3 *db, const char *sql, char *buf, size_t cap)
{
    sqlite3_stmt *st;
    buf[0] = '\0';
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return buf;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return buf;
}

static int exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) fprintf(stderr, "  exec failed: %s\n", msg ? msg : "?");
    sqlite3_free(msg);
    return rc;
}

/* Creates a database file from SQL. Returns its path (owned by caller). */
static char *make_db(const char *sql)
{
    char *path = xasprintf("%s/in%d.sqlite", tmpdir, nfiles++);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK || exec(db, sql) != SQLITE_OK) {
        sqlite3_close(db);
        free(path);
        return NULL;
    }
    sqlite3_close(db);
    return path;
}

/* --- the pipit samples ---------------------------------------------------- */

/* Counts the importer must match, taken from the source with plain SQL. */
static long long src_count(sqlite3 *src, const char *table, const char *where)
{
    char sql[256];
    if (q1(src, "SELECT 0") != 0) return -1;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='%s'", table);
    if (q1(src, sql) != 1) return 0;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s%s%s", table, where ? " WHERE " : "", where ? where : "");
    return q1(src, sql);
}

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

/* --- a crafted export -------------------------------------------------------- */

/* globalTid of pid 4321, tid 4322 with hardware/VM bits set above. */
#define GTID "((1 << 56) | (4321 << 24) | 4322)"

static const char crafted_sql[] =
    "CREATE TABLE META_DATA_EXPORT(name TEXT, value TEXT);"
    "INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','2099.1.0'),('EXPORT_SCHEMA_VERSION','9.9.9');"
    "CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO StringIds VALUES(1,'cudaLaunchKernel_v7000'),(2,'cudaMemcpyAsync_v3020'),"
    " (3,'cudaMemsetAsync_v3020'),(4,'void scale<float>(float*, int)'),(5,'scale'),(6,'main thread'),"
    " (7,'forward'),(8,'cudaStreamSynchronize_v3020');"
    "CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT, totalMemory INTEGER, smCount INTEGER,"
    " computeMajor INTEGER, computeMinor INTEGER, cuDevice INTEGER);"
    "INSERT INTO TARGET_INFO_GPU VALUES(5, 'Crafted GPU', 1000000, 100, 9, 0, 0);"
    "CREATE TABLE ThreadNames(nameId INTEGER, priority INTEGER, globalTid INTEGER);"
    "INSERT INTO ThreadNames VALUES(6, 0, " GTID ");"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME(start INTEGER, end INTEGER, eventClass INTEGER, globalTid INTEGER,"
    " correlationId INTEGER, nameId INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(100, 150, 0, " GTID ", 7, 1),"
    " (90, 160, 67, " GTID ", 7, 1),"
    " (1100, 1150, 0, " GTID ", 8, 2), (1160, 1170, 0, " GTID ", 9, 3), (1180, 1900, 0, " GTID ", 10, 8);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,"
    " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER,"
    " gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(200, 500, 0, 7, 7, 0, 4, 5, 50, 1, 1, 128, 1, 1);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY(start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,"
    " correlationId INTEGER, bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(1200, 1300, 0, 7, 8, 4096, 1, 0, 2);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET(start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,"
    " correlationId INTEGER, bytes INTEGER, memKind INTEGER);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES(1400, 1450, 0, 7, 9, 512, 2);"
    "CREATE TABLE NVTX_EVENTS(start INTEGER, end INTEGER, eventType INTEGER, globalTid INTEGER, text TEXT,"
    " textId INTEGER, domainId INTEGER);"
    "INSERT INTO NVTX_EVENTS VALUES(0, NULL, 75, " GTID ", 'trainer', NULL, 3),"
    " (0, 1000, 59, " GTID ", 'train_step', NULL, 3), (1000, 2000, 59, " GTID ", 'train_step', NULL, 3),"
    " (50, 600, 59, " GTID ", NULL, 7, 0), (2500, NULL, 59, " GTID ", 'never ends', NULL, 0),"
    " (700, NULL, 34, " GTID ", 'a mark', NULL, 0);";

static void test_crafted(void)
{
    char *path = make_db(crafted_sql);
    REQUIRE(path != NULL);
    struct result r;
    import_path(path, "crafted.sqlite", &r);
    if (r.rc != 0) fprintf(stderr, "  crafted: %s\n", r.e.msg);
    REQUIRE(r.rc == 0);
    char buf[512];
    sqlite3 *db = r.db;
    CHECK_EQ_STR(qs(db, "SELECT n.s FROM slice s JOIN str n ON n.id = s.name WHERE s.kind = 6", buf, sizeof buf),
                 "void scale<float>(float*, int)");
    CHECK_EQ_INT(q1(db, "SELECT corr FROM slice WHERE kind = 6"), 7);
    CHECK_EQ_STR(qs(db, "SELECT t.tid || '/' || t.name FROM slice s JOIN track t ON t.id = s.track WHERE s.kind = 6",
                    buf, sizeof buf),
                 "7/stream 7");
    CHECK_EQ_INT(q1(db, "SELECT t.stream FROM slice s JOIN track t ON t.id = s.track WHERE s.kind = 6"), 7);
    CHECK_EQ_INT(q1(db, "SELECT t.device FROM slice s JOIN track t ON t.id = s.track WHERE s.kind = 6"), 0);
    CHECK_EQ_STR(qs(db, "SELECT json_extract(args, '$.blocks per SM') FROM slice WHERE kind = 6", buf, sizeof buf),
                 "0.5");
    CHECK_EQ_STR(qs(db, "SELECT n.s FROM slice s JOIN str n ON n.id = s.name WHERE s.kind = 7", buf, sizeof buf),
                 "Memcpy HtoD (Pageable -> Device)");
    CHECK_EQ_INT(q1(db, "SELECT json_extract(args, '$.bytes') FROM slice WHERE kind = 7"), 4096);
    CHECK_EQ_STR(qs(db, "SELECT n.s FROM slice s JOIN str n ON n.id = s.name WHERE s.kind = 8", buf, sizeof buf),
                 "Memset (Device)");
    /* runtime: the backtrace copy (eventClass 67) is skipped, names lose _vNNNN */
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice WHERE kind = 4"), 4);
    CHECK_EQ_STR(qs(db, "SELECT n.s FROM slice s JOIN str n ON n.id = s.name WHERE s.kind = 4 AND s.corr = 7", buf,
                    sizeof buf),
                 "cudaLaunchKernel");
    CHECK_EQ_STR(qs(db, "SELECT json_extract(args, '$.cbid name') FROM slice WHERE kind = 4 AND corr = 7", buf,
                    sizeof buf),
                 "cudaLaunchKernel_v7000");
    CHECK_EQ_STR(qs(db, "SELECT t.pid || '/' || t.tid || '/' || t.name FROM slice s JOIN track t ON t.id = s.track"
                        " WHERE s.kind = 4 LIMIT 1",
                    buf, sizeof buf),
                 "4321/4322/main thread");
    /* NVTX: steps renamed, the original kept; other ranges as they are */
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice s JOIN str n ON n.id = s.name WHERE s.kind = 2"
                        " AND n.s IN ('ProfilerStep#1', 'ProfilerStep#2')"),
                 2);
    CHECK_EQ_STR(qs(db, "SELECT json_extract(args, '$.nvtx name') || '/' || json_extract(args, '$.domain')"
                        " FROM slice s JOIN str n ON n.id = s.name WHERE n.s = 'ProfilerStep#2'",
                    buf, sizeof buf),
                 "train_step/trainer");
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice s JOIN str n ON n.id = s.name WHERE n.s = 'forward'"
                        " AND s.depth = 1"),
                 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM instant"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM note WHERE reason LIKE 'NVTX range never ended%'"), 1);
    /* header and analysis */
    CHECK_EQ_STR(qs(db, "SELECT format FROM rank", buf, sizeof buf), "nsys");
    CHECK_EQ_STR(qs(db, "SELECT json_extract(header, '$.nsys.productVersion') FROM rank", buf, sizeof buf),
                 "2099.1.0");
    CHECK_EQ_STR(qs(db, "SELECT name || '/' || cc || '/' || memory_bytes FROM gpu", buf, sizeof buf),
                 "Crafted GPU/9.0/1000000");
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM step WHERE rank = 0"), 2);
    CHECK_EQ_STR(qs(db, "SELECT name FROM step WHERE rank = 0 ORDER BY idx LIMIT 1", buf, sizeof buf),
                 "ProfilerStep#1");
    CHECK_EQ_INT(q1(db, "SELECT kernel FROM step WHERE rank = 0 AND idx = 0"), 300);
    result_free(&r);

    /* the same database gzip-compressed imports the same */
    char *gzp = xasprintf("%s/crafted.sqlite.gz", tmpdir);
    FILE *f = fopen(path, "rb");
    gzFile gz = gzopen(gzp, "wb");
    REQUIRE(f && gz);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) gzwrite(gz, chunk, (unsigned)got);
    fclose(f);
    gzclose(gz);
    import_path(gzp, "crafted.sqlite.gz", &r);
    CHECK_EQ_INT(r.rc, 0);
    CHECK_EQ_INT(q1(r.db, "SELECT count(*) FROM slice"), 10);
    result_free(&r);
    free(gzp);
    free(path);
}

/* --- broken databases ------------------------------------------------------ */

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
    RUN(test_crafted);
    RUN(test_broken);
    fsutil_rmtree(tmpdir, &e);
    return harness_done("import_nsys");
}

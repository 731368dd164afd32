/* import_nsys_rows_test — the rows of an Nsight Systems export as events:
 * a crafted Nsight-like database checks names, kinds, correlation, thread
 * naming and NVTX steps through the analysis. */
#include "import_nsys_fixture.h"

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

int main(void)
{
    struct err e;
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_crafted);
    fsutil_rmtree(tmpdir, &e);
    return harness_done("import_nsys_rows");
}

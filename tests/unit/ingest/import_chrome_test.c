/* import_chrome_test.c — the Chrome/Kineto importer end to end: crafted
 * traces are written to temp files, imported with importer_import_file into
 * a fresh run database, and the result is checked with SQL. Covers both
 * top-level forms, header placement, pid/tid spellings, timestamp
 * exactness, nesting (out of order, 100 deep, zero-length), names, flows,
 * [memory], B/E, counters, metadata, every repair note, truncation,
 * malformed input and the refusal of non-trace formats. */
#include <dirent.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdint.h>
#include <zlib.h>

#include "base/fsutil.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "ingest/importer.h"
#include "store/rundb.h"
#include "store/rundb_writer.h"

static char tmpdir[] = "/tmp/import_chrome_test-XXXXXX";
static int nfiles;

/* ====================================================================== */
/* helpers                                                                */

struct result {
    int rc;
    struct err e;
    struct tb_rank_stats st;
    const char *format;
    sqlite3 *db; /* open read-only when rc == 0 */
};

static char *write_file(const char *name, const void *d, size_t n)
{
    char *path = xasprintf("%s/%d-%s", tmpdir, nfiles++, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(d, 1, n, f) != n)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
    return path;
}

/* Imports bytes saved as file `name` into a new run database. */
static void import_bytes(const char *name, const void *d, size_t n, struct result *r)
{
    char *path = write_file(name, d, n);
    char *db = xasprintf("%s/%d.db", tmpdir, nfiles++);
    struct rundb_writer *w;
    struct instream_limits lim = { 1ull << 30, 200 };
    struct import_ctx ctx = { NULL, NULL, 0, NULL };

    memset(r, 0, sizeof *r);
    if ((r->rc = rundb_create(db, 1u << 20, tmpdir, &w, &r->e)) != 0) goto out;
    if ((r->rc = rundb_begin_rank(w, 0, name, (int64_t)n, &r->e)) != 0) {
        rundb_abort(w);
        goto out;
    }
    r->rc = importer_import_file(path, name, &lim, w, &ctx, &r->e);
    r->format = ctx.format;
    if (r->rc != 0) {
        rundb_abort(w);
        goto out;
    }
    if ((r->rc = rundb_finish_rank(w, &r->st, &r->e)) != 0) {
        rundb_abort(w);
        goto out;
    }
    if ((r->rc = rundb_close_writer(w, &r->e)) != 0) goto out;
    if (rundb_open_ro(db, &r->db, &r->e) != 0) r->rc = r->e.code;
out:
    free(path);
    free(db);
}

static void import_text(const char *json, struct result *r)
{
    import_bytes("trace.json", json, strlen(json), r);
}

static void result_close(struct result *r)
{
    if (r->db) sqlite3_close(r->db);
    r->db = NULL;
}

/* One integer from a query (printf-style); -999999 when no row or error. */
static int64_t q_int(sqlite3 *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *sql = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    sqlite3_stmt *st;
    int64_t v = -999999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "SQL error in %s: %s\n", sql, sqlite3_errmsg(db));
    } else {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_free(sql);
    return v;
}

/* One text value from a query; owned by caller ("" for NULL or no row). */
static char *q_text(sqlite3 *db, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *sql = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "SQL error in %s: %s\n", sql, sqlite3_errmsg(db));
    } else {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            v = xstrdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    sqlite3_free(sql);
    return v ? v : xstrdup("");
}

#define CHECK_Q(db, want, ...) CHECK_EQ_INT(q_int(db, __VA_ARGS__), want)

static void check_q_text(sqlite3 *db, const char *want, const char *sql, int line)
{
    char *got = q_text(db, "%s", sql);
    if (strcmp(got, want) != 0) {
        harness_fail++;
        fprintf(stderr, "FAIL line %d in %s: %s -> \"%.200s\" (want \"%.200s\")\n", line, harness_current, sql, got,
                want);
    } else {
        harness_pass++;
    }
    free(got);
}
#define CHECK_QT(db, want, sql) check_q_text(db, want, sql, __LINE__)

/* Number of notes whose reason contains `like` (SQL LIKE pattern). */
static int64_t notes(sqlite3 *db, const char *level, const char *like)
{
    return q_int(db, "SELECT coalesce(sum(count),0) FROM note WHERE level=%Q AND reason LIKE %Q", level, like);
}

/* The accounting identity every rank without B/E or counters keeps. */
static void check_identity(const struct tb_rank_stats *s, int line)
{
    uint64_t sum = s->slices + s->flows + s->instants + s->counters + s->mems + s->metadata + s->dropped;
    if (sum != s->events) {
        harness_fail++;
        fprintf(stderr, "FAIL line %d in %s: stats sum %llu != events %llu\n", line, harness_current,
                (unsigned long long)sum, (unsigned long long)s->events);
    } else {
        harness_pass++;
    }
}
#define CHECK_IDENTITY(st) check_identity(&(st), __LINE__)

/* ====================================================================== */
/* forms and header                                                       */

static void test_bare_array(void)
{
    struct result r;
    import_text("[\n{\"ph\":\"X\",\"cat\":\"Operator\",\"name\":\"aten::add\",\"pid\":1,\"tid\":2,\"ts\":100,\"dur\":5},\n"
                "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"k\",\"pid\":0,\"tid\":\"stream 7\",\"ts\":103,\"dur\":2,"
                "\"args\":{\"correlation\":77,\"stream\":7,\"device\":0}},\n"
                "{\"ph\":\"X\",\"cat\":\"Runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":101,"
                "\"dur\":1,\"args\":{\"correlation\":77,\"External id\":5}}\n]\n",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "kineto-2020");
    CHECK_EQ_INT(r.st.events, 3);
    CHECK_EQ_INT(r.st.slices, 3);
    CHECK_IDENTITY(r.st);
    CHECK_Q(r.db, 3, "SELECT count(*) FROM slice");
    CHECK_Q(r.db, 2, "SELECT count(*) FROM track");
    /* the kernel's track is a GPU stream, device 0 stream 7 */
    CHECK_Q(r.db, 1, "SELECT kind FROM track WHERE tid='stream 7'");
    CHECK_Q(r.db, 0, "SELECT device FROM track WHERE tid='stream 7'");
    CHECK_Q(r.db, 7, "SELECT stream FROM track WHERE tid='stream 7'");
    CHECK_Q(r.db, 77, "SELECT corr FROM slice s JOIN str n ON n.id=s.name WHERE n.s='k'");
    CHECK_Q(r.db, 5, "SELECT ext FROM slice s JOIN str n ON n.id=s.name WHERE n.s='cudaLaunchKernel'");
    CHECK_Q(r.db, 2, "SELECT count(*) FROM slice WHERE corr=77");
    /* slice ids follow (track, ts): add (100) before its child runtime (101) */
    CHECK_Q(r.db, 1, "SELECT depth FROM slice s JOIN str n ON n.id=s.name WHERE n.s='cudaLaunchKernel'");
    CHECK_Q(r.db, 100000, "SELECT t0 FROM rank");
    CHECK_Q(r.db, 105000, "SELECT t1 FROM rank");
    result_close(&r);
}

static void test_object_header_after_events(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":1,\"tid\":7,\"ts\":10.5,\"dur\":1},\n"
                "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":99,\"tid\":99,\"ts\":10,\"dur\":3}\n"
                "],\n"
                "\"schemaVersion\": 1,\n"
                "\"deviceProperties\": [{\"id\":0,\"name\":\"GPU zero\"},{\"id\":1,\"name\":\"NVIDIA H100 80GB HBM3\"}],\n"
                "\"distributedInfo\": {\"backend\":\"nccl\",\"rank\":3,\"world_size\":8},\n"
                "\"baseTimeNanoseconds\": 1790857026000000001,\n"
                "\"traceName\": \"/tmp/x.json\"\n}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "kineto");
    CHECK_Q(r.db, 1790857026000000001LL, "SELECT base_ns FROM rank"); /* above 2^53, exact */
    CHECK_Q(r.db, 1, "SELECT json_extract(header,'$.schemaVersion') FROM rank");
    CHECK_QT(r.db, "/tmp/x.json", "SELECT json_extract(header,'$.traceName') FROM rank");
    CHECK_Q(r.db, 3, "SELECT json_extract(distributed,'$.rank') FROM rank");
    /* the device is the one whose id is the GPU track's pid (1), not the first */
    CHECK_QT(r.db, "NVIDIA H100 80GB HBM3", "SELECT json_extract(device,'$.name') FROM rank");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM note");
    result_close(&r);
}

static void test_gzip_input(void)
{
    const char *json = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
                       "{\"ph\":\"i\",\"name\":\"mark\",\"pid\":1,\"tid\":1,\"ts\":1.5,\"s\":\"g\"}]}";
    char *path = xasprintf("%s/gz-src.json.gz", tmpdir);
    gzFile g = gzopen(path, "wb");
    REQUIRE(g != NULL);
    gzwrite(g, json, (unsigned)strlen(json));
    gzclose(g);
    FILE *f = fopen(path, "rb");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    struct result r;
    import_bytes("trace.json.gz", buf, n, &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "chrome");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM slice");
    CHECK_QT(r.db, "g", "SELECT scope FROM instant");
    CHECK_Q(r.db, 1500, "SELECT ts FROM instant");
    CHECK_IDENTITY(r.st);
    result_close(&r);
    free(path);
}

/* ====================================================================== */
/* tracks and time                                                        */

static void test_pid_tid_spellings(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"a\",\"pid\":7,\"tid\":9,\"ts\":1,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"b\",\"pid\":\"7\",\"tid\":\"9\",\"ts\":2,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"c\",\"pid\":\"7\",\"tid\":9,\"ts\":3,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"d\",\"pid\":7,\"tid\":\"\\u0039\",\"ts\":4,\"dur\":1},\n"
                "{\"ph\":\"s\",\"id\":1,\"pid\":7,\"tid\":9,\"ts\":1,\"cat\":\"async\",\"name\":\"f\"},\n"
                "{\"ph\":\"X\",\"name\":\"e\",\"pid\":7,\"tid\":10,\"ts\":4,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"s\",\"pid\":\"Spans\",\"tid\":\"PyTorch Profiler\",\"ts\":4,\"dur\":1}\n,"
                /* the same invalid UTF-8 pid twice: one track, shown repaired */
                "{\"ph\":\"X\",\"name\":\"u1\",\"pid\":\"gpu\xff\",\"tid\":1,\"ts\":4,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"u2\",\"pid\":\"gpu\xff\",\"tid\":1,\"ts\":5,\"dur\":1}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 1, "SELECT count(*) FROM track WHERE pid='gpu?'");
    CHECK_Q(r.db, 4, "SELECT count(*) FROM track");
    CHECK_Q(r.db, 4, "SELECT nslices FROM track WHERE pid='7' AND tid='9'");
    CHECK_Q(r.db, 1, "SELECT count(DISTINCT track) FROM slice WHERE name IN (SELECT id FROM str WHERE s IN ('a','b','c','d'))");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM flow f JOIN track t ON t.id=f.track WHERE t.pid='7' AND t.tid='9'");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM track WHERE pid='Spans' AND tid='PyTorch Profiler'");
    result_close(&r);
}

static void test_timestamps(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                /* integer µs since the epoch */
                "{\"ph\":\"X\",\"name\":\"int\",\"pid\":1,\"tid\":1,\"ts\":1606910596297023,\"dur\":7},\n"
                /* float µs with an ns fraction: a double would round these */
                "{\"ph\":\"X\",\"name\":\"float\",\"pid\":1,\"tid\":2,\"ts\":1606910596297023.456,\"dur\":0.001},\n"
                "{\"ph\":\"X\",\"name\":\"float2\",\"pid\":1,\"tid\":3,\"ts\":1606910596297023.457,\"dur\":1.999},\n"
                /* more fraction digits than ns: rounded */
                "{\"ph\":\"X\",\"name\":\"round\",\"pid\":1,\"tid\":4,\"ts\":123.4567,\"dur\":0.0004},\n"
                "{\"ph\":\"X\",\"name\":\"exp\",\"pid\":1,\"tid\":5,\"ts\":1.5e3,\"dur\":2E1},\n"
                "{\"ph\":\"X\",\"name\":\"str\",\"pid\":1,\"tid\":6,\"ts\":\"88123.456\",\"dur\":\"1\"},\n"
                "{\"ph\":\"X\",\"name\":\"neg\",\"pid\":1,\"tid\":7,\"ts\":-2,\"dur\":1}\n"
                "],\"baseTimeNanoseconds\":1700000000000000000}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 1606910596297023000LL, q, "ts", "int");
    CHECK_Q(r.db, 7000, q, "dur", "int");
    CHECK_Q(r.db, 1606910596297023456LL, q, "ts", "float");
    CHECK_Q(r.db, 1, q, "dur", "float");
    CHECK_Q(r.db, 1606910596297023457LL, q, "ts", "float2");
    CHECK_Q(r.db, 1999, q, "dur", "float2");
    CHECK_Q(r.db, 123457, q, "ts", "round");
    CHECK_Q(r.db, 0, q, "dur", "round");
    CHECK_Q(r.db, 1500000, q, "ts", "exp");
    CHECK_Q(r.db, 20000, q, "dur", "exp");
    CHECK_Q(r.db, 88123456, q, "ts", "str");
    CHECK_Q(r.db, -2000, q, "ts", "neg");
    /* base-relative times stay relative; the base is kept beside them */
    CHECK_Q(r.db, 1700000000000000000LL, "SELECT base_ns FROM rank");
    CHECK_Q(r.db, -2000, "SELECT t0 FROM rank");
    CHECK_Q(r.db, 1606910596297030000LL, "SELECT t1 FROM rank"); /* int: ts + 7 µs */
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* Times near the int64 ends: no overflow in end = ts + dur. */
static void test_extreme_times(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"late\",\"pid\":1,\"tid\":1,\"ts\":9000000000000000,\"dur\":9000000000000000},\n"
                "{\"ph\":\"X\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":9000000000000001,\"dur\":9000000000000000},\n"
                "{\"ph\":\"X\",\"name\":\"early\",\"pid\":1,\"tid\":2,\"ts\":-9000000000000000,\"dur\":1},\n"
                "{\"ph\":\"B\",\"name\":\"b\",\"pid\":1,\"tid\":3,\"ts\":-9000000000000000},\n"
                "{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":9000000000000000},\n"
                "{\"ph\":\"X\",\"name\":\"huge\",\"pid\":1,\"tid\":4,\"ts\":1e300,\"dur\":1}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 4, "SELECT count(*) FROM slice");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM slice WHERE ts + dur < ts"); /* none may wrap */
    CHECK_Q(r.db, 0, "SELECT count(*) FROM slice WHERE dur < 0");
    CHECK_Q(r.db, 1, "SELECT depth FROM slice s JOIN str n ON n.id=s.name WHERE n.s='inner'");
    CHECK(notes(r.db, "dropped", "%ts is not a finite number%") == 1);
    CHECK(notes(r.db, "repaired", "slice ending past the largest representable time%") == 2);
    CHECK_Q(r.db, INT64_MAX, "SELECT t1 FROM rank");
    result_close(&r);
}

/* ====================================================================== */
/* nesting                                                                */

static void test_out_of_order_nesting(void)
{
    struct result r;
    /* A [0,100) contains B [10,60) contains C [20,30); written C, B, A,
     * plus a sibling D [60,70) that starts where B ends. */
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"C\",\"pid\":1,\"tid\":1,\"ts\":20,\"dur\":10},\n"
                "{\"ph\":\"X\",\"name\":\"D\",\"pid\":1,\"tid\":1,\"ts\":60,\"dur\":10},\n"
                "{\"ph\":\"X\",\"name\":\"B\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":50},\n"
                "{\"ph\":\"X\",\"name\":\"A\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 0, q, "depth", "A");
    CHECK_Q(r.db, 1, q, "depth", "B");
    CHECK_Q(r.db, 2, q, "depth", "C");
    CHECK_Q(r.db, 1, q, "depth", "D");
    CHECK_Q(r.db, q_int(r.db, q, "id", "A"), q, "parent", "B");
    CHECK_Q(r.db, q_int(r.db, q, "id", "B"), q, "parent", "C");
    CHECK_Q(r.db, q_int(r.db, q, "id", "A"), q, "parent", "D");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM slice WHERE parent IS NULL");
    /* ids are in (track, ts) order */
    CHECK_Q(r.db, 1, q, "id", "A");
    CHECK_Q(r.db, 4, q, "id", "D");
    CHECK_Q(r.db, 2, "SELECT max_depth FROM track");
    CHECK_Q(r.db, 1, "SELECT first_slice FROM track");
    CHECK_Q(r.db, 4, "SELECT last_slice FROM track");
    result_close(&r);
}

static void test_deep_nesting(void)
{
    /* 100 levels, level i = [i, 1000 - i), written in a shuffled order */
    char *json = xmalloc(100 * 120 + 64);
    size_t k = (size_t)sprintf(json, "{\"traceEvents\":[");
    int order[100];
    for (int i = 0; i < 100; i++) order[i] = (i * 37) % 100;
    for (int j = 0; j < 100; j++) {
        int i = order[j];
        k += (size_t)sprintf(json + k, "%s{\"ph\":\"X\",\"name\":\"L%d\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":%d}",
                             j ? "," : "", i, i, 1000 - 2 * i);
    }
    sprintf(json + k, "]}");
    struct result r;
    import_text(json, &r);
    free(json);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 99, "SELECT max_depth FROM track");
    CHECK_Q(r.db, 100, "SELECT count(*) FROM slice s JOIN str n ON n.id=s.name WHERE n.s = 'L' || s.depth");
    CHECK_Q(r.db, 99, "SELECT count(*) FROM slice c JOIN slice p ON p.id=c.parent WHERE p.depth = c.depth - 1");
    result_close(&r);
}

static void test_zero_length(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"P\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":100},\n"
                "{\"ph\":\"X\",\"name\":\"Z0\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":0},\n"
                "{\"ph\":\"X\",\"name\":\"Zmid\",\"pid\":1,\"tid\":1,\"ts\":150,\"dur\":0},\n"
                "{\"ph\":\"X\",\"name\":\"Zend\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":0},\n"
                "{\"ph\":\"X\",\"name\":\"after\",\"pid\":1,\"tid\":1,\"ts\":160,\"dur\":1}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 5, "SELECT count(*) FROM slice");
    CHECK_Q(r.db, 0, q, "dur", "Zmid");
    CHECK_Q(r.db, 1, q, "depth", "Z0");
    CHECK_Q(r.db, 1, q, "depth", "Zmid");
    CHECK_Q(r.db, 0, q, "depth", "Zend"); /* at the parent's end: outside it */
    /* a zero-length slice never becomes a parent */
    CHECK_Q(r.db, 1, q, "depth", "after");
    CHECK_Q(r.db, q_int(r.db, q, "id", "P"), q, "parent", "after");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM note");
    result_close(&r);
}

/* ====================================================================== */
/* names and strings                                                      */

static void test_names(void)
{
    size_t ln = 6000;
    char *longname = xmalloc(ln + 1);
    for (size_t i = 0; i < ln; i++) longname[i] = "void at::native::kernel<float, 4>(int&&) "[i % 41];
    longname[ln] = '\0';
    char *json = xasprintf(
        "{\"traceEvents\":[\n"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":1,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"void f<int, &g>(a&&b) <built-in function isinstance> \\u00e9\\u20ac \\ud83d\\ude00 \\\"q\\\" \\\\\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"raw \xc3\xa9 \xe2\x82\xac\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"lone \\ud800 surrogate\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"bad \xff\xfe utf8\",\"pid\":1,\"tid\":1,\"ts\":7,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":\"bad \xff\xfe utf8\",\"pid\":1,\"tid\":1,\"ts\":9,\"dur\":1},\n"
        "{\"ph\":\"X\",\"name\":12345,\"pid\":1,\"tid\":1,\"ts\":11,\"dur\":1},\n"
        "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":13,\"dur\":1,\"args\":{\"a\":\"<&>\"}}\n"
        "]}",
        longname);
    struct result r;
    import_text(json, &r);
    free(json);
    REQUIRE(r.rc == 0);
    char *got = q_text(r.db, "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE length(n.s) > 5000");
    CHECK(strlen(got) == ln && strcmp(got, longname) == 0);
    free(got);
    CHECK_QT(r.db, "void f<int, &g>(a&&b) <built-in function isinstance> \xc3\xa9\xe2\x82\xac \xf0\x9f\x98\x80 \"q\" \\",
             "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=1000 AND s.track=(SELECT id FROM track WHERE pid='1')");
    CHECK_QT(r.db, "raw \xc3\xa9 \xe2\x82\xac", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=3000");
    CHECK_QT(r.db, "lone \xef\xbf\xbd surrogate", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=5000");
    /* invalid UTF-8 is repaired, and the same bad name is one string */
    CHECK_QT(r.db, "bad ?? utf8", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=7000");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM str WHERE s='bad ?? utf8'");
    CHECK_Q(r.db, 1, "SELECT count(DISTINCT name) FROM slice WHERE ts IN (7000, 9000)");
    CHECK_QT(r.db, "12345", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=11000");
    CHECK_QT(r.db, "(unnamed)", "SELECT n.s FROM slice s JOIN str n ON n.id=s.name WHERE s.ts=13000");
    CHECK_QT(r.db, "<&>", "SELECT json_extract(args,'$.a') FROM slice WHERE ts=13000");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM str WHERE s = '(unnamed)'");
    result_close(&r);
    free(longname);
}

/* ====================================================================== */
/* event kinds                                                            */

static void test_flows(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"s\",\"id\":10,\"pid\":1,\"tid\":1,\"ts\":5,\"cat\":\"ac2g\",\"name\":\"ac2g\"},\n"
                "{\"ph\":\"f\",\"id\":10,\"pid\":0,\"tid\":7,\"ts\":9,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"},\n"
                "{\"ph\":\"s\",\"id\":\"0x1f\",\"pid\":1,\"tid\":1,\"ts\":6,\"cat\":\"async\",\"name\":\"async\"},\n"
                "{\"ph\":\"t\",\"id\":\"0x1f\",\"pid\":1,\"tid\":2,\"ts\":7,\"cat\":\"async\",\"name\":\"async\"},\n"
                "{\"ph\":\"f\",\"id\":\"0x1f\",\"pid\":0,\"tid\":7,\"ts\":8,\"cat\":\"async\",\"name\":\"async\"},\n"
                "{\"ph\":\"f\",\"bind_id\":42,\"pid\":0,\"tid\":7,\"ts\":8,\"cat\":\"fwdbwd\"},\n"
                "{\"ph\":\"s\",\"pid\":1,\"tid\":1,\"ts\":8,\"cat\":\"ac2g\",\"name\":\"no id\"}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.flows, 6);
    CHECK_Q(r.db, 6, "SELECT count(*) FROM flow");
    CHECK_QT(r.db, "e", "SELECT bp FROM flow WHERE fid='10' AND ph='f'");
    CHECK_Q(r.db, 1, "SELECT bp IS NULL FROM flow WHERE fid='10' AND ph='s'");
    CHECK_Q(r.db, 1, "SELECT bp IS NULL FROM flow WHERE fid='0x1f' AND ph='f'");
    CHECK_Q(r.db, 7000, "SELECT ts FROM flow WHERE ph='t'");
    CHECK_Q(r.db, 3, "SELECT count(*) FROM flow WHERE fid='0x1f'");
    CHECK_Q(r.db, 1, "SELECT count(*) FROM flow WHERE fid='42'");
    CHECK_QT(r.db, "ac2g", "SELECT s FROM str WHERE id=(SELECT cat FROM flow WHERE fid='10' AND ph='s')");
    CHECK_Q(r.db, 1, "SELECT count(DISTINCT track) FROM flow WHERE ph='f'");
    CHECK(notes(r.db, "dropped", "flow event without id") == 1);
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

static void test_memory_events(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                /* 2021 form: no cat, three args */
                "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":5,\"s\":\"t\","
                "\"args\":{\"Device Type\":1,\"Device Id\":0,\"Bytes\":512}},\n"
                /* 2022+ form */
                "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":6,"
                "\"s\":\"t\",\"args\":{\"Total Reserved\":2097152,\"Total Allocated\":1536,\"Bytes\":-512,"
                "\"Addr\":139872004276224,\"Device Id\":3,\"Device Type\":1,\"Ev Idx\":12}},\n"
                "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":7,\"args\":{\"Device Id\":0}},\n"
                "{\"ph\":\"i\",\"name\":\"Iteration Start: PyTorch Profiler\",\"pid\":1,\"tid\":1,\"ts\":8,\"s\":\"g\"}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.mems, 2);
    CHECK_Q(r.db, 2, "SELECT count(*) FROM mem");
    CHECK_Q(r.db, 512, "SELECT bytes FROM mem WHERE ts=5000");
    CHECK_Q(r.db, 1, "SELECT total_alloc IS NULL AND total_reserved IS NULL FROM mem WHERE ts=5000");
    CHECK_Q(r.db, -512, "SELECT bytes FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 139872004276224LL, "SELECT addr FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 1536, "SELECT total_alloc FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 2097152, "SELECT total_reserved FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 3, "SELECT dev_id FROM mem WHERE ts=6000");
    CHECK_Q(r.db, 1, "SELECT dev_type FROM mem WHERE ts=6000");
    CHECK(notes(r.db, "dropped", "[memory] event without Bytes") == 1);
    CHECK_Q(r.db, 1, "SELECT count(*) FROM instant");
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

static void test_begin_end(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"B\",\"name\":\"outer\",\"cat\":\"user_annotation\",\"pid\":1,\"tid\":1,\"ts\":10,\"args\":{\"k\":1}},\n"
                "{\"ph\":\"B\",\"name\":\"other thread\",\"pid\":1,\"tid\":2,\"ts\":11},\n"
                "{\"ph\":\"B\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":12},\n"
                "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":20},\n"
                "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":30},\n"
                "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":31},\n"
                "{\"ph\":\"B\",\"name\":\"never closed\",\"pid\":1,\"tid\":3,\"ts\":40},\n"
                "{\"ph\":\"B\",\"name\":\"never closed 2\",\"pid\":1,\"tid\":3,\"ts\":41}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 10000, q, "ts", "outer");
    CHECK_Q(r.db, 20000, q, "dur", "outer");
    CHECK_Q(r.db, 12000, q, "ts", "inner");
    CHECK_Q(r.db, 8000, q, "dur", "inner");
    CHECK_Q(r.db, 1, q, "depth", "inner");
    CHECK_Q(r.db, 1, "SELECT json_extract(args,'$.k') FROM slice s JOIN str n ON n.id=s.name WHERE n.s='outer'");
    CHECK_Q(r.db, 2, "SELECT count(*) FROM slice");
    CHECK(notes(r.db, "dropped", "'E' event without a matching 'B'%") == 1);
    /* every unclosed B is counted: 'other thread' and the two on tid 3 */
    CHECK(notes(r.db, "dropped", "'B' events never closed%") == 3);
    CHECK_EQ_INT(r.st.events, 8);
    CHECK_EQ_INT(r.st.dropped, 4);
    result_close(&r);
}

static void test_counters(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"C\",\"name\":\"GPU mem\",\"pid\":1,\"ts\":5,\"args\":{\"used\":10,\"free\":5.5}},\n"
                "{\"ph\":\"C\",\"name\":\"GPU mem\",\"pid\":1,\"ts\":6,\"args\":{\"used\":12,\"bad\":NaN,\"s\":\"x\"}},\n"
                "{\"ph\":\"C\",\"name\":\"no args\",\"pid\":1,\"ts\":7}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.counters, 3);
    CHECK_Q(r.db, 3, "SELECT count(*) FROM counter");
    CHECK_Q(r.db, 2, "SELECT count(*) FROM counter c JOIN str n ON n.id=c.name WHERE n.s='GPU mem.used'");
    CHECK_Q(r.db, 55, "SELECT value*10 FROM counter c JOIN str n ON n.id=c.name WHERE n.s='GPU mem.free'");
    CHECK_Q(r.db, 12, "SELECT value FROM counter WHERE ts=6000");
    CHECK(notes(r.db, "dropped", "counter event without args") == 1);
    result_close(&r);

    /* series names (the args' keys) are JSON strings too: escapes decoded */
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"C\",\"name\":\"m\\u00e9m\",\"pid\":1,\"ts\":5,"
                "\"args\":{\"caf\\u00e9\":1,\"q\\\"uote\":2,\"tab\\\\x\":3}}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.counters, 3);
    CHECK_Q(r.db, 1, "SELECT value FROM counter c JOIN str n ON n.id=c.name WHERE n.s='m\xc3\xa9m.caf\xc3\xa9'");
    CHECK_Q(r.db, 2, "SELECT value FROM counter c JOIN str n ON n.id=c.name WHERE n.s='m\xc3\xa9m.q\"uote'");
    CHECK_Q(r.db, 3, "SELECT value FROM counter c JOIN str n ON n.id=c.name WHERE n.s='m\xc3\xa9m.tab\\x'");
    result_close(&r);
}

static void test_metadata(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":7,\"tid\":0,\"args\":{\"name\":\"python3 \\u00e9\"}},\n"
                "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":7,\"tid\":9,\"args\":{\"name\":\"thread 9 (python)\"}},\n"
                "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":7,\"tid\":9,\"args\":{\"sort_index\":4}},\n"
                "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":7,\"args\":{\"labels\":\"x\"}},\n"
                "{\"ph\":\"X\",\"name\":\"a\",\"pid\":\"7\",\"tid\":\"9\",\"ts\":1,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"b\",\"pid\":7,\"tid\":10,\"ts\":1,\"dur\":1}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.metadata, 4);
    CHECK_QT(r.db, "thread 9 (python)", "SELECT name FROM track WHERE pid='7' AND tid='9'");
    CHECK_Q(r.db, 4, "SELECT sort FROM track WHERE pid='7' AND tid='9'");
    CHECK_QT(r.db, "python3 \xc3\xa9", "SELECT pname FROM track WHERE pid='7' AND tid='9'");
    CHECK_QT(r.db, "python3 \xc3\xa9", "SELECT pname FROM track WHERE pid='7' AND tid='10'");
    CHECK_Q(r.db, 1, "SELECT name IS NULL FROM track WHERE pid='7' AND tid='10'");
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* ====================================================================== */
/* JAX / TensorFlow (XProf) lanes                                         */

/* Kind of the slice called `name` (the first one). */
static int64_t kind_of(sqlite3 *db, const char *name)
{
    return q_int(db, "SELECT s.kind FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q ORDER BY s.id LIMIT 1", name);
}

/* jax.profiler.trace(create_perfetto_trace=True) on a GPU: a "/device:GPU:N"
 * process whose stream threads hold kernels and copies, the host's python
 * thread with StepTraceAnnotation("train", step_num=..) spans, CUPTI API
 * calls sharing a string correlation_id with their kernel. */
static void test_jax_gpu_lanes(void)
{
    struct result r;
    import_text("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:3\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":14,\"name\":\"thread_name\",\"args\":{\"name\":\"Stream #14(Compute)\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":15,\"name\":\"thread_name\",\"args\":{\"name\":\"Stream #15(MemcpyH2D)\"}},\n"
                "{\"ph\":\"M\",\"pid\":1,\"tid\":99,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA Ops\"}},\n"
                "{\"ph\":\"M\",\"pid\":701,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},\n"
                "{\"ph\":\"M\",\"pid\":701,\"tid\":5,\"name\":\"thread_name\",\"args\":{\"name\":\"python3\"}},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":100,\"dur\":50,\"name\":\"train\",\"args\":{\"step_num\":\"0\"}},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":101,\"dur\":2,\"name\":\"$train.py:12 step\"},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":103,\"dur\":3,\"name\":\"fusion_1\","
                "\"args\":{\"correlation_id\":\"7\",\"device_id\":\"0\"}},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":160,\"dur\":50,\"name\":\"train\",\"args\":{\"step_num\":1}},\n"
                "{\"ph\":\"X\",\"pid\":701,\"tid\":5,\"ts\":161,\"dur\":3,\"name\":\"PjitFunction(f)\"},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"ts\":110,\"dur\":5,\"name\":\"fusion_1\","
                "\"args\":{\"correlation_id\":\"7\",\"hlo_op\":\"fusion.1\"}},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":14,\"ts\":120,\"dur\":1,\"name\":\"memset32\"},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":15,\"ts\":104,\"dur\":1,\"name\":\"MemcpyH2D\","
                "\"args\":{\"correlation_id\":\"8\",\"memcpy_details\":\"kind_src:pinned size:4\"}},\n"
                "{\"ph\":\"X\",\"pid\":1,\"tid\":99,\"ts\":110,\"dur\":5,\"name\":\"fusion.1\"},\n"
                "{}]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "chrome-xla");
    /* device lanes are GPU tracks of device 3, the stream number from the tid */
    CHECK_Q(r.db, 3, "SELECT count(*) FROM track WHERE pid='1' AND kind=1 AND device=3");
    CHECK_Q(r.db, 14, "SELECT stream FROM track WHERE pid='1' AND tid='14'");
    CHECK_Q(r.db, 0, "SELECT kind FROM track WHERE pid='701'");
    CHECK_Q(r.db, 1, "SELECT device IS NULL FROM track WHERE pid='701'");
    /* ops on streams: kernels, copies, sets; "XLA Ops" of a GPU is derived */
    CHECK_Q(r.db, TB_K_KERNEL, "SELECT s.kind FROM slice s JOIN track t ON t.id=s.track WHERE t.tid='14' "
                               "AND s.ts=110000");
    CHECK_Q(r.db, 7, "SELECT s.corr FROM slice s JOIN track t ON t.id=s.track WHERE t.tid='14' AND s.ts=110000");
    CHECK_EQ_INT(kind_of(r.db, "memset32"), TB_K_MEMSET);
    CHECK_EQ_INT(kind_of(r.db, "MemcpyH2D"), TB_K_MEMCPY);
    CHECK_EQ_INT(kind_of(r.db, "fusion.1"), TB_K_GPU_ANNOTATION);
    /* host: steps named <name>#<step_num>, CUPTI calls as driver calls
     * joined to their kernel, Python frames; the rest stays other */
    CHECK_Q(r.db, 2, "SELECT count(*) FROM slice s JOIN str n ON n.id=s.name WHERE n.s IN ('train#0','train#1') "
                     "AND s.kind=2");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM slice s JOIN str n ON n.id=s.name WHERE n.s='train'");
    CHECK_Q(r.db, TB_K_DRIVER, "SELECT s.kind FROM slice s JOIN track t ON t.id=s.track WHERE t.pid='701' "
                               "AND s.corr=7");
    CHECK_EQ_INT(kind_of(r.db, "$train.py:12 step"), TB_K_PYTHON);
    CHECK_EQ_INT(kind_of(r.db, "PjitFunction(f)"), TB_K_OTHER);
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* A TPU: no streams, so "XLA Ops" holds the device's ops; "XLA Modules"
 * and "Steps" are derived lines; copy-start is a copy; TPU_SYSTEM and the
 * CPU device are not accelerators. Thread names may come before the
 * process name. */
static void test_jax_tpu_lanes(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":3,\"tid\":2,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA Ops\"}},\n"
                "{\"ph\":\"M\",\"pid\":3,\"tid\":1,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA Modules\"}},\n"
                "{\"ph\":\"M\",\"pid\":3,\"tid\":0,\"name\":\"thread_name\",\"args\":{\"name\":\"Steps\"}},\n"
                "{\"ph\":\"M\",\"pid\":3,\"name\":\"process_name\",\"args\":{\"name\":\"/device:TPU:1 (pid 3)\"}},\n"
                "{\"ph\":\"M\",\"pid\":4,\"name\":\"process_name\",\"args\":{\"name\":\"/device:TPU_SYSTEM:0\"}},\n"
                "{\"ph\":\"M\",\"pid\":5,\"name\":\"process_name\",\"args\":{\"name\":\"/device:CPU:0\"}},\n"
                "{\"ph\":\"M\",\"pid\":6,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:x\"}},\n"
                "{\"ph\":\"X\",\"pid\":3,\"tid\":2,\"ts\":10,\"dur\":4,\"name\":\"fusion.3\"},\n"
                "{\"ph\":\"X\",\"pid\":3,\"tid\":2,\"ts\":15,\"dur\":1,\"name\":\"copy-start.1\"},\n"
                "{\"ph\":\"X\",\"pid\":3,\"tid\":1,\"ts\":9,\"dur\":8,\"name\":\"jit_train_step\"},\n"
                "{\"ph\":\"X\",\"pid\":3,\"tid\":0,\"ts\":9,\"dur\":8,\"name\":\"0\"},\n"
                "{\"ph\":\"X\",\"pid\":4,\"tid\":1,\"ts\":9,\"dur\":8,\"name\":\"sys\"},\n"
                "{\"ph\":\"X\",\"pid\":5,\"tid\":1,\"ts\":9,\"dur\":8,\"name\":\"cpu\"},\n"
                "{\"ph\":\"X\",\"pid\":6,\"tid\":1,\"ts\":9,\"dur\":8,\"name\":\"odd\"}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "chrome-xla");
    CHECK_Q(r.db, 3, "SELECT count(*) FROM track WHERE pid='3' AND kind=1 AND device=1");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM track WHERE pid IN ('4','5','6') AND kind!=0");
    CHECK_EQ_INT(kind_of(r.db, "fusion.3"), TB_K_KERNEL);
    CHECK_EQ_INT(kind_of(r.db, "copy-start.1"), TB_K_MEMCPY);
    CHECK_EQ_INT(kind_of(r.db, "jit_train_step"), TB_K_GPU_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "0"), TB_K_GPU_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "sys"), TB_K_OTHER);
    CHECK_EQ_INT(kind_of(r.db, "cpu"), TB_K_OTHER);
    CHECK_IDENTITY(r.st);
    result_close(&r);
}

/* TensorFlow's trace viewer JSON: derived "TensorFlow Ops"/"XLA Ops" lines
 * beside the streams of a GPU, Keras' Trace("train", step_num=N, _r=1)
 * markers, copies and sets named by CUPTI; Kineto traces are untouched. */
static void test_tf_lanes(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:0\"}},\n"
                "{\"ph\":\"M\",\"pid\":2,\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":\"Stream #7(Compute)\"}},\n"
                "{\"ph\":\"M\",\"pid\":2,\"tid\":8,\"name\":\"thread_name\",\"args\":{\"name\":\"TensorFlow Ops\"}},\n"
                "{\"ph\":\"M\",\"pid\":2,\"tid\":9,\"name\":\"thread_name\",\"args\":{\"name\":\"XLA Ops\"}},\n"
                "{\"ph\":\"M\",\"pid\":900,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},\n"
                "{\"ph\":\"X\",\"pid\":900,\"tid\":1,\"ts\":1,\"dur\":100,\"name\":\"train\","
                "\"args\":{\"step_num\":12,\"_r\":1}},\n"
                "{\"ph\":\"X\",\"pid\":900,\"tid\":1,\"ts\":2,\"dur\":1,\"name\":\"MatMul\"},\n"
                "{\"ph\":\"X\",\"pid\":900,\"tid\":1,\"ts\":3,\"dur\":1,\"name\":\"neg\",\"args\":{\"step_num\":-1}},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":7,\"ts\":5,\"dur\":2,\"name\":\"volta_sgemm_128x64_nn\"},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":7,\"ts\":8,\"dur\":1,\"name\":\"MemcpyD2H\"},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":7,\"ts\":9,\"dur\":1,\"name\":\"Memset\"},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":8,\"ts\":5,\"dur\":2,\"name\":\"MatMul:MatMul\"},\n"
                "{\"ph\":\"X\",\"pid\":2,\"tid\":9,\"ts\":5,\"dur\":2,\"name\":\"dot.1\"},\n"
                "{\"ph\":\"B\",\"pid\":2,\"tid\":7,\"ts\":20,\"name\":\"begin_kernel\"},\n"
                "{\"ph\":\"E\",\"pid\":2,\"tid\":7,\"ts\":21}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 3, "SELECT count(*) FROM track WHERE pid='2' AND kind=1 AND device=0");
    CHECK_EQ_INT(kind_of(r.db, "volta_sgemm_128x64_nn"), TB_K_KERNEL);
    CHECK_EQ_INT(kind_of(r.db, "begin_kernel"), TB_K_KERNEL);
    CHECK_EQ_INT(kind_of(r.db, "MemcpyD2H"), TB_K_MEMCPY);
    CHECK_EQ_INT(kind_of(r.db, "Memset"), TB_K_MEMSET);
    CHECK_EQ_INT(kind_of(r.db, "MatMul:MatMul"), TB_K_GPU_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "dot.1"), TB_K_GPU_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "train#12"), TB_K_USER_ANNOTATION);
    CHECK_EQ_INT(kind_of(r.db, "MatMul"), TB_K_OTHER);
    CHECK_EQ_INT(kind_of(r.db, "neg"), TB_K_OTHER);
    result_close(&r);

    /* a Kineto trace keeps its categories' kinds and pid-numbered devices */
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:5\"}},\n"
                "{\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":2,\"name\":\"k\","
                "\"args\":{\"correlation\":3,\"correlation_id\":9}},\n"
                "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"pid\":10,\"tid\":1,\"ts\":1,\"dur\":9,\"name\":\"train\","
                "\"args\":{\"step_num\":1}}\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "kineto");
    CHECK_Q(r.db, 0, "SELECT device FROM track WHERE pid='0'");
    CHECK_Q(r.db, 3, "SELECT corr FROM slice s JOIN str n ON n.id=s.name WHERE n.s='k'");
    CHECK_EQ_INT(kind_of(r.db, "train"), TB_K_USER_ANNOTATION);
    result_close(&r);
}

/* The real jax_mlp trace (../shared/traces/jax_mlp) against a count made
 * here with jansson: every X event on a "/device:GPU:N" process is a GPU
 * op, those named Memcpy* copies, every host event with a step_num arg a
 * step, every host event with a correlation_id a driver call. */
static void test_jax_mlp_counts(void)
{
    char *dir = xasprintf("%s/traces/jax_mlp/plugins/profile", harness_shared()), *path = NULL;
    DIR *d = opendir(dir);
    struct dirent *de;
    if (!d) {
        printf("import_chrome: jax_mlp skipped (%s not found)\n", dir);
        free(dir);
        return;
    }
    while (!path && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char *p = xasprintf("%s/%s/perfetto_trace.json.gz", dir, de->d_name);
        if (access(p, R_OK) == 0) path = p;
        else free(p);
    }
    closedir(d);
    free(dir);
    REQUIRE(path != NULL);

    /* the independent count */
    gzFile gz = gzopen(path, "rb");
    REQUIRE(gz != NULL);
    size_t n = 0, cap = 1 << 20;
    char *buf = xmalloc(cap);
    int got;
    while ((got = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) buf = xrealloc(buf, cap *= 2);
    }
    gzclose(gz);
    json_error_t je;
    json_t *root = json_loadb(buf, n, 0, &je), *ev;
    free(buf);
    REQUIRE(root != NULL);
    json_int_t dev_pid[8];
    int ndev = 0;
    size_t i;
    long ops = 0, copies = 0, steps = 0, driver = 0;
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev) {
        const char *nm = json_string_value(json_object_get(ev, "name"));
        const char *pn = json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
        if (nm && pn && strcmp(nm, "process_name") == 0 && strncmp(pn, "/device:GPU:", 12) == 0 && ndev < 8)
            dev_pid[ndev++] = json_integer_value(json_object_get(ev, "pid"));
    }
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *nm = json_string_value(json_object_get(ev, "name"));
        json_t *args = json_object_get(ev, "args");
        if (!ph || strcmp(ph, "X") != 0 || !nm) continue;
        int on_dev = 0;
        for (int k = 0; k < ndev; k++) on_dev |= json_integer_value(json_object_get(ev, "pid")) == dev_pid[k];
        if (on_dev) {
            ops++;
            copies += strncmp(nm, "Memcpy", 6) == 0;
        } else if (json_object_get(args, "step_num")) {
            steps++;
        } else if (json_object_get(args, "correlation_id")) {
            driver++;
        }
    }
    json_decref(root);
    CHECK_EQ_INT(ndev, 1);
    CHECK(ops > 100 && steps > 0 && driver > 0);

    struct result r;
    char *name = xasprintf("jax_mlp.json.gz");
    FILE *f = fopen(path, "rb");
    REQUIRE(f != NULL);
    fseek(f, 0, SEEK_END);
    long fsz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *raw = xmalloc((size_t)fsz);
    REQUIRE(fread(raw, 1, (size_t)fsz, f) == (size_t)fsz);
    fclose(f);
    import_bytes(name, raw, (size_t)fsz, &r);
    free(raw);
    free(name);
    free(path);
    REQUIRE(r.rc == 0);
    CHECK_EQ_STR(r.format, "chrome-xla");
    CHECK_Q(r.db, ops, "SELECT count(*) FROM slice s JOIN track t ON t.id=s.track WHERE t.kind=1 AND t.device=0 "
                       "AND s.kind IN (6,7,8)");
    CHECK_Q(r.db, copies, "SELECT count(*) FROM slice s JOIN track t ON t.id=s.track WHERE t.kind=1 AND s.kind=7");
    CHECK_Q(r.db, steps, "SELECT count(*) FROM slice s JOIN str n ON n.id=s.name WHERE s.kind=2 AND n.s GLOB 'train#*'");
    CHECK_Q(r.db, driver, "SELECT count(*) FROM slice s JOIN track t ON t.id=s.track WHERE t.kind=0 AND s.kind=5");
    /* every GPU op's correlation id has its host call */
    CHECK_Q(r.db, 0, "SELECT count(*) FROM slice g JOIN track t ON t.id=g.track WHERE t.kind=1 AND g.corr!=0 AND "
                     "NOT EXISTS(SELECT 1 FROM slice h WHERE h.kind=5 AND h.corr=g.corr)");
    result_close(&r);
}

/* ====================================================================== */
/* repairs and errors                                                     */

static void test_repaired_durations(void)
{
    struct result r;
    import_text("{\"traceEvents\":[\n"
                "{\"ph\":\"X\",\"name\":\"nodur\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
                "{\"ph\":\"X\",\"name\":\"neg\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":-5},\n"
                "{\"ph\":\"X\",\"name\":\"neg2\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":-0.5},\n"
                "{\"ph\":\"X\",\"name\":\"baddur\",\"pid\":1,\"tid\":1,\"ts\":4,\"dur\":\"soon\"},\n"
                "{\"ph\":\"X\",\"name\":\"nots\",\"pid\":1,\"tid\":1,\"dur\":1},\n"
                "{\"ph\":\"X\",\"name\":\"nants\",\"pid\":1,\"tid\":1,\"ts\":NaN,\"dur\":1},\n"
                "{\"name\":\"noph\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
                "{\"ph\":\"b\",\"name\":\"async\",\"pid\":1,\"tid\":1,\"ts\":1,\"id\":1},\n"
                "{\"ph\":\"Z\",\"name\":\"unknown\",\"pid\":1,\"tid\":1,\"ts\":1},\n"
                "[1,2],\n"
                "\"a string\"\n"
                "]}",
                &r);
    REQUIRE(r.rc == 0);
    const char *q = "SELECT s.%s FROM slice s JOIN str n ON n.id=s.name WHERE n.s=%Q";
    CHECK_Q(r.db, 0, q, "dur", "nodur");
    CHECK_Q(r.db, 0, q, "dur", "neg");
    CHECK_Q(r.db, 0, q, "dur", "neg2");
    CHECK_EQ_INT(r.st.slices, 3);
    CHECK(notes(r.db, "repaired", "complete event (X) without dur%") == 1);
    CHECK(notes(r.db, "repaired", "negative dur%") == 2);
    CHECK(notes(r.db, "dropped", "X event whose dur is not a finite number") == 1);
    CHECK(notes(r.db, "dropped", "event without ts") == 1);
    CHECK(notes(r.db, "dropped", "event whose ts is not a finite number") == 1);
    CHECK(notes(r.db, "dropped", "event without a one-letter ph%") == 1);
    CHECK(notes(r.db, "dropped", "async events%") == 1);
    CHECK(notes(r.db, "dropped", "events of an unknown phase") == 1);
    CHECK(notes(r.db, "dropped", "traceEvents element that is not an object") == 2);
    CHECK_QT(r.db, "nots", "SELECT example FROM note WHERE reason='event without ts'");
    CHECK_EQ_INT(r.st.events, 11);
    CHECK_EQ_INT(r.st.repaired, 3);
    CHECK_IDENTITY(r.st);
    CHECK_Q(r.db, 3, "SELECT json_extract(stats,'$.repaired') FROM rank");
    CHECK_Q(r.db, 11, "SELECT json_extract(stats,'$.events') FROM rank");
    result_close(&r);
}

static void test_truncated(void)
{
    const char *ev = "{\"ph\":\"X\",\"name\":\"e\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1}";
    char *full = xmalloc(20 * 80 + 64);
    size_t k = (size_t)sprintf(full, "{\"schemaVersion\":1,\"traceEvents\":[\n");
    size_t ends[20];
    for (int i = 0; i < 20; i++) {
        k += (size_t)sprintf(full + k, i ? ",\n" : "");
        k += (size_t)sprintf(full + k, ev, i * 10);
        ends[i] = k;
    }
    /* cut after 7 complete events: mid-event, after the comma, at the end
     * of an event, mid-string */
    size_t cuts[] = { ends[6] + 20, ends[6] + 1, ends[6], ends[6] + 9 };
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        struct result r;
        import_bytes("cut.json", full, cuts[c], &r);
        REQUIRE(r.rc == 0);
        CHECK_EQ_INT(r.st.events, 7);
        CHECK_Q(r.db, 7, "SELECT count(*) FROM slice");
        CHECK(notes(r.db, "repaired", "the file is truncated%") == 1);
        CHECK_Q(r.db, 1, "SELECT example LIKE 'cut at byte %%' FROM note WHERE reason LIKE 'the file is truncated%%'");
        result_close(&r);
    }
    /* the same cut inside a gzip member */
    char *path = xasprintf("%s/cut-src.gz", tmpdir);
    gzFile g = gzopen(path, "wb");
    gzwrite(g, full, (unsigned)k);
    gzclose(g);
    FILE *f = fopen(path, "rb");
    char gz[8192];
    size_t gn = fread(gz, 1, sizeof gz, f);
    fclose(f);
    struct result r;
    import_bytes("cut.json.gz", gz, gn - 12, &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID); /* a cut gzip is corrupt: the reader cannot tell what is missing */
    CHECK(strstr(r.e.msg, "truncated") != NULL);
    CHECK(strstr(r.e.msg, "cut.json.gz") != NULL);
    /* cut before the first event */
    import_bytes("cut0.json", full, 30, &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "truncated") != NULL);
    free(path);
    free(full);
}

static void test_garbage_after(void)
{
    static const char *cases[] = {
        "[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]\n trailing junk {",
        "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}}]garbage",
    };
    for (int i = 0; i < 2; i++) {
        struct result r;
        import_text(cases[i], &r);
        REQUIRE(r.rc == 0);
        CHECK_Q(r.db, 1, "SELECT count(*) FROM slice");
        CHECK(notes(r.db, "repaired", "bytes after the end of the JSON document were ignored") == 1);
        result_close(&r);
    }
}

static void test_malformed(void)
{
    static const struct {
        const char *json, *msg;
    } cases[] = {
        { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1},{\"ph\":\"X\" \"ts\":2},{\"ph\":\"X\",\"ts\":3}]}", "event #2" },
        { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1} {\"ph\":\"X\",\"ts\":2}]}", "expected ',' or ']'" },
        { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1}] \"x\":1}", "expected ',' or '}'" },
        { "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":tru}]}", "event #1" },
        { "{\"traceEvents\":{\"ph\":\"X\"}}", "'[' starting traceEvents" },
        { "[{\"ph\":\"X\",\"ts\":1},,{}]", "invalid JSON" },
        { "{\"a\":1,\"traceEvents\":[], 5:1}", "member name" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct result r;
        import_text(cases[i].json, &r);
        CHECK_EQ_INT(r.rc, ERR_INVALID);
        if (!strstr(r.e.msg, cases[i].msg)) fprintf(stderr, "case %zu: %s\n", i, r.e.msg);
        CHECK(strstr(r.e.msg, cases[i].msg) != NULL);
        CHECK(strncmp(r.e.msg, "trace.json: ", 12) == 0); /* the file is named */
        result_close(&r);
    }
}

static void test_no_trace_events(void)
{
    struct result r;
    import_text("{\"schemaVersion\":1,\"deviceProperties\":[],\"traceName\":\"x\"}", &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "without \"traceEvents\"") != NULL);
    CHECK(strstr(r.e.msg, "not a Chrome/Kineto trace") != NULL);
    result_close(&r);
    /* an empty events list is a valid, empty trace */
    import_text("{\"traceEvents\":[]}", &r);
    REQUIRE(r.rc == 0);
    CHECK_EQ_INT(r.st.events, 0);
    CHECK(notes(r.db, "info", "the trace has no events") == 1);
    result_close(&r);
}

static void test_refused_formats(void)
{
    static const struct {
        const char *name;
        const char *data;
        size_t n;
        const char *msg;
    } cases[] = {
        { "et.json", "{\"schema\": \"1.0.2-chakra.0.0.4\", \"pid\": 1, \"time\": \"x\", \"nodes\": [{\"id\": 1}]}", 0,
          "PyTorch execution trace" },
        { "memory_timeline.raw", "[[1700000000000000000, 0, 512, 3],\n [1700000000000000001, 2, -512, 3]]", 0,
          "raw memory timeline" },
        { "908_results.json", "{\n \"rocprofiler-sdk-tool\": [{\"metadata\": {\"pid\": 1}}]}", 0,
          "rocprofiler-sdk JSON" },
        { "tw003.xplane.pb", "\x0a\x8a\x01\x0a\x09/host:CPU\x12\x05\x08\x01\x12\x01x\x1a\x10/device:GPU:0 data", 40,
          "XPlane protobuf" },
        { "notes.txt", "hello, this is not a trace", 0, "not a trace traceboard can read" },
        { "blob.bin", "\x00\x01\x02\x03\x04\x05\x06\x07\x08", 9, "not a trace traceboard can read" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct result r;
        size_t n = cases[i].n ? cases[i].n : strlen(cases[i].data);
        import_bytes(cases[i].name, cases[i].data, n, &r);
        CHECK_EQ_INT(r.rc, ERR_UNSUPPORTED);
        if (!strstr(r.e.msg, cases[i].msg)) fprintf(stderr, "case %s: %s\n", cases[i].name, r.e.msg);
        CHECK(strstr(r.e.msg, cases[i].msg) != NULL);
        CHECK(strstr(r.e.msg, cases[i].name) != NULL);
        result_close(&r);
    }
}

static void test_empty_file(void)
{
    struct result r;
    import_bytes("empty.json", "", 0, &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "empty.json: the file is empty") != NULL);
    result_close(&r);
    import_bytes("blank.json", " \n\t\n", 4, &r);
    CHECK_EQ_INT(r.rc, ERR_UNSUPPORTED);
    result_close(&r);
    /* a gzip of nothing */
    unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03, 0x03, 0x00, 0, 0, 0, 0, 0, 0, 0, 0 };
    import_bytes("empty.json.gz", gz, sizeof gz, &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "empty once decompressed") != NULL);
    result_close(&r);
}

/* The end of the document after the events: header fields that are not
 * strict JSON, cuts inside or between header members, a trailing comma. */
static void test_header_edges(void)
{
    const char *ev = "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}";
    struct result r;
    char *json = xasprintf("{\"traceEvents\":[%s],\"bad\":NaN,\"ok\":{\"x\":[1,2]},\"big\":9007199254740993}", ev);
    import_text(json, &r);
    free(json);
    REQUIRE(r.rc == 0);
    CHECK(notes(r.db, "repaired", "header field that is not strict JSON: ignored") == 1);
    CHECK_QT(r.db, "bad", "SELECT example FROM note WHERE reason LIKE 'header field%'");
    CHECK_Q(r.db, 2, "SELECT json_extract(header,'$.ok.x[1]') FROM rank");
    CHECK_Q(r.db, 9007199254740993LL, "SELECT json_extract(header,'$.big') FROM rank");
    CHECK_Q(r.db, 0, "SELECT count(*) FROM rank WHERE json_extract(header,'$.bad') IS NOT NULL");
    result_close(&r);

    /* cut after the events array: inside a header value, after a member,
     * right after ']', inside a member name, after a member name */
    static const char *tails[] = { ",\"deviceProperties\":[{\"id\":0,", ",\"schemaVersion\":1,", "", ",\"trace",
                                   ",\"traceName\"", ",\"traceName\":" };
    for (int i = 0; i < 6; i++) {
        json = xasprintf("{\"traceEvents\":[%s]%s", ev, tails[i]);
        import_text(json, &r);
        free(json);
        REQUIRE(r.rc == 0);
        CHECK_EQ_INT(r.st.events, 1);
        CHECK(notes(r.db, "repaired", "the file is truncated%") == 1);
        result_close(&r);
    }

    json = xasprintf("{\"traceEvents\":[%s],}", ev); /* a trailing comma is forgiven */
    import_text(json, &r);
    free(json);
    CHECK_EQ_INT(r.rc, 0);
    CHECK(r.rc != 0 || notes(r.db, "%", "%") == 0);
    result_close(&r);

    import_text("{}", &r);
    CHECK_EQ_INT(r.rc, ERR_INVALID);
    CHECK(strstr(r.e.msg, "without \"traceEvents\"") != NULL);
    result_close(&r);
}

/* Progress reports: now and then while parsing, and once at the end with
 * every event and every raw byte. */
struct progress_log {
    int calls, backwards;
    uint64_t raw, events;
};

static void on_progress(void *arg, uint64_t raw_done, uint64_t events)
{
    struct progress_log *p = arg;
    if (raw_done < p->raw || events < p->events) p->backwards++;
    p->calls++;
    p->raw = raw_done;
    p->events = events;
}

static void test_progress(void)
{
    size_t n = 40000, k = 0;
    char *json = xmalloc(n * 80 + 64);
    k += (size_t)sprintf(json, "{\"traceEvents\":[");
    for (size_t i = 0; i < n; i++)
        k += (size_t)sprintf(json + k, "%s{\"ph\":\"X\",\"name\":\"e\",\"pid\":1,\"tid\":1,\"ts\":%zu,\"dur\":1}",
                             i ? "," : "", i * 2);
    k += (size_t)sprintf(json + k, "]}");
    char *path = write_file("progress.json", json, k);
    char *db = xasprintf("%s/%d.db", tmpdir, nfiles++);
    struct rundb_writer *w;
    struct err e;
    struct instream_limits lim = { 0, 0 };
    struct progress_log log = { 0, 0, 0, 0 };
    struct import_ctx ctx = { on_progress, &log, 0, NULL };
    struct tb_rank_stats st;
    REQUIRE(rundb_create(db, 0, tmpdir, &w, &e) == 0);
    CHECK_EQ_INT(rundb_begin_rank(w, 0, "progress.json", (int64_t)k, &e), 0);
    CHECK_EQ_INT(importer_import_file(path, "progress.json", &lim, w, &ctx, &e), 0);
    CHECK_EQ_INT(rundb_finish_rank(w, &st, &e), 0);
    CHECK_EQ_INT(rundb_close_writer(w, &e), 0);
    CHECK(log.calls >= 3); /* every 16384 events, then at the end */
    CHECK_EQ_INT(log.backwards, 0);
    CHECK_EQ_INT(log.events, n);
    CHECK_EQ_INT(log.raw, k);
    CHECK_EQ_INT(st.slices, n);
    free(json);
    free(path);
    free(db);
}

/* A BOM before the JSON is accepted (Windows editors write one). */
static void test_bom(void)
{
    struct result r;
    import_text("\xef\xbb\xbf[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]", &r);
    REQUIRE(r.rc == 0);
    CHECK_Q(r.db, 1, "SELECT count(*) FROM slice");
    result_close(&r);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_bare_array);
    RUN(test_object_header_after_events);
    RUN(test_gzip_input);
    RUN(test_pid_tid_spellings);
    RUN(test_timestamps);
    RUN(test_extreme_times);
    RUN(test_out_of_order_nesting);
    RUN(test_deep_nesting);
    RUN(test_zero_length);
    RUN(test_names);
    RUN(test_flows);
    RUN(test_memory_events);
    RUN(test_begin_end);
    RUN(test_counters);
    RUN(test_metadata);
    RUN(test_jax_gpu_lanes);
    RUN(test_jax_tpu_lanes);
    RUN(test_tf_lanes);
    RUN(test_jax_mlp_counts);
    RUN(test_repaired_durations);
    RUN(test_truncated);
    RUN(test_garbage_after);
    RUN(test_malformed);
    RUN(test_no_trace_events);
    RUN(test_refused_formats);
    RUN(test_empty_file);
    RUN(test_header_edges);
    RUN(test_progress);
    RUN(test_bom);
    struct err e;
    fsutil_rmtree(tmpdir, &e);
    return harness_done("import_chrome");
}

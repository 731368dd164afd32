/* timeline_fixture.h — shared by the timeline*_test.c files: a scratch
 * data folder and catalog (fixture_begin/fixture_end), a trace written as
 * text (out, slice, nest, with a fixed random sequence) and imported
 * through ingest_run into an open run database (import), a query's
 * integer (one), the rows two databases do not share (differ,
 * differ_all), and the chunks of lodpack, clodpack, gpubusypack and
 * taggpack as rows (unpack_lod, unpack_clod, unpack_busy, unpack_tagg). */
#ifndef TB_TIMELINE_FIXTURE_H
#define TB_TIMELINE_FIXTURE_H

#include "base/fsutil.h"
#include "scratch_fixture.h"
#include "store/catalog.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "derive/timeline.h"
#include "derive/timeline_agg.h"
#include "derive/timeline_counters.h"
#include "derive/timeline_lod.h"
#include "derive/timeline_query.h"
#include "ingest/ingest.h"
#include "store/rundb.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <math.h>
#include <unistd.h>

static char root[] = "/tmp/tb_timeline_XXXXXX";
static struct config cfg;
static struct catalog *cat;
static int seq;

/* ---- a growable trace text ---------------------------------------------- */

static char *buf;
static size_t blen, bcap;

static inline void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void out(const char *fmt, ...)
{
    va_list ap;
    char tmp[512];
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (blen + (size_t)n + 1 > bcap) {
        bcap = (blen + (size_t)n + 1) * 2;
        buf = xrealloc(buf, bcap);
    }
    memcpy(buf + blen, tmp, (size_t)n + 1);
    blen += (size_t)n;
}

static uint64_t rng = 88172645463325252ULL;
static inline uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : 0;
}

/* ts/dur in ns, written as µs with three decimals */
static inline void slice(const char *cat_, const char *name, int pid, int tid, int64_t ts, int64_t dur)
{
    out("%s{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%" PRId64 ".%03" PRId64
        ",\"dur\":%" PRId64 ".%03" PRId64 "}",
        blen > 1 ? "," : "", cat_, name, pid, tid, ts / 1000, ts % 1000, dur / 1000, dur % 1000);
}

/* Fills [start, end) of a CPU thread with nested slices down to depth 3:
 * long and short ones, zero-length ones, gaps of at least 1 ns. */
static inline void nest(int depth, int64_t start, int64_t end)
{
    static const char *names[] = { "aten::mm", "aten::add", "<img src=x onerror=alert(1)>", "aten::copy_",
                                   "ProfilerStep#1", "cudaLaunchKernel" };
    int64_t t = start + 1 + (int64_t)rnd(50);
    while (t < end - 2) {
        int64_t room = end - 1 - t, d;
        uint64_t k = rnd(10);
        d = k < 2 ? 0 : k < 7 ? 1 + (int64_t)rnd(200) : 1 + (int64_t)rnd((uint64_t)(room > 1 ? room : 1));
        if (d > room) d = room;
        slice("cpu_op", names[rnd(6)], 1, 1, t, d);
        if (depth < 3 && d > 400) nest(depth + 1, t, t + d);
        t += d + 1 + (int64_t)rnd(k < 5 ? 30 : 3000);
    }
}

/* Imports the trace in buf; returns the open run db. */
static inline sqlite3 *import(void)
{
    struct err e;
    char *path = xasprintf("%s/t%d.pt.trace.json", root, ++seq);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fprintf(f, "{\"schemaVersion\":1,\"traceEvents\":[%s]}", buf + 1);
    fclose(f);
    struct ingest_file file = { path, path, 0 };
    struct ingest_request req = { NULL, &file, 1, NULL };
    char id[CATALOG_ID_LEN + 1];
    sqlite3 *db = NULL;
    if (ingest_run(cat, &cfg, &req, NULL, id, &e) != 0) {
        fprintf(stderr, "import failed: %s\n", e.msg);
    } else {
        char *dbp = xasprintf("%s/runs/%s/run.db", root, id);
        if (rundb_open_ro(dbp, &db, &e) != 0) db = NULL;
        free(dbp);
    }
    free(path);
    return db;
}

/* A trace imported: a CPU thread of nested slices, a second of short ones
 * with a long one, and kernels on a GPU stream; the open run db. */
static inline sqlite3 *import_threads(int kernels)
{
    blen = 0;
    out("[");
    nest(0, 0, 3000000);
    for (int i = 0; i < 3000; i++)
        slice("cpu_op", i % 3 ? "a" : "b", 1, 2, 10 + (int64_t)i * 700, 1 + (int64_t)rnd(600));
    slice("cpu_op", "long", 1, 2, 2200000, 700000);
    for (int i = 0; i < kernels; i++) slice("kernel", "k", 0, 7, 50 + (int64_t)i * 5000, 1000 + (int64_t)rnd(9000));
    return import();
}

/* The integer the query sql answers first; -1 on error. */
static inline int64_t one(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n;
}

/* Rows of table t in main and not in the attached database b, or the
 * reverse (rev); -1 on error. */
static inline int64_t differ(sqlite3 *db, const char *t, int rev)
{
    char sql[256];
    snprintf(sql, sizeof sql, rev ? "SELECT count(*) FROM (SELECT * FROM b.%s EXCEPT SELECT * FROM main.%s)"
                                  : "SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM b.%s)",
             t, t);
    return one(db, sql);
}

/* The rows of the n tables that db and the database at path do not share,
 * both ways; -1 on error. */
static inline int64_t differ_all(sqlite3 *db, const char *path, const char *const *tables, size_t n)
{
    char *att = xasprintf("ATTACH '%s' AS b", path);
    int64_t sum = sqlite3_exec(db, att, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    free(att);
    for (size_t i = 0; i < n && sum >= 0; i++) {
        int64_t x = differ(db, tables[i], 0), y = differ(db, tables[i], 1);
        sum = x < 0 || y < 0 ? -1 : sum + x + y;
    }
    sqlite3_exec(db, "DETACH b", NULL, NULL, NULL);
    return sum;
}

static inline int fixture_begin(void)
{
    return scratch_begin(root, &cfg, &cat);
}

static inline void fixture_end(void)
{
    scratch_end(root, cat);
    free(buf);
}

/* A packed table's rows, unpacked by the readers' decoders into table
 * `table` (columns cols, created replacing one there) of schema, so that
 * checks are written over rows: "temp" shadows the run's packed table for
 * the checks, "main" with the packed table dropped makes the run one stored
 * before it. `select` reads the chunks; chunk() decodes the current one and
 * inserts each row through ins, returning the rows or -1. Returns the rows
 * in all, or -1. */
static inline int64_t unpack(sqlite3 *db, const char *schema, const char *table, const char *cols, int ncol,
                             const char *select, int64_t (*chunk)(sqlite3_stmt *rd, sqlite3_stmt *ins))
{
    sqlite3_stmt *rd = NULL, *ins = NULL;
    char sql[512], marks[64] = "?";
    int64_t n = 0;
    for (int i = 1; i < ncol; i++) strcat(marks, ",?");
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s.%s; CREATE TABLE %s.%s(%s) WITHOUT ROWID", schema, table,
             schema, table, cols);
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) return -1;
    snprintf(sql, sizeof sql, "INSERT INTO %s.%s VALUES(%s)", schema, table, marks);
    if (sqlite3_prepare_v2(db, select, -1, &rd, NULL) != SQLITE_OK || sqlite3_prepare_v2(db, sql, -1, &ins, NULL) != SQLITE_OK)
        n = -1;
    while (n >= 0 && sqlite3_step(rd) == SQLITE_ROW) {
        int64_t got = chunk(rd, ins);
        n = got < 0 ? -1 : n + got;
    }
    sqlite3_finalize(rd);
    sqlite3_finalize(ins);
    return n;
}

/* Inserts the row bound to ins: 0, or -1. */
static inline int unpack_step(sqlite3_stmt *ins)
{
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    return rc == SQLITE_DONE ? 0 : -1;
}

static inline void bind_ints(sqlite3_stmt *ins, const int64_t *v, int n)
{
    for (int i = 0; i < n; i++) sqlite3_bind_int64(ins, i + 1, v[i]);
}

/* rd: track, level, bucket, n, rows. */
static inline int64_t lod_chunk(sqlite3_stmt *rd, sqlite3_stmt *ins)
{
    struct timeline_lod_chunk c;
    struct timeline_lod_row r;
    int64_t n = 0;
    int got, level = sqlite3_column_int(rd, 1);
    timeline_lod_chunk_begin(&c, level, sqlite3_column_int64(rd, 2), sqlite3_column_int64(rd, 3),
                             sqlite3_column_blob(rd, 4), (size_t)sqlite3_column_bytes(rd, 4));
    while ((got = timeline_lod_chunk_next(&c, &r)) == 1) {
        const int64_t v[10] = { sqlite3_column_int64(rd, 0), level, r.bucket, r.depth, r.fid, r.n, r.ts, r.te,
                                r.ldur, r.name };
        bind_ints(ins, v, 10);
        if (unpack_step(ins) < 0) return -1;
        n++;
    }
    return got < 0 ? -1 : n;
}

/* rd: series, level, bucket, n, rows. */
static inline int64_t clod_chunk(sqlite3_stmt *rd, sqlite3_stmt *ins)
{
    struct timeline_clod_chunk c;
    struct timeline_clod_row r;
    int64_t n = 0;
    int got, level = sqlite3_column_int(rd, 1);
    timeline_clod_chunk_begin(&c, level, sqlite3_column_int64(rd, 2), sqlite3_column_int64(rd, 3),
                              sqlite3_column_blob(rd, 4), (size_t)sqlite3_column_bytes(rd, 4));
    while ((got = timeline_clod_chunk_next(&c, &r)) == 1) {
        const int64_t v[5] = { sqlite3_column_int64(rd, 0), level, r.bucket, r.n, r.fts };
        bind_ints(ins, v, 5);
        sqlite3_bind_double(ins, 6, r.min);
        sqlite3_bind_double(ins, 7, r.max);
        sqlite3_bind_double(ins, 8, r.last);
        sqlite3_bind_int64(ins, 9, r.lts);
        if (unpack_step(ins) < 0) return -1;
        n++;
    }
    return got < 0 ? -1 : n;
}

/* rd: rank, dev, ts, n, rows. */
static inline int64_t busy_chunk(sqlite3_stmt *rd, sqlite3_stmt *ins)
{
    struct timeline_busy_chunk c;
    int64_t n = 0, ts, val;
    int got;
    timeline_busy_chunk_begin(&c, sqlite3_column_int64(rd, 2), sqlite3_column_int64(rd, 3),
                              sqlite3_column_blob(rd, 4), (size_t)sqlite3_column_bytes(rd, 4));
    while ((got = timeline_busy_chunk_next(&c, &ts, &val)) == 1) {
        const int64_t v[4] = { sqlite3_column_int64(rd, 0), sqlite3_column_int64(rd, 1), ts, val };
        bind_ints(ins, v, 4);
        if (unpack_step(ins) < 0) return -1;
        n++;
    }
    return got < 0 ? -1 : n;
}

/* rd: track, bucket, n, rows. */
static inline int64_t tagg_chunk(sqlite3_stmt *rd, sqlite3_stmt *ins)
{
    struct timeline_agg_chunk c;
    struct timeline_agg_row r;
    int64_t n = 0;
    int got;
    timeline_agg_chunk_begin(&c, sqlite3_column_int64(rd, 1), sqlite3_column_int64(rd, 2), sqlite3_column_blob(rd, 3),
                             (size_t)sqlite3_column_bytes(rd, 3));
    while ((got = timeline_agg_chunk_next(&c, &r)) == 1) {
        const int64_t v[6] = { sqlite3_column_int64(rd, 0), r.bucket, r.name, r.n, r.total, r.self };
        bind_ints(ins, v, 6);
        if (unpack_step(ins) < 0) return -1;
        n++;
    }
    return got < 0 ? -1 : n;
}

/* The rows of lodpack, clodpack, gpubusypack and taggpack as tables lod,
 * clod, gpubusy and tagg have them in a run stored before the packs. */
static inline int64_t unpack_lod(sqlite3 *db, const char *schema)
{
    return unpack(db, schema, "lod",
                  "track INTEGER, level INTEGER, bucket INTEGER, depth INTEGER, fid INTEGER, n INTEGER, ts INTEGER,"
                  " te INTEGER, ldur INTEGER, name INTEGER, PRIMARY KEY(track, level, bucket, depth, fid)",
                  10, "SELECT track, level, bucket, n, rows FROM main.lodpack ORDER BY 1, 2, 3", lod_chunk);
}

static inline int64_t unpack_clod(sqlite3 *db, const char *schema)
{
    return unpack(db, schema, "clod",
                  "series INTEGER, level INTEGER, bucket INTEGER, n INTEGER, fts INTEGER, min REAL, max REAL,"
                  " last REAL, lts INTEGER, PRIMARY KEY(series, level, bucket)",
                  9, "SELECT series, level, bucket, n, rows FROM main.clodpack ORDER BY 1, 2, 3", clod_chunk);
}

static inline int64_t unpack_busy(sqlite3 *db, const char *schema)
{
    return unpack(db, schema, "gpubusy",
                  "rank INTEGER, dev INTEGER, ts INTEGER, value INTEGER, PRIMARY KEY(rank, dev, ts)", 4,
                  "SELECT rank, dev, ts, n, rows FROM main.gpubusypack ORDER BY 1, 2, 3", busy_chunk);
}

static inline int64_t unpack_tagg(sqlite3 *db, const char *schema)
{
    return unpack(db, schema, "tagg",
                  "track INTEGER, bucket INTEGER, name INTEGER, n INTEGER, total INTEGER, self INTEGER,"
                  " PRIMARY KEY(track, bucket, name)",
                  6, "SELECT track, bucket, n, rows FROM main.taggpack ORDER BY 1, 2", tagg_chunk);
}

#endif

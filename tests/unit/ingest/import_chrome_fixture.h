/* import_chrome_fixture.h — shared by import_chrome_test.c and
 * import_chrome_xla_test.c: traces written to files in a scratch folder
 * and imported with importer_import_file into a fresh run database
 * (import_bytes, import_text), SQL helpers, and the identity checks on a
 * rank's stats. */
#ifndef TB_IMPORT_CHROME_FIXTURE_H
#define TB_IMPORT_CHROME_FIXTURE_H

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

static inline char *write_file(const char *name, const void *d, size_t n)
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
static inline void import_bytes(const char *name, const void *d, size_t n, struct result *r)
{
    char *path = write_file(name, d, n);
    char *db = xasprintf("%s/%d.db", tmpdir, nfiles++);
    struct rundb_writer *w;
    struct instream_limits lim = { 1ull << 30, 200, 0 };
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

static inline void import_text(const char *json, struct result *r)
{
    import_bytes("trace.json", json, strlen(json), r);
}

static inline void result_close(struct result *r)
{
    if (r->db) sqlite3_close(r->db);
    r->db = NULL;
}

/* One integer from a query (printf-style); -999999 when no row or error. */
static inline int64_t q_int(sqlite3 *db, const char *fmt, ...)
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
static inline char *q_text(sqlite3 *db, const char *fmt, ...)
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

static inline void check_q_text(sqlite3 *db, const char *want, const char *sql, int line)
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
static inline int64_t notes(sqlite3 *db, const char *level, const char *like)
{
    return q_int(db, "SELECT coalesce(sum(count),0) FROM note WHERE level=%Q AND reason LIKE %Q", level, like);
}

/* The accounting identity every rank without B/E or counters keeps. */
static inline void check_identity(const struct tb_rank_stats *s, int line)
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

#endif

/* import_nsys_fixture.h — shared by import_nsys_test.c and
 * import_nsys_rows_test.c: a scratch folder, SQLite databases made from
 * SQL text (make_db), an import of one through the importer table into a
 * new, analysed run database (import_path), and query helpers. */
#ifndef TB_IMPORT_NSYS_FIXTURE_H
#define TB_IMPORT_NSYS_FIXTURE_H

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
static inline void import_path(const char *path, const char *name, struct result *r)
{
    char *db = xasprintf("%s/run%d.db", tmpdir, nfiles++);
    struct rundb_writer *w;
    struct instream_limits lim = { 1ull << 30, 200, 0 };
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

static inline void result_free(struct result *r)
{
    sqlite3_close(r->db);
    r->db = NULL;
}

/* One integer from sql (-1 on error or no row). */
static inline long long q1(sqlite3 *db, const char *sql)
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
static inline const char *qs(sqlite3 *db, const char *sql, char *buf, size_t cap)
{
    sqlite3_stmt *st;
    buf[0] = '\0';
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return buf;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(buf, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return buf;
}

static inline int exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) fprintf(stderr, "  exec failed: %s\n", msg ? msg : "?");
    sqlite3_free(msg);
    return rc;
}

/* Creates a database file from SQL. Returns its path (owned by caller). */
static inline char *make_db(const char *sql)
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
static inline long long src_count(sqlite3 *src, const char *table, const char *where)
{
    char sql[256];
    if (q1(src, "SELECT 0") != 0) return -1;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='%s'", table);
    if (q1(src, sql) != 1) return 0;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s%s%s", table, where ? " WHERE " : "", where ? where : "");
    return q1(src, sql);
}

#endif

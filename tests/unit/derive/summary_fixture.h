/* summary_fixture.h — shared by the summary*_test.c files: imports a small
 * crafted trace (its traceEvents body, one "Test GPU") through the whole
 * ingest into a fresh data folder and opens the run database, plus query
 * helpers and the X/CPU/GPU event macros. fixture_begin() makes the folder
 * and catalog, fixture_end() removes them. */
#ifndef TB_SUMMARY_FIXTURE_H
#define TB_SUMMARY_FIXTURE_H

#include "base/fsutil.h"
#include "scratch_fixture.h"
#include "derive/summary.h"
#include "derive/summary_report.h"
#include "store/catalog.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "ingest/ingest.h"
#include "store/rundb.h"

#include <math.h>
#include <stdarg.h>
#include <unistd.h>

static char root[] = "/tmp/tb_analysis_XXXXXX";
static struct config cfg;
static struct catalog *cat;
static int seq;

/* Imports a trace given as its traceEvents body; returns the open run db. */
static inline sqlite3 *import(const char *events)
{
    struct err e;
    char *path = xasprintf("%s/t%d.pt.trace.json", root, ++seq);
    char *text = xasprintf("{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"Test GPU\","
                           "\"totalGlobalMem\":1000000,\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}],"
                           "\"traceEvents\":[%s]}",
                           events);
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    free(text);
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

/* One integer from a query with optional text/int parameters ("%s"/"%d" free). */
static inline long long q1(sqlite3 *db, const char *sql, ...)
{
    sqlite3_stmt *st;
    long long v = -999999;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bad sql %s: %s\n", sql, sqlite3_errmsg(db));
        return v;
    }
    va_list ap;
    va_start(ap, sql);
    for (int i = 1; i <= sqlite3_bind_parameter_count(st); i++) sqlite3_bind_text(st, i, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
    va_end(ap);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static inline double qd(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    double v = NAN;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return v;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) v = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    return v;
}

#define X(cat, name, tid, ts, dur, args)                                                                \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":" tid ",\"tid\":" tid ",\"ts\":" #ts \
    ",\"dur\":" #dur ",\"args\":{" args "}}"
#define CPU(cat, name, ts, dur, args) X(cat, name, "1", ts, dur, args)
#define GPU(cat, name, ts, dur, args)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts            \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7," args "}}"

static inline int fixture_begin(void)
{
    return scratch_begin(root, &cfg, &cat);
}

static inline void fixture_end(void)
{
    scratch_end(root, cat);
}

#endif

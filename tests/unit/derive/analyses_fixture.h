/*
 * analyses_fixture.h — shared by the analyses_*_test.c files (header only):
 * a crafted trace (the event macros of rules_fixture.h, times in µs) is
 * imported through the real pipeline and the stored analyses read back.
 *
 *   fixture_init();
 *   char *db;
 *   json_t *doc = fixture_analyses(DEV_H100, CPU(...) "," GPU(...), &db);
 *   json_t *idle = json_object_get(doc, "idle");
 *   json_t *segs = fixture_segments(db, 0); // step 0's critical path
 *   ... fixture_query_int(db, "SELECT count(*) FROM critseg") ...
 *   json_decref(doc); free(db);
 */
#ifndef TB_ANALYSES_FIXTURE_H
#define TB_ANALYSES_FIXTURE_H

#include "derive/analyses.h"
#include "rules_fixture.h"

/* The analyses document of rank 0 of a one-file run (owned by caller), or
 * NULL on failure. dbpath (may be NULL) receives the run.db path (owned). */
static inline json_t *fixture_analyses(const char *devices, const char *events, char **dbpath)
{
    struct err e;
    json_t *all = NULL, *doc = NULL;
    char *dbp = fixture_import(devices, "", &events, 1);
    sqlite3 *db;
    if (dbp && rundb_open_ro(dbp, &db, &e) == 0) {
        if (analyses_read(db, 0, &all, &e) != 0) fprintf(stderr, "analyses: %s\n", e.msg);
        sqlite3_close(db);
    }
    if (all) doc = json_incref(json_object_get(all, "0"));
    json_decref(all);
    if (dbpath) *dbpath = dbp;
    else free(dbp);
    return doc;
}

/* The run.db path of a one-file run whose analyses were stored (owned by
 * caller), NULL on failure: for tests that read its tables. */
static inline char *fixture_analyses_db(const char *devices, const char *events)
{
    char *db = NULL;
    json_t *doc = fixture_analyses(devices, events, &db);
    if (!doc) {
        free(db);
        return NULL;
    }
    json_decref(doc);
    return db;
}

/* The first column of the first row of sql on the run db (-1 on failure). */
static inline int64_t fixture_query_int(const char *dbpath, const char *sql)
{
    struct err e;
    sqlite3 *db;
    sqlite3_stmt *st;
    int64_t v = -1;
    if (rundb_open_ro(dbpath, &db, &e) != 0) return -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

/* The critical-path segments of rank 0's step (< 0: every step) as GET
 * /critpath gives them, [[ts, dur, cat, track, slice], ...] in time order
 * (owned by caller), NULL on failure. */
static inline json_t *fixture_segments(const char *dbpath, int step)
{
    struct err e;
    sqlite3 *db;
    json_t *out = NULL, *segs = NULL;
    if (rundb_open_ro(dbpath, &db, &e) != 0) return NULL;
    if (analyses_critpath(db, 0, step, INT64_MIN, INT64_MAX, &out, &e) == 0)
        segs = json_incref(json_object_get(out, "segments"));
    else
        fprintf(stderr, "critpath: %s\n", e.msg);
    json_decref(out);
    sqlite3_close(db);
    return segs;
}

/* A number at a path of nested object keys ("idle", "totals", "host_wait_ns",
 * NULL), as a double; NAN when absent. */
static inline double fixture_at(json_t *doc, ...)
{
    va_list ap;
    va_start(ap, doc);
    const char *k;
    json_t *v = doc;
    while ((k = va_arg(ap, const char *)) != NULL) v = json_object_get(v, k);
    va_end(ap);
    return json_is_number(v) ? json_number_value(v) : (0.0 / 0.0);
}

#endif

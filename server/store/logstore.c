/* logstore.c — job log lines in DATA/logs.db (see include/store/logstore.h). */
#include "store/logstore.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/xmalloc.h"
#include "store/rundb.h"

struct logstore {
    sqlite3 *db;
    pthread_mutex_t mu;
    int read_only;
};

/* run: a run's line; project/job: a live line (run NULL). */
static const char schema[] =
    "CREATE TABLE IF NOT EXISTS line(id INTEGER PRIMARY KEY, run TEXT, project TEXT, job TEXT, rank INTEGER,"
    " ts_ns INTEGER NOT NULL, text TEXT NOT NULL, fields TEXT);"
    "CREATE INDEX IF NOT EXISTS line_run ON line(run, ts_ns) WHERE run IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS line_live ON line(project, job, ts_ns) WHERE project IS NOT NULL;"
    "CREATE INDEX IF NOT EXISTS line_live_id ON line(project, id) WHERE project IS NOT NULL;";

static int fail(struct logstore *ls, struct err *e, const char *what)
{
    int rc = sqlite3_errcode(ls->db) & 0xff;
    return err_set(e, rc == SQLITE_FULL ? ERR_NOSPACE : ERR_DB, "logs database (%s): %s", what,
                   sqlite3_errmsg(ls->db));
}

int logstore_open(const char *data_dir, int read_only, struct logstore **out, struct err *e)
{
    struct logstore *ls = xcalloc(1, sizeof *ls);
    char *path = xasprintf("%s/logs.db", data_dir), *msg = NULL;
    struct stat sb;
    int rc;
    pthread_mutex_init(&ls->mu, NULL);
    ls->read_only = read_only;
    if (!read_only)
        rc = sqlite3_open_v2(path, &ls->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
    else if (stat(path, &sb) == 0 && sb.st_size > 0) {
        /* a WAL file in a folder that refuses writes: read as a snapshot */
        if (rundb_open_snapshot(path, "SELECT count(*) FROM line", &ls->db, NULL, e) < 0) {
            free(path);
            logstore_close(ls);
            return err_prefix(e, "logs database");
        }
        *out = ls;
        free(path);
        return 0;
    } else
        rc = sqlite3_open_v2(":memory:", &ls->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(ls->db, 5000);
        sqlite3_extended_result_codes(ls->db, 0);
        if (!read_only)
            rc = sqlite3_exec(ls->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", NULL, NULL, &msg);
        /* a read-only logs.db is read as stored; only the empty one is created */
        if (rc == SQLITE_OK && (!read_only || sqlite3_db_readonly(ls->db, "main") == 0))
            rc = sqlite3_exec(ls->db, schema, NULL, NULL, &msg);
    }
    if (rc != SQLITE_OK) {
        err_set(e, ERR_DB, "cannot open %s: %s", path, msg ? msg : ls->db ? sqlite3_errmsg(ls->db) : "out of memory");
        sqlite3_free(msg);
        free(path);
        logstore_close(ls);
        return e->code;
    }
    free(path);
    *out = ls;
    return 0;
}

void logstore_close(struct logstore *ls)
{
    if (!ls) return;
    sqlite3_close(ls->db);
    pthread_mutex_destroy(&ls->mu);
    free(ls);
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else sqlite3_bind_null(st, i);
}

int logstore_add(struct logstore *ls, const char *run, const char *project, const char *job,
                 const struct logstore_line *v, size_t n, int64_t *last_id, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (ls->read_only) return err_set(e, ERR_READ_ONLY, "the server is read-only: log lines cannot be stored");
    pthread_mutex_lock(&ls->mu);
    if (sqlite3_exec(ls->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(ls->db,
                           "INSERT INTO line(run, project, job, rank, ts_ns, text, fields) VALUES(?,?,?,?,?,?,?)", -1,
                           &st, NULL) != SQLITE_OK) {
        rc = fail(ls, e, "insert");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        bind_text_or_null(st, 1, run);
        bind_text_or_null(st, 2, project);
        bind_text_or_null(st, 3, project ? (v[i].job ? v[i].job : job) : NULL);
        if (v[i].rank >= 0) sqlite3_bind_int(st, 4, v[i].rank);
        else sqlite3_bind_null(st, 4);
        sqlite3_bind_int64(st, 5, v[i].ts_ns);
        sqlite3_bind_text(st, 6, v[i].text, -1, SQLITE_STATIC);
        bind_text_or_null(st, 7, v[i].fields);
        if (sqlite3_step(st) != SQLITE_DONE) {
            rc = fail(ls, e, "insert");
            goto out;
        }
        sqlite3_reset(st);
    }
    if (last_id) *last_id = sqlite3_last_insert_rowid(ls->db);
    if (sqlite3_exec(ls->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) rc = fail(ls, e, "commit");
out:
    sqlite3_finalize(st);
    if (rc) sqlite3_exec(ls->db, "ROLLBACK", NULL, NULL, NULL);
    pthread_mutex_unlock(&ls->mu);
    return rc;
}

/* Locks ls and prepares sql; on failure unlocks and returns the error. */
static int lock_prepare(struct logstore *ls, const char *sql, sqlite3_stmt **st, struct err *e)
{
    pthread_mutex_lock(&ls->mu);
    if (sqlite3_prepare_v2(ls->db, sql, -1, st, NULL) == SQLITE_OK) return 0;
    int rc = fail(ls, e, "prepare");
    pthread_mutex_unlock(&ls->mu);
    return rc;
}

/* Steps st to the end, a row per call of fn. */
static int walk(struct logstore *ls, sqlite3_stmt *st, logstore_row_fn fn, void *arg, struct err *e)
{
    int rc, stop = 0;
    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = fn(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                  sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2),
                  (const char *)sqlite3_column_text(st, 3), (const char *)sqlite3_column_text(st, 4),
                  (const char *)sqlite3_column_text(st, 5));
    if (stop) return stop;
    return rc == SQLITE_DONE ? 0 : fail(ls, e, "read");
}

int logstore_query(struct logstore *ls, const struct logstore_query *q, logstore_row_fn fn, void *arg,
                   struct err *e)
{
    sqlite3_stmt *st;
    /* Two index walks in (ts, id) order merged (UNION ALL): a page of a long
     * log reads its rows only, where one WHERE with OR sorted every match. */
#define LINE_FILTER                                                                                 \
    " AND (:rank < 0 OR rank = :rank OR rank IS NULL) AND ts_ns BETWEEN :start AND :end"            \
    " AND (:q IS NULL OR instr(lower(text), lower(:q)) > 0) AND (ts_ns, id) > (:ats, :aid)"
    int rc = lock_prepare(ls,
                          "SELECT id, ts_ns, rank, text, fields, job FROM line WHERE run = :run" LINE_FILTER
                          " UNION ALL SELECT id, ts_ns, rank, text, fields, job FROM line"
                          " WHERE project = :project AND job = :job" LINE_FILTER " ORDER BY 2, 1 LIMIT :limit",
                          &st, e);
#undef LINE_FILTER
    if (rc) return rc;
    bind_text_or_null(st, sqlite3_bind_parameter_index(st, ":run"), q->run);
    bind_text_or_null(st, sqlite3_bind_parameter_index(st, ":project"), q->project);
    bind_text_or_null(st, sqlite3_bind_parameter_index(st, ":job"), q->job);
    sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":rank"), q->rank);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":start"), q->start_ns);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":end"), q->end_ns);
    bind_text_or_null(st, sqlite3_bind_parameter_index(st, ":q"), q->q && q->q[0] ? q->q : NULL);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":ats"), q->after_id < 0 ? INT64_MIN : q->after_ts);
    sqlite3_bind_int64(st, sqlite3_bind_parameter_index(st, ":aid"), q->after_id);
    sqlite3_bind_int(st, sqlite3_bind_parameter_index(st, ":limit"), q->limit);
    rc = walk(ls, st, fn, arg, e);
    sqlite3_finalize(st);
    pthread_mutex_unlock(&ls->mu);
    return rc;
}

int logstore_live_after(struct logstore *ls, const char *project, const char *job, int64_t after_id, int limit,
                        logstore_row_fn fn, void *arg, struct err *e)
{
    sqlite3_stmt *st;
    int rc = lock_prepare(ls,
                          "SELECT id, ts_ns, rank, text, fields, job FROM line"
                          " WHERE project = ?1 AND id > ?2 AND (?3 IS NULL OR job = ?3) ORDER BY id LIMIT ?4",
                          &st, e);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, after_id);
    bind_text_or_null(st, 3, job);
    sqlite3_bind_int(st, 4, limit);
    rc = walk(ls, st, fn, arg, e);
    sqlite3_finalize(st);
    pthread_mutex_unlock(&ls->mu);
    return rc;
}

int logstore_live_cursor(struct logstore *ls, const char *project, const char *job, int backlog, int64_t *out,
                         struct err *e)
{
    sqlite3_stmt *st;
    *out = 0;
    if (backlog <= 0) backlog = 0;
    int rc = lock_prepare(ls,
                          backlog ? "SELECT id - 1 FROM line WHERE project = ?1 AND (?2 IS NULL OR job = ?2)"
                                    " ORDER BY id DESC LIMIT 1 OFFSET ?3"
                                  : "SELECT max(id) FROM line WHERE project = ?1 AND (?2 IS NULL OR job = ?2)"
                                    " AND ?3 = 0",
                          &st, e);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
    bind_text_or_null(st, 2, job);
    sqlite3_bind_int(st, 3, backlog ? backlog - 1 : 0);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW) *out = sqlite3_column_int64(st, 0);
    else if (s != SQLITE_DONE) rc = fail(ls, e, "live");
    sqlite3_finalize(st);
    pthread_mutex_unlock(&ls->mu);
    return rc;
}

int logstore_delete_run(struct logstore *ls, const char *run, struct err *e)
{
    sqlite3_stmt *st;
    if (ls->read_only) return err_set(e, ERR_READ_ONLY, "the server is read-only");
    int rc = lock_prepare(ls, "DELETE FROM line WHERE run = ?", &st, e);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, run, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = fail(ls, e, "delete");
    sqlite3_finalize(st);
    pthread_mutex_unlock(&ls->mu);
    return rc;
}

#include "store/rundb_stage.h"

#include <string.h>

#include "store/rundb.h"

int rundb_stage_begin(sqlite3 *db, const char *const *names, int n, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (sqlite3_exec(db,
                     "BEGIN; CREATE TABLE IF NOT EXISTS derive_stage(pos INTEGER PRIMARY KEY, name TEXT NOT NULL"
                     " UNIQUE, state TEXT NOT NULL, took REAL); DELETE FROM derive_stage",
                     NULL, NULL, NULL) != SQLITE_OK) {
        rc = rundb_db_error(db, e, "run database (stages)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if (rundb_prepare(db, "INSERT INTO derive_stage(pos, name, state) VALUES(?, ?, 'pending')", &st, e) < 0)
        rc = e->code;
    for (int i = 0; rc == 0 && i < n; i++) {
        sqlite3_bind_int(st, 1, i);
        sqlite3_bind_text(st, 2, names[i], -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) rc = rundb_db_error(db, e, "run database (stages)");
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "run database (stages)");
    if (rc) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int rundb_stage_mark(sqlite3 *db, const char *name, const char *state, double took, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (rundb_prepare(db, "UPDATE derive_stage SET state = ?, took = ? WHERE name = ?", &st, e) < 0) return e->code;
    sqlite3_bind_text(st, 1, state, -1, SQLITE_STATIC);
    if (strcmp(state, "done") == 0) sqlite3_bind_double(st, 2, took);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = rundb_db_error(db, e, "run database (stages)");
    else if (sqlite3_changes(db) == 0) rc = err_set(e, ERR_NOT_FOUND, "no derived stage '%s'", name);
    sqlite3_finalize(st);
    return rc;
}

/* 1 when the run has the table, 0 when not, or an error. */
static int has_table(sqlite3 *db, struct err *e)
{
    sqlite3_stmt *st = NULL;
    if (rundb_prepare(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'derive_stage'", &st,
                      e) < 0)
        return e->code;
    int rc = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) > 0 : rundb_db_error(db, e, "run database");
    sqlite3_finalize(st);
    return rc;
}

/* One statement, so the counts and the state are of the same commit. */
static const char check_sql[] =
    "SELECT (SELECT state FROM derive_stage WHERE name = ?1),"
    " (SELECT count(*) FROM derive_stage WHERE state = 'done'), (SELECT count(*) FROM derive_stage),"
    " (SELECT group_concat(name, ', ') FROM derive_stage WHERE state = 'running')";

/* check_sql's row: 0 when stage name is done, else ERR_COMPUTING. */
static int check_answer(sqlite3_stmt *st, const char *name, struct err *e)
{
    const char *state = (const char *)sqlite3_column_text(st, 0);
    const char *now = (const char *)sqlite3_column_text(st, 3);
    /* a stage the run never listed is not one it will compute */
    if (!state || strcmp(state, "done") == 0) return 0;
    return err_set(e, ERR_COMPUTING, "computing… (waiting for the %s stage: %d of %d stages done%s%s)", name,
                   sqlite3_column_int(st, 1), sqlite3_column_int(st, 2), now ? "; running: " : "", now ? now : "");
}

int rundb_stage_check(sqlite3 *db, const char *name, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = has_table(db, e);
    if (rc <= 0 || rundb_prepare(db, check_sql, &st, e) < 0) return rc <= 0 ? rc : e->code;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    rc = sqlite3_step(st) == SQLITE_ROW ? check_answer(st, name, e) : rundb_db_error(db, e, "run database (stages)");
    sqlite3_finalize(st);
    return rc;
}

int rundb_stage_json(sqlite3 *db, json_t **out, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = has_table(db, e);
    *out = NULL;
    if (rc < 0) return rc;
    if (rc == 0) {
        *out = json_null();
        return 0;
    }
    if (rundb_prepare(db, "SELECT name, state, took FROM derive_stage ORDER BY pos", &st, e) < 0) return e->code;
    *out = json_array();
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_pack("{s:s,s:s}", "name", (const char *)sqlite3_column_text(st, 0), "state",
                              (const char *)sqlite3_column_text(st, 1));
        json_object_set_new(o, "seconds",
                            sqlite3_column_type(st, 2) == SQLITE_NULL ? json_null()
                                                                      : json_real(sqlite3_column_double(st, 2)));
        json_array_append_new(*out, o);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(*out);
        *out = NULL;
        return rundb_db_error(db, e, "run database (stages)");
    }
    return 0;
}

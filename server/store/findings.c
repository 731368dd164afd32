#include "store/findings.h"

#include <string.h>

#include "store/rundb.h"
#include "store/scan.h"

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS finding(rank INTEGER, ord INTEGER, id TEXT, severity TEXT,"
    " saving_ns INTEGER, body TEXT);";

int findings_ensure(sqlite3 *db, struct err *e)
{
    if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) return rundb_db_error(db, e, "rules (schema)");
    return 0;
}

static int insert_all(sqlite3 *db, const struct findings_row *rows, size_t n, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0;
    if (sqlite3_exec(db, "DELETE FROM finding", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO finding(rank, ord, id, severity, saving_ns, body) VALUES(?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "rules (store)");
    for (size_t i = 0; i < n && !rc; i++) {
        const struct findings_row *f = &rows[i];
        sqlite3_reset(st);
        if (f->rank >= 0) sqlite3_bind_int(st, 1, f->rank);
        else sqlite3_bind_null(st, 1);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
        sqlite3_bind_text(st, 3, f->id, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, f->severity, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, f->saving_ns);
        sqlite3_bind_text(st, 6, f->body, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) rc = rundb_db_error(db, e, "rules (store)");
    }
    sqlite3_finalize(st);
    return rc;
}

int findings_replace(sqlite3 *db, const struct findings_row *rows, size_t n, struct err *e)
{
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return rundb_db_error(db, e, "rules (begin)");
    int rc = insert_all(db, rows, n, e);
    if (sqlite3_exec(db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !rc)
        rc = rundb_db_error(db, e, "rules (commit)");
    return rc;
}

int findings_adopt(sqlite3 *db, struct err *e)
{
    err_clear(e);
    if (sqlite3_exec(db, "BEGIN; DROP TABLE IF EXISTS main.finding", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_exec(db, "INSERT INTO main.finding SELECT * FROM " RUNDB_ASIDE ".finding; COMMIT", NULL, NULL, NULL) !=
            SQLITE_OK) {
        rundb_db_error(db, e, "rules (adopt)");
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    }
    return e->code;
}

int findings_read(sqlite3 *db, int rank, json_t **out, struct err *e)
{
    sqlite3_stmt *st = NULL;
    *out = NULL;
    if (sqlite3_prepare_v2(db, "SELECT body FROM finding WHERE ? < 0 OR rank IS NULL OR rank = ? ORDER BY ord", -1,
                           &st, NULL) != SQLITE_OK) {
        if (strstr(sqlite3_errmsg(db), "no such table"))
            return err_set(e, ERR_INVALID, "this run was imported before recommendations existed; re-import it");
        return rundb_db_error(db, e, "rules (findings)");
    }
    sqlite3_bind_int(st, 1, rank);
    sqlite3_bind_int(st, 2, rank);
    json_t *arr = json_array();
    int rc;
    while ((rc = scan_step(st, e, "rules (findings)")) == 1) {
        json_t *f = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
        if (f) json_array_append_new(arr, f);
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return 0;
}

/* catalog_query.c — runs by project, metadata and figures (see
 * include/store/catalog_query.h). */
#include "store/catalog_query.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/xmalloc.h"
#include "store/rundb.h"

/* 1 when s[0..n) is UTF-8 without control characters. */
static int clean_text(const char *s, size_t n)
{
    if (!utf8_valid(s, n)) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f) return 0;
    }
    return 1;
}

int catalog_project_check(const char *name, struct err *e)
{
    size_t n = strlen(name), chars = 0;
    if (!clean_text(name, n)) return err_set(e, ERR_INVALID, "a project name must be UTF-8 text without control characters");
    for (size_t i = 0; i < n; i++) chars += ((unsigned char)name[i] & 0xC0) != 0x80;
    if (chars < 1 || chars > CATALOG_PROJECT_MAX)
        return err_set(e, ERR_INVALID, "a project name must have 1 to %d characters", CATALOG_PROJECT_MAX);
    if (strchr(name, '/')) return err_set(e, ERR_INVALID, "a project name may not contain '/'");
    return 0;
}

int catalog_meta_check(const char *key, const char *value, struct err *e)
{
    size_t kn = strlen(key), vn = strlen(value);
    if (kn < 1 || kn > CATALOG_META_KEY_MAX || strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                           "0123456789_.-") != kn)
        return err_set(e, ERR_INVALID, "metadata key '%.80s' must be 1 to %d of the characters A-Z a-z 0-9 _ . -",
                       key, CATALOG_META_KEY_MAX);
    if (vn > CATALOG_META_VALUE_MAX)
        return err_set(e, ERR_INVALID, "metadata value of '%s' is longer than %d bytes", key, CATALOG_META_VALUE_MAX);
    if (!clean_text(value, vn))
        return err_set(e, ERR_INVALID, "metadata value of '%s' must be UTF-8 text without control characters", key);
    return 0;
}

int catalog_meta_add(json_t *meta, const char *key, const char *value, struct err *e)
{
    if (catalog_meta_check(key, value, e) < 0) return e->code;
    if (!json_object_get(meta, key) && json_object_size(meta) >= CATALOG_META_MAX)
        return err_set(e, ERR_INVALID, "at most %d metadata keys", CATALOG_META_MAX);
    json_object_set_new(meta, key, json_string(value));
    return 0;
}

static int fail(sqlite3 *db, struct err *e, const char *what)
{
    char w[96];
    snprintf(w, sizeof w, "catalog %s", what);
    return rundb_db_error(db, e, w);
}

/* Parameter numbers of the list query, one slot per filter; a NULL
 * parameter switches its filter off. */
enum { P_PROJECT = 1, P_TAG, P_GPU, P_SINCE, P_UNTIL, P_Q, P_META };

static const char find_sql[] =
    "SELECT " CATALOG_RUN_COLS " FROM runs WHERE (?1 IS NULL OR project = ?1)"
    " AND (?2 IS NULL OR EXISTS (SELECT 1 FROM json_each(runs.tags) WHERE value = ?2))"
    " AND (?3 IS NULL OR instr(lower(gpu), lower(?3)) > 0)"
    " AND (?4 IS NULL OR created >= ?4) AND (?5 IS NULL OR created < ?5)"
    " AND (?6 IS NULL OR instr(lower(name), ?6) > 0 OR instr(lower(project), ?6) > 0"
    "      OR instr(lower(tags), ?6) > 0 OR instr(lower(meta), ?6) > 0)"
    " AND (?7 IS NULL OR json_extract(meta, ?7) = ?8) AND (?9 IS NULL OR json_extract(meta, ?9) = ?10)"
    " AND (?11 IS NULL OR json_extract(meta, ?11) = ?12) AND (?13 IS NULL OR json_extract(meta, ?13) = ?14)"
    " AND (?15 IS NULL OR json_extract(meta, ?15) = ?16) AND (?17 IS NULL OR json_extract(meta, ?17) = ?18)"
    " AND (?19 IS NULL OR json_extract(meta, ?19) = ?20) AND (?21 IS NULL OR json_extract(meta, ?21) = ?22)"
    " ORDER BY created DESC, rowid DESC";

static int bind_filter(sqlite3_stmt *st, const struct catalog_filter *f, char **lowered, struct err *e)
{
    if (f->nmeta < 0 || f->nmeta > CATALOG_FILTER_META)
        return err_set(e, ERR_INVALID, "at most %d metadata filters", CATALOG_FILTER_META);
    if (f->project) sqlite3_bind_text(st, P_PROJECT, f->project, -1, SQLITE_STATIC);
    if (f->tag) sqlite3_bind_text(st, P_TAG, f->tag, -1, SQLITE_STATIC);
    if (f->gpu && f->gpu[0]) sqlite3_bind_text(st, P_GPU, f->gpu, -1, SQLITE_STATIC);
    if (f->since) sqlite3_bind_int64(st, P_SINCE, f->since);
    if (f->until) sqlite3_bind_int64(st, P_UNTIL, f->until);
    if (f->q && f->q[0]) {
        /* SQLite's lower() folds ASCII only: the needle is folded alike */
        *lowered = xstrdup(f->q);
        for (char *p = *lowered; *p; p++)
            if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
        sqlite3_bind_text(st, P_Q, *lowered, -1, SQLITE_STATIC);
    }
    for (int i = 0; i < f->nmeta; i++) {
        if (catalog_meta_check(f->meta_key[i], f->meta_value[i], e) < 0) return e->code;
        /* keys are [A-Za-z0-9_.-]: quoted, a '.' stays part of the key */
        char *path = xasprintf("$.\"%s\"", f->meta_key[i]);
        sqlite3_bind_text(st, P_META + 2 * i, path, -1, free);
        sqlite3_bind_text(st, P_META + 2 * i + 1, f->meta_value[i], -1, SQLITE_STATIC);
    }
    return 0;
}

int catalog_find(struct catalog *c, const struct catalog_filter *f, json_t **out, struct err *e)
{
    static const struct catalog_filter none;
    sqlite3_stmt *st = NULL;
    json_t *arr = json_array();
    char *lowered = NULL;
    int rc = 0;
    sqlite3 *db = catalog_lock(c);
    if (sqlite3_prepare_v2(db, find_sql, -1, &st, NULL) != SQLITE_OK) rc = fail(db, e, "list");
    else if ((rc = bind_filter(st, f ? f : &none, &lowered, e)) == 0) {
        int step;
        while ((step = sqlite3_step(st)) == SQLITE_ROW) json_array_append_new(arr, catalog_row_json(st));
        if (step != SQLITE_DONE) rc = fail(db, e, "list");
    }
    sqlite3_finalize(st);
    catalog_unlock(c);
    free(lowered);
    if (rc) {
        json_decref(arr);
        return rc;
    }
    size_t i;
    json_t *row;
    json_array_foreach(arr, i, row) catalog_mark_damage(c, row);
    *out = arr;
    return 0;
}

/* The rows of sql (its one parameter bound to param when not NULL), each
 * made a JSON value by row, in a new array. */
static int collect(struct catalog *c, const char *sql, const char *param, json_t *(*row)(sqlite3_stmt *st),
                   const char *what, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *arr = json_array();
    int rc = 0, step;
    sqlite3 *db = catalog_lock(c);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = fail(db, e, what);
    } else {
        if (param) sqlite3_bind_text(st, 1, param, -1, SQLITE_STATIC);
        while ((step = sqlite3_step(st)) == SQLITE_ROW) json_array_append_new(arr, row(st));
        if (step != SQLITE_DONE) rc = fail(db, e, what);
        sqlite3_finalize(st);
    }
    catalog_unlock(c);
    if (rc) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return 0;
}

static json_t *project_row(sqlite3_stmt *st)
{
    const char *name = (const char *)sqlite3_column_text(st, 0);
    return json_pack("{s:s,s:I,s:I}", "name", name ? name : "", "runs", (json_int_t)sqlite3_column_int64(st, 1), "last",
                     (json_int_t)sqlite3_column_int64(st, 2));
}

int catalog_projects(struct catalog *c, json_t **out, struct err *e)
{
    json_t *arr;
    if (collect(c,
                "SELECT project, count(*), max(created) FROM runs WHERE project <> '' GROUP BY project ORDER BY project",
                NULL, project_row, "projects", &arr, e) != 0)
        return e->code;
    *out = json_pack("{s:o}", "projects", arr);
    return 0;
}

/* What a trend needs of a run's row. */
static json_t *trend_row(sqlite3_stmt *st)
{
    static const char *const keys[] = { "id", "name", "created", "url", "ranks", "gpu", "meta", "trace", "figures" };
    json_t *row = catalog_row_json(st), *keep = json_object();
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) json_object_set(keep, keys[k], json_object_get(row, keys[k]));
    json_decref(row);
    return keep;
}

int catalog_project_runs(struct catalog *c, const char *project, json_t **out, struct err *e)
{
    json_t *arr;
    if (collect(c, "SELECT " CATALOG_RUN_COLS " FROM runs WHERE project = ? AND project <> '' ORDER BY created, rowid",
                project, trend_row, "trend", &arr, e) != 0)
        return e->code;
    if (json_array_size(arr) == 0) {
        json_decref(arr);
        return err_set(e, ERR_NOT_FOUND, "no project '%.100s'", project);
    }
    *out = arr;
    return 0;
}

int catalog_find_hash(struct catalog *c, const char *hash, char id[CATALOG_ID_LEN + 1])
{
    sqlite3_stmt *st;
    int found = 0;
    if (!hash || !hash[0]) return 0;
    sqlite3 *db = catalog_lock(c);
    if (sqlite3_prepare_v2(db, "SELECT id FROM runs WHERE hash = ? ORDER BY created, rowid LIMIT 1", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) == CATALOG_ID_LEN) {
            memcpy(id, sqlite3_column_text(st, 0), CATALOG_ID_LEN);
            id[CATALOG_ID_LEN] = '\0';
            found = 1;
        }
        sqlite3_finalize(st);
    }
    catalog_unlock(c);
    return found;
}

int catalog_set_facts(struct catalog *c, const char *id, json_t *figures, json_t *trace, const char *hash,
                      struct err *e)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (!catalog_id_valid(id)) return err_set(e, ERR_NOT_FOUND, "no run with id '%.40s'", id);
    if (catalog_check_writable(c, e) < 0) return e->code;
    char *ftext = figures ? json_dumps(figures, JSON_COMPACT | JSON_REAL_PRECISION(12)) : NULL;
    char *ttext = trace ? json_dumps(trace, JSON_COMPACT) : NULL;
    sqlite3 *db = catalog_lock(c);
    if (sqlite3_prepare_v2(db,
                           "UPDATE runs SET figures = coalesce(?1, figures), trace = coalesce(?2, trace),"
                           " hash = CASE WHEN hash = '' AND ?3 IS NOT NULL THEN ?3 ELSE hash END WHERE id = ?4",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = fail(db, e, "update");
        goto out;
    }
    if (ftext) sqlite3_bind_text(st, 1, ftext, -1, SQLITE_STATIC);
    if (ttext) sqlite3_bind_text(st, 2, ttext, -1, SQLITE_STATIC);
    if (hash && hash[0]) sqlite3_bind_text(st, 3, hash, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = fail(db, e, "update");
    else if (sqlite3_changes(db) == 0) rc = err_set(e, ERR_NOT_FOUND, "no run with id '%s'", id);
    sqlite3_finalize(st);
out:
    catalog_unlock(c);
    free(ftext);
    free(ttext);
    return rc;
}

static json_t *id_row(sqlite3_stmt *st)
{
    return json_string((const char *)sqlite3_column_text(st, 0));
}

int catalog_runs_without_facts(struct catalog *c, json_t **out, struct err *e)
{
    /* a run still deriving gets its figures when its stages are done */
    return collect(c, "SELECT id FROM runs WHERE figures IS NULL AND status != ?1 ORDER BY created, rowid",
                   CATALOG_DERIVING, id_row, "backfill", out, e);
}

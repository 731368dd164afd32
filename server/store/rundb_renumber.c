#include "store/rundb_renumber.h"

#include <stdlib.h>

#include "base/xmalloc.h"
#include "store/rundb.h"

/* Tables with a rank column before the analyses run; the SQL is fixed per
 * table (two passes through negative ranks so no row ever collides). */
static const char *const renumber_sql[][2] = {
    { "UPDATE rank SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE rank SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE track SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE track SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE flow SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE flow SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE counter SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE counter SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE mem SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE mem SET rank = -rank - 1 WHERE rank < 0" },
    { "UPDATE note SET rank = -1 - ?2 WHERE rank = ?1", "UPDATE note SET rank = -rank - 1 WHERE rank < 0" },
};

int rundb_renumber_ranks(sqlite3 *db, const int *from, const int *to, int n, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, have = 0;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return rundb_db_error(db, e, "ranks");
    /* every rank of the run moves somewhere: a partial map would collide */
    if (sqlite3_prepare_v2(db, "SELECT rank FROM rank", -1, &st, NULL) != SQLITE_OK)
        rc = err_set(e, ERR_DB, "ranks: %s", sqlite3_errmsg(db));
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        int r = sqlite3_column_int(st, 0), k = 0;
        while (k < n && from[k] != r) k++;
        if (k == n) rc = err_set(e, ERR_INVALID, "rank %d of the run is not given a new number", r);
        have++;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == 0 && have != n) rc = err_set(e, ERR_INVALID, "the run has %d ranks, %d were given", have, n);
    for (size_t t = 0; t < sizeof renumber_sql / sizeof renumber_sql[0] && rc == 0; t++) {
        for (int i = 0; i < n && rc == 0; i++) {
            if (sqlite3_prepare_v2(db, renumber_sql[t][0], -1, &st, NULL) != SQLITE_OK) {
                rc = err_set(e, ERR_DB, "ranks: %s", sqlite3_errmsg(db));
                break;
            }
            sqlite3_bind_int(st, 1, from[i]);
            sqlite3_bind_int(st, 2, to[i]);
            if (sqlite3_step(st) != SQLITE_DONE) rc = rundb_db_error(db, e, "ranks");
            sqlite3_finalize(st);
            st = NULL;
        }
        if (rc == 0 && sqlite3_exec(db, renumber_sql[t][1], NULL, NULL, NULL) != SQLITE_OK)
            rc = rundb_db_error(db, e, "ranks");
    }
    if (sqlite3_exec(db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && rc == 0)
        rc = rundb_db_error(db, e, "ranks");
    return rc;
}

int rundb_ranks_from_headers(sqlite3 *db, int *map, int n, int *changed, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int rc = 0, seen = 0;
    *changed = 0;
    for (int i = 0; i < n; i++) map[i] = i;
    if (sqlite3_prepare_v2(db,
                           "SELECT rank, json_extract(distributed, '$.rank') FROM rank"
                           " WHERE json_valid(distributed) ORDER BY rank",
                           -1, &st, NULL) != SQLITE_OK)
        return err_set(e, ERR_DB, "ranks: %s", sqlite3_errmsg(db));
    int *said = xcalloc((size_t)(n ? n : 1), sizeof *said);
    for (int i = 0; i < n; i++) said[i] = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int old = sqlite3_column_int(st, 0);
        if (old < 0 || old >= n || sqlite3_column_type(st, 1) != SQLITE_INTEGER) continue;
        sqlite3_int64 r = sqlite3_column_int64(st, 1);
        if (r < 0 || r > 1000000) continue;
        said[old] = (int)r;
        seen++;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (seen != n) goto out; /* some file does not say: keep names/order */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (said[i] == said[j]) goto out; /* two files claim one rank */
    for (int i = 0; i < n; i++)
        if (said[i] != i) *changed = 1;
    if (!*changed) goto out;
    int *from = xcalloc((size_t)n, sizeof *from);
    for (int i = 0; i < n; i++) from[i] = i;
    rc = rundb_renumber_ranks(db, from, said, n, e);
    free(from);
    if (rc == 0)
        for (int i = 0; i < n; i++) map[i] = said[i];
    else *changed = 0;
out:
    sqlite3_finalize(st);
    free(said);
    return rc;
}

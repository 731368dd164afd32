/* timeline_rows.c — batched INSERTs of the timeline's builds (see
 * include/derive/timeline_rows.h). */
#include "derive/timeline_rows.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "store/rundb.h"

int timeline_rows_open(struct timeline_rows *w, sqlite3 *db, const char *sql_one, const char *sql_many, int ncol,
                       unsigned real, const char *what, struct err *e)
{
    memset(w, 0, sizeof *w);
    w->db = db;
    w->what = what;
    w->ncol = ncol;
    w->real = real;
    assert(ncol > 0 && ncol <= TIMELINE_ROWS_MAXCOL);
    if (rundb_prepare(db, sql_one, &w->one, e) < 0 || rundb_prepare(db, sql_many, &w->many, e) < 0) {
        timeline_rows_close(w);
        return e->code;
    }
    /* a statement whose placeholders are not ncol a row would take the
     * values of the wrong columns (SQLite ignores a bind past the last) */
    assert(sqlite3_bind_parameter_count(w->one) == ncol);
    assert(sqlite3_bind_parameter_count(w->many) == ncol * TIMELINE_ROWS_BATCH);
    return 0;
}

/* Binds row i of the buffer at parameter base + 1 onwards. */
static void bind_row(struct timeline_rows *w, sqlite3_stmt *st, int i, int base)
{
    const union timeline_rows_val *v = &w->v[i * w->ncol];
    for (int c = 0; c < w->ncol; c++) {
        if (w->nulls[i] & (1u << c)) sqlite3_bind_null(st, base + c + 1);
        else if (w->real & (1u << c)) sqlite3_bind_double(st, base + c + 1, v[c].d);
        else sqlite3_bind_int64(st, base + c + 1, v[c].i);
    }
}

static int step(struct timeline_rows *w, sqlite3_stmt *st, struct err *e)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(w->db, e, w->what);
}

int timeline_rows_add(struct timeline_rows *w, const union timeline_rows_val *v, unsigned nulls, struct err *e)
{
    memcpy(&w->v[w->n * w->ncol], v, (size_t)w->ncol * sizeof *v);
    w->nulls[w->n++] = nulls;
    if (w->n < TIMELINE_ROWS_BATCH) return 0;
    for (int i = 0; i < w->n; i++) bind_row(w, w->many, i, i * w->ncol);
    w->n = 0;
    return step(w, w->many, e);
}

int timeline_rows_flush(struct timeline_rows *w, struct err *e)
{
    int n = w->n;
    w->n = 0;
    for (int i = 0; i < n; i++) {
        bind_row(w, w->one, i, 0);
        if (step(w, w->one, e) != 0) return e->code;
    }
    return 0;
}

void timeline_rows_close(struct timeline_rows *w)
{
    sqlite3_finalize(w->one);
    sqlite3_finalize(w->many);
    w->one = w->many = NULL;
    w->n = 0;
}

int timeline_rows_chunk(sqlite3 *db, sqlite3_stmt *ins, const int64_t *keys, int nkeys, int64_t first, int64_t last,
                        int64_t n, const struct varint_buf *rows, const char *what, struct err *e)
{
    int c = 0;
    while (c < nkeys) {
        sqlite3_bind_int64(ins, c + 1, keys[c]);
        c++;
    }
    sqlite3_bind_int64(ins, c + 1, first);
    sqlite3_bind_int64(ins, c + 2, last);
    sqlite3_bind_int64(ins, c + 3, n);
    sqlite3_bind_blob(ins, c + 4, rows->v, (int)rows->len, SQLITE_STATIC);
    int rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(db, e, what);
}

void timeline_rows_held_reset(struct timeline_rows_held *h)
{
    h->n = 0;
    h->spilled = 0;
}

void timeline_rows_held_spill(struct timeline_rows_held *h)
{
    timeline_rows_held_free(h);
    h->spilled = 1;
}

void *timeline_rows_held_add(struct timeline_rows_held *h)
{
    if (h->spilled) return NULL;
    if (h->n == h->hold) {
        timeline_rows_held_spill(h);
        return NULL;
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 1024;
        if (h->cap > h->hold) h->cap = h->hold;
        h->v = xrealloc(h->v, h->cap * h->size);
    }
    return (char *)h->v + h->n++ * h->size;
}

void timeline_rows_held_free(struct timeline_rows_held *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

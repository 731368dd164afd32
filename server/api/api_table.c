/* api_table.c — page parameters, binds and result tables of the analysis
 * read API (see include/api/api_table.h). */
#define LOG_MODULE "api"
#include "api/api_table.h"

#include <assert.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_run.h"
#include "api/api_table.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "base/xmalloc.h"
#include "derive/rules.h"
#include "derive/summary.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/rundb.h"

#define LIMIT_DEFAULT 100
#define LIMIT_MAX 1000
#define OFFSET_MAX 1000000000LL
#define Q_MAX 256 /* bytes of a q filter */
#define CSV_TYPE "text/csv; charset=utf-8"

/* ======================================================================== */
/* Query parameters                                                           */
/* ======================================================================== */

/* ?q=: NULL when absent, else its LIKE pattern (owned by caller). */
int api_table_param_like(struct http_req *req, char **out, struct err *e)
{
    const char *v = qparam_get(req, "q");

    *out = NULL;
    if (!v) return 0;
    if (strlen(v) > Q_MAX) return err_set(e, ERR_INVALID, "parameter 'q' is longer than %d bytes", Q_MAX);
    *out = rundb_like_pattern(v);
    return 0;
}

/* Allow-lists: each request word maps to a fixed SQL fragment. */
struct order_opt {
    const char *key;
    int desc; /* 1 for DESC */
};
static const struct order_opt orders[] = { { "asc", 0 }, { "desc", 1 } };

struct format_opt {
    const char *key;
    int csv;
};
static const struct format_opt formats[] = { { "json", 0 }, { "csv", 1 } };

int api_table_param_page(struct http_req *req, struct api_page *pg, struct err *e)
{
    size_t o, f;

    if (qparam_int(req, "offset", 0, 0, OFFSET_MAX, &pg->offset, e) < 0 ||
        qparam_int(req, "limit", LIMIT_DEFAULT, 1, LIMIT_MAX, &pg->limit, e) < 0 ||
        QPARAM_PICK(req, "order", orders, 1, &o, e) < 0 || QPARAM_PICK(req, "format", formats, 0, &f, e) < 0)
        return e->code;
    pg->order_given = qparam_get(req, "order") != NULL;
    pg->desc = orders[o].desc;
    pg->csv = formats[f].csv;
    return 0;
}

/* ======================================================================== */
/* The run database of a request                                              */
/* ======================================================================== */

static void bind_i64(sqlite3_stmt *st, const char *name, int64_t v)
{
    int i = sqlite3_bind_parameter_index(st, name);

    if (i) sqlite3_bind_int64(st, i, v);
}

static void bind_i64_or_null(sqlite3_stmt *st, const char *name, int64_t v, int has)
{
    int i = sqlite3_bind_parameter_index(st, name);

    if (i && has) sqlite3_bind_int64(st, i, v);
    else if (i) sqlite3_bind_null(st, i);
}

void api_table_bind(sqlite3_stmt *st, const struct api_binds *b)
{
    int i = sqlite3_bind_parameter_index(st, ":q");

    bind_i64(st, ":rank", b->rank);
    if (i && b->q) sqlite3_bind_text(st, i, b->q, -1, SQLITE_STATIC);
    else if (i) sqlite3_bind_null(st, i);
    bind_i64(st, ":dt_lo", b->dev_type ? 1 : 0);
    bind_i64(st, ":dt_hi", b->dev_type ? INT32_MAX : 0);
    bind_i64_or_null(st, ":di", b->dev_id, b->dev_id >= 0);
    bind_i64_or_null(st, ":start", b->start, b->has_start);
    bind_i64_or_null(st, ":end", b->end, b->has_end);
    bind_i64(st, ":min_bytes", b->min_bytes);
    bind_i64(st, ":ktotal", b->ktotal);
    if ((i = sqlite3_bind_parameter_index(st, ":family")) && b->family)
        sqlite3_bind_text(st, i, b->family, -1, SQLITE_STATIC);
    else if (i) sqlite3_bind_null(st, i);
}

/* ======================================================================== */
/* Result columns: one table drives JSON rows, CSV rows and the CSV header    */
/* ======================================================================== */

void api_table_add_cols(struct api_table *t, const struct api_col *c, size_t n)
{
    for (size_t i = 0; i < n && t->ncols < API_TABLE_MAX_COLS; i++) t->cols[t->ncols++] = c[i];
}

/* Adds the fixed ORDER BY: the sort expression (nulls last), then
 * tiebreak ("name ASC" ...) so pages are stable. */
void api_table_order(struct api_table *t, const char *expr, int desc, const char *tiebreak)
{
    int n = snprintf(t->order_by, sizeof t->order_by, "(%s) IS NULL, %s %s, %s", expr, expr,
                     desc ? "DESC" : "ASC", tiebreak);

    assert(n > 0 && (size_t)n < sizeof t->order_by); /* fragments are static and short */
    (void)n;
}

static json_t *col_json(sqlite3_stmt *st, int i, enum api_col_kind kind)
{
    int type = sqlite3_column_type(st, i);

    if (type == SQLITE_NULL) return kind == COL_BOOL ? json_false() : json_null();
    switch (kind) {
    case COL_TEXT: {
        json_t *s = json_stringn((const char *)sqlite3_column_text(st, i), (size_t)sqlite3_column_bytes(st, i));
        return s ? s : json_string("?"); /* not UTF-8: ingest should have cleaned it */
    }
    case COL_INT: return json_integer(sqlite3_column_int64(st, i));
    case COL_US: return json_real(sqlite3_column_double(st, i) / 1000.0);
    case COL_BOOL: return json_boolean(sqlite3_column_int64(st, i) != 0);
    case COL_REAL: return json_real(sqlite3_column_double(st, i));
    }
    return json_null();
}

static void col_csv(struct sbuf *b, sqlite3_stmt *st, int i, enum api_col_kind kind)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        if (kind == COL_BOOL) sbuf_add(b, "false");
        return;
    }
    switch (kind) {
    case COL_TEXT: sbuf_csv(b, (const char *)sqlite3_column_text(st, i)); break;
    case COL_INT: sbuf_int(b, sqlite3_column_int64(st, i), 0); break;
    case COL_US:
        if (sqlite3_column_type(st, i) == SQLITE_INTEGER) sbuf_int(b, sqlite3_column_int64(st, i), 1);
        else sbuf_printf(b, "%.3f", sqlite3_column_double(st, i) / 1000.0);
        break;
    case COL_BOOL: sbuf_add(b, sqlite3_column_int64(st, i) ? "true" : "false"); break;
    case COL_REAL: sbuf_printf(b, "%.6g", sqlite3_column_double(st, i)); break;
    }
}

/* Number of result rows (groups) of t. */
static int table_count(struct api_run *r, const struct api_table *t, const struct api_binds *b, int64_t *total, struct err *e)
{
    struct sbuf sql = { 0 };
    sqlite3_stmt *st;
    int rc;

    sbuf_printf(&sql, "SELECT count(*) FROM (SELECT 1 %s %s)", t->count_from ? t->count_from : t->from_where,
              t->group_by);
    rc = rundb_prepare(r->db, sql.p, &st, e);
    free(sql.p);
    if (rc < 0) return rc;
    api_table_bind(st, b);
    rc = sqlite3_step(st);
    *total = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : rundb_db_error(r->db, e, "run database (count)");
}

/* Runs t: a page of rows into the JSON array rows (limit >= 1), or every
 * row into csv after a header line (limit < 0). */
static int table_rows(struct api_run *r, const struct api_table *t, const struct api_binds *b, long long limit,
                      long long offset, json_t *rows, struct sbuf *csv, struct err *e)
{
    struct sbuf sql = { 0 };
    sqlite3_stmt *st;
    int rc;

    sbuf_add(&sql, "SELECT ");
    for (size_t i = 0; i < t->ncols; i++) sbuf_printf(&sql, "%s%s", i ? ", " : "", t->cols[i].sql);
    sbuf_printf(&sql, " %s %s ORDER BY %s", t->from_where, t->group_by, t->order_by);
    /* No LIMIT at all for every row: SQLite sorts "LIMIT -1" as a top-N
     * of unbounded N, several times slower than a plain sort. */
    if (limit >= 0) sbuf_add(&sql, " LIMIT :limit OFFSET :offset");
    rc = rundb_prepare(r->db, sql.p, &st, e);
    free(sql.p);
    if (rc < 0) return rc;
    api_table_bind(st, b);
    bind_i64(st, ":limit", limit);
    bind_i64(st, ":offset", offset);
    if (csv) {
        for (size_t i = 0; i < t->ncols; i++) sbuf_printf(csv, "%s%s", i ? "," : "", t->cols[i].key);
        sbuf_add(csv, "\r\n");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (csv) {
            for (size_t i = 0; i < t->ncols; i++) {
                if (i) sbuf_add(csv, ",");
                col_csv(csv, st, (int)i, t->cols[i].kind);
            }
            sbuf_add(csv, "\r\n");
        } else {
            json_t *row = json_object();
            for (size_t i = 0; i < t->ncols; i++)
                json_object_set_new(row, t->cols[i].key, col_json(st, (int)i, t->cols[i].kind));
            json_array_append_new(rows, row);
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (rows)");
}

/* Answers a table: CSV with every row, or JSON {..., total, offset, limit,
 * rows} added to out (which is stolen in both cases). */
int api_table_send(struct http_req *req, struct api_run *r, const struct api_table *t, const struct api_binds *b,
                      const struct api_page *pg, const char *what, json_t *out)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct err e;
    int64_t total;

    if (pg->csv) {
        struct sbuf csv = { 0 };
        char name[96];
        json_decref(out);
        if (table_rows(r, t, b, -1, 0, NULL, &csv, &e) < 0) {
            free(csv.p);
            return http_send_err(conn, &e);
        }
        snprintf(name, sizeof name, "%s-rank%d-%s.csv", r->id, r->rank, what);
        return http_send_text(conn, 200, CSV_TYPE, name, csv.p, csv.n);
    }
    json_t *rows = json_array();
    if (table_count(r, t, b, &total, &e) < 0 || table_rows(r, t, b, pg->limit, pg->offset, rows, NULL, &e) < 0) {
        json_decref(rows);
        json_decref(out);
        return http_send_err(conn, &e);
    }
    json_object_set_new(out, "total", json_integer(total));
    json_object_set_new(out, "offset", json_integer(pg->offset));
    json_object_set_new(out, "limit", json_integer(pg->limit));
    json_object_set_new(out, "rows", rows);
    return http_send_json(conn, 200, out);
}

/* One fixed statement, bound from b, whose first row fills vals[0..n) as
 * int64 (NULL -> 0). 0 when there is no row. */
int api_table_query_i64(struct api_run *r, const char *sql, const struct api_binds *b, int64_t *vals, int n, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    if (rundb_prepare(r->db, sql, &st, e) < 0) return e->code;
    api_table_bind(st, b);
    rc = sqlite3_step(st);
    for (int i = 0; i < n; i++) vals[i] = rc == SQLITE_ROW ? sqlite3_column_int64(st, i) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (query)");
}

json_t *api_table_us_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                     : json_real((double)sqlite3_column_int64(st, i) / 1000.0);
}

json_t *api_table_real_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_real(sqlite3_column_double(st, i));
}

json_t *api_table_text_or_null(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    json_t *j = s ? json_string(s) : NULL;

    return j ? j : json_null();
}

/* The rank's analysis summary JSON; an empty object when it has none.
 * OUT *out: owned by caller. */
int api_table_summary_json(struct api_run *r, const struct api_binds *b, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *sum = NULL;
    int rc;

    if (rundb_prepare(r->db, "SELECT summary FROM analysis WHERE rank = :rank", &st, e) < 0) return e->code;
    api_table_bind(st, b);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
        sum = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return rundb_db_error(r->db, e, "run database (summary)");
    if (!json_is_object(sum)) {
        json_decref(sum);
        sum = json_object();
    }
    *out = sum;
    return 0;
}


/* A name-grouped table (operators, kernels): its columns are name, the
 * group's extra column, then cols; ordered by the sort, in the sort's own
 * direction unless ?order= was given. */
void api_table_grouped(struct api_table *t, const struct api_group_opt *g, const struct api_col *cols, size_t n,
                          const struct api_sort_opt *s, struct api_page *pg)
{
    t->group_by = g->group_by;
    api_table_add_cols(t, &(struct api_col){ "name", "name", COL_TEXT }, 1);
    if (g->extra.key) api_table_add_cols(t, &g->extra, 1);
    api_table_add_cols(t, cols, n);
    if (!pg->order_given) pg->desc = s->desc;
    api_table_order(t, s->expr, pg->desc, g->tiebreak);
}


/* The head of a table answer: {rank, group (unless NULL), sort, order}.
 * Owned by caller. */
json_t *api_table_head(const struct api_run *r, const char *group, const char *sort, const struct api_page *pg)
{
    json_t *out = json_object();

    json_object_set_new(out, "rank", json_integer(r->rank));
    if (group) json_object_set_new(out, "group", json_string(group));
    json_object_set_new(out, "sort", json_string(sort));
    json_object_set_new(out, "order", json_string(pg->desc ? "desc" : "asc"));
    return out;
}


/* api_analysis.c — the read API over a run's analysis tables:
 * /api/runs/{id}/overview, /operators, /kernels, /memory, /memory/events
 * (see include/api/api_summary.h). */
#define LOG_MODULE "api"
#include "api/api_summary.h"

#include <assert.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_run.h"
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
#define POINTS_DEFAULT 800
#define POINTS_MIN 10
#define POINTS_MAX 5000
#define NCATS 8       /* breakdown parts, summary_categories[0..7] */
#define CSV_TYPE "text/csv; charset=utf-8"

/* ======================================================================== */
/* Query parameters                                                           */
/* ======================================================================== */

/* Picks value v of parameter name among the keys of an allow-list table:
 * `keys` points at the `key` member of its first entry, each entry being
 * `stride` bytes. *out = the entry index, def when absent. */
static int param_pick(struct http_req *req, const char *name, const char *const *keys, size_t stride, size_t n,
                      size_t def, size_t *out, struct err *e)
{
    const char *v = qparam_get(req, name);
    char list[256] = "";

#define KEY_AT(i) (*(const char *const *)(const void *)((const char *)keys + (i) * stride))
    if (!v) {
        *out = def;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v, KEY_AT(i)) == 0) {
            *out = i;
            return 0;
        }
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", KEY_AT(i));
    }
#undef KEY_AT
    return err_set(e, ERR_INVALID, "parameter '%s' must be one of: %s", name, list);
}

#define PICK(req, name, table, def, out, e)                                                                \
    param_pick(req, name, &(table)[0].key, sizeof(table)[0], sizeof(table) / sizeof(table)[0], def, out, e)

/* ?q=: NULL when absent, else its LIKE pattern (owned by caller). */
static int param_like(struct http_req *req, char **out, struct err *e)
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

/* offset, limit, order, format: shared by the three tables. */
struct page {
    long long offset, limit;
    int order_given; /* ?order= present */
    int desc;
    int csv;
};

static int param_page(struct http_req *req, struct page *pg, struct err *e)
{
    size_t o, f;

    if (qparam_int(req, "offset", 0, 0, OFFSET_MAX, &pg->offset, e) < 0 ||
        qparam_int(req, "limit", LIMIT_DEFAULT, 1, LIMIT_MAX, &pg->limit, e) < 0 ||
        PICK(req, "order", orders, 1, &o, e) < 0 || PICK(req, "format", formats, 0, &f, e) < 0)
        return e->code;
    pg->order_given = qparam_get(req, "order") != NULL;
    pg->desc = orders[o].desc;
    pg->csv = formats[f].csv;
    return 0;
}

/* ======================================================================== */
/* The run database of a request                                              */
/* ======================================================================== */

/* Every value any statement below may name; a statement binds the ones it
 * uses (sqlite3_bind_parameter_index is 0 for the others). */
struct binds {
    int rank;
    const char *q;        /* LIKE pattern or NULL */
    int dev_type, dev_id; /* see struct device; dev_id < 0: any (the CPU) */
    int has_start, has_end;
    int64_t start, end; /* ns */
    long long min_bytes;
    int64_t ktotal; /* all kernel ns of the rank */
};

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

static void bind_all(sqlite3_stmt *st, const struct binds *b)
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
}

/* ======================================================================== */
/* Result columns: one table drives JSON rows, CSV rows and the CSV header    */
/* ======================================================================== */

enum col_kind {
    COL_TEXT, /* string, or null */
    COL_INT,  /* integer */
    COL_US,   /* ns (integer or real) sent as µs; null stays null */
    COL_BOOL, /* 0 / non-0 */
    COL_REAL, /* number, or null */
};

struct col {
    const char *key; /* JSON key and CSV header */
    const char *sql; /* fixed SQL expression */
    enum col_kind kind;
};

#define MAX_COLS 16

/* A table query: SELECT cols from_where group_by ORDER BY order_by. */
struct table {
    struct col cols[MAX_COLS];
    size_t ncols;
    const char *from_where; /* "FROM ... WHERE ..." with :named parameters */
    const char *count_from; /* the same rows for counting (no joins the count
                               does not need); NULL: from_where */
    const char *group_by;   /* "" or "GROUP BY ..." */
    char order_by[512];
};

static void table_add_cols(struct table *t, const struct col *c, size_t n)
{
    for (size_t i = 0; i < n && t->ncols < MAX_COLS; i++) t->cols[t->ncols++] = c[i];
}

/* Adds the fixed ORDER BY: the sort expression (nulls last), then
 * tiebreak ("name ASC" ...) so pages are stable. */
static void table_order(struct table *t, const char *expr, int desc, const char *tiebreak)
{
    int n = snprintf(t->order_by, sizeof t->order_by, "(%s) IS NULL, %s %s, %s", expr, expr,
                     desc ? "DESC" : "ASC", tiebreak);

    assert(n > 0 && (size_t)n < sizeof t->order_by); /* fragments are static and short */
    (void)n;
}

static json_t *col_json(sqlite3_stmt *st, int i, enum col_kind kind)
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

static void col_csv(struct sbuf *b, sqlite3_stmt *st, int i, enum col_kind kind)
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
static int table_count(struct api_run *r, const struct table *t, const struct binds *b, int64_t *total, struct err *e)
{
    struct sbuf sql = { 0 };
    sqlite3_stmt *st;
    int rc;

    sbuf_printf(&sql, "SELECT count(*) FROM (SELECT 1 %s %s)", t->count_from ? t->count_from : t->from_where,
              t->group_by);
    rc = rundb_prepare(r->db, sql.p, &st, e);
    free(sql.p);
    if (rc < 0) return rc;
    bind_all(st, b);
    rc = sqlite3_step(st);
    *total = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : rundb_db_error(r->db, e, "run database (count)");
}

/* Runs t: a page of rows into the JSON array rows (limit >= 1), or every
 * row into csv after a header line (limit < 0). */
static int table_rows(struct api_run *r, const struct table *t, const struct binds *b, long long limit,
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
    bind_all(st, b);
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
static int send_table(struct http_req *req, struct api_run *r, const struct table *t, const struct binds *b,
                      const struct page *pg, const char *what, json_t *out)
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
static int query_i64(struct api_run *r, const char *sql, const struct binds *b, int64_t *vals, int n, struct err *e)
{
    sqlite3_stmt *st;
    int rc;

    if (rundb_prepare(r->db, sql, &st, e) < 0) return e->code;
    bind_all(st, b);
    rc = sqlite3_step(st);
    for (int i = 0; i < n; i++) vals[i] = rc == SQLITE_ROW ? sqlite3_column_int64(st, i) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (query)");
}

static json_t *us_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                     : json_real((double)sqlite3_column_int64(st, i) / 1000.0);
}

static json_t *real_or_null(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_real(sqlite3_column_double(st, i));
}

static json_t *text_or_null(sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    json_t *j = s ? json_string(s) : NULL;

    return j ? j : json_null();
}

/* The rank's analysis summary JSON; an empty object when it has none.
 * OUT *out: owned by caller. */
static int load_summary(struct api_run *r, const struct binds *b, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *sum = NULL;
    int rc;

    if (rundb_prepare(r->db, "SELECT summary FROM analysis WHERE rank = :rank", &st, e) < 0) return e->code;
    bind_all(st, b);
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

/* ======================================================================== */
/* GET /api/runs/{id}/overview                                                */
/* ======================================================================== */

static int overview_steps(struct api_run *r, const struct binds *b, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *steps = json_array(), *avg = json_object();
    int64_t sum[NCATS] = { 0 }, sum_dur = 0, n = 0;
    int rc;

    json_object_set_new(out, "steps", steps);
    if (rundb_prepare(r->db,
                      "SELECT idx, name, ts, dur, host_ts, host_dur, kernel, memcpy, memset, comm, runtime, dataloader,"
                      " cpu_exec, other FROM step WHERE rank = :rank ORDER BY idx",
                      &st, e) < 0) {
        json_decref(avg);
        return e->code;
    }
    bind_all(st, b);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *bd = json_object(), *s;
        for (int k = 0; k < NCATS; k++) {
            int64_t v = sqlite3_column_int64(st, 6 + k);
            json_object_set_new(bd, summary_categories[k], json_real((double)v / 1000.0));
            sum[k] += v;
        }
        sum_dur += sqlite3_column_int64(st, 3);
        n++;
        s = json_object();
        json_object_set_new(s, "idx", json_integer(sqlite3_column_int64(st, 0)));
        json_object_set_new(s, "name", text_or_null(st, 1));
        json_object_set_new(s, "start_us", us_or_null(st, 2));
        json_object_set_new(s, "dur_us", us_or_null(st, 3));
        json_object_set_new(s, "host_start_us", us_or_null(st, 4));
        json_object_set_new(s, "host_dur_us", us_or_null(st, 5));
        json_object_set_new(s, "breakdown_us", bd);
        json_array_append_new(steps, s);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(avg);
        return rundb_db_error(r->db, e, "run database (steps)");
    }
    json_t *abd = json_object();
    for (int k = 0; k < NCATS; k++)
        json_object_set_new(abd, summary_categories[k], json_real(n ? (double)sum[k] / (double)n / 1000.0 : 0.0));
    json_object_set_new(avg, "dur_us", json_real(n ? (double)sum_dur / (double)n / 1000.0 : 0.0));
    json_object_set_new(avg, "breakdown_us", abd);
    json_object_set_new(out, "average", avg);
    return 0;
}

static int overview_gpus(struct api_run *r, const struct binds *b, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *gpus = json_array();
    int rc;

    json_object_set_new(out, "gpus", gpus);
    if (rundb_prepare(r->db,
                      "SELECT device, name, memory_bytes, cc, util, sm_eff, occupancy, tc_share, kernel_ns FROM gpu"
                      " WHERE rank = :rank ORDER BY device",
                      &st, e) < 0)
        return e->code;
    bind_all(st, b);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *g = json_object();
        json_object_set_new(g, "device", json_integer(sqlite3_column_int64(st, 0)));
        json_object_set_new(g, "name", text_or_null(st, 1));
        json_object_set_new(g, "memory_bytes", sqlite3_column_type(st, 2) == SQLITE_NULL
                                                   ? json_null()
                                                   : json_integer(sqlite3_column_int64(st, 2)));
        json_object_set_new(g, "compute_capability", text_or_null(st, 3));
        json_object_set_new(g, "utilization", real_or_null(st, 4));
        json_object_set_new(g, "sm_efficiency", real_or_null(st, 5));
        json_object_set_new(g, "achieved_occupancy", real_or_null(st, 6));
        json_object_set_new(g, "tensor_core_share", real_or_null(st, 7));
        json_object_set_new(g, "kernel_us", json_real((double)sqlite3_column_int64(st, 8) / 1000.0));
        json_array_append_new(gpus, g);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (gpus)");
}

int api_summary_overview(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r;
    struct binds b = { 0 };
    struct err e;
    json_t *out, *cats, *sum, *peaks, *notes, *v;
    const char *k;

    if (api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0) {
        api_run_close(&r);
        return http_send_err(conn, &e);
    }
    b.rank = r.rank;
    out = json_object();
    json_object_set_new(out, "rank", json_integer(r.rank));
    json_object_set(out, "ranks", r.ranks);
    json_object_set_new(out, "t0_us", r.t0 || r.t1 ? json_real((double)r.t0 / 1000.0) : json_null());
    cats = json_array();
    for (int i = 0; i < NCATS; i++) json_array_append_new(cats, json_string(summary_categories[i]));
    json_object_set_new(out, "categories", cats);
    if (overview_gpus(&r, &b, out, &e) < 0 || overview_steps(&r, &b, out, &e) < 0 ||
        load_summary(&r, &b, &sum, &e) < 0) {
        json_decref(out);
        api_run_close(&r);
        return http_send_err(conn, &e);
    }
    /* this rank's findings and the run's; null for a run stored before the
     * rules existed (the page says to re-import it) */
    json_t *recs = NULL;
    if (rules_findings(r.db, r.rank, &recs, &e) < 0 && e.code != ERR_INVALID) {
        json_decref(sum);
        json_decref(out);
        api_run_close(&r);
        return http_send_err(conn, &e);
    }
    json_object_set_new(out, "recommendations", recs ? recs : json_null());
    api_run_close(&r);
    peaks = json_object();
    json_object_set_new(out, "peak_memory_cpu_bytes", json_null());
    json_object_foreach(json_object_get(sum, "peak_memory"), k, v) {
        json_t *bytes = json_object_get(v, "bytes");
        if (!json_is_integer(bytes)) continue;
        if (strcmp(k, "cpu") == 0) json_object_set(out, "peak_memory_cpu_bytes", bytes);
        else json_object_set(peaks, k, bytes);
    }
    json_object_set_new(out, "peak_memory_bytes", peaks);
    notes = json_array();
    if (json_is_array(json_object_get(sum, "notes"))) json_array_extend(notes, json_object_get(sum, "notes"));
    json_object_set_new(out, "notes", notes);
    json_decref(sum);
    return http_send_json(conn, 200, out);
}

/* ======================================================================== */
/* GET /api/runs/{id}/operators                                               */
/* ======================================================================== */

struct group_opt {
    const char *key;
    const char *group_by; /* fixed SQL */
    struct col extra;     /* the second grouping column; key NULL for none */
    const char *tiebreak; /* fixed ORDER BY tail */
};

static const struct group_opt op_groups[] = {
    { "name", "GROUP BY name", { NULL, NULL, COL_TEXT }, "name ASC" },
    { "shape", "GROUP BY name, shape", { "shape", "shape", COL_TEXT }, "name ASC, shape ASC" },
    { "stack", "GROUP BY name, stack", { "stack", "stack", COL_TEXT }, "name ASC, stack ASC" },
};

struct sort_opt {
    const char *key;
    const char *expr; /* fixed SQL */
    int desc;         /* default direction */
};

/* A name-grouped table (operators, kernels): its columns are name, the
 * group's extra column, then cols; ordered by the sort, in the sort's own
 * direction unless ?order= was given. */
static void table_grouped(struct table *t, const struct group_opt *g, const struct col *cols, size_t n,
                          const struct sort_opt *s, struct page *pg)
{
    t->group_by = g->group_by;
    table_add_cols(t, &(struct col){ "name", "name", COL_TEXT }, 1);
    if (g->extra.key) table_add_cols(t, &g->extra, 1);
    table_add_cols(t, cols, n);
    if (!pg->order_given) pg->desc = s->desc;
    table_order(t, s->expr, pg->desc, g->tiebreak);
}

/* The head of a table answer: {rank, group (unless NULL), sort, order}.
 * Owned by caller. */
static json_t *table_head(const struct api_run *r, const char *group, const char *sort, const struct page *pg)
{
    json_t *out = json_object();

    json_object_set_new(out, "rank", json_integer(r->rank));
    if (group) json_object_set_new(out, "group", json_string(group));
    json_object_set_new(out, "sort", json_string(sort));
    json_object_set_new(out, "order", json_string(pg->desc ? "desc" : "asc"));
    return out;
}

enum { OP_SORT_HOST_SELF = 1, OP_SORT_DEVICE_SELF = 3 };
static const struct sort_opt op_sorts[] = {
    { "calls", "sum(calls)", 1 },
    { "host_self", "sum(host_self)", 1 },
    { "host_total", "sum(host_total)", 1 },
    { "device_self", "sum(dev_self)", 1 },
    { "device_total", "sum(dev_total)", 1 },
    { "name", "name", 0 },
};

static const struct col op_cols[] = {
    { "calls", "sum(calls)", COL_INT },
    { "host_self_us", "sum(host_self)", COL_US },
    { "host_total_us", "sum(host_total)", COL_US },
    { "device_self_us", "sum(dev_self)", COL_US },
    { "device_total_us", "sum(dev_total)", COL_US },
    { "tc_eligible", "max(tc_eligible)", COL_BOOL },
    { "tc_self_share", "CASE WHEN sum(dev_self) > 0 THEN CAST(sum(tc_self) AS REAL) / sum(dev_self) END", COL_REAL },
};

int api_summary_operators(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct binds b = { 0 };
    struct page pg;
    struct table t = { 0 };
    struct err e;
    size_t g, s;
    char *q = NULL;
    int64_t flags[4], totals[3];
    json_t *out;
    int status;

    if (param_page(req, &pg, &e) < 0 || PICK(req, "group", op_groups, 0, &g, &e) < 0 ||
        PICK(req, "sort", op_sorts, SIZE_MAX, &s, &e) < 0 || param_like(req, &q, &e) < 0 ||
        api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0)
        goto fail;
    b.rank = r.rank;
    b.q = q;
    if (query_i64(&r,
                  "SELECT count(*), coalesce(max(dev_total > 0), 0), coalesce(max(shape <> ''), 0),"
                  " coalesce(max(stack <> ''), 0) FROM op_stat WHERE rank = :rank",
                  &b, flags, 4, &e) < 0)
        goto fail;
    t.from_where = "FROM op_stat WHERE rank = :rank AND (:q IS NULL OR name LIKE :q ESCAPE '\\')";
    if (s == SIZE_MAX) s = flags[1] ? OP_SORT_DEVICE_SELF : OP_SORT_HOST_SELF;
    table_grouped(&t, &op_groups[g], op_cols, sizeof op_cols / sizeof op_cols[0], &op_sorts[s], &pg);

    out = table_head(&r, op_groups[g].key, op_sorts[s].key, &pg);
    json_object_set_new(out, "has_device", json_boolean(flags[1]));
    json_object_set_new(out, "has_shapes", json_boolean(flags[2]));
    json_object_set_new(out, "has_stacks", json_boolean(flags[3]));
    if (!pg.csv) {
        if (query_i64(&r,
                      "SELECT coalesce(sum(calls), 0), coalesce(sum(host_self), 0), coalesce(sum(dev_self), 0)"
                      " FROM op_stat WHERE rank = :rank AND (:q IS NULL OR name LIKE :q ESCAPE '\\')",
                      &b, totals, 3, &e) < 0) {
            json_decref(out);
            goto fail;
        }
        json_object_set_new(out, "totals",
                            json_pack("{s:I,s:f,s:f}", "calls", (json_int_t)totals[0], "host_self_us",
                                      (double)totals[1] / 1000.0, "device_self_us", (double)totals[2] / 1000.0));
    }
    status = send_table(req, &r, &t, &b, &pg, "operators", out);
    api_run_close(&r);
    free(q);
    return status;
fail:
    api_run_close(&r);
    free(q);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* GET /api/runs/{id}/kernels                                                 */
/* ======================================================================== */

static const struct group_opt kernel_groups[] = {
    { "name", "GROUP BY name", { NULL, NULL, COL_TEXT }, "name ASC" },
    { "op", "GROUP BY name, op", { "op", "NULLIF(op, '')", COL_TEXT }, "name ASC, op ASC" },
};

#define K_MEAN "CAST(sum(total) AS REAL) / sum(calls)"
#define K_BPS "CASE WHEN sum(bps_dur) > 0 THEN sum(bps_w) / sum(bps_dur) END"
#define K_OCC "CASE WHEN sum(occ_dur) > 0 THEN sum(occ_w) / sum(occ_dur) / 100.0 END"

static const struct sort_opt kernel_sorts[] = {
    { "total", "sum(total)", 1 }, { "calls", "sum(calls)", 1 },    { "mean", K_MEAN, 1 },
    { "min", "min(min)", 1 },     { "max", "max(max)", 1 },        { "name", "name", 0 },
    { "share", "sum(total)", 1 }, { "occupancy", K_OCC, 1 },       { "blocks_per_sm", K_BPS, 1 },
};

static const struct col kernel_cols[] = {
    { "calls", "sum(calls)", COL_INT },
    { "total_us", "sum(total)", COL_US },
    { "mean_us", K_MEAN, COL_US },
    { "min_us", "min(min)", COL_US },
    { "max_us", "max(max)", COL_US },
    { "share", "CASE WHEN :ktotal > 0 THEN CAST(sum(total) AS REAL) / :ktotal END", COL_REAL },
    { "tensor_cores", "max(tc)", COL_BOOL },
    { "communication", "max(comm)", COL_BOOL },
    { "blocks_per_sm", K_BPS, COL_REAL },
    { "achieved_occupancy", K_OCC, COL_REAL },
    { "limiter", "max(NULLIF(limiter, ''))", COL_TEXT },
};

int api_summary_kernels(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct binds b = { 0 };
    struct page pg;
    struct table t = { 0 };
    struct err e;
    size_t g, s;
    char *q = NULL;
    int64_t sums[2];
    json_t *out;
    int status;

    if (param_page(req, &pg, &e) < 0 || PICK(req, "group", kernel_groups, 0, &g, &e) < 0 ||
        PICK(req, "sort", kernel_sorts, 0, &s, &e) < 0 || param_like(req, &q, &e) < 0 ||
        api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0)
        goto fail;
    b.rank = r.rank;
    b.q = q;
    if (query_i64(&r,
                  "SELECT coalesce(sum(total), 0), coalesce(sum(CASE WHEN tc THEN total ELSE 0 END), 0)"
                  " FROM kernel_stat WHERE rank = :rank",
                  &b, sums, 2, &e) < 0)
        goto fail;
    b.ktotal = sums[0];
    t.from_where = "FROM kernel_stat WHERE rank = :rank AND (:q IS NULL OR name LIKE :q ESCAPE '\\'"
                   " OR op LIKE :q ESCAPE '\\')";
    table_grouped(&t, &kernel_groups[g], kernel_cols, sizeof kernel_cols / sizeof kernel_cols[0], &kernel_sorts[s],
                  &pg);

    out = table_head(&r, kernel_groups[g].key, kernel_sorts[s].key, &pg);
    json_object_set_new(out, "kernel_us", json_real((double)sums[0] / 1000.0));
    json_object_set_new(out, "tc_us", json_real((double)sums[1] / 1000.0));
    status = send_table(req, &r, &t, &b, &pg, "kernels", out);
    api_run_close(&r);
    free(q);
    return status;
fail:
    api_run_close(&r);
    free(q);
    return http_send_err(conn, &e);
}

/* ======================================================================== */
/* Memory: devices, the curve, allocations                                    */
/* ======================================================================== */

#define DEVICE_MAX 4096

/* A memory device: the CPU (dev_type 0, any dev_id) or GPU N: dev_id N of
 * any other device type (CUDA 1, HIP 6 ...), as analysis.c keys its peaks.
 * In SQL: dev_type BETWEEN :dt_lo AND :dt_hi. */
struct device {
    int dev_type, dev_id; /* dev_id -1 for the CPU */
};

static void device_key(const struct device *d, char *out, size_t n)
{
    if (d->dev_type == 0) snprintf(out, n, "cpu");
    else snprintf(out, n, "%d", d->dev_id);
}

static int param_device(struct http_req *req, struct device *d, int *given, struct err *e)
{
    const char *v = qparam_get(req, "device");
    long long id;

    *given = v != NULL;
    if (!v) return 0;
    if (strcmp(v, "cpu") == 0) {
        d->dev_type = 0;
        d->dev_id = -1;
        return 0;
    }
    if (qparam_int(req, "device", 0, 0, DEVICE_MAX, &id, e) < 0)
        return err_set(e, ERR_INVALID, "parameter 'device' must be 'cpu' or a GPU number from 0 to %d", DEVICE_MAX);
    d->dev_type = 1;
    d->dev_id = (int)id;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The devices that have memory samples on the rank, from its analysis
 * summary (peak_memory keys: GPU numbers, then "cpu"), as the JSON list
 * of the /memory answer. OUT *first: the default device (the first GPU,
 * else the CPU). */
static int memory_devices(struct api_run *r, const struct binds *b, json_t **out, struct device *first, struct err *e)
{
    json_t *sum, *peaks, *v, *list;
    sqlite3_stmt *cap = NULL;
    int ids[64], nids = 0, has_cpu;
    const char *k;

    if (load_summary(r, b, &sum, e) < 0) return e->code;
    list = json_array();
    peaks = json_object_get(sum, "peak_memory");
    json_object_foreach(peaks, k, v) {
        if (strcmp(k, "cpu") == 0 || !*k || strspn(k, "0123456789") != strlen(k) || strlen(k) > 4) continue;
        if (nids < (int)(sizeof ids / sizeof ids[0])) ids[nids++] = atoi(k);
    }
    xqsort(ids, (size_t)nids, sizeof ids[0], cmp_int);
    has_cpu = json_object_get(peaks, "cpu") != NULL;
    first->dev_type = nids ? 1 : 0;
    first->dev_id = nids ? ids[0] : -1;
    if (rundb_prepare(r->db, "SELECT memory_bytes FROM gpu WHERE rank = :rank AND device = :di", &cap, e) < 0) {
        json_decref(sum);
        json_decref(list);
        return e->code;
    }
    for (int i = 0; i <= nids; i++) {
        char key[16];
        json_t *p, *d;
        if (i == nids && !has_cpu) break;
        if (i < nids) snprintf(key, sizeof key, "%d", ids[i]);
        else snprintf(key, sizeof key, "cpu");
        p = json_object_get(peaks, key);
        d = json_object();
        json_object_set_new(d, "id", json_string(key));
        json_object_set_new(d, "label", i < nids ? json_sprintf("GPU %d", ids[i]) : json_string("CPU"));
        json_object_set(d, "peak_bytes", json_is_integer(json_object_get(p, "bytes")) ? json_object_get(p, "bytes")
                                                                                       : json_null());
        json_object_set_new(d, "peak_us", json_is_integer(json_object_get(p, "ts"))
                                              ? json_real((double)json_integer_value(json_object_get(p, "ts")) /
                                                          1000.0)
                                              : json_null());
        json_object_set_new(d, "memory_bytes", json_null());
        if (i < nids) {
            sqlite3_reset(cap);
            sqlite3_bind_int(cap, sqlite3_bind_parameter_index(cap, ":rank"), r->rank);
            sqlite3_bind_int(cap, sqlite3_bind_parameter_index(cap, ":di"), ids[i]);
            if (sqlite3_step(cap) == SQLITE_ROW && sqlite3_column_type(cap, 0) != SQLITE_NULL)
                json_object_set_new(d, "memory_bytes", json_integer(sqlite3_column_int64(cap, 0)));
        }
        json_array_append_new(list, d);
    }
    sqlite3_finalize(cap);
    json_decref(sum);
    *out = list;
    return 0;
}

/* 1 if the device list of memory_devices names d. */
static int device_listed(json_t *devices, const struct device *d)
{
    char key[16];
    size_t i;
    json_t *v;

    device_key(d, key, sizeof key);
    json_array_foreach(devices, i, v) {
        if (strcmp(json_string_value(json_object_get(v, "id")), key) == 0) return 1;
    }
    return 0;
}

/* Settles ?device= (default: the first GPU, else the CPU) for /memory and
 * /memory/events. ERR_NOT_FOUND when an explicit device has no samples.
 * OUT *devices (may be NULL): the device list, owned by caller. */
static int memory_device(struct http_req *req, struct api_run *r, struct binds *b, json_t **devices, struct err *e)
{
    struct device d = { 0, -1 }, first = { 0, -1 };
    int given;
    json_t *list;
    char key[16];

    if (param_device(req, &d, &given, e) < 0 || memory_devices(r, b, &list, &first, e) < 0) return e->code;
    if (!given) d = first;
    if (given && !device_listed(list, &d)) {
        json_decref(list);
        device_key(&d, key, sizeof key);
        return err_set(e, ERR_NOT_FOUND, "rank %d has no memory events for device '%s'", r->rank, key);
    }
    b->dev_type = d.dev_type;
    b->dev_id = d.dev_id;
    if (devices) *devices = list;
    else json_decref(list);
    return 0;
}

/* The window [start, end] in ns from ?start_us= and ?end_us=; when absent
 * they default to the rank's span (for the curve) or stay open (for the
 * allocation list, where def is 0). */
static int param_window(struct http_req *req, struct api_run *r, struct binds *b, int def, struct err *e)
{
    if (qparam_us(req, "start_us", &b->start, &b->has_start, e) < 0 ||
        qparam_us(req, "end_us", &b->end, &b->has_end, e) < 0)
        return e->code;
    if (b->has_start && b->has_end && b->end <= b->start)
        return err_set(e, ERR_INVALID, "parameter 'end_us' must be greater than start_us");
    if (!def) return 0;
    if (!b->has_start) b->start = b->has_end && b->end < r->t0 ? b->end - 1 : r->t0;
    if (!b->has_end) b->end = r->t1 > b->start ? r->t1 : b->start + 1;
    b->has_start = b->has_end = 1;
    return 0;
}

/* One memory sample; seq orders samples that share a timestamp. */
struct sample {
    int64_t ts, alloc, reserved;
    int64_t seq;
};

struct curve {
    json_t *ts, *alloc, *reserved; /* borrowed from the answer */
    int have;                      /* a bucket is open */
    int64_t bucket;
    struct sample first, max, last;
};

static void curve_put(struct curve *c, const struct sample *s)
{
    json_array_append_new(c->ts, json_real((double)s->ts / 1000.0));
    json_array_append_new(c->alloc, json_integer(s->alloc));
    json_array_append_new(c->reserved, s->reserved >= 0 ? json_integer(s->reserved) : json_null());
}

/* Emits the open bucket's first, max and last samples, in time order and
 * each once (first.seq <= max.seq <= last.seq). */
static void curve_flush(struct curve *c)
{
    if (!c->have) return;
    curve_put(c, &c->first);
    if (c->max.seq != c->first.seq && c->max.seq != c->last.seq) curve_put(c, &c->max);
    if (c->last.seq != c->first.seq) curve_put(c, &c->last);
    c->have = 0;
}

static void curve_add(struct curve *c, const struct sample *s, int64_t bucket)
{
    if (c->have && bucket != c->bucket) curve_flush(c);
    if (!c->have) {
        c->have = 1;
        c->bucket = bucket;
        c->first = c->max = *s;
    } else if (s->alloc > c->max.alloc) {
        c->max = *s;
    }
    c->last = *s;
}

/* Reads the curve of b's device over [b->start, b->end] into points
 * buckets; the sample in force at start (the last one before it) opens the
 * curve at start. Fills curve arrays and *peak (bytes < 0: no sample). */
static int memory_curve(struct api_run *r, const struct binds *b, long long points, struct curve *c, struct sample *peak,
                        struct err *e)
{
    static const char before_sql[] =
        "SELECT ts, total_alloc, total_reserved FROM mem WHERE rank = :rank AND ts < :start"
        " AND dev_type BETWEEN :dt_lo AND :dt_hi AND (:di IS NULL OR dev_id = :di) AND total_alloc >= 0"
        " ORDER BY ts DESC, id DESC LIMIT 1";
    static const char range_sql[] =
        "SELECT ts, total_alloc, total_reserved FROM mem WHERE rank = :rank AND ts >= :start AND ts <= :end"
        " AND dev_type BETWEEN :dt_lo AND :dt_hi AND (:di IS NULL OR dev_id = :di) AND total_alloc >= 0"
        " ORDER BY ts, id";
    sqlite3_stmt *st;
    struct sample s;
    double span = (double)(b->end - b->start);
    int64_t seq = 0;
    int rc;

    peak->alloc = -1;
    peak->ts = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (rundb_prepare(r->db, pass == 0 ? before_sql : range_sql, &st, e) < 0) return e->code;
        bind_all(st, b);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t bucket;
            s.ts = pass == 0 ? b->start : sqlite3_column_int64(st, 0);
            s.alloc = sqlite3_column_int64(st, 1);
            s.reserved = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
            s.seq = seq++;
            bucket = span > 0 ? (int64_t)((double)(s.ts - b->start) / span * (double)points) : 0;
            if (bucket >= points) bucket = points - 1;
            if (bucket < 0) bucket = 0;
            curve_add(c, &s, bucket);
            if (s.alloc > peak->alloc) *peak = s;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) return rundb_db_error(r->db, e, "run database (memory)");
    }
    curve_flush(c);
    return 0;
}

static int memory_steps(struct api_run *r, const struct binds *b, json_t *out, struct err *e)
{
    sqlite3_stmt *st;
    json_t *steps = json_array();
    int rc;

    json_object_set_new(out, "steps", steps);
    if (rundb_prepare(r->db,
                      "SELECT name, host_ts, host_ts + host_dur FROM step WHERE rank = :rank AND host_ts <= :end"
                      " AND host_ts + host_dur >= :start ORDER BY idx",
                      &st, e) < 0)
        return e->code;
    bind_all(st, b);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *s = json_object();
        json_object_set_new(s, "name", text_or_null(st, 0));
        json_object_set_new(s, "start_us", us_or_null(st, 1));
        json_object_set_new(s, "end_us", us_or_null(st, 2));
        json_array_append_new(steps, s);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : rundb_db_error(r->db, e, "run database (steps)");
}

int api_summary_memory(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct binds b = { 0 };
    struct curve c = { 0 };
    struct sample peak;
    struct err e;
    long long points;
    json_t *out = NULL, *devices = NULL, *curve;
    char key[16];

    if (qparam_int(req, "points", POINTS_DEFAULT, POINTS_MIN, POINTS_MAX, &points, &e) < 0 ||
        api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0)
        goto fail;
    b.rank = r.rank;
    if (param_window(req, &r, &b, 1, &e) < 0 || memory_device(req, &r, &b, &devices, &e) < 0) goto fail;
    out = json_object();
    device_key(&(struct device){ b.dev_type, b.dev_id }, key, sizeof key);
    json_object_set_new(out, "rank", json_integer(r.rank));
    json_object_set_new(out, "device", json_string(key));
    json_object_set_new(out, "devices", devices);
    json_object_set_new(out, "start_us", json_real((double)b.start / 1000.0));
    json_object_set_new(out, "end_us", json_real((double)b.end / 1000.0));
    curve = json_object();
    c.ts = json_array();
    c.alloc = json_array();
    c.reserved = json_array();
    json_object_set_new(curve, "ts_us", c.ts);
    json_object_set_new(curve, "allocated", c.alloc);
    json_object_set_new(curve, "reserved", c.reserved);
    json_object_set_new(out, "curve", curve);
    if (memory_curve(&r, &b, points, &c, &peak, &e) < 0 || memory_steps(&r, &b, out, &e) < 0) goto fail;
    json_object_set_new(out, "peak",
                        peak.alloc >= 0 ? json_pack("{s:I,s:f}", "bytes", (json_int_t)peak.alloc, "ts_us",
                                                    (double)peak.ts / 1000.0)
                                        : json_pack("{s:n,s:n}", "bytes", "ts_us"));
    api_run_close(&r);
    return http_send_json(conn, 200, out);
fail:
    json_decref(out);
    api_run_close(&r);
    return http_send_err(conn, &e);
}

/* ------------------------------------------------------------------------ */

static const struct sort_opt event_sorts[] = {
    { "bytes", "a.bytes", 1 },
    { "alloc", "a.alloc_ts", 1 },
    { "free", "a.free_ts", 1 },
    { "lifetime", "a.free_ts - a.alloc_ts", 1 },
    { "op", "s.s", 0 },
};

static const struct col event_cols[] = {
    { "op", "s.s", COL_TEXT },
    { "bytes", "a.bytes", COL_INT },
    { "addr", "a.addr", COL_INT },
    { "alloc_us", "a.alloc_ts", COL_US },
    { "free_us", "a.free_ts", COL_US },
    { "lifetime_us", "a.free_ts - a.alloc_ts", COL_US },
};

int api_summary_memory_events(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct api_run r = { 0 };
    struct binds b = { 0 };
    struct page pg;
    struct table t = { 0 };
    struct err e;
    size_t s;
    char *q = NULL, key[16];
    long long min_bytes;
    struct sbuf where = { 0 }, from = { 0 }, count = { 0 };
    json_t *out;
    int status;

    if (param_page(req, &pg, &e) < 0 || PICK(req, "sort", event_sorts, 0, &s, &e) < 0 ||
        qparam_int(req, "min_bytes", 0, 0, INT64_MAX / 2, &min_bytes, &e) < 0 || param_like(req, &q, &e) < 0 ||
        api_run_open(req, &r, API_RUN_SUMMARY, &e) < 0)
        goto fail;
    b.rank = r.rank;
    b.q = q;
    b.min_bytes = min_bytes;
    if (param_window(req, &r, &b, 0, &e) < 0 || memory_device(req, &r, &b, NULL, &e) < 0) goto fail;
    /* Allocations of the device whose lifetimes overlap [start, end]: one
     * never freed lives to the end, a free never allocated since the
     * beginning. Only the conditions asked for are added (fixed fragments),
     * so that the plain count reads the index alone. */
    sbuf_add(&where, " WHERE a.rank = :rank AND a.dev_type BETWEEN :dt_lo AND :dt_hi");
    if (b.dev_id >= 0) sbuf_add(&where, " AND a.dev_id = :di");
    if (b.has_end) sbuf_add(&where, " AND (a.alloc_ts IS NULL OR a.alloc_ts <= :end)");
    if (b.has_start) sbuf_add(&where, " AND (a.free_ts IS NULL OR a.free_ts >= :start)");
    if (min_bytes > 0) sbuf_add(&where, " AND abs(a.bytes) >= :min_bytes");
    sbuf_add(&from, "FROM mem_alloc a LEFT JOIN str s ON s.id = a.op AND a.op <> 0");
    sbuf_add(&from, where.p);
    if (q) sbuf_add(&from, " AND s.s LIKE :q ESCAPE '\\'");
    sbuf_add(&count, "FROM mem_alloc a");
    sbuf_add(&count, where.p);
    t.from_where = from.p;
    t.count_from = q ? from.p : count.p;
    t.group_by = "";
    table_add_cols(&t, event_cols, sizeof event_cols / sizeof event_cols[0]);
    if (!pg.order_given) pg.desc = event_sorts[s].desc;
    table_order(&t, event_sorts[s].expr, pg.desc, "a.id ASC");

    out = table_head(&r, NULL, event_sorts[s].key, &pg);
    device_key(&(struct device){ b.dev_type, b.dev_id }, key, sizeof key);
    json_object_set_new(out, "device", json_string(key));
    status = send_table(req, &r, &t, &b, &pg, "memory", out);
    goto out;
fail:
    status = http_send_err(conn, &e);
out:
    api_run_close(&r);
    free(q);
    free(where.p);
    free(from.p);
    free(count.p);
    return status;
}

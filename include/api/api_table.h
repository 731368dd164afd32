/*
 * api_table.h — what the analysis read API's handlers (api_summary.c,
 * api_summary_tables.c, api_summary_memory.c) share: the page parameters
 * (offset, limit, order, format) and ?q=, the named values a statement may
 * bind (struct api_binds), and the result tables that one column list
 * drives as JSON rows, CSV rows and the CSV header.
 *
 * Invariants: no request text reaches SQL text: values are bound
 * parameters, and group/sort/order choose among fixed SQL fragments through
 * the allow-list tables (struct api_sort_opt, struct api_group_opt). Times
 * go out in µs. Nothing is kept between requests; JSON built here is owned
 * by the caller until handed to http_send_json, CSV text to http_send_text.
 */
#ifndef TB_API_TABLE_H
#define TB_API_TABLE_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "api/api_run.h"
#include "base/err.h"

struct http_req;

#define API_TABLE_MAX_COLS 16

/* offset, limit, order, format: shared by the three tables. */
struct api_page {
    long long offset, limit;
    int order_given; /* ?order= present */
    int desc;
    int csv;
};

/* Every value any statement below may name; a statement binds the ones it
 * uses (sqlite3_bind_parameter_index is 0 for the others). */
struct api_binds {
    int rank;
    const char *q;        /* LIKE pattern or NULL */
    int dev_type, dev_id; /* api_summary_memory.c's device; dev_id < 0: any (the CPU) */
    int has_start, has_end;
    int64_t start, end; /* ns */
    long long min_bytes;
    int64_t ktotal; /* all kernel ns of the rank */
    const char *family; /* kernels: tb_kfamily(name) equal to this, or NULL */
};

/* How a result column is sent. */
enum api_col_kind {
    COL_TEXT, /* string, or null */
    COL_INT,  /* integer */
    COL_US,   /* ns (integer or real) sent as µs; null stays null */
    COL_BOOL, /* 0 / non-0 */
    COL_REAL, /* number, or null */
};

/* A result column: its JSON key and CSV header, its fixed SQL. */
struct api_col {
    const char *key; /* JSON key and CSV header */
    const char *sql; /* fixed SQL expression */
    enum api_col_kind kind;
};

/* A table query: SELECT cols from_where group_by ORDER BY order_by. */
struct api_table {
    struct api_col cols[API_TABLE_MAX_COLS];
    size_t ncols;
    const char *from_where; /* "FROM ... WHERE ..." with :named parameters */
    const char *count_from; /* the same rows for counting (no joins the count
                               does not need); NULL: from_where */
    const char *group_by;   /* "" or "GROUP BY ..." */
    char order_by[512];
};

/* Allow-list entries: a ?sort= word and its fixed SQL expression, a
 * ?group= word and its fixed GROUP BY. */
struct api_sort_opt {
    const char *key;
    const char *expr; /* fixed SQL */
    int desc;         /* default direction */
};

struct api_group_opt {
    const char *key;
    const char *group_by; /* fixed SQL */
    struct api_col extra; /* the second grouping column; key NULL for none */
    const char *tiebreak; /* fixed ORDER BY tail */
};

/* ?q=: NULL when absent, else its LIKE pattern (owned by caller). */
int api_table_param_like(struct http_req *req, char **out, struct err *e);

/* ?offset=&limit=&order=&format= into *pg. */
int api_table_param_page(struct http_req *req, struct api_page *pg, struct err *e);

/* Binds every :name of st that b has a value for (the others stay NULL). */
void api_table_bind(sqlite3_stmt *st, const struct api_binds *b);

/* Appends n columns to t (past API_TABLE_MAX_COLS they are dropped). */
void api_table_add_cols(struct api_table *t, const struct api_col *c, size_t n);

/* Adds the fixed ORDER BY: the sort expression (nulls last), then
 * tiebreak ("name ASC" ...) so pages are stable. */
void api_table_order(struct api_table *t, const char *expr, int desc, const char *tiebreak);

/* Answers a table: CSV with every row, or JSON {..., total, offset, limit,
 * rows} added to out (which is stolen in both cases). */
int api_table_send(struct http_req *req, struct api_run *r, const struct api_table *t, const struct api_binds *b,
                   const struct api_page *pg, const char *what, json_t *out);

/* One fixed statement, bound from b, whose first row fills vals[0..n) as
 * int64 (NULL -> 0). 0 when there is no row. */
int api_table_query_i64(struct api_run *r, const char *sql, const struct api_binds *b, int64_t *vals, int n, struct err *e);

/* Column i as JSON (owned by caller): ns as µs, a real, a text; or null. */
json_t *api_table_us_or_null(sqlite3_stmt *st, int i);
json_t *api_table_real_or_null(sqlite3_stmt *st, int i);
json_t *api_table_text_or_null(sqlite3_stmt *st, int i);

/* The rank's analysis summary JSON; an empty object when it has none.
 * OUT *out: owned by caller. */
int api_table_summary_json(struct api_run *r, const struct api_binds *b, json_t **out, struct err *e);

/* A name-grouped table (operators, kernels): its columns are name, the
 * group's extra column, then cols; ordered by the sort, in the sort's own
 * direction unless ?order= was given. */
void api_table_grouped(struct api_table *t, const struct api_group_opt *g, const struct api_col *cols, size_t n,
                       const struct api_sort_opt *s, struct api_page *pg);

/* The head of a table answer: {rank, group (unless NULL), sort, order}.
 * Owned by caller. */
json_t *api_table_head(const struct api_run *r, const char *group, const char *sort, const struct api_page *pg);

#endif

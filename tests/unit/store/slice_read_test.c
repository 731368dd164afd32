/* slice_read_test — the slice queries beside the cursors: a slice's
 * parent, name and kind by id; the end of the GPU op before a slice on its
 * stream (none before the stream's first); the copies of a rank's GPU
 * streams matching a name pattern, with their bytes (0 when args hold
 * none or do not parse), never another rank's; the compute kernels
 * (collectives left out) of an id range in time order; host collective
 * spans summed by name, barriers aside, and listed by name pattern; walks
 * by id inside a track (its
 * range, a probe, one slice, a range leaving one kind out); each with and
 * without name_ids; a run without its slice table is an error. */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "store/nameids.h"
#include "store/slice_read.h"

/* NULL when the tables cannot be made (the failure is counted). */
static sqlite3 *make_db(void)
{
    sqlite3 *db;
    char sql[2048];
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return NULL;
    snprintf(sql, sizeof sql,
             "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT NOT NULL);"
             "INSERT INTO str VALUES(1, 'aten::mm'), (2, 'cudaMemcpyAsync'), (3, 'gemm'),"
             " (4, 'Memcpy DtoH (Device -> Pageable)'), (5, 'ncclKernel'), (6, 'gloo:all_reduce'),"
             " (7, 'nccl:all_reduce'), (8, 'gloo:barrier');"
             "CREATE TABLE track(id INTEGER PRIMARY KEY, rank INTEGER, kind INTEGER, nslices INTEGER,"
             " first_slice INTEGER, last_slice INTEGER);"
             "INSERT INTO track VALUES(1, 0, %d, 6, 1, 6), (2, 0, %d, 4, 7, 10), (3, 1, %d, 1, 11, 11);"
             "CREATE TABLE slice(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, dur INTEGER,"
             " parent INTEGER, name INTEGER, kind INTEGER, corr INTEGER, args TEXT);"
             "INSERT INTO slice VALUES(1, 1, 100, 1000, 0, 1, %d, 0, NULL), (2, 1, 200, 50, 1, 2, %d, 7, NULL),"
             " (3, 1, 300, 20, 1, 6, %d, 0, NULL), (4, 1, 400, 10, 0, 6, %d, 0, NULL),"
             " (5, 1, 500, 100, 0, 7, %d, 0, NULL), (6, 1, 600, 5, 0, 8, %d, 0, NULL),"
             " (7, 2, 150, 50, 0, 3, %d, 0, NULL), (8, 2, 210, 30, 0, 4, %d, 7, '{\"bytes\":4096}'),"
             " (9, 2, 260, 10, 0, 5, %d, 0, NULL), (10, 2, 280, 5, 0, 4, %d, 0, 'not json'),"
             " (11, 3, 0, 5, 0, 4, %d, 0, '{\"bytes\":1}');"
             "CREATE TABLE kernel_stat(rank INTEGER, name TEXT, comm INTEGER);"
             "INSERT INTO kernel_stat VALUES(0, 'gemm', 0), (0, 'ncclKernel', 1);",
             TB_TRACK_CPU, TB_TRACK_GPU, TB_TRACK_GPU, TB_K_CPU_OP, TB_K_RUNTIME, TB_K_CPU_OP, TB_K_USER_ANNOTATION,
             TB_K_CPU_OP, TB_K_CPU_OP, TB_K_KERNEL, TB_K_MEMCPY, TB_K_KERNEL, TB_K_MEMCPY, TB_K_MEMCPY);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    CHECK_EQ_INT(rc, SQLITE_OK);
    if (rc == SQLITE_OK) return db;
    sqlite3_close(db);
    return NULL;
}

static void test_lookups(sqlite3 *db)
{
    struct slice_read *r;
    struct slice_read_up up;
    struct err e;
    int64_t end = 0;
    REQUIRE(slice_read_open(db, &r, &e) == 0);
    CHECK_EQ_INT(slice_read_up(r, 2, &up, &e), 1);
    CHECK_EQ_INT(up.parent, 1);
    CHECK_EQ_STR(up.name, "cudaMemcpyAsync");
    CHECK_EQ_INT(up.kind, TB_K_RUNTIME);
    CHECK_EQ_INT(slice_read_up(r, 1, &up, &e), 1);
    CHECK_EQ_INT(up.parent, 0);
    CHECK_EQ_INT(slice_read_up(r, 99, &up, &e), 0);
    CHECK_EQ_INT(slice_read_prev_op_end(r, 8, 7, &end, &e), 1);
    CHECK_EQ_INT(end, 200);
    CHECK_EQ_INT(slice_read_prev_op_end(r, 10, 7, &end, &e), 1);
    CHECK_EQ_INT(end, 270);
    CHECK_EQ_INT(slice_read_prev_op_end(r, 7, 7, &end, &e), 0); /* the stream's first */
    slice_read_close(r);
}

static void test_copies(sqlite3 *db)
{
    struct slice_read_copies *c;
    struct slice_read_copy row;
    struct err e;
    int64_t first = 0;
    REQUIRE(slice_read_copies_open(db, 0, "%pageable%", &c, &e) == 0);
    CHECK_EQ_INT(slice_read_copies_next(c, &row, &e), 0); /* before the first stream */
    CHECK_EQ_INT(slice_read_copies_track(c, &first, &e), 1);
    CHECK_EQ_INT(first, 7);
    CHECK_EQ_INT(slice_read_copies_next(c, &row, &e), 1);
    CHECK_EQ_INT(row.id, 8);
    CHECK_EQ_INT(row.bytes, 4096);
    CHECK_EQ_INT(row.corr, 7);
    CHECK_EQ_STR(row.name, "Memcpy DtoH (Device -> Pageable)");
    CHECK_EQ_INT(slice_read_copies_next(c, &row, &e), 1);
    CHECK_EQ_INT(row.id, 10);
    CHECK_EQ_INT(row.bytes, 0);
    CHECK_EQ_INT(slice_read_copies_next(c, &row, &e), 0);
    CHECK_EQ_INT(slice_read_copies_track(c, &first, &e), 0); /* rank 1's stream is not rank 0's */
    slice_read_copies_close(c);
    REQUIRE(slice_read_copies_open(db, 0, "%HtoD%", &c, &e) == 0);
    CHECK_EQ_INT(slice_read_copies_track(c, &first, &e), 1);
    CHECK_EQ_INT(slice_read_copies_next(c, &row, &e), 0);
    slice_read_copies_close(c);
}

static void test_spans(sqlite3 *db)
{
    struct slice_read_spans *c;
    struct stats_read_group *g;
    struct err e;
    int64_t ts, dur;
    size_t n;
    REQUIRE(slice_read_compute_open(db, 0, 1, 11, &c, &e) == 0);
    CHECK_EQ_INT(slice_read_spans_next(c, &ts, &dur, &e), 1);
    CHECK_EQ_INT(ts, 150);
    CHECK_EQ_INT(dur, 50);
    CHECK_EQ_INT(slice_read_spans_next(c, &ts, &dur, &e), 0); /* ncclKernel is a collective */
    slice_read_spans_close(c);
    REQUIRE(slice_read_compute_open(db, 0, 8, 11, &c, &e) == 0);
    CHECK_EQ_INT(slice_read_spans_next(c, &ts, &dur, &e), 0);
    slice_read_spans_close(c);

    REQUIRE(slice_read_host_colls(db, 0, &g, &n, &e) == 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_STR(g[0].name, "nccl:all_reduce");
    CHECK(g[0].total == 100);
    CHECK_EQ_STR(g[1].name, "gloo:all_reduce");
    CHECK_EQ_INT(g[1].count, 2);
    CHECK(g[1].total == 30);
    stats_read_groups_free(g, n);
    REQUIRE(slice_read_host_colls(db, 1, &g, &n, &e) == 0);
    CHECK_EQ_INT(n, 0);
    stats_read_groups_free(g, n);

    /* host spans by name pattern: name by name, each in time order */
    struct scan_slice *rows;
    const char *gloo[] = { "gloo:%" }, *both[] = { "nccl:%", "GLOO:%" };
    REQUIRE(slice_read_named_spans(db, 0, gloo, 1, &rows, &n, &e) == 0);
    CHECK_EQ_INT(n, 3);
    if (n == 3) {
        CHECK_EQ_INT(rows[0].id, 3);
        CHECK_EQ_INT(rows[1].id, 4);
        CHECK_EQ_INT(rows[1].kind, TB_K_USER_ANNOTATION);
        CHECK_EQ_INT(rows[2].id, 6); /* gloo:barrier */
        CHECK_EQ_INT(rows[2].track, 1);
        CHECK_EQ_INT(rows[2].dur, 5);
    }
    free(rows);
    REQUIRE(slice_read_named_spans(db, 0, both, 2, &rows, &n, &e) == 0);
    CHECK_EQ_INT(n, 4); /* LIKE ignores case */
    free(rows);
    REQUIRE(slice_read_named_spans(db, 1, gloo, 1, &rows, &n, &e) == 0);
    CHECK_EQ_INT(n, 0);
    free(rows);
}

static void test_ids(sqlite3 *db)
{
    struct slice_read_ids *r;
    struct scan_slice row;
    struct err e;
    int64_t first = 0, last = 0, id, ts;
    REQUIRE(slice_read_ids_open(db, TB_K_MEMCPY, &r, &e) == 0);
    CHECK_EQ_INT(slice_read_ids_track(r, 2, &first, &last, &e), 1);
    CHECK_EQ_INT(first, 7);
    CHECK_EQ_INT(last, 10);
    CHECK_EQ_INT(slice_read_ids_track(r, 99, &first, &last, &e), 0);
    CHECK_EQ_INT(first, 7); /* left as it was */
    CHECK_EQ_INT(slice_read_ids_first(r, 8, 10, &id, &ts, &e), 1);
    CHECK_EQ_INT(id, 8);
    CHECK_EQ_INT(ts, 210);
    CHECK_EQ_INT(slice_read_ids_first(r, 12, 20, &id, &ts, &e), 0);
    CHECK_EQ_INT(slice_read_ids_get(r, 8, &row, &e), 1); /* any kind */
    CHECK_EQ_INT(row.kind, TB_K_MEMCPY);
    CHECK_EQ_INT(row.corr, 7);
    CHECK_EQ_INT(slice_read_ids_get(r, 2, &row, &e), 1);
    CHECK_EQ_INT(row.parent, 1);
    CHECK_EQ_INT(row.name, 2);
    CHECK_EQ_INT(slice_read_ids_get(r, 1, &row, &e), 1);
    CHECK_EQ_INT(row.parent, 0);
    CHECK_EQ_INT(slice_read_ids_get(r, 99, &row, &e), 0);
    /* the walk leaves the copies out */
    slice_read_ids_begin(r, 7, 10);
    CHECK_EQ_INT(slice_read_ids_next(r, &row, &e), 1);
    CHECK_EQ_INT(row.id, 7);
    CHECK_EQ_INT(slice_read_ids_next(r, &row, &e), 1);
    CHECK_EQ_INT(row.id, 9);
    CHECK_EQ_INT(slice_read_ids_next(r, &row, &e), 0);
    slice_read_ids_begin(r, 1, 3);
    CHECK_EQ_INT(slice_read_ids_next(r, &row, &e), 1);
    slice_read_ids_end(r);
    slice_read_ids_begin(r, 3, 3); /* a new walk after one ended early */
    CHECK_EQ_INT(slice_read_ids_next(r, &row, &e), 1);
    CHECK_EQ_INT(row.id, 3);
    slice_read_ids_close(r);
}

static int emit(void *ctx, const struct nameids_chunk *c, struct err *e)
{
    sqlite3_stmt *ins = ctx;
    (void)e;
    sqlite3_reset(ins);
    sqlite3_bind_int64(ins, 1, c->name);
    sqlite3_bind_int64(ins, 2, c->first);
    sqlite3_bind_int64(ins, 3, c->last);
    sqlite3_bind_int64(ins, 4, c->n);
    sqlite3_bind_blob(ins, 5, c->ids, (int)c->len, SQLITE_TRANSIENT);
    return sqlite3_step(ins) == SQLITE_DONE ? 0 : ERR_DB;
}

/* db's slices by name in name_ids, as the writer keeps them. */
static void add_name_ids(sqlite3 *db)
{
    sqlite3_stmt *ins, *st;
    struct err e;
    REQUIRE(sqlite3_exec(db,
                         "CREATE TABLE name_ids(name INTEGER, first INTEGER, last INTEGER, n INTEGER, ids BLOB,"
                         " PRIMARY KEY(name, first)) WITHOUT ROWID",
                         NULL, NULL, NULL) == SQLITE_OK);
    REQUIRE(sqlite3_prepare_v2(db, "INSERT INTO name_ids VALUES(?,?,?,?,?)", -1, &ins, NULL) == SQLITE_OK);
    REQUIRE(sqlite3_prepare_v2(db, "SELECT name, id FROM slice ORDER BY id", -1, &st, NULL) == SQLITE_OK);
    struct nameids_build *b = nameids_build_new(emit, ins);
    int failed = 0;
    while (sqlite3_step(st) == SQLITE_ROW)
        failed += nameids_build_add(b, (uint32_t)sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), &e) != 0;
    failed += nameids_build_flush(b, &e) != 0;
    nameids_build_free(b);
    CHECK_EQ_INT(failed, 0);
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
}

/* Twice: a run stored before name_ids (the slices by name are scanned),
 * then one with it. */
static void test_all(void)
{
    for (int with_ids = 0; with_ids < 2; with_ids++) {
        sqlite3 *db = make_db();
        REQUIRE(db != NULL);
        if (with_ids) add_name_ids(db);
        test_lookups(db);
        test_copies(db);
        test_spans(db);
        test_ids(db);
        sqlite3_close(db);
    }
}

static void test_errors(void)
{
    sqlite3 *db;
    struct err e;
    struct slice_read *r = (struct slice_read *)1;
    struct slice_read_spans *s;
    struct stats_read_group *g;
    size_t n;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    CHECK(slice_read_open(db, &r, &e) < 0);
    CHECK(r == NULL);
    CHECK(strstr(e.msg, "no such table") != NULL);
    CHECK(slice_read_compute_open(db, 0, 1, 2, &s, &e) < 0);
    CHECK(slice_read_host_colls(db, 0, &g, &n, &e) < 0);
    struct scan_slice *rows = (struct scan_slice *)1;
    const char *pat[] = { "gloo:%" };
    CHECK(slice_read_named_spans(db, 0, pat, 1, &rows, &n, &e) < 0);
    CHECK(rows == NULL);
    struct slice_read_ids *ids = (struct slice_read_ids *)1;
    CHECK(slice_read_ids_open(db, TB_K_TRACE, &ids, &e) < 0);
    CHECK(ids == NULL);
    sqlite3_close(db);
}

int main(void)
{
    RUN(test_all);
    RUN(test_errors);
    return harness_done("slice_read");
}

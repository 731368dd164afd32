/* scan_span_test — what ran inside a span: slices by name prefix (only the
 * rank asked for; through name_ids, and through slice_name as in a run
 * stored before it), the slices nested in one on its own track (stopping at
 * its end, never crossing into the next track), the GPU ops of a launch by
 * correlation id (GPU tracks only, corr 0 never; through corr_ids, and
 * through slice_corr as in a run stored before it), names by id; and a run
 * without its slice table fails to open with the SQLite message. */
#include "rundb_fixture.h"
#include "store/scan_span.h"

static void test_walks(sqlite3 *db)
{
    struct scan_span *c;
    struct scan_slice s, in;
    struct err e;
    const char *name;
    REQUIRE(scan_span_open(db, 0, &c, &e) == 0);

    CHECK_EQ_INT(scan_span_named_begin(c, "aten::", &e), 0);
    CHECK_EQ_INT(scan_span_named_next(c, &s, &e), 1);
    CHECK_EQ_INT(s.ts, 100);
    CHECK_EQ_INT(s.dur, 1000);
    CHECK_EQ_INT(scan_span_named_next(c, &s, &e), 0); /* rank 1's aten::mm is not rank 0's */
    CHECK_EQ_INT(scan_span_name(c, s.name, &name, &e), 1);
    CHECK_EQ_STR(name, "aten::mm");
    CHECK_EQ_INT(scan_span_named_begin(c, "aten::mmx", &e), 0);
    CHECK_EQ_INT(scan_span_named_next(c, &in, &e), 0);
    CHECK_EQ_INT(scan_span_named_begin(c, "aten", &e), 0); /* a prefix, not a LIKE pattern */
    CHECK_EQ_INT(scan_span_named_next(c, &in, &e), 1);

    /* inside aten::mm [100, 1100): its two launches, then the walk ends at
     * the track's end although rank 0's GPU track follows in id order */
    CHECK_EQ_INT(scan_span_inside_begin(c, &s, &e), 0);
    CHECK_EQ_INT(scan_span_inside_next(c, &in, &e), 1);
    CHECK_EQ_INT(in.ts, 200);
    CHECK_EQ_INT(in.kind, TB_K_RUNTIME);
    CHECK_EQ_INT(in.corr, 11);
    CHECK_EQ_INT(scan_span_inside_next(c, &in, &e), 1);
    CHECK_EQ_INT(in.corr, 12);
    CHECK_EQ_INT(scan_span_inside_next(c, &in, &e), 0);
    CHECK_EQ_INT(scan_span_inside_next(c, &in, &e), 0); /* stays ended */

    /* a span that ends early holds only what starts before its end */
    struct scan_slice shorter = s;
    shorter.dur = 150; /* [100, 250) */
    CHECK_EQ_INT(scan_span_inside_begin(c, &shorter, &e), 0);
    CHECK_EQ_INT(scan_span_inside_next(c, &in, &e), 1);
    CHECK_EQ_INT(in.ts, 200);
    CHECK_EQ_INT(scan_span_inside_next(c, &in, &e), 0);

    /* the kernel of corr 11 on rank 0's GPU stream; corr 0 matches nothing */
    CHECK_EQ_INT(scan_span_ops_begin(c, 11, &e), 0);
    CHECK_EQ_INT(scan_span_ops_next(c, &in, &e), 1);
    CHECK_EQ_INT(in.kind, TB_K_KERNEL);
    CHECK_EQ_INT(in.ts, 300);
    CHECK_EQ_INT(scan_span_ops_next(c, &in, &e), 0);
    CHECK_EQ_INT(scan_span_ops_begin(c, 0, &e), 0);
    CHECK_EQ_INT(scan_span_ops_next(c, &in, &e), 0);
    CHECK_EQ_INT(scan_span_name(c, 999999, &name, &e), 0);
    /* every lookup went through an index: one per launch must not scan */
    CHECK_EQ_INT(scan_span_fullscan_steps(c), 0);
    scan_span_close(c);

    /* every rank: both aten::mm spans */
    REQUIRE(scan_span_open(db, -1, &c, &e) == 0);
    CHECK_EQ_INT(scan_span_named_begin(c, "aten::mm", &e), 0);
    int n = 0;
    while (scan_span_named_next(c, &s, &e) == 1) n++;
    CHECK_EQ_INT(n, 2);
    scan_span_close(c);
}

static void test_span(void)
{
    char *path = fixture_path("run.db");
    struct err e;
    sqlite3 *db;
    REQUIRE(fixture_run(path, 2) == 0);
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    test_walks(db);
    sqlite3_close(db);

    /* as a run stored before corr_ids: index slice_corr instead */
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM corr_ids"), q1(db, "SELECT count(*) FROM slice WHERE corr != 0"));
    REQUIRE(sqlite3_exec(db, "DROP TABLE corr_ids; CREATE INDEX slice_corr ON slice(corr) WHERE corr != 0", NULL, NULL,
                         NULL) == SQLITE_OK);
    test_walks(db);
    sqlite3_close(db);

    /* as a run stored before name_ids: slice_name instead */
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "DROP TABLE name_ids; CREATE INDEX slice_name ON slice(name, track, ts)", NULL, NULL,
                         NULL) == SQLITE_OK);
    test_walks(db);
    sqlite3_close(db);

    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "DROP TABLE slice", NULL, NULL, NULL) == SQLITE_OK);
    struct scan_span *c = NULL;
    CHECK(scan_span_open(db, 0, &c, &e) < 0);
    CHECK(c == NULL);
    CHECK(strstr(e.msg, "no such table") != NULL);
    sqlite3_close(db);
    free(path);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_span);
    fixture_cleanup();
    return harness_done("scan_span");
}

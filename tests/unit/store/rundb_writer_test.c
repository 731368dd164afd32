/* rundb_writer_test — the run database writer: interning, track identity,
 * depth and parent from unordered input, clustered ids, notes, header facts
 * and the info reader over what it wrote; flows and memory events, which go
 * in 16 rows a statement, each row as given and in order whatever batch or
 * chunk it fell in. */
#include "rundb_fixture.h"

static void test_writer(void)
{
    struct rundb_writer *w;
    struct err e;
    char *path = fixture_path("run.db");
    REQUIRE(rundb_create(path, 1 << 20, fixture_root, &w, &e) == 0);
    struct rundb_writer *w2 = NULL;
    CHECK(rundb_create(path, 1 << 20, fixture_root, &w2, &e) != 0); /* never overwrites an existing file */
    REQUIRE(rundb_begin_rank(w, 0, "rank0.json", 123, &e) == 0);
    uint32_t a = rundb_intern(w, "aten::mm", 8), b = rundb_intern(w, "aten::mm", 8);
    CHECK_EQ_INT(a, b);
    uint32_t bad = rundb_intern(w, "bad\xff\xfe", 5); /* repaired, still interned once */
    CHECK_EQ_INT(rundb_intern(w, "bad\xff\xfe", 5), bad);
    uint32_t t1 = rundb_track(w, "42", 2, "7", 1), t2 = rundb_track(w, "42", 2, "7", 1);
    uint32_t t3 = rundb_track(w, "42", 2, "8", 1);
    CHECK_EQ_INT(t1, t2);
    CHECK(t1 != t3);
    rundb_track_set_name(w, t1, "main thread", 11);
    rundb_process_set_name(w, "42", 2, "python3", 7);
    /* C inside B inside A, given in reverse order, plus a sibling */
    add(w, t1, a, 300, 10);  /* C */
    add(w, t1, a, 200, 500); /* B */
    add(w, t1, a, 100, 1000); /* A */
    add(w, t1, a, 1200, 5);  /* sibling of A */
    add(w, t3, a, 50, 1);
    rundb_note(w, TB_NOTE_REPAIRED, "negative dur: taken as 0", NULL);
    rundb_note(w, TB_NOTE_REPAIRED, "negative dur: taken as 0", NULL);
    rundb_note(w, TB_NOTE_DROPPED, "event without ts", "x");
    json_t *hdr = json_pack("{s:[{s:i,s:s}],s:{s:i}}", "deviceProperties", "id", 0, "name", "GPU X",
                            "distributedInfo", "rank", 0);
    CHECK_EQ_INT(rundb_set_rank_header(w, hdr, "kineto", 1000, &e), 0);
    json_decref(hdr);
    struct tb_rank_stats st;
    REQUIRE(rundb_finish_rank(w, &st, &e) == 0);
    CHECK_EQ_INT(st.slices, 5);
    CHECK_EQ_INT(st.repaired, 2);
    CHECK_EQ_INT(st.dropped, 1);
    CHECK(rundb_begin_rank(w, 0, "again.json", 1, &e) != 0); /* a rank only once */
    REQUIRE(rundb_close_writer(w, &e) == 0);

    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    /* ids follow (track, ts): A=1, B=2, C=3, sibling=4 on t1, then t3 */
    CHECK_EQ_INT(q1(db, "SELECT depth FROM slice WHERE ts=300"), 2);
    CHECK_EQ_INT(q1(db, "SELECT parent FROM slice WHERE ts=300"), q1(db, "SELECT id FROM slice WHERE ts=200"));
    CHECK_EQ_INT(q1(db, "SELECT parent FROM slice WHERE ts=200"), q1(db, "SELECT id FROM slice WHERE ts=100"));
    CHECK_EQ_INT(q1(db, "SELECT depth FROM slice WHERE ts=1200"), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice WHERE ts=1200 AND parent IS NULL"), 1);
    CHECK_EQ_INT(q1(db, "SELECT id FROM slice WHERE ts=100"), 1);
    CHECK_EQ_INT(q1(db, "SELECT id FROM slice WHERE ts=50"), 5);
    CHECK_EQ_INT(q1(db, "SELECT max_depth FROM track WHERE tid='7'"), 2);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM track WHERE name='main thread' AND pname='python3'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM str WHERE s='aten::mm'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM str WHERE s='bad?' || '?'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count FROM note WHERE reason LIKE 'negative dur%'"), 2);
    CHECK_EQ_INT(q1(db, "SELECT base_ns FROM rank WHERE rank=0"), 1000);
    CHECK_EQ_INT(q1(db, "SELECT t0 FROM rank"), 50);
    CHECK_EQ_INT(q1(db, "SELECT t1 FROM rank"), 1205);
    sqlite3_close(db);

    json_t *info;
    REQUIRE(rundb_info(path, &info, &e) == 0);
    json_t *r0 = json_array_get(json_object_get(info, "ranks"), 0);
    CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(r0, "device"), "name")), "GPU X");
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(r0, "distributed"), "rank")), 0);
    CHECK_EQ_INT(json_array_size(json_object_get(r0, "notes")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(info, "slices")), 5);
    json_decref(info);
    CHECK_EQ_INT(rundb_info("/nonexistent/run.db", &info, &e), ERR_NOT_FOUND);
    free(path);
}

/* Rows committed before the indexes: another connection reads them while
 * the writer still holds its transaction, and sees no index until the
 * writer closes; a second commit of rows is refused. */
static void test_commit_rows(void)
{
    struct err e;
    uint32_t t, n;
    struct rundb_writer *w;
    fixture_writer("rows.db", 0, &w, &t, &n);
    REQUIRE(w != NULL);
    char *path = fixture_path("rows.db");
    add(w, t, n, 100, 10);
    add(w, t, n, 200, 10);
    CHECK(rundb_commit_rows(w, &e) != 0); /* a rank still open */
    REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
    REQUIRE(rundb_commit_rows(w, &e) == 0);
    CHECK(rundb_commit_rows(w, &e) != 0);
    sqlite3 *db;
    REQUIRE(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice"), 2);
    /* the slices by name are committed with the rows, before the lookups by corr */
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'slice_corr'"), 0);
    CHECK_EQ_INT(q1(db, "SELECT n FROM name_ids WHERE name = (SELECT id FROM str WHERE s = 'op')"), 2);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'corr_ids'"), 0);
    REQUIRE(rundb_close_writer(w, &e) == 0);
    /* no slice with a correlation id: corr_ids empty, no index */
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'corr_ids'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM corr_ids"), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'slice_corr'"), 0);
    sqlite3_close(db);
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice WHERE name = (SELECT id FROM str WHERE s = 'op')"), 2);
    sqlite3_close(db);
    free(path);
}

/* 40 000 flows and 20 000 memory events between slices: several chunks of
 * ops, batches cut at each chunk's end. Every row read back in order. */
static void test_flows_mems(void)
{
    struct rundb_writer *w;
    struct err e;
    uint32_t t, n;
    fixture_writer("flows.db", 3, &w, &t, &n);
    REQUIRE(w != NULL);
    char *path = fixture_path("flows.db");
    uint32_t cat = rundb_intern(w, "ac2g", 4);
    int failed = 0;
    for (int i = 0; i < 40000; i++) {
        char fid[24];
        int len = snprintf(fid, sizeof fid, "%d", i * 7);
        struct tb_flow f = { t, cat, n, fid, (size_t)len, "stf"[i % 3], i % 2 ? 'e' : 0, 1000 + i };
        failed += rundb_add_flow(w, &f, &e) != 0;
        if (i < 20000) {
            struct tb_mem m = { t, 2000 + i, 1, i % 4, 4096 + i, i % 5 ? 512 : -512, i % 7 ? i : -1, i % 3 ? 2 * i : -1 };
            failed += rundb_add_mem(w, &m, &e) != 0;
        }
        if (i % 100 == 0) add(w, t, n, i, 1);
    }
    CHECK_EQ_INT(failed, 0);
    REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
    REQUIRE(rundb_close_writer(w, &e) == 0);
    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    sqlite3_stmt *st;
    int bad = 0, rows = 0;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT id, rank, cat, name, fid, ph, bp, track, ts FROM flow ORDER BY id", -1, &st,
                               NULL) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i = rows++;
        char fid[24], ph[2] = { "stf"[i % 3], 0 };
        snprintf(fid, sizeof fid, "%d", i * 7);
        const char *bp = (const char *)sqlite3_column_text(st, 6);
        bad += sqlite3_column_int64(st, 0) != i + 1 || sqlite3_column_int(st, 1) != 3 ||
               sqlite3_column_int64(st, 2) != cat || sqlite3_column_int64(st, 3) != n ||
               strcmp((const char *)sqlite3_column_text(st, 4), fid) != 0 ||
               strcmp((const char *)sqlite3_column_text(st, 5), ph) != 0 || (i % 2 ? !bp || strcmp(bp, "e") : bp != NULL) ||
               sqlite3_column_int64(st, 7) != t || sqlite3_column_int64(st, 8) != 1000 + i;
    }
    sqlite3_finalize(st);
    CHECK_EQ_INT(rows, 40000);
    CHECK_EQ_INT(bad, 0);
    rows = bad = 0;
    REQUIRE(sqlite3_prepare_v2(db,
                               "SELECT id, rank, track, ts, dev_type, dev_id, addr, bytes, total_alloc, total_reserved"
                               " FROM mem ORDER BY id",
                               -1, &st, NULL) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int i = rows++;
        bad += sqlite3_column_int64(st, 0) != i + 1 || sqlite3_column_int(st, 1) != 3 ||
               sqlite3_column_int64(st, 2) != t || sqlite3_column_int64(st, 3) != 2000 + i ||
               sqlite3_column_int(st, 4) != 1 || sqlite3_column_int(st, 5) != i % 4 ||
               sqlite3_column_int64(st, 6) != 4096 + i || sqlite3_column_int64(st, 7) != (i % 5 ? 512 : -512) ||
               (i % 7 ? sqlite3_column_int64(st, 8) != i : sqlite3_column_type(st, 8) != SQLITE_NULL) ||
               (i % 3 ? sqlite3_column_int64(st, 9) != 2 * i : sqlite3_column_type(st, 9) != SQLITE_NULL);
    }
    sqlite3_finalize(st);
    CHECK_EQ_INT(rows, 20000);
    CHECK_EQ_INT(bad, 0);
    sqlite3_close(db);
    free(path);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_writer);
    RUN(test_commit_rows);
    RUN(test_flows_mems);
    fixture_cleanup();
    return harness_done("rundb_writer_test");
}

/* timeline_lod_test — the slices' level-of-detail builder fed row by row:
 * at every kept level each slice counts once (the n of a depth add up to
 * its slices, a long slice stands alone), and a track longer than the
 * builder holds or whose ids skip (read again from the slice table) gives
 * the very rows of one held whole; the kept levels are those the rows per
 * level, counted in SQL, call for. */
#include "timeline_fixture.h"
#include "derive/timeline_lod.h"

/* Empties lod and lod_level of db and rebuilds them with a builder holding
 * hold slices, pushed from the test's own read of the slices. */
static int rebuild(sqlite3 *db, size_t hold, struct err *e)
{
    struct timeline_lod *b = NULL;
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_exec(db, "BEGIN; DELETE FROM lodpack; DELETE FROM lod_level", NULL, NULL, NULL) != SQLITE_OK) return -1;
    rc = timeline_lod_begin(db, hold, &b, e);
    if (rc == 0 && sqlite3_prepare_v2(db, "SELECT id, track, ts, dur, depth, name FROM slice ORDER BY id", -1, &st,
                                      NULL) != SQLITE_OK)
        rc = -1;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        struct timeline_slice s = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3), 0,
                                    (uint32_t)sqlite3_column_int64(st, 5), sqlite3_column_int(st, 4) };
        rc = timeline_lod_push(b, &s, e);
    }
    sqlite3_finalize(st);
    if (rc == 0) rc = timeline_lod_end(b, e);
    timeline_lod_free(b);
    sqlite3_exec(db, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* The levels choose_levels keeps for track t, from rows per level counted
 * in SQL (a long slice a row, else one per depth and bucket), written into
 * kept; returns how many. */
static int levels_by_sql(sqlite3 *db, int64_t t, int *kept)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT coalesce(max_depth, 0) + 1 FROM track WHERE id = %lld", (long long)t);
    int64_t ndepth = one(db, sql);
    snprintf(sql, sizeof sql, "SELECT coalesce(nslices, 0) FROM track WHERE id = %lld", (long long)t);
    int64_t prev = one(db, sql) / 2;
    int nk = 0, lastk = 0;
    for (int L = 2; L < TIMELINE_NLEV; L++) {
        snprintf(sql, sizeof sql,
                 "SELECT (SELECT count(*) FROM slice WHERE track = %lld AND depth BETWEEN 0 AND %lld AND dur >= (1 << %d))"
                 " + (SELECT count(*) FROM (SELECT DISTINCT depth, ts >> %d FROM slice WHERE track = %lld"
                 " AND depth BETWEEN 0 AND %lld AND dur < (1 << %d)))",
                 (long long)t, (long long)ndepth - 1, L, L, (long long)t, (long long)ndepth - 1, L);
        int64_t rows = one(db, sql);
        if (rows * 2 > prev || L < lastk + 2) continue;
        kept[nk++] = L;
        prev = rows;
        lastk = L;
        if (rows <= ndepth) break;
    }
    return nk;
}

static void test_lod(void)
{
    struct err e;
    sqlite3 *ro = import_threads(0);
    REQUIRE(ro != NULL);
    char *src = xstrdup(sqlite3_db_filename(ro, "main"));
    sqlite3_close(ro);
    char *a = xasprintf("%s/held.db", root), *bp = xasprintf("%s/spilled.db", root);
    REQUIRE(fsutil_copy(src, a, &e) == 0);
    REQUIRE(fsutil_copy(src, bp, &e) == 0);
    sqlite3 *da, *dbb;
    REQUIRE(sqlite3_open(a, &da) == SQLITE_OK);
    REQUIRE(sqlite3_open(bp, &dbb) == SQLITE_OK);
    CHECK_EQ_INT(rebuild(da, TIMELINE_LOD_HOLD, &e), 0);
    CHECK_EQ_INT(rebuild(dbb, 2, &e), 0);
    sqlite3_close(dbb);
    /* the checks below read the rows; the chunks are compared whole */
    CHECK(unpack_lod(da, "temp") > 0);

    /* two tracks with levels, each level many times smaller than the slices */
    CHECK_EQ_INT(one(da, "SELECT count(DISTINCT track) FROM lod_level"), 2);
    CHECK(one(da, "SELECT count(*) FROM lod") > 0);
    CHECK(one(da, "SELECT count(*) FROM lod") * 2 < one(da, "SELECT count(*) FROM slice"));
    /* at every kept level and depth, the n add up to the slices */
    CHECK_EQ_INT(one(da, "SELECT count(*) FROM lod_level l JOIN (SELECT track, depth, count(*) c FROM slice"
                         " GROUP BY track, depth) s ON s.track = l.track"
                         " WHERE s.c != (SELECT coalesce(sum(n), 0) FROM lod WHERE track = l.track"
                         " AND level = l.level AND depth = s.depth)"),
                 0);
    /* a slice of a bucket or longer is a row of its own */
    CHECK_EQ_INT(one(da, "SELECT count(*) FROM lod d JOIN slice s ON s.id = d.fid WHERE s.dur >= (1 << d.level)"
                         " AND (d.n != 1 OR d.ts != s.ts OR d.te != s.ts + s.dur OR d.name != s.name)"),
                 0);
    CHECK(one(da, "SELECT count(*) FROM lod d JOIN slice s ON s.id = d.fid WHERE s.dur >= (1 << d.level)") > 0);
    /* merged rows span their slices: the first start, the latest end */
    CHECK_EQ_INT(one(da, "SELECT count(*) FROM lod WHERE n > 1 AND (te < ts + ldur OR ldur <= 0 AND te < ts)"), 0);

    /* each track keeps the levels its rows per level call for, counted
     * here in SQL instead of slice by slice */
    sqlite3_stmt *tq;
    REQUIRE(sqlite3_prepare_v2(da, "SELECT DISTINCT track FROM slice ORDER BY 1", -1, &tq, NULL) == SQLITE_OK);
    int ntracks = 0;
    while (sqlite3_step(tq) == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(tq, 0);
        int want[TIMELINE_NLEV], nw = levels_by_sql(da, t, want);
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM lod_level WHERE track = %lld", (long long)t);
        CHECK_EQ_INT(one(da, sql), nw);
        for (int k = 0; k < nw; k++) {
            snprintf(sql, sizeof sql, "SELECT level FROM lod_level WHERE track = %lld ORDER BY level LIMIT 1 OFFSET %d",
                     (long long)t, k);
            CHECK_EQ_INT(one(da, sql), want[k]);
        }
        ntracks += nw > 0;
    }
    sqlite3_finalize(tq);
    CHECK_EQ_INT(ntracks, 2);

    /* read again from the table (hold 2) equals held whole, and so does the
     * build at ingest (one scan for the LOD and the aggregates) */
    static const char *const tables[] = { "lodpack", "lod_level" };
    CHECK_EQ_INT(differ_all(da, bp, tables, 2), 0);
    CHECK_EQ_INT(differ_all(da, src, tables, 2), 0);
    sqlite3_close(da);
    free(src);
    free(a);
    free(bp);
}

/* Pushes n slices of 5 ns every 10 ns (the track table says 100) to a
 * builder holding hold of them (ids from 1, skipping 10 after the 50th when
 * gap), drops the slice table
 * and ends: 0, the error of reading the track again (< 0), or 1 when the
 * test itself fails. */
static int end_without_table(int n, size_t hold, int gap, struct err *e)
{
    sqlite3 *db;
    struct timeline_lod *b = NULL;
    int rc = 1;

    if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 1;
    if (sqlite3_exec(db,
                     "CREATE TABLE track(id INTEGER PRIMARY KEY, max_depth INTEGER, nslices INTEGER);"
                     "INSERT INTO track VALUES(1, 0, 100);"
                     TIMELINE_LOD_SCHEMA
                     "CREATE TABLE slice(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, dur INTEGER,"
                     " depth INTEGER, name INTEGER)",
                     NULL, NULL, NULL) == SQLITE_OK &&
        timeline_lod_begin(db, hold, &b, e) == 0) {
        rc = 0;
        for (int i = 0; i < n && rc == 0; i++) {
            struct timeline_slice s = { i + 1 + (gap && i >= 50 ? 10 : 0), 1, i * 10, 5, 0, 7, 0 };
            rc = timeline_lod_push(b, &s, e);
        }
        if (rc == 0 && sqlite3_exec(db, "DROP TABLE slice", NULL, NULL, NULL) != SQLITE_OK) rc = 1;
        if (rc == 0) rc = timeline_lod_end(b, e);
        if (rc == 0 && one(db, "SELECT count(*) FROM lodpack") <= 0) rc = 1;
    }
    timeline_lod_free(b);
    sqlite3_close(db);
    return rc;
}

/* A track the builder holds whole is not read again; one longer than the
 * hold (said by the track table, or found on the way), or whose ids skip,
 * is, and a slice table that cannot be read then fails with a message. */
static void test_reread(void)
{
    struct err e;
    CHECK_EQ_INT(end_without_table(100, 1000, 0, &e), 0);
    CHECK(end_without_table(100, 4, 0, &e) < 0);
    CHECK(strstr(e.msg, "no such table") != NULL);
    CHECK(end_without_table(150, 100, 0, &e) < 0);
    CHECK(strstr(e.msg, "no such table") != NULL);
    CHECK(end_without_table(100, 1000, 1, &e) < 0);
    CHECK(strstr(e.msg, "no such table") != NULL);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_lod);
    RUN(test_reread);
    fixture_end();
    return harness_done("timeline_lod");
}

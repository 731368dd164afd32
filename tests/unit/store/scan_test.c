/* scan_test — the slice cursors: track selection, kind sets, (track, ts)
 * order, per-track stepping, the slice id range, the launch call by
 * correlation id (looked up or preloaded, ties included), a table's presence; a track's id range, a device's GPU
 * streams, the range cursor, names by id; and the error path: a run
 * whose slice table is gone or whose pages are garbled makes the cursor
 * return < 0 with e filled, never a quiet end of the rows. */
#include "rundb_fixture.h"
#include "store/scan.h"

#include <fcntl.h>
#include <sys/stat.h>

static sqlite3 *open_run(const char *path)
{
    sqlite3 *db = NULL;
    struct err e;
    if (rundb_open_ro(path, &db, &e) != 0) return NULL;
    return db;
}

/* Counts rows of a cursor; OUT *rc: the step that ended it. */
static int count_rows(struct scan_slices *c, int *rc, struct err *e)
{
    struct scan_slice s;
    int n = 0;
    while ((*rc = scan_slices_next(c, &s, e)) == 1) n++;
    return n;
}

static void test_cursors(sqlite3 *db)
{
    struct scan_slices *c;
    struct scan_slice s;
    struct err e;
    int rc;
    /* GPU ops of rank 1: kernel, memcpy, kernel in time order */
    REQUIRE(scan_slices_open(db, 1, SCAN_TRACKS_GPU, SCAN_GPU_OPS, &c, &e) == 0);
    CHECK_EQ_INT(scan_slices_next(c, &s, &e), 1);
    CHECK_EQ_INT(s.kind, TB_K_KERNEL);
    CHECK_EQ_INT(s.ts, 300);
    CHECK_EQ_INT(s.corr, 11);
    CHECK_EQ_INT(scan_slices_next(c, &s, &e), 1);
    CHECK_EQ_INT(s.kind, TB_K_MEMCPY);
    CHECK_EQ_INT(scan_slices_next(c, &s, &e), 1);
    CHECK_EQ_INT(s.ts, 500);
    CHECK_EQ_INT(scan_slices_next(c, &s, &e), 0);
    CHECK_EQ_INT(scan_slices_next(c, &s, &e), 0); /* stays at the end */
    scan_slices_close(c);

    /* launches on the host tracks: two per rank, with their parent */
    REQUIRE(scan_slices_open(db, 0, SCAN_TRACKS_HOST, SCAN_LAUNCHES, &c, &e) == 0);
    CHECK_EQ_INT(scan_slices_next(c, &s, &e), 1);
    CHECK_EQ_INT(s.kind, TB_K_RUNTIME);
    CHECK(s.parent > 0);
    CHECK_EQ_INT(s.parent, q1(db, "SELECT min(id) FROM slice WHERE kind = 1 AND track IN "
                                  "(SELECT id FROM track WHERE rank = 0)"));
    CHECK_EQ_INT(scan_slices_next(c, &s, &e), 1);
    CHECK_EQ_INT(s.corr, 12);
    CHECK_EQ_INT(scan_slices_next(c, &s, &e), 0);
    scan_slices_close(c);

    /* every rank, every track, every kind */
    REQUIRE(scan_slices_open(db, -1, SCAN_TRACKS_ALL, SCAN_KINDS_ALL, &c, &e) == 0);
    CHECK_EQ_INT(count_rows(c, &rc, &e), 12);
    CHECK_EQ_INT(rc, 0);
    scan_slices_close(c);

    /* track by track: the CPU op only, on rank 1's one host track */
    REQUIRE(scan_slices_open(db, 1, SCAN_TRACKS_HOST, SCAN_KIND(TB_K_CPU_OP), &c, &e) == 0);
    int64_t track = 0;
    CHECK_EQ_INT(scan_slices_step(c, &s, &e), 0); /* before the first track */
    CHECK_EQ_INT(scan_slices_track(c, &track, &e), 1);
    CHECK(track > 0);
    int64_t lo = 0, hi = 0;
    scan_slices_range(c, &lo, &hi); /* the host track's three slices */
    CHECK_EQ_INT(hi - lo, 2);
    CHECK_EQ_INT(scan_slices_step(c, &s, &e), 1);
    CHECK_EQ_INT(s.track, track);
    CHECK_EQ_INT(s.id, lo);
    CHECK_EQ_INT(s.dur, 1000);
    CHECK_EQ_INT(scan_slices_step(c, &s, &e), 0);
    CHECK_EQ_INT(scan_slices_track(c, &track, &e), 0);
    scan_slices_close(c);

    int64_t first, last;
    CHECK_EQ_INT(scan_slice_range(db, 1, &first, &last, &e), 1);
    CHECK_EQ_INT(last - first, 5);
    CHECK_EQ_INT(scan_slice_range(db, 9, &first, &last, &e), 0);
    CHECK(first > last);

    /* the launch of rank 1's first kernel (corr 11), by correlation id */
    struct scan_launch *l;
    REQUIRE(scan_launch_open(db, 1, &l, &e) == 0);
    CHECK_EQ_INT(scan_launch_of(l, 11, &s, &e), 1);
    CHECK_EQ_INT(s.id, q1(db, "SELECT s.id FROM slice s JOIN track t ON t.id = s.track"
                              " WHERE s.corr = 11 AND s.kind IN (4, 5) AND t.rank = 1"));
    CHECK(s.kind == TB_K_RUNTIME || s.kind == TB_K_DRIVER);
    CHECK_EQ_INT(s.corr, 11);
    CHECK_EQ_INT(scan_launch_of(l, 0, &s, &e), 0);     /* no correlation */
    CHECK_EQ_INT(scan_launch_of(l, 99999, &s, &e), 0); /* none */
    scan_launch_close(l);

    CHECK_EQ_INT(scan_has_table(db, "slice", &e), 1);
    CHECK_EQ_INT(scan_has_table(db, "no_such", &e), 0);
}

/* The store's other readers over the same run: a track's id range, the
 * GPU streams of a device, a range cursor with a kind set, names by id. */
static void test_readers(sqlite3 *db)
{
    struct err e;
    struct scan_slice s;
    int64_t gpu = q1(db, "SELECT id FROM track WHERE rank = 1 AND kind = 1");
    int64_t dev = q1(db, "SELECT coalesce(device, 0) FROM track WHERE id = (SELECT id FROM track WHERE rank = 1"
                         " AND kind = 1)");
    int64_t first = 0, last = 0;
    CHECK_EQ_INT(scan_track_range(db, gpu, &first, &last, &e), 1);
    CHECK_EQ_INT(last - first, 2);
    CHECK_EQ_INT(scan_track_range(db, 99999, &first, &last, &e), 0);

    struct scan_ids *ids;
    size_t n;
    REQUIRE(scan_device_streams(db, 1, (int)dev, &ids, &n, &e) == 0);
    CHECK_EQ_INT(n, 1); /* the rank's one stream, not rank 0's */
    CHECK_EQ_INT(ids[0].first, q1(db, "SELECT first_slice FROM track WHERE rank = 1 AND kind = 1"));
    free(ids);
    REQUIRE(scan_device_streams(db, 7, 0, &ids, &n, &e) == 0);
    CHECK_EQ_INT(n, 0);
    free(ids);

    /* the kernels of the stream, the copy between them left out */
    struct scan_range *r;
    REQUIRE(scan_range_open(db, SCAN_KIND(TB_K_KERNEL), &r, &e) == 0);
    CHECK_EQ_INT(scan_range_next(r, &s, &e), 0); /* no range yet */
    scan_range_set(r, first, last);
    CHECK_EQ_INT(scan_range_next(r, &s, &e), 1);
    CHECK_EQ_INT(s.ts, 300);
    CHECK_EQ_INT(scan_range_next(r, &s, &e), 1);
    CHECK_EQ_INT(s.ts, 500);
    CHECK_EQ_INT(scan_range_next(r, &s, &e), 0);
    scan_range_set(r, first, first); /* over again, on a new range */
    CHECK_EQ_INT(scan_range_next(r, &s, &e), 1);
    CHECK_EQ_INT(s.id, first);
    scan_range_close(r);

    struct scan_names *nm;
    const char *text;
    REQUIRE(scan_names_open(db, &nm, &e) == 0);
    CHECK_EQ_INT(scan_name(nm, s.name, &text, &e), 1);
    CHECK_EQ_STR(text, "gemm");
    CHECK_EQ_INT(scan_name(nm, 999999, &text, &e), 0);
    CHECK(text == NULL);
    scan_names_close(nm);
}

static void test_dropped_table(const char *path)
{
    sqlite3 *db;
    struct err e;
    struct scan_slices *c = NULL;
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "DROP TABLE slice", NULL, NULL, NULL) == SQLITE_OK);
    CHECK(scan_slices_open(db, 0, SCAN_TRACKS_ALL, SCAN_KINDS_ALL, &c, &e) < 0);
    CHECK(c == NULL);
    CHECK(strstr(e.msg, "no such table") != NULL);
    struct scan_launch *l = NULL;
    CHECK(scan_launch_open(db, 0, &l, &e) < 0);
    CHECK(l == NULL);
    struct scan_range *r = (struct scan_range *)1;
    CHECK(scan_range_open(db, SCAN_KINDS_ALL, &r, &e) < 0);
    CHECK(r == NULL);
    sqlite3_close(db);
}

/* Garbles the first page of the slice table. */
static int garble_slices(const char *path)
{
    sqlite3 *db = open_run(path);
    if (!db) return -1;
    int64_t root = q1(db, "SELECT rootpage FROM sqlite_master WHERE name = 'slice'");
    int64_t psize = q1(db, "PRAGMA page_size");
    sqlite3_close(db);
    int fd = open(path, O_WRONLY);
    if (fd < 0 || root < 2) return -1;
    char junk[512];
    memset(junk, 0x5a, sizeof junk);
    ssize_t n = pwrite(fd, junk, sizeof junk, (off_t)((root - 1) * psize));
    close(fd);
    return n == (ssize_t)sizeof junk ? 0 : -1;
}

static void test_garbled(const char *path)
{
    struct err e;
    struct scan_slices *c;
    REQUIRE(garble_slices(path) == 0);
    sqlite3 *db = open_run(path);
    REQUIRE(db != NULL);
    REQUIRE(scan_slices_open(db, -1, SCAN_TRACKS_ALL, SCAN_KINDS_ALL, &c, &e) == 0);
    int rc;
    count_rows(c, &rc, &e);
    CHECK_EQ_INT(rc, ERR_DAMAGED);
    CHECK(strstr(e.msg, "run r1 is damaged") != NULL);
    scan_slices_close(c);
    sqlite3_close(db);
}

/* The earliest launch with this corr, through both paths of scan_launch:
 * point lookups and the preloaded table answer alike. */
static void launch_both(sqlite3 *db, int rank, int64_t corr, int want, int64_t ts, int64_t dur)
{
    struct scan_launch *l[3];
    struct scan_slice s[3];
    struct err e;
    REQUIRE(scan_launch_open(db, rank, &l[0], &e) == 0 && scan_launch_open(db, rank, &l[1], &e) == 0 &&
            scan_launch_open(db, rank, &l[2], &e) == 0);
    CHECK_EQ_INT(scan_launch_preload(l[1], SCAN_LAUNCH_PRELOAD_MAX, 0, &e), 1);
    /* too many to hold: looked up one by one */
    CHECK_EQ_INT(scan_launch_preload(l[2], 1, SCAN_LAUNCH_PRELOAD_MAX, &e), 0);
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(scan_launch_of(l[k], corr, &s[k], &e), want);
        if (want == 1) {
            CHECK_EQ_INT(s[k].ts, ts);
            CHECK_EQ_INT(s[k].dur, dur);
            CHECK_EQ_INT(s[k].corr, corr);
            CHECK(s[k].kind == TB_K_RUNTIME || s[k].kind == TB_K_DRIVER);
        }
        scan_launch_close(l[k]);
    }
    if (want == 1) CHECK_EQ_INT(s[0].id, s[1].id);
    if (want == 1) CHECK_EQ_INT(s[2].id, s[1].id);
}

/* Several launch calls share a correlation id: the earliest, then the
 * longest, then the first stored, of the rank's own, whether looked up or
 * preloaded. Each rank's host track holds launches of corr 11 and 12. */
/* corr_ids made to follow slice.corr changed by hand, as the writer fills
 * it (a run stored before it has none: nothing to do). */
static void corr_sync(sqlite3 *db)
{
    sqlite3_exec(db, "DELETE FROM corr_ids; INSERT INTO corr_ids SELECT corr, id FROM slice WHERE corr != 0", NULL, NULL,
                 NULL);
}

static void test_launch_ties(const char *path)
{
    sqlite3 *db;
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK);
    const char *launches = "SELECT s.id FROM slice s JOIN track t ON t.id = s.track WHERE t.rank = %d AND s.kind = 4"
                           " ORDER BY s.id LIMIT 1 OFFSET %d";
    char sql[512];
    int64_t id[2][2];
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++) {
            snprintf(sql, sizeof sql, launches, r, k);
            id[r][k] = q1(db, sql);
        }
    /* rank 1: both at 200, the second longer; rank 0: one earlier still */
    snprintf(sql, sizeof sql,
             "UPDATE slice SET corr = 77, ts = 200, dur = 10 WHERE id = %lld;"
             "UPDATE slice SET corr = 77, ts = 200, dur = 30 WHERE id = %lld;"
             "UPDATE slice SET corr = 77, ts = 50, dur = 5 WHERE id = %lld;"
             "UPDATE slice SET corr = 79 WHERE kind = 6 AND corr = 12",
             (long long)id[1][0], (long long)id[1][1], (long long)id[0][0]);
    REQUIRE(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    corr_sync(db);
    launch_both(db, 1, 77, 1, 200, 30); /* rank 0's earlier call is not rank 1's */
    launch_both(db, 0, 77, 1, 50, 5);
    launch_both(db, 1, 79, 0, 0, 0); /* a kernel is no launch call */
    launch_both(db, 1, 12345, 0, 0, 0);
    /* equal time and length: the first stored, by both paths */
    snprintf(sql, sizeof sql, "UPDATE slice SET corr = 78, ts = 200, dur = 10 WHERE id IN (%lld, %lld)",
             (long long)id[1][0], (long long)id[1][1]);
    REQUIRE(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    corr_sync(db);
    launch_both(db, 1, 78, 1, 200, 10);
    struct scan_launch *l;
    struct scan_slice s;
    struct err e;
    REQUIRE(scan_launch_open(db, 1, &l, &e) == 0);
    const struct scan_slice *rows;
    size_t n;
    CHECK_EQ_INT(scan_launch_rows(l, &rows, &n), 0); /* not preloaded */
    CHECK_EQ_INT(scan_launch_preload(l, SCAN_LAUNCH_PRELOAD_MAX, 0, &e), 1);
    CHECK_EQ_INT(scan_launch_of(l, 78, &s, &e), 1);
    CHECK_EQ_INT(s.id, id[1][0] < id[1][1] ? id[1][0] : id[1][1]);
    /* the rank's launch calls as its cursor gives them, on its host track */
    CHECK_EQ_INT(scan_launch_rows(l, &rows, &n), 1);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(rows[0].id, id[1][0]);
    CHECK_EQ_INT(rows[1].id, id[1][1]);
    CHECK_EQ_INT(scan_launch_on_host(l, rows[0].track), 1);
    CHECK_EQ_INT(scan_launch_on_host(l, q1(db, "SELECT id FROM track WHERE rank = 1 AND kind = 1")), 0);
    CHECK_EQ_INT(scan_launch_on_host(l, q1(db, "SELECT id FROM track WHERE rank = 0 AND kind != 1")), 0);
    scan_launch_close(l);
    sqlite3_close(db);
}

/* The host slices a launch preload keeps (scan_launch_acts): per track of
 * the rank, the SCAN_HOST_ACTS rows a range cursor over the track reads,
 * in the same order; none past amax, the launches preloaded all the same. */
static void test_launch_acts(sqlite3 *db)
{
    struct err e;
    struct scan_launch *l;
    struct scan_range *rg;
    const struct scan_brief *rows;
    struct scan_slice row;
    size_t n, total = 0, held_tracks = 0;
    int64_t track, first, last;
    REQUIRE(scan_range_open(db, SCAN_HOST_ACTS, &rg, &e) == 0);
    for (int rank = 0; rank < 2; rank++) {
        REQUIRE(scan_launch_open(db, rank, &l, &e) == 0);
        CHECK_EQ_INT(scan_launch_acts(l, 0, &track, &rows, &n), 0); /* not preloaded */
        CHECK_EQ_INT(scan_launch_preload(l, SCAN_LAUNCH_PRELOAD_MAX, 100000, &e), 1);
        for (size_t i = 0; scan_launch_acts(l, i, &track, &rows, &n); i++) {
            char sql[128];
            snprintf(sql, sizeof sql, "SELECT count(*) FROM track WHERE id = %lld AND rank = %d", (long long)track,
                     rank);
            CHECK_EQ_INT(q1(db, sql), 1);
            held_tracks++;
            size_t k = 0;
            if (scan_track_range(db, track, &first, &last, &e) == 1) {
                scan_range_set(rg, first, last);
                for (; scan_range_next(rg, &row, &e) == 1; k++) {
                    if (k >= n) continue;
                    CHECK_EQ_INT(rows[k].ts, row.ts);
                    CHECK_EQ_INT(rows[k].dur, row.dur);
                    CHECK_EQ_INT(rows[k].name, row.name);
                    CHECK_EQ_INT(rows[k].kind, row.kind);
                }
            }
            CHECK_EQ_INT(k, n);
            total += n;
        }
        scan_launch_close(l);
        /* past amax: none kept */
        REQUIRE(scan_launch_open(db, rank, &l, &e) == 0);
        CHECK_EQ_INT(scan_launch_preload(l, SCAN_LAUNCH_PRELOAD_MAX, 1, &e), 1);
        CHECK_EQ_INT(scan_launch_acts(l, 0, &track, &rows, &n), 0);
        const struct scan_slice *lr;
        CHECK_EQ_INT(scan_launch_rows(l, &lr, &n), 1);
        CHECK(n > 0);
        scan_launch_close(l);
    }
    CHECK_EQ_INT(held_tracks, q1(db, "SELECT count(*) FROM track WHERE rank IN (0, 1)"));
    /* what the preload sizes itself by: the slices of the rank's tracks */
    int64_t n1 = -1, nh = -1, ng = -1, nall = -1;
    CHECK_EQ_INT(scan_slices_count(db, 1, SCAN_TRACKS_ALL, &n1, &e), 0);
    CHECK_EQ_INT(n1, q1(db, "SELECT count(*) FROM slice s JOIN track t ON t.id = s.track WHERE t.rank = 1"));
    CHECK_EQ_INT(scan_slices_count(db, 1, SCAN_TRACKS_HOST, &nh, &e), 0);
    CHECK_EQ_INT(scan_slices_count(db, 1, SCAN_TRACKS_GPU, &ng, &e), 0);
    CHECK_EQ_INT(ng, q1(db, "SELECT count(*) FROM slice s JOIN track t ON t.id = s.track WHERE t.rank = 1"
                            " AND t.kind = 1"));
    CHECK(nh > 0 && ng > 0);
    CHECK_EQ_INT(nh + ng, n1);
    CHECK_EQ_INT(scan_slices_count(db, -1, SCAN_TRACKS_ALL, &nall, &e), 0);
    CHECK_EQ_INT(nall, q1(db, "SELECT count(*) FROM slice"));
    CHECK_EQ_INT(scan_slices_count(db, 7, SCAN_TRACKS_ALL, &nall, &e), 0); /* no such rank */
    CHECK_EQ_INT(nall, 0);
    /* a rank holding more slices than amax keeps none, before any is read */
    REQUIRE(scan_launch_open(db, 1, &l, &e) == 0);
    CHECK_EQ_INT(scan_launch_preload(l, SCAN_LAUNCH_PRELOAD_MAX, (size_t)n1 - 1, &e), 1);
    CHECK_EQ_INT(scan_launch_acts(l, 0, &track, &rows, &n), 0);
    scan_launch_close(l);
    REQUIRE(scan_launch_open(db, 1, &l, &e) == 0);
    CHECK_EQ_INT(scan_launch_preload(l, SCAN_LAUNCH_PRELOAD_MAX, (size_t)n1, &e), 1);
    CHECK_EQ_INT(scan_launch_acts(l, 0, &track, &rows, &n), 1);
    scan_launch_close(l);
    CHECK(total > 2);
    scan_range_close(rg);
}

/* scan_slices_count and scan_slices_open select the same tracks: for every
 * rank (and all) and selector, the count is the rows the cursor yields
 * over every kind. */
static void test_count_matches_cursor(sqlite3 *db)
{
    static const enum scan_tracks sels[] = { SCAN_TRACKS_ALL, SCAN_TRACKS_HOST, SCAN_TRACKS_GPU };
    struct err e;
    struct scan_slices *c;
    struct scan_slice row;
    for (int rank = -1; rank < 3; rank++)
        for (size_t k = 0; k < sizeof sels / sizeof *sels; k++) {
            int64_t n = -1, rows = 0;
            CHECK_EQ_INT(scan_slices_count(db, rank, sels[k], &n, &e), 0);
            REQUIRE(scan_slices_open(db, rank, sels[k], SCAN_KINDS_ALL, &c, &e) == 0);
            while (scan_slices_next(c, &row, &e) == 1) rows++;
            scan_slices_close(c);
            CHECK_EQ_INT(n, rows);
        }
}

static void test_scan(void)
{
    char *path = fixture_path("run.db"), *p2 = fixture_path("dropped.db"), *p3 = fixture_path("r1");
    REQUIRE(mkdir(p3, 0755) == 0);
    free(p3);
    p3 = fixture_path("r1/run.db"); /* a run's file: damage names the run */
    REQUIRE(fixture_run(path, 2) == 0 && fixture_run(p2, 1) == 0 && fixture_run(p3, 1) == 0);
    sqlite3 *db = open_run(path);
    REQUIRE(db != NULL);
    test_cursors(db);
    test_readers(db);
    test_launch_acts(db);
    test_count_matches_cursor(db);
    sqlite3_close(db);
    test_launch_ties(path);
    /* a run stored before corr_ids (index slice_corr): the same launches */
    char *p4 = fixture_path("before-corr.db");
    REQUIRE(fixture_run(p4, 2) == 0);
    REQUIRE(sqlite3_open(p4, &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "DROP TABLE corr_ids; CREATE INDEX slice_corr ON slice(corr) WHERE corr != 0", NULL, NULL,
                         NULL) == SQLITE_OK);
    sqlite3_close(db);
    db = open_run(p4);
    REQUIRE(db != NULL);
    test_cursors(db);
    test_launch_acts(db);
    sqlite3_close(db);
    test_launch_ties(p4);
    free(p4);
    test_dropped_table(p2);
    test_garbled(p3);
    free(path);
    free(p2);
    free(p3);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_scan);
    fixture_cleanup();
    return harness_done("scan_test");
}

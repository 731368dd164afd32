/* scan_test — the slice cursors: track selection, kind sets, (track, ts)
 * order, per-track stepping, the slice id range, the launch call by
 * correlation id, a table's presence; a track's id range, a device's GPU
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
    sqlite3_close(db);
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

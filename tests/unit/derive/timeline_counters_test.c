/* timeline_counters_test — the counter series of the build: the GPU busy
 * series holds the hand-computed transitions and keeps a short idle gap as
 * min 0 at a coarse zoom; the analyses' series (anseries/ansample) become
 * src 4 lanes whose pyramid matches their samples, held or read twice. */
#include <math.h>

#include "timeline_fixture.h"
#include "derive/timeline_agg.h"
#include "derive/timeline_counters.h"

/* GPU op on pid 0, stream tid: ts/dur in ns */
static void gpu_op(const char *cat_, const char *name, int tid, int64_t ts, int64_t dur)
{
    out(",{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":0,\"tid\":%d,\"ts\":%" PRId64 ".%03" PRId64
        ",\"dur\":%" PRId64 ".%03" PRId64 ",\"args\":{\"device\":0,\"stream\":%d}}",
        cat_, name, tid, ts / 1000, ts % 1000, dur / 1000, dur % 1000, tid);
}

/* GPU busy: two streams whose ops overlap and leave gaps; the series holds
 * exactly the transitions, and a coarse view keeps a 50 ns gap as min 0. */
static void test_gpu_busy(void)
{
    blen = 0;
    out(" ");
    slice("user_annotation", "ProfilerStep#1", 1, 1, 0, 6000000);
    /* hand-made part, before 1 ms */
    gpu_op("gpu_user_annotation", "step", 7, 0, 20000); /* not an op */
    gpu_op("kernel", "A", 7, 1000, 2000);
    gpu_op("kernel", "B", 7, 3000, 1000); /* back to back with A: no change */
    gpu_op("kernel", "C", 7, 6000, 3000);
    gpu_op("kernel", "D", 8, 2000, 3000);
    gpu_op("kernel", "E", 8, 7000, 0); /* zero-length: no change */
    gpu_op("gpu_memset", "F", 8, 9000, 500);
    gpu_op("kernel", "H", 7, 10000, 390000);
    gpu_op("gpu_memcpy", "I", 8, 400050, 399950); /* after a 50 ns gap */
    gpu_op("kernel", "K", 7, 900000, 100000);
    gpu_op("kernel", "L", 8, 950000, 50000); /* both end at 1 ms */
    /* dense part: stream 7 back to back from 1 ms to 5 ms but for one 50 ns
     * gap at 3 ms; stream 8 overlaps the second half of each */
    for (int k = 0; k < 4000; k++) {
        int64_t t = 1000000 + (int64_t)k * 1000, late = k == 2000 ? 50 : 0;
        gpu_op("kernel", "k7", 7, t + late, 1000 - late);
        gpu_op("kernel", "k8", 8, t + 500, 500);
    }
    sqlite3 *db = import();
    REQUIRE(db != NULL);
    sqlite3_stmt *st;
    int64_t series = 0;
    char name[64] = "", unit[16] = "";
    REQUIRE(sqlite3_prepare_v2(db, "SELECT id, name, unit FROM cseries WHERE src = 3", -1, &st, NULL) == SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) {
        series = sqlite3_column_int64(st, 0);
        snprintf(name, sizeof name, "%s", (const char *)sqlite3_column_text(st, 1));
        snprintf(unit, sizeof unit, "%s", (const char *)sqlite3_column_text(st, 2));
    }
    CHECK(sqlite3_step(st) == SQLITE_DONE); /* one device, one series */
    sqlite3_finalize(st);
    REQUIRE(series > 0);
    CHECK_EQ_STR(name, "GPU busy (GPU 0)");
    CHECK_EQ_STR(unit, "ops");

    /* the transitions, by hand (ns from the rank's start) */
    static const int64_t want[][2] = {
        { 0, 0 },        { 1000, 1 },     { 2000, 2 },      { 4000, 1 },      { 5000, 0 },
        { 6000, 1 },     { 9500, 0 },     { 10000, 1 },     { 400000, 0 },    { 400050, 1 },
        { 800000, 0 },   { 900000, 1 },   { 950000, 2 },    { 1000000, 1 },
    };
    size_t nwant = sizeof want / sizeof want[0], i = 0, zeros = 0, ndense = 0;
    REQUIRE(unpack_busy(db, "temp") > 0); /* the samples, read below as SQL */
    REQUIRE(sqlite3_prepare_v2(db,
                               "SELECT b.ts - r.t0, b.value FROM gpubusy b JOIN rank r ON r.rank = b.rank"
                               " WHERE b.dev = 0 ORDER BY b.ts",
                               -1, &st, NULL) == SQLITE_OK);
    int64_t prev = -1, pv = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t ts = sqlite3_column_int64(st, 0), v = sqlite3_column_int64(st, 1);
        CHECK(ts > prev && v != pv); /* only transitions */
        prev = ts;
        pv = v;
        if (i < nwant) {
            if (ts != want[i][0] || v != want[i][1])
                fprintf(stderr, "  sample %zu: (%" PRId64 ", %" PRId64 ") want (%" PRId64 ", %" PRId64 ")\n", i,
                        ts, v, want[i][0], want[i][1]);
            CHECK(ts == want[i][0] && v == want[i][1]);
            i++;
            continue;
        }
        ndense++;
        if (v == 0 && ts < 5000000) {
            zeros++;
            CHECK_EQ_INT(ts, 3000000);
        }
    }
    sqlite3_finalize(st);
    CHECK_EQ_INT(i, nwant);
    CHECK_EQ_INT(zeros, 1);
    /* per period a rise to 2 and a fall (to 1; to 0 before the gap and at
     * the end); the gap's end adds a 1 */
    CHECK_EQ_INT(ndense, 2 * 4000 + 1);

    /* a coarse view of the dense part reads the pyramid; only the pixel of
     * the gap reaches 0 */
    struct err e;
    struct timeline_view *v = NULL;
    int64_t t0 = 0;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT t0 FROM rank", -1, &st, NULL) == SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) t0 = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    int64_t start = t0 + 1000100, end = t0 + 4999900;
    int width = 5;
    double bw = (double)(end - start) / width;
    REQUIRE(timeline_query(db, start, end, width, NULL, 0, &series, 1, &v, &e) == 0);
    REQUIRE(v->ncounters == 1);
    const struct timeline_counter *c = &v->counters[0];
    CHECK(c->npoints >= 2 && c->npoints <= (size_t)width + 1);
    /* of 8,000 samples in the window: the inside from the buckets, the
     * edges (under a bucket each) from the samples */
    CHECK(v->rows_read < 8000 / 4);
    int gapcols = 0;
    for (size_t k = 0; k < c->npoints; k++) {
        const struct timeline_cpoint *p = &c->points[k];
        CHECK(p->max == 2);
        CHECK(p->min == 0 || p->min == 1);
        if (p->min == 0) {
            /* the pixel of the gap (a bucket is at most a pixel wide, so
             * it may start in the one before) */
            gapcols++;
            CHECK(p->ts <= t0 + 3000000 && (double)(t0 + 3000000 - p->ts) < 2 * bw);
        }
    }
    CHECK_EQ_INT(gapcols, 1);
    timeline_view_free(v);
    sqlite3_close(db);
}

/* ---- the analyses' series (src 4) ----------------------------------------- */

static int64_t q1(sqlite3 *db, const char *sql, int64_t a)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -2;
    sqlite3_bind_int64(st, 1, a);
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static int64_t add_series(sqlite3 *db, int kind, int64_t key, const char *name, const char *unit)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "INSERT INTO anseries(rank, kind, key, name, unit) VALUES(0, ?, ?, ?, ?)", -1, &st,
                           NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int(st, 1, kind);
    sqlite3_bind_int64(st, 2, key);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, unit, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? sqlite3_last_insert_rowid(db) : -1;
}

/* Every clod row of series (at every level kept) against a GROUP BY over
 * its samples in ansample: same buckets, n, first ts, min, max, last and
 * its ts. OUT *rows: the rows compared. */
static void check_clod(sqlite3 *db, int64_t cs, int64_t an, int64_t *rows)
{
    sqlite3_stmt *lv, *got, *want;
    *rows = 0;
    REQUIRE(unpack_clod(db, "temp") > 0); /* the rows, read below as SQL */
    REQUIRE(sqlite3_prepare_v2(db, "SELECT DISTINCT level FROM clod WHERE series = ? ORDER BY level", -1, &lv,
                               NULL) == SQLITE_OK);
    REQUIRE(sqlite3_prepare_v2(db,
                               "SELECT bucket, n, fts, min, max, last, lts FROM clod WHERE series = ? AND level = ?"
                               " ORDER BY bucket",
                               -1, &got, NULL) == SQLITE_OK);
    REQUIRE(sqlite3_prepare_v2(db,
                               "SELECT g.b, g.n, g.f, g.mn, g.mx,"
                               " (SELECT value FROM ansample WHERE series = ?1 AND ts = g.l), g.l FROM"
                               " (SELECT ts >> ?2 AS b, count(*) AS n, min(ts) AS f, min(value) AS mn,"
                               " max(value) AS mx, max(ts) AS l FROM ansample WHERE series = ?1 GROUP BY 1) g"
                               " ORDER BY g.b",
                               -1, &want, NULL) == SQLITE_OK);
    sqlite3_bind_int64(lv, 1, cs);
    while (sqlite3_step(lv) == SQLITE_ROW) {
        int level = sqlite3_column_int(lv, 0);
        sqlite3_bind_int64(got, 1, cs);
        sqlite3_bind_int(got, 2, level);
        sqlite3_bind_int64(want, 1, an);
        sqlite3_bind_int(want, 2, level);
        for (;;) {
            int a = sqlite3_step(got), b = sqlite3_step(want);
            CHECK_EQ_INT(a, b);
            if (a != SQLITE_ROW || b != SQLITE_ROW) break;
            int same = 1;
            for (int c = 0; c < 7; c++)
                if (c == 3 || c == 4 || c == 5) same &= sqlite3_column_double(got, c) == sqlite3_column_double(want, c);
                else same &= sqlite3_column_int64(got, c) == sqlite3_column_int64(want, c);
            if (!same)
                fprintf(stderr, "  level %d bucket %" PRId64 ": clod differs from the samples\n", level,
                        (int64_t)sqlite3_column_int64(got, 0));
            CHECK(same);
            (*rows)++;
        }
        sqlite3_reset(got);
        sqlite3_reset(want);
    }
    sqlite3_finalize(lv);
    sqlite3_finalize(got);
    sqlite3_finalize(want);
}

/* The analyses' series become counter lanes: a queue-depth series of
 * 20,000 samples (written here, so the test does not depend on the queue
 * analysis) gets a src 4 cseries with its name and unit, clod rows that
 * match its samples bucket for bucket, and views that keep its true min and
 * max; at full zoom the raw path gives the samples themselves; a series
 * without samples gets no lane; a run without the tables builds without
 * them. */
static void test_anseries(void)
{
    struct err e;
    blen = 0;
    out(" ");
    slice("user_annotation", "ProfilerStep#1", 1, 1, 0, 2000000);
    gpu_op("kernel", "A", 7, 1000, 2000);
    gpu_op("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, 5000, 3000);
    sqlite3 *ro = import();
    REQUIRE(ro != NULL);
    char *path = xstrdup(sqlite3_db_filename(ro, "main"));
    sqlite3_close(ro);
    sqlite3 *db;
    REQUIRE(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK);
    int64_t t0 = q1(db, "SELECT t0 FROM rank WHERE rank = ?", 0);
    REQUIRE(t0 >= 0);

    int64_t queue = add_series(db, 1, 7, "Queue depth (stream 7, test)", "launches");
    int64_t copy = add_series(db, 2, 1, "Copy HtoD (test)", "GB/s");
    int64_t none = add_series(db, 2, 3, "Copy DtoD (test, no samples)", "GB/s");
    REQUIRE(queue > 0 && copy > 0 && none > 0);
    sqlite3_stmt *ins;
    REQUIRE(sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO ansample(series, ts, value) VALUES(?,?,?)", -1, &ins,
                               NULL) == SQLITE_OK);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    int64_t ts = t0;
    double qmin = INFINITY, qmax = -INFINITY;
    for (int k = 0; k < 20000; k++) {
        /* a random walk that touches 0 and the 1024 limit, at uneven steps */
        double v = (double)(k % 4000 < 2000 ? rnd(1025) : rnd(40));
        ts += 1 + (int64_t)rnd(k % 97 ? 300 : 200000);
        sqlite3_bind_int64(ins, 1, queue);
        sqlite3_bind_int64(ins, 2, ts);
        sqlite3_bind_double(ins, 3, v);
        CHECK(sqlite3_step(ins) == SQLITE_DONE);
        sqlite3_reset(ins);
        if (v < qmin) qmin = v;
        if (v > qmax) qmax = v;
    }
    int64_t qend = ts;
    static const double cv[][2] = { { 1000, 0 }, { 5000, 12.5 }, { 8000, 0 }, { 9000, 3.25 }, { 9500, 0 } };
    for (size_t k = 0; k < sizeof cv / sizeof cv[0]; k++) {
        sqlite3_bind_int64(ins, 1, copy);
        sqlite3_bind_int64(ins, 2, t0 + (int64_t)cv[k][0]);
        sqlite3_bind_double(ins, 3, cv[k][1]);
        CHECK(sqlite3_step(ins) == SQLITE_DONE);
        sqlite3_reset(ins);
    }
    sqlite3_finalize(ins);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);

    REQUIRE(timeline_build(db, &e) == 0);
    /* one lane per series with samples, whatever the analyses wrote besides */
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM cseries WHERE src = ?", 4),
                 q1(db, "SELECT count(*) FROM anseries a WHERE ? AND EXISTS (SELECT 1 FROM ansample WHERE series = a.id)",
                    1));
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM cseries WHERE src = 4 AND key1 = ?", none), 0);
    int64_t cq = q1(db, "SELECT id FROM cseries WHERE src = 4 AND key1 = ?", queue);
    int64_t cc = q1(db, "SELECT id FROM cseries WHERE src = 4 AND key1 = ?", copy);
    REQUIRE(cq > 0 && cc > 0);
    /* listed after the trace's own counters and GPU busy */
    CHECK(cq > q1(db, "SELECT max(id) FROM cseries WHERE src <> ?", 4));
    sqlite3_stmt *st;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT rank, key2, name, unit FROM cseries WHERE id = ?", -1, &st, NULL) ==
            SQLITE_OK);
    sqlite3_bind_int64(st, 1, cq);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK_EQ_INT(sqlite3_column_int(st, 0), 0);
    CHECK_EQ_INT(sqlite3_column_int(st, 1), 1);
    CHECK_EQ_STR((const char *)sqlite3_column_text(st, 2), "Queue depth (stream 7, test)");
    CHECK_EQ_STR((const char *)sqlite3_column_text(st, 3), "launches");
    sqlite3_finalize(st);

    /* the pyramid: levels were kept, and each row is its bucket's samples */
    CHECK(q1(db, "SELECT count(DISTINCT level) FROM clodpack WHERE series = ?", cq) >= 2);
    int64_t nrows;
    check_clod(db, cq, queue, &nrows);
    CHECK(nrows > 100);
    check_clod(db, cc, copy, &nrows);

    /* a series longer than the build holds (100 samples here) is read
     * again: the same rows */
    int64_t nclod = q1(db, "SELECT sum(n) FROM clodpack WHERE ?", 1);
    REQUIRE(sqlite3_exec(db,
                         "CREATE TEMP TABLE held AS SELECT * FROM clodpack;"
                         "BEGIN; DELETE FROM cseries; DELETE FROM gpubusypack; DELETE FROM clodpack",
                         NULL, NULL, NULL) ==
            SQLITE_OK);
    CHECK_EQ_INT(timeline_counters_build(db, 0, 100, &e), 0);
    CHECK_EQ_INT(timeline_counters_build(db, 1, 100, &e), 0);
    REQUIRE(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_EQ_INT(q1(db, "SELECT sum(n) FROM clodpack WHERE ?", 1), nclod);
    /* chunk for chunk: each level's chunks are cut alike on both paths */
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM (SELECT * FROM held EXCEPT SELECT * FROM clodpack) WHERE ?", 1), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM (SELECT * FROM clodpack EXCEPT SELECT * FROM held) WHERE ?", 1), 0);
    CHECK_EQ_INT(q1(db, "SELECT id FROM cseries WHERE src = 4 AND key1 = ?", queue), cq);
    check_clod(db, cq, queue, &nrows);
    CHECK(nrows > 100);

    /* views at any zoom keep the true min and max (the 1024 limit shows) */
    static const int cw[] = { 1, 10, 640, 8192 };
    for (size_t w = 0; w < sizeof cw / sizeof cw[0]; w++) {
        struct timeline_view *v = NULL;
        REQUIRE(timeline_query(db, t0, qend + 1, cw[w], NULL, 0, &cq, 1, &v, &e) == 0);
        REQUIRE(v->ncounters == 1);
        const struct timeline_counter *c = &v->counters[0];
        double mn = INFINITY, mx = -INFINITY;
        CHECK(c->npoints >= 1 && c->npoints <= (size_t)cw[w] + 1);
        for (size_t i = 0; i < c->npoints; i++) {
            if (c->points[i].min < mn) mn = c->points[i].min;
            if (c->points[i].max > mx) mx = c->points[i].max;
        }
        CHECK(mn == qmin);
        CHECK(mx == qmax);
        CHECK(qmax == 1024);
        timeline_view_free(v);
    }
    /* full zoom on the copy series reads the raw samples (plus the one in
     * force at the window's start) */
    struct timeline_view *v = NULL;
    REQUIRE(timeline_query(db, t0 + 4000, t0 + 9200, 5200, NULL, 0, &cc, 1, &v, &e) == 0);
    REQUIRE(v->ncounters == 1 && v->counters[0].npoints == 4);
    const struct timeline_cpoint *p = v->counters[0].points;
    CHECK(p[0].last == 0);
    CHECK(p[1].ts == t0 + 5000 && p[1].last == 12.5);
    CHECK(p[2].ts == t0 + 8000 && p[2].last == 0);
    CHECK(p[3].ts == t0 + 9000 && p[3].last == 3.25);
    timeline_view_free(v);
    /* the area selection's statistics: time-weighted, each value for the
     * time it is in force (0 for 1 µs, 12.5 for 3, 0 for 1, 3.25 for 0.2) */
    struct timeline_cstats cs;
    REQUIRE(timeline_agg_counter(db, cc, t0 + 4000, t0 + 9200, &cs, &e) == 0);
    CHECK(cs.n == 4 && cs.min == 0 && cs.max == 12.5);
    CHECK_EQ_INT(cs.covered, 5200);
    CHECK(fabs(cs.area / (double)cs.covered - (12.5 * 3000 + 3.25 * 200) / 5200) < 1e-9);

    /* a run imported before the analyses: no tables, no src 4 lanes */
    REQUIRE(sqlite3_exec(db, "DROP TABLE ansample; DROP TABLE anseries", NULL, NULL, NULL) == SQLITE_OK);
    REQUIRE(timeline_build(db, &e) == 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM cseries WHERE src = ?", 4), 0);
    CHECK(q1(db, "SELECT count(*) FROM cseries WHERE src = ?", 3) > 0);
    sqlite3_close(db);
    free(path);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_gpu_busy);
    RUN(test_anseries);
    fixture_end();
    return harness_done("timeline_counters");
}

/* timeline_stream_test — the slices' level of detail and window aggregates
 * fed from a stream (timeline_stream.h, as the import's merge feeds it)
 * equal the scan of the slice table (timeline_build_trace), table for
 * table: with every track held, and with a hold so small that the long
 * tracks are left out of the stream and built from the slice table by
 * timeline_build_trace_rest; a stream stopped half-way ends without
 * waiting for more. */
#include "sink_fixture.h"
#include "timeline_fixture.h"
#include "derive/timeline_lod.h"
#include "derive/timeline_stream.h"

static const char *const tables[] = { "lodpack", "lod_level", "taggpack", "tagg_level", "topen", "cseries", "clodpack", "gpubusypack" };
#define NTABLES (sizeof tables / sizeof tables[0])

/* The stream's build of run into scratch, holding hold slices per track,
 * completed by timeline_build_trace_rest; *deferred: the tracks it left. */
static int stream_build(const char *run, const char *scratch, size_t hold, size_t *deferred, struct err *e)
{
    struct timeline_stream *ts;
    struct rundb_slice_sink sink;
    sqlite3 *ro, *sc;
    if (timeline_stream_start(scratch, hold, &ts, e) != 0) return -1;
    timeline_stream_sink(ts, &sink);
    int rc = rundb_open_ro(run, &ro, e);
    if (rc == 0) {
        rc = sink_feed_run(ro, &sink, NULL);
        sqlite3_close(ro);
    }
    if (rc == 0) rc = timeline_stream_finish(ts, e);
    const int64_t *d = rc == 0 ? timeline_stream_deferred(ts, deferred) : NULL;
    if (rc == 0 && (rc = rundb_reopen_aside(run, scratch, NULL, &sc, e)) == 0) {
        rc = timeline_build_trace_rest(sc, d, *deferred, e);
        sqlite3_close(sc);
    }
    timeline_stream_free(ts);
    return rc;
}

static void test_stream_equals_scan(void)
{
    struct err e;
    sqlite3 *ro = import_threads(400); /* the kernels: gpubusy and its counters */
    REQUIRE(ro != NULL);
    char *run = xstrdup(sqlite3_db_filename(ro, "main"));
    int64_t tracks = one(ro, "SELECT count(DISTINCT track) FROM slice");
    int64_t longest = one(ro, "SELECT max(nslices) FROM track"), shortest = one(ro, "SELECT min(nslices) FROM track");
    sqlite3_close(ro);
    CHECK(tracks >= 3);
    REQUIRE(longest > shortest);

    char *scan = xasprintf("%s/scan.db", root), *held = xasprintf("%s/held.db", root),
         *part = xasprintf("%s/part.db", root);
    sqlite3 *sc;
    REQUIRE(rundb_open_aside(run, scan, NULL, &sc, &e) == 0);
    CHECK_EQ_INT(timeline_build_trace(sc, &e), 0);
    sqlite3_close(sc);

    size_t nd = 99;
    CHECK_EQ_INT(stream_build(run, held, TIMELINE_LOD_HOLD, &nd, &e), 0);
    CHECK_EQ_INT((int64_t)nd, 0);
    /* a hold under the longest track: it is left to the slice table */
    CHECK_EQ_INT(stream_build(run, part, (size_t)longest - 1, &nd, &e), 0);
    CHECK(nd >= 1 && (int64_t)nd < tracks);

    REQUIRE(sqlite3_open(scan, &sc) == SQLITE_OK);
    for (size_t i = 0; i < NTABLES; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]);
        CHECK(one(sc, sql) > 0);
    }
    CHECK_EQ_INT(differ_all(sc, held, tables, NTABLES), 0);
    CHECK_EQ_INT(differ_all(sc, part, tables, NTABLES), 0);
    sqlite3_close(sc);
    free(scan);
    free(held);
    free(part);
    free(run);
}

/* A stream freed before its end stops its thread (no wait for more), and
 * one whose scratch cannot be created fails at the finish with a message;
 * the producer never blocks on a thread that is gone. */
static void test_stream_stopped(void)
{
    struct err e;
    struct timeline_stream *ts;
    struct rundb_slice_sink sink;
    REQUIRE(timeline_stream_start("/nonexistent-dir/x.aside", TIMELINE_LOD_HOLD, &ts, &e) == 0);
    timeline_stream_sink(ts, &sink);
    sink.rank(sink.ctx, 1, 0, 1000000);
    for (int64_t i = 1; i <= 3 * (int64_t)TIMELINE_STREAM_QUEUE; i++) {
        struct rundb_slice_out s = { .id = i, .track = 1, .ts = i * 10, .dur = 5, .name = 3 };
        sink.slice(sink.ctx, &s);
    }
    CHECK(timeline_stream_finish(ts, &e) != 0);
    CHECK(e.msg[0] != 0);
    timeline_stream_free(ts);

    char *path = xasprintf("%s/stopped.aside", root);
    REQUIRE(timeline_stream_start(path, TIMELINE_LOD_HOLD, &ts, &e) == 0);
    timeline_stream_sink(ts, &sink);
    sink.rank(sink.ctx, 1, 0, 1000000);
    for (int64_t i = 1; i <= 5000; i++) {
        struct rundb_slice_out s = { .id = i, .track = 1, .ts = i * 10, .dur = 5, .name = 3 };
        sink.slice(sink.ctx, &s);
    }
    timeline_stream_free(ts);
    free(path);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_stream_equals_scan);
    RUN(test_stream_stopped);
    fixture_end();
    return harness_done("timeline_stream");
}

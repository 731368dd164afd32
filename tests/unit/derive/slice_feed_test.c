/* slice_feed_test — the host slices held from the import's stream
 * (slice_feed.h):
 *  - the sink keeps each slice's figures in id order and serves a track
 *    only for exactly its id range; a track met twice, a gap in the ids,
 *    or more rows than the limit leave nothing served;
 *  - a cpu_op's input shapes are pulled from its args as the walk pulls
 *    them (whitespace dropped, equal shapes one text), no other kind's;
 *  - on a real with_stack trace, the summary, the GPU analyses' launch
 *    walk and the rules' launch reader (slice_feed_held) read from the
 *    feed give the same tables and records as read from run.db, and they
 *    do read it (a feed with other names changes them).
 * The real-trace part skips (with a line saying so) without ../shared. */
#include "base/xmalloc.h"
#include "derive/analyses.h"
#include "derive/analyses_load.h"
#include "derive/slice_feed.h"
#include "derive/summary.h"
#include "derive/summary_walk.h"
#include "harness.h"
#include "ingest/ingest.h"
#include "scratch_fixture.h"
#include "sink_fixture.h"
#include "store/model.h"
#include "store/rundb.h"

#include <glob.h>
#include <unistd.h>

static char root[] = "/tmp/tb_slice_feed_XXXXXX";
static struct config cfg;
static struct catalog *cat;

static void put(const struct rundb_slice_sink *k, int64_t id, int64_t track, int64_t ts, int kind, const char *args)
{
    struct rundb_slice_out s = { .id = id,
                                 .track = track,
                                 .ts = ts,
                                 .dur = 10,
                                 .parent = id > 1 ? id - 1 : 0,
                                 .corr = id * 100,
                                 .name = (uint32_t)(id + 7),
                                 .kind = (uint32_t)kind,
                                 .args_len = args ? (uint32_t)strlen(args) : 0,
                                 .args = args };
    k->slice(k->ctx, &s);
}

static void test_rows_and_tracks(void)
{
    struct slice_feed *f = slice_feed_new(100);
    struct rundb_slice_sink k;
    slice_feed_sink(f, &k);
    k.rank(k.ctx, 1, 0, 1000);
    put(&k, 1, 1, 100, TB_K_CPU_OP, "{\"Input Dims\": [[4, 8], [8]], \"Input type\": [\"float\"]}");
    put(&k, 2, 1, 110, TB_K_CPU_OP, "{\"External id\":3,\"Input Dims\":[[4,8],[8]]}");
    put(&k, 3, 1, 120, TB_K_RUNTIME, "{\"Input Dims\": [[1]]}");
    k.track_end(k.ctx, 1, 1, 2, 3);
    put(&k, 4, 2, 50, TB_K_CPU_OP, "{\"Input Dims\": []}");
    put(&k, 5, 2, 60, TB_K_CPU_OP, NULL);
    k.track_end(k.ctx, 2, 1, 0, 2);
    CHECK_EQ_INT(slice_feed_rows(f), 5);

    const struct slice_feed_row *r = slice_feed_track(f, 1, 1, 3);
    REQUIRE(r != NULL);
    CHECK_EQ_INT(r[0].ts, 100);
    CHECK_EQ_INT(r[1].dur, 10);
    CHECK_EQ_INT(r[1].parent, 1);
    CHECK_EQ_INT(r[0].parent, 0);
    CHECK_EQ_INT(r[2].corr, 300);
    CHECK_EQ_INT(r[2].name, 10);
    CHECK_EQ_INT(r[2].kind, TB_K_RUNTIME);
    /* one shape text for both operators, spaces dropped as the walk drops them */
    CHECK(r[0].shape != 0 && r[0].shape == r[1].shape);
    CHECK_EQ_STR(slice_feed_shape(f, r[0].shape), "[[4,8],[8]]");
    char *walked = summary_walk_shapes("{\"Input Dims\": [[4, 8], [8]]}", 29);
    CHECK_EQ_STR(slice_feed_shape(f, r[0].shape), walked);
    free(walked);
    CHECK_EQ_INT(r[2].shape, 0); /* not an operator */
    CHECK(slice_feed_shape(f, 0) == NULL);

    r = slice_feed_track(f, 2, 4, 5);
    REQUIRE(r != NULL);
    CHECK_EQ_INT(r[0].ts, 50);
    CHECK_EQ_INT(r[0].shape, 0); /* "[]": none */
    CHECK_EQ_INT(r[1].shape, 0); /* no args */

    /* anything but a track's exact range reads the table */
    CHECK(slice_feed_track(f, 1, 1, 2) == NULL);
    CHECK(slice_feed_track(f, 1, 2, 3) == NULL);
    CHECK(slice_feed_track(f, 2, 3, 5) == NULL);
    CHECK(slice_feed_track(f, 3, 6, 6) == NULL);
    CHECK(slice_feed_track(f, 0, 1, 3) == NULL);
    CHECK(slice_feed_track(NULL, 1, 1, 3) == NULL);

    /* a track that comes back after its end is not served; the others are */
    put(&k, 6, 1, 130, TB_K_CPU_OP, NULL);
    k.track_end(k.ctx, 1, 1, 0, 4);
    CHECK(slice_feed_track(f, 1, 1, 3) == NULL);
    CHECK(slice_feed_track(f, 1, 1, 6) == NULL);
    CHECK(slice_feed_track(f, 2, 4, 5) != NULL);

    /* a gap in the ids: nothing is served any more */
    put(&k, 8, 3, 10, TB_K_CPU_OP, NULL);
    CHECK_EQ_INT(slice_feed_rows(f), 0);
    CHECK(slice_feed_track(f, 2, 4, 5) == NULL);
    slice_feed_free(f);
    slice_feed_free(NULL);
}

static void test_limit(void)
{
    struct slice_feed *f = slice_feed_new(3);
    struct rundb_slice_sink k;
    slice_feed_sink(f, &k);
    k.rank(k.ctx, 0, 0, 0);
    for (int64_t i = 1; i <= 3; i++) put(&k, i, 1, i * 10, TB_K_CPU_OP, "{\"Input Dims\": [[2]]}");
    CHECK_EQ_INT(slice_feed_rows(f), 3);
    put(&k, 4, 1, 40, TB_K_CPU_OP, NULL);
    k.track_end(k.ctx, 1, 1, 0, 4);
    CHECK_EQ_INT(slice_feed_rows(f), 0);
    CHECK(slice_feed_track(f, 1, 1, 4) == NULL);
    CHECK(slice_feed_track(f, 1, 1, 3) == NULL);
    slice_feed_free(f);
}

/* Every operator named after another: the walks' groups move. */
static void rename_ops(struct rundb_slice_out *s)
{
    if (s->kind == TB_K_CPU_OP) s->name = 1;
}

/* f filled from run's slices as the import's drain fills it. */
static int fill(sqlite3 *run, struct slice_feed *f, int rename)
{
    struct rundb_slice_sink k;
    slice_feed_sink(f, &k);
    return sink_feed_run(run, &k, rename ? rename_ops : NULL);
}

static int64_t one(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n;
}

/* The rows of the summary's tables that the scratch databases a and b do
 * not share, both ways (-1 on error); *rows: a's rows. */
static int64_t summary_differ(const char *a, const char *b, int64_t *rows)
{
    static const char *const tables[] = { "step", "gpu", "op_stat", "kernel_stat", "mem_alloc", "analysis" };
    sqlite3 *db;
    if (sqlite3_open(a, &db) != SQLITE_OK) return -1;
    char *att = xasprintf("ATTACH '%s' AS b", b);
    int64_t sum = sqlite3_exec(db, att, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
    free(att);
    *rows = 0;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0] && sum >= 0; i++) {
        char sql[512];
        snprintf(sql, sizeof sql,
                 "SELECT (SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM b.%s))"
                 " + (SELECT count(*) FROM (SELECT * FROM b.%s EXCEPT SELECT * FROM main.%s))"
                 " + abs((SELECT count(*) FROM main.%s) - (SELECT count(*) FROM b.%s))",
                 tables[i], tables[i], tables[i], tables[i], tables[i], tables[i]);
        int64_t d = one(db, sql);
        if (d < 0) fprintf(stderr, "%s: %s\n", tables[i], sqlite3_errmsg(db));
        snprintf(sql, sizeof sql, "SELECT count(*) FROM main.%s", tables[i]);
        *rows += one(db, sql);
        sum = d < 0 ? -1 : sum + d;
    }
    sqlite3_close(db);
    return sum;
}

/* rank 0 of run summarised into a fresh scratch at path, reading feed. */
static int summarise(const char *run, const char *path, const struct slice_feed *feed)
{
    struct err e;
    sqlite3 *db;
    if (rundb_open_aside(run, path, NULL, &db, &e) != 0) return -1;
    int rc = summary_run_rank_fed(db, 0, feed, &e);
    if (rc) fprintf(stderr, "summary: %s\n", e.msg);
    sqlite3_close(db);
    return rc;
}

/* a and b hold the same launches, host slices and threads (field by
 * field: the records have padding). */
static int pre_alike(const struct analyses_pre *a, const struct analyses_pre *b)
{
    if (a->nlaunches != b->nlaunches || a->nhrows != b->nhrows || a->nhthreads != b->nhthreads) return 0;
    for (size_t i = 0; i < a->nlaunches; i++) {
        const struct an_launch *x = &a->launches[i], *y = &b->launches[i];
        if (x->ts != y->ts || x->end != y->end || x->id != y->id || x->top_id != y->top_id || x->name != y->name ||
            x->op != y->op || x->top_op != y->top_op || x->annot != y->annot || x->thread != y->thread ||
            x->annot_src != y->annot_src || x->gpu != y->gpu || a->ix[i].key != b->ix[i].key ||
            a->ix[i].idx != b->ix[i].idx)
            return 0;
    }
    for (size_t i = 0; i < a->nhrows; i++) {
        const struct an_hrow *x = &a->hrows[i], *y = &b->hrows[i];
        if (x->b.ts != y->b.ts || x->b.dur != y->b.dur || x->b.name != y->b.name || x->b.kind != y->b.kind ||
            x->corr != y->corr || x->id != y->id || x->parent != y->parent)
            return 0;
    }
    for (size_t i = 0; i < a->nhthreads; i++)
        if (a->hthreads[i].track != b->hthreads[i].track || a->hthreads[i].first != b->hthreads[i].first ||
            a->hthreads[i].n != b->hthreads[i].n)
            return 0;
    return 1;
}

/* The rules' launch reader of rank 0 on db preloaded, from feed's rows
 * where given (NULL: run.db), with room for every row. OUT: owned by
 * caller (scan_launch_close), NULL on failure. */
static struct scan_launch *launch_reader(sqlite3 *db, const struct slice_feed *feed)
{
    struct err e;
    struct scan_launch *l = NULL;
    struct scan_held held;
    if (scan_launch_open(db, 0, &l, &e) != 0) return NULL;
    slice_feed_held(feed, &held);
    if (feed) scan_launch_hold(l, &held);
    if (scan_launch_preload(l, SCAN_LAUNCH_PRELOAD_MAX, SCAN_LAUNCH_PRELOAD_MAX, &e) != 1) {
        scan_launch_close(l);
        return NULL;
    }
    return l;
}

/* a and b hold the same launch calls and host acts, field by field. */
static int launches_alike(const struct scan_launch *a, const struct scan_launch *b)
{
    const struct scan_slice *x, *y;
    size_t nx, ny;
    if (!scan_launch_rows(a, &x, &nx) || !scan_launch_rows(b, &y, &ny) || nx != ny) return 0;
    for (size_t i = 0; i < nx; i++)
        if (x[i].id != y[i].id || x[i].track != y[i].track || x[i].ts != y[i].ts || x[i].dur != y[i].dur ||
            x[i].parent != y[i].parent || x[i].corr != y[i].corr || x[i].name != y[i].name || x[i].kind != y[i].kind)
            return 0;
    const struct scan_brief *p, *q;
    int64_t ta, tb;
    size_t i = 0;
    for (; scan_launch_acts(a, i, &ta, &p, &nx); i++) {
        if (!scan_launch_acts(b, i, &tb, &q, &ny) || ta != tb || nx != ny) return 0;
        for (size_t k = 0; k < nx; k++)
            if (p[k].ts != q[k].ts || p[k].dur != q[k].dur || p[k].name != q[k].name || p[k].kind != q[k].kind)
                return 0;
    }
    return i > 0 && !scan_launch_acts(b, i, &tb, &q, &ny);
}

static void test_walks_alike(void)
{
    struct err e;
    char *trace = xasprintf("%s/traces/transformer_with_stack", harness_shared());
    if (access(trace, R_OK) != 0) {
        printf("slice_feed: real trace part skipped (%s not found; set TB_SHARED)\n", trace);
        free(trace);
        return;
    }
    char *file = NULL, *pat = xasprintf("%s/*.json.gz", trace);
    glob_t g;
    if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0) file = xstrdup(g.gl_pathv[0]);
    globfree(&g);
    free(pat);
    free(trace);
    REQUIRE(file != NULL);
    struct ingest_file in = { file, file, 0 };
    struct ingest_request req = { NULL, &in, 1, NULL };
    char id[CATALOG_ID_LEN + 1];
    int irc = ingest_run(cat, &cfg, &req, NULL, id, &e);
    if (irc) fprintf(stderr, "import: %s\n", e.msg);
    REQUIRE(irc == 0);
    char *run = xasprintf("%s/runs/%s/run.db", root, id);
    sqlite3 *ro;
    REQUIRE(rundb_open_ro(run, &ro, &e) == 0);
    struct slice_feed *feed = slice_feed_new(SLICE_FEED_MAX_ROWS), *renamed = slice_feed_new(SLICE_FEED_MAX_ROWS);
    CHECK_EQ_INT(fill(ro, feed, 0), 0);
    CHECK_EQ_INT(fill(ro, renamed, 1), 0);
    CHECK_EQ_INT(slice_feed_rows(feed), one(ro, "SELECT count(*) FROM slice"));
    /* every host thread is served from memory */
    int64_t served = 0;
    sqlite3_stmt *st;
    REQUIRE(sqlite3_prepare_v2(ro, "SELECT id, first_slice, last_slice FROM track WHERE kind != 1 AND nslices > 0",
                               -1, &st, NULL) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const struct slice_feed_row *r = slice_feed_track(feed, sqlite3_column_int64(st, 0),
                                                          sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2));
        CHECK(r != NULL);
        served += r != NULL;
    }
    sqlite3_finalize(st);
    CHECK(served >= 2);

    char *read = xasprintf("%s/read.db", root), *fed = xasprintf("%s/fed.db", root);
    char *wrong = xasprintf("%s/wrong.db", root);
    CHECK_EQ_INT(summarise(run, read, NULL), 0);
    CHECK_EQ_INT(summarise(run, fed, feed), 0);
    CHECK_EQ_INT(summarise(run, wrong, renamed), 0);
    int64_t rows = 0;
    CHECK_EQ_INT(summary_differ(read, fed, &rows), 0);
    CHECK(rows > 100);
    CHECK(summary_differ(read, wrong, &rows) > 0);

    /* the launch walk read ahead: the same launches and host slices */
    struct analyses_pre *a = NULL, *b = NULL, *c = NULL;
    CHECK_EQ_INT(analyses_preload(ro, 0, NULL, &a, &e), 0);
    CHECK_EQ_INT(analyses_preload(ro, 0, feed, &b, &e), 0);
    CHECK_EQ_INT(analyses_preload(ro, 0, renamed, &c, &e), 0);
    if (a && b && c) {
        CHECK(a->nlaunches > 1000);
        CHECK(a->nhrows > 1000);
        CHECK(pre_alike(a, b));
        CHECK(!pre_alike(a, c));
    }
    analyses_pre_free(a);
    analyses_pre_free(b);
    analyses_pre_free(c);

    /* the rules' launch reader */
    struct scan_launch *la = launch_reader(ro, NULL), *lb = launch_reader(ro, feed), *lc = launch_reader(ro, renamed);
    CHECK(la && lb && lc);
    if (la && lb && lc) {
        const struct scan_slice *calls;
        size_t n;
        CHECK(scan_launch_rows(la, &calls, &n) && n > 1000);
        CHECK(launches_alike(la, lb));
        CHECK(!launches_alike(la, lc));
    }
    scan_launch_close(la);
    scan_launch_close(lb);
    scan_launch_close(lc);
    sqlite3_close(ro);
    slice_feed_free(feed);
    slice_feed_free(renamed);
    free(read);
    free(fed);
    free(wrong);
    free(run);
    free(file);
}

int main(void)
{
    if (scratch_begin(root, &cfg, &cat) != 0) return 1;
    RUN(test_rows_and_tracks);
    RUN(test_limit);
    RUN(test_walks_alike);
    scratch_end(root, cat);
    return harness_done("slice_feed");
}

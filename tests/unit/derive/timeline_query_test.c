/* timeline_query_test — the level-of-detail invariants of timeline_query on
 * crafted traces imported through ingest_run, checked against a direct
 * reading of the slice and counter tables: per (track, depth) at most width
 * items; merged counts add up exactly to the slices overlapping the window;
 * real items are the slices they name; slices wider than two pixels are
 * real; at full zoom every slice comes back exactly; counters keep the true
 * min and max. With a depth window and coarse deep levels
 * (timeline_query_lanes): depths above the window are left out, the ones
 * past it add up exactly in the deep lane, coarse depths hold at most one
 * item per TIMELINE_COARSE_PX pixels and keep slices wider than two such
 * columns real. */
#include <limits.h>

#include "timeline_fixture.h"
#include "derive/timeline_agg.h"

/* ---- the direct reading ---------------------------------------------------- */

struct ref {
    int64_t id, track, ts, dur;
    int depth;
    uint32_t name;
};

static struct ref *refs;
static size_t nrefs;
static int64_t tracks[16];
static size_t ntracks;
static int64_t t_lo, t_hi;

static void load_refs(sqlite3 *db)
{
    sqlite3_stmt *st;
    nrefs = 0;
    ntracks = 0;
    t_lo = INT64_MAX;
    t_hi = INT64_MIN;
    sqlite3_prepare_v2(db, "SELECT id, track, ts, dur, depth, name FROM slice ORDER BY id", -1, &st, NULL);
    while (sqlite3_step(st) == SQLITE_ROW) {
        refs = xrealloc(refs, (nrefs + 1) * sizeof *refs);
        struct ref *r = &refs[nrefs++];
        r->id = sqlite3_column_int64(st, 0);
        r->track = sqlite3_column_int64(st, 1);
        r->ts = sqlite3_column_int64(st, 2);
        r->dur = sqlite3_column_int64(st, 3);
        r->depth = sqlite3_column_int(st, 4);
        r->name = (uint32_t)sqlite3_column_int64(st, 5);
        if (r->ts < t_lo) t_lo = r->ts;
        if (r->ts + r->dur > t_hi) t_hi = r->ts + r->dur;
        if (!ntracks || tracks[ntracks - 1] != r->track) tracks[ntracks++] = r->track;
    }
    sqlite3_finalize(st);
}

static int in_window(const struct ref *r, int64_t start, int64_t end)
{
    return r->ts < end && (r->ts >= start || r->ts + r->dur > start);
}

static const struct ref *ref_by_id(int64_t id)
{
    return id >= 1 && (size_t)id <= nrefs && refs[id - 1].id == id ? &refs[id - 1] : NULL;
}

static int failures_before;

/* Every invariant of one view with depths dmin..dmax itemized (deeper in
 * the deep lane) and depths >= fine coarse; full: the window is at full
 * zoom. */
static void check_lanes(sqlite3 *db, int64_t start, int64_t end, int width, int full, int dmin, int dmax, int fine)
{
    struct timeline_view *v = NULL;
    struct err e;
    int bad = harness_fail;

    if (dmin == 0 && dmax == INT_MAX && fine == INT_MAX) {
        REQUIRE(timeline_query(db, start, end, width, tracks, ntracks, NULL, 0, &v, &e) == 0);
    } else {
        struct timeline_treq req[16];
        for (size_t i = 0; i < ntracks; i++) req[i] = (struct timeline_treq){ tracks[i], dmin, dmax };
        REQUIRE(timeline_query_lanes(db, start, end, width, req, ntracks, NULL, 0, fine, &v, &e) == 0);
    }
    for (size_t ti = 0; ti < v->ntracks; ti++) {
        const struct timeline_track *t = &v->tracks[ti];
        int64_t deep_want = 0, deep_got = 0;
        for (size_t i = 0; i < nrefs; i++)
            if (refs[i].track == t->id && refs[i].depth > dmax && in_window(&refs[i], start, end)) deep_want++;
        for (size_t k = 0; k < t->deep.nitems; k++) {
            deep_got += t->deep.items[k].n;
            if (k) CHECK(t->deep.items[k].ts >= t->deep.items[k - 1].ts);
        }
        CHECK_EQ_INT(deep_got, deep_want);
        CHECK(t->deep.nitems <= (size_t)width / TIMELINE_COARSE_PX + 1);
        for (int k = 0; k < t->ndepths; k++) CHECK(t->depths[k].depth >= dmin && t->depths[k].depth <= dmax);
        for (int d = dmin; d < 8 && d <= dmax; d++) {
            const struct timeline_depth *dp = NULL;
            int px = d >= fine ? TIMELINE_COARSE_PX : 1;
            double bw = (double)(end - start) / width * px;
            for (int k = 0; k < t->ndepths; k++)
                if (t->depths[k].depth == d) dp = &t->depths[k];
            int64_t want = 0, got = 0, real = 0;
            for (size_t i = 0; i < nrefs; i++)
                if (refs[i].track == t->id && refs[i].depth == d && in_window(&refs[i], start, end)) want++;
            if (!dp) {
                CHECK_EQ_INT(want, 0);
                continue;
            }
            CHECK(dp->nitems <= (size_t)(width + px - 1) / (size_t)px);
            for (size_t k = 0; k < dp->nitems; k++) {
                const struct timeline_item *it = &dp->items[k];
                got += it->n;
                CHECK((it->n == 1) == (it->id > 0));
                if (k) CHECK(it->ts >= dp->items[k - 1].ts);
                if (it->id > 0) {
                    const struct ref *r = ref_by_id(it->id);
                    CHECK(r && r->track == t->id && r->depth == d && r->ts == it->ts && r->dur == it->dur &&
                          r->name == it->name);
                    real++;
                }
            }
            CHECK_EQ_INT(got, want);
            /* slices wider than two columns in the window are real */
            for (size_t i = 0; i < nrefs; i++) {
                const struct ref *r = &refs[i];
                int64_t vis0 = r->ts > start ? r->ts : start, vis1 = r->ts + r->dur < end ? r->ts + r->dur : end;
                if (r->track != t->id || r->depth != d || !in_window(r, start, end) || (double)(vis1 - vis0) <= 2 * bw)
                    continue;
                int seen = 0;
                for (size_t k = 0; k < dp->nitems && !seen; k++) seen = dp->items[k].id == r->id;
                CHECK(seen);
            }
            if (full) CHECK_EQ_INT(real, want);
        }
    }
    timeline_view_free(v);
    if (harness_fail != bad && harness_fail - failures_before < 40)
        fprintf(stderr, "  (view [%" PRId64 ", %" PRId64 ") width %d depths %d-%d fine %d)\n", start, end, width,
                dmin, dmax, fine);
}

static void check_view(sqlite3 *db, int64_t start, int64_t end, int width, int full)
{
    check_lanes(db, start, end, width, full, 0, INT_MAX, INT_MAX);
}

/* 1 when a and b hold the same items, lane by lane, read the same rows. */
static int same_depth(const struct timeline_depth *a, const struct timeline_depth *b)
{
    return a->depth == b->depth && a->nitems == b->nitems &&
           (!a->nitems || memcmp(a->items, b->items, a->nitems * sizeof *a->items) == 0);
}

static int same_view(const struct timeline_view *a, const struct timeline_view *b)
{
    if (a->rows_read != b->rows_read || a->ntracks != b->ntracks) return 0;
    for (size_t t = 0; t < a->ntracks; t++) {
        const struct timeline_track *x = &a->tracks[t], *y = &b->tracks[t];
        if (x->id != y->id || x->ndepths != y->ndepths || !same_depth(&x->deep, &y->deep)) return 0;
        for (int d = 0; d < x->ndepths; d++)
            if (!same_depth(&x->depths[d], &y->depths[d])) return 0;
    }
    return 1;
}

/* The area selection's sums of a track, as timeline_agg_slices hands them. */
struct sums {
    int64_t v[4096][4];
    size_t n;
};

static void add_sum(void *ctx, uint32_t name, int64_t n, int64_t total, int64_t self)
{
    struct sums *s = ctx;
    if (s->n < 4096) {
        s->v[s->n][0] = name, s->v[s->n][1] = n, s->v[s->n][2] = total, s->v[s->n][3] = self;
        s->n++;
    }
}

/* A run stored before lodpack, its level of detail in rows (table lod),
 * answers every view as the chunks do: a copy of db turned into one. */
static void check_old_layout(sqlite3 *db)
{
    struct err e;
    char *old = xasprintf("%s/old-layout.db", root);
    sqlite3 *od;
    REQUIRE(fsutil_copy(sqlite3_db_filename(db, "main"), old, &e) == 0);
    REQUIRE(sqlite3_open(old, &od) == SQLITE_OK);
    CHECK(unpack_lod(od, "main") > 0);
    CHECK(unpack_clod(od, "main") > 0);
    CHECK(unpack_busy(od, "main") > 0);
    CHECK(unpack_tagg(od, "main") > 0);
    REQUIRE(sqlite3_exec(od, "DROP TABLE lodpack; DROP TABLE clodpack; DROP TABLE gpubusypack; DROP TABLE taggpack",
                         NULL, NULL, NULL) == SQLITE_OK);
    CHECK_EQ_INT(timeline_present(od, &e), 1);
    int same = 0, n = 0;
    for (int i = 0; i < 60; i++) {
        int64_t span = 1 + (int64_t)rnd((uint64_t)(t_hi - t_lo) >> (rnd(20)));
        int64_t s = t_lo - 1000 + (int64_t)rnd((uint64_t)(t_hi - t_lo + 2000));
        int dmin = (int)rnd(3), dmax = i % 3 == 0 ? INT_MAX : dmin + (int)rnd(4), width = 1 + (int)rnd(4000);
        int fine = (int)rnd(5);
        struct timeline_treq req[16];
        for (size_t t = 0; t < ntracks; t++) req[t] = (struct timeline_treq){ tracks[t], dmin, dmax };
        struct timeline_view *a = NULL, *b = NULL;
        REQUIRE(timeline_query_lanes(db, s, s + span, width, req, ntracks, NULL, 0, fine, &a, &e) == 0);
        REQUIRE(timeline_query_lanes(od, s, s + span, width, req, ntracks, NULL, 0, fine, &b, &e) == 0);
        int eq = same_view(a, b);
        /* the area selection's whole buckets too */
        static struct sums x, y;
        for (size_t t = 0; eq && t < ntracks; t++) {
            int64_t lx, hx, ly, hy;
            x.n = y.n = 0;
            REQUIRE(timeline_agg_slices(db, tracks[t], s, s + span, &lx, &hx, add_sum, &x, &e) == 0);
            REQUIRE(timeline_agg_slices(od, tracks[t], s, s + span, &ly, &hy, add_sum, &y, &e) == 0);
            eq = lx == ly && hx == hy && x.n == y.n && memcmp(x.v, y.v, x.n * sizeof x.v[0]) == 0;
        }
        same += eq;
        n++;
        timeline_view_free(a);
        timeline_view_free(b);
    }
    CHECK_EQ_INT(same, n);
    /* the counter lanes too: every series at widths from one pixel to full zoom */
    int64_t series[16];
    size_t nser = 0;
    sqlite3_stmt *st;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT id FROM cseries ORDER BY id LIMIT 16", -1, &st, NULL) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) series[nser++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    CHECK(nser >= 2);
    same = n = 0;
    /* windows from random times, and from the GPU busy samples' own times
     * (a sample at a window's start is in it, and not before it) */
    int64_t at[64];
    size_t nat = 0;
    REQUIRE(sqlite3_prepare_v2(od, "SELECT ts FROM gpubusy ORDER BY ts", -1, &st, NULL) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW && nat < 64)
        if (rnd(8) == 0) at[nat++] = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    CHECK(nat >= 8);
    for (size_t i = 0; i < 40 + 2 * nat; i++) {
        int64_t span = 1 + (int64_t)rnd((uint64_t)(t_hi - t_lo) >> (rnd(20)));
        int64_t s = t_lo - 1000 + (int64_t)rnd((uint64_t)(t_hi - t_lo + 2000));
        if (i >= 40) s = at[(i - 40) / 2] - ((i - 40) % 2 ? span : 0); /* starting or ending at a sample */
        int width = 1 + (int)rnd(8000);
        struct timeline_view *a = NULL, *b = NULL;
        REQUIRE(timeline_query(db, s, s + span, width, NULL, 0, series, nser, &a, &e) == 0);
        REQUIRE(timeline_query(od, s, s + span, width, NULL, 0, series, nser, &b, &e) == 0);
        int eq = a->rows_read == b->rows_read && a->ncounters == b->ncounters;
        for (size_t c = 0; eq && c < a->ncounters; c++)
            eq = a->counters[c].npoints == b->counters[c].npoints &&
                 (!a->counters[c].npoints || memcmp(a->counters[c].points, b->counters[c].points,
                                                    a->counters[c].npoints * sizeof *a->counters[c].points) == 0);
        /* and the area selection's figures of each series (its edges read the samples) */
        for (size_t c = 0; eq && c < nser; c++) {
            struct timeline_cstats x, y;
            REQUIRE(timeline_agg_counter(db, series[c], s, s + span, &x, &e) == 0);
            REQUIRE(timeline_agg_counter(od, series[c], s, s + span, &y, &e) == 0);
            eq = memcmp(&x, &y, sizeof x) == 0;
        }
        same += eq;
        n++;
        timeline_view_free(a);
        timeline_view_free(b);
    }
    CHECK_EQ_INT(same, n);
    sqlite3_close(od);
    free(old);
}

static void test_lod_invariants(void)
{
    blen = 0;
    out(" ");
    /* a CPU thread: 40 ms of nested work */
    nest(-1, 0, 40000000);
    /* a GPU stream: back-to-back kernels, a few long ones */
    int64_t t = 1000;
    for (int i = 0; i < 20000; i++) {
        int64_t d = rnd(50) == 0 ? 200000 + (int64_t)rnd(400000) : 20 + (int64_t)rnd(900);
        out(",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k%d\",\"pid\":0,\"tid\":7,\"ts\":%" PRId64 ".%03" PRId64
            ",\"dur\":%" PRId64 ".%03" PRId64 ",\"args\":{\"device\":0,\"stream\":7}}",
            (int)rnd(7), t / 1000, t % 1000, d / 1000, d % 1000);
        t += d + (int64_t)rnd(3) * (int64_t)rnd(400);
    }
    for (int i = 0; i < 3000; i++)
        out(",{\"ph\":\"C\",\"name\":\"util\",\"pid\":1,\"ts\":%d.%03d,\"args\":{\"value\":%d}}", i * 13, i % 1000,
            (int)rnd(1000));
    sqlite3 *db = import();
    REQUIRE(db != NULL);
    load_refs(db);
    REQUIRE(nrefs > 20000);
    REQUIRE(ntracks == 2);
    struct err e;
    CHECK_EQ_INT(timeline_present(db, &e), 1);

    /* levels exist and the table holds at most about a row per slice */
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT (SELECT sum(n) FROM lodpack), (SELECT count(*) FROM lod_level)", -1, &st, NULL);
    REQUIRE(sqlite3_step(st) == SQLITE_ROW);
    CHECK(sqlite3_column_int64(st, 1) >= 4);
    CHECK(sqlite3_column_int64(st, 0) <= (int64_t)nrefs * 3 / 2);
    sqlite3_finalize(st);

    failures_before = harness_fail;
    static const int widths[] = { 1, 3, 100, 997, 2000, 8192 };
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        check_view(db, t_lo - 5000, t_hi + 5000, widths[w], 0);
    for (int i = 0; i < 60; i++) {
        int64_t span = 1 + (int64_t)rnd((uint64_t)(t_hi - t_lo) >> (rnd(20)));
        int64_t s = t_lo - 1000 + (int64_t)rnd((uint64_t)(t_hi - t_lo + 2000));
        check_view(db, s, s + span, 1 + (int)rnd(TIMELINE_WIDTH_MAX), 0);
    }
    /* full zoom: under a ns per pixel, every slice is itself */
    for (int i = 0; i < 20; i++) {
        int64_t s = t_lo + (int64_t)rnd((uint64_t)(t_hi - t_lo));
        check_view(db, s, s + 4000, 8192, 1);
    }
    /* a window starting inside long slices (the open ones are carried in) */
    for (size_t i = 0; i < nrefs; i++)
        if (refs[i].depth == 0 && refs[i].dur > 1000000) {
            check_view(db, refs[i].ts + refs[i].dur / 2, refs[i].ts + refs[i].dur / 2 + 100000, 500, 0);
            break;
        }

    /* depth windows, deep lanes and coarse deep levels */
    for (int i = 0; i < 40; i++) {
        int64_t span = 1 + (int64_t)rnd((uint64_t)(t_hi - t_lo) >> (rnd(20)));
        int64_t s = t_lo - 1000 + (int64_t)rnd((uint64_t)(t_hi - t_lo + 2000));
        int dmin = (int)rnd(3), dmax = i % 4 == 0 ? INT_MAX : dmin + (int)rnd(4);
        check_lanes(db, s, s + span, 1 + (int)rnd(TIMELINE_WIDTH_MAX), 0, dmin, dmax, (int)rnd(5));
    }
    check_lanes(db, t_lo, t_hi, 2000, 0, 0, 1, 1);
    check_lanes(db, t_lo, t_hi, 2000, 0, 0, INT_MAX, 0);

    /* the whole run at 100 px reads the pyramid, not the slices */
    struct timeline_view *v = NULL;
    REQUIRE(timeline_query(db, t_lo, t_hi, 100, tracks, ntracks, NULL, 0, &v, &e) == 0);
    CHECK(v->rows_read < nrefs / 20);
    timeline_view_free(v);
    v = NULL;

    /* bad arguments */
    CHECK_EQ_INT(timeline_query(db, 10, 10, 100, tracks, ntracks, NULL, 0, &v, &e), ERR_INVALID);
    CHECK_EQ_INT(timeline_query(db, 0, 10, 0, tracks, ntracks, NULL, 0, &v, &e), ERR_INVALID);
    CHECK_EQ_INT(timeline_query(db, 0, 10, TIMELINE_WIDTH_MAX + 1, tracks, ntracks, NULL, 0, &v, &e), ERR_INVALID);
    CHECK(v == NULL);

    /* counters: at most width + 1 points, true min and max kept */
    int64_t series = 0;
    double vmin = 0, vmax = 0;
    sqlite3_prepare_v2(db, "SELECT id FROM cseries WHERE src = 0", -1, &st, NULL);
    if (sqlite3_step(st) == SQLITE_ROW) series = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    REQUIRE(series > 0);
    sqlite3_prepare_v2(db, "SELECT min(value), max(value) FROM counter", -1, &st, NULL);
    if (sqlite3_step(st) == SQLITE_ROW) {
        vmin = sqlite3_column_double(st, 0);
        vmax = sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    static const int cw[] = { 1, 10, 640, 8192 };
    for (size_t w = 0; w < sizeof cw / sizeof cw[0]; w++) {
        REQUIRE(timeline_query(db, -1000, 50000000, cw[w], NULL, 0, &series, 1, &v, &e) == 0);
        REQUIRE(v->ncounters == 1);
        const struct timeline_counter *c = &v->counters[0];
        double mn = INFINITY, mx = -INFINITY;
        CHECK(c->npoints >= 1 && c->npoints <= (size_t)cw[w] + 1);
        for (size_t i = 0; i < c->npoints; i++) {
            CHECK(c->points[i].min <= c->points[i].last && c->points[i].last <= c->points[i].max);
            if (i) CHECK(c->points[i].ts > c->points[i - 1].ts);
            if (c->points[i].min < mn) mn = c->points[i].min;
            if (c->points[i].max > mx) mx = c->points[i].max;
        }
        CHECK(mn == vmin);
        CHECK(mx == vmax);
        timeline_view_free(v);
        v = NULL;
    }
    /* the slice range helper agrees with a direct count */
    int64_t lo, hi, want = 0;
    for (size_t i = 0; i < nrefs; i++)
        if (refs[i].track == tracks[0] && refs[i].ts >= 1000000 && refs[i].ts < 2000000) want++;
    REQUIRE(timeline_slice_range(db, tracks[0], 1000000, 2000000, &lo, &hi, &e) == 0);
    CHECK_EQ_INT(hi - lo, want);
    check_old_layout(db);
    sqlite3_close(db);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_lod_invariants);
    free(refs);
    fixture_end();
    return harness_done("timeline_query");
}

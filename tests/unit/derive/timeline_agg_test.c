/* timeline_agg_test — the precomputed window aggregates against a direct
 * reading of the tables: for random windows, the whole buckets that
 * timeline_agg_slices reports hold exactly the per-name count (by start),
 * total (time cut to them) and self (minus the children's time, by
 * slice.parent) of the slices, misnested ones included; and
 * timeline_agg_counter gives the samples' min/max and the step function's
 * time-weighted mean exactly as the samples say, inside and outside the
 * series' span, and on a run without the tables; timeline_open_at finds
 * exactly the slices open at an instant, along chains of misnested slices
 * longer than the levels are deep. */
#include <math.h>

#include "timeline_fixture.h"
#include "derive/timeline_agg.h"

struct sref {
    int64_t id, track, ts, dur, parent;
    uint32_t name;
};

static struct sref *sl;
static size_t nsl;

static void load(sqlite3 *db)
{
    sqlite3_stmt *st;
    nsl = 0;
    sqlite3_prepare_v2(db, "SELECT id, track, ts, dur, coalesce(parent, 0), name FROM slice ORDER BY id", -1, &st, NULL);
    while (sqlite3_step(st) == SQLITE_ROW) {
        sl = xrealloc(sl, (nsl + 1) * sizeof *sl);
        sl[nsl++] = (struct sref){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                                   sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4),
                                   (uint32_t)sqlite3_column_int64(st, 5) };
    }
    sqlite3_finalize(st);
}

#define NNAMES 64
struct sums {
    int64_t n[NNAMES], total[NNAMES], self[NNAMES];
};

static void add_cb(void *ctx, uint32_t name, int64_t n, int64_t total, int64_t self)
{
    struct sums *s = ctx;
    if (name >= NNAMES) return;
    s->n[name] += n;
    s->total[name] += total;
    s->self[name] += self;
}

static int64_t clip(const struct sref *r, int64_t a, int64_t b)
{
    int64_t lo = r->ts > a ? r->ts : a, hi = r->ts + r->dur < b ? r->ts + r->dur : b;
    return hi > lo ? hi - lo : 0;
}

static void check_slices(sqlite3 *db, int64_t track, int64_t start, int64_t end)
{
    struct sums got, want;
    memset(&got, 0, sizeof got);
    memset(&want, 0, sizeof want);
    struct err e;
    int64_t a, b;
    REQUIRE(timeline_agg_slices(db, track, start, end, &a, &b, add_cb, &got, &e) == 0);
    CHECK(a >= start && b <= end && a <= b);
    for (size_t i = 0; i < nsl; i++) {
        const struct sref *r = &sl[i];
        if (r->track != track || r->name >= NNAMES) continue;
        int64_t c = clip(r, a, b);
        if (r->ts >= a && r->ts < b) want.n[r->name]++;
        want.total[r->name] += c;
        want.self[r->name] += c;
        if (r->parent > 0 && sl[r->parent - 1].name < NNAMES) want.self[sl[r->parent - 1].name] -= c;
    }
    for (int k = 0; k < NNAMES; k++) {
        CHECK_EQ_INT(got.n[k], want.n[k]);
        CHECK_EQ_INT(got.total[k], want.total[k]);
        CHECK_EQ_INT(got.self[k], want.self[k]);
    }
}

static void test_slices(void)
{
    struct err e;
    blen = 0;
    out(" ");
    nest(-1, 0, 30000000);
    /* misnested: each starts inside the previous one and ends after it */
    slice("python_function", "main", 1, 2, 0, 30000000);
    for (int i = 0; i < 200; i++) slice("user_annotation", "ProfilerStep#2", 1, 2, 1000 + i * 100000, 150000);
    sqlite3 *db = import();
    REQUIRE(db != NULL);
    load(db);
    REQUIRE(nsl > 1000);
    for (int i = 0; i < 40; i++) {
        int64_t s = (int64_t)rnd(31000000) - 500000, span = 1 + (int64_t)rnd(40000000 >> rnd(8));
        check_slices(db, sl[0].track, s, s + span);
        check_slices(db, sl[nsl - 1].track, s, s + span);
    }
    /* the slices open at an instant */
    for (int i = 0; i < 200; i++) {
        int64_t t = (int64_t)rnd(31000000), track = sl[i % 2 ? 0 : nsl - 1].track, first = 0, before = 0;
        size_t want = 0, n;
        int64_t *ids;
        for (size_t k = 0; k < nsl; k++) {
            if (sl[k].track != track) continue;
            if (!first) first = sl[k].id;
            if (sl[k].ts < t) before = sl[k].id;
            want += sl[k].ts < t && sl[k].ts + sl[k].dur > t;
        }
        REQUIRE(timeline_open_at(db, track, t, before, first, &ids, &n, &e) == 0);
        CHECK_EQ_INT(n, want);
        for (size_t k = 0; k < n; k++) {
            const struct sref *r = &sl[ids[k] - 1];
            CHECK(r->track == track && r->ts < t && r->ts + r->dur > t);
            if (k) CHECK(ids[k] > ids[k - 1]);
        }
        free(ids);
    }

    /* the whole run: nearly everything comes from the stored buckets */
    struct sums got;
    memset(&got, 0, sizeof got);
    int64_t a, b;
    REQUIRE(timeline_agg_slices(db, sl[0].track, -1000000000, 1000000000, &a, &b, add_cb, &got, &e) == 0);
    CHECK(a < b);
    check_slices(db, sl[0].track, -1000000000, 1000000000);
    sqlite3_close(db);
}

static void sample(struct timeline_cstats *w, double x)
{
    if (!w->n || x < w->min) w->min = x;
    if (!w->n || x > w->max) w->max = x;
    w->n++;
}

/* The step function of the samples over [s, e) directly: the value in
 * force at s, then each sample until the next one or e. */
static void want_counter(sqlite3 *db, int64_t s, int64_t e, struct timeline_cstats *w)
{
    sqlite3_stmt *st;
    int64_t cur = s;
    double v = 0;
    int has = 0, counted = 0;
    memset(w, 0, sizeof *w);
    sqlite3_prepare_v2(db, "SELECT ts, value FROM counter ORDER BY ts, id", -1, &st, NULL);
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t t = sqlite3_column_int64(st, 0);
        double x = sqlite3_column_double(st, 1);
        if (t >= e) break;
        if (t < s) {
            v = x;
            has = 1;
            continue;
        }
        if (has && !counted++) sample(w, v);
        if (has) {
            w->area += v * (double)(t - cur);
            w->covered += t - cur;
        }
        sample(w, x);
        v = x;
        cur = t;
        has = counted = 1;
    }
    sqlite3_finalize(st);
    if (has && !counted) sample(w, v);
    if (has) {
        w->area += v * (double)(e - cur);
        w->covered += e - cur;
    }
}

static void test_counters(void)
{
    blen = 0;
    out(" ");
    slice("cpu_op", "aten::mm", 1, 1, 0, 50000000);
    for (int i = 0; i < 4000; i++)
        out(",{\"ph\":\"C\",\"name\":\"util\",\"pid\":1,\"ts\":%d.%03d,\"args\":{\"value\":%d}}",
            1000 + i * 11 + (int)rnd(5), (int)rnd(1000), (int)rnd(1000));
    sqlite3 *db = import();
    REQUIRE(db != NULL);
    sqlite3_stmt *st;
    int64_t series = 0;
    sqlite3_prepare_v2(db, "SELECT id FROM cseries WHERE src = 0", -1, &st, NULL);
    if (sqlite3_step(st) == SQLITE_ROW) series = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    REQUIRE(series > 0);
    struct err e;
    char *path = xstrdup(sqlite3_db_filename(db, "main"));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 60; i++) {
            int64_t s = (int64_t)rnd(60000000) - 5000000, span = 1 + (int64_t)rnd(60000000 >> rnd(10));
            if (i == 0) s = -1000, span = 70000000;
            struct timeline_cstats got, want;
            REQUIRE(timeline_agg_counter(db, series, s, s + span, &got, &e) == 0);
            want_counter(db, s, s + span, &want);
            CHECK_EQ_INT(got.n, want.n);
            CHECK_EQ_INT(got.covered, want.covered);
            if (want.n) CHECK(got.min == want.min && got.max == want.max);
            CHECK(fabs(got.area - want.area) <= 1e-9 * fabs(want.area) + 1e-6);
        }
        if (pass) break;
        /* a run imported before the tables: the samples alone, same answers */
        sqlite3 *rw;
        REQUIRE(sqlite3_open(path, &rw) == SQLITE_OK);
        REQUIRE(sqlite3_exec(rw, "DROP TABLE cagg_level; DROP TABLE cagg", NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_close(rw);
    }
    free(path);
    sqlite3_close(db);
}

/* The counters' aggregates as text, series by series. */
static char *cagg_text(sqlite3 *db)
{
    sqlite3_stmt *st;
    char *out = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT group_concat(series || ':' || level || ':' || last, ';') FROM cagg_level)"
                           " || '#' || (SELECT group_concat(series || ':' || bucket || ':' || n || ':' || min || ':'"
                           " || max || ':' || area || ':' || covered, ';') FROM cagg)",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        out = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return out;
}

/* A series' aggregates depend on its samples alone: those added for the
 * series without any (the analyses' lanes after the trace's counters) are
 * what a build of all gives, and the others are left as they are. */
static void test_counters_added(void)
{
    blen = 0;
    out(" ");
    slice("cpu_op", "aten::mm", 1, 1, 0, 50000000);
    for (int i = 0; i < 3000; i++)
        out(",{\"ph\":\"C\",\"name\":\"%s\",\"pid\":1,\"ts\":%d,\"args\":{\"value\":%d}}", i % 3 ? "util" : "temp",
            1000 + i * 13, (int)rnd(1000));
    sqlite3 *db = import();
    REQUIRE(db != NULL);
    char *path = xstrdup(sqlite3_db_filename(db, "main"));
    sqlite3_close(db);
    sqlite3 *rw;
    struct err e;
    REQUIRE(sqlite3_open(path, &rw) == SQLITE_OK);
    char *all = cagg_text(rw);
    REQUIRE(all != NULL);
    CHECK(strstr(all, "#") && strlen(strstr(all, "#")) > 100);
    REQUIRE(sqlite3_exec(rw, "DELETE FROM cagg WHERE series = (SELECT max(series) FROM cagg_level);"
                             "DELETE FROM cagg_level WHERE series = (SELECT max(series) FROM cagg_level);"
                             "UPDATE cagg SET n = n + 1000 WHERE series = (SELECT min(series) FROM cagg_level)",
                         NULL, NULL, NULL) == SQLITE_OK);
    CHECK_EQ_INT(timeline_agg_add_counters(rw, &e), 0);
    char *added = cagg_text(rw);
    CHECK(added && strcmp(added, all) != 0); /* the first series kept its (altered) rows */
    REQUIRE(sqlite3_exec(rw, "UPDATE cagg SET n = n - 1000 WHERE series = (SELECT min(series) FROM cagg_level)",
                         NULL, NULL, NULL) == SQLITE_OK);
    char *fixed = cagg_text(rw);
    CHECK(fixed && strcmp(fixed, all) == 0); /* the other rebuilt as before */
    /* without the tables: created, every series built */
    REQUIRE(sqlite3_exec(rw, "DROP TABLE cagg; DROP TABLE cagg_level", NULL, NULL, NULL) == SQLITE_OK);
    CHECK_EQ_INT(timeline_agg_add_counters(rw, &e), 0);
    char *again = cagg_text(rw);
    CHECK(again && strcmp(again, all) == 0);
    CHECK_EQ_INT(timeline_agg_build_counters(rw, &e), 0);
    char *full = cagg_text(rw);
    CHECK(full && strcmp(full, all) == 0);
    free(all);
    free(added);
    free(fixed);
    free(again);
    free(full);
    sqlite3_close(rw);
    free(path);
}

int main(void)
{
    if (fixture_begin() != 0) return 1;
    RUN(test_slices);
    RUN(test_counters);
    RUN(test_counters_added);
    free(sl);
    fixture_end();
    return harness_done("timeline_agg");
}

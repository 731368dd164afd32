/* rundb_drain_test — the end of a rank: the sorter's drain into clustered
 * slice rows (spilled runs merged in order, depth and parent), and the notes
 * that count how slices ending after the one they start in were drawn. */
#include "rundb_fixture.h"

static void test_many_slices_spill(void)
{
    /* more rows than the 1 MiB sort budget holds: the sorter spills and the
     * merge must still give ordered ids and correct depths */
    struct err e;
    uint32_t t, n;
    struct rundb_writer *w;
    fixture_writer("big.db", 3, &w, &t, &n);
    REQUIRE(w != NULL);
    char *path = fixture_path("big.db");
    for (int i = 20000; i-- > 0;) {
        add(w, t, n, (int64_t)i * 100 + 10, 50); /* child */
        add(w, t, n, (int64_t)i * 100, 90);      /* parent */
    }
    REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
    REQUIRE(rundb_close_writer(w, &e) == 0);
    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice"), 40000);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice a JOIN slice b ON b.id = a.id + 1 WHERE b.ts < a.ts"), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice WHERE depth = 1 AND parent = id - 1"), 20000);
    sqlite3_close(db);
    free(path);
}

/* The slices with a correlation id go to corr_ids while their pairs fit a
 * quarter of the sort budget (1 MiB here: 16 k pairs); past that the
 * index on slice(corr) is built instead. Both find the same slices, across
 * ranks. */
static void test_corr_lookup(void)
{
    for (int big = 0; big < 2; big++) {
        struct rundb_writer *w;
        struct err e;
        char *path = fixture_path(big ? "corr-index.db" : "corr-ids.db");
        REQUIRE(rundb_create(path, 1 << 20, fixture_root, &w, &e) == 0);
        int per = big ? 12000 : 3000;
        for (int r = 0; r < 2; r++) {
            REQUIRE(rundb_begin_rank(w, r, "r.json", 1, &e) == 0);
            uint32_t t = rundb_track(w, "1", 1, "1", 1), g = rundb_track(w, "0", 1, "7", 1);
            uint32_t n = rundb_intern(w, "op", 2);
            rundb_track_set_kind(w, g, TB_TRACK_GPU);
            for (int i = 0; i < per; i++) {
                add_kind(w, t, n, TB_K_RUNTIME, (int64_t)i * 100, 10, 1 + i % 5000);
                add_kind(w, g, n, TB_K_KERNEL, (int64_t)i * 100 + 20, 50, 1 + i % 5000);
                add(w, t, n, (int64_t)i * 100 + 50, 5); /* no correlation id */
            }
            REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
        }
        REQUIRE(rundb_close_writer(w, &e) == 0);
        sqlite3 *db;
        REQUIRE(rundb_open_ro(path, &db, &e) == 0);
        CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'corr_ids'"), !big);
        CHECK_EQ_INT(q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'slice_corr'"), big);
        if (!big) {
            CHECK_EQ_INT(q1(db, "SELECT count(*) FROM corr_ids"), 4 * per);
            CHECK_EQ_INT(q1(db, "SELECT count(*) FROM corr_ids c JOIN slice s ON s.id = c.id WHERE s.corr != c.corr"), 0);
            CHECK_EQ_INT(q1(db, "SELECT count(*) FROM corr_ids WHERE corr = 7"), 4);
        } else {
            CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice WHERE corr = 7"), 4 * ((per - 7) / 5000 + 1));
        }
        sqlite3_close(db);
        free(path);
    }
}

static void test_misnested(void)
{
    struct rundb_writer *w;
    struct err e;
    char *path = fixture_path("misnested.db");
    REQUIRE(rundb_create(path, 1 << 20, fixture_root, &w, &e) == 0);
    REQUIRE(rundb_begin_rank(w, 0, "r0.json", 1, &e) == 0);
    uint32_t t = rundb_track(w, "1", 1, "1", 1), n = rundb_intern(w, "op", 2);
    uint32_t g = rundb_track(w, "0", 1, "7", 1);
    rundb_track_set_kind(w, g, TB_TRACK_GPU);
    add(w, t, n, 100, 100);
    add(w, t, n, 150, 100); /* ends at 250, after the slice it starts in (200) */
    add(w, t, n, 220, 100); /* starts in the second after the first ended */
    add(w, t, n, 230, 10);  /* inside the second and the third */
    add(w, g, n, 0, 100);
    add(w, g, n, 90, 60); /* a kernel starting before the previous one ends */
    REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
    REQUIRE(rundb_close_writer(w, &e) == 0);
    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    CHECK_EQ_INT(q1(db, "SELECT depth FROM slice WHERE ts=150"), 1);
    /* no cascade: the third takes the first's freed level */
    CHECK_EQ_INT(q1(db, "SELECT depth FROM slice WHERE ts=220"), 0);
    CHECK_EQ_INT(q1(db, "SELECT depth FROM slice WHERE ts=230"), 2);
    /* parent stays the latest-started open slice (the analyses' stack) */
    CHECK_EQ_INT(q1(db, "SELECT p.ts FROM slice c JOIN slice p ON p.id = c.parent WHERE c.ts=220"), 150);
    CHECK_EQ_INT(q1(db, "SELECT max_depth FROM track WHERE tid='1'"), 2);
    CHECK_EQ_INT(q1(db, "SELECT depth FROM slice WHERE ts=90"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count FROM note WHERE reason LIKE 'slices that end after%one level deeper%'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count FROM note WHERE reason LIKE 'slices that end after%free level%'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count FROM note WHERE reason LIKE 'GPU ops that overlap%sub-lane'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT nslices FROM track WHERE tid='1'"), 4);
    /* true times in storage */
    CHECK_EQ_INT(q1(db, "SELECT dur FROM slice WHERE ts=150"), 100);
    /* each note counts its slices; its example says where the first is */
    CHECK_EQ_INT(q1(db, "SELECT example = 'the first on pid 1, tid 1' FROM note WHERE reason LIKE 'slices that end after%one level deeper%'"), 1);
    CHECK_EQ_INT(q1(db, "SELECT example = 'the first on pid 0, tid 7' FROM note WHERE reason LIKE 'GPU ops that overlap%'"), 1);
    sqlite3_close(db);
    free(path);
}

/* Rows with args of every size over several of the writer's chunks, a
 * count no batch divides: each row keeps its own args and columns (the
 * writer inserts rows in batches held until their chunk is done). */
static void test_rows_across_chunks(void)
{
    struct err e;
    uint32_t t, n;
    struct rundb_writer *w;
    fixture_writer("chunks.db", 0, &w, &t, &n);
    REQUIRE(w != NULL);
    char *path = fixture_path("chunks.db"), *args = xmalloc(3100);
    const int rows = 3001;
    for (int i = 0; i < rows; i++) {
        int len = snprintf(args, 3100, "{\"i\":%d,\"pad\":\"%0*d\"}", i, (i * 37) % 3000, 0);
        struct tb_slice s = { t, n, 0, TB_K_CPU_OP, (int64_t)i * 10, 5, i % 7, i % 3, args, (size_t)len };
        CHECK_EQ_INT(rundb_add_slice(w, &s, &e), 0);
    }
    free(args);
    REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
    REQUIRE(rundb_close_writer(w, &e) == 0);
    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice"), rows);
    CHECK_EQ_INT(q1(db, "SELECT sum(length(args)) > 4 * 1048576 FROM slice"), 1);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice WHERE json_extract(args, '$.i') != ts / 10"
                        " OR length(json_extract(args, '$.pad')) != max((ts / 10 * 37) % 3000, 1)"
                        " OR corr != (ts / 10) % 7 OR ext != (ts / 10) % 3 OR dur != 5 OR id != ts / 10 + 1"),
                 0);
    sqlite3_close(db);
    free(path);
}

/* The batch statement keeps what each of its slots was bound last and binds
 * only what changed: rows whose columns repeat, change, and go from a
 * value to NULL and back (parent, category, args) at every slot keep each
 * their own values, through batches and the one-row statements of a
 * chunk's end. */
static void test_rows_rebound(void)
{
    struct err e;
    uint32_t t, n;
    struct rundb_writer *w;
    fixture_writer("rebound.db", 0, &w, &t, &n);
    REQUIRE(w != NULL);
    char *path = fixture_path("rebound.db");
    uint32_t c1 = rundb_intern(w, "c1", 2), c2 = rundb_intern(w, "c2", 2), n2 = rundb_intern(w, "other", 5);
    const int rows = 1001;
    for (int i = 0; i < rows; i++) {
        char args[32];
        int len = snprintf(args, sizeof args, "{\"i\":%d}", i);
        /* pairs: an outer slice, then one inside it (depth 1, parent the outer) */
        int64_t ts = (int64_t)(i / 2) * 100 + (i % 2 ? 10 : 0), dur = i % 2 ? 20 : 80;
        struct tb_slice s = { t,
                              (i / 5) % 2 ? n2 : n,
                              i % 7 == 3 ? 0 : i % 32 < 16 ? c1 : c2,
                              (i / 20) % 2 ? TB_K_PYTHON : TB_K_CPU_OP,
                              ts,
                              dur,
                              i % 9 < 4 ? 0 : i,
                              i % 11,
                              i % 3 ? args : NULL,
                              i % 3 ? (size_t)len : 0 };
        CHECK_EQ_INT(rundb_add_slice(w, &s, &e), 0);
    }
    REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
    REQUIRE(rundb_close_writer(w, &e) == 0);
    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    char sql[1024];
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice"), rows);
    /* id - 1 is the row's i: the pairs keep their order */
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM slice WHERE"
             " (parent IS NULL) != ((id - 1) %% 2 = 0) OR coalesce(parent, id - 1) != id - 1"
             " OR depth != (id - 1) %% 2"
             " OR (cat IS NULL) != ((id - 1) %% 7 = 3) OR coalesce(cat, 0) != CASE WHEN (id - 1) %% 7 = 3 THEN 0"
             " WHEN (id - 1) %% 32 < 16 THEN %u ELSE %u END"
             " OR name != CASE WHEN ((id - 1) / 5) %% 2 THEN %u ELSE %u END"
             " OR kind != CASE WHEN ((id - 1) / 20) %% 2 THEN %d ELSE %d END"
             " OR corr != CASE WHEN (id - 1) %% 9 < 4 THEN 0 ELSE id - 1 END OR ext != (id - 1) %% 11"
             " OR (args IS NULL) != ((id - 1) %% 3 = 0) OR coalesce(json_extract(args, '$.i'), id - 1) != id - 1"
             " OR dur != CASE WHEN (id - 1) %% 2 THEN 20 ELSE 80 END",
             c1, c2, n2, n, TB_K_PYTHON, TB_K_CPU_OP);
    CHECK_EQ_INT(q1(db, sql), 0);
    sqlite3_close(db);
    free(path);
}

/* What a slice sink was told (test_sink): each call with the number of
 * slices told before it. */
struct told {
    struct rundb_slice_out s[64];
    char args[64][32]; /* s[i].args copied (borrowed for the call) */
    int64_t track[8][4], rank[4][4]; /* (before, a, b, c) */
    int ns, nt, nr;
};

static void told_rank(void *ctx, int has, int64_t t0, int64_t t1)
{
    struct told *t = ctx;
    if (t->nr < 4) memcpy(t->rank[t->nr++], (int64_t[4]){ t->ns, has, t0, t1 }, sizeof t->rank[0]);
}

static void told_slice(void *ctx, const struct rundb_slice_out *s)
{
    struct told *t = ctx;
    if (t->ns >= 64) return;
    snprintf(t->args[t->ns], sizeof t->args[0], "%.*s", (int)s->args_len, s->args ? s->args : "");
    t->s[t->ns++] = *s;
}

static void told_track(void *ctx, int64_t track, int present, int max_depth, int64_t nslices)
{
    struct told *t = ctx;
    if (t->nt < 8)
        memcpy(t->track[t->nt++], (int64_t[4]){ t->ns, track, present ? max_depth : -1, nslices }, sizeof t->track[0]);
}

/* Each row of sql (4 integer columns) equals the next of want. */
static void rows_equal(sqlite3 *db, const char *sql, int64_t (*want)[4], int n)
{
    sqlite3_stmt *st;
    int i = 0;
    REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
    for (; sqlite3_step(st) == SQLITE_ROW; i++)
        for (int c = 0; c < 4 && i < n; c++) CHECK_EQ_INT(want[i][c], sqlite3_column_int64(st, c));
    sqlite3_finalize(st);
    CHECK_EQ_INT(i, n);
}

/* The sink hears, on the job's thread, exactly the rows the drain writes,
 * in id order: each rank's span first (as the rank row gets it), each
 * track's end after its last slice with its row's max_depth and nslices. */
static void test_sink(void)
{
    struct rundb_writer *w;
    struct err e;
    static struct told got;
    char *path = fixture_path("sink.db");
    REQUIRE(rundb_create(path, 1 << 20, fixture_root, &w, &e) == 0);
    struct rundb_slice_sink sink = { told_rank, told_slice, told_track, &got };
    rundb_set_slice_sink(w, &sink);
    for (int r = 0; r < 2; r++) {
        REQUIRE(rundb_begin_rank(w, r, "r.json", 1, &e) == 0);
        uint32_t t = rundb_track(w, "1", 1, "1", 1), u = rundb_track(w, "1", 1, "2", 1), n = rundb_intern(w, "op", 2);
        /* a launch: its kind, correlation id and args come with it */
        struct tb_slice l = { .track = u, .name = n, .kind = TB_K_RUNTIME, .ts = 5000 + r, .dur = 10,
                              .corr = 77 + r, .args = "{\"correlation\":77}", .args_len = 18 };
        REQUIRE(rundb_add_slice(w, &l, &e) == 0);
        add(w, t, n, 100, 100);
        add(w, t, n, 150, 100); /* misnested: depth 1, parent the first */
        add(w, t, n, 120, 10);
        REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
    }
    rundb_set_slice_sink(w, NULL);
    REQUIRE(rundb_close_writer(w, &e) == 0);
    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    sqlite3_stmt *st;
    REQUIRE(sqlite3_prepare_v2(db,
                               "SELECT id, track, ts, dur, coalesce(parent, 0), name, depth, coalesce(corr, 0), kind,"
                               " coalesce(args, '') FROM slice ORDER BY id",
                               -1, &st, NULL) == SQLITE_OK);
    int i = 0, launches = 0;
    for (; sqlite3_step(st) == SQLITE_ROW && i < got.ns; i++) {
        const struct rundb_slice_out *s = &got.s[i];
        int64_t v[9] = { s->id, s->track, s->ts, s->dur, s->parent, s->name, s->depth, s->corr, s->kind };
        for (int c = 0; c < 9; c++) CHECK_EQ_INT(v[c], sqlite3_column_int64(st, c));
        CHECK_EQ_STR(got.args[i], (const char *)sqlite3_column_text(st, 9));
        CHECK_EQ_INT(s->args_len, strlen(got.args[i]));
        launches += s->kind == TB_K_RUNTIME && s->corr >= 77 && strcmp(got.args[i], "{\"correlation\":77}") == 0;
    }
    CHECK_EQ_INT(launches, 2);
    sqlite3_finalize(st);
    CHECK_EQ_INT(i, 8);
    CHECK_EQ_INT(got.ns, 8);
    CHECK_EQ_INT(q1(db, "SELECT count(*) FROM slice WHERE depth = 1 AND parent IS NOT NULL"), 4);
    /* ids start at 1: a track's end comes after slice last_slice */
    rows_equal(db, "SELECT last_slice, id, max_depth, nslices FROM track ORDER BY id", got.track, got.nt);
    rows_equal(db, "SELECT (SELECT min(first_slice) FROM track t WHERE t.rank = r.rank) - 1, t0 IS NOT NULL, t0, t1"
                   " FROM rank r ORDER BY rank",
               got.rank, got.nr);
    sqlite3_close(db);
    free(path);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_many_slices_spill);
    RUN(test_corr_lookup);
    RUN(test_misnested);
    RUN(test_rows_across_chunks);
    RUN(test_rows_rebound);
    RUN(test_sink);
    fixture_cleanup();
    return harness_done("rundb_drain_test");
}

/* rundb_spool_test — a rank written through a spool and replayed gives the
 * very database a direct write gives (every table, row for row, with the
 * ids of strings and tracks shared with earlier ranks), a spool's string
 * and track ids are its own, a cancelled spool stops its importer, and a
 * spool must be replayed into the rank just begun. */
#include "rundb_fixture.h"
#include "store/rundb_spool.h"

/* The calls an importer makes for one rank: strings shared with other
 * ranks and new ones, tracks named and marked, every kind of row, notes,
 * an invalid UTF-8 name and a header. */
static void fill_rank(struct rundb_writer *w, int r)
{
    struct err e;
    char name[32];
    uint32_t cpu = rundb_track(w, "7", 1, "1", 1), gpu = rundb_track(w, "0", 1, "stream 7", 8);
    rundb_track_set_kind(w, gpu, TB_TRACK_GPU);
    rundb_track_set_name(w, cpu, "python", 6);
    rundb_process_set_name(w, "7", 1, "trainer", 7);
    rundb_track_set_sort(w, gpu, 3);
    uint32_t shared = rundb_intern(w, "aten::mm", 8), cat = rundb_intern(w, "cpu_op", 6);
    snprintf(name, sizeof name, "rank%d only", r);
    uint32_t own = rundb_intern(w, name, strlen(name)), bad = rundb_intern(w, "x\xff", 2);
    for (int i = 0; i < 3000; i++) {
        /* out of order, nested, with args: depth, parent and the sorter see it all */
        struct tb_slice s = { cpu, i % 3 ? shared : own, cat, TB_K_CPU_OP, (int64_t)(3000 - i) * 10, 25, 0, 0,
                              "{\"i\":1}", 7 };
        CHECK_EQ_INT(rundb_add_slice(w, &s, &e), 0);
        struct tb_slice k = { gpu, bad, 0, TB_K_KERNEL, (int64_t)i * 10 + 3, 4, i + 1, 0, NULL, 0 };
        CHECK_EQ_INT(rundb_add_slice(w, &k, &e), 0);
        rundb_count_event(w, 0);
        rundb_count_event(w, 0);
    }
    struct tb_flow f = { cpu, cat, shared, "42", 2, 's', 0, 15 };
    struct tb_instant in = { gpu, own, cat, 'p', 77, "{}", 2 };
    struct tb_counter c = { own, cpu, 99, 1.5 };
    struct tb_mem m = { cpu, 120, 1, 0, 4096, 512, 1024, -1 };
    CHECK_EQ_INT(rundb_add_flow(w, &f, &e), 0);
    CHECK_EQ_INT(rundb_add_instant(w, &in, &e), 0);
    CHECK_EQ_INT(rundb_add_counter(w, &c, &e), 0);
    CHECK_EQ_INT(rundb_add_mem(w, &m, &e), 0);
    rundb_count_event(w, 1);
    rundb_note(w, TB_NOTE_REPAIRED, "negative dur: taken as 0", NULL);
    rundb_note(w, TB_NOTE_DROPPED, "event without ts", name);
    json_t *hdr = json_pack("{s:{s:i},s:[{s:i,s:s}]}", "distributedInfo", "rank", r, "deviceProperties", "id", 0,
                            "name", "GPU X");
    CHECK_EQ_INT(rundb_set_rank_header(w, hdr, "kineto", 1000 * r, &e), 0);
    json_decref(hdr);
}

/* Writes three ranks to path; with spooled set, ranks 1 and 2 go through
 * spools filled before rank 0 is written (as the workers of ingest.c do). */
static void write_run(const char *path, int spooled)
{
    struct rundb_writer *w, *sp[3] = { NULL, NULL, NULL };
    struct err e;
    REQUIRE(rundb_create(path, 1 << 20, fixture_root, &w, &e) == 0);
    if (spooled)
        for (int r = 1; r < 3; r++) {
            REQUIRE(rundb_spool_new(fixture_root, r, &sp[r], &e) == 0);
            fill_rank(sp[r], r);
        }
    for (int r = 0; r < 3; r++) {
        char file[32];
        snprintf(file, sizeof file, "rank%d.json", r);
        REQUIRE(rundb_begin_rank(w, r, file, 10, &e) == 0);
        if (sp[r]) CHECK_EQ_INT(rundb_spool_replay(w, sp[r], &e), 0);
        else fill_rank(w, r);
        struct tb_rank_stats st;
        REQUIRE(rundb_finish_rank(w, &st, &e) == 0);
        CHECK_EQ_INT(st.events, 6001);
        CHECK_EQ_INT(st.slices, 6000);
        rundb_abort(sp[r]);
    }
    REQUIRE(rundb_close_writer(w, &e) == 0);
}

/* Every row of every table of path, as one text. Owned by caller. */
static char *dump(const char *path)
{
    static const char *tables[] = { "rank", "str", "track", "slice", "flow", "instant", "counter", "mem", "note" };
    sqlite3 *db;
    struct err e;
    size_t cap = 1 << 20, n = 0;
    char *out = xmalloc(cap);
    out[0] = '\0';
    if (rundb_open_ro(path, &db, &e) != 0) return out;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        char sql[96];
        sqlite3_stmt *st;
        snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY rowid", tables[t]);
        CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                const char *v = (const char *)sqlite3_column_text(st, c);
                size_t len = v ? strlen(v) : 4;
                if (n + len + 3 > cap) {
                    cap = (n + len + 3) * 2;
                    out = xrealloc(out, cap);
                }
                memcpy(out + n, v ? v : "NULL", len);
                n += len;
                out[n++] = c + 1 < sqlite3_column_count(st) ? '|' : '\n';
            }
        }
        sqlite3_finalize(st);
    }
    out[n] = '\0';
    sqlite3_close(db);
    return out;
}

static void test_replay_is_a_direct_write(void)
{
    char *direct = fixture_path("direct.db"), *spooled = fixture_path("spooled.db");
    write_run(direct, 0);
    write_run(spooled, 1);
    char *a = dump(direct), *b = dump(spooled);
    CHECK(strlen(a) > 100000);
    CHECK(strcmp(a, b) == 0);
    free(a);
    free(b);
    free(direct);
    free(spooled);
}

static void test_ids_are_the_spools(void)
{
    struct rundb_writer *sp;
    struct err e;
    REQUIRE(rundb_spool_new(fixture_root, 3, &sp, &e) == 0);
    CHECK_EQ_INT(rundb_intern(sp, "a", 1), 1);
    CHECK_EQ_INT(rundb_intern(sp, "b", 1), 2);
    CHECK_EQ_INT(rundb_intern(sp, "a", 1), 1);
    CHECK_EQ_INT(rundb_track(sp, "1", 1, "2", 1), 1);
    rundb_abort(sp);
}

static void test_cancel_and_misuse(void)
{
    struct rundb_writer *sp, *w;
    struct err e;
    REQUIRE(rundb_spool_new(fixture_root, 1, &sp, &e) == 0);
    uint32_t t = rundb_track(sp, "1", 1, "1", 1), n = rundb_intern(sp, "x", 1);
    struct tb_slice s = { t, n, 0, TB_K_CPU_OP, 1, 2, 0, 0, NULL, 0 };
    CHECK_EQ_INT(rundb_add_slice(sp, &s, &e), 0);
    rundb_spool_cancel(sp);
    CHECK_EQ_INT(rundb_add_slice(sp, &s, &e), ERR_INTERNAL);
    CHECK(strstr(e.msg, "cancelled") != NULL);

    char *path = fixture_path("misuse.db");
    REQUIRE(rundb_create(path, 1 << 20, fixture_root, &w, &e) == 0);
    REQUIRE(rundb_begin_rank(w, 1, "rank1.json", 1, &e) == 0);
    CHECK_EQ_INT(rundb_spool_replay(w, sp, &e), ERR_INTERNAL); /* the cancel is the spool's error */
    CHECK(strstr(e.msg, "cancelled") != NULL);
    rundb_abort(sp);
    REQUIRE(rundb_spool_new(fixture_root, 2, &sp, &e) == 0); /* another rank than the one begun */
    CHECK_EQ_INT(rundb_spool_replay(w, sp, &e), ERR_INTERNAL);
    rundb_abort(sp);
    rundb_abort(w);
    free(path);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_replay_is_a_direct_write);
    RUN(test_ids_are_the_spools);
    RUN(test_cancel_and_misuse);
    fixture_cleanup();
    return harness_done("rundb_spool");
}

/* nameids_test — each name's slice ids, written and read back:
 *  - built from 200 k ascending ids over 40 names (one name half of them,
 *    some with a single id), every chunk within NAMEIDS_CHUNK, and every
 *    walk and count over random ranges equal to a brute force;
 *  - more names than NAMEIDS_HELD_MAX holds: chunks go out before the last
 *    flush, and the answers stay right;
 *  - the real writer: name_ids against the slice table, over two ranks;
 *  - a run stored before name_ids (slice_name instead): the same answers;
 *  - a connection aside (run.db attached beside a scratch) reads name_ids,
 *    not the slices;
 *  - garbled chunks (cut short, a zero gap, a wrong last id, no ids, two
 *    that overlap) are ERR_DAMAGED, for a walk and for a count. */
#include "store/nameids.h"

#include <stdlib.h>

#include "base/varint.h"
#include "rundb_fixture.h"
#include "store/rundb_schema.h"

struct sink {
    sqlite3_stmt *ins;
    size_t chunks, maxlen;
    int64_t ids;
};

static int emit(void *ctx, const struct nameids_chunk *c, struct err *e)
{
    struct sink *s = ctx;
    (void)e;
    s->chunks++;
    s->ids += c->n;
    if (c->len > s->maxlen) s->maxlen = c->len;
    sqlite3_reset(s->ins);
    sqlite3_bind_int64(s->ins, 1, c->name);
    sqlite3_bind_int64(s->ins, 2, c->first);
    sqlite3_bind_int64(s->ins, 3, c->last);
    sqlite3_bind_int64(s->ins, 4, c->n);
    sqlite3_bind_blob(s->ins, 5, c->ids, (int)c->len, SQLITE_TRANSIENT);
    return sqlite3_step(s->ins) == SQLITE_DONE ? 0 : -1;
}

static sqlite3 *schema_db(struct sink *s)
{
    sqlite3 *db;
    struct err e;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || rundb_schema_create(db, &e) != 0) return NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO name_ids VALUES(?,?,?,?,?)", -1, &s->ins, NULL) != SQLITE_OK) return NULL;
    return db;
}

/* ids[0..n) of each name (ascending) against the reader: every walk over
 * and count of nranges random ranges; returns the mismatches. */
static size_t compare(sqlite3 *db, int64_t *const *ids, const size_t *nids, uint32_t nnames, int64_t top, int nranges)
{
    struct nameids *c;
    struct err e;
    size_t bad = 0;
    unsigned seed = 11;
    if (nameids_open(db, &c, &e) != 0) return 1000000;
    for (uint32_t nm = 0; nm < nnames; nm++) {
        for (int r = 0; r < nranges; r++) {
            seed = seed * 1103515245u + 12345u;
            int64_t lo = r == 0 ? INT64_MIN : (int64_t)((seed >> 4) % (uint64_t)(top + 2)) - 1;
            seed = seed * 1103515245u + 12345u;
            int64_t hi = r == 0 ? INT64_MAX : lo + (int64_t)((seed >> 4) % (uint64_t)(top / (1 + r % 5) + 1));
            size_t k = 0, want = 0;
            int64_t id, n;
            int rc;
            while (k < nids[nm] && ids[nm][k] < lo) k++;
            nameids_begin(c, nm, lo, hi);
            while ((rc = nameids_next(c, &id, &e)) == 1) {
                if (k >= nids[nm] || ids[nm][k] != id || id > hi) bad++;
                k++;
            }
            if (rc != 0 || (k < nids[nm] && ids[nm][k] <= hi)) bad++;
            for (size_t i = 0; i < nids[nm]; i++) want += ids[nm][i] >= lo && ids[nm][i] <= hi;
            if (nameids_count(c, nm, lo, hi, &n, &e) != 0 || n != (int64_t)want) bad++;
        }
    }
    nameids_close(c);
    return bad;
}

static void test_build_read(void)
{
    enum { NAMES = 40, IDS = 200000 };
    struct sink s = { 0 };
    struct err e;
    sqlite3 *db = schema_db(&s);
    REQUIRE(db != NULL);
    int64_t *ids[NAMES];
    size_t nids[NAMES] = { 0 };
    for (int i = 0; i < NAMES; i++) ids[i] = malloc(IDS * sizeof **ids);
    struct nameids_build *b = nameids_build_new(emit, &s);
    unsigned seed = 5;
    int64_t id = 0;
    int failed = 0;
    for (int i = 0; i < IDS; i++) {
        seed = seed * 1103515245u + 12345u;
        /* gaps from 1 to past 2^14 (3-byte varints), name 3 half the ids */
        id += 1 + (int64_t)((seed >> 8) % (i % 100 == 0 ? 40000 : 7));
        uint32_t nm = (seed >> 20) % 2 ? 3 : (uint32_t)((seed >> 12) % 30);
        if (i == 1000) nm = 35; /* names 35 and 39 hold one id each, 36-38 none */
        if (i == 2000) nm = 39;
        ids[nm][nids[nm]++] = id;
        failed += nameids_build_add(b, nm, id, &e) != 0;
    }
    failed += nameids_build_flush(b, &e) != 0;
    nameids_build_free(b);
    CHECK_EQ_INT(failed, 0);
    CHECK_EQ_INT(s.ids, IDS);
    CHECK(s.maxlen <= NAMEIDS_CHUNK);
    CHECK(s.chunks > 50); /* name 3 alone needs many */
    CHECK_EQ_INT(q1(db, "SELECT n FROM name_ids WHERE name = 35"), 1);
    CHECK_EQ_INT(compare(db, ids, nids, NAMES, id, 30), 0);
    sqlite3_finalize(s.ins);
    sqlite3_close(db);
    for (int i = 0; i < NAMES; i++) free(ids[i]);
}

static void test_held_max(void)
{
    enum { NAMES = 300000 };
    struct sink s = { 0 };
    struct err e;
    sqlite3 *db = schema_db(&s);
    REQUIRE(db != NULL);
    struct nameids_build *b = nameids_build_new(emit, &s);
    int failed = 0;
    /* two ids a name: each name holds a buffer, together past the limit */
    for (int64_t i = 0; i < NAMES; i++) failed += nameids_build_add(b, (uint32_t)i, 1 + i, &e) != 0;
    for (int64_t i = 0; i < NAMES; i++) failed += nameids_build_add(b, (uint32_t)i, 1 + NAMES + 3 * i, &e) != 0;
    size_t before = s.chunks;
    failed += nameids_build_flush(b, &e) != 0;
    nameids_build_free(b);
    CHECK_EQ_INT(failed, 0);
    CHECK(before > 0);
    CHECK_EQ_INT(s.ids, 2 * NAMES);
    /* a few names, each with its two ids, whichever flush cut them */
    int64_t a[2], c[2], d[2];
    int64_t *ids[3] = { a, c, d };
    size_t nids[3] = { 2, 2, 2 };
    for (int i = 0; i < 3; i++) {
        ids[i][0] = 1 + i;
        ids[i][1] = 1 + NAMES + 3 * i;
    }
    CHECK_EQ_INT(compare(db, ids, nids, 3, 4 * NAMES, 4), 0);
    CHECK_EQ_INT(q1(db, "SELECT count(DISTINCT name) FROM name_ids"), NAMES);
    sqlite3_finalize(s.ins);
    sqlite3_close(db);
}

/* Through rundb_writer: slices of three names over two ranks, added out of
 * time order; the reader agrees with the slice table. */
static void test_writer(void)
{
    struct rundb_writer *w;
    struct err e;
    char *path = fixture_path("names.db");
    REQUIRE(rundb_create(path, 1 << 20, fixture_root, &w, &e) == 0);
    for (int r = 0; r < 2; r++) {
        REQUIRE(rundb_begin_rank(w, r, "rank.json", 1, &e) == 0);
        uint32_t t1 = rundb_track(w, "1", 1, "1", 1), t2 = rundb_track(w, "1", 1, "2", 1);
        uint32_t nm[3] = { rundb_intern(w, "a", 1), rundb_intern(w, "b", 1), rundb_intern(w, "c", 1) };
        for (int i = 0; i < 3000; i++) add(w, i % 3 ? t1 : t2, nm[(i * 7) % 3 == 0 ? 0 : i % 2 + 1], (i * 7919) % 10007, 1);
        REQUIRE(rundb_finish_rank(w, NULL, &e) == 0);
    }
    REQUIRE(rundb_close_writer(w, &e) == 0);
    sqlite3 *db;
    REQUIRE(rundb_open_ro(path, &db, &e) == 0);
    int64_t *ids[3];
    size_t nids[3];
    sqlite3_stmt *st;
    REQUIRE(sqlite3_prepare_v2(db, "SELECT id FROM slice WHERE name = (SELECT id FROM str WHERE s = ?) ORDER BY id",
                               -1, &st, NULL) == SQLITE_OK);
    const char *names[3] = { "a", "b", "c" };
    uint32_t first = (uint32_t)q1(db, "SELECT id FROM str WHERE s = 'a'");
    CHECK_EQ_INT(q1(db, "SELECT id FROM str WHERE s = 'c'"), first + 2);
    for (int i = 0; i < 3; i++) {
        ids[i] = malloc(6000 * sizeof **ids);
        nids[i] = 0;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, names[i], -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW) ids[i][nids[i]++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    CHECK_EQ_INT(nids[0] + nids[1] + nids[2], 6000);
    /* the names are str ids first.. first+2: compare() walks names from 0 */
    int64_t *byid[64] = { 0 };
    size_t nbyid[64] = { 0 };
    REQUIRE(first + 2 < 64);
    for (int i = 0; i < 3; i++) {
        byid[first + i] = ids[i];
        nbyid[first + i] = nids[i];
    }
    CHECK_EQ_INT(compare(db, byid, nbyid, first + 3, 6000, 20), 0);
    sqlite3_close(db);
    for (int i = 0; i < 3; i++) free(ids[i]);
    free(path);
}

/* A run stored before name_ids: slice_name answers the same. */
static void test_before(void)
{
    sqlite3 *db;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db,
                         "CREATE TABLE slice(id INTEGER PRIMARY KEY, track INTEGER, ts INTEGER, name INTEGER);"
                         "CREATE INDEX slice_name ON slice(name, track, ts);",
                         NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_stmt *ins;
    REQUIRE(sqlite3_prepare_v2(db, "INSERT INTO slice VALUES(?,?,?,?)", -1, &ins, NULL) == SQLITE_OK);
    int64_t a[4000], b[4000];
    int64_t *ids[2] = { a, b };
    size_t nids[2] = { 0, 0 };
    for (int64_t id = 1; id <= 5000; id++) {
        int nm = id % 5 == 0 ? 0 : 1;
        if (nids[nm] < 4000) ids[nm][nids[nm]++] = id;
        else continue;
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int64(ins, 2, id / 1000);
        sqlite3_bind_int64(ins, 3, id);
        sqlite3_bind_int64(ins, 4, nm);
        sqlite3_step(ins);
    }
    sqlite3_finalize(ins);
    CHECK_EQ_INT(compare(db, ids, nids, 2, 5000, 20), 0);
    sqlite3_close(db);
}

/* run.db attached to a scratch as "run": name_ids is found there (its
 * slice table is left empty, so reading the slices would give nothing). */
static void test_attached(void)
{
    struct sink s = { 0 };
    struct err e;
    char *path = fixture_path("attached.db");
    sqlite3 *db;
    REQUIRE(sqlite3_open(path, &db) == SQLITE_OK && rundb_schema_create(db, &e) == 0);
    REQUIRE(sqlite3_prepare_v2(db, "INSERT INTO name_ids VALUES(?,?,?,?,?)", -1, &s.ins, NULL) == SQLITE_OK);
    struct nameids_build *b = nameids_build_new(emit, &s);
    int64_t v[3] = { 4, 9, 30 }, *ids[1] = { v };
    size_t nids[1] = { 3 };
    for (int i = 0; i < 3; i++) CHECK_EQ_INT(nameids_build_add(b, 0, v[i], &e), 0);
    CHECK_EQ_INT(nameids_build_flush(b, &e), 0);
    nameids_build_free(b);
    sqlite3_finalize(s.ins);
    sqlite3_close(db);
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    sqlite3_stmt *st;
    REQUIRE(sqlite3_prepare_v2(db, "ATTACH ?1 AS run", -1, &st, NULL) == SQLITE_OK);
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    CHECK_EQ_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    CHECK_EQ_INT(compare(db, ids, nids, 1, 40, 10), 0);
    sqlite3_close(db);
    free(path);
}

/* Chunks that do not decode: a walk and a count over them fail. */
static void test_damaged(void)
{
    struct {
        int64_t first, last, n;
        uint8_t blob[4];
        int len;
    } bad[] = {
        { 10, 20, 3, { 5 }, 1 },          /* two gaps promised, one given */
        { 10, 20, 3, { 0, 10 }, 2 },      /* a zero gap */
        { 10, 20, 3, { 2, 3 }, 2 },       /* ends at 15, not 20 */
        { 10, 20, 2, { 0x80 }, 1 },       /* a varint cut short */
        { 10, 10, 0, { 0 }, 0 },          /* no ids */
        { 10, 20, 2, { 10, 1 }, 2 },      /* a byte past the last id */
        { 10, 20, 2, { 11 }, 1 },         /* past last */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct sink s = { 0 };
        struct err e;
        sqlite3 *db = schema_db(&s);
        REQUIRE(db != NULL);
        sqlite3_bind_int64(s.ins, 1, 7);
        sqlite3_bind_int64(s.ins, 2, bad[i].first);
        sqlite3_bind_int64(s.ins, 3, bad[i].last);
        sqlite3_bind_int64(s.ins, 4, bad[i].n);
        sqlite3_bind_blob(s.ins, 5, bad[i].blob, bad[i].len, SQLITE_STATIC);
        CHECK_EQ_INT(sqlite3_step(s.ins), SQLITE_DONE);
        struct nameids *c;
        REQUIRE(nameids_open(db, &c, &e) == 0);
        int64_t id, n;
        int rc;
        nameids_begin(c, 7, 0, 100);
        while ((rc = nameids_next(c, &id, &e)) == 1) {}
        CHECK_EQ_INT(rc, ERR_DAMAGED);
        /* a count decodes the chunks the range cuts */
        CHECK_EQ_INT(nameids_count(c, 7, 11, 100, &n, &e), ERR_DAMAGED);
        nameids_close(c);
        sqlite3_finalize(s.ins);
        sqlite3_close(db);
    }
    /* two chunks that overlap (40, 43, 50 and 48, 50): ids would go back */
    struct sink s = { 0 };
    struct err e;
    sqlite3 *db = schema_db(&s);
    REQUIRE(db != NULL);
    const uint8_t g1[] = { 3, 7 }, g2[] = { 2 };
    const int64_t rows[2][3] = { { 40, 50, 3 }, { 48, 50, 2 } };
    const uint8_t *gaps[2] = { g1, g2 };
    for (int r = 0; r < 2; r++) {
        sqlite3_reset(s.ins);
        sqlite3_bind_int64(s.ins, 1, 7);
        for (int k = 0; k < 3; k++) sqlite3_bind_int64(s.ins, 2 + k, rows[r][k]);
        sqlite3_bind_blob(s.ins, 5, gaps[r], r ? 1 : 2, SQLITE_STATIC);
        CHECK_EQ_INT(sqlite3_step(s.ins), SQLITE_DONE);
    }
    struct nameids *c;
    REQUIRE(nameids_open(db, &c, &e) == 0);
    int64_t id, n;
    int rc, got = 0;
    nameids_begin(c, 7, 45, 100);
    while ((rc = nameids_next(c, &id, &e)) == 1) got++;
    CHECK_EQ_INT(rc, ERR_DAMAGED);
    CHECK_EQ_INT(got, 1); /* 50, then the chunk starting at 48 */
    CHECK_EQ_INT(nameids_count(c, 7, 45, 100, &n, &e), ERR_DAMAGED);
    nameids_close(c);
    sqlite3_finalize(s.ins);
    sqlite3_close(db);
}

int main(void)
{
    if (fixture_dir() != 0) return 1;
    RUN(test_build_read);
    RUN(test_held_max);
    RUN(test_writer);
    RUN(test_before);
    RUN(test_attached);
    RUN(test_damaged);
    fixture_cleanup();
    return harness_done("nameids_test");
}

/* summary_rank_test — the per-rank state shared by the summary passes: the
 * name cache reads each str id once and classifies its text (tensor-core
 * and communication kernels, communication operators, ProfilerStep and
 * wrappers that are not operators); the correlation index finds every GPU
 * op of one correlation id. */
#include "derive/summary_rank.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void test_names(void)
{
    sqlite3 *db;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db,
                         "CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT);"
                         "INSERT INTO str VALUES(1, 'ncclKernel_AllReduce_RING_LL_Sum_float'),"
                         "(2, 'ProfilerStep#3'), (3, 'aten::mm'), (4, 'Optimizer.step#SGD.step');",
                         NULL, NULL, NULL) == SQLITE_OK);
    struct names nm;
    hmap_init(&nm.map, sizeof(struct name), 4);
    REQUIRE(sqlite3_prepare_v2(db, "SELECT s FROM str WHERE id = ?", -1, &nm.get, NULL) == SQLITE_OK);
    CHECK_EQ_STR(summary_rank_name(&nm, 0)->s, "");
    const struct name *n1 = summary_rank_name(&nm, 1);
    CHECK(n1->id == 1 && (n1->flags & NF_COMM_KERNEL));
    CHECK((summary_rank_name(&nm, 2)->flags & (NF_STEP | NF_NOT_OP)) == (NF_STEP | NF_NOT_OP));
    CHECK((summary_rank_name(&nm, 3)->flags & NF_NOT_OP) == 0);
    CHECK(summary_rank_name(&nm, 4)->flags & NF_NOT_OP);
    CHECK_EQ_STR(summary_rank_name(&nm, 99)->s, ""); /* unknown id: empty text */
    CHECK_EQ_INT(nm.map.n, 5);
    CHECK_EQ_STR(summary_rank_name(&nm, 3)->s, "aten::mm"); /* cached */
    CHECK_EQ_INT(nm.map.n, 5);
    summary_rank_names_free(&nm);
    sqlite3_close(db);
}

/* The flag cache in front of the map: ids sharing a slot (1 and 1 +
 * NAMES_FLAG_CACHE) each get their own flags, id 0 reads 0, and a cached
 * id is not looked up again. */
static void test_flag_cache(void)
{
    sqlite3 *db;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    char *sql = sqlite3_mprintf("CREATE TABLE str(id INTEGER PRIMARY KEY, s TEXT);"
                                "INSERT INTO str VALUES(1, 'ProfilerStep#3'), (%d, 'ncclKernel_AllReduce'),"
                                "(2, 'aten::mm');",
                                1 + NAMES_FLAG_CACHE);
    REQUIRE(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_free(sql);
    struct names nm;
    memset(&nm, 0, sizeof nm);
    hmap_init(&nm.map, sizeof(struct name), 4);
    REQUIRE(sqlite3_prepare_v2(db, "SELECT s FROM str WHERE id = ?", -1, &nm.get, NULL) == SQLITE_OK);
    CHECK_EQ_INT(summary_rank_flags(&nm, 0), 0);
    CHECK_EQ_INT(nm.map.n, 0); /* id 0 is never looked up */
    uint8_t step = summary_rank_flags(&nm, 1), nccl = summary_rank_flags(&nm, 1 + NAMES_FLAG_CACHE);
    CHECK(step & NF_STEP);
    CHECK(!(step & NF_COMM_KERNEL));
    CHECK(nccl & NF_COMM_KERNEL);
    CHECK(!(nccl & NF_STEP));
    CHECK_EQ_INT(summary_rank_flags(&nm, 1), step); /* evicted by the other id, read again */
    CHECK_EQ_INT(summary_rank_flags(&nm, 2), summary_rank_name(&nm, 2)->flags);
    CHECK_EQ_INT(nm.map.n, 3);
    sqlite3_finalize(nm.get);
    nm.get = NULL; /* a cached id needs no statement */
    CHECK_EQ_INT(summary_rank_flags(&nm, 2), summary_rank_name(&nm, 2)->flags);
    summary_rank_names_free(&nm);
    sqlite3_close(db);
}

static void test_correlation_index(void)
{
    struct rankctx c;
    memset(&c, 0, sizeof c);
    /* ops 0..4 load with ids 77, 5, 77, none (op 3 is not added), -3 */
    summary_rank_corr_add(&c, 77, 0);
    summary_rank_corr_add(&c, 5, 1);
    summary_rank_corr_add(&c, 77, 2);
    summary_rank_corr_add(&c, -3, 4);
    summary_rank_corr_index(&c);
    CHECK_EQ_INT(c.nby_corr, 4);
    size_t k = summary_rank_corr_first(&c, 77);
    REQUIRE(k < c.nby_corr);
    CHECK_EQ_INT(c.by_corr[k].idx, 0); /* the ops of one id in index order */
    REQUIRE(k + 1 < c.nby_corr);
    CHECK_EQ_INT(c.by_corr[k + 1].idx, 2);
    CHECK(k + 2 == c.nby_corr || c.by_corr[k + 2].key != 77);
    k = summary_rank_corr_first(&c, 5);
    REQUIRE(k < c.nby_corr);
    CHECK_EQ_INT(c.by_corr[k].idx, 1);
    CHECK_EQ_INT(c.by_corr[summary_rank_corr_first(&c, -3)].idx, 4);
    CHECK_EQ_INT(summary_rank_corr_first(&c, 6), c.nby_corr);
    CHECK_EQ_INT(summary_rank_corr_first(&c, 100), c.nby_corr);
    CHECK_EQ_INT(summary_rank_corr_first(&c, 0), c.nby_corr); /* 0: no correlation */
    /* past the first block the array grows and the index still finds each op */
    for (uint32_t i = 5; i < 10005; i++) summary_rank_corr_add(&c, 100000 - (int64_t)i, i);
    summary_rank_corr_index(&c);
    CHECK_EQ_INT(c.nby_corr, 10004);
    CHECK_EQ_INT(c.by_corr[summary_rank_corr_first(&c, 100000 - 7777)].idx, 7777);
    CHECK_EQ_INT(c.by_corr[summary_rank_corr_first(&c, 77)].idx, 0);
    free(c.by_corr);
}

int main(void)
{
    RUN(test_names);
    RUN(test_flag_cache);
    RUN(test_correlation_index);
    return harness_done("summary_rank");
}

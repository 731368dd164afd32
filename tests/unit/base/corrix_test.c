/* corrix_test — the sorted key index: entries of one key in position
 * order, the first found, a missing key past the end (below, between and
 * above the stored keys), negative keys, an empty index. */
#include "base/corrix.h"

#include "harness.h"

static void test_index(void)
{
    struct corrix v[] = { { 77, 2 }, { 5, 1 }, { 77, 0 }, { -3, 4 }, { 9, 3 } };
    size_t n = sizeof v / sizeof v[0];
    corrix_sort(v, n);
    size_t k = corrix_first(v, n, 77);
    REQUIRE(k + 1 < n);
    CHECK_EQ_INT(v[k].idx, 0); /* the ops of one key in position order */
    CHECK_EQ_INT(v[k + 1].idx, 2);
    CHECK_EQ_INT(v[corrix_first(v, n, -3)].idx, 4);
    CHECK_EQ_INT(v[corrix_first(v, n, 9)].idx, 3);
    CHECK_EQ_INT(corrix_first(v, n, -10), n); /* below every key */
    CHECK_EQ_INT(corrix_first(v, n, 6), n);   /* between two */
    CHECK_EQ_INT(corrix_first(v, n, 100), n); /* above every key */
    CHECK_EQ_INT(corrix_first(v, 0, 77), 0);  /* empty */
    corrix_sort(v, 0);
}

int main(void)
{
    RUN(test_index);
    return harness_done("corrix");
}

/* ivlist_test — interval arithmetic on hand-worked lists: merging on
 * append, normalizing out-of-order input, union, difference, windows. */
#include "derive/ivlist.h"

#include "harness.h"

static void test_add_and_normalize(void)
{
    struct ivlist l = { 0 };
    ivlist_add(&l, 0, 10);
    ivlist_add(&l, 5, 20); /* overlaps: merged */
    ivlist_add(&l, 20, 25); /* touches: merged */
    ivlist_add(&l, 7, 7);   /* empty: ignored */
    CHECK_EQ_INT(l.n, 1);
    CHECK_EQ_INT(l.v[0].b, 25);
    ivlist_add(&l, 40, 50);
    ivlist_add(&l, 30, 45); /* out of order: kept until normalized */
    ivlist_add(&l, 100, 110);
    ivlist_add(&l, 26, 28);
    ivlist_normalize(&l);
    CHECK_EQ_INT(l.n, 4);
    CHECK_EQ_INT(l.v[1].a, 26);
    CHECK_EQ_INT(l.v[2].a, 30);
    CHECK_EQ_INT(l.v[2].b, 50);
    ivlist_free(&l);
    CHECK(l.v == NULL && l.n == 0);
}

static void test_union_subtract_len(void)
{
    struct ivlist a = { 0 }, b = { 0 }, u = { 0 }, d = { 0 };
    ivlist_add(&a, 0, 10);
    ivlist_add(&a, 20, 30);
    ivlist_add(&b, 5, 22);
    ivlist_add(&b, 40, 45);
    ivlist_union(&a, &b, &u);
    CHECK_EQ_INT(u.n, 2); /* [0,30) [40,45) */
    CHECK_EQ_INT(u.v[0].b, 30);
    ivlist_subtract(&a, &b, &d);
    CHECK_EQ_INT(d.n, 2); /* [0,5) [22,30) */
    CHECK_EQ_INT(d.v[0].b, 5);
    CHECK_EQ_INT(d.v[1].a, 22);
    size_t cur = 0;
    CHECK_EQ_INT(ivlist_len_in(&u, 25, 42, &cur), 7);
    CHECK_EQ_INT(ivlist_len_in(&u, 41, 100, &cur), 4);
    ivlist_free(&a);
    ivlist_free(&b);
    ivlist_free(&u);
    ivlist_free(&d);
}

int main(void)
{
    RUN(test_add_and_normalize);
    RUN(test_union_subtract_len);
    return harness_done("ivlist");
}

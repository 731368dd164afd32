/* cp_waits_test — the lookups the critical path's walk makes of a rank's
 * waits: a host sync's stream by correlation id (0 when the trace does not
 * say), and the collective a wait over [a, t) follows: of the collectives
 * starting before t the one ending last, only if it ends after a and runs
 * on another thread. The loading from a trace is exercised end to end by
 * analyses_cp_test (the gloo wait, the stream syncs). */
#include "derive/cp_waits.h"

#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* colls sorted by start, colls_last as cp_waits_load builds it */
static void set_colls(struct cp_waits *wt, const struct cp_coll *c, size_t n)
{
    memset(wt, 0, sizeof *wt);
    wt->colls = malloc(n * sizeof *c);
    wt->colls_last = malloc(n * sizeof *wt->colls_last);
    memcpy(wt->colls, c, n * sizeof *c);
    wt->ncolls = n;
    for (size_t k = 0; k < n; k++) {
        int32_t best = k ? wt->colls_last[k - 1] : -1;
        wt->colls_last[k] = best >= 0 && c[best].end >= c[k].end ? best : (int32_t)k;
    }
}

static void test_collective(void)
{
    /* a long all-reduce on thread 9 [10, 100), a short one on 9 [20, 30),
     * one on the waiting thread 5 itself [40, 200) */
    const struct cp_coll c[] = { { 10, 100, 9 }, { 20, 30, 9 }, { 40, 200, 5 } };
    struct cp_waits wt;
    set_colls(&wt, c, 3);
    CHECK_EQ_INT(cp_waits_collective(&wt, 5, 0, 5), -1);   /* none started yet */
    CHECK_EQ_INT(cp_waits_collective(&wt, 5, 0, 25), 0);   /* the one ending last, not the inner one */
    CHECK_EQ_INT(cp_waits_collective(&wt, 5, 150, 160), -1); /* the latest ending is the waiter's own */
    CHECK_EQ_INT(cp_waits_collective(&wt, 7, 150, 160), 2);  /* another thread waiting: it follows it */
    CHECK_EQ_INT(cp_waits_collective(&wt, 5, 30, 35), 0);   /* started before t, ends after a */
    cp_waits_free(&wt);
    const struct cp_coll early[] = { { 10, 30, 9 } };
    set_colls(&wt, early, 1);
    CHECK_EQ_INT(cp_waits_collective(&wt, 5, 40, 50), -1); /* over before the wait: nothing to follow */
    CHECK_EQ_INT(cp_waits_collective(&wt, 5, 30, 50), -1); /* ended just as it began */
    CHECK_EQ_INT(cp_waits_collective(&wt, 5, 29, 50), 0);
    cp_waits_free(&wt);
    CHECK(wt.colls == NULL && wt.ncolls == 0);
    struct cp_waits none;
    memset(&none, 0, sizeof none);
    CHECK_EQ_INT(cp_waits_collective(&none, 5, 0, 1000), -1);
}

static void test_sync_stream(void)
{
    struct cp_waits wt;
    memset(&wt, 0, sizeof wt);
    CHECK_EQ_INT((int)cp_waits_sync_stream(&wt, 7), 0);
    wt.syncs = malloc(3 * sizeof *wt.syncs);
    wt.syncs[0] = (struct cp_sync){ 3, 11 };
    wt.syncs[1] = (struct cp_sync){ 7, 12 };
    wt.syncs[2] = (struct cp_sync){ 9, 13 };
    wt.nsyncs = 3;
    CHECK_EQ_INT((int)cp_waits_sync_stream(&wt, 7), 12);
    CHECK_EQ_INT((int)cp_waits_sync_stream(&wt, 9), 13);
    CHECK_EQ_INT((int)cp_waits_sync_stream(&wt, 8), 0); /* a device or event sync: any stream */
    CHECK_EQ_INT((int)cp_waits_sync_stream(&wt, 0), 0); /* no correlation id */
    cp_waits_free(&wt);
}

int main(void)
{
    RUN(test_collective);
    RUN(test_sync_stream);
    return harness_done("cp_waits");
}

/* ingest_eta_test — an import's time left: none before half a second or
 * 1 % read; while reading, the rest of the reading plus the tail the prior
 * predicts; after the reading, the tail less the time spent in it, never
 * under 1 s; learning moves the tail toward what finished imports took and
 * ignores imports too short to have a rate. */
#include "ingest/ingest_eta.h"

#include <math.h>

#include "harness.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static void test_no_estimate_yet(void)
{
    struct ingest_eta m;
    ingest_eta_init(&m);
    CHECK(ingest_eta_left(&m, 0, 0, 10, 100, 5) < 0);       /* not started */
    CHECK(ingest_eta_left(&m, 100, 0, 50, 100, 100.4) < 0); /* under half a second */
    CHECK(ingest_eta_left(&m, 100, 0, 0, 100, 110) < 0);    /* nothing read */
    CHECK(ingest_eta_left(&m, 100, 0, 5, 1000, 110) < 0);   /* under 1 % */
}

static void test_reading_and_after(void)
{
    struct ingest_eta m;
    ingest_eta_init(&m);
    double tail = m.tail;
    /* a quarter read in 2 s: 6 s more to read, then the tail of an 8 s read */
    CHECK(NEAR(ingest_eta_left(&m, 100, 0, 25, 100, 102), 6 + tail * 8));
    /* read in 8 s, 3 s into the tail */
    CHECK(NEAR(ingest_eta_left(&m, 100, 108, 100, 100, 111), tail * 8 - 3));
    /* overdue: still a second, not zero or negative */
    CHECK(NEAR(ingest_eta_left(&m, 100, 108, 100, 100, 108 + tail * 8 + 50), 1));
}

static void test_learning(void)
{
    struct ingest_eta m;
    ingest_eta_init(&m);
    double prior = m.tail;
    ingest_eta_learn(&m, 100, 100.1, 130); /* 0.1 s of reading: no rate */
    CHECK(NEAR(m.tail, prior));
    CHECK_EQ_INT(m.learned, 0);
    ingest_eta_learn(&m, 100, 110, 120); /* tail 1 */
    CHECK(m.tail < prior && m.tail > 1);
    double after_one = m.tail;
    for (int i = 0; i < 30; i++) ingest_eta_learn(&m, 100, 110, 120);
    CHECK(m.tail < after_one);
    CHECK(fabs(m.tail - 1) < 0.01); /* converges on what imports take here */
    CHECK_EQ_INT(m.learned, 31);
    ingest_eta_learn(&m, 100, 110, 105); /* ended before its reading: ignored */
    CHECK_EQ_INT(m.learned, 31);
}

int main(void)
{
    RUN(test_no_estimate_yet);
    RUN(test_reading_and_after);
    RUN(test_learning);
    return harness_done("ingest_eta");
}

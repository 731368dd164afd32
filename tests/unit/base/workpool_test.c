/* workpool_test.c — the bounded pool: FIFO jobs, refusal when full, stop
 * drains what was pushed. */
#include <pthread.h>
#include <time.h>

#include "harness.h"
#include "base/workpool.h"

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
    int ran;
};

static void wait_gate(void *arg)
{
    struct gate *g = arg;

    pthread_mutex_lock(&g->mu);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    g->ran++;
    pthread_mutex_unlock(&g->mu);
}

static void sleep_ms(int ms)
{
    nanosleep(&(struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000L }, NULL);
}

static void test_bounded(void)
{
    struct workpool *p;
    struct workpool_stats st;
    struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
    struct err e;

    REQUIRE(workpool_start(2, 1, &p, &e) == 0);
    /* 2 workers + 1 queued, the fourth is refused */
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(workpool_reserve(p), 0);
        workpool_push(p, wait_gate, &g);
    }
    CHECK_EQ_INT(workpool_reserve(p), ERR_CONFLICT);
    for (int i = 0; i < 200; i++) {
        workpool_get_stats(p, &st);
        if (st.running == 2) break;
        sleep_ms(5);
    }
    CHECK_EQ_INT(st.running, 2);
    CHECK_EQ_INT(st.queued, 1);
    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    for (int i = 0; i < 200; i++) {
        workpool_get_stats(p, &st);
        if (st.running == 0 && st.queued == 0) break;
        sleep_ms(5);
    }
    CHECK_EQ_INT(g.ran, 3);
    CHECK_EQ_INT(workpool_reserve(p), 0); /* room again */
    workpool_push(p, wait_gate, &g);
    workpool_stop(p); /* runs the pushed job before joining */
    CHECK_EQ_INT(g.ran, 4);
}

static void test_stop_drains(void)
{
    struct workpool *p;
    struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1, 0 };
    struct err e;

    REQUIRE(workpool_start(1, 8, &p, &e) == 0);
    for (int i = 0; i < 9; i++) {
        CHECK_EQ_INT(workpool_reserve(p), 0);
        workpool_push(p, wait_gate, &g);
    }
    workpool_stop(p);
    CHECK_EQ_INT(g.ran, 9);
}

int main(void)
{
    RUN(test_bounded);
    RUN(test_stop_drains);
    return harness_done("workpool");
}

/* budget.c — per-request time budget and client-gone check (see
 * include/store/budget.h). */
#include "store/budget.h"

#include <errno.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

/* The budget of the request this thread is running, or NULL. */
static _Thread_local struct budget *thread_budget;

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void budget_begin(struct budget *b, int64_t limit_ms, int fd, const atomic_int *stop)
{
    int64_t t = now_ms();

    b->deadline_ms = t + limit_ms;
    b->next_poll_ms = t;
    b->fd = fd;
    b->stop = stop;
    b->state = BUDGET_RUNNING;
    thread_budget = b;
}

void budget_end(void)
{
    thread_budget = NULL;
}

/* A peeked 0 is an orderly close; a reset is gone too. Data or EAGAIN:
 * the client is still there. */
static int client_gone(int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

    if (n == 0) return 1;
    return n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

int budget_check(void)
{
    struct budget *b = thread_budget;
    int64_t t;

    if (!b) return 0;
    if (b->state != BUDGET_RUNNING) return 1;
    if (b->stop && atomic_load_explicit(b->stop, memory_order_relaxed)) {
        b->state = BUDGET_STOPPED;
        return 1;
    }
    t = now_ms();
    if (t >= b->deadline_ms) {
        b->state = BUDGET_OVER;
        return 1;
    }
    if (b->fd >= 0 && t >= b->next_poll_ms) {
        b->next_poll_ms = t + BUDGET_POLL_MS;
        if (client_gone(b->fd)) {
            b->state = BUDGET_GONE;
            return 1;
        }
    }
    return 0;
}

static int progress(void *unused)
{
    (void)unused;
    return budget_check();
}

void budget_attach(sqlite3 *db)
{
    /* ~1000 VM steps is a few µs: the clock read stays in the noise. */
    if (thread_budget) sqlite3_progress_handler(db, 1000, progress, NULL);
}

/* workpool.c — fixed threads, bounded FIFO queue (see include/base/workpool.h). */
#define LOG_MODULE "workpool"
#include "base/workpool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"

struct job {
    struct job *next;
    void (*fn)(void *arg);
    void *arg;
};

struct workpool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t *tids;
    int nthreads;
    int queue_max;
    int running;  /* under mu */
    int reserved; /* reservations plus queued jobs; under mu */
    int stopping; /* under mu */
    struct job *head, *tail; /* under mu */
};

static void *worker_main(void *arg)
{
    struct workpool *p = arg;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        struct job *j;
        while (!p->head && !p->stopping) pthread_cond_wait(&p->cv, &p->mu);
        /* Stopping still drains the queue: every pushed job must run, it
         * holds a suspended connection. */
        if (!p->head) break;
        j = p->head;
        p->head = j->next;
        if (!p->head) p->tail = NULL;
        p->reserved--;
        p->running++;
        pthread_mutex_unlock(&p->mu);
        j->fn(j->arg);
        free(j);
        pthread_mutex_lock(&p->mu);
        p->running--;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int workpool_start(int threads, int queue_max, struct workpool **out, struct err *e)
{
    struct workpool *p = xcalloc(1, sizeof *p);

    if (threads < 1) threads = 1;
    p->queue_max = queue_max < 0 ? 0 : queue_max;
    p->tids = xcalloc((size_t)threads, sizeof *p->tids);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (int i = 0; i < threads; i++) {
        int rc = pthread_create(&p->tids[i], NULL, worker_main, p);
        if (rc != 0) {
            LOG_WARN("query worker %d of %d: pthread_create: %s", i + 1, threads, strerror(rc));
            break;
        }
        p->nthreads++;
    }
    if (p->nthreads == 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        free(p->tids);
        free(p);
        return err_set(e, ERR_IO, "cannot start any query worker thread");
    }
    *out = p;
    return 0;
}

int workpool_reserve(struct workpool *p)
{
    int rc = 0;

    pthread_mutex_lock(&p->mu);
    /* Room: an idle worker for it, or a free place in the queue. */
    if (p->stopping || p->running + p->reserved >= p->nthreads + p->queue_max) rc = ERR_CONFLICT;
    else p->reserved++;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void workpool_push(struct workpool *p, void (*fn)(void *arg), void *arg)
{
    struct job *j = xmalloc(sizeof *j);

    j->next = NULL;
    j->fn = fn;
    j->arg = arg;
    pthread_mutex_lock(&p->mu);
    if (p->tail) p->tail->next = j;
    else p->head = j;
    p->tail = j;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void workpool_stop(struct workpool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->tids[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->tids);
    free(p);
}

void workpool_get_stats(struct workpool *p, struct workpool_stats *out)
{
    pthread_mutex_lock(&p->mu);
    out->threads = p->nthreads;
    out->running = p->running;
    out->queued = p->reserved;
    out->queue_max = p->queue_max;
    pthread_mutex_unlock(&p->mu);
}

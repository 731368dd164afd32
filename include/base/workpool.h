/*
 * workpool.h — a fixed set of threads and a bounded queue for heavy work
 * (issue 15: heavy queries ran on libmicrohttpd's few connection threads and
 * blocked every other request, /api/health included).
 *
 * workpool_start creates `threads` threads that take jobs in FIFO order.
 * At most `threads` jobs run and `queue_max` wait; a caller that finds no
 * room is refused at once (workpool_reserve) instead of piling up work
 * nobody will wait for. Reserving first and pushing after lets http.c
 * suspend the connection in between, so a job can never finish (and resume
 * the connection) before it was suspended.
 *
 * Jobs own their argument; the pool never looks inside. workpool_stop runs
 * every job already pushed (each must end soon once the server stops: http.c
 * jobs see http_req_stopping) and joins the threads.
 *
 * Threads: every function may be called from any thread; one mutex guards
 * the queue and the counts.
 */
#ifndef TB_WORKPOOL_H
#define TB_WORKPOOL_H

#include "base/err.h"

struct workpool;

/* Counts, for logs and tests. */
struct workpool_stats {
    int threads;
    int running;   /* jobs being run now */
    int queued;    /* jobs pushed and waiting, plus reservations not pushed yet */
    int queue_max;
};

/* Starts threads (>= 1) workers with room for queue_max (>= 0) waiting
 * jobs. OUT *out: owned by caller, release with workpool_stop. ERR_IO when
 * no thread could be started. */
int workpool_start(int threads, int queue_max, struct workpool **out, struct err *e);

/* Reserves room for one job: 0, or ERR_CONFLICT when every worker is busy
 * and the queue is full (or the pool is stopping). A reservation must be
 * followed by exactly one workpool_push. */
int workpool_reserve(struct workpool *p);

/* Queues fn(arg) on a reservation; cannot fail. */
void workpool_push(struct workpool *p, void (*fn)(void *arg), void *arg);

/* Refuses new reservations, runs the jobs already pushed, joins the
 * threads and frees p. Reservations must have been pushed. NULL ignored. */
void workpool_stop(struct workpool *p);

/* A snapshot of the counts. */
void workpool_get_stats(struct workpool *p, struct workpool_stats *out);

#endif

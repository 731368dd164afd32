/* conntrack.c — head deadline and untrusted share for HTTP connections
 * (see include/http/conntrack.h). */
#define LOG_MODULE "conntrack"
#include "http/conntrack.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/log.h"
#include "base/xmalloc.h"

enum cc_state { CC_HEAD, CC_BUSY, CC_CUT };

struct conntrack_conn {
    struct conntrack_conn *prev, *next; /* in accept order: oldest first */
    int fd;
    enum cc_state state;
    int trusted;
    int64_t since_ms; /* start of the current head deadline */
};

struct conntrack {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t reaper;
    int stopping; /* under mu */
    int64_t head_ms;
    int untrusted_max;
    struct conntrack_conn *head, *tail; /* under mu */
    struct conntrack_stats st;          /* under mu */
};

int64_t conntrack_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Under mu. shutdown, not close: the fd stays MHD's, which sees EOF and
 * closes the connection itself (and then calls conntrack_close). */
static void cut(struct conntrack *ct, struct conntrack_conn *c)
{
    ct->st.open--;
    if (!c->trusted) ct->st.untrusted--;
    c->state = CC_CUT;
    if (shutdown(c->fd, SHUT_RDWR) != 0 && errno != ENOTCONN) LOG_DEBUG("shutdown: %s", strerror(errno));
}

int conntrack_reap(struct conntrack *ct, int64_t now_ms)
{
    int n = 0;

    pthread_mutex_lock(&ct->mu);
    for (struct conntrack_conn *c = ct->head; c; c = c->next) {
        if (c->trusted || c->state != CC_HEAD || now_ms - c->since_ms <= ct->head_ms) continue;
        cut(ct, c);
        ct->st.cut_deadline++;
        n++;
    }
    pthread_mutex_unlock(&ct->mu);
    if (n) LOG_DEBUG("cut %d connection(s) that did not finish a request head in time", n);
    return n;
}

static void *reaper_main(void *arg)
{
    struct conntrack *ct = arg;
    int64_t period = ct->head_ms / 4 < 250 ? ct->head_ms / 4 : 250;

    pthread_mutex_lock(&ct->mu);
    while (!ct->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long)(period % 1000) * 1000000L;
        until.tv_sec += period / 1000 + until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&ct->cv, &ct->mu, &until);
        if (ct->stopping) break;
        pthread_mutex_unlock(&ct->mu);
        conntrack_reap(ct, conntrack_now_ms());
        pthread_mutex_lock(&ct->mu);
    }
    pthread_mutex_unlock(&ct->mu);
    return NULL;
}

int conntrack_start(int head_timeout_s, int untrusted_max, struct conntrack **out, struct err *e)
{
    struct conntrack *ct = xcalloc(1, sizeof *ct);
    int rc;

    ct->head_ms = (int64_t)(head_timeout_s > 0 ? head_timeout_s : 1) * 1000;
    ct->untrusted_max = untrusted_max > 0 ? untrusted_max : 1;
    pthread_mutex_init(&ct->mu, NULL);
    pthread_cond_init(&ct->cv, NULL);
    rc = pthread_create(&ct->reaper, NULL, reaper_main, ct);
    if (rc != 0) {
        pthread_mutex_destroy(&ct->mu);
        pthread_cond_destroy(&ct->cv);
        free(ct);
        return err_set(e, ERR_IO, "cannot start the connection reaper: %s", strerror(rc));
    }
    *out = ct;
    return 0;
}

void conntrack_stop(struct conntrack *ct)
{
    if (!ct) return;
    pthread_mutex_lock(&ct->mu);
    ct->stopping = 1;
    pthread_cond_broadcast(&ct->cv);
    pthread_mutex_unlock(&ct->mu);
    pthread_join(ct->reaper, NULL);
    while (ct->head) {
        struct conntrack_conn *c = ct->head;
        ct->head = c->next;
        free(c);
    }
    pthread_mutex_destroy(&ct->mu);
    pthread_cond_destroy(&ct->cv);
    free(ct);
}

struct conntrack_conn *conntrack_open(struct conntrack *ct, int fd)
{
    struct conntrack_conn *c = xcalloc(1, sizeof *c);

    c->fd = fd;
    c->state = CC_HEAD;
    c->since_ms = conntrack_now_ms();
    pthread_mutex_lock(&ct->mu);
    c->prev = ct->tail;
    if (ct->tail) ct->tail->next = c;
    else ct->head = c;
    ct->tail = c;
    ct->st.open++;
    ct->st.untrusted++;
    /* The newcomer may be the user we are protecting: make room by cutting
     * the longest-waiting anonymous connection instead of refusing it. */
    if (ct->st.untrusted > ct->untrusted_max) {
        for (struct conntrack_conn *o = ct->head; o && o != c; o = o->next) {
            if (o->trusted || o->state != CC_HEAD) continue;
            cut(ct, o);
            ct->st.cut_evicted++;
            break;
        }
    }
    pthread_mutex_unlock(&ct->mu);
    return c;
}

void conntrack_head_done(struct conntrack *ct, struct conntrack_conn *c, int trusted)
{
    pthread_mutex_lock(&ct->mu);
    if (c->state != CC_CUT) {
        c->state = CC_BUSY;
        if (trusted && !c->trusted) {
            c->trusted = 1;
            ct->st.untrusted--;
        }
    }
    pthread_mutex_unlock(&ct->mu);
}

void conntrack_request_done(struct conntrack *ct, struct conntrack_conn *c)
{
    pthread_mutex_lock(&ct->mu);
    if (c->state == CC_BUSY) {
        c->state = CC_HEAD;
        c->since_ms = conntrack_now_ms();
    }
    pthread_mutex_unlock(&ct->mu);
}

void conntrack_close(struct conntrack *ct, struct conntrack_conn *c)
{
    pthread_mutex_lock(&ct->mu);
    if (c->state != CC_CUT) {
        ct->st.open--;
        if (!c->trusted) ct->st.untrusted--;
    }
    if (c->prev) c->prev->next = c->next;
    else ct->head = c->next;
    if (c->next) c->next->prev = c->prev;
    else ct->tail = c->prev;
    pthread_mutex_unlock(&ct->mu);
    free(c);
}

void conntrack_get_stats(struct conntrack *ct, struct conntrack_stats *out)
{
    pthread_mutex_lock(&ct->mu);
    *out = ct->st;
    pthread_mutex_unlock(&ct->mu);
}

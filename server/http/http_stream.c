/* http_stream.c — server-sent event streams (see include/http/http_stream.h). */
#define LOG_MODULE "http"
#include "http/http_stream.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "http/http_req.h"

#define TOPIC_MAX 128

struct stream {
    struct stream *prev, *next; /* hub list; under mu */
    struct http_stream_hub *hub;
    struct MHD_Connection *conn;
    char topic[TOPIC_MAX];
    int64_t cursor;
    http_stream_pull pull;
    void *arg;
    void (*free_arg)(void *);
    struct sbuf out; /* bytes not yet handed to MHD: out.p[sent..out.n) */
    size_t sent;
    /* under mu: */
    int suspended; /* we suspended the connection and nobody resumed it yet */
    int dirty;     /* notified since the last pull */
    int beat;      /* a keep-alive is due */
    int refs;      /* resumers outside the lock */
    int dead;      /* MHD freed the response: free at refs == 0 */
};

struct http_stream_hub {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    struct stream *head;
    int count, max, heartbeat_s, stopping;
};

static void stream_free(struct stream *s)
{
    if (s->free_arg) s->free_arg(s->arg);
    free(s->out.p);
    free(s);
}

/* Resumes the marked streams outside the lock: MHD takes its own mutex in
 * MHD_resume_connection, and MHD may free a response (free_cb, which takes
 * mu) while holding it. refs keeps each stream alive meanwhile; it cannot
 * be closed while suspended (MHD only closes suspended connections at
 * shutdown, after the hub's thread and every notifier have stopped). */
static void resume_marked(struct http_stream_hub *h, struct stream **v, int n)
{
    for (int i = 0; i < n; i++) MHD_resume_connection(v[i]->conn);
    pthread_mutex_lock(&h->mu);
    for (int i = 0; i < n; i++)
        if (--v[i]->refs == 0 && v[i]->dead) stream_free(v[i]);
    pthread_mutex_unlock(&h->mu);
}

/* Marks the streams that match (topic NULL: all) under mu: flag set, and
 * the suspended ones taken for resume_marked. Returns how many. */
static int mark(struct http_stream_hub *h, const char *topic, int beat, struct stream ***out)
{
    int n = 0;
    struct stream **v = xmalloc(sizeof *v * (size_t)(h->count + 1));
    for (struct stream *s = h->head; s; s = s->next) {
        if (s->dead || (topic && strcmp(topic, s->topic) != 0)) continue;
        if (beat) s->beat = 1;
        else s->dirty = 1;
        if (s->suspended) {
            s->suspended = 0;
            s->refs++;
            v[n++] = s;
        }
    }
    *out = v;
    return n;
}

/* mark() then resume_marked(), taking mu for the marking. */
static void wake(struct http_stream_hub *h, const char *topic, int beat)
{
    struct stream **v;
    pthread_mutex_lock(&h->mu);
    int n = mark(h, topic, beat, &v);
    pthread_mutex_unlock(&h->mu);
    resume_marked(h, v, n);
    free(v);
}

static void *heartbeat_main(void *arg)
{
    struct http_stream_hub *h = arg;
    pthread_mutex_lock(&h->mu);
    while (!h->stopping) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_sec += h->heartbeat_s;
        while (!h->stopping && pthread_cond_timedwait(&h->cv, &h->mu, &t) == 0) {
        }
        pthread_mutex_unlock(&h->mu);
        wake(h, NULL, 1);
        pthread_mutex_lock(&h->mu);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int http_stream_hub_start(int max_streams, int heartbeat_s, struct http_stream_hub **out, struct err *e)
{
    struct http_stream_hub *h = xcalloc(1, sizeof *h);
    h->max = max_streams;
    h->heartbeat_s = heartbeat_s > 0 ? heartbeat_s : 15;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (pthread_create(&h->thread, NULL, heartbeat_main, h) != 0) {
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        free(h);
        return err_set(e, ERR_INTERNAL, "cannot start the live streams' heartbeat thread");
    }
    *out = h;
    return 0;
}

void http_stream_hub_quiesce(struct http_stream_hub *h)
{
    if (!h) return;
    pthread_mutex_lock(&h->mu);
    h->stopping = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    /* the thread's last round wakes every suspended stream, which then ends */
    pthread_join(h->thread, NULL);
    wake(h, NULL, 0);
}

void http_stream_hub_stop(struct http_stream_hub *h)
{
    if (!h) return;
    /* MHD has stopped: every response, so every stream, is freed */
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *s = cls;
    struct http_stream_hub *h = s->hub;
    (void)pos;
    for (;;) {
        if (s->sent < s->out.n) {
            size_t k = s->out.n - s->sent;
            if (k > max) k = max;
            memcpy(buf, s->out.p + s->sent, k);
            s->sent += k;
            return (ssize_t)k;
        }
        s->out.n = s->sent = 0;
        pthread_mutex_lock(&h->mu);
        int stopping = h->stopping, beat = s->beat;
        s->dirty = s->beat = 0;
        pthread_mutex_unlock(&h->mu);
        if (stopping) return MHD_CONTENT_READER_END_OF_STREAM;
        if (s->pull(s->arg, &s->cursor, &s->out) < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (s->out.n == 0 && beat) sbuf_add(&s->out, ": keep-alive\n\n");
        if (s->out.n > 0) continue;
        pthread_mutex_lock(&h->mu);
        if (s->dirty || s->beat || h->stopping) {
            pthread_mutex_unlock(&h->mu);
            continue;
        }
        /* nothing to send: no thread waits, the connection sleeps until
         * notify or the heartbeat resumes it */
        s->suspended = 1;
        MHD_suspend_connection(s->conn);
        pthread_mutex_unlock(&h->mu);
        return 0;
    }
}

static void stream_done(void *cls)
{
    struct stream *s = cls;
    struct http_stream_hub *h = s->hub;
    pthread_mutex_lock(&h->mu);
    if (s->prev) s->prev->next = s->next;
    else h->head = s->next;
    if (s->next) s->next->prev = s->prev;
    h->count--;
    s->dead = 1;
    if (s->refs == 0) stream_free(s);
    pthread_mutex_unlock(&h->mu);
}

int http_stream_open(struct http_req *req, const char *topic, int64_t cursor, http_stream_pull pull, void *arg,
                     void (*free_arg)(void *))
{
    struct http_stream_hub *h = req->srv->streams;
    pthread_mutex_lock(&h->mu);
    if (h->stopping || h->count >= h->max) {
        int stopping = h->stopping;
        pthread_mutex_unlock(&h->mu);
        if (free_arg) free_arg(arg);
        return stopping ? http_send_error(req->conn, 503, "stopping", "the server is stopping")
                        : http_send_error(req->conn, 503, "busy",
                                          "%d live streams are open, the most allowed (setting live_streams)", h->max);
    }
    struct stream *s = xcalloc(1, sizeof *s);
    s->hub = h;
    s->conn = req->conn;
    snprintf(s->topic, sizeof s->topic, "%s", topic);
    s->cursor = cursor;
    s->pull = pull;
    s->arg = arg;
    s->free_arg = free_arg;
    s->next = h->head;
    if (h->head) h->head->prev = s;
    h->head = s;
    h->count++;
    pthread_mutex_unlock(&h->mu);
    /* the browser retries after 3 s when the stream drops */
    sbuf_add(&s->out, "retry: 3000\n\n");
    struct MHD_Response *resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, s,
                                                                  stream_done);
    if (!resp) {
        stream_done(s);
        return 0;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream; charset=utf-8");
    MHD_add_response_header(resp, "X-Accel-Buffering", "no");
    return http_send_queue(req->conn, 200, resp, HTTP_CACHE_NO_STORE);
}

void http_stream_notify(struct http_req *req, const char *topic)
{
    wake(req->srv->streams, topic, 0);
}

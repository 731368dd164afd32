/* timeline_stream.c — the slices' level of detail and window aggregates
 * from the import's sorted stream, on a thread of their own (see
 * include/derive/timeline_stream.h). */
#define LOG_MODULE "timeline"
#include "derive/timeline_stream.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/timeline.h"
#include "derive/timeline_agg.h"
#include "derive/timeline_lod.h"
#include "store/rundb.h"

/* A record of the stream: a slice; a track's end (s.track, s.depth =
 * max_depth, s.id = nslices, flag = present); a rank's span (s.ts = t0,
 * s.dur = t1, flag = has_span). */
enum { REC_SLICE, REC_TRACK, REC_RANK };

struct rec {
    struct timeline_slice s;
    int kind, flag;
};

/* Records move in batches: one lock per batch on either side. */
#define BATCH 1024

struct timeline_stream {
    char *path;
    size_t hold;
    pthread_t th;
    int started;
    /* the queue, a ring of TIMELINE_STREAM_QUEUE records, under mu */
    pthread_mutex_t mu;
    pthread_cond_t get, put;
    struct rec *ring;
    size_t head, count;
    int done;
    /* the thread gave up, or the caller stopped it: the producer drops */
    atomic_int failed;
    /* the producer's batch (the draining thread's) */
    struct rec batch[BATCH];
    size_t nbatch;
    /* the thread's result, read after the join */
    int rc;
    struct err e;
    int64_t *deferred;
    size_t ndeferred;
};

/* The batch into the ring, waiting for room. */
static void flush(struct timeline_stream *ts)
{
    size_t n = ts->nbatch;
    ts->nbatch = 0;
    pthread_mutex_lock(&ts->mu);
    while (TIMELINE_STREAM_QUEUE - ts->count < n && !atomic_load(&ts->failed)) pthread_cond_wait(&ts->put, &ts->mu);
    if (!atomic_load(&ts->failed)) {
        for (size_t i = 0; i < n; i++) ts->ring[(ts->head + ts->count + i) % TIMELINE_STREAM_QUEUE] = ts->batch[i];
        ts->count += n;
        pthread_cond_signal(&ts->get);
    }
    pthread_mutex_unlock(&ts->mu);
}

static void put(struct timeline_stream *ts, const struct rec *r)
{
    ts->batch[ts->nbatch++] = *r;
    if (ts->nbatch == BATCH) flush(ts);
}

static void on_rank(void *ctx, int has_span, int64_t t0, int64_t t1)
{
    struct rec r = { .s = { .ts = t0, .dur = t1 }, .kind = REC_RANK, .flag = has_span };
    put(ctx, &r);
}

static void on_slice(void *ctx, const struct rundb_slice_out *s)
{
    struct rec r = { .s = { s->id, s->track, s->ts, s->dur, s->parent, s->name, s->depth }, .kind = REC_SLICE };
    put(ctx, &r);
}

static void on_track_end(void *ctx, int64_t track, int present, int max_depth, int64_t nslices)
{
    struct rec r = { .s = { .id = nslices, .track = track, .depth = max_depth }, .kind = REC_TRACK, .flag = present };
    put(ctx, &r);
}

/* Up to BATCH records out of the ring into out; 0 once the producer is
 * done and the ring empty, or the stream stopped. */
static size_t take(struct timeline_stream *ts, struct rec *out)
{
    pthread_mutex_lock(&ts->mu);
    while (ts->count == 0 && !ts->done && !atomic_load(&ts->failed)) pthread_cond_wait(&ts->get, &ts->mu);
    size_t n = atomic_load(&ts->failed) ? 0 : ts->count < BATCH ? ts->count : BATCH;
    for (size_t i = 0; i < n; i++) out[i] = ts->ring[(ts->head + i) % TIMELINE_STREAM_QUEUE];
    ts->head = (ts->head + n) % TIMELINE_STREAM_QUEUE;
    ts->count -= n;
    pthread_cond_signal(&ts->put);
    pthread_mutex_unlock(&ts->mu);
    return n;
}

static int feed(struct timeline_lod *lod, struct timeline_agg_build *agg, const struct rec *r, struct err *e)
{
    switch (r->kind) {
    case REC_RANK:
        timeline_agg_build_span(agg, r->flag, r->s.ts, r->s.dur);
        return 0;
    case REC_TRACK:
        timeline_lod_track(lod, r->s.track, r->flag, r->s.depth, r->s.id);
        return 0;
    default:
        if (timeline_lod_push(lod, &r->s, e) != 0) return e->code;
        return timeline_agg_build_push(agg, &r->s, e);
    }
}

/* Both builders fed until the producer is done, in one transaction. */
static int build(struct timeline_stream *ts, sqlite3 *db, struct err *e)
{
    struct timeline_lod *lod = NULL;
    struct timeline_agg_build *agg = NULL;
    struct rec *buf = xmalloc(BATCH * sizeof *buf);
    size_t n;

    if (sqlite3_exec(db, "PRAGMA cache_size=-16384; BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline stream");
        goto out;
    }
    if (timeline_lod_begin_stream(db, ts->hold, &lod, e) != 0 || timeline_agg_build_begin_stream(db, &agg, e) != 0)
        goto out;
    while ((n = take(ts, buf)) > 0)
        for (size_t i = 0; i < n; i++)
            if (feed(lod, agg, &buf[i], e) != 0) goto out;
    if (atomic_load(&ts->failed)) {
        err_set(e, ERR_INTERNAL, "timeline stream stopped");
        goto out;
    }
    if (timeline_lod_end(lod, e) != 0 || timeline_agg_build_end(agg, e) != 0) goto out;
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "timeline stream");
        goto out;
    }
    const int64_t *d = timeline_lod_deferred(lod, &ts->ndeferred);
    if (ts->ndeferred) {
        ts->deferred = xmalloc(ts->ndeferred * sizeof *d);
        memcpy(ts->deferred, d, ts->ndeferred * sizeof *d);
    }
out:
    timeline_lod_free(lod);
    timeline_agg_build_free(agg);
    free(buf);
    return e->code;
}

static void *stream_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tb-tlstream");
    struct timeline_stream *ts = arg;
    sqlite3 *db = NULL;
    double t0 = log_now_s(), c0 = log_thread_cpu_s();

    err_clear(&ts->e);
    int rc = rundb_open_scratch(ts->path, 1, &db, &ts->e);
    if (rc == 0) rc = build(ts, db, &ts->e);
    if (db && sqlite3_close(db) != SQLITE_OK && rc == 0)
        rc = err_set(&ts->e, ERR_DB, "cannot close the scratch database");
    ts->rc = rc;
    if (rc) {
        /* the producer must not wait for a reader that is gone */
        pthread_mutex_lock(&ts->mu);
        atomic_store(&ts->failed, 1);
        pthread_cond_broadcast(&ts->put);
        pthread_mutex_unlock(&ts->mu);
    }
    LOG_DEBUG("level of detail of the trace from the import's stream: slices and window aggregates %.2f s (CPU %.2f s),"
              " %zu long track(s) left to the scan%s%s",
              log_now_s() - t0, log_thread_cpu_s() - c0,
              ts->ndeferred, rc ? ": " : "", rc ? ts->e.msg : "");
    return NULL;
}

int timeline_stream_start(const char *scratch_path, size_t hold, struct timeline_stream **out, struct err *e)
{
    struct timeline_stream *ts = xcalloc(1, sizeof *ts);
    err_clear(e);
    *out = NULL;
    ts->path = xstrdup(scratch_path);
    ts->hold = hold;
    ts->ring = xmalloc(TIMELINE_STREAM_QUEUE * sizeof *ts->ring);
    pthread_mutex_init(&ts->mu, NULL);
    pthread_cond_init(&ts->get, NULL);
    pthread_cond_init(&ts->put, NULL);
    if (pthread_create(&ts->th, NULL, stream_main, ts) != 0) {
        timeline_stream_free(ts);
        return err_set(e, ERR_INTERNAL, "cannot start the timeline's stream thread");
    }
    ts->started = 1;
    *out = ts;
    return 0;
}

void timeline_stream_sink(struct timeline_stream *ts, struct rundb_slice_sink *out)
{
    *out = (struct rundb_slice_sink){ on_rank, on_slice, on_track_end, ts };
}

/* Ends the producer's side and joins the thread (once). */
static void join(struct timeline_stream *ts)
{
    if (!ts->started) return;
    if (ts->nbatch) flush(ts);
    pthread_mutex_lock(&ts->mu);
    ts->done = 1;
    pthread_cond_broadcast(&ts->get);
    pthread_mutex_unlock(&ts->mu);
    pthread_join(ts->th, NULL);
    ts->started = 0;
}

int timeline_stream_finish(struct timeline_stream *ts, struct err *e)
{
    join(ts);
    if (ts->rc) *e = ts->e;
    return ts->rc;
}

const int64_t *timeline_stream_deferred(const struct timeline_stream *ts, size_t *n)
{
    *n = ts->ndeferred;
    return ts->deferred;
}

void timeline_stream_free(struct timeline_stream *ts)
{
    if (!ts) return;
    if (ts->started) {
        pthread_mutex_lock(&ts->mu);
        atomic_store(&ts->failed, 1);
        pthread_cond_broadcast(&ts->get);
        pthread_cond_broadcast(&ts->put);
        pthread_mutex_unlock(&ts->mu);
        join(ts);
    }
    pthread_cond_destroy(&ts->get);
    pthread_cond_destroy(&ts->put);
    pthread_mutex_destroy(&ts->mu);
    free(ts->ring);
    free(ts->deferred);
    free(ts->path);
    free(ts);
}

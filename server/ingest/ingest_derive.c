#define LOG_MODULE "ingest"
#include "ingest/ingest_derive.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/analyses.h"
#include "derive/rules.h"
#include "derive/slice_feed.h"
#include "derive/summary.h"
#include "derive/timeline.h"
#include "derive/timeline_lod.h"
#include "derive/timeline_stream.h"
#include "store/rundb.h"
#include "store/rundb_stage.h"

const char *const ingest_derive_stages[INGEST_DERIVE_NSTAGES] = { "summary", "analyses", "rules", "timeline" };

/* What the ranks derived at once may hold: RANK_BYTES (a scratch
 * connection's page caches) plus OP_BYTES per GPU op (the records of the
 * summary and the GPU analyses) plus, in the GPU analyses, HOST_BYTES per
 * host slice up to AN_HOST_ROWS (the host slices they hold). Measured on 4
 * ranks of tiled33 (52 k GPU ops each): the derive's RSS grew 19 MB with a
 * second rank thread before the host slices were held, ~50 MB since. The
 * rest of the import (the timeline's and the rules' threads, up to ~50 MB
 * of held rows each, and the job's connection) is outside this budget. On
 * the 16-core box 4 such ranks peaked at 240-247 MiB whatever this was:
 * 160 MiB changed nothing but the time (13.1-13.7 -> 15.8-17.6 s), so the
 * peak is not what this counts (see docs/performance.md). A rank alone
 * always runs. */
#define DERIVE_MEMORY ((int64_t)256 << 20)
#define RANK_BYTES ((int64_t)4 << 20)
#define OP_BYTES 320
#define HOST_BYTES ((int64_t)sizeof(struct an_hrow))
#define MAX_THREADS 8

/* The niceness of the threads begun before the indexes: the job's thread
 * builds the indexes meanwhile and the run opens when they are done, so
 * they take the cores it leaves. Idle 2-core machine, tiled33, 3 runs each:
 * visible after 1.88-1.93 s against 2.13-2.14 s at the same priority, and
 * done after 2.78-2.86 s against 2.98-2.99 s (they still take both cores
 * while the job's thread waits). Per thread (Linux); a failure is ignored. */
#define EARLY_NICE 10

static void nice_thread(int nice)
{
    if (nice) setpriority(PRIO_PROCESS, (id_t)gettid(), nice);
}

/* ====================================================================== */
/* Ranks in parallel                                                      */
/* ====================================================================== */

/* A rank pass's run: the summary (arg: the host slices held, or NULL) and
 * the GPU analyses. */
static int summary_rank(sqlite3 *db, int rank, void *arg, struct err *e)
{
    return summary_run_rank_fed(db, rank, arg, e);
}

static int analyses_rank(sqlite3 *db, int rank, void *arg, struct err *e)
{
    (void)arg;
    return analyses_run_rank(db, rank, e);
}

/* Detaches the scratch a copy ran with: rc is the copy's; a failed detach
 * counts only when the copy succeeded (its error is the one to tell). */
static int detach_after(sqlite3 *db, int rc, struct err *e)
{
    struct err ignore;
    if (rundb_detach_aside(db, rc ? &ignore : e) != 0 && rc == 0) rc = e->code;
    return rc;
}

/* The scratch database of rank pass job i beside run_path (owned by
 * caller). */
static char *rank_scratch(const char *run_path, int i)
{
    return xasprintf("%s.r%d", run_path, i);
}

/* One pass (the summary or the GPU analyses) over the ranks: job i derives
 * rank i into its scratch file on whichever thread takes it (workers, or
 * the job's thread while it waits); the job's thread adopts them in order.
 * Shared fields under mu; a job's rc and err are written before its state
 * becomes DONE and read after. */
enum { JOB_WAITING, JOB_RUNNING, JOB_DONE };

struct rank_pass {
    const char *run_path;
    int (*run)(sqlite3 *db, int rank, void *arg, struct err *e);
    void *arg; /* run's */
    int (*adopt)(sqlite3 *db, int first, int last, struct err *e);
    const int *ranks;
    const int64_t *cost;
    char **scratch;
    sqlite3 **dbs; /* NULL, or each rank's scratch opened ahead (NULL once its job has it) */
    int nice;      /* the workers' niceness (EARLY_NICE for a pass begun early) */
    int64_t budget; /* the cost of the ranks in flight at most (a rank alone always runs) */
    int *state, *rc;
    struct err *err;
    int n, next;
    int64_t in_use;
    atomic_int cancel;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t threads[MAX_THREADS];
    int nthreads;
};

/* The next job if memory allows it now (-1: none), taken; under mu. */
static int take(struct rank_pass *p)
{
    if (atomic_load(&p->cancel) || p->next >= p->n) return -1;
    int i = p->next;
    if (p->in_use > 0 && p->in_use + p->cost[i] > p->budget) return -1;
    p->next++;
    p->in_use += p->cost[i];
    p->state[i] = JOB_RUNNING;
    return i;
}

/* Runs job i (mu not held) and files its result (mu held on return). */
static void run_job(struct rank_pass *p, int i)
{
    sqlite3 *db = NULL;
    struct err e;
    err_clear(&e);
    double t = log_now_s();
    int rc = 0;
    if (p->dbs && p->dbs[i]) {
        db = p->dbs[i];
        p->dbs[i] = NULL;
    } else {
        rc = rundb_open_aside(p->run_path, p->scratch[i], &p->cancel, &db, &e);
    }
    if (rc == 0) rc = p->run(db, p->ranks[i], p->arg, &e);
    if (db && sqlite3_close(db) != SQLITE_OK && rc == 0) rc = err_set(&e, ERR_DB, "cannot close the scratch database");
    LOG_DEBUG("rank %d derived aside in %.3f s", p->ranks[i], log_now_s() - t);
    pthread_mutex_lock(&p->mu);
    p->rc[i] = rc;
    p->err[i] = e;
    p->state[i] = JOB_DONE;
    p->in_use -= p->cost[i];
    pthread_cond_broadcast(&p->cv);
}

/* Derives the jobs memory allows as they come, waiting for a slot, until
 * job until is done (until < 0: until none is left to take); mu held. */
static void work(struct rank_pass *p, int until)
{
    while (until >= 0 ? p->state[until] != JOB_DONE : !atomic_load(&p->cancel) && p->next < p->n) {
        int i = take(p);
        if (i < 0) {
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        pthread_mutex_unlock(&p->mu);
        run_job(p, i);
    }
}

static void *pass_worker(void *arg)
{
    pthread_setname_np(pthread_self(), "tb-derive");
    struct rank_pass *p = arg;
    nice_thread(p->nice);
    pthread_mutex_lock(&p->mu);
    work(p, -1);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Waits for job i, deriving later ranks here meanwhile when a worker has
 * not taken them. */
static int pass_wait(struct rank_pass *p, int i, struct err *e)
{
    pthread_mutex_lock(&p->mu);
    work(p, i);
    int rc = p->rc[i];
    if (rc) *e = p->err[i];
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Sets p up (run_path, run, adopt, ranks, cost and n filled) and starts
 * want workers; the ranks are derived from here on. */
static void rank_pass_begin(struct rank_pass *p, int want)
{
    if (want > p->n) want = p->n;
    if (want > MAX_THREADS) want = MAX_THREADS;
    p->state = xcalloc((size_t)p->n, sizeof *p->state);
    p->rc = xcalloc((size_t)p->n, sizeof *p->rc);
    p->err = xcalloc((size_t)p->n, sizeof *p->err);
    p->scratch = xcalloc((size_t)p->n, sizeof *p->scratch);
    for (int i = 0; i < p->n; i++) p->scratch[i] = rank_scratch(p->run_path, i);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (int i = 0; i < want; i++)
        if (pthread_create(&p->threads[p->nthreads], NULL, pass_worker, p) == 0) p->nthreads++;
}

/* Stops p's workers (a rank in progress finishes first), removes its
 * scratch files and frees it. */
static void rank_pass_end(struct rank_pass *p)
{
    atomic_store(&p->cancel, 1);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    for (int i = 0; i < p->n; i++) {
        if (p->dbs && p->dbs[i]) sqlite3_close(p->dbs[i]);
        unlink(p->scratch[i]);
        free(p->scratch[i]);
    }
    free(p->dbs);
    free(p->scratch);
    free(p->state);
    free(p->rc);
    free(p->err);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
}

/* Adopts p's ranks into db in rank order as they finish (deriving those
 * no worker has taken on this thread), then ends p. The scratch files are
 * p->scratch (renamed by ingest_derive_early_moved when the run's folder
 * moved after the pass began). */
static int rank_pass_finish(sqlite3 *db, struct rank_pass *p, struct err *e)
{
    int rc = 0;
    pthread_mutex_lock(&p->mu); /* a pass begun early: the index build's memory is free now */
    p->budget = DERIVE_MEMORY;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n && rc == 0; i++) {
        rc = pass_wait(p, i, e);
        if (rc == 0 && (rc = rundb_attach_aside(db, p->scratch[i], e)) == 0)
            rc = detach_after(db, p->adopt(db, i == 0, i == p->n - 1, e), e);
        unlink(p->scratch[i]);
    }
    rank_pass_end(p);
    return rc;
}

/* The pass over every rank: derived aside, adopted into db in rank order,
 * on threads threads (the job's among them). */
static int rank_pass_run(sqlite3 *db, struct rank_pass *p, int threads, struct err *e)
{
    rank_pass_begin(p, threads - 1 < p->n - 1 ? threads - 1 : p->n - 1); /* the job's thread derives too */
    return rank_pass_finish(db, p, e);
}

/* The ranks of the run and what each costs in memory; in turn on db when
 * n or threads is 1. */
struct rank_list {
    int *ranks;
    int64_t *cost;
    int n, threads;
};

/* rl's ranks and the memory each costs: with its host slices (held by the
 * GPU analyses) when host is set, else the summary's share. */
static int rank_costs(sqlite3 *db, struct rank_list *rl, int host, struct err *e)
{
    int64_t *hs = NULL;
    int rc = rundb_rank_sizes(db, &rl->ranks, &rl->cost, &hs, &rl->n, e);
    for (int i = 0; rc == 0 && i < rl->n; i++) {
        int64_t held = hs[i] < (int64_t)AN_HOST_ROWS ? hs[i] : (int64_t)AN_HOST_ROWS;
        rl->cost[i] = RANK_BYTES + rl->cost[i] * OP_BYTES + (host ? held * HOST_BYTES : 0);
    }
    free(hs);
    return rc;
}

/* One pass over every rank: whole on db (one rank or one thread), else run
 * for each rank in parallel through scratch files and adopt. */
static int each_rank(sqlite3 *db, const char *db_path, const struct rank_list *rl,
                     int (*whole)(sqlite3 *db, struct err *e),
                     int (*run)(sqlite3 *db, int rank, void *arg, struct err *e),
                     int (*adopt)(sqlite3 *db, int first, int last, struct err *e), struct err *e)
{
    if (rl->n < 2 || rl->threads < 2) return whole(db, e);
    struct rank_pass p;
    memset(&p, 0, sizeof p);
    p.run_path = db_path;
    p.run = run;
    p.adopt = adopt;
    p.ranks = rl->ranks;
    p.cost = rl->cost;
    p.n = rl->n;
    p.budget = DERIVE_MEMORY;
    return rank_pass_run(db, &p, rl->threads, e);
}

/* ====================================================================== */
/* The timeline and the rules aside                                       */
/* ====================================================================== */

/* A thread beside the job's (see ingest_derive), on a scratch database of
 * its own: the timeline's level of detail of the trace (rules NULL), or
 * the rules once the job's thread has committed the summary. */
struct side {
    char *scratch;
    const char *run_path;
    const struct config_rules *rules;
    /* the rules': the import's host slices they read the launch calls from
     * (owned), freed by the thread as soon as they are read (rules_run_held) */
    struct slice_feed *feed;
    struct timeline_stream *stream; /* the slices' tables built at import (owned), or NULL */
    sem_t *opened; /* posted once the thread has its files open, or failed to (NULL: not told) */
    int nice;
    atomic_int cancel;
    pthread_t th;
    int started, rc;
    struct err e;
    /* The timeline's: once the trace's tables are built, the thread waits
     * for the analyses' series (side_series) and builds their lanes too
     * when they were committed before the critical path (LANES_COMMITTED,
     * then LANES_BUILDING); lanes is set when it did. Under mu; set up by
     * side_start. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int series, lanes, has_gate;
};

/* What the timeline's thread is told of the analyses' series, and what it
 * took on. */
enum { LANES_WAIT, LANES_COMMITTED, LANES_BUILDING, LANES_NONE };

/* The timeline's scratch: run.db.aside. */
#define TIMELINE_SUFFIX "aside"

/* Tells s's thread what became of the analyses' series: the first word
 * counts, except that LANES_NONE takes back lanes the thread has not begun
 * (still on the trace's tables when the GPU analyses are done: this thread
 * builds them after the copy instead of waiting); no-op on a side without
 * the gate. */
static void side_series(struct side *s, int state)
{
    if (!s->has_gate) return;
    pthread_mutex_lock(&s->mu);
    if (s->series == LANES_WAIT || (state == LANES_NONE && s->series == LANES_COMMITTED)) s->series = state;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void series_committed(void *arg)
{
    side_series(arg, LANES_COMMITTED);
}

/* The analyses' lanes built into the timeline's scratch once their series
 * are committed in run.db (the critical path is computed meanwhile); none
 * when they are not (ranks derived aside, a failure): then the job's
 * thread builds them after the adopt, as before. */
static int side_lanes(struct side *s, sqlite3 *db)
{
    /* the trace's build filled its page cache: not held through the wait,
     * which spans the GPU analyses' load and their peak */
    sqlite3_db_release_memory(db);
    pthread_mutex_lock(&s->mu);
    while (s->series == LANES_WAIT) pthread_cond_wait(&s->cv, &s->mu);
    int go = s->series == LANES_COMMITTED;
    if (go) s->series = LANES_BUILDING;
    pthread_mutex_unlock(&s->mu);
    if (!go || atomic_load(&s->cancel)) return 0;
    double t = log_now_s();
    int rc = timeline_build_analyses(db, &s->e);
    LOG_DEBUG("analyses' lanes built aside in %.3f s", log_now_s() - t);
    if (rc == 0) s->lanes = 1;
    return rc;
}

/* The rules are done with s's feed. */
static void feed_read(void *arg)
{
    struct side *s = arg;
    slice_feed_free(s->feed);
    s->feed = NULL;
}

/* The rules on db (s's scratch, or the run itself when no thread could
 * start), reading the launch calls from s's feed, which is freed as soon
 * as they are read. */
static int side_rules(struct side *s, sqlite3 *db, struct err *e)
{
    struct scan_held held;
    slice_feed_held(s->feed, &held);
    int rc = rules_run_held(db, s->rules, s->feed ? &held : NULL, feed_read, s, e);
    feed_read(s); /* none was given */
    return rc;
}

static void *side_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tb-side");
    struct side *s = arg;
    sqlite3 *db = NULL;
    nice_thread(s->nice);
    struct err se;
    if (s->stream && timeline_stream_finish(s->stream, &se) != 0) { /* then scan instead */
        LOG_DEBUG("timeline stream failed: %s", se.msg);
        timeline_stream_free(s->stream);
        s->stream = NULL;
    }
    int rc = s->stream ? rundb_reopen_aside(s->run_path, s->scratch, &s->cancel, &db, &s->e)
                       : rundb_open_aside(s->run_path, s->scratch, &s->cancel, &db, &s->e);
    if (s->opened) sem_post(s->opened);
    size_t nlong = 0;
    const int64_t *longt = s->stream ? timeline_stream_deferred(s->stream, &nlong) : NULL;
    if (rc == 0 && s->rules) rc = side_rules(s, db, &s->e);
    else if (rc == 0)
        rc = s->stream ? timeline_build_trace_rest(db, longt, nlong, &s->e) : timeline_build_trace(db, &s->e);
    feed_read(s); /* on a failure to open */
    if (rc == 0 && !s->rules) rc = side_lanes(s, db);
    if (db && sqlite3_close(db) != SQLITE_OK && rc == 0) rc = err_set(&s->e, ERR_DB, "cannot close the scratch database");
    s->rc = rc;
    return NULL;
}

/* Starts s on run_path.suffix; s->started 0 when no thread could start. */
static void side_start(struct side *s, const char *run_path, const char *suffix, const struct config_rules *rules)
{
    s->run_path = run_path;
    s->scratch = xasprintf("%s.%s", run_path, suffix);
    s->rules = rules;
    if (!rules && !s->has_gate) {
        pthread_mutex_init(&s->mu, NULL);
        pthread_cond_init(&s->cv, NULL);
        s->has_gate = 1;
    }
    s->started = pthread_create(&s->th, NULL, side_main, s) == 0;
}

/* Joins s, cancelled first when the job's thread failed (rc); its error
 * becomes the job's when that had none. */
static int side_join(struct side *s, int rc, struct err *e)
{
    if (!s->started) return rc;
    if (rc) atomic_store(&s->cancel, 1);
    side_series(s, LANES_NONE); /* it may wait for them */
    pthread_join(s->th, NULL);
    s->started = 0;
    if (rc == 0 && s->rc) {
        *e = s->e;
        rc = s->rc;
    }
    return rc;
}

/* s's tables copied into db by adopt, with its scratch attached. */
static int side_adopt(sqlite3 *db, const struct side *s, int (*adopt)(sqlite3 *db, struct err *e), struct err *e)
{
    int rc = rundb_attach_aside(db, s->scratch, e);
    return rc ? rc : detach_after(db, adopt(db, e), e);
}

static void side_free(struct side *s)
{
    if (s->has_gate) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        s->has_gate = 0;
    }
    timeline_stream_free(s->stream);
    s->stream = NULL;
    slice_feed_free(s->feed); /* a thread that never started */
    s->feed = NULL;
    if (!s->scratch) return;
    unlink(s->scratch);
    free(s->scratch);
    s->scratch = NULL;
}

/* The work begun at import, before the indexes (ingest_derive.h): the
 * timeline, and the summary's rank pass when the ranks are few and small
 * enough to derive beside the index build. */
struct ingest_derive_early {
    struct side s;
    char *run_path; /* s.run_path and sum.run_path: opened at their start */
    sem_t opened;   /* in here, not on a stack: a sem_post may touch it after the wait returns */
    int has_sem, unsettled; /* unsettled: opened not waited for yet */
    struct rank_list rl;
    struct rank_pass sum;
    int sum_begun;
    struct slice_feed *feed; /* sum's host slices (owned), NULL once they are adopted */
};

/* What the summaries begun early may cost in flight: they run beside the
 * index build (whose sorter and page cache peak then) and the timeline. A
 * rank costing more is not begun early. On the 16-core box 4 ranks of
 * tiled33 (~21 MB each by this count) peaked at 234-241 MiB with 96 MiB
 * here and 244-247 MiB with 48: the peak is elsewhere, this only keeps the
 * early work from adding to it. */
#define EARLY_MEMORY ((int64_t)48 << 20)

/* The summary's rank pass begun on x's run, every scratch opened here (the
 * run's folder is renamed under the workers); nothing begun when the ranks
 * are many or large, or a scratch cannot be opened. */
static void early_summary(struct ingest_derive_early *x, int threads)
{
    sqlite3 *db = NULL;
    struct err e;
    int64_t most = 0;
    if (rundb_open_snapshot(x->run_path, "SELECT count(*) FROM rank", &db, NULL, &e) != 0) return;
    int rc = rank_costs(db, &x->rl, 0, &e);
    sqlite3_close(db);
    for (int i = 0; rc == 0 && i < x->rl.n; i++) most = x->rl.cost[i] > most ? x->rl.cost[i] : most;
    if (rc != 0 || x->rl.n < 1 || x->rl.n > MAX_THREADS || most > EARLY_MEMORY) return;
    struct rank_pass *p = &x->sum;
    p->run_path = x->run_path;
    p->run = summary_rank;
    p->arg = x->feed;
    p->adopt = summary_adopt;
    p->ranks = x->rl.ranks;
    p->cost = x->rl.cost;
    p->n = x->rl.n;
    p->dbs = xcalloc((size_t)p->n, sizeof *p->dbs);
    for (int i = 0; i < p->n; i++) {
        char *scratch = rank_scratch(x->run_path, i);
        rc = rundb_open_aside(x->run_path, scratch, &p->cancel, &p->dbs[i], &e);
        free(scratch);
        if (rc != 0) {
            LOG_DEBUG("summary not begun early: %s", e.msg);
            for (int j = 0; j <= i; j++) { /* the scratch files made so far: none is left in the run */
                if (j < i) sqlite3_close(p->dbs[j]);
                scratch = rank_scratch(x->run_path, j);
                unlink(scratch);
                free(scratch);
            }
            free(p->dbs);
            p->dbs = NULL;
            return;
        }
    }
    p->nice = EARLY_NICE;
    p->budget = EARLY_MEMORY;
    rank_pass_begin(p, threads);
    x->sum_begun = 1;
}

struct timeline_stream *ingest_derive_stream_start(const char *db_path)
{
    struct timeline_stream *ts;
    struct err e;
    char *scratch = xasprintf("%s.%s", db_path, TIMELINE_SUFFIX);
    if (timeline_stream_start(scratch, TIMELINE_LOD_HOLD, &ts, &e) != 0) LOG_DEBUG("timeline not streamed: %s", e.msg);
    free(scratch);
    return ts;
}

struct ingest_derive_early *ingest_derive_early_start(const char *db_path, int threads, struct timeline_stream *ts,
                                                      struct slice_feed *feed)
{
    struct ingest_derive_early *x = xcalloc(1, sizeof *x);
    x->run_path = xstrdup(db_path);
    x->feed = feed;
    /* the stream's thread may still write its last tracks: the timeline's
     * thread waits for it, the summary (which bounds the import's wall
     * time) and the indexes do not */
    x->s.stream = ts;
    /* The folder is renamed soon: the thread must hold its files (run.db,
     * its -wal and -shm, the scratch) open by then, which its attach does
     * (it reads run.db's schema): waited for here, or, after a stream, in
     * ingest_derive_early_settle. */
    if (sem_init(&x->opened, 0, 0) == 0) {
        x->has_sem = 1;
        x->s.opened = &x->opened;
        x->s.nice = EARLY_NICE;
        side_start(&x->s, x->run_path, TIMELINE_SUFFIX, NULL);
        x->unsettled = x->s.started;
        if (!ts) ingest_derive_early_settle(x);
    } else {
        timeline_stream_free(ts);
        x->s.stream = NULL;
    }
    if (!x->s.started) {
        ingest_derive_early_free(x);
        return NULL;
    }
    early_summary(x, threads);
    if (!x->sum_begun) { /* its rows are for the summary begun here only */
        slice_feed_free(x->feed);
        x->feed = NULL;
    }
    return x;
}

void ingest_derive_early_settle(struct ingest_derive_early *x)
{
    if (!x || !x->unsettled) return;
    while (sem_wait(&x->opened) != 0) continue; /* EINTR */
    x->unsettled = 0;
}

void ingest_derive_early_moved(struct ingest_derive_early *x, const char *db_path)
{
    if (!x) return;
    free(x->s.scratch);
    x->s.scratch = xasprintf("%s.%s", db_path, TIMELINE_SUFFIX);
    /* the workers use the scratch opened ahead, never these names */
    for (int i = 0; x->sum_begun && i < x->sum.n; i++) {
        free(x->sum.scratch[i]);
        x->sum.scratch[i] = rank_scratch(db_path, i);
    }
}

void ingest_derive_early_free(struct ingest_derive_early *x)
{
    if (!x) return;
    struct err ignore;
    side_join(&x->s, ERR_INTERNAL, &ignore); /* a no-op after ingest_derive's join */
    side_free(&x->s);
    if (x->sum_begun) rank_pass_end(&x->sum);
    slice_feed_free(x->feed); /* after the workers that read it */
    if (x->has_sem) sem_destroy(&x->opened);
    free(x->rl.ranks);
    free(x->rl.cost);
    free(x->run_path);
    free(x);
}

struct marker {
    ingest_derive_mark fn;
    void *arg;
};

/* Stage name committed: marked done in run.db (readers may now read it) and
 * in the job's list. */
static int stage_done(sqlite3 *db, const struct marker *m, const char *name, double t0, struct err *e)
{
    if (m->fn) m->fn(m->arg, name, 1);
    return rundb_stage_mark(db, name, "done", log_now_s() - t0, e);
}

static int stage_start(sqlite3 *db, const struct marker *m, const char *name, struct err *e)
{
    if (m->fn) m->fn(m->arg, name, 0);
    return rundb_stage_mark(db, name, "running", 0, e);
}

int ingest_derive_threads(int jobs)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    /* one core is for the timeline's thread and the rules' */
    long n = (cpus > 1 ? cpus : 1) / (jobs > 1 ? jobs : 1) - 1;
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

/* Every derived table of a run, in dependency order: the analysis (steps,
 * breakdown, operator and kernel tables, memory), then the recommendations
 * drawn from it and the GPU analyses (they read the steps), and the
 * timeline's level of detail (its counters turn the analyses' series into
 * lanes). This thread (with the rank threads of a multi-rank run) writes
 * the analysis and the GPU analyses into run.db while a second builds the
 * timeline of the trace from the start and a third the rules once the
 * analysis is in, each into a scratch database copied in at the end
 * (timeline first, then rules: the order of the tables in run.db is a
 * serial derive's; the counters' aggregates come with the timeline when
 * its thread built the analyses' lanes, after the rules when this thread
 * does). Both are joined on every path, and cancelled when a
 * stage here fails; their errors surface like this thread's. Run at ingest
 * and again after a rank renumbering. */
int ingest_derive(sqlite3 *db, const char *db_path, const struct config_rules *rules, int threads,
                  struct ingest_derive_early *early, ingest_derive_mark mark, void *arg, struct err *e)
{
    double t[4];
    const struct marker m = { mark, arg };
    struct rank_list rl = { NULL, NULL, 0, threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads };
    struct side own, ru, *tl = early ? &early->s : &own;
    ingest_derive_early_settle(early);
    memset(&own, 0, sizeof own);
    memset(&ru, 0, sizeof ru);
    int rc = rank_costs(db, &rl, 1, e);
    t[0] = log_now_s();
    if (rc == 0) rc = stage_start(db, &m, "summary", e);
    if (rc == 0) rc = stage_start(db, &m, "timeline", e);
    if (rc == 0 && !early) side_start(tl, db_path, TIMELINE_SUFFIX, NULL);
    struct analyses_pre *pre = NULL;
    struct slice_feed *feed = NULL; /* for the rules, who free it */
    if (rc == 0 && early && early->sum_begun) {
        early->sum_begun = 0;
        /* The summary begun early may still run (beside the index build it
         * got half a core): what the GPU analyses read without its steps,
         * their launch walk, is read on this thread meanwhile. */
        if (rl.n == 1) rc = analyses_preload(db, rl.ranks[0], early->feed, &pre, e);
        if (rc == 0) rc = rank_pass_finish(db, &early->sum, e);
        else rank_pass_end(&early->sum);
        feed = early->feed; /* its summary readers are joined */
        early->feed = NULL;
    } else if (rc == 0) {
        rc = each_rank(db, db_path, &rl, summary_run, summary_rank, summary_adopt, e);
    }
    if (rc == 0) rc = stage_done(db, &m, "summary", t[0], e);
    double t_rules = log_now_s();
    if (rc == 0) rc = stage_start(db, &m, "rules", e);
    /* The rules read the launch calls from the feed within their first
     * ~50 ms, and free it then: ~40 bytes a slice back before the GPU
     * analyses peak, and 0.17 s less of reading run.db on tiled33. */
    if (rc == 0) {
        ru.feed = feed;
        feed = NULL;
        side_start(&ru, db_path, "rules", rules);
    }
    if (rc == 0 && !ru.started) rc = side_rules(&ru, db, e);
    slice_feed_free(feed); /* a failure before the rules */
    t[1] = log_now_s();
    if (rc == 0) rc = stage_start(db, &m, "analyses", e);
    /* on this connection: the series are committed before the critical path,
     * and the timeline's thread builds their lanes meanwhile */
    if (rc == 0 && (rl.n < 2 || rl.threads < 2))
        rc = tl->started ? analyses_run_then(db, pre, series_committed, tl, e)
                         : analyses_run_then(db, pre, NULL, NULL, e);
    else if (rc == 0)
        rc = each_rank(db, db_path, &rl, analyses_run, analyses_rank, analyses_adopt, e);
    analyses_pre_free(pre);
    side_series(tl, LANES_NONE);
    if (rc == 0) rc = stage_done(db, &m, "analyses", t[1], e);
    if (rc == 0 && !ru.started) rc = rules_cap(db, e); /* on a thread: rules_adopt caps them */
    t[2] = log_now_s();
    int aside = tl->started, ruled = ru.started;
    rc = side_join(tl, rc, e);
    rc = side_join(&ru, rc, e);
    if (rc == 0) rc = aside ? side_adopt(db, tl, timeline_adopt, e) : timeline_build_trace(db, e);
    if (rc == 0 && ruled) rc = side_adopt(db, &ru, rules_adopt, e);
    if (rc == 0) rc = stage_done(db, &m, "rules", t_rules, e);
    if (rc == 0 && !(aside && tl->lanes)) rc = timeline_build_analyses(db, e);
    if (rc == 0) rc = stage_done(db, &m, "timeline", t[0], e);
    t[3] = log_now_s();
    side_free(tl);
    side_free(&ru);
    ingest_derive_early_free(early);
    free(rl.ranks);
    free(rl.cost);
    if (rc == 0)
        LOG_INFO("derived tables: analysis %.2f s, analyses %.2f s, then %.2f s for the timeline and rules (%s%s)",
                 t[1] - t[0], t[2] - t[1], t[3] - t[2],
                 early ? "begun before the indexes" : aside ? "built aside" : "in turn",
                 rl.n > 1 && rl.threads > 1 ? ", ranks in parallel" : "");
    return rc;
}

#define LOG_MODULE "ingest"
#include "base/utf8.h"
#include "ingest/ingest.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/sha256.h"
#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "ingest/ingest_derive.h"
#include "ingest/ingest_naming.h"
#include "derive/slice_feed.h"
#include "derive/summary_report.h"
#include "derive/timeline_stream.h"
#include "ingest/importer.h"
#include "store/catalog_query.h"
#include "store/rundb.h"
#include "store/rundb_renumber.h"
#include "store/rundb_spool.h"
#include "store/rundb_stage.h"
#include "store/rundb_writer.h"

/* ====================================================================== */
/* The synchronous ingest                                                 */
/* ====================================================================== */

struct progress_link {
    struct ingest_progress *p;
    pthread_mutex_t *mu;
    uint64_t base; /* raw bytes of the files already done */
    double t_phase;
    const char *phase;
};

/* Starts (done = 0) or ends stage name in the job's list. A stage started
 * again (parse, sort... once per rank) adds up its turns. Only the job's
 * thread calls it. */
static void stage_mark(struct progress_link *l, const char *name, int done)
{
    if (!l || !l->p) return;
    double t = log_now_s();
    if (l->mu) pthread_mutex_lock(l->mu);
    struct ingest_progress *p = l->p;
    int i = 0;
    while (i < p->nstages && strcmp(p->stages[i].name, name) != 0) i++;
    if (i == p->nstages && !done && i < INGEST_STAGES_MAX) p->stages[p->nstages++] = (struct ingest_stage){ name, t, 0, 0 };
    else if (i < p->nstages && !done && p->stages[i].done) {
        p->stages[i].t0 = t - p->stages[i].took;
        p->stages[i].done = 0;
    }
    if (i < p->nstages && done && !p->stages[i].done) {
        p->stages[i].took = t - p->stages[i].t0;
        p->stages[i].done = 1;
    }
    if (l->mu) pthread_mutex_unlock(l->mu);
}

static void on_phase(void *arg, const char *phase)
{
    struct progress_link *l = arg;
    double t = log_now_s();
    /* phase timings are what `make bench` and a slow ingest need explained */
    if (l->phase) LOG_DEBUG("phase %s took %.3f s", l->phase, t - l->t_phase);
    if (l->phase) stage_mark(l, l->phase, 1);
    if (strcmp(phase, "done") != 0) stage_mark(l, phase, 0);
    l->phase = phase;
    l->t_phase = t;
    if (!l->p) return;
    if (l->mu) pthread_mutex_lock(l->mu);
    l->p->phase = phase;
    if (l->p->t_start == 0) l->p->t_start = t;
    /* the reading ends when a phase after the last rank's parse begins */
    if (l->p->t_read == 0 && strcmp(phase, "parse") != 0 && l->p->bytes_done >= l->p->bytes_total) l->p->t_read = t;
    if (l->mu) pthread_mutex_unlock(l->mu);
}

static void on_progress(void *arg, uint64_t raw_done, uint64_t events)
{
    struct progress_link *l = arg;
    if (!l->p) return;
    if (l->mu) pthread_mutex_lock(l->mu);
    l->p->bytes_done = l->base + raw_done;
    l->p->events = events;
    l->p->phase = "parse";
    if (l->mu) pthread_mutex_unlock(l->mu);
}

struct rank_order {
    int idx, rank;
};

static int cmp_rank(const void *a, const void *b)
{
    const struct rank_order *x = a, *y = b;
    return x->rank - y->rank;
}

/* Ranks from file names when every file has a distinct one, else by order. */
static void assign_ranks(const struct ingest_request *req, struct rank_order *out)
{
    int ok = 1;
    for (int i = 0; i < req->nfiles; i++) {
        out[i].idx = i;
        out[i].rank = req->nfiles > 1 ? ingest_naming_rank(ingest_naming_base(req->files[i].name)) : 0;
        if (out[i].rank < 0) ok = 0;
        for (int j = 0; ok && j < i; j++)
            if (out[j].rank == out[i].rank) ok = 0;
    }
    if (!ok)
        for (int i = 0; i < req->nfiles; i++) out[i].rank = i;
    xqsort(out, (size_t)req->nfiles, sizeof *out, cmp_rank);
}

/* ====================================================================== */
/* The ranks of a run parsed in parallel                                  */
/* ====================================================================== */

/* Rank 0 is parsed by the job's thread straight into the writer; ranks 1..
 * are parsed by workers into spools (rundb_spool.h), at most `lookahead`
 * ranks ahead of the writer so that spool files stay few. The job's thread
 * replays them in rank order, so the run database is the one a serial
 * import writes, and the first failing rank in order is the error shown,
 * as in a serial import. Workers see only their job and the pool's fields
 * under mu; every worker is joined before the pool is freed. */
struct rank_job {
    const struct ingest_file *f;
    const char *shown;
    int rank;
    struct rundb_writer *sp; /* the spool, under mu */
    const char *format;
    int done, rc;
    struct err err;
};

struct rank_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct rank_job *jobs;
    int njobs, next, finished, lookahead, stop, started;
    const struct instream_limits *lim;
    const char *tmp_dir;
    pthread_t threads[8];
    int nthreads;
};

static void *rank_worker(void *arg)
{
    pthread_setname_np(pthread_self(), "tb-rank");
    struct rank_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && p->next < p->njobs && p->next > p->finished + p->lookahead)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop || p->next >= p->njobs) break;
        struct rank_job *j = &p->jobs[p->next++];
        pthread_mutex_unlock(&p->mu);

        struct import_ctx ctx = { NULL, NULL, 64u << 20, NULL };
        struct rundb_writer *sp = NULL;
        struct err e;
        err_clear(&e);
        int rc = rundb_spool_new(p->tmp_dir, j->rank, &sp, &e);
        pthread_mutex_lock(&p->mu);
        j->sp = sp;
        if (p->stop && sp) rundb_spool_cancel(sp);
        pthread_mutex_unlock(&p->mu);
        if (rc == 0) rc = importer_import_file(j->f->path, j->shown, p->lim, sp, &ctx, &e);

        pthread_mutex_lock(&p->mu);
        j->rc = rc;
        j->err = e;
        j->format = ctx.format;
        j->done = 1;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Starts the workers for jobs 1..njobs-1 (none for a single rank). */
static void rank_pool_start(struct rank_pool *p)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int want = (int)(cpus > 2 ? cpus - 1 : 1);
    if (want > p->njobs - 1) want = p->njobs - 1;
    if (want > (int)(sizeof p->threads / sizeof p->threads[0])) want = (int)(sizeof p->threads / sizeof p->threads[0]);
    p->next = 1;
    p->lookahead = want + 1;
    p->started = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (int i = 0; i < want; i++)
        if (pthread_create(&p->threads[p->nthreads], NULL, rank_worker, p) == 0) p->nthreads++;
}

/* Waits for job i (parsing it here when no worker could start). */
static int rank_pool_wait(struct rank_pool *p, int i, struct rundb_writer **sp, struct err *e)
{
    pthread_mutex_lock(&p->mu);
    if (p->nthreads == 0 && p->next == i) p->next++;
    else
        while (!p->jobs[i].done) pthread_cond_wait(&p->cv, &p->mu);
    struct rank_job *j = &p->jobs[i];
    int rc = j->rc;
    if (j->done && rc) *e = j->err;
    *sp = j->sp;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* Main has finished rank i: workers may go further ahead. */
static void rank_pool_finished(struct rank_pool *p, int i)
{
    pthread_mutex_lock(&p->mu);
    p->finished = i;
    struct rundb_writer *sp = p->jobs[i].sp;
    p->jobs[i].sp = NULL;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    rundb_abort(sp);
}

/* Stops the workers (cancelling ranks in flight), joins them, frees spools. */
static void rank_pool_end(struct rank_pool *p)
{
    if (!p->started) return;
    p->started = 0;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    for (int i = 0; i < p->njobs; i++)
        if (p->jobs[i].sp && !p->jobs[i].done) rundb_spool_cancel(p->jobs[i].sp);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    for (int i = 0; i < p->njobs; i++) {
        rundb_abort(p->jobs[i].sp);
        p->jobs[i].sp = NULL;
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}

/* Opens a finished run database read-write for the derived stages. */
static int open_rw(const char *db_path, sqlite3 **db, struct err *e)
{
    if (sqlite3_open_v2(db_path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        err_set(e, ERR_DB, "cannot open the run database: %s", *db ? sqlite3_errmsg(*db) : "out of memory");
        sqlite3_close(*db);
        *db = NULL;
        return e->code;
    }
    sqlite3_busy_timeout(*db, 5000);
    return 0;
}

/* The job's list of stages follows the derived stages too. */
static void derive_mark(void *arg, const char *stage, int done)
{
    stage_mark(arg, stage, done);
}

/* The derive_hold test knob (config.h): waits while the file exists. */
static void hold(const char *path)
{
    struct timespec pause = { 0, 20 * 1000 * 1000 };
    while (path && path[0] && access(path, F_OK) == 0) nanosleep(&pause, NULL);
}

/* A new run's ranks settled from the traces' headers and its derived
 * stages listed as pending, before it becomes visible. */
static int prepare(const char *db_path, int *rank_map, int nranks, int *changed, struct err *e)
{
    sqlite3 *db = NULL;
    *changed = 0;
    if (open_rw(db_path, &db, e) != 0) return e->code;
    /* the rank a trace says it is beats its file name and the upload order */
    int rc = nranks > 1 ? rundb_ranks_from_headers(db, rank_map, nranks, changed, e) : 0;
    if (rc == 0) rc = rundb_stage_begin(db, ingest_derive_stages, INGEST_DERIVE_NSTAGES, e);
    if (sqlite3_close(db) != SQLITE_OK && rc == 0) rc = err_set(e, ERR_DB, "cannot close the run database");
    return rc;
}

/* The derived tables of a published run (prepare), in its final folder. */
static int derive_published(const char *db_path, const struct config *cfg, struct ingest_derive_early *early,
                            struct progress_link *l, struct err *e)
{
    sqlite3 *db = NULL;
    hold(cfg->derive_hold);
    if (open_rw(db_path, &db, e) != 0) {
        ingest_derive_early_free(early);
        return e->code;
    }
    int rc = ingest_derive(db, db_path, &cfg->rules, ingest_derive_threads(cfg->ingest_workers), early, derive_mark,
                           l, e);
    if (sqlite3_close(db) != SQLITE_OK && rc == 0) rc = err_set(e, ERR_DB, "cannot close the run database");
    if (rc == 0) rc = fsutil_fsync_path(db_path, e);
    return rc;
}

/* The run.db's pages sent to disk beside the index build: the fsync
 * before the run is published then waits only for the rest (on tiled33,
 * 230 MB: 70 ms of the commit phase, and queueing them takes 60 ms of a
 * core, ext4 allocating blocks). */
struct writeback {
    char *path;
    pthread_t th;
    int started;
};

static void *writeback_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tb-writeback");
    struct writeback *wb = arg;
    double took = fsutil_writeback_start(wb->path);
    if (took >= 0) LOG_DEBUG("run.db's writeback queued in %.3f s", took);
    return NULL;
}

static void writeback_join(struct writeback *wb)
{
    if (wb->started) pthread_join(wb->th, NULL);
    wb->started = 0;
    free(wb->path);
    wb->path = NULL;
}

/* The writer's sorted stream handed to two consumers (a, b: either's
 * callbacks NULL for none): the timeline's stream and the summary's feed. */
struct tee {
    struct rundb_slice_sink a, b;
};

static void tee_rank(void *ctx, int has_span, int64_t t0, int64_t t1)
{
    struct tee *t = ctx;
    if (t->a.rank) t->a.rank(t->a.ctx, has_span, t0, t1);
    if (t->b.rank) t->b.rank(t->b.ctx, has_span, t0, t1);
}

static void tee_slice(void *ctx, const struct rundb_slice_out *s)
{
    struct tee *t = ctx;
    if (t->a.slice) t->a.slice(t->a.ctx, s);
    if (t->b.slice) t->b.slice(t->b.ctx, s);
}

static void tee_track_end(void *ctx, int64_t track, int present, int max_depth, int64_t nslices)
{
    struct tee *t = ctx;
    if (t->a.track_end) t->a.track_end(t->a.ctx, track, present, max_depth, nslices);
    if (t->b.track_end) t->b.track_end(t->b.ctx, track, present, max_depth, nslices);
}

static void sink_tee(struct tee *t, struct rundb_slice_sink *out)
{
    *out = (struct rundb_slice_sink){ tee_rank, tee_slice, tee_track_end, t };
}

/* The content hash of a job's files, computed beside the parse. */
struct hash_job {
    const char **paths;
    int n;
    char hex[SHA256_HEX_LEN + 1];
    int rc;
    struct err err;
    pthread_t th;
    int started;
};

static void *hash_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tb-hash");
    struct hash_job *h = arg;
    /* the hash is wanted once the indexes are built: it takes the cycles
     * the parse and the writer leave (Linux: per thread; ignored on failure) */
    setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
    h->rc = ingest_hash_files(h->paths, h->n, h->hex, &h->err);
    return NULL;
}

static int ingest_run_locked(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
                             const struct ingest_labels *lb, struct ingest_progress *progress, pthread_mutex_t *mu,
                             char run_id[CATALOG_ID_LEN + 1], struct err *e)
{
    char id[CATALOG_ID_LEN + 1];
    char *tmp_root = xasprintf("%s/tmp", cfg->data_dir);
    char *tmp_dir = NULL, *db_path = NULL, *src_dir = NULL, *final_dir = NULL, *final_db = NULL;
    struct rundb_writer *w = NULL;
    struct rank_order *order = NULL;
    struct rank_job *jobs = NULL;
    struct rank_pool pool;
    int *rank_map = NULL;
    json_t *files = json_array(), *info = NULL, *figures = NULL, *trace = NULL;
    char *name = NULL, *files_text = NULL, *tags_text = NULL, *meta_text = NULL;
    char hash[SHA256_HEX_LEN + 1] = "", dup[CATALOG_ID_LEN + 1];
    struct hash_job hj = { NULL, 0, "", 0, { 0 }, 0, 0 };
    struct writeback wb;
    memset(&wb, 0, sizeof wb);
    struct ingest_derive_early *early = NULL;
    struct timeline_stream *tls = NULL;
    struct slice_feed *feed = NULL;
    struct tee tee;
    struct rundb_slice_sink tee_sink;
    memset(&tee, 0, sizeof tee);
    struct progress_link link = { progress, mu, 0, log_now_s(), "parse" };
    int rc = 0;
    uint64_t total = 0, events = 0;

    memset(&pool, 0, sizeof pool);
    if (req->nfiles <= 0) {
        rc = err_set(e, ERR_INVALID, "no trace file was given");
        goto out;
    }
    if (req->nfiles > 4096) {
        rc = err_set(e, ERR_INVALID, "too many files in one run (%d, at most 4096)", req->nfiles);
        goto out;
    }
    for (int i = 0; i < req->nfiles; i++) {
        int64_t sz = fsutil_file_size(req->files[i].path);
        if (sz < 0) {
            rc = err_set(e, ERR_NOT_FOUND, "%s: not a readable file", req->files[i].name);
            goto out;
        }
        total += (uint64_t)sz;
    }
    if (lb && lb->hash) {
        snprintf(hash, sizeof hash, "%s", lb->hash);
    } else {
        /* a read of every file: on the second core while the first parses */
        hj.paths = xcalloc((size_t)req->nfiles, sizeof *hj.paths);
        for (int i = 0; i < req->nfiles; i++) hj.paths[i] = req->files[i].path;
        hj.n = req->nfiles;
        hj.started = pthread_create(&hj.th, NULL, hash_main, &hj) == 0;
        if (!hj.started) hash_main(&hj);
    }
    if (progress) {
        if (mu) pthread_mutex_lock(mu);
        progress->bytes_total = total;
        progress->phase = "parse";
        if (mu) pthread_mutex_unlock(mu);
    }
    stage_mark(&link, "parse", 0);
    catalog_new_id(id);
    tmp_dir = xasprintf("%s/%s", tmp_root, id);
    db_path = xasprintf("%s/run.db", tmp_dir);
    src_dir = xasprintf("%s/src", tmp_dir);
    if ((rc = fsutil_mkdirs(src_dir, e)) != 0) goto out;
    if ((rc = rundb_create(db_path, cfg->sort_memory, tmp_dir, &w, e)) != 0) goto out;
    rundb_set_phase_hook(w, on_phase, &link);
    /* the timeline's slices are built from the merge as it writes them, on
     * the core the writer's thread leaves; the summary's host slices are
     * held from it meanwhile */
    if ((tls = ingest_derive_stream_start(db_path))) timeline_stream_sink(tls, &tee.a);
    feed = slice_feed_new(SLICE_FEED_MAX_ROWS);
    slice_feed_sink(feed, &tee.b);
    sink_tee(&tee, &tee_sink);
    rundb_set_slice_sink(w, &tee_sink);

    order = xmalloc(sizeof *order * (size_t)req->nfiles);
    assign_ranks(req, order);
    struct instream_limits lim = { cfg->inflate_limit, cfg->inflate_ratio, strcmp(cfg->inflate, "zlib") == 0 };
    jobs = xcalloc((size_t)req->nfiles, sizeof *jobs);
    for (int i = 0; i < req->nfiles; i++) {
        jobs[i].f = &req->files[order[i].idx];
        /* A name from a folder scan or the command line may be any bytes;
         * JSON answers need UTF-8. */
        jobs[i].shown = utf8_dup(ingest_naming_base(jobs[i].f->name));
        jobs[i].rank = order[i].rank;
    }
    pool.jobs = jobs;
    pool.njobs = req->nfiles;
    pool.lim = &lim;
    pool.tmp_dir = tmp_dir;
    if (req->nfiles > 1) rank_pool_start(&pool);
    for (int i = 0; i < req->nfiles; i++) {
        const struct ingest_file *f = jobs[i].f;
        const char *shown = jobs[i].shown;
        int64_t sz = fsutil_file_size(f->path);
        struct import_ctx ctx = { on_progress, &link, 64u << 20, NULL };
        struct tb_rank_stats st;
        struct rundb_writer *sp = NULL;

        if ((rc = rundb_begin_rank(w, order[i].rank, shown, sz, e)) != 0) goto out;
        if (i > 0 && (rc = rank_pool_wait(&pool, i, &sp, e)) != 0) goto out;
        if (sp) {
            rc = rundb_spool_replay(w, sp, e);
            ctx.format = jobs[i].format;
        } else {
            rc = importer_import_file(f->path, shown, &lim, w, &ctx, e);
        }
        if (rc != 0 || (rc = rundb_finish_rank(w, &st, e)) != 0) goto out;
        if (i > 0) rank_pool_finished(&pool, i);
        events += st.events;
        link.base += (uint64_t)sz;
        on_progress(&link, 0, events); /* a spooled rank reports no progress of its own */
        on_phase(&link, "parse");
        json_array_append_new(files, json_pack("{s:s,s:I,s:i,s:s}", "name", shown, "bytes", (json_int_t)sz, "rank",
                                               order[i].rank, "format", ctx.format ? ctx.format : "?"));
    }
    rank_pool_end(&pool);
    /* the timeline and the summary need the rows, not the indexes: they
     * start on the second core while this one builds them */
    rundb_set_slice_sink(w, NULL);
    if ((rc = rundb_commit_rows(w, e)) != 0) goto out;
    wb.path = xstrdup(db_path);
    wb.started = pthread_create(&wb.th, NULL, writeback_main, &wb) == 0;
    early = ingest_derive_early_start(db_path, ingest_derive_threads(cfg->ingest_workers), tls, feed);
    tls = NULL;
    feed = NULL;
    rc = rundb_close_writer(w, e);
    w = NULL;
    if (rc) goto out;
    /* the job's phases: commit (ranks settled, the run published), then
     * analyze (the derived stages, the run already open) */
    on_phase(&link, "commit");
    rank_map = xmalloc(sizeof *rank_map * (size_t)req->nfiles);
    int renumbered;
    if ((rc = prepare(db_path, rank_map, req->nfiles, &renumbered, e)) != 0) goto out;
    if (renumbered) { /* the work begun early read the ranks' old numbers */
        ingest_derive_early_free(early);
        early = NULL;
    }
    if (req->nfiles > 1) {
        size_t k;
        json_t *f;
        for (int i = 0; i < req->nfiles; i++) order[i].rank = rank_map[order[i].rank];
        json_array_foreach(files, k, f) {
            json_int_t r = json_integer_value(json_object_get(f, "rank"));
            if (r >= 0 && r < req->nfiles) json_object_set_new(f, "rank", json_integer(rank_map[r]));
        }
    }

    if (hj.paths) {
        if (hj.started) pthread_join(hj.th, NULL);
        hj.started = 0;
        if ((rc = hj.rc) != 0) {
            *e = hj.err;
            goto out;
        }
        memcpy(hash, hj.hex, sizeof hash);
    }
    if (lb && lb->refuse_duplicate && catalog_find_hash(cat, hash, dup)) {
        rc = err_set(e, ERR_CONFLICT, "the same files are run %s already", dup);
        goto out;
    }
    /* Keep the sources for download: uploads move, other files are copied. */
    if (cfg->keep_sources) {
        for (int i = 0; i < req->nfiles; i++) {
            const struct ingest_file *f = &req->files[order[i].idx];
            char *safe = ingest_naming_safe_file(f->name);
            char *dst = xasprintf("%s/%d-%s", src_dir, order[i].rank, safe);
            rc = f->owned ? fsutil_move(f->path, dst, e) : fsutil_link_or_copy(f->path, dst, e);
            free(safe);
            free(dst);
            if (rc) goto out;
        }
    }
    if ((rc = rundb_info(db_path, &info, e)) != 0) goto out;
    writeback_join(&wb);
    if ((rc = fsutil_fsync_path(db_path, e)) != 0) goto out;

    final_dir = catalog_run_dir(cat, id);
    ingest_derive_early_settle(early); /* its threads' files open before the move */
    if (rename(tmp_dir, final_dir) != 0) {
        int en = errno;
        rc = err_set(e, fsutil_errno_code(en), "cannot move the run into place: %s", strerror(en));
        goto out;
    }
    free(tmp_dir);
    tmp_dir = NULL; /* from here on the folder is the run's */
    final_db = xasprintf("%s/run.db", final_dir);
    ingest_derive_early_moved(early, final_db);
    {
        char *runs_dir = xasprintf("%s/runs", cfg->data_dir);
        struct err ignore;
        fsutil_fsync_path(runs_dir, &ignore);
        free(runs_dir);
    }

    struct catalog_run r;
    memset(&r, 0, sizeof r);
    memcpy(r.id, id, sizeof r.id);
    {
        /* a --logdir folder name may be any bytes: the catalog holds UTF-8
         * (a name jansson refuses would leave the run out of the list) */
        char *raw = req->run_name && req->run_name[0] ? ingest_naming_prefix(req->run_name, 200)
                                                       : ingest_naming_run(req->files, req->nfiles);
        name = utf8_dup(raw);
        free(raw);
    }
    r.name = name;
    r.created = (int64_t)time(NULL);
    r.ranks = req->nfiles;
    r.bytes = (int64_t)total;
    r.events = (int64_t)events;
    json_t *ranks = json_object_get(info, "ranks"), *rk;
    size_t ri;
    r.gpu = "";
    json_array_foreach(ranks, ri, rk) {
        json_t *dev = json_object_get(rk, "device");
        const char *g = json_string_value(json_object_get(dev, "name"));
        if (g && g[0] && !r.gpu[0]) r.gpu = g;
        json_t *notes = json_object_get(rk, "notes"), *nt;
        size_t ni;
        json_array_foreach(notes, ni, nt) {
            const char *lvl = json_string_value(json_object_get(nt, "level"));
            if (lvl && strcmp(lvl, "info") != 0) r.warnings++;
        }
    }
    files_text = json_dumps(files, JSON_COMPACT);
    tags_text = req->tags && json_is_array(req->tags) ? json_dumps(req->tags, JSON_COMPACT) : NULL;
    r.files_json = files_text;
    r.tags_json = tags_text;
    r.status = CATALOG_DERIVING;
    r.project = lb ? lb->project : NULL;
    meta_text = lb && json_is_object(lb->meta) ? json_dumps(lb->meta, JSON_COMPACT) : NULL;
    r.meta_json = meta_text;
    r.hash = hash;
    if ((rc = catalog_insert(cat, &r, e)) != 0) {
        struct err ignore;
        ingest_derive_early_free(early);
        early = NULL;
        fsutil_rmtree(final_dir, &ignore);
        goto out;
    }
    /* visible from here: its pages say "computing" until their stage is done */
    if (progress) {
        if (mu) pthread_mutex_lock(mu);
        memcpy(progress->run_id, id, sizeof progress->run_id);
        if (mu) pthread_mutex_unlock(mu);
    }
    on_phase(&link, "analyze");
    rc = derive_published(final_db, cfg, early, &link, e);
    early = NULL;
    /* the key figures read the derived tables: filed before the run is ready */
    if (rc == 0) rc = ingest_catalog_facts(final_db, &figures, &trace, e);
    if (rc == 0) rc = catalog_set_facts(cat, id, figures, trace, NULL, e);
    if (rc == 0) rc = catalog_set_status(cat, id, CATALOG_READY, e);
    if (rc) {
        /* no run is left half derived: the row and folder go */
        struct err ignore;
        if (catalog_delete(cat, id, &ignore) != 0) LOG_WARN("run %s: %s", id, ignore.msg);
        goto out;
    }
    memcpy(run_id, id, CATALOG_ID_LEN + 1);
    on_phase(&link, "done");
    LOG_INFO("run %s (%s): %d rank(s), %llu events, %llu bytes", id, name, req->nfiles, (unsigned long long)events,
             (unsigned long long)total);
out:
    ingest_derive_early_free(early); /* before its files go */
    slice_feed_free(feed);
    if (hj.started) pthread_join(hj.th, NULL); /* it reads the files removed below */
    writeback_join(&wb);
    free(hj.paths);
    rank_pool_end(&pool); /* before the writer and the tmp folder go */
    if (jobs)
        for (int i = 0; i < req->nfiles; i++) free((char *)jobs[i].shown);
    free(jobs);
    if (w) rundb_abort(w);
    timeline_stream_free(tls);
    if (tmp_dir) {
        struct err ignore;
        fsutil_rmtree(tmp_dir, &ignore);
    }
    /* Uploads belong to the job: whatever was not moved into the run goes,
     * and so does the upload folder once it is empty. */
    for (int i = 0; i < req->nfiles; i++) {
        if (!req->files[i].owned) continue;
        unlink(req->files[i].path);
        char *dir = xstrdup(req->files[i].path), *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            rmdir(dir); /* fails harmlessly while other files remain */
        }
        free(dir);
    }
    json_decref(files);
    json_decref(info);
    json_decref(figures);
    json_decref(trace);
    free(meta_text);
    free(order);
    free(rank_map);
    free(name);
    free(files_text);
    free(tags_text);
    free(tmp_root);
    free(tmp_dir);
    free(db_path);
    free(src_dir);
    free(final_dir);
    free(final_db);
    return rc;
}

/* ingest_run_locked under the data folder's shared lock (fsutil.h): its tmp
 * folder and its not yet catalogued run folder are safe from the start-up
 * sweeps of other processes. */
int ingest_run_mu(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
                  const struct ingest_labels *labels, struct ingest_progress *progress, pthread_mutex_t *mu,
                  char run_id[CATALOG_ID_LEN + 1], struct err *e)
{
    int lock = -1;
    int rc = fsutil_lock_data(cfg->data_dir, 0, &lock, e);
    if (rc) return rc;
    rc = ingest_run_locked(cat, cfg, req, labels, progress, mu, run_id, e);
    fsutil_unlock(lock);
    return rc;
}

int ingest_run(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
               struct ingest_progress *progress, char run_id[CATALOG_ID_LEN + 1], struct err *e)
{
    return ingest_run_mu(cat, cfg, req, NULL, progress, NULL, run_id, e);
}

int ingest_hash_files(const char *const *paths, int n, char hex[65], struct err *e)
{
    char (*each)[SHA256_HEX_LEN + 1] = xcalloc(n > 0 ? (size_t)n : 1, sizeof *each);
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = sha256_file(paths[i], each[i], e);
    if (rc == 0) sha256_of_hashes(each, n, hex);
    free(each);
    return rc;
}

int ingest_catalog_facts(const char *db_path, json_t **figures, json_t **trace, struct err *e)
{
    sqlite3 *db = NULL;
    int rc = rundb_open_ro(db_path, &db, e);
    if (rc == 0) rc = summary_report_catalog(db, figures, trace, e);
    sqlite3_close(db);
    return rc;
}

char *ingest_upload_dir(const struct config *cfg, struct err *e)
{
    char *root = xasprintf("%s/tmp", cfg->data_dir);
    if (fsutil_mkdirs(root, e) != 0) {
        free(root);
        return NULL;
    }
    char *tmpl = xasprintf("%s/upload-XXXXXX", root);
    free(root);
    if (!mkdtemp(tmpl)) {
        int en = errno;
        err_set(e, fsutil_errno_code(en), "cannot create an upload folder: %s", strerror(en));
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

int ingest_rederive(const char *db_path, const int *from, const int *to, int n, const struct config_rules *rules,
                    struct err *e)
{
    return ingest_rederive_facts(db_path, from, to, n, rules, NULL, NULL, e);
}

int ingest_rederive_facts(const char *db_path, const int *from, const int *to, int n,
                          const struct config_rules *rules, json_t **figures, json_t **trace, struct err *e)
{
    sqlite3 *db = NULL;
    json_t *fig = NULL, *tr = NULL;
    int rc = open_rw(db_path, &db, e);
    /* the derived tables are computed again rather than renumbered: the
     * findings' texts name ranks and the straggler is judged across them */
    if (rc == 0) rc = rundb_renumber_ranks(db, from, to, n, e);
    /* a run stored before the stages were listed gets the table here */
    if (rc == 0) rc = rundb_stage_begin(db, ingest_derive_stages, INGEST_DERIVE_NSTAGES, e);
    if (rc == 0) rc = ingest_derive(db, db_path, rules, ingest_derive_threads(1), NULL, NULL, NULL, e);
    if (rc == 0 && figures) rc = summary_report_catalog(db, &fig, &tr, e);
    /* everything into run.db itself: the swapped-in folder must not need
     * its -wal, which a reader of the old run could otherwise pair with it */
    if (rc == 0 && sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "run database (checkpoint)");
    if (db && sqlite3_close(db) != SQLITE_OK && rc == 0) rc = err_set(e, ERR_DB, "cannot close the run database");
    if (rc) {
        json_decref(fig);
        json_decref(tr);
        fig = tr = NULL;
    }
    if (figures) *figures = fig;
    if (trace) *trace = tr;
    return rc;
}

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
#include <time.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/jtok.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/analyses.h"
#include "derive/rules.h"
#include "derive/summary.h"
#include "derive/timeline.h"
#include "ingest/importer.h"
#include "store/rundb.h"
#include "store/rundb_renumber.h"
#include "store/rundb_writer.h"

/* ====================================================================== */
/* Naming: ranks and run names from file names                            */
/* ====================================================================== */

/* The rank written in a file name: rank3, rank-3, rank_3, worker3. -1 if none. */
static int rank_from_name(const char *name)
{
    static const char *keys[] = { "rank", "worker" };
    for (size_t k = 0; k < 2; k++) {
        const char *p = name;
        while ((p = strstr(p, keys[k])) != NULL) {
            const char *d = p + strlen(keys[k]);
            if (*d == '-' || *d == '_') d++;
            if (isdigit((unsigned char)*d)) {
                long r = strtol(d, NULL, 10);
                if (r >= 0 && r < 1000000) return (int)r;
            }
            p++;
        }
    }
    return -1;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* "rank0.1795344527679083192.pt.trace.json.gz" -> "rank0" ; several files of
 * one job lose their rank part too. Owned by caller. */
static char *run_name_from_files(const struct ingest_file *files, int n)
{
    char *s = xstrdup(base_name(files[0].name));
    static const char *suffixes[] = { ".gz", ".json", ".trace", ".pt" };
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < 4; i++) {
            size_t l = strlen(s), k = strlen(suffixes[i]);
            if (l > k && strcmp(s + l - k, suffixes[i]) == 0) {
                s[l - k] = '\0';
                again = 1;
            }
        }
    }
    /* a trailing ".<digits>" is the profiler's span timestamp */
    char *dot = strrchr(s, '.');
    if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1)) *dot = '\0';
    if (n > 1) {
        /* drop the rank token: "job_rank0" -> "job" */
        static const char *keys[] = { "rank", "worker" };
        for (size_t k = 0; k < 2; k++) {
            char *p = strstr(s, keys[k]);
            if (!p) continue;
            char *d = p + strlen(keys[k]);
            if (*d == '-' || *d == '_') d++;
            while (isdigit((unsigned char)*d)) d++;
            memmove(p, d, strlen(d) + 1);
        }
        size_t l = strlen(s);
        while (l && (s[l - 1] == '_' || s[l - 1] == '-' || s[l - 1] == '.')) s[--l] = '\0';
        while (s[0] == '_' || s[0] == '-' || s[0] == '.') memmove(s, s + 1, strlen(s));
        if (!s[0]) {
            /* "dir/rank0.json", "dir/rank1.json": the folder names the job */
            const char *slash = strrchr(files[0].name, '/');
            free(s);
            if (slash && slash != files[0].name) {
                const char *b = slash;
                while (b > files[0].name && b[-1] != '/') b--;
                s = xmemdup0(b, (size_t)(slash - b));
            } else {
                s = xasprintf("%d-rank run", n);
            }
        }
    }
    if (!s[0]) {
        free(s);
        s = xstrdup("run");
    }
    return s;
}

/* The first bytes of s, at most max, without cutting a UTF-8 character in
 * two. Owned by caller. */
static char *name_prefix(const char *s, size_t max)
{
    size_t n = strnlen(s, max);

    for (int k = 0; k < 3 && s[n] && n && ((unsigned char)s[n] & 0xC0) == 0x80; k++) n--;
    return xstrndup(s, n);
}

/* File names become path components of src/: keep them boring. */
static char *safe_file_name(const char *name)
{
    char *s = xstrdup(base_name(name));
    for (char *c = s; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '.' || *c == '-' || *c == '_')) *c = '_';
    if (s[0] == '.' || !s[0]) {
        char *t = xasprintf("trace%s", s);
        free(s);
        s = t;
    }
    return s;
}

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

static void on_phase(void *arg, const char *phase)
{
    struct progress_link *l = arg;
    double t = log_now_s();
    /* phase timings are what `make bench` and a slow ingest need explained */
    if (l->phase) LOG_DEBUG("phase %s took %.3f s", l->phase, t - l->t_phase);
    l->phase = phase;
    l->t_phase = t;
    if (!l->p) return;
    if (l->mu) pthread_mutex_lock(l->mu);
    l->p->phase = phase;
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
        out[i].rank = req->nfiles > 1 ? rank_from_name(base_name(req->files[i].name)) : 0;
        if (out[i].rank < 0) ok = 0;
        for (int j = 0; ok && j < i; j++)
            if (out[j].rank == out[i].rank) ok = 0;
    }
    if (!ok)
        for (int i = 0; i < req->nfiles; i++) out[i].rank = i;
    xqsort(out, (size_t)req->nfiles, sizeof *out, cmp_rank);
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

/* Every derived table of a run, in dependency order: the analysis (steps,
 * breakdown, operator and kernel tables, memory), the recommendations drawn
 * from it, the GPU analyses (they read the steps) and the timeline's level
 * of detail (it turns the analyses' series into counter lanes). Run at
 * ingest and again after a rank renumbering. */
static int derive(sqlite3 *db, const struct config_rules *rules, struct err *e)
{
    double t[5];
    int rc;
    t[0] = log_now_s();
    if ((rc = summary_run(db, e)) != 0) return rc;
    t[1] = log_now_s();
    if ((rc = rules_run(db, rules, e)) != 0) return rc;
    t[2] = log_now_s();
    if ((rc = analyses_run(db, e)) != 0) return rc;
    t[3] = log_now_s();
    if ((rc = timeline_build(db, e)) != 0) return rc;
    t[4] = log_now_s();
    LOG_INFO("derived tables: analysis %.2f s, rules %.2f s, analyses %.2f s, timeline %.2f s", t[1] - t[0],
             t[2] - t[1], t[3] - t[2], t[4] - t[3]);
    return 0;
}

/* The derived tables of a new run, computed once here before it becomes
 * visible, after settling its ranks from the traces' headers. */
static int analyse(const char *db_path, const struct config_rules *rules, int *rank_map, int nranks,
                   struct err *e)
{
    sqlite3 *db = NULL;
    int changed = 0;
    if (open_rw(db_path, &db, e) != 0) return e->code;
    /* the rank a trace says it is beats its file name and the upload order */
    int rc = nranks > 1 ? rundb_ranks_from_headers(db, rank_map, nranks, &changed, e) : 0;
    if (rc == 0) rc = derive(db, rules, e);
    if (sqlite3_close(db) != SQLITE_OK && rc == 0) rc = err_set(e, ERR_DB, "cannot close the run database");
    return rc;
}

static int ingest_run_locked(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
                             struct ingest_progress *progress, pthread_mutex_t *mu,
                             char run_id[CATALOG_ID_LEN + 1], struct err *e)
{
    char id[CATALOG_ID_LEN + 1];
    char *tmp_root = xasprintf("%s/tmp", cfg->data_dir);
    char *tmp_dir = NULL, *db_path = NULL, *src_dir = NULL, *final_dir = NULL;
    struct rundb_writer *w = NULL;
    struct rank_order *order = NULL;
    int *rank_map = NULL;
    json_t *files = json_array(), *info = NULL;
    char *name = NULL, *files_text = NULL, *tags_text = NULL;
    struct progress_link link = { progress, mu, 0, log_now_s(), "parse" };
    int rc = 0;
    uint64_t total = 0, events = 0;

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
    if (progress) {
        if (mu) pthread_mutex_lock(mu);
        progress->bytes_total = total;
        progress->phase = "parse";
        if (mu) pthread_mutex_unlock(mu);
    }
    catalog_new_id(id);
    tmp_dir = xasprintf("%s/%s", tmp_root, id);
    db_path = xasprintf("%s/run.db", tmp_dir);
    src_dir = xasprintf("%s/src", tmp_dir);
    if ((rc = fsutil_mkdirs(src_dir, e)) != 0) goto out;
    if ((rc = rundb_create(db_path, cfg->sort_memory, tmp_dir, &w, e)) != 0) goto out;
    rundb_set_phase_hook(w, on_phase, &link);

    order = xmalloc(sizeof *order * (size_t)req->nfiles);
    assign_ranks(req, order);
    struct instream_limits lim = { cfg->inflate_limit, cfg->inflate_ratio };
    for (int i = 0; i < req->nfiles; i++) {
        const struct ingest_file *f = &req->files[order[i].idx];
        int64_t sz = fsutil_file_size(f->path);
        struct import_ctx ctx = { on_progress, &link, 64u << 20, NULL };
        struct tb_rank_stats st;

        /* A name from a folder scan or the command line may be any bytes;
         * JSON answers need UTF-8. */
        char *shown = utf8_dup(base_name(f->name));

        if ((rc = rundb_begin_rank(w, order[i].rank, shown, sz, e)) != 0 ||
            (rc = importer_import_file(f->path, shown, &lim, w, &ctx, e)) != 0 ||
            (rc = rundb_finish_rank(w, &st, e)) != 0) {
            free(shown);
            goto out;
        }
        events += st.events;
        link.base += (uint64_t)sz;
        on_phase(&link, "parse");
        json_array_append_new(files, json_pack("{s:s,s:I,s:i,s:s}", "name", shown, "bytes", (json_int_t)sz, "rank",
                                               order[i].rank, "format", ctx.format ? ctx.format : "?"));
        free(shown);
    }
    rc = rundb_close_writer(w, e);
    w = NULL;
    if (rc) goto out;
    on_phase(&link, "analyze");
    rank_map = xmalloc(sizeof *rank_map * (size_t)req->nfiles);
    if ((rc = analyse(db_path, &cfg->rules, rank_map, req->nfiles, e)) != 0) goto out;
    if (req->nfiles > 1) {
        size_t k;
        json_t *f;
        for (int i = 0; i < req->nfiles; i++) order[i].rank = rank_map[order[i].rank];
        json_array_foreach(files, k, f) {
            json_int_t r = json_integer_value(json_object_get(f, "rank"));
            if (r >= 0 && r < req->nfiles) json_object_set_new(f, "rank", json_integer(rank_map[r]));
        }
    }

    on_phase(&link, "commit");
    /* Keep the sources for download: uploads move, other files are copied. */
    if (cfg->keep_sources) {
        for (int i = 0; i < req->nfiles; i++) {
            const struct ingest_file *f = &req->files[order[i].idx];
            char *safe = safe_file_name(f->name);
            char *dst = xasprintf("%s/%d-%s", src_dir, order[i].rank, safe);
            rc = f->owned ? fsutil_move(f->path, dst, e) : fsutil_link_or_copy(f->path, dst, e);
            free(safe);
            free(dst);
            if (rc) goto out;
        }
    }
    if ((rc = rundb_info(db_path, &info, e)) != 0) goto out;
    if ((rc = fsutil_fsync_path(db_path, e)) != 0) goto out;

    final_dir = catalog_run_dir(cat, id);
    if (rename(tmp_dir, final_dir) != 0) {
        int en = errno;
        rc = err_set(e, fsutil_errno_code(en), "cannot move the run into place: %s", strerror(en));
        goto out;
    }
    free(tmp_dir);
    tmp_dir = NULL; /* from here on the folder is the run's */
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
        char *raw = req->run_name && req->run_name[0] ? name_prefix(req->run_name, 200)
                                                       : run_name_from_files(req->files, req->nfiles);
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
    if ((rc = catalog_insert(cat, &r, e)) != 0) {
        struct err ignore;
        fsutil_rmtree(final_dir, &ignore);
        goto out;
    }
    memcpy(run_id, id, CATALOG_ID_LEN + 1);
    on_phase(&link, "done");
    LOG_INFO("run %s (%s): %d rank(s), %llu events, %llu bytes", id, name, req->nfiles, (unsigned long long)events,
             (unsigned long long)total);
out:
    if (w) rundb_abort(w);
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
    return rc;
}

/* ingest_run_locked under the data folder's shared lock (fsutil.h): its tmp
 * folder and its not yet catalogued run folder are safe from the start-up
 * sweeps of other processes. */
static int ingest_run_shared(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
                             struct ingest_progress *progress, pthread_mutex_t *mu,
                             char run_id[CATALOG_ID_LEN + 1], struct err *e)
{
    int lock = -1;
    int rc = fsutil_lock_data(cfg->data_dir, 0, &lock, e);
    if (rc) return rc;
    rc = ingest_run_locked(cat, cfg, req, progress, mu, run_id, e);
    fsutil_unlock(lock);
    return rc;
}

int ingest_run(struct catalog *cat, const struct config *cfg, const struct ingest_request *req,
               struct ingest_progress *progress, char run_id[CATALOG_ID_LEN + 1], struct err *e)
{
    return ingest_run_shared(cat, cfg, req, progress, NULL, run_id, e);
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

/* ====================================================================== */
/* The service: a queue and worker threads                                */
/* ====================================================================== */

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_FAILED };
static const char *const job_state_names[] = { "queued", "running", "done", "failed" };

struct job {
    int id;
    enum job_state state;
    char *name;
    struct ingest_file *files;
    int nfiles;
    json_t *tags;
    struct ingest_progress progress;
    char run_id[CATALOG_ID_LEN + 1];
    struct err err;
    time_t ended;
    struct job *next;  /* all jobs, newest first */
};

/* A run whose ranks an ingest_renumber is changing: a second one waits
 * for nothing and is refused (409). */
struct renumbering {
    char run_id[CATALOG_ID_LEN + 1];
    struct renumbering *next;
};

struct ingest_service {
    struct catalog *cat;
    const struct config *cfg;
    pthread_mutex_t mu;
    struct renumbering *renumbering; /* runs whose ranks are being renumbered (under mu) */
    pthread_cond_t work, done;
    struct job *jobs;
    int next_id;
    int stopping;
    pthread_t *threads;
    int nthreads;
};

#define KEEP_FINISHED 64

static void job_free(struct job *j)
{
    for (int i = 0; i < j->nfiles; i++) {
        free((char *)j->files[i].path);
        free((char *)j->files[i].name);
    }
    free(j->files);
    free(j->name);
    json_decref(j->tags);
    free(j);
}

/* Drops the oldest finished jobs beyond KEEP_FINISHED. Caller holds mu. */
static void prune(struct ingest_service *s)
{
    int kept = 0;
    for (struct job **pp = &s->jobs; *pp;) {
        struct job *j = *pp;
        if (j->state == JOB_DONE || j->state == JOB_FAILED) {
            if (++kept > KEEP_FINISHED) {
                *pp = j->next;
                job_free(j);
                continue;
            }
        }
        pp = &j->next;
    }
}

static void *worker(void *arg)
{
    struct ingest_service *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        struct job *pick = NULL;
        for (struct job *j = s->jobs; j; j = j->next)
            if (j->state == JOB_QUEUED) pick = j; /* oldest queued: the list is newest first */
        if (!pick) {
            if (s->stopping) break;
            pthread_cond_wait(&s->work, &s->mu);
            continue;
        }
        pick->state = JOB_RUNNING;
        pick->progress.phase = "parse";
        pthread_mutex_unlock(&s->mu);

        struct ingest_request req = { pick->name, pick->files, pick->nfiles, pick->tags };
        char run_id[CATALOG_ID_LEN + 1] = "";
        struct err e;
        err_clear(&e);
        int rc = ingest_run_shared(s->cat, s->cfg, &req, &pick->progress, &s->mu, run_id, &e);
        if (rc) LOG_WARN("job %d failed: %s", pick->id, e.msg);

        pthread_mutex_lock(&s->mu);
        pick->state = rc ? JOB_FAILED : JOB_DONE;
        pick->err = e;
        if (!rc) memcpy(pick->run_id, run_id, sizeof run_id);
        pick->ended = time(NULL);
        pick->progress.phase = rc ? "failed" : "done";
        if (!rc) pick->progress.bytes_done = pick->progress.bytes_total;
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int ingest_service_start(struct catalog *cat, const struct config *cfg, struct ingest_service **out, struct err *e)
{
    struct ingest_service *s = xcalloc(1, sizeof *s);
    char *tmp = xasprintf("%s/tmp", cfg->data_dir);

    /* Whatever is in tmp belonged to ingests that never committed, unless
     * another process on this data folder is ingesting right now. */
    struct err ignore;
    int lock;
    /* a read-only server writes nothing (uploads are refused before here) */
    int lrc = catalog_read_only(cat) ? -1 : fsutil_lock_data(cfg->data_dir, 1, &lock, &ignore);
    if (lrc == 0) {
        fsutil_rmtree(tmp, &ignore);
        fsutil_unlock(lock);
    } else if (lrc == 1) {
        LOG_INFO("an ingest is running on %s: tmp sweep skipped", cfg->data_dir);
    }
    if (!catalog_read_only(cat) && fsutil_mkdirs(tmp, e) != 0) LOG_WARN("%s (uploads will fail until fixed)", e->msg);
    free(tmp);
    s->cat = cat;
    s->cfg = cfg;
    s->next_id = 1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    s->nthreads = cfg->ingest_workers > 0 ? cfg->ingest_workers : 1;
    s->threads = xcalloc((size_t)s->nthreads, sizeof *s->threads);
    for (int i = 0; i < s->nthreads; i++) {
        if (pthread_create(&s->threads[i], NULL, worker, s) != 0) {
            s->nthreads = i;
            ingest_service_stop(s);
            return err_set(e, ERR_INTERNAL, "cannot start ingest threads");
        }
    }
    *out = s;
    return 0;
}

void ingest_service_stop(struct ingest_service *s)
{
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    /* queued jobs will not run: fail them so waiters wake up */
    for (struct job *j = s->jobs; j; j = j->next) {
        if (j->state == JOB_QUEUED) {
            j->state = JOB_FAILED;
            err_set(&j->err, ERR_INTERNAL, "the server is shutting down");
            for (int i = 0; i < j->nfiles; i++)
                if (j->files[i].owned) unlink(j->files[i].path);
        }
    }
    pthread_cond_broadcast(&s->work);
    pthread_cond_broadcast(&s->done);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->nthreads; i++) pthread_join(s->threads[i], NULL);
    while (s->jobs) {
        struct job *j = s->jobs;
        s->jobs = j->next;
        job_free(j);
    }
    free(s->threads);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    free(s);
}

int ingest_submit(struct ingest_service *s, const struct ingest_request *req, int *job_id, struct err *e)
{
    if (req->nfiles <= 0) return err_set(e, ERR_INVALID, "no trace file was given");
    struct job *j = xcalloc(1, sizeof *j);
    j->name = req->run_name && req->run_name[0] ? xstrdup(req->run_name) : NULL;
    j->nfiles = req->nfiles;
    j->files = xcalloc((size_t)req->nfiles, sizeof *j->files);
    for (int i = 0; i < req->nfiles; i++) {
        j->files[i].path = xstrdup(req->files[i].path);
        j->files[i].name = xstrdup(req->files[i].name);
        j->files[i].owned = req->files[i].owned;
    }
    if (req->tags) j->tags = json_incref(req->tags);
    j->progress.phase = "queued";
    pthread_mutex_lock(&s->mu);
    if (s->stopping) {
        pthread_mutex_unlock(&s->mu);
        job_free(j);
        return err_set(e, ERR_INTERNAL, "the server is shutting down");
    }
    j->id = s->next_id++;
    j->next = s->jobs;
    s->jobs = j;
    *job_id = j->id;
    prune(s);
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

static struct job *find_job(struct ingest_service *s, int id)
{
    for (struct job *j = s->jobs; j; j = j->next)
        if (j->id == id) return j;
    return NULL;
}

int ingest_wait(struct ingest_service *s, int job_id, char run_id[CATALOG_ID_LEN + 1], struct err *e)
{
    int rc;
    pthread_mutex_lock(&s->mu);
    struct job *j = find_job(s, job_id);
    while (j && (j->state == JOB_QUEUED || j->state == JOB_RUNNING)) {
        pthread_cond_wait(&s->done, &s->mu);
        j = find_job(s, job_id);
    }
    if (!j) rc = err_set(e, ERR_NOT_FOUND, "no ingest job %d", job_id);
    else if (j->state == JOB_FAILED) {
        *e = j->err;
        rc = j->err.code ? j->err.code : ERR_INTERNAL;
    } else {
        memcpy(run_id, j->run_id, CATALOG_ID_LEN + 1);
        rc = 0;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* Caller holds mu. */
static json_t *job_json(const struct job *j)
{
    json_t *o = json_pack("{s:i,s:s,s:s,s:I,s:I,s:I}", "id", j->id, "state", job_state_names[j->state], "phase",
                          j->progress.phase ? j->progress.phase : "queued", "bytes_done",
                          (json_int_t)j->progress.bytes_done, "bytes_total", (json_int_t)j->progress.bytes_total,
                          "events", (json_int_t)j->progress.events);
    json_object_set_new(o, "name", j->name ? json_string(j->name) : json_string(j->files[0].name));
    json_object_set_new(o, "files", json_integer(j->nfiles));
    if (j->state == JOB_DONE) {
        char url[64];
        snprintf(url, sizeof url, "./?run=%s", j->run_id);
        json_object_set_new(o, "run_id", json_string(j->run_id));
        json_object_set_new(o, "url", json_string(url));
    }
    if (j->state == JOB_FAILED)
        json_object_set_new(o, "error", json_pack("{s:s,s:s,s:i}", "code", err_code_name(j->err.code), "message",
                                                  j->err.msg, "status", err_http_status(j->err.code)));
    return o;
}

int ingest_job_json(struct ingest_service *s, int job_id, json_t **out, struct err *e)
{
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    struct job *j = find_job(s, job_id);
    if (j) *out = job_json(j);
    else rc = err_set(e, ERR_NOT_FOUND, "no ingest job %d (finished jobs are forgotten after a while)", job_id);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

json_t *ingest_jobs_json(struct ingest_service *s)
{
    json_t *arr = json_array();
    time_t now = time(NULL);
    pthread_mutex_lock(&s->mu);
    for (struct job *j = s->jobs; j; j = j->next) {
        if (j->state == JOB_DONE) continue;
        if (j->state == JOB_FAILED && now - j->ended > 3600) continue;
        json_array_append_new(arr, job_json(j));
    }
    pthread_mutex_unlock(&s->mu);
    return arr;
}

/* ====================================================================== */
/* Renumbering the ranks of a stored run                                  */
/* ====================================================================== */

/* Checks to[] is a valid numbering of distinct from[] (that from[] is
 * exactly the run's ranks is rundb_renumber_ranks's check). */
static int check_mapping(const int *from, const int *to, int n, struct err *e)
{
    for (int i = 0; i < n; i++) {
        if (to[i] < 0 || to[i] > 1000000) return err_set(e, ERR_INVALID, "rank %d is out of range 0..1000000", to[i]);
        for (int j = 0; j < i; j++) {
            if (to[i] == to[j]) return err_set(e, ERR_INVALID, "two files cannot both be rank %d", to[i]);
            if (from[i] == from[j]) return err_set(e, ERR_INVALID, "rank %d is listed twice", from[i]);
        }
    }
    return 0;
}

/* Links the kept sources of a run (src, named "<rank>-<file>") into the
 * empty folder dst under their new ranks; the files themselves are shared
 * with the old run, never changed. No src (keep_sources off) is fine. */
static int link_sources(const char *src, const char *dst, const int *from, const int *to, int n, struct err *e)
{
    DIR *d = opendir(src);
    struct dirent *de;
    int rc = 0;
    if (!d) return 0;
    if ((rc = fsutil_mkdirs(dst, e)) != 0) {
        closedir(d);
        return rc;
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        if (name[0] == '.') continue;
        char *end;
        long r = strtol(name, &end, 10);
        int k = -1;
        if (end != name && *end == '-')
            for (int i = 0; i < n; i++)
                if (from[i] == r) k = i;
        char *a = xasprintf("%s/%s", src, name);
        char *b = k < 0 ? xasprintf("%s/%s", dst, name) : xasprintf("%s/%d%s", dst, to[k], end);
        rc = fsutil_link_or_copy(a, b, e);
        free(a);
        free(b);
    }
    closedir(d);
    if (rc == 0) rc = fsutil_fsync_path(dst, e);
    return rc;
}

/* Marks run_id as being renumbered; ERR_CONFLICT when it already is. */
static int renumber_claim(struct ingest_service *s, const char *run_id, struct err *e)
{
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    for (struct renumbering *r = s->renumbering; r; r = r->next)
        if (strcmp(r->run_id, run_id) == 0)
            rc = err_set(e, ERR_CONFLICT, "the ranks of run %s are being renumbered: try again when that is done",
                         run_id);
    if (rc == 0) {
        struct renumbering *r = xcalloc(1, sizeof *r);
        snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
        r->next = s->renumbering;
        s->renumbering = r;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static void renumber_release(struct ingest_service *s, const char *run_id)
{
    pthread_mutex_lock(&s->mu);
    for (struct renumbering **pp = &s->renumbering; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->run_id, run_id) == 0) {
            struct renumbering *r = *pp;
            *pp = r->next;
            free(r);
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
}

/* Builds the renumbered run in tmp (a new empty folder): a copy of run.db
 * with the raw tables moved and the derived ones computed again, and src/
 * with the kept sources under their new names. */
static int renumber_build(struct ingest_service *s, const char *dir, const char *tmp, const int *from, const int *to,
                          int n, struct err *e)
{
    char *old_db = xasprintf("%s/run.db", dir), *new_db = xasprintf("%s/run.db", tmp);
    char *old_src = xasprintf("%s/src", dir), *new_src = xasprintf("%s/src", tmp);
    sqlite3 *db = NULL;
    int rc = rundb_copy(old_db, new_db, e);
    if (rc == 0) rc = open_rw(new_db, &db, e);
    /* the derived tables are computed again rather than renumbered: the
     * findings' texts name ranks and the straggler is judged across them */
    if (rc == 0) rc = rundb_renumber_ranks(db, from, to, n, e);
    if (rc == 0) rc = derive(db, &s->cfg->rules, e);
    /* everything into run.db itself: the swapped-in folder must not need
     * its -wal, which a reader of the old run could otherwise pair with it */
    if (rc == 0 && sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        rc = rundb_db_error(db, e, "run database (checkpoint)");
    if (db && sqlite3_close(db) != SQLITE_OK && rc == 0) rc = err_set(e, ERR_DB, "cannot close the run database");
    if (rc == 0) rc = fsutil_fsync_path(new_db, e);
    if (rc == 0) rc = link_sources(old_src, new_src, from, to, n, e);
    if (rc == 0) rc = fsutil_fsync_path(tmp, e);
    free(old_db);
    free(new_db);
    free(old_src);
    free(new_src);
    return rc;
}

int ingest_renumber(struct ingest_service *s, const char *run_id, const int *from, const int *to, int n,
                    struct err *e)
{
    json_t *run = NULL;
    char *dir = NULL, *tmp = NULL;
    int rc, lock = -1;

    if ((rc = catalog_get(s->cat, run_id, &run, e)) != 0) return rc;
    if ((rc = check_mapping(from, to, n, e)) != 0 || (rc = renumber_claim(s, run_id, e)) != 0) {
        json_decref(run);
        return rc;
    }
    /* the shared lock keeps other processes' start-up sweeps off our tmp
     * folder and off a swap in progress */
    if ((rc = fsutil_lock_data(s->cfg->data_dir, 0, &lock, e)) != 0) goto out;
    dir = catalog_run_dir(s->cat, run_id);
    tmp = xasprintf("%s/tmp/renumber-%s-XXXXXX", s->cfg->data_dir, run_id);
    if (!mkdtemp(tmp)) {
        int en = errno;
        rc = err_set(e, fsutil_errno_code(en), "cannot create a folder in %s/tmp: %s", s->cfg->data_dir, strerror(en));
        free(tmp);
        tmp = NULL;
        goto out;
    }
    if ((rc = renumber_build(s, dir, tmp, from, to, n, e)) != 0) goto out;
    fsutil_crash_point("renumber-built");
    size_t i;
    json_t *f, *files = json_object_get(run, "files");
    json_array_foreach(files, i, f) {
        json_int_t r = json_integer_value(json_object_get(f, "rank"));
        for (int k = 0; k < n; k++)
            if (from[k] == r) {
                json_object_set_new(f, "rank", json_integer(to[k]));
                break;
            }
    }
    /* after this tmp holds the old run (or, on failure, the unused new one) */
    rc = catalog_swap_run(s->cat, run_id, tmp, files, e);
    if (rc == 0) LOG_INFO("run %s: ranks renumbered", run_id);
out:
    if (tmp) {
        struct err ignore;
        if (fsutil_rmtree(tmp, &ignore) != 0) LOG_WARN("%s", ignore.msg);
    }
    fsutil_unlock(lock);
    renumber_release(s, run_id);
    json_decref(run);
    free(dir);
    free(tmp);
    return rc;
}

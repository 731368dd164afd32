#define LOG_MODULE "ingest"
#include "ingest/ingest_service.h"

#include <ctype.h>
#include <math.h>
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
#include "ingest/ingest.h"
#include "ingest/ingest_eta.h"
#include "ingest/importer.h"
#include "store/catalog_query.h"
#include "store/rundb.h"


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
    char *project, *hash;
    json_t *meta;
    int refuse_duplicate;
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
    pthread_t backfill; /* fills in the figures of older runs; joined at stop */
    int backfilling;
    struct ingest_eta eta; /* under mu */
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
    json_decref(j->meta);
    free(j->project);
    free(j->hash);
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
        struct ingest_labels labels = { pick->project, pick->meta, pick->hash, pick->refuse_duplicate };
        char run_id[CATALOG_ID_LEN + 1] = "";
        struct err e;
        err_clear(&e);
        int rc = ingest_run_mu(s->cat, s->cfg, &req, &labels, &pick->progress, &s->mu, run_id, &e);
        if (rc) LOG_WARN("job %d failed: %s", pick->id, e.msg);

        pthread_mutex_lock(&s->mu);
        pick->state = rc ? JOB_FAILED : JOB_DONE;
        pick->err = e;
        if (!rc) memcpy(pick->run_id, run_id, sizeof run_id);
        pick->ended = time(NULL);
        if (!rc) ingest_eta_learn(&s->eta, pick->progress.t_start, pick->progress.t_read, log_now_s());
        pick->progress.phase = rc ? "failed" : "done";
        if (!rc) pick->progress.bytes_done = pick->progress.bytes_total;
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Runs a crash left deriving (ingest.h): no ingest holds the data folder's
 * lock, so none is deriving them; they go, row and folder. */
static void remove_deriving(struct catalog *cat)
{
    json_t *runs = NULL, *r;
    size_t i;
    struct err e;
    if (catalog_list(cat, &runs, &e) != 0) {
        LOG_WARN("%s", e.msg);
        return;
    }
    json_array_foreach(runs, i, r) {
        const char *id = json_string_value(json_object_get(r, "id"));
        if (!id || !catalog_row_deriving(r)) continue;
        if (catalog_delete(cat, id, &e) == 0) LOG_WARN("run %s: removed, its import was cut off while deriving", id);
        else LOG_WARN("run %s: %s", id, e.msg);
    }
    json_decref(runs);
}

/* The content hash of a stored run from its kept sources ("" when none
 * were kept). */
static void sources_hash(const char *run_dir, char hex[65])
{
    char *src = xasprintf("%s/src", run_dir);
    DIR *d = opendir(src);
    struct dirent *de;
    char **paths = NULL;
    int n = 0;
    hex[0] = '\0';
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        paths = xrealloc(paths, sizeof *paths * (size_t)(n + 1));
        paths[n++] = xasprintf("%s/%s", src, de->d_name);
    }
    if (d) closedir(d);
    struct err e;
    if (n && ingest_hash_files((const char *const *)paths, n, hex, &e) != 0) hex[0] = '\0';
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
    free(src);
}

/* Fills in the figures, trace facts and hash of runs catalogued by a
 * version before the catalog kept them, one run at a time, oldest first,
 * until done or the service stops. A run whose figures cannot be computed
 * (damaged, or imported before the analysis tables) gets {} so it is not
 * tried at every start. */
static void *backfill_main(void *arg)
{
    struct ingest_service *s = arg;
    json_t *ids = NULL, *id;
    struct err e;
    size_t i;
    if (catalog_runs_without_facts(s->cat, &ids, &e) != 0) {
        LOG_WARN("backfill: %s", e.msg);
        return NULL;
    }
    if (json_array_size(ids)) LOG_INFO("computing the key figures of %zu older run(s)", json_array_size(ids));
    json_array_foreach(ids, i, id) {
        pthread_mutex_lock(&s->mu);
        int stop = s->stopping;
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        const char *rid = json_string_value(id);
        char *dir = catalog_run_dir(s->cat, rid), *db = xasprintf("%s/run.db", dir), hex[65];
        json_t *figures = NULL, *trace = NULL;
        if (ingest_catalog_facts(db, &figures, &trace, &e) != 0) {
            LOG_WARN("run %s: no key figures: %s", rid, e.msg);
            figures = json_object();
        }
        sources_hash(dir, hex);
        if (catalog_set_facts(s->cat, rid, figures, trace, hex, &e) != 0 && e.code != ERR_NOT_FOUND)
            LOG_WARN("run %s: %s", rid, e.msg);
        json_decref(figures);
        json_decref(trace);
        free(db);
        free(dir);
    }
    json_decref(ids);
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
        remove_deriving(cat);
        fsutil_unlock(lock);
    } else if (lrc == 1) {
        LOG_INFO("an ingest is running on %s: tmp sweep skipped", cfg->data_dir);
    }
    if (!catalog_read_only(cat) && fsutil_mkdirs(tmp, e) != 0) LOG_WARN("%s (uploads will fail until fixed)", e->msg);
    free(tmp);
    s->cat = cat;
    ingest_eta_init(&s->eta);
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
    if (!catalog_read_only(cat)) s->backfilling = pthread_create(&s->backfill, NULL, backfill_main, s) == 0;
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
    if (s->backfilling) pthread_join(s->backfill, NULL);
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
    return ingest_submit_labeled(s, req, NULL, job_id, e);
}

int ingest_submit_labeled(struct ingest_service *s, const struct ingest_request *req,
                          const struct ingest_labels *lb, int *job_id, struct err *e)
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
    if (lb && lb->meta) j->meta = json_deep_copy(lb->meta);
    if (lb && lb->project && lb->project[0]) j->project = xstrdup(lb->project);
    if (lb && lb->hash) j->hash = xstrdup(lb->hash);
    j->refuse_duplicate = lb && lb->refuse_duplicate;
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
static json_t *job_json(const struct ingest_service *s, const struct job *j)
{
    json_t *o = json_pack("{s:i,s:s,s:s,s:I,s:I,s:I}", "id", j->id, "state", job_state_names[j->state], "phase",
                          j->progress.phase ? j->progress.phase : "queued", "bytes_done",
                          (json_int_t)j->progress.bytes_done, "bytes_total", (json_int_t)j->progress.bytes_total,
                          "events", (json_int_t)j->progress.events);
    json_object_set_new(o, "name", j->name ? json_string(j->name) : json_string(j->files[0].name));
    json_object_set_new(o, "files", json_integer(j->nfiles));
    /* a running job's run is open once published, while it derives */
    const char *run = j->state == JOB_DONE ? j->run_id : j->state == JOB_RUNNING ? j->progress.run_id : "";
    if (run[0]) {
        char url[64];
        snprintf(url, sizeof url, "./?run=%s", run);
        json_object_set_new(o, "run_id", json_string(run));
        json_object_set_new(o, "url", json_string(url));
    }
    json_t *stages = json_array();
    double now = log_now_s();
    for (int i = 0; i < j->progress.nstages; i++) {
        const struct ingest_stage *st = &j->progress.stages[i];
        int done = st->done || j->state != JOB_RUNNING;
        json_array_append_new(stages, json_pack("{s:s,s:s,s:f}", "name", st->name, "state",
                                                st->done ? "done" : done ? "stopped" : "running", "seconds",
                                                round((st->done ? st->took : done ? 0.0 : now - st->t0) * 1000) / 1000));
    }
    json_object_set_new(o, "stages", stages);
    if (j->state == JOB_RUNNING) {
        const struct ingest_progress *p = &j->progress;
        double left = ingest_eta_left(&s->eta, p->t_start, p->t_read, p->bytes_done, p->bytes_total, now);
        json_object_set_new(o, "eta_s", left < 0 ? json_null() : json_real(round(left * 10) / 10));
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
    if (j) *out = job_json(s, j);
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
        json_array_append_new(arr, job_json(s, j));
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
                          int n, json_t **figures, json_t **trace, struct err *e)
{
    char *old_db = xasprintf("%s/run.db", dir), *new_db = xasprintf("%s/run.db", tmp);
    char *old_src = xasprintf("%s/src", dir), *new_src = xasprintf("%s/src", tmp);
    int rc = rundb_copy(old_db, new_db, e);
    if (rc == 0) rc = ingest_rederive_facts(new_db, from, to, n, &s->cfg->rules, figures, trace, e);
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
    json_t *run = NULL, *figures = NULL, *trace = NULL; /* the figures name ranks: computed again */
    char *dir = NULL, *tmp = NULL;
    int rc, lock = -1;

    if ((rc = catalog_get(s->cat, run_id, &run, e)) != 0) return rc;
    if (catalog_row_deriving(run)) {
        json_decref(run);
        return err_set(e, ERR_CONFLICT, "run %s is still being computed: change its ranks once it is ready", run_id);
    }
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
    if ((rc = renumber_build(s, dir, tmp, from, to, n, &figures, &trace, e)) != 0) goto out;
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
    struct err fe;
    /* after this tmp holds the old run (or, on failure, the unused new one) */
    rc = catalog_swap_run(s->cat, run_id, tmp, files, e);
    if (rc == 0) LOG_INFO("run %s: ranks renumbered", run_id);
    if (rc == 0 && figures && catalog_set_facts(s->cat, run_id, figures, trace, NULL, &fe) != 0)
        LOG_WARN("run %s: %s", run_id, fe.msg);
out:
    if (tmp) {
        struct err ignore;
        if (fsutil_rmtree(tmp, &ignore) != 0) LOG_WARN("%s", ignore.msg);
    }
    fsutil_unlock(lock);
    renumber_release(s, run_id);
    json_decref(figures);
    json_decref(trace);
    json_decref(run);
    free(dir);
    free(tmp);
    return rc;
}


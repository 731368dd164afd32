#define LOG_MODULE "cli"
#include "cli/cli.h"


#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "base/fsutil.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "cli/cli_logs.h"
#include "derive/analyses.h"
#include "derive/diff.h"
#include "derive/rules.h"
#include "derive/summary.h"
#include "derive/summary_report.h"
#include "ingest/ingest.h"
#include "ingest/ingest_naming.h"
#include "ingest/ingest_service.h"
#include "store/catalog.h"
#include "store/logstore.h"
#include "store/catalog_query.h"
#include "store/rundb.h"

/* ---------------------------------------------------------------------- */
/* finding traces                                                         */

/* What the first 64 KiB of a JSON file (gzip or not) say: whether it is a
 * Chrome trace (files from TraceLens, HTA or a job script are named freely,
 * `Qwen_..._1016005.json.gz`, and facts/config files beside them are not
 * traces), and the rank its distributedInfo names (Kineto writes it before
 * traceEvents), -1 if none. */
struct sniff {
    int trace, rank;
};

static struct sniff sniff_json(const char *path)
{
    enum { SNIFF = 64 * 1024 };
    struct sniff r = { 0, -1 };
    gzFile f = gzopen(path, "rb");
    if (!f) return r;
    char *buf = xmalloc(SNIFF + 1);
    int n = gzread(f, buf, SNIFF);
    gzclose(f);
    if (n > 0) {
        buf[n] = '\0';
        /* a NUL inside ends the search early: a binary file is no trace */
        r.trace = strstr(buf, "\"traceEvents\"") != NULL ||
                  (buf[strspn(buf, " \t\r\n")] == '[' && strstr(buf, "\"ph\"") != NULL);
        const char *di = strstr(buf, "\"distributedInfo\"");
        const char *rk = di ? strstr(di, "\"rank\"") : NULL;
        if (rk && rk - di < 1024) {
            rk += 6;
            rk += strspn(rk, " \t\r\n:");
            char *end;
            long v = strtol(rk, &end, 10);
            if (end != rk && v >= 0 && v < 1000000) r.rank = (int)v;
        }
    }
    free(buf);
    return r;
}

static int is_trace_file(const char *path, const char *n)
{
    size_t l = strlen(n);
    if (n[0] == '.') return 0;
    int json = (l > 5 && strcmp(n + l - 5, ".json") == 0) || (l > 8 && strcmp(n + l - 8, ".json.gz") == 0);
    /* Nsight Systems exports (nsys export --type sqlite) are named freely */
    int nsys = l > 7 && strcmp(n + l - 7, ".sqlite") == 0;
    return nsys || (json && (strstr(n, "trace") != NULL || sniff_json(path).trace));
}

/* 1 when the files of one folder are the ranks of one job: each names a
 * rank (in distributedInfo, else in its file name) and no two the same.
 * Otherwise they are separate runs side by side: the TensorBoard plugin's
 * samples keep worker0.pt.trace.json.gz of two captures in one folder. */
static int one_job(char **files, int nf)
{
    int *ranks = xcalloc((size_t)nf, sizeof *ranks), ok = 1;
    for (int i = 0; i < nf && ok; i++) {
        const char *b = strrchr(files[i], '/');
        ranks[i] = sniff_json(files[i]).rank;
        if (ranks[i] < 0) ranks[i] = ingest_naming_rank(b ? b + 1 : files[i]);
        ok = ranks[i] >= 0;
        for (int j = 0; j < i && ok; j++) ok = ranks[j] != ranks[i];
    }
    free(ranks);
    return ok;
}

static void add_group(struct cli_groups *out, char *name, char **files, int nf)
{
    out->g = xrealloc(out->g, sizeof *out->g * (size_t)(out->n + 1));
    out->g[out->n].name = name;
    out->g[out->n].paths = files;
    out->g[out->n].n = nf;
    out->n++;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects run groups under dir (depth-limited): files directly in a folder
 * form one run named after the folder (relative to the root). */
void cli_scan_dir(const char *dir, const char *rel, int depth, struct cli_groups *out)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **files = NULL, **subs = NULL;
    int nf = 0, ns = 0;
    if (!d) return;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        char *p = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st) != 0) {
            free(p);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            subs = xrealloc(subs, sizeof *subs * (size_t)(ns + 1));
            subs[ns++] = xstrdup(de->d_name);
        } else if (S_ISREG(st.st_mode) && is_trace_file(p, de->d_name)) {
            files = xrealloc(files, sizeof *files * (size_t)(nf + 1));
            files[nf++] = xstrdup(p);
        }
        free(p);
    }
    closedir(d);
    /* A JAX profile folder holds the same events twice: perfetto_trace.json.gz
     * and <host>.trace.json.gz. Two files there are not two ranks. */
    int perfetto = -1;
    for (int i = 0; i < nf; i++) {
        const char *b = strrchr(files[i], '/');
        if (strcmp(b ? b + 1 : files[i], "perfetto_trace.json.gz") == 0) perfetto = i;
    }
    if (perfetto >= 0 && nf > 1) {
        for (int i = 0; i < nf; i++)
            if (i != perfetto) free(files[i]);
        files[0] = files[perfetto];
        nf = 1;
    }
    if (nf) {
        xqsort(files, (size_t)nf, sizeof *files, cmp_str);
        char *dn = xstrdup(dir);
        size_t dl = strlen(dn);
        while (dl > 1 && dn[dl - 1] == '/') dn[--dl] = '\0';
        const char *base = strrchr(dn, '/');
        const char *gname = rel[0] ? rel : base ? base + 1 : dn;
        if (nf == 1 || one_job(files, nf)) {
            add_group(out, xstrdup(gname), files, nf);
        } else {
            for (int i = 0; i < nf; i++) {
                char **one = xmalloc(sizeof *one);
                const char *b = strrchr(files[i], '/');
                one[0] = files[i];
                add_group(out, xasprintf("%s/%s", gname, b ? b + 1 : files[i]), one, 1);
            }
            free(files);
        }
        free(dn);
    } else {
        free(files);
    }
    if (ns) xqsort(subs, (size_t)ns, sizeof *subs, cmp_str); /* xqsort(NULL, 0) is undefined */
    for (int i = 0; i < ns; i++) {
        if (depth < 4) {
            char *p = xasprintf("%s/%s", dir, subs[i]);
            char *r = rel[0] ? xasprintf("%s/%s", rel, subs[i]) : xstrdup(subs[i]);
            cli_scan_dir(p, r, depth + 1, out);
            free(p);
            free(r);
        }
        free(subs[i]);
    }
    free(subs);
}

void cli_groups_free(struct cli_groups *gs)
{
    for (int i = 0; i < gs->n; i++) {
        for (int j = 0; j < gs->g[i].n; j++) free(gs->g[i].paths[j]);
        free(gs->g[i].paths);
        free(gs->g[i].name);
    }
    free(gs->g);
    gs->g = NULL;
    gs->n = 0;
}

int cli_import_group(struct catalog *cat, const struct config *cfg, const struct cli_group *g, int use_name,
                        char run_id[CATALOG_ID_LEN + 1], struct err *e)
{
    struct ingest_file *files = xcalloc((size_t)g->n, sizeof *files);
    for (int i = 0; i < g->n; i++) {
        files[i].path = g->paths[i];
        files[i].name = g->paths[i];
        files[i].owned = 0;
    }
    struct ingest_request req = { use_name ? g->name : NULL, files, g->n, NULL };
    int rc = ingest_run(cat, cfg, &req, NULL, run_id, e);
    free(files);
    return rc;
}

/* The folder of a group's first file (owned by caller). */
static char *group_dir(const struct cli_group *g)
{
    const char *slash = strrchr(g->paths[0], '/');
    return slash ? xstrndup(g->paths[0], (size_t)(slash - g->paths[0])) : xstrdup(".");
}

/* The job's logs of a run just imported: --log files, and for a folder the
 * *.log / *.jsonl files beside its traces. */
static int attach_logs(struct logstore *ls, const char *id, const struct cli_group *g, int folder, char **logs,
                       int nlogs)
{
    int failed = 0;
    struct err e;
    for (int j = 0; j < nlogs; j++) {
        long n = cli_logs_attach_file(ls, id, logs[j], &e);
        if (n < 0) {
            fprintf(stderr, "traceboard import: %s\n", e.msg);
            failed++;
        } else {
            printf("  %ld log lines from %s\n", n, logs[j]);
        }
    }
    if (folder) {
        char *dir = group_dir(g);
        int k = cli_logs_attach_dir(ls, id, dir);
        if (k) printf("  logs of %d file%s beside the traces\n", k, k == 1 ? "" : "s");
        free(dir);
    }
    return failed;
}

int cli_import(const struct config *cfg, char **paths, int npaths, const struct cli_labels *lb)
{
    struct catalog *cat;
    struct logstore *ls;
    struct err e;
    int failed = 0;

    if (npaths == 0) {
        fprintf(stderr, "traceboard import: give trace files or folders to import\n");
        return 2;
    }
    if (catalog_open(cfg->data_dir, &cat, &e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        return 1;
    }
    if (logstore_open(cfg->data_dir, catalog_read_only(cat) != NULL, &ls, &e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        catalog_close(cat);
        return 1;
    }
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        struct cli_groups gs = { 0 };
        if (stat(paths[i], &st) != 0) {
            fprintf(stderr, "traceboard import: %s: %s\n", paths[i], strerror(errno));
            failed++;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            cli_scan_dir(paths[i], "", 0, &gs);
            if (!gs.n) {
                fprintf(stderr, "traceboard import: %s: no trace files (*.json[.gz] holding traceEvents, *.sqlite) found\n", paths[i]);
                failed++;
            }
        } else {
            gs.g = xcalloc(1, sizeof *gs.g);
            gs.g[0].name = xstrdup(paths[i]);
            gs.g[0].paths = xcalloc(1, sizeof(char *));
            gs.g[0].paths[0] = xstrdup(paths[i]);
            gs.g[0].n = 1;
            gs.n = 1;
        }
        for (int k = 0; k < gs.n; k++) {
            char id[CATALOG_ID_LEN + 1];
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            struct ingest_file *files = xcalloc((size_t)gs.g[k].n, sizeof *files);
            for (int j = 0; j < gs.g[k].n; j++) files[j].path = files[j].name = gs.g[k].paths[j];
            struct ingest_request req = { S_ISDIR(st.st_mode) ? gs.g[k].name : NULL, files, gs.g[k].n, NULL };
            int refuse = !(lb && lb->duplicate) && !cfg->allow_duplicates;
            struct ingest_labels labels = { lb ? lb->project : NULL, lb ? lb->meta : NULL, NULL, refuse };
            int rc = ingest_run_mu(cat, cfg, &req, &labels, NULL, NULL, id, &e);
            free(files);
            if (rc == ERR_CONFLICT && refuse) { /* not a failure: the run is there */
                printf("skipped %s: %s (--duplicate imports them again)\n", gs.g[k].name, e.msg);
                continue;
            }
            if (rc != 0) {
                fprintf(stderr, "traceboard import: %s\n", e.msg);
                failed++;
                continue;
            }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            printf("imported %s as run %s (%d file%s) in %.2f s\n", gs.g[k].name, id, gs.g[k].n,
                   gs.g[k].n == 1 ? "" : "s", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
            failed += attach_logs(ls, id, &gs.g[k], S_ISDIR(st.st_mode), lb ? lb->logs : NULL, lb ? lb->nlogs : 0);
        }
        cli_groups_free(&gs);
    }
    logstore_close(ls);
    catalog_close(cat);
    return failed ? 1 : 0;
}

void cli_import_demo(struct catalog *cat, const struct config *cfg, const char *dir)
{
    json_t *runs = NULL;
    struct err e;
    struct cli_groups gs = { 0 };

    if (catalog_read_only(cat)) {
        LOG_WARN("demo runs not imported: %s", catalog_read_only(cat));
        return;
    }
    if (catalog_list(cat, &runs, &e) != 0) return;
    size_t have = json_array_size(runs);
    json_decref(runs);
    if (have) return;
    cli_scan_dir(dir, "", 0, &gs);
    for (int k = 0; k < gs.n; k++) {
        char id[CATALOG_ID_LEN + 1];
        if (cli_import_group(cat, cfg, &gs.g[k], 1, id, &e) != 0) LOG_WARN("demo %s: %s", gs.g[k].name, e.msg);
        else LOG_INFO("demo run %s imported as %s", gs.g[k].name, id);
    }
    cli_groups_free(&gs);
}

void cli_print_url(const struct app *app, int port)
{
    const char *host = app->cfg.bind;
    int v6 = strchr(host, ':') != NULL;
    if (strcmp(host, "0.0.0.0") == 0) host = "127.0.0.1";
    printf("traceboard is serving %s on %s:%d\n", app->cfg.data_dir, app->cfg.bind, port);
    if (app->token[0])
        printf("open: http://%s%s%s:%d%s/?token=%s\n", v6 ? "[" : "", host, v6 ? "]" : "", port, app->cfg.base_path,
               app->token);
    else
        printf("open: http://%s%s%s:%d%s/  (no token: --no-auth)\n", v6 ? "[" : "", host, v6 ? "]" : "", port,
               app->cfg.base_path);
    printf("from your laptop: ssh -L %d:localhost:%d <this host>, then open the URL above\n", port, port);
    fflush(stdout);
}

/* ---------------------------------------------------------------------- */
/* --logdir watcher                                                       */

struct cli_logdir {
    struct app *app;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
};

/* The project of a run found in the logdir: the name of the folder right
 * under it that holds the file (a job's folder may nest its captures);
 * NULL for files directly in the logdir, or a folder name that is no
 * project name. Owned by caller. */
static char *logdir_project(const char *logdir, const char *path)
{
    size_t n = strlen(logdir);
    while (n > 1 && logdir[n - 1] == '/') n--;
    if (strncmp(path, logdir, n) != 0 || path[n] != '/') return NULL;
    const char *rel = path + n + 1, *slash = strchr(rel, '/');
    if (!slash) return NULL;
    char *p = xstrndup(rel, (size_t)(slash - rel));
    struct err e;
    if (catalog_project_check(p, &e) != 0) {
        LOG_WARN("logdir: folder '%s' is filed under no project: %s", p, e.msg);
        free(p);
        return NULL;
    }
    return p;
}

/* A group is ready when every file is unchanged for a few seconds (a
 * profiler may still be writing it) and at least one is new. */
static void logdir_scan(struct cli_logdir *ld)
{
    struct cli_groups gs = { 0 };
    struct app *app = ld->app;
    time_t now = time(NULL);

    cli_scan_dir(app->cfg.logdir, "", 0, &gs);
    for (int k = 0; k < gs.n; k++) {
        struct cli_group *g = &gs.g[k];
        int fresh = 0, settled = 1;
        for (int j = 0; j < g->n; j++) {
            struct stat st;
            if (stat(g->paths[j], &st) != 0) {
                settled = 0;
                break;
            }
            if (now - st.st_mtime < 3) settled = 0;
            if (!catalog_logdir_seen(app->cat, g->paths[j], st.st_size, st.st_mtime)) fresh = 1;
        }
        if (!fresh || !settled) continue;
        struct ingest_file *files = xcalloc((size_t)g->n, sizeof *files);
        for (int j = 0; j < g->n; j++) {
            files[j].path = g->paths[j];
            files[j].name = g->paths[j];
        }
        struct ingest_request req = { g->name, files, g->n, NULL };
        struct err e;
        int job;
        char id[CATALOG_ID_LEN + 1] = "", *project = logdir_project(app->cfg.logdir, g->paths[0]);
        struct ingest_labels labels = { project, NULL, NULL, !app->cfg.allow_duplicates };
        int rc = ingest_submit_labeled(app->ing, &req, &labels, &job, &e);
        if (rc == 0) rc = ingest_wait(app->ing, job, id, &e);
        if (rc == ERR_CONFLICT) LOG_INFO("logdir: %s not imported: %s", g->name, e.msg);
        else if (rc != 0) LOG_WARN("logdir %s: %s", g->name, e.msg);
        else {
            LOG_INFO("logdir: imported %s as run %s", g->name, id);
            char *dir = group_dir(g);
            cli_logs_attach_dir(app->logs, id, dir);
            free(dir);
        }
        free(project);
        for (int j = 0; j < g->n; j++) {
            struct stat st;
            if (stat(g->paths[j], &st) == 0) catalog_logdir_mark(app->cat, g->paths[j], st.st_size, st.st_mtime, id, &e);
        }
        free(files);
    }
    cli_groups_free(&gs);
}

static void *logdir_main(void *arg)
{
    struct cli_logdir *ld = arg;
    pthread_mutex_lock(&ld->mu);
    while (!ld->stop) {
        pthread_mutex_unlock(&ld->mu);
        logdir_scan(ld);
        pthread_mutex_lock(&ld->mu);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += ld->app->cfg.logdir_interval > 0 ? ld->app->cfg.logdir_interval : 10;
        while (!ld->stop && pthread_cond_timedwait(&ld->cv, &ld->mu, &until) == 0) {
        }
    }
    pthread_mutex_unlock(&ld->mu);
    return NULL;
}

struct cli_logdir *cli_logdir_start(struct app *app)
{
    if (catalog_read_only(app->cat)) {
        LOG_WARN("not watching %s: %s", app->cfg.logdir, catalog_read_only(app->cat));
        return NULL;
    }
    struct cli_logdir *ld = xcalloc(1, sizeof *ld);
    ld->app = app;
    pthread_mutex_init(&ld->mu, NULL);
    pthread_cond_init(&ld->cv, NULL);
    if (pthread_create(&ld->th, NULL, logdir_main, ld) != 0) {
        LOG_ERROR("cannot start the logdir watcher");
        free(ld);
        return NULL;
    }
    LOG_INFO("watching %s for new traces every %d s", app->cfg.logdir, app->cfg.logdir_interval);
    return ld;
}

void cli_logdir_stop(struct cli_logdir *ld)
{
    if (!ld) return;
    pthread_mutex_lock(&ld->mu);
    ld->stop = 1;
    pthread_cond_signal(&ld->cv);
    pthread_mutex_unlock(&ld->mu);
    pthread_join(ld->th, NULL);
    pthread_mutex_destroy(&ld->mu);
    pthread_cond_destroy(&ld->cv);
    free(ld);
}


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

#include "base/fsutil.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/analyses.h"
#include "derive/diff.h"
#include "derive/rules.h"
#include "derive/summary.h"
#include "derive/summary_report.h"
#include "ingest/ingest.h"
#include "store/catalog.h"
#include "store/rundb.h"

/* ---------------------------------------------------------------------- */
/* finding traces                                                         */

static int is_trace_name(const char *n)
{
    size_t l = strlen(n);
    if (n[0] == '.') return 0;
    int json = (l > 5 && strcmp(n + l - 5, ".json") == 0) || (l > 8 && strcmp(n + l - 8, ".json.gz") == 0);
    /* Nsight Systems exports (nsys export --type sqlite) are named freely */
    int nsys = l > 7 && strcmp(n + l - 7, ".sqlite") == 0;
    return (json && strstr(n, "trace") != NULL) || nsys;
}

struct group {
    char *name;   /* run name */
    char **paths;
    int n;
};

struct groups {
    struct group *g;
    int n;
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects run groups under dir (depth-limited): files directly in a folder
 * form one run named after the folder (relative to the root). */
static void scan_dir(const char *dir, const char *rel, int depth, struct groups *out)
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
        } else if (S_ISREG(st.st_mode) && is_trace_name(de->d_name)) {
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
        out->g = xrealloc(out->g, sizeof *out->g * (size_t)(out->n + 1));
        char *dn = xstrdup(dir);
        size_t dl = strlen(dn);
        while (dl > 1 && dn[dl - 1] == '/') dn[--dl] = '\0';
        const char *base = strrchr(dn, '/');
        out->g[out->n].name = xstrdup(rel[0] ? rel : base ? base + 1 : dn);
        free(dn);
        out->g[out->n].paths = files;
        out->g[out->n].n = nf;
        out->n++;
    } else {
        free(files);
    }
    if (ns) xqsort(subs, (size_t)ns, sizeof *subs, cmp_str); /* xqsort(NULL, 0) is undefined */
    for (int i = 0; i < ns; i++) {
        if (depth < 4) {
            char *p = xasprintf("%s/%s", dir, subs[i]);
            char *r = rel[0] ? xasprintf("%s/%s", rel, subs[i]) : xstrdup(subs[i]);
            scan_dir(p, r, depth + 1, out);
            free(p);
            free(r);
        }
        free(subs[i]);
    }
    free(subs);
}

static void groups_free(struct groups *gs)
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

static int import_group(struct catalog *cat, const struct config *cfg, const struct group *g, int use_name,
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

int cli_import(const struct config *cfg, char **paths, int npaths)
{
    struct catalog *cat;
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
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        struct groups gs = { 0 };
        if (stat(paths[i], &st) != 0) {
            fprintf(stderr, "traceboard import: %s: %s\n", paths[i], strerror(errno));
            failed++;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            scan_dir(paths[i], "", 0, &gs);
            if (!gs.n) {
                fprintf(stderr, "traceboard import: %s: no trace files (*trace*.json[.gz], *.sqlite) found\n", paths[i]);
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
            if (import_group(cat, cfg, &gs.g[k], S_ISDIR(st.st_mode), id, &e) != 0) {
                fprintf(stderr, "traceboard import: %s\n", e.msg);
                failed++;
                continue;
            }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            printf("imported %s as run %s (%d file%s) in %.2f s\n", gs.g[k].name, id, gs.g[k].n,
                   gs.g[k].n == 1 ? "" : "s", (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
        }
        groups_free(&gs);
    }
    catalog_close(cat);
    return failed ? 1 : 0;
}

void cli_import_demo(struct catalog *cat, const struct config *cfg, const char *dir)
{
    json_t *runs = NULL;
    struct err e;
    struct groups gs = { 0 };

    if (catalog_read_only(cat)) {
        LOG_WARN("demo runs not imported: %s", catalog_read_only(cat));
        return;
    }
    if (catalog_list(cat, &runs, &e) != 0) return;
    size_t have = json_array_size(runs);
    json_decref(runs);
    if (have) return;
    scan_dir(dir, "", 0, &gs);
    for (int k = 0; k < gs.n; k++) {
        char id[CATALOG_ID_LEN + 1];
        if (import_group(cat, cfg, &gs.g[k], 1, id, &e) != 0) LOG_WARN("demo %s: %s", gs.g[k].name, e.msg);
        else LOG_INFO("demo run %s imported as %s", gs.g[k].name, id);
    }
    groups_free(&gs);
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
/* analyze                                                                */

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static void print_pct(FILE *f, json_t *v)
{
    if (json_is_number(v)) fprintf(f, "%6.1f %%", json_number_value(v) * 100.0);
    else fprintf(f, "     n/a");
}

/* Names longer than w are cut with an ellipsis so the columns stay put. */
static void print_name(FILE *f, const char *s, int w)
{
    int n = (int)strlen(s);
    if (n <= w) fprintf(f, "%-*s", w, s);
    else fprintf(f, "%.*s...", w - 3, s);
}

/* The deeper analyses of a rank in a few lines (the JSON has them all). */
static void print_analyses(FILE *f, json_t *an)
{
    if (!json_is_object(an)) return;
    fprintf(f, "\nanalyses\n");
    json_t *it = json_object_get(json_object_get(an, "idle"), "totals"), *by = json_object_get(it, "host_wait_by");
    double idle = num(it, "idle_ns");
    if (idle > 0)
        fprintf(f,
                "GPU idle in steps %.3f ms: host wait %.1f %% (launching %.3f, sync %.3f, DataLoader %.3f, "
                "collectives %.3f, unrecorded %.3f ms), kernel wait %.1f %%, other %.1f %%\n",
                idle / 1e6, num(it, "host_wait_ns") / idle * 100, num(by, "launching_ns") / 1e6,
                num(by, "sync_ns") / 1e6, num(by, "dataloader_ns") / 1e6, num(by, "comm_ns") / 1e6,
                num(by, "none_ns") / 1e6, num(it, "kernel_wait_ns") / idle * 100, num(it, "other_ns") / idle * 100);
    json_t *l = json_object_get(an, "launch");
    if (num(l, "count") > 0)
        fprintf(f,
                "launches %.0f: call p50 %.1f us, launch delay p50 %.1f us / p95 %.1f us; %.0f %% of kernels "
                "shorter than their launch call; outliers: %.0f slow calls, %.0f long delays\n",
                num(l, "count"), num(json_object_get(l, "cpu_ns"), "p50") / 1e3,
                num(json_object_get(l, "delay_ns"), "p50") / 1e3, num(json_object_get(l, "delay_ns"), "p95") / 1e3,
                num(l, "short_share") * 100, num(l, "runtime_outliers"), num(l, "delay_outliers"));
    size_t i;
    json_t *v;
    /* the busiest streams; side streams that never queue more than one op are counted, not listed */
    size_t quiet = 0;
    json_array_foreach(json_object_get(json_object_get(an, "queue"), "streams"), i, v) {
        if (num(v, "max") <= 1 && num(v, "at_limit_ns") <= 0) {
            quiet++;
            continue;
        }
        fprintf(f, "queue depth %-12s max %.0f, mean %.1f, at the 1024 limit %.3f ms\n",
                json_string_value(json_object_get(v, "name")) ? json_string_value(json_object_get(v, "name")) : "?",
                num(v, "max"), num(v, "mean"), num(v, "at_limit_ns") / 1e6);
    }
    if (quiet) fprintf(f, "queue depth: %zu more stream(s) never held more than one op\n", quiet);
    json_array_foreach(json_object_get(json_object_get(an, "copy"), "kinds"), i, v) {
        /* pinned or pageable matters for host copies only */
        const char *kind = json_string_value(json_object_get(v, "kind"));
        json_t *pin = kind && (!strcmp(kind, "HtoD") || !strcmp(kind, "DtoH")) ? json_object_get(v, "pinned") : NULL;
        fprintf(f, "copies %-6s %-8s %6.0f x, %10.3f MB at %8.2f GB/s", kind ? kind : "?",
                json_is_true(pin) ? "pinned" : json_is_false(pin) ? "pageable" : "", num(v, "count"),
                num(v, "bytes") / 1e6, num(v, "gbps"));
        if (json_is_number(json_object_get(v, "share_of_peak")))
            fprintf(f, " (%.0f %% of %.0f GB/s)", num(v, "share_of_peak") * 100, num(v, "peak_gbps"));
        fprintf(f, "\n");
    }
    json_t *cp = json_object_get(an, "critical_path"), *sh = json_object_get(cp, "shares");
    if (json_object_size(sh)) {
        fprintf(f, "critical path:");
        const char *k;
        json_object_foreach(sh, k, v) fprintf(f, " %s %.0f %%", k, json_number_value(v) * 100);
        fprintf(f, " (bound by %s)\n", json_string_value(json_object_get(cp, "bound_by"))
                                            ? json_string_value(json_object_get(cp, "bound_by"))
                                            : "?");
    }
    json_array_foreach(json_object_get(json_object_get(an, "fusion"), "items"), i, v) {
        if (i == 3) break;
        json_t *ops = json_object_get(v, "ops");
        fprintf(f, "fusion candidate: %s%s x%.0f, %.0f kernels per call, saving ~%.3f ms\n",
                json_string_value(json_array_get(ops, 0)) ? json_string_value(json_array_get(ops, 0)) : "?",
                json_array_size(ops) > 1 ? " -> ..." : "", num(v, "count"), num(v, "kernels_per_call"),
                num(v, "saving_ns") / 1e6);
    }
}

static void print_report(FILE *f, json_t *rep)
{
    json_t *run = json_object_get(rep, "run"), *rk;
    size_t i;
    fprintf(f, "run %s: %lld rank(s)\n", json_string_value(json_object_get(run, "name")),
            (long long)json_integer_value(json_object_get(run, "ranks")));
    json_array_foreach(json_object_get(rep, "ranks"), i, rk) {
        json_t *dev = json_object_get(rk, "device");
        fprintf(f, "\n== rank %lld", (long long)json_integer_value(json_object_get(rk, "rank")));
        if (json_is_object(dev) && json_is_string(json_object_get(dev, "name")))
            fprintf(f, ": %s, %.1f GiB, compute capability %s\n", json_string_value(json_object_get(dev, "name")),
                    num(dev, "memory_bytes") / (1024.0 * 1024 * 1024),
                    json_is_string(json_object_get(dev, "compute_capability"))
                        ? json_string_value(json_object_get(dev, "compute_capability"))
                        : "unknown");
        else if (json_is_object(dev))
            fprintf(f, ": GPU (the trace does not describe it)\n"); /* JAX/TF traces carry no device properties */
        else fprintf(f, ": no GPU activity\n");
        fprintf(f, "GPU utilization ");
        print_pct(f, json_object_get(rk, "gpu_utilization"));
        fprintf(f, "   est. SM efficiency ");
        print_pct(f, json_object_get(rk, "sm_efficiency"));
        fprintf(f, "   est. achieved occupancy ");
        print_pct(f, json_object_get(rk, "achieved_occupancy"));
        fprintf(f, "   tensor-core share of kernel time ");
        print_pct(f, json_object_get(rk, "tensor_core_share"));
        fprintf(f, "\n");
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(rk, "peak_memory_bytes"), k, v)
            fprintf(f, "peak memory allocated on GPU %s: %.1f MiB\n", k, json_number_value(v) / (1024.0 * 1024));

        fprintf(f, "\nstep time breakdown (ms)\n%-18s %9s", "step", "total");
        for (int c = 0; c < 8; c++) fprintf(f, " %9.9s", summary_categories[c]);
        fprintf(f, "\n");
        json_t *st;
        size_t j;
        json_array_foreach(json_object_get(rk, "steps"), j, st) {
            json_t *bd = json_object_get(st, "breakdown_us");
            print_name(f, json_string_value(json_object_get(st, "name")), 18);
            fprintf(f, " %9.3f", num(st, "dur_us") / 1000.0);
            for (int c = 0; c < 8; c++) fprintf(f, " %9.3f", num(bd, summary_categories[c]) / 1000.0);
            fprintf(f, "\n");
        }
        json_t *avg = json_object_get(rk, "average"), *abd = json_object_get(avg, "breakdown_us");
        double ad = num(avg, "dur_us");
        fprintf(f, "%-18s %9.3f", "average", ad / 1000.0);
        for (int c = 0; c < 8; c++) fprintf(f, " %9.3f", num(abd, summary_categories[c]) / 1000.0);
        fprintf(f, "\n%-18s %9s", "share", "");
        for (int c = 0; c < 8; c++)
            fprintf(f, " %8.1f%%", ad > 0 ? num(abd, summary_categories[c]) / ad * 100.0 : 0.0);
        fprintf(f, "\n");

        fprintf(f, "\ntop kernels%62s %8s %12s  TC\n", "", "calls", "total ms");
        json_array_foreach(json_object_get(rk, "top_kernels"), j, st) {
            print_name(f, json_string_value(json_object_get(st, "name")), 73);
            fprintf(f, " %8lld %12.3f  %s\n", (long long)json_integer_value(json_object_get(st, "calls")),
                    num(st, "total_us") / 1000.0, json_is_true(json_object_get(st, "tensor_cores")) ? "yes" : "-");
        }
        fprintf(f, "\ntop operators%48s %8s %12s %12s\n", "", "calls", "device ms", "host self ms");
        json_array_foreach(json_object_get(rk, "top_operators"), j, st) {
            print_name(f, json_string_value(json_object_get(st, "name")), 61);
            fprintf(f, " %8lld %12.3f %12.3f\n", (long long)json_integer_value(json_object_get(st, "calls")),
                    num(st, "device_self_us") / 1000.0, num(st, "host_self_us") / 1000.0);
        }
        print_analyses(f, json_object_get(rk, "analyses"));
        json_array_foreach(json_object_get(rk, "notes"), j, st) fprintf(f, "note: %s\n", json_string_value(st));
    }
    json_t *recs = json_object_get(rep, "recommendations");
    fprintf(f, "\nrecommendations: %s\n", json_array_size(recs) ? "" : "none");
    json_array_foreach(recs, i, rk) {
        json_t *rank = json_object_get(rk, "rank"), *line;
        size_t j;
        fprintf(f, "\n[%s] %s (%s", json_string_value(json_object_get(rk, "severity")),
                json_string_value(json_object_get(rk, "title")), json_string_value(json_object_get(rk, "id")));
        if (json_is_integer(rank)) fprintf(f, ", rank %lld", (long long)json_integer_value(rank));
        if (num(rk, "saving_us") > 0) fprintf(f, ", could save ~%.3f ms/step", num(rk, "saving_us") / 1000.0);
        fprintf(f, ")\n");
        json_array_foreach(json_object_get(json_object_get(rk, "evidence"), "lines"), j, line)
            fprintf(f, "  - %s\n", json_string_value(line));
        fprintf(f, "  advice: %s\n", json_string_value(json_object_get(rk, "advice")));
        const char *snip = json_string_value(json_object_get(rk, "snippet"));
        if (snip) {
            fprintf(f, "    ");
            for (const char *p = snip; *p; p++) {
                fputc(*p, f);
                if (*p == '\n') fprintf(f, "    ");
            }
            fputc('\n', f);
        }
        fprintf(f, "  docs: %s\n", json_string_value(json_object_get(rk, "doc_url")));
    }
}

/* Reads the report of a run database; run_name NULL: from the catalog row
 * when there is none (a stored run folder given directly). */
static int report_db(const char *db_path, const char *run_name, json_t **out, struct err *e)
{
    sqlite3 *db;
    if (rundb_open_ro(db_path, &db, e) != 0) return e->code;
    int rc = summary_report(db, run_name, 10, out, e);
    json_t *recs = NULL;
    if (rc == 0 && (rc = rules_findings(db, -1, &recs, e)) == 0) json_object_set_new(*out, "recommendations", recs);
    json_t *an = NULL;
    if (rc == 0 && (rc = analyses_read(db, -1, &an, e)) == 0 && an) {
        /* each rank's deeper analyses beside its figures */
        size_t i;
        json_t *rk;
        json_array_foreach(json_object_get(*out, "ranks"), i, rk) {
            char key[16];
            snprintf(key, sizeof key, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(rk, "rank")));
            json_t *doc = json_object_get(an, key);
            if (doc) json_object_set(rk, "analyses", doc);
        }
        json_decref(an);
    }
    if (rc) {
        json_decref(*out);
        *out = NULL;
    }
    sqlite3_close(db);
    return rc;
}

int cli_analyze(const struct config *cfg, int argc, char **argv, char **paths, int npaths)
{
    struct config tmp = *cfg;
    char dir[] = "/tmp/traceboard-analyze-XXXXXX";
    int json = 0, rc = 0;
    struct catalog *cat = NULL;
    struct err e;
    json_t *rep = NULL;
    struct group g = { "analyze", NULL, 0 };
    struct groups gs = { 0 };
    char *name = NULL;

    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--json") == 0) json = 1;
    /* stdout is the report; the ingest's own info lines would only clutter stderr */
    if (strcmp(cfg->log_level, "info") == 0) log_set_level(LOG_LEVEL_WARN);
    if (npaths == 0) {
        fprintf(stderr, "traceboard analyze: give a trace, several rank files, or a folder\n");
        return 2;
    }
    /* A stored run (DATA/runs/<id>/) is read as it is. */
    if (npaths == 1) {
        char *dbp = xasprintf("%s/run.db", paths[0]);
        if (access(dbp, R_OK) == 0) {
            rc = report_db(dbp, paths[0], &rep, &e);
            free(dbp);
            if (rc) {
                fprintf(stderr, "traceboard analyze: %s\n", e.msg);
                return 1;
            }
            goto print;
        }
        free(dbp);
    }
    if (!mkdtemp(dir)) {
        fprintf(stderr, "traceboard analyze: cannot create a temporary folder: %s\n", strerror(errno));
        return 1;
    }
    snprintf(tmp.data_dir, sizeof tmp.data_dir, "%s", dir);
    tmp.keep_sources = 0;
    if (catalog_open(dir, &cat, &e) != 0) {
        fprintf(stderr, "traceboard analyze: %s\n", e.msg);
        rc = 1;
        goto out;
    }
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            fprintf(stderr, "traceboard analyze: %s: %s\n", paths[i], strerror(errno));
            rc = 1;
            goto out;
        }
        if (S_ISDIR(st.st_mode)) scan_dir(paths[i], "", 0, &gs);
        else {
            g.paths = xrealloc(g.paths, sizeof *g.paths * (size_t)(g.n + 1));
            g.paths[g.n++] = xstrdup(paths[i]);
        }
    }
    for (int k = 0; k < gs.n; k++)
        for (int j = 0; j < gs.g[k].n; j++) {
            g.paths = xrealloc(g.paths, sizeof *g.paths * (size_t)(g.n + 1));
            g.paths[g.n++] = xstrdup(gs.g[k].paths[j]);
        }
    if (g.n == 0) {
        fprintf(stderr, "traceboard analyze: no trace files found\n");
        rc = 1;
        goto out;
    }
    char id[CATALOG_ID_LEN + 1];
    if (import_group(cat, &tmp, &g, 0, id, &e) != 0) {
        fprintf(stderr, "traceboard analyze: %s\n", e.msg);
        rc = 1;
        goto out;
    }
    {
        json_t *run = NULL;
        if (catalog_get(cat, id, &run, &e) == 0)
            name = xstrdup(json_string_value(json_object_get(run, "name")));
        json_decref(run);
        char *dbp = xasprintf("%s/runs/%s/run.db", dir, id);
        rc = report_db(dbp, name, &rep, &e);
        free(dbp);
        if (rc) {
            fprintf(stderr, "traceboard analyze: %s\n", e.msg);
            rc = 1;
            goto out;
        }
    }
print:
    if (json) {
        json_dumpf(rep, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
        printf("\n");
    } else {
        print_report(stdout, rep);
    }
out:
    json_decref(rep);
    free(name);
    for (int j = 0; j < g.n; j++) free(g.paths[j]);
    free(g.paths);
    groups_free(&gs);
    if (cat) {
        catalog_close(cat);
        struct err ignore;
        fsutil_rmtree(dir, &ignore);
    }
    return rc;
}

/* ---------------------------------------------------------------------- */
/* diff                                                                   */

/* Resolves one `diff` input to a run database: a stored run folder
 * (DATA/runs/<id>) is read in place; trace files or folders are imported
 * into *cat, a temporary catalog under dir (opened on first need).
 * OUT *db_path: owned by caller. */
static int diff_input(const struct config *cfg, char *dir, struct catalog **cat, const char *path, char **db_path,
                      struct err *e)
{
    struct config tmp = *cfg;
    struct group g = { "diff", NULL, 0 };
    struct groups gs = { 0 };
    struct stat st;
    char id[CATALOG_ID_LEN + 1];
    int rc = 0;

    *db_path = xasprintf("%s/run.db", path);
    if (access(*db_path, R_OK) == 0) return 0;
    free(*db_path);
    *db_path = NULL;
    if (stat(path, &st) != 0) return err_set(e, ERR_NOT_FOUND, "%s: %s", path, strerror(errno));
    if (!*cat) {
        if (!mkdtemp(dir)) return err_set(e, ERR_IO, "cannot create a temporary folder: %s", strerror(errno));
        if (catalog_open(dir, cat, e) != 0) return e->code;
    }
    snprintf(tmp.data_dir, sizeof tmp.data_dir, "%s", dir);
    tmp.keep_sources = 0;
    if (S_ISDIR(st.st_mode)) {
        scan_dir(path, "", 0, &gs);
        for (int k = 0; k < gs.n; k++)
            for (int j = 0; j < gs.g[k].n; j++) {
                g.paths = xrealloc(g.paths, sizeof *g.paths * (size_t)(g.n + 1));
                g.paths[g.n++] = xstrdup(gs.g[k].paths[j]);
            }
    } else {
        g.paths = xcalloc(1, sizeof *g.paths);
        g.paths[g.n++] = xstrdup(path);
    }
    if (g.n == 0) rc = err_set(e, ERR_NOT_FOUND, "%s: no trace files found", path);
    else if ((rc = import_group(*cat, &tmp, &g, 0, id, e)) != 0) err_prefix(e, "%s", path);
    else *db_path = xasprintf("%s/runs/%s/run.db", dir, id);
    for (int j = 0; j < g.n; j++) free(g.paths[j]);
    free(g.paths);
    groups_free(&gs);
    return rc;
}

static void print_ms_delta(FILE *f, const char *label, json_t *a, json_t *b)
{
    fprintf(f, "  %-16s %10.3f %10.3f %+10.3f\n", label, json_number_value(a) / 1000.0,
            json_number_value(b) / 1000.0, (json_number_value(b) - json_number_value(a)) / 1000.0);
}

static void print_diff_side(FILE *f, const char *label, const char *path, json_t *s)
{
    json_t *dev = json_object_get(s, "device");
    fprintf(f, "%s: %s (rank %lld, %lld steps, %s)\n", label, path, (long long)json_integer_value(json_object_get(s, "rank")),
            (long long)json_integer_value(json_object_get(s, "steps")),
            json_is_object(dev) ? json_string_value(json_object_get(dev, "name")) : "no GPU activity");
}

static void print_diff_rows(FILE *f, const char *title, json_t *rows)
{
    json_t *r;
    size_t i;
    fprintf(f, "\n%s (ms per step)\n  %-8s %10s %10s %10s  %s\n", title, "status", "A", "B", "delta", "name");
    json_array_foreach(rows, i, r) {
        const char *name = json_string_value(json_object_get(r, "name"));
        fprintf(f, "  %-8s", json_string_value(json_object_get(r, "status")));
        for (int k = 0; k < 2; k++) {
            json_t *v = json_object_get(r, k ? "b_us" : "a_us");
            if (json_is_number(v)) fprintf(f, " %10.3f", json_number_value(v) / 1000.0);
            else fprintf(f, " %10s", "-");
        }
        fprintf(f, " %+10.3f  ", num(r, "delta_us") / 1000.0);
        if (strlen(name) <= 80) fprintf(f, "%s\n", name);
        else fprintf(f, "%.77s...\n", name);
    }
}

static void print_diff(FILE *f, json_t *rep, const char *pa, const char *pb)
{
    json_t *a = json_object_get(rep, "a"), *b = json_object_get(rep, "b"), *sp = json_object_get(rep, "speedup");
    json_t *aa = json_object_get(a, "average"), *ba = json_object_get(b, "average");
    static const char *const parts[] = { "kernels", "kernel_families", "operators" };

    print_diff_side(f, "A", pa, a);
    print_diff_side(f, "B", pb, b);
    fprintf(f, "\naverage step: %.3f ms -> %.3f ms (%+.3f ms)", num(aa, "dur_us") / 1000.0, num(ba, "dur_us") / 1000.0,
            (num(ba, "dur_us") - num(aa, "dur_us")) / 1000.0);
    if (json_is_number(sp)) fprintf(f, ", speedup %.2fx (B vs A)\n", json_number_value(sp));
    else fprintf(f, ", speedup n/a\n");
    fprintf(f, "\nstep breakdown (ms per step)\n  %-16s %10s %10s %10s\n", "category", "A", "B", "delta");
    for (int c = 0; c < 8; c++)
        print_ms_delta(f, summary_categories[c], json_object_get(json_object_get(aa, "breakdown_us"), summary_categories[c]),
                       json_object_get(json_object_get(ba, "breakdown_us"), summary_categories[c]));
    print_ms_delta(f, "total", json_object_get(aa, "dur_us"), json_object_get(ba, "dur_us"));
    fprintf(f, "\n");
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        json_t *c = json_object_get(rep, parts[i]);
        fprintf(f, "%s: %lld added, %lld removed, %lld faster, %lld slower, %lld same\n", parts[i],
                (long long)json_integer_value(json_object_get(c, "added")),
                (long long)json_integer_value(json_object_get(c, "removed")),
                (long long)json_integer_value(json_object_get(c, "faster")),
                (long long)json_integer_value(json_object_get(c, "slower")),
                (long long)json_integer_value(json_object_get(c, "same")));
    }
    print_diff_rows(f, "top changed kernel families", json_object_get(rep, "top_kernel_families"));
    print_diff_rows(f, "top changed kernels", json_object_get(rep, "top_kernels"));
    print_diff_rows(f, "top changed operators", json_object_get(rep, "top_operators"));
}

int cli_diff(const struct config *cfg, int argc, char **argv, char **paths, int npaths)
{
    char dir[] = "/tmp/traceboard-diff-XXXXXX";
    struct catalog *cat = NULL;
    struct diff *d = NULL;
    char *db[2] = { NULL, NULL };
    json_t *rep = NULL;
    struct err e;
    int json = 0, rc = 1;

    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--json") == 0) json = 1;
    if (strcmp(cfg->log_level, "info") == 0) log_set_level(LOG_LEVEL_WARN);
    if (npaths != 2) {
        fprintf(stderr, "traceboard diff: give two runs: A B (trace files, folders of rank files, or stored run "
                        "folders)\n");
        return 2;
    }
    for (int s = 0; s < 2; s++)
        if (diff_input(cfg, dir, &cat, paths[s], &db[s], &e) != 0) goto fail;
    if (diff_open(db[0], -1, db[1], -1, &d, &e) != 0 || diff_report(d, 10, &rep, &e) != 0) goto fail;
    json_object_set_new(json_object_get(rep, "a"), "path", json_string(paths[0]));
    json_object_set_new(json_object_get(rep, "b"), "path", json_string(paths[1]));
    if (json) {
        json_dumpf(rep, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
        printf("\n");
    } else {
        print_diff(stdout, rep, paths[0], paths[1]);
    }
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "traceboard diff: %s\n", e.msg);
out:
    json_decref(rep);
    diff_close(d);
    free(db[0]);
    free(db[1]);
    if (cat) {
        catalog_close(cat);
        struct err ignore;
        fsutil_rmtree(dir, &ignore);
    }
    return rc;
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

/* A group is ready when every file is unchanged for a few seconds (a
 * profiler may still be writing it) and at least one is new. */
static void logdir_scan(struct cli_logdir *ld)
{
    struct groups gs = { 0 };
    struct app *app = ld->app;
    time_t now = time(NULL);

    scan_dir(app->cfg.logdir, "", 0, &gs);
    for (int k = 0; k < gs.n; k++) {
        struct group *g = &gs.g[k];
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
        char id[CATALOG_ID_LEN + 1] = "";
        if (ingest_submit(app->ing, &req, &job, &e) != 0 || ingest_wait(app->ing, job, id, &e) != 0)
            LOG_WARN("logdir %s: %s", g->name, e.msg);
        else LOG_INFO("logdir: imported %s as run %s", g->name, id);
        for (int j = 0; j < g->n; j++) {
            struct stat st;
            if (stat(g->paths[j], &st) == 0) catalog_logdir_mark(app->cat, g->paths[j], st.st_size, st.st_mtime, id, &e);
        }
        free(files);
    }
    groups_free(&gs);
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

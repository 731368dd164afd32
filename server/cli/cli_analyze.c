#define LOG_MODULE "cli"
#include "cli/cli_analyze.h"

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
#include "cli/cli.h"
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

/* Imports group g into cat (named after it when use_name) and reads its report. */
static int analyze_group(struct catalog *cat, const struct config *cfg, const struct cli_group *g, int use_name, json_t **rep,
                         struct err *e)
{
    char id[CATALOG_ID_LEN + 1];
    json_t *run = NULL;
    char *name = NULL;
    if (cli_import_group(cat, cfg, g, use_name, id, e) != 0) return e->code;
    if (catalog_get(cat, id, &run, e) == 0) name = xstrdup(json_string_value(json_object_get(run, "name")));
    json_decref(run);
    char *dbp = xasprintf("%s/runs/%s/run.db", cfg->data_dir, id);
    int rc = report_db(dbp, name, rep, e);
    free(dbp);
    free(name);
    return rc;
}

/* Adds a copy of path to g. */
static void group_add(struct cli_group *g, const char *path)
{
    g->paths = xrealloc(g->paths, sizeof *g->paths * (size_t)(g->n + 1));
    g->paths[g->n++] = xstrdup(path);
}

int cli_analyze(const struct config *cfg, int argc, char **argv, char **paths, int npaths)
{
    struct config tmp = *cfg;
    char dir[] = "/tmp/traceboard-analyze-XXXXXX";
    int json = 0, rc = 0;
    struct catalog *cat = NULL;
    struct err e;
    json_t *rep = NULL;
    struct cli_groups gs = { 0 };  /* the runs to analyze: the files given, then each folder's runs */

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
    /* Files given by name are the ranks of one run; a folder holds one run
     * per sub-folder of trace files, and each is analyzed on its own. */
    gs.g = xcalloc(1, sizeof *gs.g);
    gs.g[0].name = xstrdup("analyze");
    gs.n = 1;
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            fprintf(stderr, "traceboard analyze: %s: %s\n", paths[i], strerror(errno));
            rc = 1;
            goto out;
        }
        if (S_ISDIR(st.st_mode)) cli_scan_dir(paths[i], "", 0, &gs);
        else group_add(&gs.g[0], paths[i]);
    }
    int first = gs.g[0].n ? 0 : 1, nruns = gs.n - first;
    if (nruns == 0) {
        fprintf(stderr, "traceboard analyze: no trace files found\n");
        rc = 1;
        goto out;
    }
    if (nruns > 1) {
        fprintf(stderr, "traceboard analyze: %d runs found; each is analyzed on its own:", nruns);
        for (int k = first; k < gs.n; k++)
            fprintf(stderr, " %s (%d file%s)%s", k == 0 ? "the files given" : gs.g[k].name, gs.g[k].n,
                    gs.g[k].n == 1 ? "" : "s", k + 1 < gs.n ? "," : "\n");
    }
    if (!mkdtemp(dir)) {
        fprintf(stderr, "traceboard analyze: cannot create a temporary folder: %s\n", strerror(errno));
        rc = 1;
        goto out;
    }
    snprintf(tmp.data_dir, sizeof tmp.data_dir, "%s", dir);
    tmp.keep_sources = 0;
    if (catalog_open(dir, &cat, &e) != 0) {
        fprintf(stderr, "traceboard analyze: %s\n", e.msg);
        rc = 1;
        goto out;
    }
    if (nruns > 1) rep = json_pack("{s:[]}", "runs");
    for (int k = first; k < gs.n; k++) {
        json_t *one = NULL;
        if (analyze_group(cat, &tmp, &gs.g[k], nruns > 1 && k > 0, &one, &e) != 0) {
            fprintf(stderr, "traceboard analyze: %s\n", e.msg);
            rc = 1;
            goto out;
        }
        if (nruns > 1) json_array_append_new(json_object_get(rep, "runs"), one);
        else rep = one;
    }
print:
    if (json) {
        /* 16 significant digits: µs timestamps since the epoch keep their
         * ns (4487348861234.567), and ratios print without binary noise */
        json_dumpf(rep, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(16));
        printf("\n");
    } else if (json_object_get(rep, "runs")) {
        size_t i;
        json_t *one;
        json_array_foreach(json_object_get(rep, "runs"), i, one) {
            if (i) printf("\n");
            print_report(stdout, one);
        }
    } else {
        print_report(stdout, rep);
    }
out:
    json_decref(rep);
    cli_groups_free(&gs);
    if (cat) {
        catalog_close(cat);
        struct err ignore;
        fsutil_rmtree(dir, &ignore);
    }
    return rc;
}

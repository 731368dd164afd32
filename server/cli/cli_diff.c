#define LOG_MODULE "cli"
#include "cli/cli_diff.h"

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

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
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
    struct cli_group g = { "diff", NULL, 0 };
    struct cli_groups gs = { 0 };
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
        cli_scan_dir(path, "", 0, &gs);
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
    else if ((rc = cli_import_group(*cat, &tmp, &g, 0, id, e)) != 0) err_prefix(e, "%s", path);
    else *db_path = xasprintf("%s/runs/%s/run.db", dir, id);
    for (int j = 0; j < g.n; j++) free(g.paths[j]);
    free(g.paths);
    cli_groups_free(&gs);
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
        json_dumpf(rep, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(16)); /* as analyze --json */
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


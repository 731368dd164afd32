/* traceboard — entry point: parse the command line, load the config, open
 * the store, run one command (serve, import, analyze, diff). Every other function
 * lives in a module that tests can call. */
#define LOG_MODULE "main"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "base/log.h"
#include "base/version.h"
#include "base/xmalloc.h"
#include "cli/cli.h"
#include "cli/cli_analyze.h"
#include "cli/cli_diff.h"
#include "derive/rules.h"
#include "http/app.h"
#include "http/http.h"
#include "ingest/ingest.h"
#include "ingest/ingest_service.h"
#include "store/catalog.h"
#include "store/rundb.h"
#include "store/logstore.h"
#include "store/catalog_query.h"


static void usage(FILE *out)
{
    fprintf(out,
            "traceboard " TRACEBOARD_VERSION " — a dashboard for deep-learning profiler traces\n\n"
            "usage:\n"
            "  traceboard serve   [options]            start the web server\n"
            "  traceboard import  [options] PATH...    import trace files or folders as runs\n"
            "                     [--log FILE]...      with the job's log (also *.log/*.jsonl beside a folder's traces)\n"
            "        --project P, --meta KEY=VALUE (repeatable), --duplicate (import files stored already)\n"
            "  traceboard diff    [--json] A B         compare two runs (trace files, folders or data/runs/<id>)\n"
            "  traceboard --help | --version\n\n"
            "serve options (also settable in the config file):\n"
            "  --config FILE      settings file (default config/traceboard.conf when present)\n"
            "  --demo DIR         import the demo traces in DIR when the catalog is empty\n"
            "  --no-auth          serve without a token (only on a machine you do not share)\n"
            "  --KEY VALUE        any config key, '_' written as '-':\n\n");
    config_write_help(out);
}

/* Parses --key value / --key=value pairs into cfg; collects positional args.
 * Returns 0 or 2 (usage error, message printed). */
static int parse_args(int argc, char **argv, int first, struct config *cfg, const char **config_path,
                      const char **demo, struct cli_labels *lb, char ***pos, int *npos)
{
    struct err e;
    *pos = xcalloc((size_t)argc + 1, sizeof **pos);
    *npos = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            (*pos)[(*npos)++] = argv[i];
            continue;
        }
        char key[128];
        const char *val = NULL;
        const char *eq = strchr(a + 2, '=');
        size_t kn = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (kn >= sizeof key) kn = sizeof key - 1;
        memcpy(key, a + 2, kn);
        key[kn] = '\0';
        for (char *c = key; *c; c++)
            if (*c == '-') *c = '_';
        if (lb && strcmp(key, "duplicate") == 0) {
            lb->duplicate = 1;
            continue;
        }
        if (strcmp(key, "no_auth") == 0 || strcmp(key, "json") == 0) {
            if (strcmp(key, "no_auth") == 0) cfg->no_auth = 1;
            continue;
        }
        if (eq) val = eq + 1;
        else if (i + 1 < argc) val = argv[++i];
        else {
            fprintf(stderr, "traceboard: option --%s needs a value\n", a + 2);
            return 2;
        }
        if (lb && strcmp(key, "project") == 0) {
            if (catalog_project_check(val, &e) != 0) {
                fprintf(stderr, "traceboard: --project: %s\n", e.msg);
                return 2;
            }
            lb->project = val;
        } else if (lb && strcmp(key, "meta") == 0) {
            const char *kv = strchr(val, '=');
            char *k = kv ? xstrndup(val, (size_t)(kv - val)) : NULL;
            int bad = !k || catalog_meta_add(lb->meta, k, kv + 1, &e) != 0;
            if (bad) fprintf(stderr, "traceboard: --meta %s: %s\n", val, k ? e.msg : "expected KEY=VALUE");
            free(k);
            if (bad) return 2;
        } else if (strcmp(key, "config") == 0) *config_path = val;
        else if (strcmp(key, "demo") == 0) *demo = val;
        else if (lb && strcmp(key, "log") == 0) lb->logs[lb->nlogs++] = (char *)val; /* a job log file */
        else if (config_set(cfg, key, val, &e) != 0) {
            fprintf(stderr, "traceboard: %s\n", e.msg);
            return 2;
        }
    }
    return 0;
}

static void make_token(char *out, size_t cap)
{
    unsigned char b[24];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        fprintf(stderr, "traceboard: no randomness for the token\n");
        exit(1);
    }
    for (size_t i = 0; i < sizeof b && 2 * i + 2 < cap; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static int cmd_serve(struct app *app, const char *demo)
{
    struct err e;
    struct http_server *srv = NULL;
    sigset_t set;
    int sig;

    if (catalog_open(app->cfg.data_dir, &app->cat, &e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        return 1;
    }
    if (logstore_open(app->cfg.data_dir, catalog_read_only(app->cat) != NULL, &app->logs, &e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        catalog_close(app->cat);
        return 1;
    }
    if (demo) cli_import_demo(app->cat, &app->cfg, demo);
    if (ingest_service_start(app->cat, &app->cfg, &app->ing, &e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        logstore_close(app->logs);
        catalog_close(app->cat);
        return 1;
    }
    if (!app->cfg.no_auth) {
        if (app->cfg.token[0]) snprintf(app->token, sizeof app->token, "%s", app->cfg.token);
        else make_token(app->token, sizeof app->token);
    }
    /* Signals are taken synchronously below; block them before threads start. */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (http_start(app, &srv, &e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        ingest_service_stop(app->ing);
        logstore_close(app->logs);
        catalog_close(app->cat);
        return 1;
    }
    cli_print_url(app, http_port(srv));
    struct cli_logdir *ld = NULL;
    if (app->cfg.logdir[0]) ld = cli_logdir_start(app);
    sigwait(&set, &sig);
    LOG_INFO("signal %d: stopping", sig);
    cli_logdir_stop(ld);
    http_stop(srv);
    ingest_service_stop(app->ing);
    logstore_close(app->logs);
    catalog_close(app->cat);
    return 0;
}

int main(int argc, char **argv)
{
    struct app app;
    struct err e;
    const char *config_path = NULL, *demo = NULL;
    char **pos = NULL;
    int npos = 0, rc;

    if (rundb_process_init(&e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        return 1;
    }
    /* The rules declare their thresholds; the config learns them before
     * --help lists the keys and before any is read or set. */
    if (rules_config_register(&e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        return 1;
    }
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("traceboard %s\n", TRACEBOARD_VERSION);
        return 0;
    }
    /* Other users share login nodes: everything we create is ours only. */
    umask(077);
    memset(&app, 0, sizeof app);
    config_defaults(&app.cfg);
    /* the file first, so flags override it: find --config before the rest */
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) config_path = argv[i + 1];
        else if (strncmp(argv[i], "--config=", 9) == 0) config_path = argv[i] + 9;
    }
    if (config_path) {
        if (config_load_file(&app.cfg, config_path, &e) != 0) {
            fprintf(stderr, "traceboard: %s\n", e.msg);
            return 2;
        }
    } else if (access("config/traceboard.conf", R_OK) == 0 &&
               config_load_file(&app.cfg, "config/traceboard.conf", &e) != 0) {
        fprintf(stderr, "traceboard: %s\n", e.msg);
        return 2;
    }
    struct cli_labels labels = { NULL, json_object(), 0, NULL, 0 };
    int import = strcmp(argv[1], "import") == 0;
    labels.logs = xcalloc((size_t)argc + 1, sizeof *labels.logs);
    if ((rc = parse_args(argc, argv, 2, &app.cfg, &config_path, &demo, import ? &labels : NULL, &pos, &npos)) != 0) {
        free(pos);
        free(labels.logs);
        json_decref(labels.meta);
        return rc;
    }
    int lvl = log_level_parse(app.cfg.log_level);
    log_set_level(lvl < 0 ? LOG_LEVEL_INFO : (enum log_level)lvl);

    if (strcmp(argv[1], "serve") == 0) rc = cmd_serve(&app, demo);
    else if (import) rc = cli_import(&app.cfg, pos, npos, &labels);
    else if (strcmp(argv[1], "analyze") == 0) rc = cli_analyze(&app.cfg, argc, argv, pos, npos);
    else if (strcmp(argv[1], "diff") == 0) rc = cli_diff(&app.cfg, argc, argv, pos, npos);
    else {
        fprintf(stderr, "traceboard: unknown command '%s' (try --help)\n", argv[1]);
        rc = 2;
    }
    free(pos);
    free(labels.logs);
    json_decref(labels.meta);
    return rc;
}

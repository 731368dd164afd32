/*
 * cli.h — the command-line side of traceboard: `import` (and the trace
 * discovery `analyze` and `diff` share, cli_analyze.h, cli_diff.h), the
 * demo import at `serve --demo`, the start-up URL line, and the --logdir
 * watcher thread (TensorBoard's habit: new traces and new folders of rank
 * files in a folder become runs as they appear).
 *
 * A folder given to import is one run when it holds trace files directly
 * (one per rank); its sub-folders are searched the same way. Trace files are
 * *.json / *.json.gz whose name contains "trace" (facts.json, configs and
 * the like are skipped); a JSON file named otherwise counts when its first
 * 64 KiB hold "traceEvents".
 *
 * User-facing output (the URL, import summaries) goes to stdout; these
 * functions return process exit codes where they are commands.
 */
#ifndef TB_CLI_H
#define TB_CLI_H

#include "base/err.h"
#include "http/app.h"
#include "store/catalog.h"

/* What `import` files its runs under (borrowed): --project P, --meta K=V
 * (repeatable, checked by the caller), --duplicate (import files that are
 * stored already; otherwise they are skipped, naming the run they are),
 * --log FILE (repeatable: a job log for every run imported). */
struct cli_labels {
    const char *project;
    json_t *meta;
    int duplicate;
    char **logs;
    int nlogs;
};

/* `traceboard import [options] PATH...`: returns 0 when every path (and
 * log) imported. lb may be NULL. The logs attach to every run imported; a
 * folder's *.log / *.jsonl files attach to its run (cli_logs.h). */
int cli_import(const struct config *cfg, char **paths, int npaths, const struct cli_labels *lb);

/* Imports every run folder under dir when the catalog has no runs yet (and
 * is not read-only). */
void cli_import_demo(struct catalog *cat, const struct config *cfg, const char *dir);

/* Prints the start line with the URL (and token) to open. */
void cli_print_url(const struct app *app, int port);

/* Starts the logdir watcher thread (NULL when it cannot start, or when the
 * catalog is read-only: importing would write). */
struct cli_logdir;
struct cli_logdir *cli_logdir_start(struct app *app);
void cli_logdir_stop(struct cli_logdir *ld);

/* Trace files of one run (one per rank) found by cli_scan_dir. */
struct cli_group {
    char *name;   /* run name */
    char **paths;
    int n;
};

struct cli_groups {
    struct cli_group *g;
    int n;
};

/* Collects run groups under dir (depth-limited; rel "" at the top): files
 * directly in a folder form one run named after the folder. OUT: appended
 * to *out (owned by it, cli_groups_free). */
void cli_scan_dir(const char *dir, const char *rel, int depth, struct cli_groups *out);

/* Frees what gs owns and empties it. */
void cli_groups_free(struct cli_groups *gs);

/* Imports group g as one run (named after it when use_name). */
int cli_import_group(struct catalog *cat, const struct config *cfg, const struct cli_group *g, int use_name,
                     char run_id[CATALOG_ID_LEN + 1], struct err *e);

#endif

/*
 * cli.h — the command-line side of traceboard: `import`, `analyze`, the
 * demo import at `serve --demo`, the start-up URL line, and the --logdir
 * watcher thread (TensorBoard's habit: new traces and new folders of rank
 * files in a folder become runs as they appear).
 *
 * A folder given to import is one run when it holds trace files directly
 * (one per rank); its sub-folders are searched the same way. Trace files are
 * *.json / *.json.gz whose name contains "trace" (facts.json, configs and
 * the like are skipped).
 *
 * User-facing output (the URL, import summaries) goes to stdout; these
 * functions return process exit codes where they are commands.
 */
#ifndef TB_CLI_H
#define TB_CLI_H

#include "http/app.h"

/* `traceboard import PATH...`: returns 0 when every path imported. */
int cli_import(const struct config *cfg, char **paths, int npaths);

/* `traceboard analyze [--json] PATH...` (see README). */
int cli_analyze(const struct config *cfg, int argc, char **argv, char **paths, int npaths);

/* `traceboard diff [--json] A B` (see README): A and B are trace files,
 * folders of rank files or stored run folders; prints the comparison of
 * their lowest ranks. Returns 0, 1 (unreadable input), 2 (usage). */
int cli_diff(const struct config *cfg, int argc, char **argv, char **paths, int npaths);

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

#endif

/*
 * cli_diff.h — `traceboard diff`: two inputs (trace files, folders of rank
 * files or stored run folders), imported into a scratch data folder when
 * they are not stored runs, their lowest ranks compared (diff_open,
 * diff_report) and printed as tables or, with --json, as JSON. Runs on the
 * main thread; the scratch folder is removed before it returns.
 */
#ifndef TB_CLI_DIFF_H
#define TB_CLI_DIFF_H

#include "base/config.h"

/* `traceboard diff [--json] A B` (see README, Usage): A and B are trace files,
 * folders of rank files or stored run folders; prints the comparison of
 * their lowest ranks. Returns 0, 1 (unreadable input), 2 (usage). */
int cli_diff(const struct config *cfg, int argc, char **argv, char **paths, int npaths);

#endif

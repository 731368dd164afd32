/*
 * cli_analyze.h — `traceboard analyze`: the paths given (trace files, rank
 * files, folders of them) are imported together as one run into a scratch
 * data folder, or a stored run folder (DATA/runs/<id>/) is read as it is;
 * then summary_report's JSON, with the rules' recommendations and the
 * analyses added, is printed as tables or, with --json, as JSON. Runs on
 * the main thread; the scratch folder is removed before it returns.
 */
#ifndef TB_CLI_ANALYZE_H
#define TB_CLI_ANALYZE_H

#include "base/config.h"

/* `traceboard analyze [--json] PATH...` (see README, Usage). */
int cli_analyze(const struct config *cfg, int argc, char **argv, char **paths, int npaths);

#endif

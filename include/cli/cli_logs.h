/*
 * cli_logs.h — job log files attached to runs from the command line:
 * `traceboard import --log FILE` and the *.log / *.jsonl files found
 * beside a run's trace files (an imported folder, a --logdir folder).
 *
 * A file is read once, whole (at most CLI_LOGS_FILE_MAX bytes), parsed by
 * logparse.h and stored as the run's lines (logstore.h). A file named like
 * a rank file ("rank3.log", "worker_3.jsonl") gives its lines that rank
 * unless a line says its own; others are the whole job's. A file the
 * parser refuses is reported and skipped: the run stays imported.
 *
 * Stateless; any thread (the logstore is thread-safe). Messages go to the
 * log; returned counts are for the caller's summary line.
 */
#ifndef TB_CLI_LOGS_H
#define TB_CLI_LOGS_H

#include "base/err.h"
#include "store/logstore.h"

#define CLI_LOGS_FILE_MAX ((long long)256 << 20)

/* Stores the lines of the log file at path as run's. Returns the lines
 * stored, or <0 with e set. */
long cli_logs_attach_file(struct logstore *ls, const char *run, const char *path, struct err *e);

/* Attaches every *.log and *.jsonl file directly in dir to run. Returns
 * the number of files attached. */
int cli_logs_attach_dir(struct logstore *ls, const char *run, const char *dir);

#endif

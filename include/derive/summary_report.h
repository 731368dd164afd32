/*
 * summary_report.h — the report `traceboard analyze --json` prints, read
 * back from the derived tables summary_run wrote (step, gpu, op_stat,
 * kernel_stat, analysis) with fixed statements. It holds no state; the
 * returned JSON is owned by the caller. Any thread with its own read
 * handle may call it.
 */
#ifndef TB_SUMMARY_REPORT_H
#define TB_SUMMARY_REPORT_H

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* The report `traceboard analyze --json` prints, read from the tables:
 * {run:{name, ranks}, ranks:[{rank, device, gpus, steps, average,
 * gpu_utilization, sm_efficiency, achieved_occupancy, tensor_core_share,
 * peak_memory_bytes, notes, top_kernels, top_operators}], recommendations}.
 * Rank-level GPU figures are those of the rank's busiest device.
 * ERR_INVALID when db has no analysis tables. OUT *out: owned by caller. */
int summary_report(sqlite3 *db, const char *run_name, int top_n, json_t **out, struct err *e);

#endif

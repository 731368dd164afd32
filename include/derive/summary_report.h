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

/* What the catalog keeps of a run (issue 20), from the same tables and the
 * findings. OUT *figures: {avg_step_us, breakdown_us (the slowest rank's:
 * it sets a synchronous step's pace), steps, ranks, gpu_utilization and
 * tensor_core_share (means over the ranks), peak_memory_bytes (the largest
 * device peak), findings, top_finding: {id, title, severity, saving_us} or
 * null}; OUT *trace: rank 0's header facts {format, schema_version,
 * cuda_runtime, cuda_driver, cupti_version, gpu, gpu_memory_bytes, gpus,
 * world_size, backend, with_stack, record_shapes, profile_memory,
 * with_flops, ranks}, each only when the trace says it. Both owned by the
 * caller. ERR_INVALID as summary_report. */
int summary_report_catalog(sqlite3 *db, json_t **figures, json_t **trace, struct err *e);

#endif

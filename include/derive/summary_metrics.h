/*
 * summary_metrics.h — a rank's GPU figures and aggregate tables: per device
 * utilization, SM efficiency, achieved occupancy and tensor-core share over
 * the steps' window (gpu table, device properties from the trace header),
 * and the op_stat and kernel_stat rows from the rankctx aggregations. Rows
 * are written in the aggregation map's slot order, which repeats from run
 * to run. Called by summary.c's driver after the steps.
 */
#ifndef TB_SUMMARY_METRICS_H
#define TB_SUMMARY_METRICS_H

#include "derive/summary_rank.h"
#include "base/err.h"

/* The gpu table rows of c->rank over [w0, w1); header: the rank's trace
 * header (borrowed, may be NULL). Also each GPU's compute utilization (the
 * union of its kernels that are not collectives ÷ the window: a collective
 * waiting for a late peer keeps the GPU "busy" without work) into summary's
 * "compute_utilization" {"<device>": share}. */
int summary_metrics_gpu(struct rankctx *c, json_t *header, int64_t w0, int64_t w1, json_t *summary, struct err *e);

/* The op_stat rows of c->rank. */
int summary_metrics_write_ops(struct rankctx *c, struct err *e);

/* Groups c's kernels by device, name and operator into the kernel_stat rows. */
int summary_metrics_write_kernels(struct rankctx *c, struct err *e);

#endif

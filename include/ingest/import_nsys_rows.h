/*
 * import_nsys_rows.h — the rows of an Nsight Systems export read as events
 * (import_nsys.h describes the mapping): GPU kernels, memcpys and memsets
 * on their stream tracks; CUDA runtime calls and NVTX ranges and marks on
 * their threads; then the names of the threads that had events. Each
 * reader streams its table ORDER BY start into the writer of struct
 * import_nsys, on the ingest thread, and counts what it added.
 */
#ifndef TB_IMPORT_NSYS_ROWS_H
#define TB_IMPORT_NSYS_ROWS_H

#include <stdint.h>

#include "base/err.h"
#include "ingest/import_nsys.h"

/* CUPTI_ACTIVITY_KIND_KERNEL; OUT *count: slices added. */
int import_nsys_rows_kernels(struct import_nsys *n, uint64_t *count, struct err *e);

/* CUPTI_ACTIVITY_KIND_MEMCPY. */
int import_nsys_rows_memcpy(struct import_nsys *n, uint64_t *count, struct err *e);

/* CUPTI_ACTIVITY_KIND_MEMSET. */
int import_nsys_rows_memset(struct import_nsys *n, uint64_t *count, struct err *e);

/* CUPTI_ACTIVITY_KIND_RUNTIME (launches keep their correlation ids). */
int import_nsys_rows_runtime(struct import_nsys *n, uint64_t *count, struct err *e);

/* NVTX_EVENTS: ranges as slices (step-like names as steps), marks. */
int import_nsys_rows_nvtx(struct import_nsys *n, uint64_t *ranges, uint64_t *marks, struct err *e);

/* Thread names (ThreadNames) and process names (PROCESSES) for the
 * threads that have events. */
void import_nsys_rows_name_threads(struct import_nsys *n);

#endif

/*
 * import_nsys.h — the Nsight Systems SQLite importer (`nsys export --type
 * sqlite`, also what DLProf writes). The upload is a database, not a stream:
 * the importer copies the (possibly gzip) content to a private temp file
 * under $TMPDIR (else /tmp), opens it read-only with SQLite's defensive
 * settings (no triggers, views, untrusted schema functions or extensions),
 * and removes it before returning, whatever happens.
 *
 * What it reads, each only when the table exists (Nsight creates tables
 * lazily): CUPTI_ACTIVITY_KIND_KERNEL / _MEMCPY / _MEMSET as GPU ops on
 * (deviceId, "stream N") tracks; CUPTI_ACTIVITY_KIND_RUNTIME as cuda_runtime
 * (eventClass 0) and cuda_driver (1) calls on OS-thread tracks, joined to
 * the GPU ops by correlationId (slice.corr); NVTX_EVENTS ranges as user
 * annotations (ranges named like steps become "ProfilerStep#N", the name
 * the analysis recognises, with the original name kept in args) and marks
 * as instants; TARGET_INFO_GPU as the header's deviceProperties; ThreadNames
 * and PROCESSES for track names. Threads come from globalTid:
 * pid = globalTid >> 24 & 0xFFFFFF, tid = globalTid & 0xFFFFFF. Times are ns.
 *
 * Columns drift between Nsight versions: every column is looked up with
 * PRAGMA table_info first; optional ones read as NULL, a missing required
 * one is ERR_INVALID naming the Nsight version, the table and the column.
 *
 * Rows are streamed (ORDER BY start) into the writer, which sorts; memory
 * stays bounded by SQLite's page cache and sorter. Runs on the ingest
 * thread; keeps no state between calls.
 */
#ifndef TB_IMPORT_NSYS_H
#define TB_IMPORT_NSYS_H

#include "ingest/importer.h"

/* The table entry: probe = SQLite magic (raw or once inflated), import as
 * above. Sets ctx->format to "nsys". */
extern const struct importer importer_nsys;

#endif

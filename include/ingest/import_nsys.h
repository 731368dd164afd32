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

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/hmap.h"
#include "ingest/importer.h"

/* The table entry: probe = SQLite magic (raw or once inflated), import as
 * above. Sets ctx->format to "nsys". */
extern const struct importer importer_nsys;

/* ---- Inside the importer: import_nsys.c and import_nsys_rows.c ---- */

/* One import's state: the export being read, the writer, the args scratch,
 * the GPUs, streams, NVTX domains and threads seen. On the ingest thread,
 * for the length of one import. */
struct import_nsys {
    sqlite3 *db;
    struct rundb_writer *w;
    struct import_ctx *ctx;
    struct import_src *src;
    char version[96];     /* "Nsight Systems 2024.5.1.113 export (schema 3.13.2)" */
    uint64_t rows;
    char *args;           /* scratch for args JSON */
    size_t args_cap, args_n;
    int args_members;
    char memkind[8][24];  /* ENUM_CUDA_MEM_KIND labels */
    struct hmap tids;     /* set of globalTids with events (no values) */
    struct gpu { int64_t dev; int sms; } gpus[64];
    struct strm { int64_t dev, stream; uint32_t track; } streams[256];
    size_t nstreams;
    size_t ngpus;
    struct dom { int64_t id; char name[48]; } doms[64];
    size_t ndoms;
    int64_t step_seq;     /* numbering for step ranges without a number */
    uint32_t unnamed;
};

/* Whether the export has table (1) or not (0). */
int import_nsys_table_exists(struct import_nsys *n, const char *table);

/* Whether table has column col. */
int import_nsys_col_exists(struct import_nsys *n, const char *table, const char *col);

/* ERR_INVALID naming the first of cols (NULL-terminated) that table lacks
 * and the export's version. */
int import_nsys_need_cols(struct import_nsys *n, const char *table, const char *const *cols, struct err *e);

/* "k.col" when the column exists, else "NULL", appended to sql. */
void import_nsys_sel(struct import_nsys *n, char *sql, size_t cap, const char *table, const char *alias, const char *col);

/* A failed read of what: ERR_INVALID (ERR_IO when SQLite ran out of
 * memory) with SQLite's message. */
int import_nsys_db_err(struct import_nsys *n, const char *what, struct err *e);

/* The args JSON object of the current row, built in n->args: args_reset
 * opens it, args_* add members, args_end closes it. */
void import_nsys_args_reset(struct import_nsys *n);

void import_nsys_args_fmt(struct import_nsys *n, const char *fmt, ...);

void import_nsys_args_key(struct import_nsys *n, const char *key);

void import_nsys_args_i64(struct import_nsys *n, const char *key, int64_t v);

void import_nsys_args_dbl(struct import_nsys *n, const char *key, double v);

/* A string member (s may be NULL: nothing is added). */
void import_nsys_args_str(struct import_nsys *n, const char *key, const char *s);

void import_nsys_args_end(struct import_nsys *n);

/* Whether globalTid gtid has had events. */
int import_nsys_tid_has(const struct import_nsys *n, int64_t gtid);

/* The OS thread's track: pid and tid unpacked from globalTid. */
uint32_t import_nsys_thread_track(struct import_nsys *n, int64_t gtid);

/* The GPU stream's track, keyed as Kineto's are: pid = device, tid =
 * stream number, named "stream N". */
uint32_t import_nsys_stream_track(struct import_nsys *n, int64_t dev, int64_t stream);

/* Column col of st as a str id of the writer; n->unnamed when NULL or
 * empty. */
uint32_t import_nsys_intern_col(struct import_nsys *n, sqlite3_stmt *st, int col);

/* The SM count of CUDA device dev, 0 when unknown. */
int import_nsys_gpu_sms(const struct import_nsys *n, int64_t dev);

/* Rows as events; progress now and then. */
void import_nsys_count_row(struct import_nsys *n);

/* end - start; 0, noted as repaired, when the end is NULL or before the
 * start. */
int64_t import_nsys_span(struct import_nsys *n, int64_t start, int64_t end, int end_null);

/* The memory kind label of column col (ENUM_CUDA_MEM_KIND): borrowed from
 * n, or a static "Unknown". */
const char *import_nsys_memkind(const struct import_nsys *n, sqlite3_stmt *st, int col);

#endif

#define LOG_MODULE "import_nsys"
#include "ingest/import_nsys.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hmap.h"
#include "base/xmalloc.h"
#include "ingest/import_nsys_rows.h"

/* ====================================================================== */
/* Probe and spool                                                        */
/* ====================================================================== */

static const char sqlite_magic[16] = "SQLite format 3";

static int nsys_probe(const struct import_probe *p)
{
    if (p->magic_n >= 16 && memcmp(p->magic, sqlite_magic, 16) == 0) return 100;
    if (p->head_n >= 16 && memcmp(p->head, sqlite_magic, 16) == 0) return 100; /* gzip of a database */
    return 0;
}

/* Copies the content to a new private temp file. OUT path (caller unlinks
 * it once it exists, also on error). */
static int spool(struct import_src *src, struct import_ctx *ctx, char *path, size_t cap, struct err *e)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, cap, "%s/tb-nsys-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        int er = errno;
        path[0] = '\0';
        return err_set(e, ERR_IO, "cannot create a temp file for the database: %s", strerror(er));
    }
    size_t bufcap = 1u << 20, got;
    char *buf = xmalloc(bufcap);
    uint64_t total = 0;
    int rc = 0;
    for (;;) {
        if ((rc = import_src_read(src, buf, bufcap, &got, e)) != 0) break;
        if (!got) break;
        if (total == 0 && got >= 20) {
            /* A WAL-mode header (file format 2) would make SQLite look for
             * -wal/-shm files an upload never has: read it as rollback mode. */
            if (buf[18] == 2) buf[18] = 1;
            if (buf[19] == 2) buf[19] = 1;
        }
        for (size_t off = 0; off < got;) {
            ssize_t n = write(fd, buf + off, got - off);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                rc = err_set(e, ERR_IO, "cannot write the temp copy of the database: %s", strerror(errno));
                break;
            }
            off += (size_t)n;
        }
        if (rc) break;
        total += got;
        if (ctx->progress) ctx->progress(ctx->progress_arg, instream_raw_consumed(src->in), 0);
    }
    free(buf);
    if (close(fd) != 0 && rc == 0) rc = err_set(e, ERR_IO, "cannot write the temp copy of the database: %s",
                                                strerror(errno));
    return rc;
}

/* ====================================================================== */
/* Schema discovery                                                       */
/* ====================================================================== */


int import_nsys_table_exists(struct import_nsys *n, const char *table)
{
    sqlite3_stmt *st;
    int ok = 0;
    if (sqlite3_prepare_v2(n->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    ok = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return ok;
}

int import_nsys_col_exists(struct import_nsys *n, const char *table, const char *col)
{
    sqlite3_stmt *st;
    int ok = 0;
    if (sqlite3_prepare_v2(n->db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?", -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
    ok = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return ok;
}

/* Where the export says which Nsight wrote it (2022: EXPORT_META_DATA,
 * 2023+: META_DATA_EXPORT). */
static void read_version(struct import_nsys *n, json_t *info)
{
    static const char *const tables[] = { "META_DATA_EXPORT", "EXPORT_META_DATA" };
    char prod[40] = "", schema[40] = "";
    for (size_t i = 0; i < 2; i++) {
        if (!import_nsys_table_exists(n, tables[i]) || !import_nsys_col_exists(n, tables[i], "name") || !import_nsys_col_exists(n, tables[i], "value"))
            continue;
        char sql[128];
        sqlite3_stmt *st;
        snprintf(sql, sizeof sql, "SELECT name, value FROM %s WHERE name IN ('EXPORT_PRODUCT_VERSION',"
                                  "'EXPORT_SCHEMA_VERSION')", tables[i]);
        if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) continue;
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *k = (const char *)sqlite3_column_text(st, 0);
            const char *v = (const char *)sqlite3_column_text(st, 1);
            if (!k || !v) continue;
            if (strcmp(k, "EXPORT_PRODUCT_VERSION") == 0) snprintf(prod, sizeof prod, "%s", v);
            else snprintf(schema, sizeof schema, "%s", v);
        }
        sqlite3_finalize(st);
        break;
    }
    if (prod[0]) json_object_set_new(info, "productVersion", json_string(prod));
    if (schema[0]) json_object_set_new(info, "schemaVersion", json_string(schema));
    if (prod[0] || schema[0])
        snprintf(n->version, sizeof n->version, "Nsight Systems %s export (schema %s)", prod[0] ? prod : "(version ?)",
                 schema[0] ? schema : "?");
}

int import_nsys_need_cols(struct import_nsys *n, const char *table, const char *const *cols, struct err *e)
{
    for (size_t i = 0; cols[i]; i++)
        if (!import_nsys_col_exists(n, table, cols[i]))
            return err_set(e, ERR_INVALID,
                           "this %s cannot be read: table %s has no column '%s' (traceboard reads the "
                           "layouts of Nsight Systems 2022.2 to 2024.5)",
                           n->version, table, cols[i]);
    return 0;
}

/* "k.col" when the column exists, else "NULL", appended to sql. */
void import_nsys_sel(struct import_nsys *n, char *sql, size_t cap, const char *table, const char *alias, const char *col)
{
    size_t l = strlen(sql);
    if (import_nsys_col_exists(n, table, col)) snprintf(sql + l, cap - l, ", %s.%s", alias, col);
    else snprintf(sql + l, cap - l, ", NULL");
}

int import_nsys_db_err(struct import_nsys *n, const char *what, struct err *e)
{
    int code = sqlite3_errcode(n->db);
    return err_set(e, code == SQLITE_NOMEM ? ERR_IO : ERR_INVALID, "%s: reading %s failed: %s", n->version, what,
                   sqlite3_errmsg(n->db));
}

/* ====================================================================== */
/* Small helpers                                                          */
/* ====================================================================== */

/* The args JSON object of the current row, built in n->args: args_reset
 * opens it, args_* add members, args_end closes it. */
static void args_put(struct import_nsys *n, const char *s, size_t len)
{
    if (n->args_n + len + 1 > n->args_cap) {
        while (n->args_n + len + 1 > n->args_cap) n->args_cap *= 2;
        n->args = xrealloc(n->args, n->args_cap);
    }
    memcpy(n->args + n->args_n, s, len);
    n->args_n += len;
    n->args[n->args_n] = '\0';
}

void import_nsys_args_reset(struct import_nsys *n)
{
    if (!n->args) n->args = xmalloc(n->args_cap = 1024);
    n->args_n = 0;
    n->args_members = 0;
    args_put(n, "{", 1);
}

void import_nsys_args_fmt(struct import_nsys *n, const char *fmt, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (k > 0) args_put(n, b, (size_t)k < sizeof b ? (size_t)k : sizeof b - 1);
}

void import_nsys_args_key(struct import_nsys *n, const char *key)
{
    import_nsys_args_fmt(n, "%s\"%s\":", n->args_members++ ? "," : "", key);
}

void import_nsys_args_i64(struct import_nsys *n, const char *key, int64_t v)
{
    import_nsys_args_key(n, key);
    import_nsys_args_fmt(n, "%" PRId64, v);
}

void import_nsys_args_dbl(struct import_nsys *n, const char *key, double v)
{
    import_nsys_args_key(n, key);
    import_nsys_args_fmt(n, "%.6g", v);
}

/* A string member (s may be NULL: nothing is added). */
void import_nsys_args_str(struct import_nsys *n, const char *key, const char *s)
{
    if (!s) return;
    import_nsys_args_key(n, key);
    args_put(n, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char b[2] = { '\\', (char)*p };
            args_put(n, b, 2);
        } else if (*p < 0x20) {
            import_nsys_args_fmt(n, "\\u%04x", *p);
        } else {
            args_put(n, (const char *)p, 1);
        }
    }
    args_put(n, "\"", 1);
}

void import_nsys_args_end(struct import_nsys *n)
{
    args_put(n, "}", 1);
}

/* Records a globalTid that has events (for naming its thread later). */
static void tid_seen(struct import_nsys *n, int64_t gtid)
{
    if (gtid == 0) return;
    hmap_put(&n->tids, hmap_hash_u64((uint64_t)gtid), &gtid, sizeof gtid, NULL);
}

int import_nsys_tid_has(const struct import_nsys *n, int64_t gtid)
{
    return gtid != 0 && hmap_get(&n->tids, hmap_hash_u64((uint64_t)gtid), &gtid, sizeof gtid) != NULL;
}

/* The OS thread's track: pid and tid unpacked from globalTid. */
uint32_t import_nsys_thread_track(struct import_nsys *n, int64_t gtid)
{
    char p[24], t[24];
    int pn = snprintf(p, sizeof p, "%" PRId64, (gtid >> 24) & 0xFFFFFF);
    int tn = snprintf(t, sizeof t, "%" PRId64, gtid & 0xFFFFFF);
    tid_seen(n, gtid);
    return rundb_track(n->w, p, (size_t)pn, t, (size_t)tn);
}

/* The GPU stream's track, keyed as Kineto's are: pid = device, tid =
 * stream number, named "stream N". */
uint32_t import_nsys_stream_track(struct import_nsys *n, int64_t dev, int64_t stream)
{
    for (size_t i = 0; i < n->nstreams; i++)
        if (n->streams[i].dev == dev && n->streams[i].stream == stream) return n->streams[i].track;
    char p[24], t[24], nm[40];
    int pn = snprintf(p, sizeof p, "%" PRId64, dev);
    int tn = snprintf(t, sizeof t, "%" PRId64, stream);
    int nn = snprintf(nm, sizeof nm, "stream %" PRId64, stream);
    uint32_t tr = rundb_track(n->w, p, (size_t)pn, t, (size_t)tn);
    rundb_track_set_kind(n->w, tr, TB_TRACK_GPU);
    rundb_track_set_name(n->w, tr, nm, (size_t)nn);
    if (n->nstreams < sizeof n->streams / sizeof n->streams[0]) { /* past that: found again each time */
        n->streams[n->nstreams].dev = dev;
        n->streams[n->nstreams].stream = stream;
        n->streams[n->nstreams++].track = tr;
    }
    return tr;
}

uint32_t import_nsys_intern_col(struct import_nsys *n, sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    if (!s || !*s) return n->unnamed;
    return rundb_intern(n->w, s, (size_t)sqlite3_column_bytes(st, col));
}

int import_nsys_gpu_sms(const struct import_nsys *n, int64_t dev)
{
    for (size_t i = 0; i < n->ngpus; i++)
        if (n->gpus[i].dev == dev) return n->gpus[i].sms;
    return 0;
}

/* Rows as events; progress now and then. */
void import_nsys_count_row(struct import_nsys *n)
{
    rundb_count_event(n->w, 0);
    if ((++n->rows & 0xFFFF) == 0 && n->ctx->progress)
        n->ctx->progress(n->ctx->progress_arg, instream_raw_consumed(n->src->in), n->rows);
}

int64_t import_nsys_span(struct import_nsys *n, int64_t start, int64_t end, int end_null)
{
    if (end_null || end < start) {
        rundb_note(n->w, TB_NOTE_REPAIRED, "Nsight row whose end is missing or before its start: duration taken as 0",
                   NULL);
        return 0;
    }
    return end - start;
}

/* ====================================================================== */
/* GPU info                                                               */
/* ====================================================================== */

static int64_t cuda_id_of(struct import_nsys *n, int64_t gpu_id, int64_t fallback)
{
    sqlite3_stmt *st;
    int64_t v = fallback;
    if (!import_nsys_table_exists(n, "TARGET_INFO_CUDA_DEVICE") || !import_nsys_col_exists(n, "TARGET_INFO_CUDA_DEVICE", "gpuId") ||
        !import_nsys_col_exists(n, "TARGET_INFO_CUDA_DEVICE", "cudaId"))
        return v;
    if (sqlite3_prepare_v2(n->db, "SELECT cudaId FROM TARGET_INFO_CUDA_DEVICE WHERE gpuId = ? LIMIT 1", -1, &st,
                           NULL) != SQLITE_OK)
        return v;
    sqlite3_bind_int64(st, 1, gpu_id);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* deviceProperties as analysis and rundb read them (id = the CUDA device
 * id that kernels' deviceId use; name, totalGlobalMem, numSms,
 * computeMajor/Minor). */
static int read_gpus(struct import_nsys *n, json_t *header, struct err *e)
{
    static const char *const T = "TARGET_INFO_GPU";
    if (!import_nsys_table_exists(n, T)) return 0;
    if (!import_nsys_col_exists(n, T, "id")) { /* the GPU info is optional: import without it */
        rundb_note(n->w, TB_NOTE_INFO, "TARGET_INFO_GPU has no id column: GPU name and memory unknown", n->version);
        return 0;
    }
    char sql[512] = "SELECT g.id";
    static const char *const cols[] = { "cuDevice", "name", "totalMemory", "smCount", "computeMajor", "computeMinor",
                                        "busLocation", "chipName", "memoryBandwidth", "clockRate", NULL };
    for (size_t i = 0; cols[i]; i++) import_nsys_sel(n, sql, sizeof sql, T, "g", cols[i]);
    strcat(sql, " FROM TARGET_INFO_GPU g ORDER BY g.id");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return import_nsys_db_err(n, T, e);
    json_t *props = json_array();
    int rc = 0, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW && json_array_size(props) < 64) {
        int64_t gid = sqlite3_column_int64(st, 0);
        int64_t dev = sqlite3_column_type(st, 1) == SQLITE_INTEGER ? sqlite3_column_int64(st, 1) : gid;
        dev = cuda_id_of(n, gid, dev);
        json_t *d = json_object();
        json_object_set_new(d, "id", json_integer(dev));
        const char *name = (const char *)sqlite3_column_text(st, 2);
        if (name) json_object_set_new(d, "name", json_string(name));
        static const char *const keys[] = { "totalGlobalMem", "numSms", "computeMajor", "computeMinor" };
        for (int k = 0; k < 4; k++)
            if (sqlite3_column_type(st, 3 + k) == SQLITE_INTEGER)
                json_object_set_new(d, keys[k], json_integer(sqlite3_column_int64(st, 3 + k)));
        const char *bus = (const char *)sqlite3_column_text(st, 7), *chip = (const char *)sqlite3_column_text(st, 8);
        if (bus) json_object_set_new(d, "busLocation", json_string(bus));
        if (chip) json_object_set_new(d, "chipName", json_string(chip));
        if (sqlite3_column_type(st, 9) == SQLITE_INTEGER)
            json_object_set_new(d, "memoryBandwidth", json_integer(sqlite3_column_int64(st, 9)));
        if (sqlite3_column_type(st, 10) == SQLITE_INTEGER)
            json_object_set_new(d, "clockRate", json_integer(sqlite3_column_int64(st, 10)));
        json_object_set_new(d, "nsysGpuId", json_integer(gid));
        if (n->ngpus < sizeof n->gpus / sizeof n->gpus[0]) {
            n->gpus[n->ngpus].dev = dev;
            n->gpus[n->ngpus++].sms = (int)sqlite3_column_int64(st, 4);
        }
        json_array_append_new(props, d);
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE) rc = import_nsys_db_err(n, T, e);
    sqlite3_finalize(st);
    json_object_set_new(header, "deviceProperties", props);
    return rc;
}

/* Memory-kind labels: ENUM_CUDA_MEM_KIND where the export has it (2023+),
 * else the ids Nsight has always used (0 pageable, 1 pinned, 2 device ...). */
static void read_memkinds(struct import_nsys *n)
{
    static const char *const dflt[8] = { "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static",
                                         "Managed Static", "Unknown" };
    for (int i = 0; i < 8; i++) snprintf(n->memkind[i], sizeof n->memkind[i], "%s", dflt[i]);
    static const char *const T = "ENUM_CUDA_MEM_KIND";
    sqlite3_stmt *st;
    if (!import_nsys_table_exists(n, T) || !import_nsys_col_exists(n, T, "id") || !import_nsys_col_exists(n, T, "label")) return;
    if (sqlite3_prepare_v2(n->db, "SELECT id, label FROM ENUM_CUDA_MEM_KIND", -1, &st, NULL) != SQLITE_OK) return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *l = (const char *)sqlite3_column_text(st, 1);
        if (id >= 0 && id < 8 && l && *l) snprintf(n->memkind[id], sizeof n->memkind[id], "%s", l);
    }
    sqlite3_finalize(st);
}

const char *import_nsys_memkind(const struct import_nsys *n, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) != SQLITE_INTEGER) return "Unknown";
    int64_t k = sqlite3_column_int64(st, col);
    return k >= 0 && k < 8 ? n->memkind[k] : "Unknown";
}

/* ====================================================================== */
/* Import                                                                 */
/* ====================================================================== */

static int open_db(const char *path, sqlite3 **out, struct err *e)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE, NULL);
    if (rc != SQLITE_OK) {
        int r = err_set(e, ERR_INVALID, "cannot open the SQLite database: %s", db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return r;
    }
    /* The file is untrusted: no schema-defined code runs. */
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 16 << 20);
    *out = db;
    return 0;
}

static int nsys_read(struct import_nsys *n, struct err *e)
{
    static const char *const acts[] = { "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                        "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS" };
    int rc;
    sqlite3_stmt *st;
    /* Reading the schema is the first thing that touches the file. */
    if (sqlite3_prepare_v2(n->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        rc = err_set(e, ERR_INVALID, "an SQLite file that cannot be read: %s", sqlite3_errmsg(n->db));
        sqlite3_finalize(st);
        return rc;
    }
    sqlite3_finalize(st);
    json_t *header = json_object(), *info = json_object();
    read_version(n, info);
    json_object_set_new(header, "nsys", info);
    int any = 0;
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) any |= import_nsys_table_exists(n, acts[i]);
    if (!any) {
        json_decref(header);
        return err_set(e, ERR_INVALID,
                       "an SQLite database but not a readable Nsight Systems export: it has none of the tables "
                       "CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME or NVTX_EVENTS (%s). Export the "
                       "report with `nsys export --type sqlite` from a run traced with `--trace cuda,nvtx`",
                       n->version);
    }
    if (!import_nsys_table_exists(n, "StringIds")) {
        json_decref(header);
        return err_set(e, ERR_INVALID, "this %s cannot be read: it has no StringIds table (the names of "
                                       "kernels, API calls and NVTX ranges)", n->version);
    }
    if ((rc = import_nsys_need_cols(n, "StringIds", (const char *const[]){ "id", "value", NULL }, e)) != 0) goto out;
    read_memkinds(n);
    if ((rc = read_gpus(n, header, e)) != 0) goto out;

    uint64_t nk = 0, nmc = 0, nms = 0, nrt = 0, nr = 0, nmk = 0;
    if ((rc = import_nsys_rows_kernels(n, &nk, e)) != 0) goto out;
    if ((rc = import_nsys_rows_memcpy(n, &nmc, e)) != 0) goto out;
    if ((rc = import_nsys_rows_memset(n, &nms, e)) != 0) goto out;
    if ((rc = import_nsys_rows_runtime(n, &nrt, e)) != 0) goto out;
    if ((rc = import_nsys_rows_nvtx(n, &nr, &nmk, e)) != 0) goto out;
    import_nsys_rows_name_threads(n);
    for (size_t i = 0; i < n->ngpus; i++) {
        char p[24], nm[32];
        int pn = snprintf(p, sizeof p, "%" PRId64, n->gpus[i].dev);
        int k = snprintf(nm, sizeof nm, "GPU %" PRId64, n->gpus[i].dev);
        rundb_process_set_name(n->w, p, (size_t)pn, nm, (size_t)k);
    }
    json_object_set_new(info, "counts", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "kernels", (json_int_t)nk, "memcpy",
                                                  (json_int_t)nmc, "memset", (json_int_t)nms, "runtime",
                                                  (json_int_t)nrt, "nvtx_ranges", (json_int_t)nr, "nvtx_marks",
                                                  (json_int_t)nmk));
    if (n->rows == 0) rundb_note(n->w, TB_NOTE_INFO, "the trace has no events", NULL);

    int64_t base_ns = 0;
    if (import_nsys_table_exists(n, "TARGET_INFO_SESSION_START_TIME") &&
        import_nsys_col_exists(n, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs") &&
        sqlite3_prepare_v2(n->db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1", -1, &st, NULL) ==
            SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER)
            base_ns = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        json_object_set_new(header, "baseTimeNanoseconds", json_integer(base_ns));
    }
    n->ctx->format = "nsys";
    rc = rundb_set_rank_header(n->w, header, n->ctx->format, base_ns, e);
    if (n->ctx->progress) n->ctx->progress(n->ctx->progress_arg, instream_raw_consumed(n->src->in), n->rows);
out:
    json_decref(header);
    return rc;
}

static int nsys_import(struct import_src *src, struct rundb_writer *w, struct import_ctx *ctx, struct err *e)
{
    char path[512];
    struct import_nsys n;
    int rc;

    memset(&n, 0, sizeof n);
    hmap_init(&n.tids, 0, 64);
    n.w = w;
    n.ctx = ctx;
    n.src = src;
    snprintf(n.version, sizeof n.version, "Nsight Systems export of unknown version");
    rc = spool(src, ctx, path, sizeof path, e);
    if (rc == 0) rc = open_db(path, &n.db, e);
    if (rc == 0) {
        n.unnamed = rundb_intern(w, "(unnamed)", 9);
        rc = nsys_read(&n, e);
    }
    sqlite3_close(n.db);
    if (path[0]) unlink(path);
    free(n.args);
    hmap_free(&n.tids, NULL);
    return rc;
}

const struct importer importer_nsys = { "nsys", nsys_probe, nsys_import, NULL };


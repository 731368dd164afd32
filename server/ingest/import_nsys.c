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

struct nsys {
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

static int table_exists(struct nsys *n, const char *table)
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

static int col_exists(struct nsys *n, const char *table, const char *col)
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
static void read_version(struct nsys *n, json_t *info)
{
    static const char *const tables[] = { "META_DATA_EXPORT", "EXPORT_META_DATA" };
    char prod[40] = "", schema[40] = "";
    for (size_t i = 0; i < 2; i++) {
        if (!table_exists(n, tables[i]) || !col_exists(n, tables[i], "name") || !col_exists(n, tables[i], "value"))
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

static int need_cols(struct nsys *n, const char *table, const char *const *cols, struct err *e)
{
    for (size_t i = 0; cols[i]; i++)
        if (!col_exists(n, table, cols[i]))
            return err_set(e, ERR_INVALID,
                           "this %s cannot be read: table %s has no column '%s' (traceboard reads the "
                           "layouts of Nsight Systems 2022.2 to 2024.5)",
                           n->version, table, cols[i]);
    return 0;
}

/* "k.col" when the column exists, else "NULL", appended to sql. */
static void sel(struct nsys *n, char *sql, size_t cap, const char *table, const char *alias, const char *col)
{
    size_t l = strlen(sql);
    if (col_exists(n, table, col)) snprintf(sql + l, cap - l, ", %s.%s", alias, col);
    else snprintf(sql + l, cap - l, ", NULL");
}

static int db_err(struct nsys *n, const char *what, struct err *e)
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
static void args_put(struct nsys *n, const char *s, size_t len)
{
    if (n->args_n + len + 1 > n->args_cap) {
        while (n->args_n + len + 1 > n->args_cap) n->args_cap *= 2;
        n->args = xrealloc(n->args, n->args_cap);
    }
    memcpy(n->args + n->args_n, s, len);
    n->args_n += len;
    n->args[n->args_n] = '\0';
}

static void args_reset(struct nsys *n)
{
    if (!n->args) n->args = xmalloc(n->args_cap = 1024);
    n->args_n = 0;
    n->args_members = 0;
    args_put(n, "{", 1);
}

static void args_fmt(struct nsys *n, const char *fmt, ...)
{
    char b[256];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (k > 0) args_put(n, b, (size_t)k < sizeof b ? (size_t)k : sizeof b - 1);
}

static void args_key(struct nsys *n, const char *key)
{
    args_fmt(n, "%s\"%s\":", n->args_members++ ? "," : "", key);
}

static void args_i64(struct nsys *n, const char *key, int64_t v)
{
    args_key(n, key);
    args_fmt(n, "%" PRId64, v);
}

static void args_dbl(struct nsys *n, const char *key, double v)
{
    args_key(n, key);
    args_fmt(n, "%.6g", v);
}

/* A string member (s may be NULL: nothing is added). */
static void args_str(struct nsys *n, const char *key, const char *s)
{
    if (!s) return;
    args_key(n, key);
    args_put(n, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char b[2] = { '\\', (char)*p };
            args_put(n, b, 2);
        } else if (*p < 0x20) {
            args_fmt(n, "\\u%04x", *p);
        } else {
            args_put(n, (const char *)p, 1);
        }
    }
    args_put(n, "\"", 1);
}

static void args_end(struct nsys *n)
{
    args_put(n, "}", 1);
}

/* Records a globalTid that has events (for naming its thread later). */
static void tid_seen(struct nsys *n, int64_t gtid)
{
    if (gtid == 0) return;
    hmap_put(&n->tids, hmap_hash_u64((uint64_t)gtid), &gtid, sizeof gtid, NULL);
}

static int tid_has(const struct nsys *n, int64_t gtid)
{
    return gtid != 0 && hmap_get(&n->tids, hmap_hash_u64((uint64_t)gtid), &gtid, sizeof gtid) != NULL;
}

/* The OS thread's track: pid and tid unpacked from globalTid. */
static uint32_t thread_track(struct nsys *n, int64_t gtid)
{
    char p[24], t[24];
    int pn = snprintf(p, sizeof p, "%" PRId64, (gtid >> 24) & 0xFFFFFF);
    int tn = snprintf(t, sizeof t, "%" PRId64, gtid & 0xFFFFFF);
    tid_seen(n, gtid);
    return rundb_track(n->w, p, (size_t)pn, t, (size_t)tn);
}

/* The GPU stream's track, keyed as Kineto's are: pid = device, tid =
 * stream number, named "stream N". */
static uint32_t stream_track(struct nsys *n, int64_t dev, int64_t stream)
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

static uint32_t intern_col(struct nsys *n, sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    if (!s || !*s) return n->unnamed;
    return rundb_intern(n->w, s, (size_t)sqlite3_column_bytes(st, col));
}

static int gpu_sms(const struct nsys *n, int64_t dev)
{
    for (size_t i = 0; i < n->ngpus; i++)
        if (n->gpus[i].dev == dev) return n->gpus[i].sms;
    return 0;
}

/* Rows as events; progress now and then. */
static void count_row(struct nsys *n)
{
    rundb_count_event(n->w, 0);
    if ((++n->rows & 0xFFFF) == 0 && n->ctx->progress)
        n->ctx->progress(n->ctx->progress_arg, instream_raw_consumed(n->src->in), n->rows);
}

static int64_t span(struct nsys *n, int64_t start, int64_t end, int end_null)
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

static int64_t cuda_id_of(struct nsys *n, int64_t gpu_id, int64_t fallback)
{
    sqlite3_stmt *st;
    int64_t v = fallback;
    if (!table_exists(n, "TARGET_INFO_CUDA_DEVICE") || !col_exists(n, "TARGET_INFO_CUDA_DEVICE", "gpuId") ||
        !col_exists(n, "TARGET_INFO_CUDA_DEVICE", "cudaId"))
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
static int read_gpus(struct nsys *n, json_t *header, struct err *e)
{
    static const char *const T = "TARGET_INFO_GPU";
    if (!table_exists(n, T)) return 0;
    if (!col_exists(n, T, "id")) { /* the GPU info is optional: import without it */
        rundb_note(n->w, TB_NOTE_INFO, "TARGET_INFO_GPU has no id column: GPU name and memory unknown", n->version);
        return 0;
    }
    char sql[512] = "SELECT g.id";
    static const char *const cols[] = { "cuDevice", "name", "totalMemory", "smCount", "computeMajor", "computeMinor",
                                        "busLocation", "chipName", "memoryBandwidth", "clockRate", NULL };
    for (size_t i = 0; cols[i]; i++) sel(n, sql, sizeof sql, T, "g", cols[i]);
    strcat(sql, " FROM TARGET_INFO_GPU g ORDER BY g.id");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return db_err(n, T, e);
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
    if (step != SQLITE_ROW && step != SQLITE_DONE) rc = db_err(n, T, e);
    sqlite3_finalize(st);
    json_object_set_new(header, "deviceProperties", props);
    return rc;
}

/* Memory-kind labels: ENUM_CUDA_MEM_KIND where the export has it (2023+),
 * else the ids Nsight has always used (0 pageable, 1 pinned, 2 device ...). */
static void read_memkinds(struct nsys *n)
{
    static const char *const dflt[8] = { "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static",
                                         "Managed Static", "Unknown" };
    for (int i = 0; i < 8; i++) snprintf(n->memkind[i], sizeof n->memkind[i], "%s", dflt[i]);
    static const char *const T = "ENUM_CUDA_MEM_KIND";
    sqlite3_stmt *st;
    if (!table_exists(n, T) || !col_exists(n, T, "id") || !col_exists(n, T, "label")) return;
    if (sqlite3_prepare_v2(n->db, "SELECT id, label FROM ENUM_CUDA_MEM_KIND", -1, &st, NULL) != SQLITE_OK) return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const char *l = (const char *)sqlite3_column_text(st, 1);
        if (id >= 0 && id < 8 && l && *l) snprintf(n->memkind[id], sizeof n->memkind[id], "%s", l);
    }
    sqlite3_finalize(st);
}

static const char *memkind(const struct nsys *n, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) != SQLITE_INTEGER) return "Unknown";
    int64_t k = sqlite3_column_int64(st, col);
    return k >= 0 && k < 8 ? n->memkind[k] : "Unknown";
}

/* ====================================================================== */
/* GPU activity                                                           */
/* ====================================================================== */

static const char *const gpu_cols[] = { "start", "end", "deviceId", "streamId", "correlationId", NULL };

/* Common part of a GPU op: start, end, deviceId, streamId, correlationId
 * are columns 0..4. Fills s and opens args with device/stream/correlation. */
static void gpu_common(struct nsys *n, sqlite3_stmt *st, struct tb_slice *s, enum tb_kind kind, const char *cat)
{
    int64_t start = sqlite3_column_int64(st, 0), dev = sqlite3_column_int64(st, 2), stream = sqlite3_column_int64(st, 3);
    memset(s, 0, sizeof *s);
    s->track = stream_track(n, dev, stream);
    s->kind = kind;
    s->cat = rundb_intern(n->w, cat, strlen(cat));
    s->ts = start;
    s->dur = span(n, start, sqlite3_column_int64(st, 1), sqlite3_column_type(st, 1) == SQLITE_NULL);
    s->corr = sqlite3_column_int64(st, 4);
    args_reset(n);
    args_i64(n, "device", dev);
    args_i64(n, "stream", stream);
    args_i64(n, "correlation", s->corr);
}

static int add_slice(struct nsys *n, struct tb_slice *s, struct err *e)
{
    args_end(n);
    s->args = n->args;
    s->args_len = n->args_n;
    return rundb_add_slice(n->w, s, e);
}

static void args_int(struct nsys *n, const char *key, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_INTEGER) args_i64(n, key, sqlite3_column_int64(st, col));
}

static int read_kernels(struct nsys *n, uint64_t *count, struct err *e)
{
    static const char *const T = "CUPTI_ACTIVITY_KIND_KERNEL";
    int rc;
    if (!table_exists(n, T)) return 0;
    if ((rc = need_cols(n, T, gpu_cols, e)) != 0) return rc;
    int dem = col_exists(n, T, "demangledName"), sho = col_exists(n, T, "shortName");
    if (!dem && !sho) return need_cols(n, T, (const char *const[]){ "demangledName", NULL }, e);
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, COALESCE(%s, %s)",
             dem ? "d.value" : "NULL", sho ? "s.value" : "NULL");
    static const char *const cols[] = { "contextId", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                                        "registersPerThread", "staticSharedMemory", "dynamicSharedMemory", NULL };
    for (size_t i = 0; cols[i]; i++) sel(n, sql, sizeof sql, T, "k", cols[i]);
    size_t l = strlen(sql);
    snprintf(sql + l, sizeof sql - l, " FROM CUPTI_ACTIVITY_KIND_KERNEL k%s%s ORDER BY k.start",
             dem ? " LEFT JOIN StringIds d ON d.id = k.demangledName" : "",
             sho ? " LEFT JOIN StringIds s ON s.id = k.shortName" : "");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return db_err(n, T, e);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct tb_slice s;
        count_row(n);
        gpu_common(n, st, &s, TB_K_KERNEL, "kernel");
        s.name = intern_col(n, st, 5);
        args_int(n, "context", st, 6);
        int64_t g[3], b[3];
        int have = 1;
        for (int i = 0; i < 3; i++) {
            have &= sqlite3_column_type(st, 7 + i) == SQLITE_INTEGER && sqlite3_column_type(st, 10 + i) == SQLITE_INTEGER;
            g[i] = sqlite3_column_int64(st, 7 + i);
            b[i] = sqlite3_column_int64(st, 10 + i);
        }
        if (have) {
            args_key(n, "grid");
            args_fmt(n, "[%" PRId64 ",%" PRId64 ",%" PRId64 "]", g[0], g[1], g[2]);
            args_key(n, "block");
            args_fmt(n, "[%" PRId64 ",%" PRId64 ",%" PRId64 "]", b[0], b[1], b[2]);
            int sms = gpu_sms(n, sqlite3_column_int64(st, 2));
            double blocks = (double)g[0] * (double)g[1] * (double)g[2];
            if (sms > 0 && blocks > 0) args_dbl(n, "blocks per SM", blocks / sms);
        }
        args_int(n, "registers per thread", st, 13);
        if (sqlite3_column_type(st, 14) == SQLITE_INTEGER || sqlite3_column_type(st, 15) == SQLITE_INTEGER)
            args_i64(n, "shared memory", sqlite3_column_int64(st, 14) + sqlite3_column_int64(st, 15));
        if ((rc = add_slice(n, &s, e)) != 0) break;
        (*count)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = db_err(n, T, e);
    sqlite3_finalize(st);
    return rc;
}

/* CUPTI copy kinds (ENUM_CUDA_MEMCPY_OPER has kept these ids). */
static const char *copy_kind(int64_t k)
{
    static const char *const names[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD",
                                         "DtoA",    "DtoD", "HtoH", "PtoP", "HtoD", "DtoH", "DtoD" };
    return k >= 0 && k < (int64_t)(sizeof names / sizeof names[0]) ? names[k] : "Unknown";
}

static int read_memcpy(struct nsys *n, uint64_t *count, struct err *e)
{
    static const char *const T = "CUPTI_ACTIVITY_KIND_MEMCPY";
    int rc;
    if (!table_exists(n, T)) return 0;
    if ((rc = need_cols(n, T, gpu_cols, e)) != 0) return rc;
    if ((rc = need_cols(n, T, (const char *const[]){ "bytes", "copyKind", NULL }, e)) != 0) return rc;
    char sql[512] = "SELECT m.start, m.end, m.deviceId, m.streamId, m.correlationId, m.bytes, m.copyKind";
    static const char *const cols[] = { "srcKind", "dstKind", "contextId", NULL };
    for (size_t i = 0; cols[i]; i++) sel(n, sql, sizeof sql, T, "m", cols[i]);
    strcat(sql, " FROM CUPTI_ACTIVITY_KIND_MEMCPY m ORDER BY m.start");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return db_err(n, T, e);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct tb_slice s;
        char name[96];
        count_row(n);
        gpu_common(n, st, &s, TB_K_MEMCPY, "gpu_memcpy");
        int64_t bytes = sqlite3_column_int64(st, 5);
        const char *ck = copy_kind(sqlite3_column_int64(st, 6));
        if (sqlite3_column_type(st, 7) == SQLITE_INTEGER || sqlite3_column_type(st, 8) == SQLITE_INTEGER)
            snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", ck, memkind(n, st, 7), memkind(n, st, 8));
        else
            snprintf(name, sizeof name, "Memcpy %s", ck);
        s.name = rundb_intern(n->w, name, strlen(name));
        args_int(n, "context", st, 9);
        args_i64(n, "bytes", bytes);
        if (s.dur > 0) args_dbl(n, "memory bandwidth (GB/s)", (double)bytes / (double)s.dur);
        if ((rc = add_slice(n, &s, e)) != 0) break;
        (*count)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = db_err(n, T, e);
    sqlite3_finalize(st);
    return rc;
}

static int read_memset(struct nsys *n, uint64_t *count, struct err *e)
{
    static const char *const T = "CUPTI_ACTIVITY_KIND_MEMSET";
    int rc;
    if (!table_exists(n, T)) return 0;
    if ((rc = need_cols(n, T, gpu_cols, e)) != 0) return rc;
    if ((rc = need_cols(n, T, (const char *const[]){ "bytes", NULL }, e)) != 0) return rc;
    char sql[512] = "SELECT m.start, m.end, m.deviceId, m.streamId, m.correlationId, m.bytes";
    static const char *const cols[] = { "memKind", "value", "contextId", NULL };
    for (size_t i = 0; cols[i]; i++) sel(n, sql, sizeof sql, T, "m", cols[i]);
    strcat(sql, " FROM CUPTI_ACTIVITY_KIND_MEMSET m ORDER BY m.start");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return db_err(n, T, e);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct tb_slice s;
        char name[64];
        count_row(n);
        gpu_common(n, st, &s, TB_K_MEMSET, "gpu_memset");
        snprintf(name, sizeof name, "Memset (%s)", memkind(n, st, 6));
        s.name = rundb_intern(n->w, name, strlen(name));
        args_int(n, "context", st, 8);
        args_i64(n, "bytes", sqlite3_column_int64(st, 5));
        args_int(n, "value", st, 7);
        if ((rc = add_slice(n, &s, e)) != 0) break;
        (*count)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = db_err(n, T, e);
    sqlite3_finalize(st);
    return rc;
}

/* ====================================================================== */
/* CPU side: runtime calls and NVTX                                       */
/* ====================================================================== */

/* Length of name without a CUPTI version suffix ("cudaLaunchKernel_v7000"
 * -> "cudaLaunchKernel"), the spelling Kineto traces and the rules use. */
static size_t api_name_len(const char *s, size_t len)
{
    size_t i = len;
    while (i > 0 && isdigit((unsigned char)s[i - 1])) i--;
    if (i < len && i >= 3 && s[i - 1] == 'v' && s[i - 2] == '_') return i - 2;
    return len;
}

static int read_runtime(struct nsys *n, uint64_t *count, struct err *e)
{
    static const char *const T = "CUPTI_ACTIVITY_KIND_RUNTIME";
    int rc;
    if (!table_exists(n, T)) return 0;
    if ((rc = need_cols(n, T, (const char *const[]){ "start", "end", "globalTid", "correlationId", "nameId", NULL },
                        e)) != 0)
        return rc;
    char sql[512] = "SELECT r.start, r.end, r.globalTid, r.correlationId, s.value";
    int has_class = col_exists(n, T, "eventClass");
    sel(n, sql, sizeof sql, T, "r", "eventClass");
    sel(n, sql, sizeof sql, T, "r", "returnValue");
    /* eventClass 0 = CUDA runtime, 1 = driver; 2022 exports also hold
     * class 67 (CUDA backtrace) rows, copies of the call they wrap: they
     * are not events of the trace, only a note says how many. */
    strcat(sql, " FROM CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds s ON s.id = r.nameId");
    if (has_class) strcat(sql, " WHERE r.eventClass IN (0, 1)");
    strcat(sql, " ORDER BY r.start");
    sqlite3_stmt *st;
    if (has_class && sqlite3_prepare_v2(n->db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass"
                                               " NOT IN (0, 1) OR eventClass IS NULL",
                                        -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
            char ex[64];
            snprintf(ex, sizeof ex, "%lld rows", (long long)sqlite3_column_int64(st, 0));
            rundb_note(n->w, TB_NOTE_INFO, "Nsight runtime rows that are not CUDA runtime or driver calls (eventClass "
                                           "67: backtrace copies of a call) were skipped", ex);
        }
        sqlite3_finalize(st);
    }
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return db_err(n, T, e);
    uint32_t cat_rt = rundb_intern(n->w, "cuda_runtime", 12), cat_drv = rundb_intern(n->w, "cuda_driver", 11);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        count_row(n);
        int64_t cls = sqlite3_column_type(st, 5) == SQLITE_INTEGER ? sqlite3_column_int64(st, 5) : 0;
        struct tb_slice s;
        memset(&s, 0, sizeof s);
        int64_t start = sqlite3_column_int64(st, 0);
        s.track = thread_track(n, sqlite3_column_int64(st, 2));
        s.kind = cls == 1 ? TB_K_DRIVER : TB_K_RUNTIME;
        s.cat = cls == 1 ? cat_drv : cat_rt;
        s.ts = start;
        s.dur = span(n, start, sqlite3_column_int64(st, 1), sqlite3_column_type(st, 1) == SQLITE_NULL);
        s.corr = sqlite3_column_int64(st, 3);
        const char *nm = (const char *)sqlite3_column_text(st, 4);
        size_t nl = nm ? (size_t)sqlite3_column_bytes(st, 4) : 0;
        s.name = nl ? rundb_intern(n->w, nm, api_name_len(nm, nl)) : n->unnamed;
        args_reset(n);
        args_i64(n, "correlation", s.corr);
        if (nl && api_name_len(nm, nl) != nl) args_str(n, "cbid name", nm);
        args_int(n, "return value", st, 6);
        args_end(n);
        s.args = n->args;
        s.args_len = n->args_n;
        if ((rc = rundb_add_slice(n->w, &s, e)) != 0) break;
        (*count)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = db_err(n, T, e);
    sqlite3_finalize(st);
    return rc;
}

/* A step range: "ProfilerStep#3", "step 3", "Step#3", "train_step",
 * "training step 12", "iteration 5" (case-insensitive, the whole name).
 * OUT *num: the number, -1 when the name has none. */
static int step_like(const char *s, int64_t *num)
{
    static const char *const pre[] = { "profiler", "training", "train", "" };
    static const char *const word[] = { "step", "iteration", "iter" };
    for (size_t i = 0; i < 4; i++) {
        size_t pl = strlen(pre[i]);
        if (strncasecmp(s, pre[i], pl) != 0) continue;
        const char *p = s + pl;
        if (pl) while (*p == '_' || *p == ' ' || *p == '-' || *p == '.') p++;
        for (size_t j = 0; j < 3; j++) {
            size_t wl = strlen(word[j]);
            if (strncasecmp(p, word[j], wl) != 0) continue;
            const char *q = p + wl;
            while (*q == '_' || *q == ' ' || *q == '#' || *q == ':' || *q == '-') q++;
            if (*q == '\0') {
                *num = -1;
                return 1;
            }
            int64_t v = 0;
            const char *d = q;
            while (isdigit((unsigned char)*d) && d - q < 15) v = v * 10 + (*d++ - '0');
            if (d > q && *d == '\0') {
                *num = v;
                return 1;
            }
        }
    }
    return 0;
}

static const char *domain_name(const struct nsys *n, int64_t id)
{
    for (size_t i = 0; i < n->ndoms; i++)
        if (n->doms[i].id == id) return n->doms[i].name;
    return NULL;
}

static int read_nvtx(struct nsys *n, uint64_t *ranges, uint64_t *marks, struct err *e)
{
    static const char *const T = "NVTX_EVENTS";
    int rc;
    if (!table_exists(n, T)) return 0;
    if ((rc = need_cols(n, T, (const char *const[]){ "start", "end", "eventType", "globalTid", NULL }, e)) != 0)
        return rc;
    int txt = col_exists(n, T, "text"), tid = col_exists(n, T, "textId");
    if (!txt && !tid) return need_cols(n, T, (const char *const[]){ "text", NULL }, e);
    char name_expr[64];
    snprintf(name_expr, sizeof name_expr, "COALESCE(%s, %s)", txt ? "v.text" : "NULL", tid ? "s.value" : "NULL");
    char sql[768];
    sqlite3_stmt *st;
    int has_dom = col_exists(n, T, "domainId"), step;
    if (has_dom) { /* domain names: eventType 75 (domain create) */
        snprintf(sql, sizeof sql, "SELECT v.domainId, %s FROM NVTX_EVENTS v%s WHERE v.eventType = 75", name_expr,
                 tid ? " LEFT JOIN StringIds s ON s.id = v.textId" : "");
        if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return db_err(n, T, e);
        while (sqlite3_step(st) == SQLITE_ROW && n->ndoms < sizeof n->doms / sizeof n->doms[0]) {
            const char *d = (const char *)sqlite3_column_text(st, 1);
            if (!d) continue;
            n->doms[n->ndoms].id = sqlite3_column_int64(st, 0);
            snprintf(n->doms[n->ndoms++].name, sizeof n->doms[0].name, "%s", d);
        }
        sqlite3_finalize(st);
    }
    /* 59 push/pop range, 60 start/end range, 34 mark */
    snprintf(sql, sizeof sql,
             "SELECT v.start, v.end, v.eventType, v.globalTid, %s, %s FROM NVTX_EVENTS v%s"
             " WHERE v.eventType IN (34, 59, 60) ORDER BY v.start",
             name_expr, has_dom ? "v.domainId" : "NULL", tid ? " LEFT JOIN StringIds s ON s.id = v.textId" : "");
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return db_err(n, T, e);
    uint32_t cat = rundb_intern(n->w, "nvtx", 4);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        count_row(n);
        int64_t start = sqlite3_column_int64(st, 0), type = sqlite3_column_int64(st, 2);
        const char *nm = (const char *)sqlite3_column_text(st, 4);
        const char *dom = sqlite3_column_type(st, 5) == SQLITE_INTEGER ? domain_name(n, sqlite3_column_int64(st, 5))
                                                                        : NULL;
        uint32_t track = thread_track(n, sqlite3_column_int64(st, 3));
        args_reset(n);
        args_str(n, "domain", dom);
        if (type == 34) {
            int has_args = n->args_members > 0;
            args_end(n);
            struct tb_instant in = { track, nm && *nm ? rundb_intern(n->w, nm, strlen(nm)) : n->unnamed, cat, 't',
                                     start, has_args ? n->args : NULL, has_args ? n->args_n : 0 };
            if ((rc = rundb_add_instant(n->w, &in, e)) != 0) break;
            (*marks)++;
            continue;
        }
        if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
            rundb_note(n->w, TB_NOTE_DROPPED, "NVTX range never ended", nm);
            continue;
        }
        struct tb_slice s;
        memset(&s, 0, sizeof s);
        s.track = track;
        s.kind = TB_K_USER_ANNOTATION;
        s.cat = cat;
        s.ts = start;
        s.dur = span(n, start, sqlite3_column_int64(st, 1), 0);
        int64_t num;
        if (nm && step_like(nm, &num)) {
            char sname[40];
            if (num < 0) num = ++n->step_seq;
            snprintf(sname, sizeof sname, "ProfilerStep#%" PRId64, num);
            s.name = rundb_intern(n->w, sname, strlen(sname));
            if (strcmp(sname, nm) != 0) args_str(n, "nvtx name", nm);
        } else {
            s.name = nm && *nm ? rundb_intern(n->w, nm, strlen(nm)) : n->unnamed;
        }
        args_end(n);
        s.args = n->args;
        s.args_len = n->args_n;
        if ((rc = rundb_add_slice(n->w, &s, e)) != 0) break;
        (*ranges)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = db_err(n, T, e);
    sqlite3_finalize(st);
    return rc;
}

/* Thread names (ThreadNames) and process names (PROCESSES) for the
 * threads that have events. */
static void name_threads(struct nsys *n)
{
    sqlite3_stmt *st;
    if (table_exists(n, "ThreadNames") && col_exists(n, "ThreadNames", "globalTid") &&
        col_exists(n, "ThreadNames", "nameId") &&
        sqlite3_prepare_v2(n->db,
                           "SELECT t.globalTid, s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId", -1,
                           &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int64_t g = sqlite3_column_int64(st, 0);
            const char *nm = (const char *)sqlite3_column_text(st, 1);
            if (!nm || !tid_has(n, g)) continue;
            rundb_track_set_name(n->w, thread_track(n, g), nm, (size_t)sqlite3_column_bytes(st, 1));
        }
        sqlite3_finalize(st);
    }
    if (table_exists(n, "PROCESSES") && col_exists(n, "PROCESSES", "pid") && col_exists(n, "PROCESSES", "name") &&
        sqlite3_prepare_v2(n->db, "SELECT pid, name FROM PROCESSES", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int64_t pid = sqlite3_column_int64(st, 0);
            const char *nm = (const char *)sqlite3_column_text(st, 1);
            if (!nm) continue;
            int seen = 0; /* only processes with events: PROCESSES lists the whole node */
            size_t pos = 0;
            const void *key;
            while (!seen && hmap_next(&n->tids, &pos, &key, NULL)) {
                int64_t tid;
                memcpy(&tid, key, sizeof tid);
                seen = ((tid >> 24) & 0xFFFFFF) == pid;
            }
            if (!seen) continue;
            char p[24];
            int pn = snprintf(p, sizeof p, "%" PRId64, pid);
            rundb_process_set_name(n->w, p, (size_t)pn, nm, (size_t)sqlite3_column_bytes(st, 1));
        }
        sqlite3_finalize(st);
    }
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

static int nsys_read(struct nsys *n, struct err *e)
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
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) any |= table_exists(n, acts[i]);
    if (!any) {
        json_decref(header);
        return err_set(e, ERR_INVALID,
                       "an SQLite database but not a readable Nsight Systems export: it has none of the tables "
                       "CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME or NVTX_EVENTS (%s). Export the "
                       "report with `nsys export --type sqlite` from a run traced with `--trace cuda,nvtx`",
                       n->version);
    }
    if (!table_exists(n, "StringIds")) {
        json_decref(header);
        return err_set(e, ERR_INVALID, "this %s cannot be read: it has no StringIds table (the names of "
                                       "kernels, API calls and NVTX ranges)", n->version);
    }
    if ((rc = need_cols(n, "StringIds", (const char *const[]){ "id", "value", NULL }, e)) != 0) goto out;
    read_memkinds(n);
    if ((rc = read_gpus(n, header, e)) != 0) goto out;

    uint64_t nk = 0, nmc = 0, nms = 0, nrt = 0, nr = 0, nmk = 0;
    if ((rc = read_kernels(n, &nk, e)) != 0) goto out;
    if ((rc = read_memcpy(n, &nmc, e)) != 0) goto out;
    if ((rc = read_memset(n, &nms, e)) != 0) goto out;
    if ((rc = read_runtime(n, &nrt, e)) != 0) goto out;
    if ((rc = read_nvtx(n, &nr, &nmk, e)) != 0) goto out;
    name_threads(n);
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
    if (table_exists(n, "TARGET_INFO_SESSION_START_TIME") &&
        col_exists(n, "TARGET_INFO_SESSION_START_TIME", "utcEpochNs") &&
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
    struct nsys n;
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

#define LOG_MODULE "import_nsys"
#include "ingest/import_nsys_rows.h"

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
/* GPU activity                                                           */
/* ====================================================================== */

static const char *const gpu_cols[] = { "start", "end", "deviceId", "streamId", "correlationId", NULL };

/* Common part of a GPU op: start, end, deviceId, streamId, correlationId
 * are columns 0..4. Fills s and opens args with device/stream/correlation. */
static void gpu_common(struct import_nsys *n, sqlite3_stmt *st, struct tb_slice *s, enum tb_kind kind, const char *cat)
{
    int64_t start = sqlite3_column_int64(st, 0), dev = sqlite3_column_int64(st, 2), stream = sqlite3_column_int64(st, 3);
    memset(s, 0, sizeof *s);
    s->track = import_nsys_stream_track(n, dev, stream);
    s->kind = kind;
    s->cat = rundb_intern(n->w, cat, strlen(cat));
    s->ts = start;
    s->dur = import_nsys_span(n, start, sqlite3_column_int64(st, 1), sqlite3_column_type(st, 1) == SQLITE_NULL);
    s->corr = sqlite3_column_int64(st, 4);
    import_nsys_args_reset(n);
    import_nsys_args_i64(n, "device", dev);
    import_nsys_args_i64(n, "stream", stream);
    import_nsys_args_i64(n, "correlation", s->corr);
}

static int add_slice(struct import_nsys *n, struct tb_slice *s, struct err *e)
{
    import_nsys_args_end(n);
    s->args = n->args;
    s->args_len = n->args_n;
    return rundb_add_slice(n->w, s, e);
}

static void args_int(struct import_nsys *n, const char *key, sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_INTEGER) import_nsys_args_i64(n, key, sqlite3_column_int64(st, col));
}

int import_nsys_rows_kernels(struct import_nsys *n, uint64_t *count, struct err *e)
{
    static const char *const T = "CUPTI_ACTIVITY_KIND_KERNEL";
    int rc;
    if (!import_nsys_table_exists(n, T)) return 0;
    if ((rc = import_nsys_need_cols(n, T, gpu_cols, e)) != 0) return rc;
    int dem = import_nsys_col_exists(n, T, "demangledName"), sho = import_nsys_col_exists(n, T, "shortName");
    if (!dem && !sho) return import_nsys_need_cols(n, T, (const char *const[]){ "demangledName", NULL }, e);
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT k.start, k.end, k.deviceId, k.streamId, k.correlationId, COALESCE(%s, %s)",
             dem ? "d.value" : "NULL", sho ? "s.value" : "NULL");
    static const char *const cols[] = { "contextId", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                                        "registersPerThread", "staticSharedMemory", "dynamicSharedMemory", NULL };
    for (size_t i = 0; cols[i]; i++) import_nsys_sel(n, sql, sizeof sql, T, "k", cols[i]);
    size_t l = strlen(sql);
    snprintf(sql + l, sizeof sql - l, " FROM CUPTI_ACTIVITY_KIND_KERNEL k%s%s ORDER BY k.start",
             dem ? " LEFT JOIN StringIds d ON d.id = k.demangledName" : "",
             sho ? " LEFT JOIN StringIds s ON s.id = k.shortName" : "");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return import_nsys_db_err(n, T, e);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct tb_slice s;
        import_nsys_count_row(n);
        gpu_common(n, st, &s, TB_K_KERNEL, "kernel");
        s.name = import_nsys_intern_col(n, st, 5);
        args_int(n, "context", st, 6);
        int64_t g[3], b[3];
        int have = 1;
        for (int i = 0; i < 3; i++) {
            have &= sqlite3_column_type(st, 7 + i) == SQLITE_INTEGER && sqlite3_column_type(st, 10 + i) == SQLITE_INTEGER;
            g[i] = sqlite3_column_int64(st, 7 + i);
            b[i] = sqlite3_column_int64(st, 10 + i);
        }
        if (have) {
            import_nsys_args_key(n, "grid");
            import_nsys_args_fmt(n, "[%" PRId64 ",%" PRId64 ",%" PRId64 "]", g[0], g[1], g[2]);
            import_nsys_args_key(n, "block");
            import_nsys_args_fmt(n, "[%" PRId64 ",%" PRId64 ",%" PRId64 "]", b[0], b[1], b[2]);
            int sms = import_nsys_gpu_sms(n, sqlite3_column_int64(st, 2));
            double blocks = (double)g[0] * (double)g[1] * (double)g[2];
            if (sms > 0 && blocks > 0) import_nsys_args_dbl(n, "blocks per SM", blocks / sms);
        }
        args_int(n, "registers per thread", st, 13);
        if (sqlite3_column_type(st, 14) == SQLITE_INTEGER || sqlite3_column_type(st, 15) == SQLITE_INTEGER)
            import_nsys_args_i64(n, "shared memory", sqlite3_column_int64(st, 14) + sqlite3_column_int64(st, 15));
        if ((rc = add_slice(n, &s, e)) != 0) break;
        (*count)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = import_nsys_db_err(n, T, e);
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

int import_nsys_rows_memcpy(struct import_nsys *n, uint64_t *count, struct err *e)
{
    static const char *const T = "CUPTI_ACTIVITY_KIND_MEMCPY";
    int rc;
    if (!import_nsys_table_exists(n, T)) return 0;
    if ((rc = import_nsys_need_cols(n, T, gpu_cols, e)) != 0) return rc;
    if ((rc = import_nsys_need_cols(n, T, (const char *const[]){ "bytes", "copyKind", NULL }, e)) != 0) return rc;
    char sql[512] = "SELECT m.start, m.end, m.deviceId, m.streamId, m.correlationId, m.bytes, m.copyKind";
    static const char *const cols[] = { "srcKind", "dstKind", "contextId", NULL };
    for (size_t i = 0; cols[i]; i++) import_nsys_sel(n, sql, sizeof sql, T, "m", cols[i]);
    strcat(sql, " FROM CUPTI_ACTIVITY_KIND_MEMCPY m ORDER BY m.start");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return import_nsys_db_err(n, T, e);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct tb_slice s;
        char name[96];
        import_nsys_count_row(n);
        gpu_common(n, st, &s, TB_K_MEMCPY, "gpu_memcpy");
        int64_t bytes = sqlite3_column_int64(st, 5);
        const char *ck = copy_kind(sqlite3_column_int64(st, 6));
        if (sqlite3_column_type(st, 7) == SQLITE_INTEGER || sqlite3_column_type(st, 8) == SQLITE_INTEGER)
            snprintf(name, sizeof name, "Memcpy %s (%s -> %s)", ck, import_nsys_memkind(n, st, 7), import_nsys_memkind(n, st, 8));
        else
            snprintf(name, sizeof name, "Memcpy %s", ck);
        s.name = rundb_intern(n->w, name, strlen(name));
        args_int(n, "context", st, 9);
        import_nsys_args_i64(n, "bytes", bytes);
        if (s.dur > 0) import_nsys_args_dbl(n, "memory bandwidth (GB/s)", (double)bytes / (double)s.dur);
        if ((rc = add_slice(n, &s, e)) != 0) break;
        (*count)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = import_nsys_db_err(n, T, e);
    sqlite3_finalize(st);
    return rc;
}

int import_nsys_rows_memset(struct import_nsys *n, uint64_t *count, struct err *e)
{
    static const char *const T = "CUPTI_ACTIVITY_KIND_MEMSET";
    int rc;
    if (!import_nsys_table_exists(n, T)) return 0;
    if ((rc = import_nsys_need_cols(n, T, gpu_cols, e)) != 0) return rc;
    if ((rc = import_nsys_need_cols(n, T, (const char *const[]){ "bytes", NULL }, e)) != 0) return rc;
    char sql[512] = "SELECT m.start, m.end, m.deviceId, m.streamId, m.correlationId, m.bytes";
    static const char *const cols[] = { "memKind", "value", "contextId", NULL };
    for (size_t i = 0; cols[i]; i++) import_nsys_sel(n, sql, sizeof sql, T, "m", cols[i]);
    strcat(sql, " FROM CUPTI_ACTIVITY_KIND_MEMSET m ORDER BY m.start");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return import_nsys_db_err(n, T, e);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        struct tb_slice s;
        char name[64];
        import_nsys_count_row(n);
        gpu_common(n, st, &s, TB_K_MEMSET, "gpu_memset");
        snprintf(name, sizeof name, "Memset (%s)", import_nsys_memkind(n, st, 6));
        s.name = rundb_intern(n->w, name, strlen(name));
        args_int(n, "context", st, 8);
        import_nsys_args_i64(n, "bytes", sqlite3_column_int64(st, 5));
        args_int(n, "value", st, 7);
        if ((rc = add_slice(n, &s, e)) != 0) break;
        (*count)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = import_nsys_db_err(n, T, e);
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

int import_nsys_rows_runtime(struct import_nsys *n, uint64_t *count, struct err *e)
{
    static const char *const T = "CUPTI_ACTIVITY_KIND_RUNTIME";
    int rc;
    if (!import_nsys_table_exists(n, T)) return 0;
    if ((rc = import_nsys_need_cols(n, T, (const char *const[]){ "start", "end", "globalTid", "correlationId", "nameId", NULL },
                        e)) != 0)
        return rc;
    char sql[512] = "SELECT r.start, r.end, r.globalTid, r.correlationId, s.value";
    int has_class = import_nsys_col_exists(n, T, "eventClass");
    import_nsys_sel(n, sql, sizeof sql, T, "r", "eventClass");
    import_nsys_sel(n, sql, sizeof sql, T, "r", "returnValue");
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
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return import_nsys_db_err(n, T, e);
    uint32_t cat_rt = rundb_intern(n->w, "cuda_runtime", 12), cat_drv = rundb_intern(n->w, "cuda_driver", 11);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        import_nsys_count_row(n);
        int64_t cls = sqlite3_column_type(st, 5) == SQLITE_INTEGER ? sqlite3_column_int64(st, 5) : 0;
        struct tb_slice s;
        memset(&s, 0, sizeof s);
        int64_t start = sqlite3_column_int64(st, 0);
        s.track = import_nsys_thread_track(n, sqlite3_column_int64(st, 2));
        s.kind = cls == 1 ? TB_K_DRIVER : TB_K_RUNTIME;
        s.cat = cls == 1 ? cat_drv : cat_rt;
        s.ts = start;
        s.dur = import_nsys_span(n, start, sqlite3_column_int64(st, 1), sqlite3_column_type(st, 1) == SQLITE_NULL);
        s.corr = sqlite3_column_int64(st, 3);
        const char *nm = (const char *)sqlite3_column_text(st, 4);
        size_t nl = nm ? (size_t)sqlite3_column_bytes(st, 4) : 0;
        s.name = nl ? rundb_intern(n->w, nm, api_name_len(nm, nl)) : n->unnamed;
        import_nsys_args_reset(n);
        import_nsys_args_i64(n, "correlation", s.corr);
        if (nl && api_name_len(nm, nl) != nl) import_nsys_args_str(n, "cbid name", nm);
        args_int(n, "return value", st, 6);
        import_nsys_args_end(n);
        s.args = n->args;
        s.args_len = n->args_n;
        if ((rc = rundb_add_slice(n->w, &s, e)) != 0) break;
        (*count)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = import_nsys_db_err(n, T, e);
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

static const char *domain_name(const struct import_nsys *n, int64_t id)
{
    for (size_t i = 0; i < n->ndoms; i++)
        if (n->doms[i].id == id) return n->doms[i].name;
    return NULL;
}

int import_nsys_rows_nvtx(struct import_nsys *n, uint64_t *ranges, uint64_t *marks, struct err *e)
{
    static const char *const T = "NVTX_EVENTS";
    int rc;
    if (!import_nsys_table_exists(n, T)) return 0;
    if ((rc = import_nsys_need_cols(n, T, (const char *const[]){ "start", "end", "eventType", "globalTid", NULL }, e)) != 0)
        return rc;
    int txt = import_nsys_col_exists(n, T, "text"), tid = import_nsys_col_exists(n, T, "textId");
    if (!txt && !tid) return import_nsys_need_cols(n, T, (const char *const[]){ "text", NULL }, e);
    char name_expr[64];
    snprintf(name_expr, sizeof name_expr, "COALESCE(%s, %s)", txt ? "v.text" : "NULL", tid ? "s.value" : "NULL");
    char sql[768];
    sqlite3_stmt *st;
    int has_dom = import_nsys_col_exists(n, T, "domainId"), step;
    if (has_dom) { /* domain names: eventType 75 (domain create) */
        snprintf(sql, sizeof sql, "SELECT v.domainId, %s FROM NVTX_EVENTS v%s WHERE v.eventType = 75", name_expr,
                 tid ? " LEFT JOIN StringIds s ON s.id = v.textId" : "");
        if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return import_nsys_db_err(n, T, e);
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
    if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK) return import_nsys_db_err(n, T, e);
    uint32_t cat = rundb_intern(n->w, "nvtx", 4);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        import_nsys_count_row(n);
        int64_t start = sqlite3_column_int64(st, 0), type = sqlite3_column_int64(st, 2);
        const char *nm = (const char *)sqlite3_column_text(st, 4);
        const char *dom = sqlite3_column_type(st, 5) == SQLITE_INTEGER ? domain_name(n, sqlite3_column_int64(st, 5))
                                                                        : NULL;
        uint32_t track = import_nsys_thread_track(n, sqlite3_column_int64(st, 3));
        import_nsys_args_reset(n);
        import_nsys_args_str(n, "domain", dom);
        if (type == 34) {
            int has_args = n->args_members > 0;
            import_nsys_args_end(n);
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
        s.dur = import_nsys_span(n, start, sqlite3_column_int64(st, 1), 0);
        int64_t num;
        if (nm && step_like(nm, &num)) {
            char sname[40];
            if (num < 0) num = ++n->step_seq;
            snprintf(sname, sizeof sname, "ProfilerStep#%" PRId64, num);
            s.name = rundb_intern(n->w, sname, strlen(sname));
            if (strcmp(sname, nm) != 0) import_nsys_args_str(n, "nvtx name", nm);
        } else {
            s.name = nm && *nm ? rundb_intern(n->w, nm, strlen(nm)) : n->unnamed;
        }
        import_nsys_args_end(n);
        s.args = n->args;
        s.args_len = n->args_n;
        if ((rc = rundb_add_slice(n->w, &s, e)) != 0) break;
        (*ranges)++;
    }
    if (rc == 0 && step != SQLITE_DONE) rc = import_nsys_db_err(n, T, e);
    sqlite3_finalize(st);
    return rc;
}

/* Thread names (ThreadNames) and process names (PROCESSES) for the
 * threads that have events. */
void import_nsys_rows_name_threads(struct import_nsys *n)
{
    sqlite3_stmt *st;
    if (import_nsys_table_exists(n, "ThreadNames") && import_nsys_col_exists(n, "ThreadNames", "globalTid") &&
        import_nsys_col_exists(n, "ThreadNames", "nameId") &&
        sqlite3_prepare_v2(n->db,
                           "SELECT t.globalTid, s.value FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId", -1,
                           &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int64_t g = sqlite3_column_int64(st, 0);
            const char *nm = (const char *)sqlite3_column_text(st, 1);
            if (!nm || !import_nsys_tid_has(n, g)) continue;
            rundb_track_set_name(n->w, import_nsys_thread_track(n, g), nm, (size_t)sqlite3_column_bytes(st, 1));
        }
        sqlite3_finalize(st);
    }
    if (import_nsys_table_exists(n, "PROCESSES") && import_nsys_col_exists(n, "PROCESSES", "pid") && import_nsys_col_exists(n, "PROCESSES", "name") &&
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


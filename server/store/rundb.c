#define LOG_MODULE "rundb"
#include "store/rundb.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/utf8.h"
#include "base/xmalloc.h"
#include "store/budget.h"

/* Who a database file belongs to, for messages: "run <id>" for
 * DATA/runs/<id>/run.db, else the path. OUT out: filled, NUL-terminated. */
static void run_label(const char *db_path, char *out, size_t cap)
{
    size_t n = db_path ? strlen(db_path) : 0;
    const char *tail = "/run.db";
    size_t tn = strlen(tail);
    if (n > tn && strcmp(db_path + n - tn, tail) == 0) {
        const char *end = db_path + n - tn, *b = end;
        while (b > db_path && b[-1] != '/') b--;
        snprintf(out, cap, "run %.*s", (int)(end - b), b);
    } else {
        snprintf(out, cap, "%s", db_path && *db_path ? db_path : "the run database");
    }
}

/* ERR_DAMAGED for the run stored at db_path, with what is wrong (fmt) and
 * what to do about it. */
static int damaged(const char *db_path, struct err *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int damaged(const char *db_path, struct err *e, const char *fmt, ...)
{
    char label[96], why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    run_label(db_path, label, sizeof label);
    return err_set(e, ERR_DAMAGED, "%s is damaged (%s): delete the run and upload its trace files again", label, why);
}

int rundb_db_error(sqlite3 *db, struct err *e, const char *what)
{
    int rc = sqlite3_errcode(db);
    /* SQLite found pages that are not what it wrote: no query of this file
     * can be trusted, and re-importing is the only cure. */
    if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
        const char *path = sqlite3_db_filename(db, "main");
        char label[96];
        run_label(path, label, sizeof label);
        if (strncmp(label, "run ", 4) == 0)
            return damaged(path, e, "%s: %s", what, sqlite3_errmsg(db));
        return err_set(e, ERR_DB, "%s: %s (the database file %s is damaged)", what, sqlite3_errmsg(db), label);
    }
    const char *why = rc == SQLITE_FULL       ? " (the disk holding the data folder is full)"
                      : rc == SQLITE_READONLY ? " (the data folder is read-only)"
                      : rc == SQLITE_CANTOPEN ? " (the data folder cannot be written)"
                      : rc == SQLITE_IOERR    ? " (a write failed: the disk may be full, over quota or failing)"
                                              : NULL;
    return err_set(e, why ? ERR_NOSPACE : ERR_DB, "%s: %s%s", what, sqlite3_errmsg(db), why ? why : "");
}

int rundb_damaged(sqlite3 *db, struct err *e, const char *what)
{
    return damaged(sqlite3_db_filename(db, "main"), e, "%s", what);
}

int rundb_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, struct err *e)
{
    if (sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK) return 0;
    LOG_WARN("prepare failed: %s: %s", sqlite3_errmsg(db), sql);
    return rundb_db_error(db, e, "run database (prepare)");
}

int rundb_pick_rank(sqlite3 *db, const char *run_id, int have_rank, long long want, int *rank, int64_t *t0,
                    int64_t *t1, json_t *ranks, struct err *e)
{
    sqlite3_stmt *st;
    int rc, found = 0;
    if (sqlite3_prepare_v2(db, "SELECT rank, coalesce(t0, 0), coalesce(t1, 0) FROM rank ORDER BY rank", -1, &st,
                           NULL) != SQLITE_OK)
        return rundb_db_error(db, e, "run database (ranks)");
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int k = sqlite3_column_int(st, 0);
        if (ranks) json_array_append_new(ranks, json_integer(k));
        if ((!have_rank && !found) || (have_rank && k == want)) {
            found = 1;
            *rank = k;
            *t0 = sqlite3_column_int64(st, 1);
            *t1 = sqlite3_column_int64(st, 2);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return rundb_db_error(db, e, "run database (ranks)");
    if (!found && have_rank) return err_set(e, ERR_NOT_FOUND, "run %s has no rank %lld", run_id, want);
    if (!found) return err_set(e, ERR_NOT_FOUND, "run %s has no ranks", run_id);
    return 0;
}

/* ====================================================================== */
/* Readers                                                                */
/* ====================================================================== */

static json_t *col_json(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    json_t *j = t ? json_loads(t, JSON_DECODE_ANY, NULL) : NULL;
    return j ? j : json_null();
}

int rundb_process_init(struct err *e)
{
    if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK || sqlite3_initialize() != SQLITE_OK)
        return err_set(e, ERR_INTERNAL, "cannot initialise SQLite");
    return 0;
}

int rundb_copy(const char *src_path, const char *dst_path, struct err *e)
{
    sqlite3 *src = NULL, *dst = NULL;
    int rc = rundb_open_ro(src_path, &src, e);
    if (rc) return rc;
    if (sqlite3_open_v2(dst_path, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        rc = dst ? rundb_db_error(dst, e, "cannot create the run database copy")
                 : err_set(e, ERR_INTERNAL, "out of memory");
        goto out;
    }
    /* the copy is private until it is swapped in: no journal needed */
    sqlite3_exec(dst, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;", NULL, NULL, NULL);
    sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
    if (!b) {
        rc = rundb_db_error(dst, e, "cannot copy the run database");
        goto out;
    }
    int step, busy = 0;
    /* nobody writes a committed run, so busy is brief (a reader's checkpoint) */
    while ((step = sqlite3_backup_step(b, 4096)) == SQLITE_OK ||
           ((step == SQLITE_BUSY || step == SQLITE_LOCKED) && ++busy < 1000))
        if (step != SQLITE_OK) sqlite3_sleep(5);
    /* finish() leaves the step's error on dst, where rundb_db_error reads it */
    if (sqlite3_backup_finish(b) != SQLITE_OK || step != SQLITE_DONE)
        rc = rundb_db_error(dst, e, "cannot copy the run database");
out:
    sqlite3_close(src);
    if (dst && sqlite3_close(dst) != SQLITE_OK && rc == 0) rc = err_set(e, ERR_DB, "cannot close the run database copy");
    return rc;
}

/* ====================================================================== */
/* Read-only opening                                                      */
/* ====================================================================== */

/* Errors that mean "this folder cannot be written" rather than "this file
 * is bad": a WAL reader must create or grow the -shm (and maybe -wal)
 * beside the database, which a read-only folder or a full disk refuses. */
static int cannot_write(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_IOERR || rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY || rc == SQLITE_FULL ||
           rc == SQLITE_PERM;
}

/* "file:<path percent-encoded>?immutable=1" (owned by caller). */
static char *immutable_uri(const char *path)
{
    size_t n = strlen(path);
    char *u = xmalloc(3 * n + 32), *o = u;
    o += sprintf(o, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("/._-~", *p))
            *o++ = (char)*p;
        else o += sprintf(o, "%%%02X", *p);
    }
    strcpy(o, "?immutable=1");
    return u;
}

/* Opens path read-only and runs probe (first row only) to make SQLite read
 * the file now: opening is lazy, and the -shm is made at the first read.
 * Returns SQLITE_OK or the SQLite error code; *db is open either way
 * (NULL only when out of memory). */
static int open_probe(const char *name, int flags, const char *probe, sqlite3 **db)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open_v2(name, db, flags | SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) return *db ? sqlite3_extended_errcode(*db) : SQLITE_NOMEM;
    sqlite3_busy_timeout(*db, 5000);
    if (sqlite3_prepare_v2(*db, probe, -1, &st, NULL) != SQLITE_OK) return sqlite3_extended_errcode(*db);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : sqlite3_extended_errcode(*db);
    sqlite3_finalize(st);
    return rc;
}

int rundb_open_snapshot(const char *path, const char *probe, sqlite3 **out, int *immutable, struct err *e)
{
    char *shm = xasprintf("%s-shm", path);
    struct stat sb;
    int had_shm = stat(shm, &sb) == 0;
    sqlite3 *db = NULL;
    int rc = open_probe(path, 0, probe, &db);

    *out = NULL;
    if (immutable) *immutable = 0;
    if (rc != SQLITE_OK && cannot_write(rc)) {
        LOG_DEBUG("%s: %s; reading it as immutable", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        db = NULL;
        /* A failed first read on a full disk leaves the -shm SQLite had just
         * made, 3 bytes, never mapped. It would be harmless (the next writer
         * re-initialises it) but looks like damage: remove ours, never one
         * that was there before or that someone has since sized. */
        if (!had_shm && stat(shm, &sb) == 0 && sb.st_size < 32768) unlink(shm);
        /* Nobody can write this file now (a writer needs the -shm too), so
         * reading it without locks or -shm is safe. Rows still in a -wal
         * (left by a crash) are not seen: logged. */
        char *wal = xasprintf("%s-wal", path);
        if (stat(wal, &sb) == 0 && sb.st_size > 0)
            LOG_WARN("%s: its -wal cannot be read without a -shm here; recent changes in it are not shown", path);
        free(wal);
        char *uri = immutable_uri(path);
        rc = open_probe(uri, SQLITE_OPEN_URI, probe, &db);
        free(uri);
        if (rc == SQLITE_OK && immutable) *immutable = 1;
    }
    free(shm);
    if (rc != SQLITE_OK) {
        if (!db) rc = err_set(e, ERR_INTERNAL, "cannot open %s: out of memory", path);
        else if ((rc & 0xff) == SQLITE_CANTOPEN) rc = err_set(e, ERR_NOT_FOUND, "cannot open %s: %s", path, sqlite3_errmsg(db));
        else rc = rundb_db_error(db, e, "cannot read the database");
        sqlite3_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The checks on a run.db's bytes that need no SQLite: present, not empty,
 * an SQLite header that is ours (the fixed payload fractions, a valid page
 * size) and not shorter than the header says. ERR_DAMAGED, or ERR_IO when
 * the file cannot be read at all. */
static int check_file(const char *path, struct err *e)
{
    unsigned char h[100];
    struct stat sb;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int en = errno;
        /* missing: a stored run's callers call that damage (catalog_open_run) */
        if (en == ENOENT) return err_set(e, ERR_NOT_FOUND, "cannot open %s: no such file", path);
        return err_set(e, ERR_IO, "cannot open %s: %s", path, strerror(en));
    }
    ssize_t n = fstat(fd, &sb) == 0 ? pread(fd, h, sizeof h, 0) : -1;
    close(fd);
    if (n < 0) return err_set(e, ERR_IO, "cannot read %s: %s", path, strerror(errno));
    if (sb.st_size == 0) return damaged(path, e, "its run.db is empty, 0 bytes");
    if (n < (ssize_t)sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
        return damaged(path, e, "its run.db is not an SQLite database: the header is overwritten");
    uint32_t psize = (uint32_t)h[16] << 8 | h[17];
    if (psize == 1) psize = 65536;
    if (psize < 512 || (psize & (psize - 1)) != 0 || h[21] != 64 || h[22] != 32 || h[23] != 32)
        return damaged(path, e, "its run.db has a garbled header");
    /* The page count is valid when the two change counters agree; a live
     * -wal may hold a checkpoint in progress that grows the file. */
    uint32_t pages = be32(h + 28);
    char *wal = xasprintf("%s-wal", path);
    struct stat ws;
    int wal_busy = stat(wal, &ws) == 0 && ws.st_size > 0;
    free(wal);
    if (!wal_busy && pages > 0 && be32(h + 24) == be32(h + 92) && (int64_t)pages * psize > (int64_t)sb.st_size)
        return damaged(path, e, "its run.db is cut short: %lld of %lld bytes", (long long)sb.st_size,
                       (long long)pages * psize);
    return 0;
}

int rundb_open_ro(const char *db_path, sqlite3 **out, struct err *e)
{
    sqlite3 *db = NULL;
    int rc;

    *out = NULL;
    if (check_file(db_path, e) < 0) return e->code;
    /* Reading the two tables every run has had since the first version
     * parses the whole schema and touches the first pages: a garbled
     * schema, or a valid SQLite file that is not a run, shows here. Old
     * runs (tables added later missing) pass and get their 409 from the
     * API that needs the newer table. */
    rc = rundb_open_snapshot(db_path, "SELECT (SELECT count(*) FROM meta), (SELECT count(*) FROM rank)", &db, NULL, e);
    if (rc == ERR_DB && strstr(e->msg, "no such table"))
        return damaged(db_path, e, "its run.db lacks the run tables");
    if (rc < 0) return rc;
    /* On a query worker: stop when the request is over budget or its
     * client has gone (see budget.h). */
    budget_attach(db);
    *out = db;
    return 0;
}

int rundb_info(const char *db_path, json_t **out, struct err *e)
{
    sqlite3 *db;
    sqlite3_stmt *st = NULL, *nt = NULL;
    json_t *ranks = json_array();

    if (rundb_open_ro(db_path, &db, e) != 0) {
        json_decref(ranks);
        return e->code;
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT rank, file, bytes, format, base_ns, t0, t1, device, distributed, stats"
                           " FROM rank ORDER BY rank",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "SELECT level, reason, count, example FROM note WHERE rank=? ORDER BY rowid", -1,
                           &nt, NULL) != SQLITE_OK) {
        err_set(e, ERR_DB, "run database: %s", sqlite3_errmsg(db));
        goto fail;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *notes = json_array();
        int rank = sqlite3_column_int(st, 0);
        sqlite3_bind_int(nt, 1, rank);
        while (sqlite3_step(nt) == SQLITE_ROW) {
            json_array_append_new(
                notes, json_pack("{s:s,s:s,s:I,s:s?}", "level", (const char *)sqlite3_column_text(nt, 0), "reason",
                                 (const char *)sqlite3_column_text(nt, 1), "count",
                                 (json_int_t)sqlite3_column_int64(nt, 2), "example",
                                 (const char *)sqlite3_column_text(nt, 3)));
        }
        sqlite3_reset(nt);
        /* a file name stored before ingest repaired names may not be UTF-8 */
        const char *file = (const char *)sqlite3_column_text(st, 1);
        char *fixed = file && !utf8_valid(file, strlen(file)) ? utf8_dup(file) : NULL;
        json_t *r = json_pack("{s:i,s:s?,s:I,s:s?,s:I}", "rank", rank, "file", fixed ? fixed : file, "bytes",
                              (json_int_t)sqlite3_column_int64(st, 2), "format",
                              (const char *)sqlite3_column_text(st, 3), "base_ns",
                              (json_int_t)sqlite3_column_int64(st, 4));
        json_object_set_new(r, "t0_ns", sqlite3_column_type(st, 5) == SQLITE_NULL
                                            ? json_null()
                                            : json_integer(sqlite3_column_int64(st, 5)));
        json_object_set_new(r, "t1_ns", sqlite3_column_type(st, 6) == SQLITE_NULL
                                            ? json_null()
                                            : json_integer(sqlite3_column_int64(st, 6)));
        json_object_set_new(r, "device", col_json(st, 7));
        json_object_set_new(r, "distributed", col_json(st, 8));
        json_object_set_new(r, "stats", col_json(st, 9));
        free(fixed);
        json_object_set_new(r, "notes", notes);
        json_array_append_new(ranks, r);
    }
    sqlite3_finalize(st);
    sqlite3_finalize(nt);
    st = nt = NULL;
    json_int_t ntracks = 0, nslices = 0;
    if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM track), (SELECT max(id) FROM slice)", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        ntracks = sqlite3_column_int64(st, 0);
        nslices = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    *out = json_pack("{s:o,s:I,s:I}", "ranks", ranks, "tracks", ntracks, "slices", nslices);
    return 0;
fail:
    sqlite3_finalize(st);
    sqlite3_finalize(nt);
    sqlite3_close(db);
    json_decref(ranks);
    return e->code;
}

char *rundb_like_pattern(const char *s)
{
    size_t n = strlen(s), j = 0;
    char *p = xmalloc(2 * n + 3);

    p[j++] = '%';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' || s[i] == '_' || s[i] == '\\') p[j++] = '\\';
        p[j++] = s[i];
    }
    p[j++] = '%';
    p[j] = '\0';
    return p;
}


/* ====================================================================== */
/* Derived tables built aside                                             */
/* ====================================================================== */

static int aside_cancelled(void *arg)
{
    return atomic_load((atomic_int *)arg) != 0;
}

static int attach(sqlite3 *db, const char *path, const char *sql, struct err *e)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return rundb_db_error(db, e, "attach");
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : rundb_db_error(db, e, "attach");
    sqlite3_finalize(st);
    return rc;
}

int rundb_open_scratch(const char *scratch_path, int fresh, sqlite3 **out, struct err *e)
{
    sqlite3 *db = NULL;
    *out = NULL;
    if (fresh) unlink(scratch_path);
    if (sqlite3_open_v2(scratch_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        err_set(e, ERR_DB, "scratch database: %s", db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return e->code;
    }
    if (sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size=16384", NULL, NULL,
                     NULL) != SQLITE_OK) {
        rundb_db_error(db, e, "scratch database");
        sqlite3_close(db);
        return e->code;
    }
    *out = db;
    return 0;
}

static int open_aside(const char *run_path, const char *scratch_path, int fresh, atomic_int *cancel, sqlite3 **out,
                      struct err *e)
{
    sqlite3 *db;
    if (rundb_open_scratch(scratch_path, fresh, out, e) != 0) return e->code;
    db = *out;
    *out = NULL;
    /* before the attach: reading run.db's schema may meet the writer's lock */
    sqlite3_busy_timeout(db, 5000);
    if (attach(db, run_path, "ATTACH ?1 AS run", e) != 0) {
        sqlite3_close(db);
        return e->code;
    }
    if (cancel) sqlite3_progress_handler(db, 1000, aside_cancelled, cancel);
    *out = db;
    return 0;
}

int rundb_open_aside(const char *run_path, const char *scratch_path, atomic_int *cancel, sqlite3 **out,
                     struct err *e)
{
    return open_aside(run_path, scratch_path, 1, cancel, out, e);
}

int rundb_reopen_aside(const char *run_path, const char *scratch_path, atomic_int *cancel, sqlite3 **out,
                       struct err *e)
{
    return open_aside(run_path, scratch_path, 0, cancel, out, e);
}

int rundb_attach_aside(sqlite3 *db, const char *scratch_path, struct err *e)
{
    return attach(db, scratch_path, "ATTACH ?1 AS " RUNDB_ASIDE, e);
}

int rundb_detach_aside(sqlite3 *db, struct err *e)
{
    return sqlite3_exec(db, "DETACH " RUNDB_ASIDE, NULL, NULL, NULL) == SQLITE_OK ? 0
                                                                                   : rundb_db_error(db, e, "detach");
}

int rundb_rank_sizes(sqlite3 *db, int **ranks, int64_t **gpu_ops, int64_t **host_slices, int *n, struct err *e)
{
    sqlite3_stmt *st = NULL;
    int cap = 0, rc, src;
    *ranks = NULL;
    *gpu_ops = *host_slices = NULL;
    *n = 0;
    rc = rundb_prepare(db,
                       "SELECT r.rank, (SELECT coalesce(sum(t.nslices), 0) FROM track t"
                       " WHERE t.rank = r.rank AND t.kind = ?1), (SELECT coalesce(sum(t.nslices), 0) FROM track t"
                       " WHERE t.rank = r.rank AND t.kind != ?1) FROM rank r ORDER BY r.rank",
                       &st, e);
    if (rc) return rc;
    sqlite3_bind_int(st, 1, TB_TRACK_GPU);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            *ranks = xrealloc(*ranks, sizeof **ranks * (size_t)cap);
            *gpu_ops = xrealloc(*gpu_ops, sizeof **gpu_ops * (size_t)cap);
            *host_slices = xrealloc(*host_slices, sizeof **host_slices * (size_t)cap);
        }
        (*ranks)[*n] = sqlite3_column_int(st, 0);
        (*gpu_ops)[*n] = sqlite3_column_int64(st, 1);
        (*host_slices)[*n] = sqlite3_column_int64(st, 2);
        (*n)++;
    }
    if (src != SQLITE_DONE) rc = rundb_db_error(db, e, "run database (ranks)");
    sqlite3_finalize(st);
    if (rc) {
        free(*ranks);
        free(*gpu_ops);
        free(*host_slices);
        *ranks = NULL;
        *gpu_ops = *host_slices = NULL;
        *n = 0;
    }
    return rc;
}

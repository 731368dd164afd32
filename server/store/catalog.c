#define LOG_MODULE "catalog"
#include "base/utf8.h"
#include "store/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/hmap.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "store/catalog_query.h"
#include "store/rundb.h"

#define CATALOG_VERSION 3

/* The file list a swapped-in run folder brings for its catalog row
 * (catalog_swap_run). In DATA/runs/<id>/ it means "the row may still hold
 * the old list": present there only between a swap's rename and the end of
 * its row update, or after a crash in between. */
#define SWAP_MARKER "catalog-files.json"

/* What catalog_run_damaged said of a run.db with this identity. */
struct damage_memo {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int damaged;
    char msg[sizeof ((struct err *)0)->msg];
};

struct catalog {
    sqlite3 *db;
    pthread_mutex_t mu;
    char *data_dir;
    char *runs_dir;
    char *read_only; /* why the data folder cannot be written; NULL when it can. Set once at open */
    pthread_mutex_t memo_mu; /* guards memo */
    struct hmap memo;        /* run id -> struct damage_memo (catalog_mark_damage) */
};

/* Numbered migrations: entry i brings user_version from i to i+1. */
static const char *const migrations[] = {
    "CREATE TABLE runs(id TEXT PRIMARY KEY, name TEXT NOT NULL, created INTEGER NOT NULL,"
    " status TEXT NOT NULL DEFAULT 'ready', ranks INTEGER, gpu TEXT, bytes INTEGER, events INTEGER,"
    " warnings INTEGER, files TEXT, tags TEXT);"
    "CREATE INDEX runs_created ON runs(created);",
    "CREATE TABLE logdir_seen(path TEXT PRIMARY KEY, size INTEGER, mtime INTEGER, run_id TEXT);",
    /* issue 20: projects, metadata, the trace's own facts, the content hash
     * and the key figures. trace/figures NULL = not computed yet: runs
     * stored before this version, filled in by the backfill
     * (catalog_query.h) once the server runs. */
    "ALTER TABLE runs ADD COLUMN project TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE runs ADD COLUMN meta TEXT NOT NULL DEFAULT '{}';"
    "ALTER TABLE runs ADD COLUMN trace TEXT;"
    "ALTER TABLE runs ADD COLUMN hash TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE runs ADD COLUMN figures TEXT;"
    "CREATE INDEX runs_project ON runs(project, created);"
    "CREATE INDEX runs_hash ON runs(hash);",
};

static int db_fail(struct catalog *c, struct err *e, const char *what)
{
    char w[96];
    snprintf(w, sizeof w, "catalog %s", what);
    return rundb_db_error(c->db, e, w);
}

/* SQLite errors that mean the folder or disk refuses writes (not a bad
 * file): the catalog then opens read-only instead of failing. */
static int cannot_write(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_IOERR || rc == SQLITE_CANTOPEN || rc == SQLITE_READONLY || rc == SQLITE_FULL ||
           rc == SQLITE_PERM;
}

static int migrate(struct catalog *c, struct err *e)
{
    sqlite3_stmt *st;
    int ver = 0;
    if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) return db_fail(c, e, "open");
    if (sqlite3_step(st) == SQLITE_ROW) ver = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (ver > CATALOG_VERSION)
        return err_set(e, ERR_DB, "the catalog was written by a newer traceboard (version %d)", ver);
    for (; ver < CATALOG_VERSION; ver++) {
        char pragma[64];
        char *msg = NULL;
        snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d", ver + 1);
        if (sqlite3_exec(c->db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(c->db, migrations[ver], NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(c->db, pragma, NULL, NULL, &msg) != SQLITE_OK ||
            sqlite3_exec(c->db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
            err_set(e, cannot_write(sqlite3_errcode(c->db)) ? ERR_NOSPACE : ERR_DB, "catalog migration %d: %s", ver + 1,
                    msg ? msg : "?");
            sqlite3_free(msg);
            sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
            return e->code;
        }
    }
    return 0;
}

/* Removes run folders without a catalog row: what a crash between moving a
 * finished run into place and inserting its row leaves behind. */
static void clean_orphans(struct catalog *c)
{
    DIR *d = opendir(c->runs_dir);
    struct dirent *de;
    sqlite3_stmt *st;
    if (!d) return;
    if (sqlite3_prepare_v2(c->db, "SELECT 1 FROM runs WHERE id=?", -1, &st, NULL) != SQLITE_OK) {
        closedir(d);
        return;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') continue;
        sqlite3_bind_text(st, 1, de->d_name, -1, SQLITE_STATIC);
        int step = sqlite3_step(st);
        sqlite3_reset(st);
        /* Only a clean "no such row" proves an orphan: a row, or an error
         * (busy, I/O), keeps the folder. */
        if (step != SQLITE_DONE) continue;
        char *p = xasprintf("%s/%s", c->runs_dir, de->d_name);
        struct err e;
        LOG_WARN("removing %s: a run folder without a catalog entry (interrupted ingest)", p);
        if (fsutil_rmtree(p, &e) != 0) LOG_WARN("%s", e.msg);
        free(p);
    }
    sqlite3_finalize(st);
    closedir(d);
}

static int update_files(struct catalog *c, const char *id, const char *text, struct err *e);

/* Finishes the swaps (catalog_swap_run) that a crash cut off between their
 * rename and their row update: the folder in runs/ is already the new run,
 * so the row takes the file list its marker brings. Idempotent. */
static void finish_swaps(struct catalog *c)
{
    DIR *d = opendir(c->runs_dir);
    struct dirent *de;
    if (!d) return;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !catalog_id_valid(de->d_name)) continue;
        char *marker = xasprintf("%s/%s/" SWAP_MARKER, c->runs_dir, de->d_name);
        if (fsutil_file_size(marker) < 0) {
            free(marker);
            continue;
        }
        json_error_t jerr;
        json_t *files = json_load_file(marker, 0, &jerr);
        char *text = json_is_array(files) ? json_dumps(files, JSON_COMPACT) : NULL;
        struct err e;
        int rc = text    ? update_files(c, de->d_name, text, &e)
                 : files ? err_set(&e, ERR_DB, "%s: not a JSON array", marker)
                         : err_set(&e, ERR_DB, "%s: %s", marker, jerr.text);
        if (rc == 0) LOG_WARN("run %s: finished a change of its ranks cut off by a restart", de->d_name);
        if (rc == 0 || rc == ERR_NOT_FOUND) {
            /* done, or a deleted run's folder (clean_orphans removes it) */
            if (unlink(marker) != 0) LOG_WARN("cannot remove %s: %s", marker, strerror(errno));
        } else {
            LOG_WARN("run %s: cannot finish a change of its ranks: %s", de->d_name, e.msg);
        }
        json_decref(files);
        free(text);
        free(marker);
    }
    closedir(d);
}

/* Why dir cannot take a new file, or NULL when it can (static text). A
 * probe file is created, written (64 KiB, synced: a disk with a few blocks
 * left is as full as one with none) and removed; the start-up writes
 * (catalog migrations, sweeps) are thus never half done on a folder that
 * refuses them. */
static const char *folder_unwritable(const char *dir)
{
    static const char rofs[] = "the data folder is on a read-only file system";
    static const char perm[] = "the data folder is read-only (no permission to write in it)";
    static const char full[] = "the disk holding the data folder is full";
    struct statvfs vfs;
    if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY)) return rofs;
    char *path = xasprintf("%s/.write-probe-XXXXXX", dir);
    int fd = mkstemp(path), en = errno;
    const char *why = NULL;
    if (fd < 0) {
        why = en == EROFS ? rofs : en == ENOSPC || en == EDQUOT ? full : en == EACCES || en == EPERM ? perm : NULL;
        if (!why) LOG_WARN("cannot create a file in %s: %s", dir, strerror(en));
    } else {
        static const char zeros[4096];
        for (int i = 0; i < 16 && !why; i++)
            if (write(fd, zeros, sizeof zeros) != (ssize_t)sizeof zeros) why = full;
        if (!why && fsync(fd) != 0 && (errno == ENOSPC || errno == EDQUOT)) why = full;
        close(fd);
        unlink(path);
    }
    free(path);
    return why;
}

/* The writable open: creates the file if needed, WAL, migrations.
 * ERR_NOSPACE when the folder refuses the writes. */
static int open_rw(struct catalog *c, const char *path, struct err *e)
{
    char *msg = NULL;
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) !=
        SQLITE_OK) {
        int code = c->db && cannot_write(sqlite3_errcode(c->db)) ? ERR_NOSPACE : ERR_IO;
        return err_set(e, code, "cannot open %s: %s", path, c->db ? sqlite3_errmsg(c->db) : "out of memory");
    }
    sqlite3_busy_timeout(c->db, 5000);
    if (sqlite3_exec(c->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;", NULL,
                     NULL, &msg) != SQLITE_OK) {
        int code = cannot_write(sqlite3_errcode(c->db)) ? ERR_NOSPACE : ERR_DB;
        err_set(e, code, "cannot open %s: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        return code;
    }
    return migrate(c, e);
}

/* The read-only open: the stored catalog as it is (no migration: a
 * version-1 catalog lacks only the --logdir table, and --logdir is off), or
 * an empty one in memory when there is none yet. */
static int open_ro(struct catalog *c, const char *path, struct err *e)
{
    struct stat sb;
    int ver = 0;
    if (stat(path, &sb) == 0 && sb.st_size > 0) {
        if (rundb_open_snapshot(path, "PRAGMA user_version", &c->db, NULL, e) < 0) return err_prefix(e, "catalog");
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(c->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) return db_fail(c, e, "open");
        if (sqlite3_step(st) == SQLITE_ROW) ver = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        if (ver > CATALOG_VERSION)
            return err_set(e, ERR_DB, "the catalog was written by a newer traceboard (version %d)", ver);
        if (ver >= 1) {
            if (ver < CATALOG_VERSION) LOG_WARN("catalog version %d served as it is (no migration while read-only)", ver);
            /* a temporary view (searched before main) lends the columns
             * of version 3 to a catalog that lacks them */
            if (ver < 3 && sqlite3_exec(c->db,
                                        "CREATE TEMP VIEW runs AS SELECT *, '' AS project, '{}' AS meta,"
                                        " NULL AS trace, '' AS hash, NULL AS figures FROM main.runs",
                                        NULL, NULL, NULL) != SQLITE_OK)
                return db_fail(c, e, "open");
            return 0;
        }
        sqlite3_close(c->db);
        c->db = NULL;
    }
    /* nothing stored yet: an empty catalog that lives in memory */
    if (sqlite3_open_v2(":memory:", &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK)
        return err_set(e, ERR_INTERNAL, "cannot open an in-memory catalog");
    return migrate(c, e);
}

int catalog_open(const char *data_dir, struct catalog **out, struct err *e)
{
    struct catalog *c = xcalloc(1, sizeof *c);
    struct stat sb;
    const char *why;

    c->data_dir = xstrdup(data_dir);
    c->runs_dir = xasprintf("%s/runs", data_dir);
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->memo_mu, NULL);
    hmap_init(&c->memo, sizeof(struct damage_memo), 64);
    /* A folder that exists but cannot take runs/ is served read-only. */
    if (fsutil_mkdirs(c->runs_dir, e) != 0 && !(stat(data_dir, &sb) == 0 && S_ISDIR(sb.st_mode))) {
        catalog_close(c);
        return e->code;
    }
    char *path = xasprintf("%s/catalog.db", data_dir);
    char *shm = xasprintf("%s-shm", path);
    int had_shm = stat(shm, &sb) == 0;
    why = folder_unwritable(data_dir);
    if (!why && open_rw(c, path, e) != 0) {
        if (e->code != ERR_NOSPACE) {
            free(path);
            free(shm);
            catalog_close(c);
            return e->code;
        }
        /* The probe passed but SQLite could not write (e.g. its files
         * are read-only while the folder is not). */
        LOG_WARN("%s", e->msg);
        why = "the catalog cannot be written";
        sqlite3_close(c->db);
        c->db = NULL;
        /* A 3-byte -shm is what a failed first read leaves on a full disk:
         * never mapped, so no one else is using it. */
        if (!had_shm && stat(shm, &sb) == 0 && sb.st_size < 32768) unlink(shm);
    }
    free(shm);
    if (why) {
        c->read_only = xstrdup(why);
        LOG_WARN("serving %s read-only: %s", data_dir, why);
        if (open_ro(c, path, e) != 0) {
            free(path);
            catalog_close(c);
            return e->code;
        }
        free(path);
        *out = c;
        return 0;
    }
    free(path);
    /* An ingest in another process (or this one) may be between moving its
     * run into place and cataloguing it: sweep only when none is running. */
    int lock;
    struct err le;
    int lrc = fsutil_lock_data(data_dir, 1, &lock, &le);
    if (lrc == 0) {
        finish_swaps(c);
        clean_orphans(c);
        fsutil_unlock(lock);
    } else if (lrc == 1) {
        LOG_INFO("an ingest is running on %s: orphan sweep skipped", data_dir);
    }
    *out = c;
    return 0;
}

sqlite3 *catalog_lock(struct catalog *c)
{
    pthread_mutex_lock(&c->mu);
    return c->db;
}

void catalog_unlock(struct catalog *c)
{
    pthread_mutex_unlock(&c->mu);
}

const char *catalog_read_only(const struct catalog *c)
{
    return c->read_only;
}

int catalog_check_writable(const struct catalog *c, struct err *e)
{
    if (!c->read_only) return 0;
    return err_set(e, ERR_READ_ONLY,
                   "the server is read-only: %s. Stored runs are served, but nothing can be uploaded, changed or "
                   "deleted until the folder can be written and the server is restarted",
                   c->read_only);
}

void catalog_close(struct catalog *c)
{
    if (!c) return;
    if (c->db) sqlite3_close(c->db);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->memo_mu);
    hmap_free(&c->memo, NULL);
    free(c->data_dir);
    free(c->runs_dir);
    free(c->read_only);
    free(c);
}

void catalog_new_id(char out[CATALOG_ID_LEN + 1])
{
    unsigned char b[CATALOG_ID_LEN / 2];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        /* getrandom cannot fail for small sizes after boot; be safe anyway */
        for (size_t i = 0; i < sizeof b; i++) b[i] = (unsigned char)(rand() ^ (int)getpid());
    }
    for (size_t i = 0; i < sizeof b; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
    out[CATALOG_ID_LEN] = '\0';
}

int catalog_id_valid(const char *s)
{
    size_t i;
    if (!s) return 0;
    for (i = 0; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return i == CATALOG_ID_LEN;
}

char *catalog_run_dir(struct catalog *c, const char *id)
{
    return xasprintf("%s/%s", c->runs_dir, id);
}

/* Opens run id's run.db read-only; a stored run without one is damaged
 * (ERR_DAMAGED), like one whose file is garbled. */
static int open_run_db(struct catalog *c, const char *id, sqlite3 **db, struct err *e)
{
    char *path = xasprintf("%s/%s/run.db", c->runs_dir, id);
    int rc = rundb_open_ro(path, db, e);
    free(path);
    if (rc == ERR_NOT_FOUND)
        rc = err_set(e, ERR_DAMAGED,
                     "run %s is damaged (its run.db is missing): delete the run and upload its trace files again", id);
    return rc;
}

int catalog_open_run(struct catalog *c, const char *id, sqlite3 **db, struct err *e)
{
    json_t *row;
    *db = NULL;
    if (catalog_get(c, id, &row, e) < 0) return e->code;
    json_decref(row);
    return open_run_db(c, id, db, e);
}

int catalog_insert(struct catalog *c, const struct catalog_run *r, struct err *e)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (catalog_check_writable(c, e) < 0) return e->code;
    pthread_mutex_lock(&c->mu);
    if (sqlite3_prepare_v2(c->db,
                           "INSERT INTO runs(id,name,created,status,ranks,gpu,bytes,events,warnings,files,tags,"
                           "project,meta,trace,hash,figures) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(c, e, "insert");
        goto out;
    }
    sqlite3_bind_text(st, 1, r->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, r->created);
    sqlite3_bind_text(st, 4, r->status ? r->status : CATALOG_READY, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 5, r->ranks);
    sqlite3_bind_text(st, 6, r->gpu ? r->gpu : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, r->bytes);
    sqlite3_bind_int64(st, 8, r->events);
    sqlite3_bind_int(st, 9, r->warnings);
    sqlite3_bind_text(st, 10, r->files_json ? r->files_json : "[]", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 11, r->tags_json ? r->tags_json : "[]", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 12, r->project ? r->project : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 13, r->meta_json ? r->meta_json : "{}", -1, SQLITE_STATIC);
    if (r->trace_json) sqlite3_bind_text(st, 14, r->trace_json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 15, r->hash ? r->hash : "", -1, SQLITE_STATIC);
    if (r->figures_json) sqlite3_bind_text(st, 16, r->figures_json, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(c, e, "insert");
    sqlite3_finalize(st);
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static json_t *col_json(sqlite3_stmt *st, int i)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    json_t *j = t ? json_loads(t, 0, NULL) : NULL;
    return j ? j : json_array();
}

/* A JSON object column; NULL (not computed yet) or garbled gives null. */
static json_t *col_object(sqlite3_stmt *st, int i, int empty)
{
    const char *t = (const char *)sqlite3_column_text(st, i);
    json_t *j = t ? json_loads(t, 0, NULL) : NULL;
    if (json_is_object(j)) return j;
    json_decref(j);
    return empty ? json_object() : json_null();
}

json_t *catalog_row_json(sqlite3_stmt *st)
{
    const char *id = (const char *)sqlite3_column_text(st, 0);
    const char *name = (const char *)sqlite3_column_text(st, 1);
    /* A name stored before ingest repaired names may not be UTF-8, which
     * jansson refuses: repaired here, the run is still listed. */
    char *fixed = name && !utf8_valid(name, strlen(name)) ? utf8_dup(name) : NULL;
    json_t *o = json_pack("{s:s,s:s,s:I,s:s,s:i,s:s,s:I,s:I,s:i}", "id", id, "name",
                          fixed ? fixed : name ? name : "", "created",
                          (json_int_t)sqlite3_column_int64(st, 2), "status", (const char *)sqlite3_column_text(st, 3),
                          "ranks", sqlite3_column_int(st, 4), "gpu",
                          sqlite3_column_text(st, 5) ? (const char *)sqlite3_column_text(st, 5) : "", "bytes",
                          (json_int_t)sqlite3_column_int64(st, 6), "events", (json_int_t)sqlite3_column_int64(st, 7),
                          "warnings", sqlite3_column_int(st, 8));
    json_object_set_new(o, "files", col_json(st, 9));
    json_object_set_new(o, "tags", col_json(st, 10));
    const char *project = (const char *)sqlite3_column_text(st, 11);
    json_object_set_new(o, "project", project && project[0] ? json_string(project) : json_null());
    json_object_set_new(o, "meta", col_object(st, 12, 1));
    json_object_set_new(o, "trace", col_object(st, 13, 0));
    const char *hash = (const char *)sqlite3_column_text(st, 14);
    json_object_set_new(o, "hash", hash && hash[0] ? json_string(hash) : json_null());
    json_object_set_new(o, "figures", col_object(st, 15, 0));
    char url[64];
    snprintf(url, sizeof url, "./?run=%s", id);
    json_object_set_new(o, "url", json_string(url));
    free(fixed);
    return o;
}

int catalog_run_damaged(struct catalog *c, const char *id, struct err *e)
{
    sqlite3 *db = NULL;
    int rc = open_run_db(c, id, &db, e);
    sqlite3_close(db);
    return rc == ERR_DAMAGED ? rc : 0;
}

/* Sets row's "damaged" (and "damage", the reason) from catalog_run_damaged,
 * remembered while the run.db's inode, size and mtime stay the same: the
 * runs list opens a run's database the first time and after it changed,
 * not at every refresh (a damaging write changes one of them). */
void catalog_mark_damage(struct catalog *c, json_t *row)
{
    const char *id = json_string_value(json_object_get(row, "id"));
    struct err e;
    struct stat sb;
    if (!id || !catalog_id_valid(id)) return;
    char *path = xasprintf("%s/%s/run.db", c->runs_dir, id);
    int known = stat(path, &sb) == 0;
    free(path);
    uint64_t h = hmap_hash_bytes(id, CATALOG_ID_LEN);
    pthread_mutex_lock(&c->memo_mu);
    struct damage_memo *m = known ? hmap_get(&c->memo, h, id, CATALOG_ID_LEN) : NULL;
    int hit = m && m->dev == sb.st_dev && m->ino == sb.st_ino && m->size == sb.st_size &&
              m->mtime.tv_sec == sb.st_mtim.tv_sec && m->mtime.tv_nsec == sb.st_mtim.tv_nsec;
    int damaged = hit ? m->damaged : 0;
    if (hit) snprintf(e.msg, sizeof e.msg, "%s", m->msg);
    pthread_mutex_unlock(&c->memo_mu);
    if (!hit) {
        damaged = catalog_run_damaged(c, id, &e) == ERR_DAMAGED;
        if (known) {
            pthread_mutex_lock(&c->memo_mu);
            m = hmap_put(&c->memo, h, id, CATALOG_ID_LEN, NULL);
            *m = (struct damage_memo){ sb.st_dev, sb.st_ino, sb.st_size, sb.st_mtim, damaged, "" };
            if (damaged) snprintf(m->msg, sizeof m->msg, "%s", e.msg);
            pthread_mutex_unlock(&c->memo_mu);
        }
    }
    json_object_set_new(row, "damaged", json_boolean(damaged));
    if (damaged) json_object_set_new(row, "damage", json_string(e.msg));
}



int catalog_list(struct catalog *c, json_t **out, struct err *e)
{
    return catalog_find(c, NULL, out, e);
}

int catalog_get(struct catalog *c, const char *id, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (!catalog_id_valid(id)) return err_set(e, ERR_NOT_FOUND, "no run with id '%.40s'", id);
    pthread_mutex_lock(&c->mu);
    if (sqlite3_prepare_v2(c->db, "SELECT " CATALOG_RUN_COLS " FROM runs WHERE id=?", -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(c, e, "get");
        goto out;
    }
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) *out = catalog_row_json(st);
    else rc = err_set(e, ERR_NOT_FOUND, "no run with id '%s'", id);
    sqlite3_finalize(st);
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* UPDATE of a run's file list (text: a JSON array). Takes mu unless the
 * caller holds it (locked). */
/* sql: "UPDATE runs SET <column> = ? WHERE id = ?", with text and id. */
static int update_text_mu(struct catalog *c, const char *sql, const char *id, const char *text, int locked,
                          struct err *e)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (catalog_check_writable(c, e) < 0) return e->code;
    if (!locked) pthread_mutex_lock(&c->mu);
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(c, e, "update");
        goto out;
    }
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(c, e, "update");
    else if (sqlite3_changes(c->db) == 0) rc = err_set(e, ERR_NOT_FOUND, "no run with id '%s'", id);
    sqlite3_finalize(st);
out:
    if (!locked) pthread_mutex_unlock(&c->mu);
    return rc;
}

static int update_files_mu(struct catalog *c, const char *id, const char *text, int locked, struct err *e)
{
    return update_text_mu(c, "UPDATE runs SET files = ? WHERE id = ?", id, text, locked, e);
}

static int update_files(struct catalog *c, const char *id, const char *text, struct err *e)
{
    return update_files_mu(c, id, text, 0, e);
}

int catalog_row_deriving(const json_t *run)
{
    const char *status = json_string_value(json_object_get(run, "status"));
    return status && strcmp(status, CATALOG_DERIVING) == 0;
}

int catalog_set_status(struct catalog *c, const char *id, const char *status, struct err *e)
{
    return update_text_mu(c, "UPDATE runs SET status = ? WHERE id = ?", id, status, 0, e);
}

int catalog_set_files(struct catalog *c, const char *id, json_t *files, struct err *e)
{
    if (!catalog_id_valid(id)) return err_set(e, ERR_NOT_FOUND, "no run with id '%.40s'", id);
    if (!json_is_array(files)) return err_set(e, ERR_INVALID, "files must be an array");
    char *text = json_dumps(files, JSON_COMPACT);
    int rc = update_files(c, id, text, e);
    free(text);
    return rc;
}

/* Writes the marker into dir durably: file and folder entry synced, so that
 * after the rename it is there whenever the new folder is. */
static int write_marker(const char *dir, const char *text, struct err *e)
{
    char *path = xasprintf("%s/" SWAP_MARKER, dir);
    int rc, fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        int en = errno;
        rc = err_set(e, fsutil_errno_code(en), "cannot create %s: %s", path, strerror(en));
        free(path);
        return rc;
    }
    rc = fsutil_write_all(fd, text, strlen(text), path, e);
    if (rc == 0 && fsync(fd) != 0) {
        int en = errno;
        rc = err_set(e, fsutil_errno_code(en), "cannot write %s: %s", path, strerror(en));
    }
    close(fd);
    if (rc == 0) rc = fsutil_fsync_path(dir, e);
    free(path);
    return rc;
}

/* fsync of the folder holding path (a rename's two entries live there). */
static void sync_parent(const char *path)
{
    char *p = xstrdup(path), *slash = strrchr(p, '/');
    struct err ignore;
    if (slash && slash != p) {
        *slash = '\0';
        fsutil_fsync_path(p, &ignore);
    }
    free(p);
}

int catalog_swap_run(struct catalog *c, const char *id, const char *new_dir, json_t *files, struct err *e)
{
    if (!catalog_id_valid(id)) return err_set(e, ERR_NOT_FOUND, "no run with id '%.40s'", id);
    if (!json_is_array(files)) return err_set(e, ERR_INVALID, "files must be an array");
    char *text = json_dumps(files, JSON_COMPACT);
    char *dir = catalog_run_dir(c, id);
    char *marker = xasprintf("%s/" SWAP_MARKER, dir);
    int rc = write_marker(new_dir, text, e);
    if (rc) goto out;
    fsutil_crash_point("renumber-staged");
    /* Under mu, so that catalog_get never pairs the new folder with the old
     * list; readers that opened the old run.db keep its inode. */
    pthread_mutex_lock(&c->mu);
    rc = fsutil_exchange(new_dir, dir, e);
    if (rc == 0) {
        sync_parent(dir);
        sync_parent(new_dir);
        fsutil_crash_point("renumber-swapped");
        rc = update_files_mu(c, id, text, 1, e);
        if (rc) {
            /* put the old run back; if even that fails, the marker makes
             * the next start finish the swap instead */
            struct err e2;
            if (fsutil_exchange(new_dir, dir, &e2) != 0)
                LOG_ERROR("run %s: %s (the next start finishes the change)", id, e2.msg);
            sync_parent(dir);
        }
    }
    pthread_mutex_unlock(&c->mu);
    if (rc == 0) {
        fsutil_crash_point("renumber-catalogued");
        /* a marker left behind only makes a restart write the same list again */
        if (unlink(marker) != 0) LOG_WARN("cannot remove %s: %s", marker, strerror(errno));
        else {
            struct err ignore;
            fsutil_fsync_path(dir, &ignore);
        }
    }
out:
    free(text);
    free(dir);
    free(marker);
    return rc;
}

int catalog_update(struct catalog *c, const char *id, const char *name, json_t *tags, struct err *e)
{
    sqlite3_stmt *st;
    int rc = 0;
    char *tags_text = NULL;

    if (!catalog_id_valid(id)) return err_set(e, ERR_NOT_FOUND, "no run with id '%.40s'", id);
    if (catalog_check_writable(c, e) < 0) return e->code;
    if (name && (name[0] == '\0' || strlen(name) > 200))
        return err_set(e, ERR_INVALID, "a run name must have 1 to 200 characters");
    if (tags) {
        size_t i;
        json_t *t;
        if (!json_is_array(tags)) return err_set(e, ERR_INVALID, "tags must be an array of strings");
        if (json_array_size(tags) > 32) return err_set(e, ERR_INVALID, "at most 32 tags");
        json_array_foreach(tags, i, t) {
            if (!json_is_string(t) || json_string_length(t) == 0 || json_string_length(t) > 64)
                return err_set(e, ERR_INVALID, "each tag must be a string of 1 to 64 characters");
        }
        tags_text = json_dumps(tags, JSON_COMPACT);
    }
    pthread_mutex_lock(&c->mu);
    if (sqlite3_prepare_v2(c->db, "UPDATE runs SET name=coalesce(?, name), tags=coalesce(?, tags) WHERE id=?", -1,
                           &st, NULL) != SQLITE_OK) {
        rc = db_fail(c, e, "update");
        goto out;
    }
    if (name) sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (tags_text) sqlite3_bind_text(st, 2, tags_text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(c, e, "update");
    else if (sqlite3_changes(c->db) == 0) rc = err_set(e, ERR_NOT_FOUND, "no run with id '%s'", id);
    sqlite3_finalize(st);
out:
    pthread_mutex_unlock(&c->mu);
    free(tags_text);
    return rc;
}

int catalog_delete(struct catalog *c, const char *id, struct err *e)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (catalog_check_writable(c, e) < 0) return e->code;
    if (!catalog_id_valid(id)) return err_set(e, ERR_NOT_FOUND, "no run with id '%.40s'", id);
    pthread_mutex_lock(&c->mu);
    if (sqlite3_prepare_v2(c->db, "DELETE FROM runs WHERE id=?", -1, &st, NULL) != SQLITE_OK) {
        rc = db_fail(c, e, "delete");
        goto out;
    }
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(c, e, "delete");
    else if (sqlite3_changes(c->db) == 0) rc = err_set(e, ERR_NOT_FOUND, "no run with id '%s'", id);
    sqlite3_finalize(st);
out:
    pthread_mutex_unlock(&c->mu);
    if (rc == 0) {
        /* The row is gone, so the run is invisible; the folder goes next
         * (and is collected at the next start if this fails). */
        char *dir = catalog_run_dir(c, id);
        struct err e2;
        if (fsutil_rmtree(dir, &e2) != 0) LOG_WARN("%s", e2.msg);
        free(dir);
    }
    return rc;
}

int catalog_logdir_seen(struct catalog *c, const char *path, int64_t size, int64_t mtime)
{
    sqlite3_stmt *st;
    int seen = 0;
    pthread_mutex_lock(&c->mu);
    if (sqlite3_prepare_v2(c->db, "SELECT 1 FROM logdir_seen WHERE path=? AND size=? AND mtime=?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, size);
        sqlite3_bind_int64(st, 3, mtime);
        seen = sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&c->mu);
    return seen;
}

int catalog_logdir_mark(struct catalog *c, const char *path, int64_t size, int64_t mtime, const char *run_id,
                        struct err *e)
{
    sqlite3_stmt *st;
    int rc = 0;
    if (catalog_check_writable(c, e) < 0) return e->code;
    pthread_mutex_lock(&c->mu);
    if (sqlite3_prepare_v2(c->db, "INSERT OR REPLACE INTO logdir_seen(path,size,mtime,run_id) VALUES(?,?,?,?)", -1,
                           &st, NULL) != SQLITE_OK) {
        rc = db_fail(c, e, "logdir");
    } else {
        sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, size);
        sqlite3_bind_int64(st, 3, mtime);
        sqlite3_bind_text(st, 4, run_id, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(c, e, "logdir");
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

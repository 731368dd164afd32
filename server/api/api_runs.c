/* api_runs.c — /api/health, /api/runs..., /api/jobs/{n} handlers (see
 * include/api/api_runs.h for the upload state machine). */
#define LOG_MODULE "api"
#include "api/api_runs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/sha256.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "api/api_projects.h"
#include "http/app.h"
#include "http/http.h"
#include "ingest/ingest.h"
#include "ingest/ingest_service.h"
#include "ingest/mpart.h"
#include "store/catalog.h"
#include "store/logstore.h"
#include "store/rundb.h"
#include "store/rundb_stage.h"

#include "base/version.h"
#define NAME_MAX_CHARS 200
#define TAGS_MAX 32
#define TAG_MAX_CHARS 64
#define FIELD_MAX 4096 /* bytes of a multipart text field we keep */

/* ======================================================================== */
/* Validation shared by upload and PATCH                                      */
/* ======================================================================== */

/* Code points in valid UTF-8 s[0..n); -1 if not UTF-8 or it holds control
 * characters (names and tags end up in logs and file listings). */
static long utf8_chars(const char *s, size_t n)
{
    json_t *probe = json_stringn(s, n);
    long count = 0;

    if (!probe) return -1;
    json_decref(probe);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) return -1;
        if ((c & 0xC0) != 0x80) count++;
    }
    return count;
}

static int check_name(const char *s, struct err *e)
{
    long n = utf8_chars(s, strlen(s));

    if (n < 0) return err_set(e, ERR_INVALID, "run name must be UTF-8 text without control characters");
    if (n < 1 || n > NAME_MAX_CHARS)
        return err_set(e, ERR_INVALID, "run name must have 1 to %d characters", NAME_MAX_CHARS);
    return 0;
}

static int check_tag(const char *s, size_t len, struct err *e)
{
    long n = utf8_chars(s, len);

    if (n < 0) return err_set(e, ERR_INVALID, "tags must be UTF-8 text without control characters");
    if (n < 1 || n > TAG_MAX_CHARS) return err_set(e, ERR_INVALID, "tags must have 1 to %d characters", TAG_MAX_CHARS);
    if (memchr(s, ',', len)) return err_set(e, ERR_INVALID, "tags may not contain ','");
    return 0;
}

/* "a, b,,c " -> ["a","b","c"]. OUT *out: new array owned by caller. */
static int parse_tag_list(const char *s, json_t **out, struct err *e)
{
    json_t *arr = json_array();

    while (*s) {
        const char *comma = strchr(s, ','), *end = comma ? comma : s + strlen(s), *b = s;
        while (b < end && (*b == ' ' || *b == '\t')) b++;
        while (end > b && (end[-1] == ' ' || end[-1] == '\t')) end--;
        if (end > b) {
            if (check_tag(b, (size_t)(end - b), e) < 0) {
                json_decref(arr);
                return e->code;
            }
            if (json_array_size(arr) == TAGS_MAX) {
                json_decref(arr);
                return err_set(e, ERR_INVALID, "at most %d tags", TAGS_MAX);
            }
            json_array_append_new(arr, json_stringn(b, (size_t)(end - b)));
        }
        if (!comma) break;
        s = comma + 1;
    }
    *out = arr;
    return 0;
}

/* Trims spaces around a name in place. */
static char *trim(char *s)
{
    size_t n;

    while (*s == ' ' || *s == '\t') s++;
    n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = '\0';
    return s;
}

/* ======================================================================== */
/* Simple handlers                                                            */
/* ======================================================================== */

int api_runs_health(struct http_req *req)
{
    json_t *o = json_object();

    json_object_set_new(o, "ok", json_true());
    json_object_set_new(o, "version", json_string(TRACEBOARD_VERSION));
    /* Open without the token: the page shows its read-only banner from
     * here, and the reason names no path. */
    const char *ro = catalog_read_only(http_req_app(req)->cat);
    json_object_set_new(o, "read_only", json_boolean(ro != NULL));
    if (ro) json_object_set_new(o, "reason", json_string(ro));
    return http_send_json(http_req_conn(req), 200, o);
}

int api_runs_list(struct http_req *req)
{
    struct app *app = http_req_app(req);
    json_t *runs, *o, *keep = json_array();
    struct catalog_filter f;
    struct err e;
    int rc = api_projects_filter(req, &f, keep, &e);

    if (rc == 0) rc = catalog_find(app->cat, &f, &runs, &e);
    json_decref(keep);
    if (rc < 0) return http_send_err(http_req_conn(req), &e);
    o = json_object();
    json_object_set_new(o, "runs", runs);
    json_object_set_new(o, "jobs", ingest_jobs_json(app->ing));
    return http_send_json(http_req_conn(req), 200, o);
}

/* The run's derived stages (rundb_stage.h), or null (a run derived whole,
 * or one that cannot be read: the info says so). */
static json_t *stages(struct app *app, const char *id)
{
    sqlite3 *db = NULL;
    json_t *out = NULL;
    struct err e;
    if (catalog_open_run(app->cat, id, &db, &e) == 0 && rundb_stage_json(db, &out, &e) != 0) out = NULL;
    sqlite3_close(db);
    return out ? out : json_null();
}

int api_runs_get(struct http_req *req)
{
    struct app *app = http_req_app(req);
    const char *id = http_req_param(req, "id");
    json_t *run, *info = NULL;
    char *dir, *db;
    struct err e;

    if (catalog_get(app->cat, id, &run, &e) < 0) return http_send_err(http_req_conn(req), &e);
    dir = catalog_run_dir(app->cat, id);
    db = xasprintf("%s/run.db", dir);
    /* A damaged run db should not hide the run: it can still be renamed,
     * downloaded or deleted. */
    int irc = rundb_info(db, &info, &e);
    if (irc < 0) {
        LOG_WARN("run %s: %s", id, e.msg);
        info = json_null();
    }
    if (irc < 0) irc = catalog_run_damaged(app->cat, id, &e);
    json_object_set_new(run, "damaged", json_boolean(irc == ERR_DAMAGED));
    if (irc == ERR_DAMAGED) json_object_set_new(run, "damage", json_string(e.msg));
    free(db);
    free(dir);
    json_object_set_new(run, "info", info);
    json_object_set_new(run, "stages", stages(app, id));
    return http_send_json(http_req_conn(req), 200, run);
}

/* {"2": 0, "0": 2}: old rank -> new rank; ranks not named keep theirs. The
 * run's ranks are those of its file list. */
static int patch_ranks(struct app *app, const char *id, json_t *ranks, struct err *e)
{
    json_t *run, *f, *v;
    const char *k;
    size_t i, n;
    int rc = 0;
    if (catalog_get(app->cat, id, &run, e) < 0) return e->code;
    json_t *files = json_object_get(run, "files");
    n = json_array_size(files);
    int *from = xcalloc(n ? n : 1, sizeof *from), *to = xcalloc(n ? n : 1, sizeof *to);
    json_array_foreach(files, i, f) from[i] = to[i] = (int)json_integer_value(json_object_get(f, "rank"));
    json_object_foreach(ranks, k, v) {
        char *end;
        long old = strtol(k, &end, 10);
        size_t j = 0;
        if (*k == '\0' || *end != '\0' || !json_is_integer(v)) {
            rc = err_set(e, ERR_INVALID, "ranks: '%.20s' must map a rank number to a rank number", k);
            break;
        }
        while (j < n && from[j] != old) j++;
        if (j == n) {
            rc = err_set(e, ERR_INVALID, "ranks: the run has no rank %ld", old);
            break;
        }
        json_int_t nv = json_integer_value(v);
        to[j] = nv < 0 || nv > 1000000 ? -1 : (int)nv;
    }
    if (rc == 0) rc = ingest_renumber(app->ing, id, from, to, (int)n, e);
    free(from);
    free(to);
    json_decref(run);
    return rc;
}

/* A PATCH that renumbers ranks: the run's derived tables are computed
 * again (seconds for a big run), so it runs on a helper thread while the
 * connection waits, not on an HTTP thread that serves other clients. */
struct patch {
    struct app *app;
    char id[CATALOG_ID_LEN + 1];
    json_t *body; /* owns the strings name, tags and ranks point into */
    const char *name;
    json_t *tags, *ranks;
    int done, rc;
    struct err err;
};

static void patch_free(void *p)
{
    struct patch *pt = p;
    json_decref(pt->body);
    free(pt);
}

static void patch_apply(struct patch *pt)
{
    int rc = 0;
    if (pt->ranks) rc = patch_ranks(pt->app, pt->id, pt->ranks, &pt->err);
    if (rc == 0 && (pt->name || pt->tags)) rc = catalog_update(pt->app->cat, pt->id, pt->name, pt->tags, &pt->err);
    pt->rc = rc;
    pt->done = 1;
}

static void patch_work(struct http_req *req)
{
    patch_apply(http_req_data(req));
}

static int patch_answer(struct http_req *req, struct patch *pt)
{
    struct MHD_Connection *conn = http_req_conn(req);
    json_t *run;
    struct err e;
    if (pt->rc < 0) return http_send_err(conn, &pt->err);
    if (catalog_get(pt->app->cat, pt->id, &run, &e) < 0) return http_send_err(conn, &e);
    return http_send_json(conn, 200, run);
}

int api_runs_patch(struct http_req *req)
{
    struct app *app = http_req_app(req);
    struct MHD_Connection *conn = http_req_conn(req);
    struct patch *pt = http_req_data(req);
    const char *id = http_req_param(req, "id"), *key;
    json_t *body, *val;
    json_error_t jerr;
    struct err e;
    size_t len;
    const char *text = http_req_body(req, &len);
    int rc;

    if (pt) return patch_answer(req, pt); /* back from patch_work */
    if (catalog_check_writable(app->cat, &e) < 0) return http_send_err(conn, &e);
    if (len == 0) return http_send_error(conn, 400, "invalid", "expected a JSON object with name and/or tags");
    body = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!body) return http_send_error(conn, 400, "invalid", "invalid JSON at line %d: %s", jerr.line, jerr.text);
    if (!json_is_object(body)) {
        json_decref(body);
        return http_send_error(conn, 400, "invalid", "expected a JSON object");
    }
    if (!catalog_id_valid(id)) {
        json_decref(body);
        return http_send_error(conn, 404, "not_found", "no run with id '%.40s'", id);
    }
    pt = xcalloc(1, sizeof *pt);
    pt->app = app;
    snprintf(pt->id, sizeof pt->id, "%s", id);
    pt->body = body;
    http_req_own_data(req, pt, patch_free);
    rc = 0;
    json_object_foreach(body, key, val) {
        if (strcmp(key, "name") == 0) {
            if (!json_is_string(val)) rc = err_set(&e, ERR_INVALID, "name must be a string");
            else if ((rc = check_name(json_string_value(val), &e)) == 0) pt->name = json_string_value(val);
        } else if (strcmp(key, "tags") == 0) {
            size_t i;
            json_t *t;
            if (!json_is_array(val)) rc = err_set(&e, ERR_INVALID, "tags must be an array of strings");
            else if (json_array_size(val) > TAGS_MAX) rc = err_set(&e, ERR_INVALID, "at most %d tags", TAGS_MAX);
            json_array_foreach(val, i, t) {
                if (rc < 0) break;
                if (!json_is_string(t)) rc = err_set(&e, ERR_INVALID, "tags must be an array of strings");
                else rc = check_tag(json_string_value(t), json_string_length(t), &e);
            }
            pt->tags = val;
        } else if (strcmp(key, "ranks") == 0) {
            if (!json_is_object(val) || json_object_size(val) == 0)
                rc = err_set(&e, ERR_INVALID, "ranks must be an object {\"old rank\": new rank, ...}");
            pt->ranks = val;
        } else {
            rc = err_set(&e, ERR_INVALID, "unknown field '%.64s' (expected name, tags, ranks)", key);
        }
        if (rc < 0) break;
    }
    if (rc == 0 && !pt->name && !pt->tags && !pt->ranks)
        rc = err_set(&e, ERR_INVALID, "nothing to change: send name, tags and/or ranks");
    if (rc < 0) return http_send_err(conn, &e);
    if (pt->ranks) {
        http_defer(req, patch_work);
        return HTTP_DEFERRED;
    }
    patch_apply(pt); /* a rename or new tags: one quick catalog row */
    return patch_answer(req, pt);
}

int api_runs_delete(struct http_req *req)
{
    struct app *app = http_req_app(req);
    struct err e;

    /* catalog_delete refuses too; checked first so the answer is the same
     * for a run that does not exist */
    if (catalog_check_writable(app->cat, &e) < 0) return http_send_err(http_req_conn(req), &e);
    /* its import still writes the run's folder: deleting it now would leave
     * the import a folder that is gone (a crash's leftovers go at restart) */
    json_t *run;
    if (catalog_get(app->cat, http_req_param(req, "id"), &run, &e) < 0) return http_send_err(http_req_conn(req), &e);
    int deriving = catalog_row_deriving(run);
    json_decref(run);
    if (deriving)
        return http_send_error(http_req_conn(req), 409, "conflict",
                               "this run is still being computed: delete it once it is ready");
    if (catalog_delete(app->cat, http_req_param(req, "id"), &e) < 0) return http_send_err(http_req_conn(req), &e);
    /* its log lines go with it; live lines stay with their project */
    if (logstore_delete_run(app->logs, http_req_param(req, "id"), &e) < 0)
        LOG_WARN("run %s: its log lines stay: %s", http_req_param(req, "id"), e.msg);
    LOG_INFO("run %s deleted", http_req_param(req, "id"));
    return http_send_empty(http_req_conn(req), 204);
}

int api_runs_job(struct http_req *req)
{
    struct app *app = http_req_app(req);
    json_t *job;
    struct err e;

    if (ingest_job_json(app->ing, atoi(http_req_param(req, "n")), &job, &e) < 0)
        return http_send_err(http_req_conn(req), &e);
    return http_send_json(http_req_conn(req), 200, job);
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && strncasecmp(s + n - k, suffix, k) == 0;
}

/* The name a kept trace downloads under: its base name with the extension
 * of what the file is (.json or .sqlite, then .gz when compressed), read
 * from its first bytes and the rank's format, whatever it was uploaded as:
 * a trace sent as "evil.html" must not land on a disk as a page.
 * OUT *type: the matching Content-Type (static). Owned by caller. */
static char *source_name(const char *name, const char *path, const char *format, const char **type)
{
    unsigned char head[16] = { 0 };
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), gz, sqlite;
    char *base = xstrdup(name), *dot, *out;
    const char *ext;
    size_t n = strlen(base);

    if (fd >= 0) {
        if (read(fd, head, sizeof head) < 0) memset(head, 0, sizeof head);
        close(fd);
    }
    gz = head[0] == 0x1f && head[1] == 0x8b;
    sqlite = memcmp(head, "SQLite format 3", 16) == 0 || (format && strcmp(format, "nsys") == 0);
    ext = sqlite ? ".sqlite" : ".json";
    if (ends_with(base, n, ".gz")) base[n -= 3] = '\0';
    if (ends_with(base, n, ext)) base[n - strlen(ext)] = '\0'; /* appended again below */
    else if ((dot = strrchr(base, '.')) != NULL && dot != base) *dot = '\0'; /* another kind's */
    out = xasprintf("%s%s%s", base[0] ? base : "trace", ext, gz ? ".gz" : "");
    free(base);
    *type = gz ? "application/gzip" : sqlite ? "application/vnd.sqlite3" : "application/json";
    return out;
}

int api_runs_source(struct http_req *req)
{
    struct app *app = http_req_app(req);
    struct MHD_Connection *conn = http_req_conn(req);
    const char *id = http_req_param(req, "id"), *rank = http_req_query(req, "rank");
    char prefix[16], *dir, *src, *path = NULL, *name = NULL;
    size_t plen;
    json_t *run;
    struct err e;
    DIR *d;
    struct dirent *de;
    int status;

    if (!rank || !*rank || strlen(rank) > 6 || strspn(rank, "0123456789") != strlen(rank))
        return http_send_error(conn, 400, "invalid", "expected ?rank=N (a rank number)");
    if (catalog_get(app->cat, id, &run, &e) < 0) return http_send_err(conn, &e);
    plen = (size_t)snprintf(prefix, sizeof prefix, "%d-", atoi(rank));
    dir = catalog_run_dir(app->cat, id);
    src = xasprintf("%s/src", dir);
    free(dir);
    d = opendir(src);
    if (!d) {
        free(src);
        return http_send_error(conn, 404, "not_found", "the uploaded files of this run were not kept");
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (strncmp(de->d_name, prefix, plen) != 0 || de->d_name[plen] == '\0') continue;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        path = xasprintf("%s/%s", src, de->d_name);
        name = xstrdup(de->d_name + plen);
        break;
    }
    closedir(d);
    free(src);
    if (!path) {
        json_decref(run);
        return http_send_error(conn, 404, "not_found", "no uploaded file for rank %s", rank);
    }
    {
        const char *format = NULL, *type;
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(run, "files"), i, f) {
            if (json_integer_value(json_object_get(f, "rank")) == atoi(rank))
                format = json_string_value(json_object_get(f, "format"));
        }
        char *shown = source_name(name, path, format, &type);
        status = http_send_file(conn, path, type, shown);
        free(shown);
    }
    json_decref(run);
    free(path);
    free(name);
    return status;
}

/* ======================================================================== */
/* Upload                                                                     */
/* ======================================================================== */

enum part_kind { PART_NONE, PART_FILE, PART_NAME, PART_TAGS, PART_LABEL, PART_OTHER };

struct upload_file {
    char *path; /* inside u->dir */
    char *name; /* cleaned original name */
    uint64_t bytes;
    struct sha256 hash; /* of the bytes so far: the duplicate check costs no second read */
};

struct upload {
    struct app *app;
    char *dir; /* DATA/tmp/upload-XXXXXX, owned */
    struct mpart *mp; /* NULL for a raw body */
    struct upload_file *files;
    int nfiles, capfiles;
    int fd; /* file being written, -1 when none */
    int lock; /* the data folder's shared lock while the upload lives (fsutil.h) */
    uint64_t body_bytes; /* request body bytes seen */
    enum part_kind part;
    char field[FIELD_MAX + 1];
    size_t field_len;
    char *run_name; /* validated, owned */
    json_t *tags;   /* validated array, owned */
    char *project;  /* validated, owned; NULL: none */
    json_t *meta;   /* validated object, owned */
    int duplicate;  /* store it even when the same files are stored */
    int label_bad;  /* ?project or ?meta.K is refused: err says why */
    char label[80]; /* the multipart field a PART_LABEL is */
    int async;
    /* Set by api_runs_create / wait_job. */
    int submitted; /* the job owns the files now */
    int job_id;
    int finished;  /* wait_job ended; rc, err, run_id hold the result */
    int stopped;   /* the server is shutting down: answer 503 */
    int rc;
    struct err err;
    char run_id[CATALOG_ID_LEN + 1];
};

/* Opens a new file for an uploaded trace in u->dir. */
static int open_file(struct upload *u, const char *name, struct err *e)
{
    struct upload_file *f;
    char *path = xasprintf("%s/%d-%s", u->dir, u->nfiles, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

    if (fd < 0) {
        int code = errno == ENOSPC || errno == EDQUOT ? ERR_NOSPACE : ERR_IO;
        err_set(e, code, "saving the upload: %s", strerror(errno));
        LOG_WARN("open %s: %s", path, strerror(errno));
        free(path);
        return code;
    }
    if (u->nfiles == u->capfiles) {
        u->capfiles = u->capfiles ? u->capfiles * 2 : 4;
        u->files = xrealloc(u->files, (size_t)u->capfiles * sizeof *u->files);
    }
    f = &u->files[u->nfiles++];
    f->path = path;
    f->name = xstrdup(name);
    f->bytes = 0;
    sha256_init(&f->hash);
    u->fd = fd;
    return 0;
}

static int close_file(struct upload *u, struct err *e)
{
    struct upload_file *f = &u->files[u->nfiles - 1];
    int fd = u->fd;

    u->fd = -1;
    if (close(fd) != 0) return err_set(e, ERR_IO, "saving the upload: %s", strerror(errno));
    if (f->bytes == 0) return err_set(e, ERR_INVALID, "uploaded file '%s' is empty", f->name);
    return 0;
}

static int file_bytes(struct upload *u, const char *d, size_t n, struct err *e)
{
    u->files[u->nfiles - 1].bytes += n;
    sha256_update(&u->files[u->nfiles - 1].hash, d, n);
    return fsutil_write_all(u->fd, d, n, "saving the upload", e);
}

static int on_part_begin(void *ctx, const struct mpart_part *p, struct err *e)
{
    struct upload *u = ctx;

    u->field_len = 0;
    if (p->filename) {
        u->part = PART_FILE;
        return open_file(u, p->filename, e);
    }
    if (strcmp(p->name, "name") == 0) u->part = PART_NAME;
    else if (strcmp(p->name, "tags") == 0) u->part = PART_TAGS;
    else if (api_projects_is_label(p->name)) {
        u->part = PART_LABEL;
        snprintf(u->label, sizeof u->label, "%s", p->name);
    } else u->part = PART_OTHER;
    return 0;
}

static int on_part_data(void *ctx, const char *d, size_t n, struct err *e)
{
    struct upload *u = ctx;

    switch (u->part) {
    case PART_FILE: return file_bytes(u, d, n, e);
    case PART_NAME:
    case PART_TAGS:
    case PART_LABEL:
        if (u->field_len + n > FIELD_MAX)
            return err_set(e, ERR_INVALID, "form field '%s' is longer than %d bytes",
                           u->part == PART_NAME ? "name" : u->part == PART_TAGS ? "tags" : u->label, FIELD_MAX);
        memcpy(u->field + u->field_len, d, n);
        u->field_len += n;
        return 0;
    default: return 0; /* fields we do not use */
    }
}

static int on_part_end(void *ctx, struct err *e)
{
    struct upload *u = ctx;
    enum part_kind k = u->part;
    char *v;

    u->part = PART_NONE;
    if (k == PART_FILE) return close_file(u, e);
    if (k != PART_NAME && k != PART_TAGS && k != PART_LABEL) return 0;
    if (memchr(u->field, '\0', u->field_len)) return err_set(e, ERR_INVALID, "form field holds a NUL byte");
    u->field[u->field_len] = '\0';
    v = trim(u->field);
    if (k == PART_LABEL) return api_projects_upload_field(u->label, v, &u->project, u->meta, &u->duplicate, e);
    if (k == PART_NAME) {
        if (!*v) return 0; /* an empty name field means "derive it" */
        if (check_name(v, e) < 0) return e->code;
        free(u->run_name);
        u->run_name = xstrdup(v);
    } else {
        json_t *tags;
        if (parse_tag_list(v, &tags, e) < 0) return e->code;
        json_decref(u->tags);
        u->tags = tags;
    }
    return 0;
}

static const struct mpart_callbacks upload_parts = { on_part_begin, on_part_data, on_part_end };

static int upload_begin(struct http_req *req, struct err *e)
{
    struct app *app = http_req_app(req);
    const char *ct = http_req_header(req, "Content-Type");
    const char *qname = http_req_query(req, "name"), *qtags = http_req_query(req, "tags");
    const char *qasync = http_req_query(req, "async"), *qfile = http_req_query(req, "filename");
    char boundary[MPART_BOUNDARY_MAX + 1], clean[MPART_FILENAME_MAX + 1];
    int multipart = 0;
    struct upload *u;

    /* Read-only: refused at the first body chunk (or, for an empty body,
     * by api_runs_create) rather than here, so that the client gets to
     * send its body and then reads the answer instead of a reset. */
    if (catalog_read_only(app->cat)) return 0;
    if (ct && mpart_boundary(ct, boundary, e) == 0) {
        multipart = 1;
    } else if (ct && e->code == ERR_INVALID) {
        return e->code; /* multipart, but a broken boundary */
    } else if (!qfile) {
        /* Any other Content-Type is a raw body: curl --data-binary sends
         * application/x-www-form-urlencoded unless told otherwise, and the
         * importer recognises the content itself. */
        return err_set(e, ERR_INVALID, "a raw upload needs ?filename=<name of the trace file>, "
                                       "e.g. ?filename=rank0.pt.trace.json.gz");
    } else if (mpart_filename_clean(qfile, clean, e) < 0) {
        return e->code;
    }
    if (qname && *qname && check_name(qname, e) < 0) return e->code;

    u = xcalloc(1, sizeof *u);
    u->app = app;
    u->fd = -1;
    u->lock = -1;
    u->async = qasync && (strcmp(qasync, "1") == 0 || strcasecmp(qasync, "true") == 0);
    if (qname && *qname) u->run_name = xstrdup(qname);
    u->meta = json_object();
    u->duplicate = app->cfg.allow_duplicates || api_projects_flag(http_req_query(req, "duplicate"));
    if (qtags && parse_tag_list(qtags, &u->tags, e) < 0) {
        free(u->run_name);
        json_decref(u->meta);
        free(u);
        return e->code;
    }
    http_req_set_data(req, u); /* from here on cleanup frees u */
    /* refused at the first chunk, like a read-only server: the body is
     * drained and the client reads the answer instead of a reset */
    u->label_bad = api_projects_upload_query(req, &u->project, u->meta, &u->err) < 0;
    if (fsutil_lock_data(app->cfg.data_dir, 0, &u->lock, e) != 0) return e->code;
    if (!(u->dir = ingest_upload_dir(&app->cfg, e))) return e->code;
    if (multipart) return mpart_new(boundary, &upload_parts, u, &u->mp, e);
    return open_file(u, clean, e);
}

static int upload_chunk(struct http_req *req, const char *data, size_t n, struct err *e)
{
    struct upload *u = http_req_data(req);

    if (!u) /* only when upload_begin saw a read-only catalog */
        return catalog_check_writable(http_req_app(req)->cat, e) < 0 ? e->code
                                                                     : err_set(e, ERR_INTERNAL, "upload state missing");
    u->body_bytes += n;
    if (u->label_bad) return *e = u->err, e->code;
    if (u->mp) return mpart_feed(u->mp, data, n, e);
    return file_bytes(u, data, n, e);
}

static void upload_cleanup(struct http_req *req)
{
    struct upload *u = http_req_data(req);

    if (!u) return;
    if (u->fd >= 0) close(u->fd);
    mpart_free(u->mp);
    for (int i = 0; i < u->nfiles; i++) {
        if (!u->submitted && unlink(u->files[i].path) != 0 && errno != ENOENT)
            LOG_WARN("unlink %s: %s", u->files[i].path, strerror(errno));
        free(u->files[i].path);
        free(u->files[i].name);
    }
    /* After a submit the job owns the files; the folder goes once empty
     * (sync uploads: the job has ended; async: ingest's tmp sweep). */
    if (u->dir && (!u->submitted || u->finished) && rmdir(u->dir) != 0 && errno != ENOENT && errno != ENOTEMPTY)
        LOG_WARN("rmdir %s: %s", u->dir, strerror(errno));
    free(u->files);
    free(u->dir);
    fsutil_unlock(u->lock);
    free(u->run_name);
    json_decref(u->tags);
    free(u->project);
    json_decref(u->meta);
    free(u);
    http_req_set_data(req, NULL);
}

const struct route_upload api_runs_upload = { upload_begin, upload_chunk, upload_cleanup };

/* Deferred work of a synchronous upload: waits for the job without
 * blocking an HTTP thread. Polls the job's state so that a server shutdown
 * (http_req_stopping) is noticed within a poll interval. */
static void wait_job(struct http_req *req)
{
    struct upload *u = http_req_data(req);
    struct timespec pause = { 0, 20 * 1000 * 1000 };

    for (;;) {
        json_t *job;
        struct err e;
        const char *state;
        int ended;
        if (http_req_stopping(req)) {
            u->stopped = 1;
            u->finished = 1;
            return;
        }
        if (ingest_job_json(u->app->ing, u->job_id, &job, &e) < 0) break; /* gone: ingest_wait says why */
        state = json_string_value(json_object_get(job, "state"));
        ended = state && (strcmp(state, "done") == 0 || strcmp(state, "failed") == 0);
        json_decref(job);
        if (ended) break;
        nanosleep(&pause, NULL);
        if (pause.tv_nsec < 200 * 1000 * 1000) pause.tv_nsec *= 2;
    }
    u->rc = ingest_wait(u->app->ing, u->job_id, u->run_id, &u->err);
    u->finished = 1;
}

static int answer_finished(struct http_req *req, struct upload *u)
{
    struct MHD_Connection *conn = http_req_conn(req);
    json_t *run;
    struct err e;

    if (u->stopped)
        return http_send_error(conn, 503, "unavailable",
                               "the server is shutting down; import job %d may still complete", u->job_id);
    if (u->rc < 0) return http_send_err(conn, &u->err);
    if (catalog_get(u->app->cat, u->run_id, &run, &e) < 0) {
        LOG_WARN("run %s imported but not readable: %s", u->run_id, e.msg);
        run = json_object();
        json_object_set_new(run, "id", json_string(u->run_id));
    }
    json_object_set_new(run, "url", json_sprintf("./?run=%s", u->run_id));
    return http_send_json(conn, 201, run);
}

int api_runs_create(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct upload *u = http_req_data(req);
    struct ingest_file *files;
    struct ingest_request rq;
    struct err e;
    int rc;
    json_t *o;

    if (!u && catalog_check_writable(http_req_app(req)->cat, &e) < 0) return http_send_err(conn, &e);
    if (!u) return http_send_error(conn, 500, "internal", "upload state missing");
    if (u->finished) return answer_finished(req, u);
    if (u->label_bad) return http_send_err(conn, &u->err);
    if (u->body_bytes == 0)
        return http_send_error(conn, 400, "invalid",
                               "empty upload: send multipart/form-data with one file part per rank, or the "
                               "raw file with ?filename=");
    if (u->mp && mpart_finish(u->mp, &e) < 0) return http_send_err(conn, &e);
    if (!u->mp && u->fd >= 0 && close_file(u, &e) < 0) return http_send_err(conn, &e);
    if (u->nfiles == 0)
        return http_send_error(conn, 400, "invalid",
                               "no trace file in the upload: send multipart/form-data with one file part "
                               "per rank, or the raw file with ?filename=");

    char (*hexes)[SHA256_HEX_LEN + 1] = xcalloc((size_t)u->nfiles, sizeof *hexes), hash[SHA256_HEX_LEN + 1], dup[CATALOG_ID_LEN + 1];
    for (int i = 0; i < u->nfiles; i++) sha256_hex(&u->files[i].hash, hexes[i]);
    sha256_of_hashes(hexes, u->nfiles, hash);
    free(hexes);
    if (!u->duplicate && catalog_find_hash(u->app->cat, hash, dup)) return api_projects_send_duplicate(conn, dup);
    files = xcalloc((size_t)u->nfiles, sizeof *files);
    for (int i = 0; i < u->nfiles; i++) {
        files[i].path = u->files[i].path;
        files[i].name = u->files[i].name;
        files[i].owned = 1;
    }
    rq.run_name = u->run_name;
    rq.files = files;
    rq.nfiles = u->nfiles;
    rq.tags = u->tags;
    struct ingest_labels labels = { u->project, u->meta, hash, 0 }; /* duplicates: checked above */
    rc = ingest_submit_labeled(u->app->ing, &rq, &labels, &u->job_id, &e);
    free(files);
    if (rc < 0) return http_send_err(conn, &e);
    u->submitted = 1;
    LOG_INFO("upload of %d file(s) queued as job %d", u->nfiles, u->job_id);

    if (u->async) {
        o = json_object();
        json_object_set_new(o, "job", json_integer(u->job_id));
        json_object_set_new(o, "url", json_sprintf("./?job=%d", u->job_id));
        return http_send_json(conn, 202, o);
    }
    http_defer(req, wait_job);
    return HTTP_DEFERRED;
}

/* api_logs.c — a run's job log over HTTP (see include/api/api_logs.h). */
#define LOG_MODULE "api"
#include "api/api_logs.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "http/app.h"
#include "http/http.h"
#include "http/qparam.h"
#include "ingest/logparse.h"
#include "store/catalog.h"
#include "store/rundb.h"

#define LIMIT_DEFAULT 1000
#define LIMIT_MAX 10000

void api_logs_batch_free(struct api_logs_batch *b)
{
    for (size_t i = 0; i < b->n; i++) free(b->fields[i]);
    free(b->fields);
    free(b->v);
    if (b->parsed) logparse_free(b->parsed);
    free(b->parsed);
    memset(b, 0, sizeof *b);
}

int api_logs_parse(struct http_req *req, const char *text, size_t len, int rank, struct api_logs_batch *b,
                   struct err *e)
{
    int tz = 0;
    long long r = -1;
    memset(b, 0, sizeof *b);
    if (req) {
        const char *tzs = qparam_get(req, "tz");
        if (tzs && logparse_tz(tzs, &tz, e) < 0) return e->code;
        if (qparam_int(req, "rank", -1, 0, 1000000, &r, e) < 0) return e->code;
    }
    if (rank >= 0) r = rank;
    struct logparse_result *p = xcalloc(1, sizeof *p);
    if (logparse_parse(text, len, tz, p, e) < 0) {
        free(p);
        return e->code;
    }
    b->parsed = p;
    if (p->n == 0) {
        err_set(e, ERR_INVALID,
                "no line starts with a timestamp (ISO-8601, unix seconds/ms/µs/ns, or a JSON object with \"ts\")");
        api_logs_batch_free(b);
        return e->code;
    }
    b->n = p->n;
    b->skipped = p->skipped;
    b->truncated = p->truncated;
    b->v = xcalloc(p->n, sizeof *b->v);
    b->fields = xcalloc(p->n, sizeof *b->fields);
    for (size_t i = 0; i < p->n; i++) {
        const struct logparse_entry *en = &p->v[i];
        b->fields[i] = en->fields ? json_dumps(en->fields, JSON_COMPACT) : NULL;
        b->v[i] = (struct logstore_line){ en->ts_ns, r >= 0 ? (int)r : en->rank, en->text, b->fields[i], en->job };
    }
    return 0;
}

int api_logs_post(struct http_req *req)
{
    struct app *app = http_req_app(req);
    const char *id = http_req_param(req, "id");
    struct api_logs_batch b;
    size_t len;
    const char *body = http_req_body(req, &len);
    json_t *run;
    struct err e;

    if (catalog_check_writable(app->cat, &e) < 0 || catalog_get(app->cat, id, &run, &e) < 0)
        return http_send_err(http_req_conn(req), &e);
    json_decref(run);
    if (api_logs_parse(req, body, len, -1, &b, &e) < 0 || logstore_add(app->logs, id, NULL, NULL, b.v, b.n, NULL, &e) < 0) {
        api_logs_batch_free(&b);
        return http_send_err(http_req_conn(req), &e);
    }
    LOG_INFO("run %s: %zu log lines stored", id, b.n);
    json_t *o = json_pack("{s:I,s:I,s:I}", "stored", (json_int_t)b.n, "skipped", (json_int_t)b.skipped,
                          "truncated_bytes", (json_int_t)b.truncated);
    api_logs_batch_free(&b);
    return http_send_json(http_req_conn(req), 201, o);
}

/* The base_ns of each rank of the run (rank index -> base), from its
 * run.db; n = 0 when it cannot be read (then lines are on unix µs). */
struct bases {
    int n;
    int rank[64];
    int64_t base[64];
};

static void read_bases(struct app *app, const char *id, struct bases *bs)
{
    char *dir = catalog_run_dir(app->cat, id), *db = xasprintf("%s/run.db", dir);
    json_t *info = NULL, *r;
    size_t i;
    struct err e;
    bs->n = 0;
    if (rundb_info(db, &info, &e) == 0) {
        json_array_foreach(json_object_get(info, "ranks"), i, r) {
            if (bs->n == (int)(sizeof bs->rank / sizeof bs->rank[0])) break;
            bs->rank[bs->n] = (int)json_integer_value(json_object_get(r, "rank"));
            bs->base[bs->n++] = json_integer_value(json_object_get(r, "base_ns"));
        }
    } else {
        LOG_WARN("run %s: %s", id, e.msg);
    }
    json_decref(info);
    free(db);
    free(dir);
}

/* base_ns of rank, or of the first rank when rank < 0 or unknown. */
static int64_t base_of(const struct bases *bs, int rank)
{
    for (int i = 0; i < bs->n; i++)
        if (bs->rank[i] == rank) return bs->base[i];
    return bs->n ? bs->base[0] : 0;
}

struct collect {
    json_t *lines;
    const struct bases *bs;
    int rank; /* asked, or -1 */
    int n, limit;
    int64_t cut_ts, cut_id; /* the limit-th line: the next page starts after it */
};

static int add_line(void *arg, int64_t id, int64_t ts_ns, int rank, const char *text, const char *fields,
                    const char *job)
{
    struct collect *c = arg;
    int64_t base = base_of(c->bs, rank >= 0 ? rank : c->rank);
    json_t *f = fields ? json_loads(fields, 0, NULL) : NULL;
    json_t *o = json_pack("{s:I,s:f,s:s,s:o,s:o,s:b}", "id", (json_int_t)id, "ts_us", (double)(ts_ns - base) / 1000.0,
                          "text", text ? text : "",
                          "fields", f ? f : json_object(), "rank", rank >= 0 ? json_integer(rank) : json_null(),
                          "live", job != NULL);
    json_array_append_new(c->lines, o);
    if (++c->n == c->limit) {
        c->cut_ts = ts_ns;
        c->cut_id = id;
    }
    return 0;
}

/* ?after= is "<ts_ns>.<id>" as given in "next". */
static int parse_after(const char *v, int64_t *ts, int64_t *id)
{
    long long a, b;
    char tail;
    if (sscanf(v, "%lld.%lld%c", &a, &b, &tail) != 2 || b < 0) return 0;
    *ts = a;
    *id = b;
    return 1;
}

int api_logs_get(struct http_req *req)
{
    struct app *app = http_req_app(req);
    const char *id = http_req_param(req, "id");
    struct err e;
    json_t *run;
    long long rank, limit;
    int64_t start = 0, end = 0;
    int have_start = 0, have_end = 0;

    if (catalog_get(app->cat, id, &run, &e) < 0) return http_send_err(http_req_conn(req), &e);
    if (qparam_int(req, "rank", -1, 0, 1000000, &rank, &e) < 0 ||
        qparam_int(req, "limit", LIMIT_DEFAULT, 1, LIMIT_MAX, &limit, &e) < 0 ||
        qparam_us(req, "start", &start, &have_start, &e) < 0 || qparam_us(req, "end", &end, &have_end, &e) < 0) {
        json_decref(run);
        return http_send_err(http_req_conn(req), &e);
    }
    struct bases bs;
    read_bases(app, id, &bs);
    int known = rank < 0 || bs.n == 0;
    for (int i = 0; i < bs.n && !known; i++) known = bs.rank[i] == rank;
    if (!known) {
        json_decref(run);
        return http_send_error(http_req_conn(req), 404, "not_found", "run %s has no rank %lld", id, rank);
    }
    int64_t base = base_of(&bs, (int)rank);
    /* the run's job: catalog "project" and "meta"."job_id" (a number is read as its digits) */
    json_t *meta = json_object_get(run, "meta"), *jid = json_object_get(meta, "job_id");
    const char *project = json_string_value(json_object_get(run, "project"));
    char jobnum[32];
    const char *job = json_string_value(jid);
    if (json_is_integer(jid)) {
        snprintf(jobnum, sizeof jobnum, "%lld", (long long)json_integer_value(jid));
        job = jobnum;
    }
    struct logstore_query q = { id, project && job ? project : NULL, project && job ? job : NULL, (int)rank,
                                have_start ? start + base : INT64_MIN, have_end ? end + base : INT64_MAX,
                                qparam_get(req, "q"), 0, -1, (int)limit + 1 };
    const char *after = qparam_get(req, "after");
    if (after && !parse_after(after, &q.after_ts, &q.after_id)) {
        json_decref(run);
        return http_send_error(http_req_conn(req), 400, "invalid", "after must be the \"next\" of a previous answer");
    }
    struct collect c = { json_array(), &bs, (int)rank, 0, (int)limit, 0, 0 };
    int rc = logstore_query(app->logs, &q, add_line, &c, &e);
    json_decref(run);
    if (rc < 0) {
        json_decref(c.lines);
        return http_send_err(http_req_conn(req), &e);
    }
    json_t *next = json_null();
    if (c.n > limit) {
        /* one more than asked was read: the page ends before it */
        json_array_remove(c.lines, (size_t)limit);
        next = json_sprintf("%" PRId64 ".%" PRId64, c.cut_ts, c.cut_id);
    }
    json_t *o = json_pack("{s:o,s:o,s:I,s:s}", "lines", c.lines, "next", next, "base_ns", (json_int_t)base, "clock",
                          bs.n && base ? "trace" : "unix");
    return http_send_json(http_req_conn(req), 200, o);
}

/* api_live.c — live job lines posted and streamed (see include/api/api_live.h). */
#define LOG_MODULE "api"
#include "api/api_live.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_logs.h"
#include "base/log.h"
#include "base/sbuf.h"
#include "base/xmalloc.h"
#include "http/app.h"
#include "http/http.h"
#include "http/http_stream.h"
#include "http/qparam.h"
#include "store/catalog.h"
#include "store/logstore.h"

#define JOB_MAX 128
#define BACKLOG_DEFAULT 200
#define PULL_MAX 500 /* lines per wake; the stream pulls again right away */

static int job_ok(const char *job, struct err *e)
{
    if (!job) return 0;
    size_t n = strlen(job);
    if (n == 0 || n > JOB_MAX) return err_set(e, ERR_INVALID, "job must be 1 to %d bytes", JOB_MAX);
    return 0;
}

int api_live_post(struct http_req *req)
{
    struct app *app = http_req_app(req);
    const char *project = http_req_param(req, "project"), *job = qparam_get(req, "job");
    struct api_logs_batch b;
    size_t len;
    const char *body = http_req_body(req, &len);
    int64_t last = 0;
    struct err e;

    if (catalog_check_writable(app->cat, &e) < 0 || job_ok(job, &e) < 0 ||
        api_logs_parse(req, body, len, -1, &b, &e) < 0)
        return http_send_err(http_req_conn(req), &e);
    for (size_t i = 0; i < b.n; i++) {
        if (!job && !b.v[i].job) {
            api_logs_batch_free(&b);
            return http_send_error(http_req_conn(req), 400, "invalid",
                                   "line %zu has no job id: give ?job= or a \"job_id\" field", i + 1);
        }
    }
    if (logstore_add(app->logs, NULL, project, job, b.v, b.n, &last, &e) < 0) {
        api_logs_batch_free(&b);
        return http_send_err(http_req_conn(req), &e);
    }
    http_stream_notify(req, project);
    json_t *o = json_pack("{s:I,s:I,s:I,s:I}", "stored", (json_int_t)b.n, "skipped", (json_int_t)b.skipped,
                          "truncated_bytes", (json_int_t)b.truncated, "last_id", (json_int_t)last);
    api_logs_batch_free(&b);
    return http_send_json(http_req_conn(req), 201, o);
}

struct follow {
    struct logstore *ls;
    char *project, *job;
    struct sbuf *out;
    int64_t cursor;
};

static void follow_free(void *arg)
{
    struct follow *f = arg;
    free(f->project);
    free(f->job);
    free(f);
}

static int add_event(void *arg, int64_t id, int64_t ts_ns, int rank, const char *text, const char *fields,
                     const char *job)
{
    struct follow *f = arg;
    json_t *fj = fields ? json_loads(fields, 0, NULL) : NULL;
    json_t *o = json_pack("{s:I,s:s?,s:o,s:f,s:s,s:o}", "id", (json_int_t)id, "job", job,
                          "rank", rank >= 0 ? json_integer(rank) : json_null(), "ts_us", (double)ts_ns / 1000.0,
                          "text", text ? text : "", "fields", fj ? fj : json_object());
    char *data = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    /* JSON text has no raw newline, so one data: line carries it */
    sbuf_printf(f->out, "id: %lld\nevent: line\ndata: %s\n\n", (long long)id, data ? data : "{}");
    free(data);
    f->cursor = id;
    return 0;
}

static int pull(void *arg, int64_t *cursor, struct sbuf *out)
{
    struct follow *f = arg;
    struct err e;
    f->out = out;
    f->cursor = *cursor;
    if (logstore_live_after(f->ls, f->project, f->job, *cursor, PULL_MAX, add_event, f, &e) < 0) {
        LOG_WARN("live stream of %s: %s", f->project, e.msg);
        return -1;
    }
    *cursor = f->cursor;
    return 0;
}

int api_live_get(struct http_req *req)
{
    struct app *app = http_req_app(req);
    const char *project = http_req_param(req, "project"), *job = qparam_get(req, "job");
    const char *last_event = http_req_header(req, "Last-Event-ID");
    long long backlog, resume = -1;
    int64_t cursor = 0;
    struct err e;

    if (job_ok(job, &e) < 0 || qparam_int(req, "backlog", BACKLOG_DEFAULT, 0, 10000, &backlog, &e) < 0)
        return http_send_err(http_req_conn(req), &e);
    /* a browser reconnecting says where it stopped */
    if (last_event && qparam_parse_int(last_event, 0, INT64_MAX, &resume) < 0) resume = -1;
    if (resume >= 0) cursor = resume;
    else if (logstore_live_cursor(app->logs, project, job, (int)backlog, &cursor, &e) < 0)
        return http_send_err(http_req_conn(req), &e);
    struct follow *f = xcalloc(1, sizeof *f);
    f->ls = app->logs;
    f->project = xstrdup(project);
    f->job = job ? xstrdup(job) : NULL;
    return http_stream_open(req, project, cursor, pull, f, follow_free);
}

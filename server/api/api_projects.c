/* api_projects.c — projects, trends and the runs list's filters (see
 * include/api/api_projects.h). */
#define LOG_MODULE "api"
#include "api/api_projects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/xmalloc.h"
#include "http/app.h"
#include "http/http.h"

/* "2026-11-26" (UTC midnight; end=1: the next midnight, so the day is
 * included) or unix seconds. -1 when neither. */
static long long parse_date(const char *s, int end)
{
    int y, m, d, n = 0;
    if (strspn(s, "0123456789") == strlen(s) && s[0] && strlen(s) <= 12) return atoll(s);
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &n) != 3 || s[n] != '\0' || m < 1 || m > 12 || d < 1 || d > 31)
        return -1;
    struct tm tm = { 0 };
    tm.tm_year = y - 1900;
    tm.tm_mon = m - 1;
    tm.tm_mday = d;
    return (long long)timegm(&tm) + (end ? 86400 : 0);
}

struct meta_filter {
    struct catalog_filter *f;
    json_t *keep;
    struct err *e;
};

static int on_meta_filter(void *ctx, const char *key, const char *value)
{
    struct meta_filter *m = ctx;
    if (m->f->nmeta == CATALOG_FILTER_META)
        return err_set(m->e, ERR_INVALID, "at most %d meta.K=V filters", CATALOG_FILTER_META);
    if (catalog_meta_check(key, value, m->e) < 0) return m->e->code;
    /* key and value die with this call: keep holds copies */
    json_t *k = json_string(key), *v = json_string(value);
    json_array_append_new(m->keep, k);
    json_array_append_new(m->keep, v);
    m->f->meta_key[m->f->nmeta] = json_string_value(k);
    m->f->meta_value[m->f->nmeta] = json_string_value(v);
    m->f->nmeta++;
    return 0;
}

int api_projects_filter(struct http_req *req, struct catalog_filter *f, json_t *keep, struct err *e)
{
    static const char *const names[] = { "since", "until" };
    memset(f, 0, sizeof *f);
    f->project = http_req_query(req, "project");
    f->tag = http_req_query(req, "tag");
    f->gpu = http_req_query(req, "gpu");
    f->q = http_req_query(req, "q");
    if (f->tag && !f->tag[0]) f->tag = NULL;
    if (f->project && f->project[0] && catalog_project_check(f->project, e) < 0) return err_prefix(e, "project");
    for (int i = 0; i < 2; i++) {
        const char *v = http_req_query(req, names[i]);
        if (!v || !v[0]) continue;
        long long t = parse_date(v, i == 1);
        if (t < 0) return err_set(e, ERR_INVALID, "%s must be a date YYYY-MM-DD or unix seconds", names[i]);
        if (i == 0) f->since = t;
        else f->until = t;
    }
    struct meta_filter m = { f, keep, e };
    err_clear(e);
    int rc = http_req_query_prefixed(req, "meta.", on_meta_filter, &m);
    if (rc && e->code == ERR_OK) err_set(e, ERR_INVALID, "a meta.K=V parameter is malformed");
    return rc ? ERR_INVALID : 0;
}

struct upload_meta {
    json_t *meta;
    struct err *e;
};

static int on_upload_meta(void *ctx, const char *key, const char *value)
{
    struct upload_meta *u = ctx;
    return catalog_meta_add(u->meta, key, value, u->e);
}

int api_projects_upload_query(struct http_req *req, char **project, json_t *meta, struct err *e)
{
    const char *p = http_req_query(req, "project");
    *project = NULL;
    if (p && p[0]) {
        if (catalog_project_check(p, e) < 0) return e->code;
        *project = xstrdup(p);
    }
    struct upload_meta u = { meta, e };
    err_clear(e);
    int rc = http_req_query_prefixed(req, "meta.", on_upload_meta, &u);
    if (rc && e->code == ERR_OK) err_set(e, ERR_INVALID, "a meta.K=V parameter is malformed");
    if (rc) {
        free(*project);
        *project = NULL;
        return ERR_INVALID;
    }
    return 0;
}

int api_projects_flag(const char *v)
{
    return v && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 || strcmp(v, "yes") == 0);
}

int api_projects_is_label(const char *field)
{
    return strcmp(field, "project") == 0 || strcmp(field, "duplicate") == 0 || strncmp(field, "meta.", 5) == 0;
}

int api_projects_upload_field(const char *field, const char *value, char **project, json_t *meta, int *duplicate,
                              struct err *e)
{
    if (strcmp(field, "duplicate") == 0) {
        *duplicate = api_projects_flag(value);
        return 0;
    }
    if (strncmp(field, "meta.", 5) == 0) return catalog_meta_add(meta, field + 5, value, e);
    if (!value[0]) return 0; /* an empty project field: none */
    if (catalog_project_check(value, e) < 0) return e->code;
    free(*project);
    *project = xstrdup(value);
    return 0;
}

int api_projects_send_duplicate(struct MHD_Connection *conn, const char *id)
{
    json_t *o = json_pack("{s:{s:s,s:s,s:s,s:s}}", "error", "code", "duplicate", "message",
                          "these trace files were uploaded before: they are the run linked here. Add ?duplicate=1 "
                          "(or the form field duplicate=1) to store a second copy anyway",
                          "run_id", id, "url", "");
    json_object_set_new(json_object_get(o, "error"), "url", json_sprintf("./?run=%s", id));
    return http_send_json(conn, 409, o);
}

int api_projects_list(struct http_req *req)
{
    json_t *out;
    struct err e;
    if (catalog_projects(http_req_app(req)->cat, &out, &e) < 0) return http_send_err(http_req_conn(req), &e);
    return http_send_json(http_req_conn(req), 200, out);
}

/* 1 when key is one of the comma-separated keys of list. */
static int listed(const char *list, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = list; *p;) {
        p += strspn(p, " ,");
        size_t k = strcspn(p, ",");
        size_t t = k;
        while (t && p[t - 1] == ' ') t--;
        if (t == n && strncmp(p, key, n) == 0) return 1;
        p += k;
    }
    return 0;
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A run's configuration, the runs it is compared with for regressions:
 * its GPU, its world size and its metadata but the volatile keys, as text
 * ("NVIDIA H100 · 4 ranks · batch=32 · model=gpt", keys sorted). */
static char *config_of(json_t *run, const char *volatile_keys)
{
    json_t *trace = json_object_get(run, "trace"), *meta = json_object_get(run, "meta"), *v;
    const char *gpu = json_string_value(json_object_get(run, "gpu"));
    json_int_t world = json_integer_value(json_object_get(trace, "world_size"));
    if (!world) world = json_integer_value(json_object_get(run, "ranks"));
    char *out = xasprintf("%s · %lld rank%s", gpu && gpu[0] ? gpu : "no GPU", (long long)world, world == 1 ? "" : "s");
    size_t n = 0, i = 0;
    const char *k, **keys = xcalloc(json_object_size(meta) + 1, sizeof *keys);
    json_object_foreach(meta, k, v) if (!listed(volatile_keys, k)) keys[n++] = k;
    if (n > 1) xqsort(keys, n, sizeof *keys, cmp_keys);
    for (i = 0; i < n; i++) {
        char *next = xasprintf("%s · %s=%s", out, keys[i], json_string_value(json_object_get(meta, keys[i])));
        free(out);
        out = next;
    }
    free(keys);
    return out;
}

static json_t *figure(json_t *figures, const char *key)
{
    json_t *v = json_object_get(figures, key);
    return v ? json_deep_copy(v) : json_null();
}

int api_projects_trend(struct http_req *req)
{
    struct app *app = http_req_app(req);
    const char *project = http_req_param(req, "project");
    json_t *rows, *row, *out = json_array();
    struct err e;
    size_t i;
    if (catalog_project_runs(app->cat, project, &rows, &e) < 0) {
        json_decref(out);
        return http_send_err(http_req_conn(req), &e);
    }
    json_array_foreach(rows, i, row) {
        json_t *f = json_object_get(row, "figures");
        char *config = config_of(row, app->cfg.volatile_meta);
        json_t *o = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:s}", "id", json_object_get(row, "id"), "name",
                              json_object_get(row, "name"), "created", json_object_get(row, "created"), "url",
                              json_object_get(row, "url"), "meta", json_object_get(row, "meta"), "gpu",
                              json_object_get(row, "gpu"), "config", config);
        json_t *trace = json_object_get(row, "trace");
        json_object_set_new(o, "world_size", json_object_get(trace, "world_size")
                                                 ? json_deep_copy(json_object_get(trace, "world_size"))
                                                 : json_deep_copy(json_object_get(row, "ranks")));
        static const char *const keys[] = { "avg_step_us", "breakdown_us", "gpu_utilization", "tensor_core_share",
                                            "peak_memory_bytes", "steps", "ranks", "top_finding" };
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) json_object_set_new(o, keys[k], figure(f, keys[k]));
        /* the previous run of the same configuration that has a step time */
        json_t *prev = NULL;
        double cur = json_number_value(json_object_get(o, "avg_step_us"));
        for (size_t j = json_array_size(out); j-- > 0 && json_is_number(json_object_get(o, "avg_step_us"));) {
            json_t *p = json_array_get(out, j);
            if (strcmp(json_string_value(json_object_get(p, "config")), config) == 0 &&
                json_number_value(json_object_get(p, "avg_step_us")) > 0) {
                prev = p;
                break;
            }
        }
        double change = prev ? (cur / json_number_value(json_object_get(prev, "avg_step_us")) - 1) * 100 : 0;
        json_object_set_new(o, "previous", prev ? json_deep_copy(json_object_get(prev, "id")) : json_null());
        json_object_set_new(o, "change_pct", prev ? json_real(change) : json_null());
        json_object_set_new(o, "regression", json_boolean(prev && change > app->cfg.regression_pct));
        free(config);
        json_array_append_new(out, o);
    }
    json_decref(rows);
    json_t *vol = json_array();
    for (const char *p = app->cfg.volatile_meta; *p;) {
        p += strspn(p, " ,");
        size_t k = strcspn(p, ",");
        size_t t = k;
        while (t && p[t - 1] == ' ') t--;
        if (t) json_array_append_new(vol, json_stringn(p, t));
        p += k;
    }
    return http_send_json(http_req_conn(req), 200,
                          json_pack("{s:s,s:i,s:o,s:o}", "project", project, "regression_pct", app->cfg.regression_pct,
                                    "volatile_meta", vol, "runs", out));
}

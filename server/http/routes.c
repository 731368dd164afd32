/* routes.c — the API route table and matcher (see include/http/routes.h). */
#include "http/routes.h"

#include <string.h>

#include "api/api_analyses.h"
#include "api/api_compare.h"
#include "api/api_diff.h"
#include "api/api_flame.h"
#include "api/api_live.h"
#include "api/api_logs.h"
#include "api/api_ranks.h"
#include "api/api_projects.h"
#include "api/api_runs.h"
#include "api/api_summary.h"
#include "api/api_summary_memory.h"
#include "api/api_summary_tables.h"
#include "api/api_search.h"
#include "api/api_slice.h"
#include "api/api_timeline.h"
#include "store/catalog.h"
#include "store/catalog_query.h"

/* One line per endpoint. ROUTE_HEAVY: anything that reads a run's events
 * or analysis tables, whose cost grows with the run (10 M events: seconds),
 * runs on the query workers. http.c serves the web UI's files for any GET that
 * matches nothing here and is not under /api/. */
static const struct route routes[] = {
    { "GET", "/api/health", api_runs_health, NULL, ROUTE_OPEN },
    { "GET", "/api/runs", api_runs_list, NULL, 0 },
    { "POST", "/api/runs", api_runs_create, &api_runs_upload, ROUTE_UPLOAD },
    { "GET", "/api/runs/{id}", api_runs_get, NULL, 0 },
    { "PATCH", "/api/runs/{id}", api_runs_patch, NULL, 0 },
    { "DELETE", "/api/runs/{id}", api_runs_delete, NULL, 0 },
    { "GET", "/api/runs/{id}/source", api_runs_source, NULL, 0 },
    { "GET", "/api/runs/{id}/overview", api_summary_overview, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/operators", api_summary_operators, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/kernels", api_summary_kernels, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/memory", api_summary_memory, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/memory/events", api_summary_memory_events, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/timeline", api_timeline_view, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/timeline/tracks", api_timeline_tracks, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/timeline/slice", api_timeline_slice, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/timeline/search", api_timeline_search, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/timeline/aggregate", api_timeline_aggregate, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/timeline/flame", api_timeline_flame, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/ranks", api_ranks_get, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/analyses", api_analyses_get, NULL, ROUTE_HEAVY },
    { "GET", "/api/runs/{id}/critpath", api_analyses_critpath, NULL, ROUTE_HEAVY },
    { "GET", "/api/diff", api_diff_overview, NULL, ROUTE_HEAVY },
    { "GET", "/api/compare", api_compare_get, NULL, ROUTE_HEAVY },
    { "GET", "/api/diff/operators", api_diff_operators, NULL, ROUTE_HEAVY },
    { "GET", "/api/diff/kernels", api_diff_kernels, NULL, ROUTE_HEAVY },
    { "GET", "/api/jobs/{n}", api_runs_job, NULL, 0 },
    { "POST", "/api/runs/{id}/logs", api_logs_post, NULL, 0 },
    { "GET", "/api/runs/{id}/logs", api_logs_get, NULL, 0 },
    { "POST", "/api/projects/{project}/live", api_live_post, NULL, 0 },
    { "GET", "/api/projects/{project}/live", api_live_get, NULL, 0 },
    { "GET", "/api/projects", api_projects_list, NULL, 0 },
    { "GET", "/api/projects/{project}/trend", api_projects_trend, NULL, 0 },
};

#define NROUTES (sizeof routes / sizeof routes[0])

static int valid_run_id(const char *s)
{
    return catalog_id_valid(s);
}

static int valid_project(const char *s)
{
    struct err e;
    return catalog_project_check(s, &e) == 0;
}

static int valid_number(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 9) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

/* A project name: 1..64 of [A-Za-z0-9._-], not starting with '.'. */
/* Parameter kinds a pattern may use. */
static const struct {
    const char *name;
    int (*valid)(const char *value);
    const char *what; /* for error messages */
} param_kinds[] = {
    { "id", valid_run_id, "run id" },
    { "n", valid_number, "number" },
    { "project", valid_project, "project name" },
};

static int find_kind(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof param_kinds / sizeof param_kinds[0]; i++)
        if (strlen(param_kinds[i].name) == len && memcmp(param_kinds[i].name, name, len) == 0) return (int)i;
    return -1;
}

/* Matches path against pattern segment by segment. On success fills the
 * parameters of m (values unchecked) and returns 1. */
static int match_path(const char *pattern, const char *path, struct route_match *m)
{
    const char *p = pattern, *q = path;

    m->nparams = 0;
    while (*p && *q) {
        const char *pend, *qend;
        if (*p != '/' || *q != '/') return 0;
        p++, q++;
        pend = strchr(p, '/');
        if (!pend) pend = p + strlen(p);
        qend = strchr(q, '/');
        if (!qend) qend = q + strlen(q);
        if (*p == '{') {
            size_t vlen = (size_t)(qend - q);
            int k = find_kind(p + 1, (size_t)(pend - p - 2));
            if (k < 0 || vlen == 0 || vlen > ROUTES_PARAM_MAX || m->nparams == ROUTES_MAX_PARAMS) return 0;
            m->params[m->nparams].name = param_kinds[k].name;
            memcpy(m->params[m->nparams].value, q, vlen);
            m->params[m->nparams].value[vlen] = '\0';
            m->nparams++;
        } else if (pend - p != qend - q || memcmp(p, q, (size_t)(pend - p)) != 0) {
            return 0;
        }
        p = pend;
        q = qend;
    }
    return *p == '\0' && *q == '\0';
}

static void add_allow(struct route_match *m, const char *method)
{
    size_t n = strlen(m->allow);

    if (strstr(m->allow, method)) return;
    if (n + strlen(method) + 3 > sizeof m->allow) return;
    if (n) strcat(m->allow, ", ");
    strcat(m->allow, method);
}

int routes_match(const char *method, const char *path, struct route_match *m, struct err *e)
{
    struct route_match cand;

    if (strcmp(method, "HEAD") == 0) method = "GET";
    memset(m, 0, sizeof *m);
    memset(&cand, 0, sizeof cand);
    for (size_t i = 0; i < NROUTES; i++) {
        if (!match_path(routes[i].pattern, path, &cand)) continue;
        if (strcmp(routes[i].method, method) != 0) {
            add_allow(m, routes[i].method);
            continue;
        }
        for (int k = 0; k < cand.nparams; k++) {
            int kind = find_kind(cand.params[k].name, strlen(cand.params[k].name));
            if (!param_kinds[kind].valid(cand.params[k].value))
                return err_set(e, ERR_INVALID, "'%s' is not a valid %s", cand.params[k].value,
                               param_kinds[kind].what);
        }
        cand.route = &routes[i];
        cand.allow[0] = '\0';
        *m = cand;
        return 0;
    }
    if (m->allow[0]) return err_set(e, ERR_NOT_FOUND, "method %s not allowed here", method);
    return err_set(e, ERR_NOT_FOUND, "no such endpoint");
}

const char *routes_param(const struct route_match *m, const char *name)
{
    for (int i = 0; i < m->nparams; i++)
        if (strcmp(m->params[i].name, name) == 0) return m->params[i].value;
    return NULL;
}

const struct route *routes_table(size_t *n)
{
    *n = NROUTES;
    return routes;
}

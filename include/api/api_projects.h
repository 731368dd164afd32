/*
 * api_projects.h — projects and the runs list's filters (issue 20):
 * GET /api/projects, GET /api/projects/{project}/trend, the filters of
 * GET /api/runs, the project/metadata labels of an upload and the answer
 * to a duplicate upload; listed in server/http/routes.c, shapes in
 * docs/api.md.
 *
 * Owns nothing between requests: every answer is read from the catalog
 * (catalog_query.h), never from a run's database, so a handler may run on
 * any MHD thread. Filters and labels are checked here and answered 400
 * with a message naming the parameter. Strings a struct catalog_filter
 * points to are borrowed from the request (valid until it ends); JSON
 * handed to http_send_json is stolen by it.
 */
#ifndef TB_API_PROJECTS_H
#define TB_API_PROJECTS_H

#include <jansson.h>

#include "base/err.h"
#include "store/catalog.h"
#include "store/catalog_query.h"

struct http_req;
struct MHD_Connection;

/* GET /api/projects -> {"projects": [{"name", "runs", "last"}]}. */
int api_projects_list(struct http_req *req);

/* GET /api/projects/{project}/trend -> {"project", "regression_pct",
 * "volatile_meta", "runs": [...]} oldest first, each with its figures,
 * configuration and regression mark; 404 for an unknown project. */
int api_projects_trend(struct http_req *req);

/* Fills f from GET /api/runs's query: project, tag, gpu, since, until
 * (YYYY-MM-DD, UTC, until inclusive, or unix seconds), q, meta.K=V.
 * keep (a JSON array the caller owns) holds the metadata strings f points
 * to. ERR_INVALID naming the parameter. */
int api_projects_filter(struct http_req *req, struct catalog_filter *f, json_t *keep, struct err *e);

/* Reads ?project=P and ?meta.K=V of an upload into *project (owned by
 * caller, NULL when none) and meta (an object, added to). ERR_INVALID. */
int api_projects_upload_query(struct http_req *req, char **project, json_t *meta, struct err *e);

/* 1 for "1", "true", "yes". */
int api_projects_flag(const char *v);

/* 1 when a multipart field is a label: project, duplicate, meta.K. */
int api_projects_is_label(const char *field);

/* Takes label field's value (trimmed) into *project (owned by caller),
 * meta or *duplicate. ERR_INVALID. */
int api_projects_upload_field(const char *field, const char *value, char **project, json_t *meta, int *duplicate,
                              struct err *e);

/* 409 {"error": {"code": "duplicate", "message", "run_id", "url"}}: the
 * files are those of run id; ?duplicate=1 stores them anyway. */
int api_projects_send_duplicate(struct MHD_Connection *conn, const char *id);

#endif

/* api_ranks.c — GET /api/runs/{id}/ranks (see include/api/api_ranks.h). */
#define LOG_MODULE "api"
#include "api/api_ranks.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "derive/ranks.h"
#include "http/app.h"
#include "http/http.h"
#include "store/catalog.h"
#include "store/rundb_stage.h"
#include "store/rundb.h"

#define TOP_DEFAULT 10
#define TOP_MAX 100

/* ?top= as an integer in 1..TOP_MAX (TOP_DEFAULT when absent or empty). */
static int param_top(struct http_req *req, int *out, struct err *e)
{
    const char *v = http_req_query(req, "top");
    if (!v || !*v) {
        *out = TOP_DEFAULT;
        return 0;
    }
    if (strlen(v) > 3 || strspn(v, "0123456789") != strlen(v) || atoi(v) < 1 || atoi(v) > TOP_MAX)
        return err_set(e, ERR_INVALID, "parameter 'top' must be an integer from 1 to %d", TOP_MAX);
    *out = atoi(v);
    return 0;
}

int api_ranks_get(struct http_req *req)
{
    struct MHD_Connection *conn = http_req_conn(req);
    struct app *app = http_req_app(req);
    const char *id = http_req_param(req, "id");
    struct err e;
    json_t *out = NULL;
    sqlite3 *db = NULL;
    int top = TOP_DEFAULT, rc;

    if (param_top(req, &top, &e) < 0) return http_send_err(conn, &e);
    rc = catalog_open_run(app->cat, id, &db, &e);
    if (rc == 0) rc = rundb_stage_check(db, "summary", &e);
    if (rc == 0) rc = ranks_build(db, top, &out, &e);
    sqlite3_close(db);
    if (rc < 0) return http_send_err(conn, &e);
    return http_send_json(conn, 200, out);
}

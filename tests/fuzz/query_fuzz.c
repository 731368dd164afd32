/* query_fuzz.c — URL and query parsing (http.h pure helpers) and route
 * matching. Input: a raw request target, e.g. "/tb/api/runs?token=x&a=b".
 * Invariants: decoded strings hold no NUL before their end, stripping a
 * base never moves outside the path, query_without really removes the
 * parameter and is idempotent, and token comparison agrees with strcmp. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "http/http_parse.h"
#include "http/routes.h"

static void match_all(const char *path)
{
    static const char *methods[] = { "GET", "HEAD", "POST", "PATCH", "DELETE", "PUT" };
    struct route_match m;
    struct err e;

    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int rc = routes_match(methods[i], path, &m, &e);
        if (rc == 0 && (!m.route || m.nparams > ROUTES_MAX_PARAMS)) abort();
        if (rc == 0)
            for (int k = 0; k < m.nparams; k++)
                if (strlen(m.params[k].value) > ROUTES_PARAM_MAX || !routes_param(&m, m.params[k].name)) abort();
        if (rc != 0 && m.route) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    char *raw = strndup((const char *)d, n), *path = NULL, *v = NULL, *w1, *w2, *dec = NULL;
    const char *query = NULL, *rp;
    struct err e;
    static const char *names[] = { "token", "filename", "name", "rank", "async", "" };

    if (http_url_decode((const char *)d, n, 1, &dec, &e) == 0) {
        if (strlen(dec) > n) abort();
        free(dec);
    }
    if (http_target_split(raw, &path, &query, &e) == 0) {
        if (path[0] != '/') abort();
        rp = http_strip_base("/tb", path);
        if (rp && (rp < path || rp > path + strlen(path))) abort();
        match_all(path);
        if (rp && *rp) match_all(rp);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            int r = http_query_get(query, names[i], &v);
            if (r == 1) {
                free(v);
                v = NULL;
            } else if (r != 0 && r != ERR_INVALID) {
                abort();
            }
        }
        w1 = http_query_without(query, "token");
        if (http_query_get(w1, "token", &v) != 0) abort();
        w2 = http_query_without(w1, "token");
        if (strcmp(w1, w2) != 0) abort();
        free(w1);
        free(w2);
        free(path);
    }
    http_accepts_gzip(raw);
    if (http_token_equal(raw, "s3cret-token") != (strcmp(raw, "s3cret-token") == 0)) abort();
    free(raw);
    return 0;
}

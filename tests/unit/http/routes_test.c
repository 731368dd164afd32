/* routes_test.c — the route table's shape, the matcher, 405 detection and
 * path parameter checks. */
#include "harness.h"

#include "http/routes.h"

static const char *good_id = "0123456789abcdef";

static void test_table_shape(void)
{
    size_t n;
    const struct route *r = routes_table(&n);

    REQUIRE(n > 0);
    for (size_t i = 0; i < n; i++) {
        const char *m = r[i].method;
        CHECK(strcmp(m, "GET") == 0 || strcmp(m, "POST") == 0 || strcmp(m, "PATCH") == 0 ||
              strcmp(m, "PUT") == 0 || strcmp(m, "DELETE") == 0);
        CHECK(strncmp(r[i].pattern, "/api/", 5) == 0);
        CHECK(r[i].handler != NULL);
        CHECK(!!(r[i].flags & ROUTE_UPLOAD) == (r[i].upload != NULL));
        if (r[i].upload) CHECK(r[i].upload->begin && r[i].upload->chunk && r[i].upload->cleanup);
        /* No two entries share method + pattern. */
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(r[i].pattern, r[j].pattern) != 0 || strcmp(r[i].method, r[j].method) != 0);
        /* Every pattern matches itself with valid parameter values, so
         * every {kind} it uses is known to the matcher. */
        {
            char path[256], *o = path;
            struct route_match mt;
            struct err e;
            for (const char *p = r[i].pattern; *p;) {
                if (*p == '{') {
                    const char *end = strchr(p, '}');
                    o += sprintf(o, "%s", strncmp(p, "{id}", 4) == 0 ? good_id : "42");
                    p = end + 1;
                } else {
                    *o++ = *p++;
                }
            }
            *o = '\0';
            CHECK_EQ_INT(routes_match(m, path, &mt, &e), 0);
            CHECK(mt.route == &r[i]);
        }
    }
    /* Only the health check is open. */
    for (size_t i = 0; i < n; i++)
        if (r[i].flags & ROUTE_OPEN) CHECK_EQ_STR(r[i].pattern, "/api/health");
}

static void test_match(void)
{
    struct route_match m;
    struct err e;
    char path[128];

    CHECK_EQ_INT(routes_match("GET", "/api/health", &m, &e), 0);
    CHECK(m.route->flags & ROUTE_OPEN);
    CHECK_EQ_INT(routes_match("HEAD", "/api/health", &m, &e), 0);
    CHECK_EQ_INT(routes_match("GET", "/api/runs", &m, &e), 0);
    CHECK_EQ_INT(m.nparams, 0);
    CHECK_EQ_INT(routes_match("POST", "/api/runs", &m, &e), 0);
    CHECK(m.route->flags & ROUTE_UPLOAD);

    snprintf(path, sizeof path, "/api/runs/%s", good_id);
    CHECK_EQ_INT(routes_match("GET", path, &m, &e), 0);
    CHECK_EQ_STR(routes_param(&m, "id"), good_id);
    CHECK(routes_param(&m, "n") == NULL);
    CHECK_EQ_INT(routes_match("PATCH", path, &m, &e), 0);
    CHECK_EQ_STR(m.route->method, "PATCH");
    CHECK_EQ_INT(routes_match("DELETE", path, &m, &e), 0);
    CHECK_EQ_STR(m.route->method, "DELETE");

    snprintf(path, sizeof path, "/api/runs/%s/source", good_id);
    CHECK_EQ_INT(routes_match("GET", path, &m, &e), 0);
    CHECK_EQ_STR(m.route->pattern, "/api/runs/{id}/source");
    CHECK_EQ_STR(routes_param(&m, "id"), good_id);

    CHECK_EQ_INT(routes_match("GET", "/api/jobs/17", &m, &e), 0);
    CHECK_EQ_STR(routes_param(&m, "n"), "17");
}

static void test_not_found(void)
{
    static const char *paths[] = {
        "/api/runs/", "/api//runs", "/api/run", "/api/runsX", "/api", "/", "", "api/runs",
        "/api/runs/0123456789abcdef/", "/api/runs/0123456789abcdef/source/x", "/api/jobs/", "/api/jobs",
        "/API/runs", "/api/runs/0123456789abcdef/Source",
    };
    struct route_match m;
    struct err e;

    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int rc = routes_match("GET", paths[i], &m, &e);
        if (rc != ERR_NOT_FOUND) fprintf(stderr, "  %s -> %d\n", paths[i], rc);
        CHECK_EQ_INT(rc, ERR_NOT_FOUND);
        CHECK(m.route == NULL);
        CHECK_EQ_STR(m.allow, "");
    }
}

static void test_method_not_allowed(void)
{
    struct route_match m;
    struct err e;
    char path[128];

    CHECK_EQ_INT(routes_match("PUT", "/api/runs", &m, &e), ERR_NOT_FOUND);
    CHECK_EQ_STR(m.allow, "GET, POST");
    CHECK(strstr(e.msg, "PUT") != NULL);
    CHECK_EQ_INT(routes_match("DELETE", "/api/health", &m, &e), ERR_NOT_FOUND);
    CHECK_EQ_STR(m.allow, "GET");
    snprintf(path, sizeof path, "/api/runs/%s", good_id);
    CHECK_EQ_INT(routes_match("POST", path, &m, &e), ERR_NOT_FOUND);
    CHECK_EQ_STR(m.allow, "GET, PATCH, DELETE");
}

static void test_params(void)
{
    static const char *bad_ids[] = { "0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0",
                                     "0123456789abcdeg", "..", "%2e%2e", "0123456789abcde.", "x" };
    static const char *bad_numbers[] = { "-1", "1.5", "0x10", "1234567890", "12a", " 1", "+1" };
    struct route_match m;
    struct err e;
    char path[ROUTES_PARAM_MAX + 64];

    for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
        snprintf(path, sizeof path, "/api/runs/%s", bad_ids[i]);
        CHECK_EQ_INT(routes_match("GET", path, &m, &e), ERR_INVALID);
        CHECK(strstr(e.msg, "run id") != NULL);
        snprintf(path, sizeof path, "/api/runs/%s/source", bad_ids[i]);
        CHECK_EQ_INT(routes_match("GET", path, &m, &e), ERR_INVALID);
    }
    for (size_t i = 0; i < sizeof bad_numbers / sizeof bad_numbers[0]; i++) {
        snprintf(path, sizeof path, "/api/jobs/%s", bad_numbers[i]);
        CHECK_EQ_INT(routes_match("GET", path, &m, &e), ERR_INVALID);
    }
    CHECK_EQ_INT(routes_match("GET", "/api/jobs/123456789", &m, &e), 0);
    CHECK_EQ_INT(routes_match("GET", "/api/jobs/0", &m, &e), 0);

    /* Values longer than ROUTES_PARAM_MAX never match at all. */
    memset(path, 0, sizeof path);
    strcpy(path, "/api/runs/");
    memset(path + 10, 'a', ROUTES_PARAM_MAX + 1);
    CHECK_EQ_INT(routes_match("GET", path, &m, &e), ERR_NOT_FOUND);
}

int main(void)
{
    RUN(test_table_shape);
    RUN(test_match);
    RUN(test_not_found);
    RUN(test_method_not_allowed);
    RUN(test_params);
    return harness_done("routes");
}

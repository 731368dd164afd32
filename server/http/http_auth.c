/* http_auth.c — the access token, CSRF and Host checks (see
 * include/http/http_auth.h). */
#define LOG_MODULE "http"
#include "http/http_auth.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "http/app.h"
#include "http/http_parse.h"
#include "http/http_req.h"
#include "http/http_send.h"

static int is_safe_method(const char *m)
{
    return strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0 || strcmp(m, "OPTIONS") == 0;
}


static const char unauthorized_html[] =
    "<p>This traceboard needs its access token.</p>\n"
    "<p>Open the address that <code>traceboard</code> printed when it started: it ends with "
    "<code>?token=&hellip;</code>. Opening it once stores the token in a cookie for this browser.</p>";

static int deny(struct http_req *req, int is_api)
{
    if (is_api)
        return http_send_error_hdr(req->conn, 401, "unauthorized", "WWW-Authenticate", "Bearer realm=\"traceboard\"",
                              "missing or wrong access token: send 'Authorization: Bearer <token>' or open "
                              "the URL printed at start (with ?token=)");
    return http_send_page(req->conn, 401, "Access token required", unauthorized_html, "WWW-Authenticate",
                     "Bearer realm=\"traceboard\"");
}

/* ?token= accepted: store it in a cookie and send the browser to the same
 * address without the token, so it does not linger in history or logs. */
static int redirect_with_cookie(struct http_req *req)
{
    const struct http_server *s = req->srv;
    const char *base = s->app->cfg.base_path;
    const char *raw = req->raw, *q = strchr(raw, '?');
    char *rest = http_query_without(req->query, "token");
    char *cookie, *loc;
    struct MHD_Response *resp;
    size_t plen = q ? (size_t)(q - raw) : strlen(raw);

    /* The Location must stay a path on this server: browsers read "//host"
     * and "/\host" (a backslash counts as a slash) as another host, so the
     * leading slashes and backslashes become one '/'. */
    while (plen && (*raw == '/' || *raw == '\\')) raw++, plen--;
    loc = xasprintf("/%.*s%s%s", (int)plen, raw, rest[0] ? "?" : "", rest);
    cookie = xasprintf("%s=%s; Path=%s; HttpOnly; SameSite=Strict", s->cookie_name, s->app->token,
                       base[0] ? base : "/");
    free(rest);
    resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (resp) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE, cookie);
    }
    free(loc);
    free(cookie);
    return http_send_queue(req->conn, 303, resp, HTTP_CACHE_NO_STORE);
}

/* Bearer header first, then ?token= (GET/HEAD only), then the cookie. A
 * wrong credential is refused rather than falling through to the next. */
enum http_auth_result http_auth_check(struct http_req *req, int is_api, int *status)
{
    const char *want = req->srv->app->token;
    const char *h = http_req_header(req, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *cookie;

    if (h) {
        if (strncasecmp(h, "Bearer ", 7) == 0) {
            h += 7;
            while (*h == ' ') h++;
            if (http_token_equal(h, want)) return HTTP_AUTH_BEARER;
        }
        *status = deny(req, is_api);
        return HTTP_AUTH_ANSWERED;
    }
    if (strcmp(req->method, "GET") == 0 || strcmp(req->method, "HEAD") == 0) {
        char *given = NULL;
        int r = http_query_get(req->query, "token", &given);
        if (r != 0) {
            int ok = r == 1 && http_token_equal(given, want);
            free(given);
            *status = ok ? redirect_with_cookie(req) : deny(req, is_api);
            return HTTP_AUTH_ANSWERED;
        }
    }
    cookie = MHD_lookup_connection_value(req->conn, MHD_COOKIE_KIND, req->srv->cookie_name);
    if (cookie && http_token_equal(cookie, want)) return HTTP_AUTH_COOKIE;
    *status = deny(req, is_api);
    return HTTP_AUTH_ANSWERED;
}

/* Cross-site forms and scripts cannot set custom headers without a CORS
 * preflight we never grant, so the header proves the request came from our
 * own page. Bearer clients are not browsers riding on ambient cookies. */
int http_auth_csrf_ok(struct http_req *req, enum http_auth_result how)
{
    const char *h = http_req_header(req, HTTP_AUTH_CSRF_HEADER);

    if (is_safe_method(req->method) || how == HTTP_AUTH_BEARER) return 1;
    if (h && strcmp(h, "1") == 0) return 1;
    if (how == HTTP_AUTH_COOKIE) return 0;
    /* No auth at all (no_auth or an open route): refuse only what a browser
     * sent, so scripts with curl keep working. */
    return !http_req_header(req, "Origin") && !http_req_header(req, "Sec-Fetch-Site");
}

/* Without a token, a page on any web site could resolve its own host name
 * to 127.0.0.1 (DNS rebinding) and read our API as same-origin. Browsers
 * always send the name they resolved in Host, so accept only loopback names,
 * the bind address, and hosts that are plain IP literals. */
int http_auth_host_allowed(const char *host, const char *bind)
{
    char h[256];
    size_t n;

    if (!host) return 1; /* HTTP/1.0 clients: not a browser */
    if (host[0] == '[') {
        const char *end = strchr(host, ']');
        n = end ? (size_t)(end - host + 1) : strlen(host);
    } else {
        n = strcspn(host, ":");
    }
    if (n == 0 || n >= sizeof h) return 0;
    memcpy(h, host, n);
    h[n] = '\0';
    if (strcasecmp(h, "localhost") == 0 || strcmp(h, bind) == 0) return 1;
    if (h[0] == '[') return 1; /* an IPv6 literal */
    for (const char *c = h; *c; c++)
        if (!((*c >= '0' && *c <= '9') || *c == '.')) return 0;
    return 1; /* an IPv4 literal */
}

/* 1 if the request carries the valid token (bearer header, cookie or
 * ?token=), whether or not its route asked for it: a monitor polling
 * /api/health with its token is a known client too. */
int http_auth_token_shown(struct http_req *req)
{
    const char *want = req->srv->app->token;
    const char *h = http_req_header(req, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *cookie = MHD_lookup_connection_value(req->conn, MHD_COOKIE_KIND, req->srv->cookie_name);
    char *given = NULL;
    int ok = 0;

    if (h && strncasecmp(h, "Bearer ", 7) == 0) {
        h += 7;
        while (*h == ' ') h++;
        if (http_token_equal(h, want)) return 1;
    }
    if (cookie && http_token_equal(cookie, want)) return 1;
    if (http_query_get(req->query, "token", &given) == 1) ok = http_token_equal(given, want);
    free(given);
    return ok;
}

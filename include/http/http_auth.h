/*
 * http_auth.h — who may use the server: the access token (bearer header,
 * ?token= on reads, or the cookie set by a ?token= page visit, then a
 * redirect that drops the token from the address), the CSRF header for
 * cookie-authenticated writes, and the Host check that stops DNS rebinding
 * when the server runs without a token. Refusals are answered here (401 as
 * JSON for the API, an HTML page for browsers). Called by http.c's pipeline
 * on the MHD thread that runs the request; no state of its own.
 */
#ifndef TB_HTTP_AUTH_H
#define TB_HTTP_AUTH_H

struct http_req;

/* The header a cookie-authenticated change must carry. */
#define HTTP_AUTH_CSRF_HEADER "X-Traceboard-CSRF"

enum http_auth_result { HTTP_AUTH_NONE, HTTP_AUTH_BEARER, HTTP_AUTH_COOKIE, HTTP_AUTH_ANSWERED };

/* Bearer header first, then ?token= (GET/HEAD only), then the cookie. A
 * wrong credential is refused rather than falling through to the next.
 * HTTP_AUTH_ANSWERED: a response was queued, *status is its status. */
enum http_auth_result http_auth_check(struct http_req *req, int is_api, int *status);

/* Whether a request authenticated as how may change state: safe methods and
 * bearer clients always; cookie clients only with the CSRF header. */
int http_auth_csrf_ok(struct http_req *req, enum http_auth_result how);

/* Whether Host is a loopback name, the bind address or an IP literal. */
int http_auth_host_allowed(const char *host, const char *bind);

/* 1 if the request carries the valid token (bearer header, cookie or
 * ?token=), whether or not its route asked for it. */
int http_auth_token_shown(struct http_req *req);

#endif

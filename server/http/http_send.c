/* http_send.c — every response: JSON, text, files, errors and small pages,
 * with the security headers and gzip (see include/http/http_send.h). */
#define LOG_MODULE "http"
#include "http/http_send.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/log.h"
#include "base/xmalloc.h"
#include "http/http.h"
#include "http/http_parse.h"

#define GZIP_MIN 1024 /* smaller bodies are not worth compressing */


static const char *const security_headers[][2] = {
    { "Content-Security-Policy",
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
      "object-src 'none'; base-uri 'none'; frame-ancestors 'none'" },
    { "X-Content-Type-Options", "nosniff" },
    { "Referrer-Policy", "no-referrer" },
    { "X-Frame-Options", "DENY" },
};

/* The only MHD_queue_response in the program. Consumes resp. */
int http_send_now(struct MHD_Connection *conn, int status, struct MHD_Response *resp)
{
    enum MHD_Result ok = MHD_queue_response(conn, (unsigned)status, resp);

    MHD_destroy_response(resp);
    if (ok != MHD_YES) LOG_WARN("could not queue a %d response", status);
    return ok == MHD_YES ? status : 0;
}

/* The capture of this thread's answers, when it runs a handler on a query
 * worker (see http_send_capture). */
static _Thread_local struct http_send_capture *capture;

void http_send_capture(struct http_send_capture *c)
{
    capture = c;
}

int http_send_queue(struct MHD_Connection *conn, int status, struct MHD_Response *resp, enum http_cache cache)
{
    struct http_send_capture *cap = capture;

    if (!resp) return 0;
    for (size_t i = 0; i < sizeof security_headers / sizeof security_headers[0]; i++)
        MHD_add_response_header(resp, security_headers[i][0], security_headers[i][1]);
    MHD_add_response_header(resp, "Cache-Control", cache == HTTP_CACHE_REVALIDATE ? "no-cache" : "no-store");
    if (cap && cap->conn == conn) {
        if (cap->resp) MHD_destroy_response(cap->resp);
        cap->resp = resp;
        cap->status = status;
        return status;
    }
    return http_send_now(conn, status, resp);
}

/* gzip of text[0..n). Returns a buffer owned by caller or NULL (then the
 * body goes out uncompressed). */
static char *gzip_bytes(const char *text, size_t n, size_t *out_len)
{
    z_stream z;
    char *out;
    uLong bound;

    memset(&z, 0, sizeof z);
    /* Large bodies (timeline windows, CSV exports) at level 1: ~4x faster
     * than 6 for ~10 % more bytes, which keeps a 1 MB viewport under the
     * 50 ms bar; small ones are cheap at 6 and smaller there. */
    int level = n > (256u << 10) ? 1 : 6;
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return NULL;
    bound = deflateBound(&z, (uLong)n);
    out = xmalloc(bound);
    z.next_in = (Bytef *)(uintptr_t)text;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)bound;
    if (n > UINT32_MAX || deflate(&z, Z_FINISH) != Z_STREAM_END) {
        deflateEnd(&z);
        free(out);
        return NULL;
    }
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

static char *content_disposition(const char *name);

/* Sends JSON text (owned, freed here). */
static int send_json_text(struct MHD_Connection *conn, int status, char *text)
{
    return http_send_text(conn, status, "application/json", NULL, text, strlen(text));
}

int http_send_text(struct MHD_Connection *conn, int status, const char *content_type, const char *download_name,
                   char *text, size_t len)
{
    size_t gz_len = 0;
    const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    char *gz = len > GZIP_MIN && http_accepts_gzip(ae) ? gzip_bytes(text, len, &gz_len) : NULL;
    struct MHD_Response *resp;

    if (gz) {
        free(text);
        resp = MHD_create_response_from_buffer(gz_len, gz, MHD_RESPMEM_MUST_FREE);
        if (resp) MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
        else free(gz);
    } else {
        resp = MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
        if (!resp) free(text);
    }
    if (!resp) return 0;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
    if (download_name) {
        char *cd = content_disposition(download_name);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, cd);
        free(cd);
    }
    return http_send_queue(conn, status, resp, HTTP_CACHE_NO_STORE);
}

int http_send_json(struct MHD_Connection *conn, int status, json_t *body)
{
    char *text;

    if (!body) return http_send_error(conn, 500, "internal", "the response could not be built");
    text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!text) return http_send_error(conn, 500, "internal", "the response could not be encoded");
    return send_json_text(conn, status, text);
}

/* The error body, plus optional extra header (Allow, WWW-Authenticate). */
static int send_error_v(struct MHD_Connection *conn, int status, const char *code, const char *hname,
                        const char *hvalue, const char *fmt, va_list ap)
{
    char msg[1024];
    json_t *inner, *m;
    char *text;
    struct MHD_Response *resp;

    vsnprintf(msg, sizeof msg, fmt, ap);
    m = json_string(msg);
    if (!m) {
        /* Messages can quote user bytes that are not UTF-8. */
        for (char *p = msg; *p; p++)
            if ((unsigned char)*p >= 0x80) *p = '?';
        m = json_string(msg);
    }
    inner = json_object();
    json_object_set_new(inner, "code", json_string(code));
    json_object_set_new(inner, "message", m);
    m = json_object();
    json_object_set_new(m, "error", inner);
    text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (status >= 500) LOG_WARN("answering %d %s: %s", status, code, msg);
    if (!text) return 0;
    if (!hname) return send_json_text(conn, status, text);
    /* Rare path (401/405): small, never gzipped, extra header. */
    resp = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(text);
        return 0;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, hname, hvalue);
    return http_send_queue(conn, status, resp, HTTP_CACHE_NO_STORE);
}

int http_send_error(struct MHD_Connection *conn, int status, const char *code, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = send_error_v(conn, status, code, NULL, NULL, fmt, ap);
    va_end(ap);
    return r;
}

int http_send_error_hdr(struct MHD_Connection *conn, int status, const char *code, const char *hname,
                        const char *hvalue, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = send_error_v(conn, status, code, hname, hvalue, fmt, ap);
    va_end(ap);
    return r;
}

int http_send_err(struct MHD_Connection *conn, const struct err *e)
{
    return http_send_error(conn, err_http_status(e->code), err_code_name(e->code), "%s",
                           e->msg[0] ? e->msg : err_code_name(e->code));
}

int http_send_empty(struct MHD_Connection *conn, int status)
{
    return http_send_queue(conn, status, MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT),
                 HTTP_CACHE_NO_STORE);
}

/* attachment; filename="ascii"; filename*=UTF-8''percent-encoded */
static char *content_disposition(const char *name)
{
    size_t n = strlen(name);
    char *ascii = xmalloc(n + 1), *pct = xmalloc(3 * n + 1), *out;
    size_t a = 0, p = 0;

    for (size_t i = 0; i < n && a < 200; i++) {
        unsigned char c = (unsigned char)name[i];
        int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._-+", c);
        ascii[a++] = plain ? (char)c : '_';
    }
    ascii[a] = '\0';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._-+!#$&^`|~", c))
            pct[p++] = (char)c;
        else
            p += (size_t)sprintf(pct + p, "%%%02X", c);
    }
    pct[p] = '\0';
    out = xasprintf("attachment; filename=\"%s\"; filename*=UTF-8''%s", ascii, pct);
    free(ascii);
    free(pct);
    return out;
}

int http_send_fd(struct MHD_Connection *conn, int fd, uint64_t size, const char *content_type,
                   const char *download_name, enum http_cache cache)
{
    struct MHD_Response *resp = MHD_create_response_from_fd64(size, fd);

    if (!resp) {
        close(fd);
        return http_send_error(conn, 500, "internal", "could not stream the file");
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    if (download_name) {
        char *cd = content_disposition(download_name);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, cd);
        free(cd);
    }
    return http_send_queue(conn, 200, resp, cache);
}

int http_send_file(struct MHD_Connection *conn, const char *path, const char *content_type,
                   const char *download_name)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0) {
        if (errno == ENOENT) return http_send_error(conn, 404, "not_found", "file not found");
        LOG_WARN("open %s: %s", path, strerror(errno));
        return http_send_error(conn, 500, "io", "could not open the file");
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return http_send_error(conn, 404, "not_found", "not a regular file");
    }
    return http_send_fd(conn, fd, (uint64_t)st.st_size, content_type ? content_type : "application/octet-stream",
                   download_name, HTTP_CACHE_NO_STORE);
}

/* Small HTML pages for browsers that hit a page (not the API). No inline
 * styles or scripts: the CSP forbids them. */
int http_send_page(struct MHD_Connection *conn, int status, const char *title, const char *body_html,
                     const char *hname, const char *hvalue)
{
    char *html = xasprintf("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                           "<title>traceboard: %s</title></head>\n<body><h1>%s</h1>\n%s\n</body></html>\n",
                           title, title, body_html);
    struct MHD_Response *resp = MHD_create_response_from_buffer(strlen(html), html, MHD_RESPMEM_MUST_FREE);

    if (!resp) {
        free(html);
        return 0;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
    if (hname) MHD_add_response_header(resp, hname, hvalue);
    return http_send_queue(conn, status, resp, HTTP_CACHE_NO_STORE);
}

int http_send_not_found_page(struct MHD_Connection *conn)
{
    return http_send_page(conn, 404, "Not found", "<p>There is no page at this address. <a href=\"./\">Runs</a></p>",
                     NULL, NULL);
}


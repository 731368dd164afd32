/*
 * http_send.h — how responses leave: the one MHD_queue_response
 * (http_send_now), every response's security headers and Cache-Control
 * (http_send_queue), gzip for large text, Content-Disposition for
 * downloads, and the small HTML pages browsers get. The public senders
 * (http_send_json, _text, _error, _err, _file, _empty) are declared in
 * http.h; this header adds what the request pipeline in http.c needs.
 *
 * Threads: MHD wants responses queued from its own callbacks. A handler run
 * on a query worker therefore answers into a struct http_send_capture that
 * the worker installs for its thread (http_send_capture); the MHD thread
 * later queues the captured response with http_send_now. Every function
 * here consumes the MHD_Response it is given.
 */
#ifndef TB_HTTP_SEND_H
#define TB_HTTP_SEND_H

#include <stdint.h>

#include "base/err.h"

struct MHD_Connection;
struct MHD_Response;

enum http_cache { HTTP_CACHE_NO_STORE, HTTP_CACHE_REVALIDATE };

/* A response kept for the MHD thread (see above). */
struct http_send_capture {
    struct MHD_Connection *conn; /* answers to this connection are kept */
    struct MHD_Response *resp;   /* the last one, owned; NULL none */
    int status;
};

/* Installs c (NULL: none) as this thread's capture. */
void http_send_capture(struct http_send_capture *c);

/* The only MHD_queue_response in the program: status, or 0 when MHD
 * refused. */
int http_send_now(struct MHD_Connection *conn, int status, struct MHD_Response *resp);

/* Every response goes out here, with the security headers and the cache
 * policy; kept in the thread's capture when it is for that connection.
 * Returns status, 0 on failure (resp NULL included). */
int http_send_queue(struct MHD_Connection *conn, int status, struct MHD_Response *resp, enum http_cache cache);

/* The JSON error body with one extra header (Allow, WWW-Authenticate). */
int http_send_error_hdr(struct MHD_Connection *conn, int status, const char *code, const char *hname,
                        const char *hvalue, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* size bytes of fd (consumed: closed when the response is done) as
 * content_type; an attachment called download_name when not NULL. */
int http_send_fd(struct MHD_Connection *conn, int fd, uint64_t size, const char *content_type,
                 const char *download_name, enum http_cache cache);

/* A small HTML page (no inline style or script: the CSP forbids them),
 * plus one optional header. */
int http_send_page(struct MHD_Connection *conn, int status, const char *title, const char *body_html,
                   const char *hname, const char *hvalue);

/* The 404 page. */
int http_send_not_found_page(struct MHD_Connection *conn);

#endif

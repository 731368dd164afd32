/*
 * http_stream.h — server-sent event streams (text/event-stream): answers
 * that stay open and carry events as they happen (live job lines).
 *
 * The server owns one hub (started by http_start, stopped by http_stop).
 * A handler opens a stream on its request with a topic (a project name)
 * and a pull function; the stream then lives on MHD's callback response:
 * MHD asks for bytes, the stream pulls what came after its cursor, and
 * when there is nothing the connection is suspended (no thread waits, no
 * polling). http_stream_notify(topic) resumes the streams of that topic;
 * the hub's heartbeat thread resumes every stream each cfg.live_heartbeat
 * seconds to send a keep-alive comment, which is also how a closed client
 * is noticed (the write fails, MHD ends the request and the stream is
 * freed). At most cfg.live_streams are open; more get 503 busy.
 *
 * Threads: pull runs on the connection's MHD thread; notify from any
 * thread. The hub's mutex guards the stream list and each stream's
 * suspended/dirty flags; a stream's buffer and cursor are only touched by
 * its MHD thread. The pull argument is owned by the stream from
 * http_stream_open on (also when it fails) and freed with free_arg.
 */
#ifndef TB_HTTP_STREAM_H
#define TB_HTTP_STREAM_H

#include <stdint.h>

#include "base/err.h"
#include "base/sbuf.h"

struct http_req;
struct http_stream_hub;

/* Appends the SSE text of the events after *cursor to out and advances
 * *cursor; <0 ends the stream. */
typedef int (*http_stream_pull)(void *arg, int64_t *cursor, struct sbuf *out);

int http_stream_hub_start(int max_streams, int heartbeat_s, struct http_stream_hub **out, struct err *e);
/* Ends every stream at its next wake (and wakes them all). Before MHD stops. */
void http_stream_hub_quiesce(struct http_stream_hub *h);
/* After MHD stopped: joins the heartbeat thread and frees h. */
void http_stream_hub_stop(struct http_stream_hub *h);

/* Answers req with an event stream on topic starting after cursor.
 * Returns the status queued (200; 503 when the hub is full or stopping). */
int http_stream_open(struct http_req *req, const char *topic, int64_t cursor, http_stream_pull pull, void *arg,
                     void (*free_arg)(void *));

/* Wakes the streams of topic (new events to pull). Any thread. */
void http_stream_notify(struct http_req *req, const char *topic);

#endif

/*
 * conntrack.h — keeps slow and unauthenticated clients from taking the
 * connection slots that real users need (issue 15).
 *
 * libmicrohttpd's own timeout is an idle timeout, so a client that sends one
 * header byte every few seconds is never cut, and its per-address limit
 * locks out everyone behind `ssh -L` (all 127.0.0.1). This module tracks
 * every open connection instead and enforces two limits:
 *   - head deadline: a connection that has not shown the token must send a
 *     whole request head within head_timeout seconds of being accepted (or
 *     of its previous request ending);
 *   - untrusted share: at most untrusted_max connections may be open without
 *     having shown the token; a new one beyond that evicts the oldest idle
 *     untrusted one, so a new connection always gets in and can show its
 *     token.
 * A connection becomes trusted (for good: a browser's keep-alive connection)
 * when a request on it carried a valid token; with no_auth, when it sent a
 * whole request head. Trusted connections are left to MHD's idle timeout.
 *
 * "Cutting" a connection is shutdown(fd, SHUT_RDWR): MHD then reads EOF and
 * closes it on its own thread. MHD reports the close (conntrack_close)
 * before it closes the fd, and both happen under our lock, so the fd we shut
 * down is always still the connection's.
 *
 * Per-connection states (struct conntrack_conn):
 *   head     waiting for a request head (conntrack_open, conntrack_request_done)
 *   busy     inside a request: never cut (conntrack_head_done)
 *   cut      shut down by a limit, waiting for MHD to close it
 *   (freed)  conntrack_close
 *
 * Threads: every function may be called from any MHD thread; one mutex
 * guards the list. conntrack_start runs a reaper thread that applies the
 * head deadline every quarter of head_timeout (at most every 250 ms).
 */
#ifndef TB_CONNTRACK_H
#define TB_CONNTRACK_H

#include <stdint.h>

#include "base/err.h"

struct conntrack;
struct conntrack_conn;

/* Counts, for logs and tests. */
struct conntrack_stats {
    int open;       /* tracked connections not yet cut */
    int untrusted;  /* of those, without a token */
    uint64_t cut_deadline; /* connections cut by the head deadline so far */
    uint64_t cut_evicted;  /* connections evicted by the untrusted share so far */
};

/* Starts the tracker and its reaper thread. head_timeout_s >= 1,
 * untrusted_max >= 1. OUT *out: owned by caller, release with
 * conntrack_stop. ERR_IO if the thread cannot start. */
int conntrack_start(int head_timeout_s, int untrusted_max, struct conntrack **out, struct err *e);

/* Stops the reaper and frees ct; connections still tracked are forgotten
 * (call after MHD stopped, when none are left). NULL is ignored. */
void conntrack_stop(struct conntrack *ct);

/* A connection was accepted (fd: its socket). It starts untrusted, in
 * state head; if that makes more than untrusted_max untrusted connections,
 * the oldest untrusted one in state head is cut. Returns the record
 * (owned by ct, valid until conntrack_close). */
struct conntrack_conn *conntrack_open(struct conntrack *ct, int fd);

/* A request head arrived on c: state busy; trusted (sticky) when the
 * request showed a valid token, or with no_auth. */
void conntrack_head_done(struct conntrack *ct, struct conntrack_conn *c, int trusted);

/* The request on c ended; an untrusted c gets a new head deadline. */
void conntrack_request_done(struct conntrack *ct, struct conntrack_conn *c);

/* MHD closed c (for any reason): forgets and frees it. */
void conntrack_close(struct conntrack *ct, struct conntrack_conn *c);

/* Cuts every untrusted connection in state head whose deadline is before
 * now_ms (CLOSED clock ms, see conntrack_now_ms). The reaper calls it;
 * tests call it with a chosen time. Returns how many were cut. */
int conntrack_reap(struct conntrack *ct, int64_t now_ms);

/* CLOCK_MONOTONIC in milliseconds: the clock of conntrack_reap. */
int64_t conntrack_now_ms(void);

/* A snapshot of the counts. */
void conntrack_get_stats(struct conntrack *ct, struct conntrack_stats *out);

#endif

/*
 * api_logs.h — a run's job log: POST /api/runs/{id}/logs stores lines,
 * GET /api/runs/{id}/logs reads them on the trace's clock.
 *
 * Lines are parsed by logparse.h and kept in logstore.h (DATA/logs.db).
 * A run's lines are its own plus the live lines of its project and job
 * (catalog_get's "project" and "meta"."job_id", when the run has them).
 * Times: the store keeps wall-clock ns; answers give ts_us on the trace's
 * clock of a rank, ts_us = (wall ns − base_ns) / 1000, where base_ns is the
 * rank's Kineto baseTimeNanoseconds (run.db's rank table). A trace without
 * one (base_ns 0) is taken to carry unix µs already, so ts_us is unix µs.
 *
 * Owns nothing between requests; any MHD thread. A refused body stores
 * nothing (400 with the parser's message naming the line). JSON handed to
 * http_send_json is stolen by it.
 */
#ifndef TB_API_LOGS_H
#define TB_API_LOGS_H

#include <stddef.h>

#include "base/err.h"
#include "store/logstore.h"

struct http_req;

/* POST /api/runs/{id}/logs?rank=&tz= -> 201 {"stored", "skipped", "truncated_bytes"}. */
int api_logs_post(struct http_req *req);

/* GET /api/runs/{id}/logs?rank=&start=&end=&q=&limit=&after= ->
 * {"lines": [{"id", "ts_us", "text", "fields", "rank", "live"}], "next", "base_ns", "clock"}. */
int api_logs_get(struct http_req *req);

/* Lines parsed from a request body or a file, ready for logstore_add. */
struct api_logs_batch {
    struct logstore_line *v;
    char **fields; /* owned JSON texts, parallel to v */
    size_t n;
    size_t skipped, truncated;
    void *parsed; /* the parser's result, which owns the texts */
};

/* Parses text[0..len): ?tz= (zone-less ISO times) and ?rank= (every
 * line's rank) are read from req when req is not NULL; rank >= 0 given
 * here overrides. ERR_INVALID when no line has a timestamp. */
int api_logs_parse(struct http_req *req, const char *text, size_t len, int rank, struct api_logs_batch *b,
                   struct err *e);
void api_logs_batch_free(struct api_logs_batch *b);

#endif

/*
 * logparse.h — a job's log lines parsed into timestamped entries.
 *
 * Two input forms, mixed freely, one per line (LF or CRLF):
 *   - text starting with a timestamp: ISO-8601 ("2026-11-26T06:00:00.123Z",
 *     'T' or space, '.' or ',' before the fraction, zone Z/±HH:MM/±HHMM or
 *     none, optionally inside "[...]") or a unix time whose integer part
 *     has 10 digits (seconds), 13 (ms), 16 (µs) or 19 (ns), with an
 *     optional fraction; other digit counts are not timestamps, so "12
 *     steps" is text. A zone-less ISO time is read in the caller's offset
 *     (UTC unless told).
 *   - JSON objects with "ts" (unix seconds, or a number read by the digit
 *     rule above, or an ISO string); "msg"/"message" is the text, "rank"
 *     (integer) the rank, "job"/"job_id" the job; other number, string and
 *     boolean members are the entry's fields.
 * A line without a timestamp (a traceback, a wrapped message) continues
 * the entry before it (joined with "\n"); such lines before the first
 * timestamp are counted in `skipped`. Blank lines are skipped.
 *
 * Bounds (untrusted input): LOGPARSE_LINE_MAX bytes per physical line,
 * LOGPARSE_ENTRIES_MAX entries, LOGPARSE_FIELDS_MAX fields per entry; over
 * any of them, or a NUL byte, the whole input is refused (ERR_INVALID, the
 * line number in the message) and nothing is returned. An entry's text
 * stops growing at LOGPARSE_TEXT_MAX (the rest counted in `truncated`).
 * Text is repaired to UTF-8.
 *
 * Pure functions, no state: any thread. A struct logparse_result and all it
 * points to is owned by the caller (logparse_free).
 */
#ifndef TB_LOGPARSE_H
#define TB_LOGPARSE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define LOGPARSE_LINE_MAX ((size_t)16 << 10)
#define LOGPARSE_TEXT_MAX ((size_t)64 << 10)
#define LOGPARSE_ENTRIES_MAX 200000
#define LOGPARSE_FIELDS_MAX 64

struct logparse_entry {
    int64_t ts_ns;  /* wall clock, unix ns */
    int rank;       /* -1: the line names none */
    char *text;     /* owned, UTF-8 */
    char *job;      /* owned; NULL when the line names none */
    json_t *fields; /* owned object; NULL when none */
};

struct logparse_result {
    struct logparse_entry *v;
    size_t n, cap;
    size_t skipped;   /* untimed lines before the first timestamp */
    size_t truncated; /* continuation bytes dropped at LOGPARSE_TEXT_MAX */
};

/* Parses buf[0..len). tz_offset_s: seconds east of UTC for zone-less ISO
 * times. On error *out is left empty. */
int logparse_parse(const char *buf, size_t len, int tz_offset_s, struct logparse_result *out, struct err *e);
void logparse_free(struct logparse_result *r);

/* The timestamp at the start of s[0..n) (after optional spaces and '['):
 * 1 with *ns and *used (bytes read, the closing ']' included) when there
 * is one, 0 when not. */
int logparse_timestamp(const char *s, size_t n, int tz_offset_s, int64_t *ns, size_t *used);

/* "+02:00", "-0530", "Z" or "" → seconds east of UTC; ERR_INVALID. */
int logparse_tz(const char *s, int *offset_s, struct err *e);

#endif

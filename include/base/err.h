/*
 * err.h — the one error pattern used across traceboard.
 *
 * Functions that can fail return int: 0 on success, a negative enum err_code
 * otherwise, and fill a caller-provided struct err with a human-readable
 * message. The deepest layer that knows the context writes the message;
 * callers may prefix context with err_prefix(). The message buffer is fixed
 * size and lives in the struct, so an err never owns heap memory and can be
 * copied freely. Thread-safe: no shared state.
 */
#ifndef TB_ERR_H
#define TB_ERR_H

#include <stddef.h>

enum err_code {
    ERR_OK = 0,
    ERR_INVALID = -1,     /* bad input from a user or a file: HTTP 400 */
    ERR_TOO_LARGE = -2,   /* a configured limit was exceeded: HTTP 413 */
    ERR_IO = -3,          /* filesystem error: HTTP 500 (507 when full) */
    ERR_DB = -4,          /* SQLite error: HTTP 500 */
    ERR_NOT_FOUND = -5,   /* HTTP 404 */
    ERR_UNSUPPORTED = -6, /* recognised but not a trace we can read: 415 */
    ERR_AUTH = -7,        /* HTTP 401 */
    ERR_CONFLICT = -8,    /* HTTP 409 */
    ERR_NOSPACE = -9,     /* disk full or read-only store: HTTP 507 */
    ERR_INTERNAL = -10,   /* a bug: HTTP 500 */
    ERR_READ_ONLY = -11,  /* the server started read-only (data folder read-only or full): 503 */
    ERR_DAMAGED = -12,    /* a stored run's database is damaged: 500 "run_damaged" */
    ERR_COMPUTING = -13   /* a run's derived stage is not done yet: 503 "computing" */
};

struct err {
    int code;
    char msg[512];
};

/* Sets e (if not NULL) and returns code, so callers can write
 * `return err_set(e, ERR_INVALID, "bad %s", x);`. */
int err_set(struct err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "context: " to the message already in e; returns e->code. */
int err_prefix(struct err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Clears e to ERR_OK with an empty message. */
void err_clear(struct err *e);

/* The HTTP status that best reports code. */
int err_http_status(int code);

/* A short stable machine name for code ("invalid", "too_large", ...). Static. */
const char *err_code_name(int code);

#endif

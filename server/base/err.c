#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(struct err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        e->code = code;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
    char out[sizeof e->msg];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(out, sizeof out, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n > sizeof out - 3) n = (int)sizeof out - 3;
    out[n++] = ':';
    out[n++] = ' ';
    size_t ol = strnlen(e->msg, sizeof e->msg - 1), room = sizeof out - 1 - (size_t)n;
    if (ol > room) ol = room;
    memcpy(out + n, e->msg, ol);
    out[(size_t)n + ol] = '\0';
    memcpy(e->msg, out, sizeof out);
    return e->code;
}

void err_clear(struct err *e)
{
    e->code = ERR_OK;
    e->msg[0] = '\0';
}

int err_http_status(int code)
{
    switch (code) {
    case ERR_OK: return 200;
    case ERR_INVALID: return 400;
    case ERR_TOO_LARGE: return 413;
    case ERR_NOT_FOUND: return 404;
    case ERR_UNSUPPORTED: return 415;
    case ERR_AUTH: return 401;
    case ERR_CONFLICT: return 409;
    case ERR_NOSPACE: return 507;
    /* 503: writes are off until the folder is fixed and the server restarted;
     * reads are served, so the service is up but this part is unavailable. */
    case ERR_READ_ONLY: return 503;
    /* 500: nothing in the request is wrong and no retry helps; the message
     * says what to do (delete the run, upload it again). */
    case ERR_DAMAGED: return 500;
    /* 503: the run is there and the answer will be soon; nothing to fix */
    case ERR_COMPUTING: return 503;
    default: return 500;
    }
}

const char *err_code_name(int code)
{
    switch (code) {
    case ERR_OK: return "ok";
    case ERR_INVALID: return "invalid";
    case ERR_TOO_LARGE: return "too_large";
    case ERR_IO: return "io";
    case ERR_DB: return "db";
    case ERR_NOT_FOUND: return "not_found";
    case ERR_UNSUPPORTED: return "unsupported";
    case ERR_AUTH: return "unauthorized";
    case ERR_CONFLICT: return "conflict";
    case ERR_NOSPACE: return "no_space";
    case ERR_READ_ONLY: return "read_only";
    case ERR_DAMAGED: return "run_damaged";
    case ERR_COMPUTING: return "computing";
    default: return "internal";
    }
}

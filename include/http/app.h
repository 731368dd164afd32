/*
 * app.h — the one server context.
 *
 * main() fills a struct app before starting the HTTP daemon and frees it
 * after stopping it. Handlers receive it as the MHD callback closure and only
 * read `cfg` and `token`; `cat`, `logs` and `ing` are thread-safe services. There are
 * no other process-wide mutable globals.
 */
#ifndef TB_APP_H
#define TB_APP_H

#include "base/config.h"

struct catalog;
struct ingest_service;
struct logstore;

struct app {
    struct config cfg;            /* read-only after start */
    char token[128];              /* effective auth token ("" with no_auth) */
    struct catalog *cat;          /* thread-safe */
    struct ingest_service *ing;   /* thread-safe */
    struct logstore *logs;        /* job log lines (DATA/logs.db), thread-safe */
};

#endif

/*
 * config.h — server settings: one table drives defaults, parsing of
 * config/traceboard.conf, command-line overrides and `--help`.
 *
 * File format: `key = value` lines, `#` comments, blank lines ignored; values
 * may be quoted with "". Unknown keys and out-of-range values are errors that
 * name the file and line. Command-line flags `--key value` (or `--key=value`)
 * use the same keys with '_' written as '-', and override the file.
 *
 * A struct config is a plain value filled once by main before threads start
 * and read-only afterwards. It owns no heap memory (fixed buffers), so it can
 * be copied and needs no free.
 */
#ifndef TB_CONFIG_H
#define TB_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "err.h"

#define CONFIG_PATH_MAX 1024

struct config {
    char bind[64];                 /* listen address, default 127.0.0.1 */
    int port;                      /* default 8080; 0 = pick a free port */
    char data_dir[CONFIG_PATH_MAX];/* catalog + runs, default ./data */
    uint64_t upload_limit;         /* bytes of one upload body, default 4 GiB */
    uint64_t inflate_limit;        /* bytes of one trace once inflated, default 64 GiB */
    uint64_t inflate_ratio;        /* max inflated/compressed ratio, default 200 */
    char token[128];               /* auth token; empty = random at start */
    int no_auth;                   /* 1 = no token required (explicit only) */
    char logdir[CONFIG_PATH_MAX];  /* folder watched for traces; empty = off */
    int logdir_interval;           /* seconds between logdir scans, default 10 */
    char base_path[256];           /* URL prefix behind a reverse proxy, e.g. /tb */
    char web_dir[CONFIG_PATH_MAX]; /* serve web/ from disk instead of the binary */
    int threads;                   /* HTTP worker threads; 0 = number of cores */
    int ingest_workers;            /* concurrent ingests, default 1 */
    int conn_timeout;              /* seconds an idle connection may stay, default 60 */
    int max_connections;           /* default 256 */
    int keep_sources;              /* keep uploaded trace files for download, default 1 */
    uint64_t sort_memory;          /* bytes of ingest sort buffer, default 64 MiB */
    char log_level[16];            /* debug|info|warn|error, default info */
};

/* Fills c with every key's default. */
void config_defaults(struct config *c);

/* Reads a config file over c. Returns 0, or ERR_IO / ERR_INVALID with the
 * file name and line in e. A missing file is ERR_IO. */
int config_load_file(struct config *c, const char *path, struct err *e);

/* Sets one key from its text form (as in the file). Returns 0 or ERR_INVALID
 * naming the key. */
int config_set(struct config *c, const char *key, const char *value, struct err *e);

/* Writes every key with its default and help line, in the file's format.
 * Used by `traceboard --help` and to check config/traceboard.conf. */
void config_write_help(FILE *out);

#endif

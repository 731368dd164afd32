/*
 * config.h — server settings: one table drives defaults, parsing of
 * config/traceboard.conf, command-line overrides and `--help`.
 *
 * File format: `key = value` lines, `#` comments, blank lines ignored; values
 * may be quoted with "". Unknown keys and out-of-range values are errors that
 * name the file and line. Command-line flags `--key value` (or `--key=value`)
 * use the same keys with '_' written as '-', and override the file.
 *
 * Settings of the stages above base/ (the rules' thresholds) are declared
 * where they are used and registered at start (config_register, below);
 * their values live in struct config_rules as a key/value store.
 *
 * A struct config is a plain value filled once by main before threads start
 * and read-only afterwards. It owns no heap memory (fixed buffers; pointers
 * only into static tables), so it can be copied and needs no free.
 */
#ifndef TB_CONFIG_H
#define TB_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"

#define CONFIG_PATH_MAX 1024

/* A numeric setting declared outside base/ (today: each recommendation
 * rule's thresholds, in its `struct rules_def`). base/ may not include the
 * stages above it (tests/check_layout.sh, STAGE_DEPS), so the dependency
 * runs the other way: the owner keeps a static table of these and hands it
 * to config_register() at start, before config_defaults(); from then on the
 * key is read from the file, set by `--key value` and listed by --help like
 * any config_table[] key, after them, in registration order.
 * Values are decimals (no sign or exponent) within [min, max]; percentages
 * are 0..100 as written in the file. */
struct config_param {
    const char *key;  /* file key, unique among all settings ("rule_gap_ms") */
    const char *def;  /* default, as written in the file ("1") */
    const char *unit; /* what the number counts ("%", "ms", "MiB", "steps"): for readers */
    double min, max;  /* inclusive bounds */
    const char *help; /* the --help line */
};

/* Most registered parameters, all owners together. */
#define CONFIG_PARAMS_MAX 64

/* One registered parameter's value; param points into its owner's static
 * table (never owned). */
struct config_value {
    const struct config_param *param;
    double value;
};

/* What the recommendation rules read: the rules switched off, and the
 * values of the registered parameters (a generic key/value store: config.c
 * knows no rule). config_defaults() fills one value per registered
 * parameter, in registration order; config_set() replaces it. Owners read
 * a value through config_param_value(). */
struct config_rules {
    char off[512];            /* rule ids switched off, comma or space separated */
    size_t nvalues;
    struct config_value values[CONFIG_PARAMS_MAX];
};

struct config {
    char bind[64];                 /* listen address, default 127.0.0.1 */
    int port;                      /* default 8080; 0 = pick a free port */
    char data_dir[CONFIG_PATH_MAX];/* catalog + runs, default ./data */
    uint64_t upload_limit;         /* bytes of one upload body, default 4 GiB */
    uint64_t inflate_limit;        /* bytes of one trace once inflated, default 64 GiB */
    uint64_t inflate_ratio;        /* max inflated/compressed ratio, default 200 */
    char inflate[8];               /* auto|zlib: gzip decompressor, default auto */
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
    int head_timeout;              /* seconds to send a whole request head, default 10 */
    int untrusted_connections;     /* slots for connections without a token yet; 0 = max_connections/4 */
    int query_workers;             /* threads for heavy queries; 0 = number of cores */
    int query_queue;               /* heavy queries waiting for a worker, default 64 */
    int query_budget_ms;           /* time one heavy query may take, default 10000 */
    int live_streams;              /* live-line event streams open at once, default 32 */
    int live_heartbeat;            /* seconds between keep-alives on an idle stream, default 15 */
    int keep_sources;              /* keep uploaded trace files for download, default 1 */
    uint64_t sort_memory;          /* bytes of ingest sort buffer, default 64 MiB */
    char derive_hold[CONFIG_PATH_MAX]; /* tests only: derive waits while this file exists */
    char log_level[16];            /* debug|info|warn|error, default info */
    int allow_duplicates;          /* store files uploaded before again without asking, default 0 */
    int regression_pct;            /* trend: slower than the previous run of its configuration by more, default 10 */
    char volatile_meta[512];       /* metadata keys that do not make a configuration, comma separated */
    struct config_rules rules;     /* rules switched off, registered parameters */
};

/* Fills c with every key's default. */
void config_defaults(struct config *c);

/* Reads a config file over c. Returns 0, or ERR_IO / ERR_INVALID with the
 * file name and line in e. A missing file is ERR_IO. */
int config_load_file(struct config *c, const char *path, struct err *e);

/* Sets one key from its text form (as in the file). Returns 0 or ERR_INVALID
 * naming the key. */
int config_set(struct config *c, const char *key, const char *value, struct err *e);

/* Writes every key with its default and help line, in the file's format:
 * config_table[] first, then the registered parameters. Used by
 * `traceboard --help` and to check config/traceboard.conf. */
void config_write_help(FILE *out);

/* Adds n parameters (a static table, borrowed for the life of the
 * process) to the settings. Call from main (or a test) before
 * config_defaults() and before any thread starts: the registry is
 * process-wide and read without locks afterwards. Registering the same
 * table again is a no-op. Returns 0, or ERR_INVALID when a key is taken
 * by another setting, a default is out of its bounds, or
 * CONFIG_PARAMS_MAX would be passed (nothing of the table registered). */
int config_register(const struct config_param *params, size_t n, struct err *e);

/* The value of parameter p (an entry of a registered table) in r: the one
 * set, else p's default. Works for a table never registered too (a test
 * or tool that skipped config_register gets the defaults). */
double config_param_value(const struct config_rules *r, const struct config_param *p);

#endif

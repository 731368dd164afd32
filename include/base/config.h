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

#include "base/err.h"

#define CONFIG_PATH_MAX 1024

/* Thresholds of the recommendation rules (rules.h; defaults from
 * ../shared/docs/rules.md). Percentages are 0..100 as written in the file. */
struct config_rules {
    char off[512];            /* rule ids switched off, comma or space separated */
    double dataloader_pct;    /* dataloader_bound: DataLoader share of the step */
    double dataloader_high_pct;
    double gpu_util_pct;      /* low_gpu_utilization, low_gpu_memory */
    double launch_idle_pct;   /* kernel_launch_bound: GPU idle share of the steps */
    double amp_eligible_pct;  /* enable_amp: TC-eligible ops' share of kernel time */
    double amp_tc_pct;        /* enable_amp: tensor-core share of kernel time */
    double transpose_pct;     /* layout_transposes: share of kernel time */
    double sync_per_step;     /* excessive_host_sync: blocking calls per step */
    double sync_pct;          /* excessive_host_sync: their share of the step */
    double pageable_mib;      /* pageable_memcpy: MiB moved per step */
    double pageable_pct;      /* pageable_memcpy: share of the step */
    double low_memory_pct;    /* low_gpu_memory: peak share of the GPU's memory */
    double memory_limit_pct;  /* memory_near_limit */
    double growth_steps;      /* memory_growth: consecutive growing steps */
    double growth_mib;        /* memory_growth: least total growth, MiB ... */
    double growth_peak_pct;   /* ... or this share of the peak, the larger */
    double comm_pct;          /* communication_heavy */
    double overlap_comm_pct;  /* comm_not_overlapped: communication share ... */
    double overlap_pct;       /* ... and the least share of it overlapped */
    double straggler_pct;     /* straggler: slower than the median rank by ... */
    double straggler_ms;      /* ... and by at least this many ms */
    double gap_ms;            /* gpu_idle_gaps: smallest gap counted */
    double gap_pct;           /* gpu_idle_gaps: their share of the steps */
};

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
    int head_timeout;              /* seconds to send a whole request head, default 10 */
    int untrusted_connections;     /* slots for connections without a token yet; 0 = max_connections/4 */
    int query_workers;             /* threads for heavy queries; 0 = number of cores */
    int query_queue;               /* heavy queries waiting for a worker, default 64 */
    int query_budget_ms;           /* time one heavy query may take, default 10000 */
    int keep_sources;              /* keep uploaded trace files for download, default 1 */
    uint64_t sort_memory;          /* bytes of ingest sort buffer, default 64 MiB */
    char log_level[16];            /* debug|info|warn|error, default info */
    struct config_rules rules;     /* recommendation thresholds */
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

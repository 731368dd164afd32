/* config.c — settings: config_table[] and the registered parameters drive
 * defaults, file parsing, command-line overrides and the --help text (see
 * include/base/config.h). */
#define LOG_MODULE "config"
#include "base/config.h"

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"

/* ------------------------------------------------------------------------ */
/* The table                                                                  */
/* ------------------------------------------------------------------------ */

enum config_type {
    CONFIG_INT,    /* int, decimal, range-checked */
    CONFIG_U64,    /* uint64_t, plain decimal count */
    CONFIG_SIZE,   /* uint64_t bytes, suffixes K M G T (powers of 1024) */
    CONFIG_BOOL,   /* int 0/1: true/false/yes/no/on/off/1/0 */
    CONFIG_STRING  /* char[size], NUL-terminated */
};

struct config_entry {
    const char *key;
    enum config_type type;
    size_t offset;      /* of the field in struct config */
    size_t size;        /* of the field (string capacity includes the NUL) */
    const char *def;    /* default, in the same text form as the file */
    uint64_t min, max;  /* numeric range (inclusive); unused for strings/bools */
    /* Extra check for strings whose syntax matters (addresses, URL paths);
     * NULL when any text that fits is fine. */
    int (*check)(const char *value, struct err *e);
    const char *help;
};

static int check_bind(const char *v, struct err *e);
static int check_base_path(const char *v, struct err *e);
static int check_token(const char *v, struct err *e);
static int check_log_level(const char *v, struct err *e);
static int check_rules_off(const char *v, struct err *e);
static int check_inflate(const char *v, struct err *e);

#define FIELD(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)
#define KIB ((uint64_t)1024)
#define TIB (KIB * KIB * KIB * KIB)

static const struct config_entry config_table[] = {
    { "bind", CONFIG_STRING, FIELD(bind), "127.0.0.1", 0, 0, check_bind,
      "Address to listen on: an IPv4 or IPv6 literal (0.0.0.0 or :: for all interfaces)." },
    { "port", CONFIG_INT, FIELD(port), "8080", 0, 65535, NULL,
      "TCP port to listen on; 0 picks a free port (printed at start)." },
    { "data_dir", CONFIG_STRING, FIELD(data_dir), "./data", 0, 0, NULL,
      "Folder holding the catalog and every run's database." },
    { "upload_limit", CONFIG_SIZE, FIELD(upload_limit), "4G", 1024, 1024 * TIB, NULL,
      "Largest accepted upload body (suffixes K, M, G, T)." },
    { "inflate_limit", CONFIG_SIZE, FIELD(inflate_limit), "64G", 1024, 1024 * TIB, NULL,
      "Largest size one trace file may reach once decompressed." },
    { "inflate_ratio", CONFIG_U64, FIELD(inflate_ratio), "200", 1, 1000000, NULL,
      "Largest decompressed/compressed size ratio accepted (guards against zip bombs)." },
    { "inflate", CONFIG_STRING, FIELD(inflate), "auto", 0, 0, check_inflate,
      "gzip decompressor: auto (ISA-L igzip when built in, else zlib) or zlib." },
    { "token", CONFIG_STRING, FIELD(token), "", 0, 0, check_token,
      "Access token required by the web UI and API; empty picks a random one at each start." },
    { "no_auth", CONFIG_BOOL, FIELD(no_auth), "false", 0, 1, NULL,
      "Disable the token check entirely (only on a trusted, private network)." },
    { "logdir", CONFIG_STRING, FIELD(logdir), "", 0, 0, NULL,
      "Folder watched for new trace files to import; empty disables watching." },
    { "logdir_interval", CONFIG_INT, FIELD(logdir_interval), "10", 1, 86400, NULL,
      "Seconds between two scans of logdir." },
    { "base_path", CONFIG_STRING, FIELD(base_path), "", 0, 0, check_base_path,
      "URL prefix when served behind a reverse proxy, e.g. /tb; empty serves at /." },
    { "web_dir", CONFIG_STRING, FIELD(web_dir), "", 0, 0, NULL,
      "Serve the web UI from this folder instead of the copy built into the binary." },
    { "threads", CONFIG_INT, FIELD(threads), "0", 0, 1024, NULL,
      "HTTP worker threads; 0 uses one per CPU core." },
    { "ingest_workers", CONFIG_INT, FIELD(ingest_workers), "1", 1, 64, NULL,
      "Uploads imported at the same time." },
    { "conn_timeout", CONFIG_INT, FIELD(conn_timeout), "60", 1, 86400, NULL,
      "Seconds an idle HTTP connection is kept open." },
    { "max_connections", CONFIG_INT, FIELD(max_connections), "256", 1, 65536, NULL,
      "Most HTTP connections open at once." },
    { "head_timeout", CONFIG_INT, FIELD(head_timeout), "10", 1, 3600, NULL,
      "Seconds a client has to send a whole request head (cuts clients that dribble bytes)." },
    { "untrusted_connections", CONFIG_INT, FIELD(untrusted_connections), "0", 0, 65535, NULL,
      "Connections that have not shown the token yet, at most (oldest cut first); 0 = a quarter of max_connections." },
    { "query_workers", CONFIG_INT, FIELD(query_workers), "0", 0, 256, NULL,
      "Threads running heavy queries (timeline, search, analyses, diff...); 0 uses one per CPU core." },
    { "query_queue", CONFIG_INT, FIELD(query_queue), "64", 0, 4096, NULL,
      "Heavy queries waiting for a free query worker, at most; more are answered 503 busy." },
    { "query_budget_ms", CONFIG_INT, FIELD(query_budget_ms), "10000", 1, 3600000, NULL,
      "Milliseconds one heavy query may run before it is stopped and answered 503 over_budget." },
    { "live_streams", CONFIG_INT, FIELD(live_streams), "32", 1, 4096, NULL,
      "Live-line streams (server-sent events) open at once, at most; more are answered 503 busy." },
    { "live_heartbeat", CONFIG_INT, FIELD(live_heartbeat), "15", 1, 3600, NULL,
      "Seconds between keep-alive comments on an idle live-line stream (a closed client is noticed at the next one)." },
    { "keep_sources", CONFIG_BOOL, FIELD(keep_sources), "true", 0, 1, NULL,
      "Keep uploaded trace files so they can be downloaded again." },
    { "sort_memory", CONFIG_SIZE, FIELD(sort_memory), "64M", 1024 * KIB, TIB, NULL,
      "Memory one import may use to sort events before spilling to disk." },
    { "derive_hold", CONFIG_STRING, FIELD(derive_hold), "", 0, 0, NULL,
      "Tests only: a new run's derived stages wait while this file exists (its computing state observed)." },
    { "log_level", CONFIG_STRING, FIELD(log_level), "info", 0, 0, check_log_level,
      "Least severe log messages written: debug, info, warn or error." },
    { "allow_duplicates", CONFIG_BOOL, FIELD(allow_duplicates), "false", 0, 1, NULL,
      "Store trace files that are stored already as a new run without asking (otherwise 409 duplicate)." },
    { "regression_pct", CONFIG_INT, FIELD(regression_pct), "10", 1, 1000, NULL,
      "A project's trend marks a run whose average step is more than this % slower than the previous run of its configuration." },
    { "volatile_meta", CONFIG_STRING, FIELD(volatile_meta), "job_id,commit,git_commit,host,hostname,node,date,run_id", 0, 0, NULL,
      "Run metadata keys that change from run to run and so do not make a configuration (comma separated)." },
    /* Recommendation rules (docs/analysis.md "Recommendations"); applied at import. Their
     * thresholds are registered parameters, declared by each rule (config_register). */
    { "rules_off", CONFIG_STRING, FIELD(rules.off), "", 0, 0, check_rules_off,
      "Recommendation rules switched off: their ids, separated by commas (e.g. \"low_gpu_memory,straggler\")." },
};

#define CONFIG_NKEYS (sizeof config_table / sizeof config_table[0])

/* The registered parameters (config_register), in registration order.
 * Written before threads start, read-only afterwards. */
static const struct config_param *params_reg[CONFIG_PARAMS_MAX];
static size_t params_nreg;

/* ------------------------------------------------------------------------ */
/* Value parsers                                                              */
/* ------------------------------------------------------------------------ */

static int check_bind(const char *v, struct err *e)
{
    unsigned char buf[sizeof(struct in6_addr)];

    if (inet_pton(AF_INET, v, buf) == 1 || inet_pton(AF_INET6, v, buf) == 1) return 0;
    return err_set(e, ERR_INVALID, "'%s' is not an IPv4 or IPv6 address literal", v);
}

/* base_path ends up in Set-Cookie and Location headers, so it is limited to
 * characters that need no quoting anywhere. */
static int check_base_path(const char *v, struct err *e)
{
    size_t n = strlen(v);

    if (n == 0) return 0;
    if (v[0] != '/' || n < 2 || v[n - 1] == '/')
        return err_set(e, ERR_INVALID, "'%s' must start with '/' and not end with '/' (e.g. /tb)", v);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (!(isalnum(c) || strchr("/-._~", c)))
            return err_set(e, ERR_INVALID, "'%s' may only hold letters, digits and / - . _ ~", v);
        if (c == '/' && v[i + 1] == '/') return err_set(e, ERR_INVALID, "'%s' has an empty segment", v);
    }
    if (strstr(v, "/./") || strstr(v, "/../") || strcmp(v + n - 2, "/.") == 0 ||
        (n >= 3 && strcmp(v + n - 3, "/..") == 0))
        return err_set(e, ERR_INVALID, "'%s' may not contain . or .. segments", v);
    return 0;
}

/* The token travels in URLs and cookies, so only unreserved URL characters. */
static int check_token(const char *v, struct err *e)
{
    for (const char *p = v; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!(isalnum(c) || strchr("-._~", c)))
            return err_set(e, ERR_INVALID, "may only hold letters, digits and - . _ ~");
    }
    return 0;
}

/* Rule ids: letters, digits and _, separated by commas or spaces (an unknown
 * id is not an error here: config.c does not know the catalog; rules.c
 * warns about it). */
static int check_rules_off(const char *v, struct err *e)
{
    for (const char *p = v; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!(isalnum(c) || c == '_' || c == ',' || c == ' '))
            return err_set(e, ERR_INVALID, "'%s': rule ids separated by commas", v);
    }
    return 0;
}

static int check_inflate(const char *v, struct err *e)
{
    if (strcmp(v, "auto") != 0 && strcmp(v, "zlib") != 0)
        return err_set(e, ERR_INVALID, "'%s' is not auto or zlib", v);
    return 0;
}

static int check_log_level(const char *v, struct err *e)
{
    if (log_level_parse(v) < 0)
        return err_set(e, ERR_INVALID, "'%s' is not one of debug, info, warn, error, quiet", v);
    return 0;
}

/* Decimal digits only (no sign, no spaces); overflow is an error. */
static int parse_u64(const char *s, const char **end, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;

    if (!isdigit((unsigned char)*p)) return -1;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *end = p;
    *out = v;
    return 0;
}

/* "123", "64M", "4G", "4GiB", "512k", "1TB": powers of 1024. */
static int parse_size(const char *s, uint64_t *out)
{
    const char *p;
    uint64_t v, mult = 1;

    if (parse_u64(s, &p, &v) < 0) return -1;
    switch (toupper((unsigned char)*p)) {
    case 'K': mult = KIB; p++; break;
    case 'M': mult = KIB * KIB; p++; break;
    case 'G': mult = KIB * KIB * KIB; p++; break;
    case 'T': mult = TIB; p++; break;
    default: break;
    }
    if (mult > 1 && (p[0] == 'i' || p[0] == 'I') && (p[1] == 'B' || p[1] == 'b')) p += 2;
    else if (p[0] == 'B' || p[0] == 'b') p++;
    if (*p) return -1;
    if (v > UINT64_MAX / mult) return -1;
    *out = v * mult;
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    static const char *yes[] = { "true", "yes", "on", "1" };
    static const char *no[] = { "false", "no", "off", "0" };

    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(s, no[i]) == 0) return *out = 0, 0;
    }
    return -1;
}

/* 1 if key names table key k; '-' matches '_' so command-line spellings
 * work too. */
static int key_is(const char *k, const char *key)
{
    while (*k && (*k == *key || (*k == '_' && *key == '-'))) k++, key++;
    return *k == '\0' && *key == '\0';
}

/* Finds a key of config_table[]. Returns a pointer into it or NULL. */
static const struct config_entry *find_entry(const char *key)
{
    for (size_t i = 0; i < CONFIG_NKEYS; i++)
        if (key_is(config_table[i].key, key)) return &config_table[i];
    return NULL;
}

/* Finds a registered parameter by key; NULL when none. */
static const struct config_param *find_param(const char *key)
{
    for (size_t i = 0; i < params_nreg; i++)
        if (key_is(params_reg[i]->key, key)) return params_reg[i];
    return NULL;
}

/* Parses a parameter's value: digits with an optional fraction (no sign,
 * exponent, inf or nan) within its bounds. */
static int parse_param(const struct config_param *p, const char *value, double *out, struct err *e)
{
    size_t n = strspn(value, "0123456789.");
    char *rend;
    double d = strtod(value, &rend);

    if (n == 0 || value[n] || rend != value + n || d < p->min || d > p->max)
        return err_set(e, ERR_INVALID, "%s: '%s' is not a number from %.15g to %.15g", p->key, value, p->min,
                       p->max);
    *out = d;
    return 0;
}

/* Stores p's value in r: replaces the one there or appends (r has room:
 * at most one value per registered parameter). */
static void store_param(struct config_rules *r, const struct config_param *p, double v)
{
    size_t i;

    for (i = 0; i < r->nvalues && r->values[i].param != p; i++) {}
    if (i == r->nvalues) {
        assert(i < CONFIG_PARAMS_MAX);
        r->nvalues++;
        r->values[i].param = p;
    }
    r->values[i].value = v;
}

static int apply(struct config *c, const struct config_entry *ce, const char *value, struct err *e)
{
    char *field = (char *)c + ce->offset;
    uint64_t u;
    const char *end;
    int b;

    switch (ce->type) {
    case CONFIG_INT:
        if (parse_u64(value, &end, &u) < 0 || *end || u < ce->min || u > ce->max)
            return err_set(e, ERR_INVALID, "%s: '%s' is not a whole number from %llu to %llu", ce->key,
                           value, (unsigned long long)ce->min, (unsigned long long)ce->max);
        *(int *)(void *)field = (int)u;
        return 0;
    case CONFIG_U64:
        if (parse_u64(value, &end, &u) < 0 || *end || u < ce->min || u > ce->max)
            return err_set(e, ERR_INVALID, "%s: '%s' is not a whole number from %llu to %llu", ce->key,
                           value, (unsigned long long)ce->min, (unsigned long long)ce->max);
        *(uint64_t *)(void *)field = u;
        return 0;
    case CONFIG_SIZE:
        if (parse_size(value, &u) < 0)
            return err_set(e, ERR_INVALID, "%s: '%s' is not a size (e.g. 512K, 64M, 4G)", ce->key, value);
        if (u < ce->min || u > ce->max)
            return err_set(e, ERR_INVALID, "%s: %s is outside %llu..%llu bytes", ce->key, value,
                           (unsigned long long)ce->min, (unsigned long long)ce->max);
        *(uint64_t *)(void *)field = u;
        return 0;
    case CONFIG_BOOL:
        if (parse_bool(value, &b) < 0)
            return err_set(e, ERR_INVALID, "%s: '%s' is not true or false", ce->key, value);
        *(int *)(void *)field = b;
        return 0;
    case CONFIG_STRING:
        if (strlen(value) >= ce->size)
            return err_set(e, ERR_INVALID, "%s: value longer than %zu bytes", ce->key, ce->size - 1);
        if (ce->check && ce->check(value, e) < 0) return err_prefix(e, "%s", ce->key);
        memcpy(field, value, strlen(value) + 1);
        return 0;
    }
    return err_set(e, ERR_INTERNAL, "%s: bad table type", ce->key);
}

/* ------------------------------------------------------------------------ */
/* Public API                                                                 */
/* ------------------------------------------------------------------------ */

void config_defaults(struct config *c)
{
    struct err e;
    double v;

    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < CONFIG_NKEYS; i++) {
        int rc = apply(c, &config_table[i], config_table[i].def, &e);
        /* A default that fails its own check is a bug in the table. */
        if (rc < 0) LOG_ERROR("bad default in config_table: %s", e.msg);
        assert(rc == 0);
    }
    /* config_register checked every default */
    for (size_t i = 0; i < params_nreg; i++)
        if (parse_param(params_reg[i], params_reg[i]->def, &v, &e) == 0) store_param(&c->rules, params_reg[i], v);
}

int config_set(struct config *c, const char *key, const char *value, struct err *e)
{
    const struct config_entry *ce = find_entry(key);
    const struct config_param *p;
    double v;

    if (ce) return apply(c, ce, value, e);
    if (!(p = find_param(key))) return err_set(e, ERR_INVALID, "unknown setting '%s'", key);
    if (parse_param(p, value, &v, e) < 0) return ERR_INVALID;
    store_param(&c->rules, p, v);
    return 0;
}

int config_register(const struct config_param *params, size_t n, struct err *e)
{
    double v;

    for (size_t i = 0; i < params_nreg; i++)
        if (params_reg[i] == params) return 0;
    if (n > CONFIG_PARAMS_MAX - params_nreg)
        return err_set(e, ERR_INVALID, "%s: more than %d registered settings", n ? params[0].key : "?",
                       CONFIG_PARAMS_MAX);
    for (size_t i = 0; i < n; i++) {
        const struct config_param *p = &params[i];
        if (find_entry(p->key) || find_param(p->key))
            return err_set(e, ERR_INVALID, "setting '%s' is declared twice", p->key);
        for (size_t j = 0; j < i; j++)
            if (strcmp(params[j].key, p->key) == 0)
                return err_set(e, ERR_INVALID, "setting '%s' is declared twice", p->key);
        if (parse_param(p, p->def, &v, e) < 0) return err_prefix(e, "default");
    }
    for (size_t i = 0; i < n; i++) params_reg[params_nreg++] = &params[i];
    return 0;
}

double config_param_value(const struct config_rules *r, const struct config_param *p)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (r->values[i].param == p) return r->values[i].value;
    return strtod(p->def, NULL);
}

/* Splits one line into key and value in place. Returns 1 for a setting,
 * 0 for a blank or comment line, <0 with e set (message without location). */
static int parse_line(char *line, char **key, char **value, struct err *e)
{
    char *p = line, *k, *kend, *v, *w;

    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\0' || *p == '#') return 0;
    k = p;
    while (*p && (isalnum((unsigned char)*p) || *p == '_' || *p == '-')) p++;
    kend = p;
    if (kend == k) return err_set(e, ERR_INVALID, "expected 'key = value'");
    while (*p == ' ' || *p == '\t') p++;
    if (*p != '=') return err_set(e, ERR_INVALID, "expected '=' after '%.*s'", (int)(kend - k), k);
    *kend = '\0';
    p++;
    while (*p == ' ' || *p == '\t') p++;

    if (*p == '"') {
        /* Quoted: \" and \\ are the only escapes; the rest is literal. */
        v = w = ++p;
        for (;;) {
            if (*p == '\0') return err_set(e, ERR_INVALID, "%s: missing closing quote", k);
            if (*p == '"') break;
            if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
            *w++ = *p++;
        }
        p++;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != '\0' && *p != '#') return err_set(e, ERR_INVALID, "%s: text after the closing quote", k);
        *w = '\0';
    } else {
        /* Unquoted: a '#' after whitespace starts a comment; trailing
         * whitespace is dropped. */
        v = p;
        while (*p && !(*p == '#' && p > v && (p[-1] == ' ' || p[-1] == '\t'))) p++;
        while (p > v && (p[-1] == ' ' || p[-1] == '\t')) p--;
        *p = '\0';
    }
    *key = k;
    *value = v;
    return 1;
}

/* Reads one line into buf without its "\n" / "\r\n". Returns 1 for a line,
 * 0 at end of file, -1 if the line does not fit or holds a NUL byte. */
static int read_line(FILE *f, char *buf, size_t size)
{
    size_t n = 0;
    int ch, bad = 0;

    while ((ch = getc(f)) != EOF && ch != '\n') {
        if (ch == '\0' || n + 1 >= size) bad = 1;
        else buf[n++] = (char)ch;
    }
    if (ch == EOF && n == 0 && !bad) return 0;
    if (n > 0 && buf[n - 1] == '\r') n--;
    buf[n] = '\0';
    return bad ? -1 : 1;
}

int config_load_file(struct config *c, const char *path, struct err *e)
{
    char line[4096];
    FILE *f = fopen(path, "r");
    int lineno = 0, rc = 0, r;

    if (!f) return err_set(e, ERR_IO, "%s: %s", path, strerror(errno));
    while ((r = read_line(f, line, sizeof line)) != 0) {
        char *key = NULL, *value = NULL;
        lineno++;
        if (r < 0) {
            rc = err_set(e, ERR_INVALID, "%s:%d: line too long or holds a NUL byte", path, lineno);
            break;
        }
        r = parse_line(line, &key, &value, e);
        if (r == 1) r = config_set(c, key, value, e);
        if (r < 0) {
            rc = err_prefix(e, "%s:%d", path, lineno);
            break;
        }
    }
    if (rc == 0 && ferror(f)) rc = err_set(e, ERR_IO, "%s: read error", path);
    fclose(f);
    return rc;
}

/* Strings are always written quoted so empty values and values with '#'
 * read back unchanged. */
void config_write_help(FILE *out)
{
    for (size_t i = 0; i < CONFIG_NKEYS; i++) {
        const struct config_entry *ce = &config_table[i];
        fprintf(out, "# %s\n", ce->help);
        if (ce->type == CONFIG_STRING) fprintf(out, "# %s = \"%s\"\n", ce->key, ce->def);
        else fprintf(out, "# %s = %s\n", ce->key, ce->def);
        if (i + 1 < CONFIG_NKEYS || params_nreg) fputc('\n', out);
    }
    for (size_t i = 0; i < params_nreg; i++) {
        fprintf(out, "# %s\n# %s = %s\n", params_reg[i]->help, params_reg[i]->key, params_reg[i]->def);
        if (i + 1 < params_nreg) fputc('\n', out);
    }
}

/* config_fuzz.c — the config file parser through config_load_file, plus
 * config_set on "key=value" inputs. Invariants: every string setting stays
 * NUL-terminated inside its buffer and numbers stay in their ranges,
 * whatever the input did (the rules' registered thresholds too). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "derive/rules.h"

#define TERMINATED(f) (memchr((f), '\0', sizeof(f)) != NULL)

static void check(const struct config *c)
{
    if (!TERMINATED(c->bind) || !TERMINATED(c->data_dir) || !TERMINATED(c->token) || !TERMINATED(c->logdir) ||
        !TERMINATED(c->base_path) || !TERMINATED(c->web_dir) || !TERMINATED(c->log_level))
        abort();
    if (c->port < 0 || c->port > 65535 || c->threads < 0 || c->ingest_workers < 1 || c->conn_timeout < 1 ||
        c->max_connections < 1 || (c->no_auth != 0 && c->no_auth != 1) || c->upload_limit < 1024 ||
        c->sort_memory < 1024 * 1024 || c->inflate_ratio < 1)
        abort();
    if (!TERMINATED(c->rules.off) || c->rules.nvalues > CONFIG_PARAMS_MAX) abort();
    for (size_t i = 0; i < c->rules.nvalues; i++) {
        const struct config_value *v = &c->rules.values[i];
        if (!(v->value >= v->param->min && v->value <= v->param->max)) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static char path[64];
    static int fd = -1;
    struct config c;
    struct err e;
    const uint8_t *eq;

    if (fd < 0) {
        if (rules_config_register(&e) != 0) abort(); /* the rule_* keys, as main does */
        strcpy(path, "/tmp/tb_config_fuzz_XXXXXX");
        if ((fd = mkstemp(path)) < 0) abort();
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, d, n, 0) != (ssize_t)n) abort();
    config_defaults(&c);
    config_load_file(&c, path, &e);
    check(&c);

    eq = memchr(d, '=', n);
    if (eq) {
        char *key = strndup((const char *)d, (size_t)(eq - d));
        char *val = strndup((const char *)eq + 1, n - (size_t)(eq - d) - 1);
        config_defaults(&c);
        config_set(&c, key, val, &e);
        check(&c);
        free(key);
        free(val);
    }
    return 0;
}

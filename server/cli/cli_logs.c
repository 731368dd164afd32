/* cli_logs.c — log files attached to runs (see include/cli/cli_logs.h). */
#define LOG_MODULE "cli"
#include "cli/cli_logs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "api/api_logs.h"
#include "base/log.h"
#include "base/xmalloc.h"
#include "ingest/ingest_naming.h"

static char *read_whole(const char *path, size_t *len, struct err *e)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f) {
        err_set(e, ERR_IO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(f), &st) != 0 || st.st_size > CLI_LOGS_FILE_MAX) {
        fclose(f);
        err_set(e, ERR_TOO_LARGE, "%s: over %lld MiB (or unreadable)", path, CLI_LOGS_FILE_MAX >> 20);
        return NULL;
    }
    char *buf = xmalloc((size_t)st.st_size + 1);
    *len = fread(buf, 1, (size_t)st.st_size, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

long cli_logs_attach_file(struct logstore *ls, const char *run, const char *path, struct err *e)
{
    size_t len;
    char *text = read_whole(path, &len, e);
    struct api_logs_batch b;
    if (!text) return e->code;
    const char *base = strrchr(path, '/');
    int rank = ingest_naming_rank(base ? base + 1 : path);
    int rc = api_logs_parse(NULL, text, len, -1, &b, e);
    if (rc == 0) {
        for (size_t i = 0; i < b.n; i++)
            if (b.v[i].rank < 0) b.v[i].rank = rank;
        rc = logstore_add(ls, run, NULL, NULL, b.v, b.n, NULL, e);
    }
    long n = rc == 0 ? (long)b.n : rc;
    if (rc < 0) err_prefix(e, "%s", path);
    else LOG_INFO("run %s: %ld log lines from %s", run, n, path);
    api_logs_batch_free(&b);
    free(text);
    return n;
}

static int is_log_name(const char *n)
{
    size_t k = strlen(n);
    return (k > 4 && strcasecmp(n + k - 4, ".log") == 0) || (k > 6 && strcasecmp(n + k - 6, ".jsonl") == 0);
}

int cli_logs_attach_dir(struct logstore *ls, const char *run, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int files = 0;
    if (!d) return 0;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !is_log_name(de->d_name)) continue;
        char *p = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        struct err e;
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            if (cli_logs_attach_file(ls, run, p, &e) >= 0) files++;
            else LOG_WARN("run %s: log not attached: %s", run, e.msg);
        }
        free(p);
    }
    closedir(d);
    return files;
}

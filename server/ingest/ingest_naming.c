#include "ingest/ingest_naming.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

/* The rank written in a file name: rank3, rank-3, rank_3, worker3. -1 if none. */
int ingest_naming_rank(const char *name)
{
    static const char *keys[] = { "rank", "worker" };
    for (size_t k = 0; k < 2; k++) {
        const char *p = name;
        while ((p = strstr(p, keys[k])) != NULL) {
            const char *d = p + strlen(keys[k]);
            if (*d == '-' || *d == '_') d++;
            if (isdigit((unsigned char)*d)) {
                long r = strtol(d, NULL, 10);
                if (r >= 0 && r < 1000000) return (int)r;
            }
            p++;
        }
    }
    return -1;
}

const char *ingest_naming_base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* "rank0.1795344527679083192.pt.trace.json.gz" -> "rank0" ; several files of
 * one job lose their rank part too. Owned by caller. */
char *ingest_naming_run(const struct ingest_file *files, int n)
{
    char *s = xstrdup(ingest_naming_base(files[0].name));
    static const char *suffixes[] = { ".gz", ".json", ".trace", ".pt" };
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < 4; i++) {
            size_t l = strlen(s), k = strlen(suffixes[i]);
            if (l > k && strcmp(s + l - k, suffixes[i]) == 0) {
                s[l - k] = '\0';
                again = 1;
            }
        }
    }
    /* a trailing ".<digits>" is the profiler's span timestamp */
    char *dot = strrchr(s, '.');
    if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1)) *dot = '\0';
    if (n > 1) {
        /* drop the rank token: "job_rank0" -> "job" */
        static const char *keys[] = { "rank", "worker" };
        for (size_t k = 0; k < 2; k++) {
            char *p = strstr(s, keys[k]);
            if (!p) continue;
            char *d = p + strlen(keys[k]);
            if (*d == '-' || *d == '_') d++;
            while (isdigit((unsigned char)*d)) d++;
            memmove(p, d, strlen(d) + 1);
        }
        size_t l = strlen(s);
        while (l && (s[l - 1] == '_' || s[l - 1] == '-' || s[l - 1] == '.')) s[--l] = '\0';
        while (s[0] == '_' || s[0] == '-' || s[0] == '.') memmove(s, s + 1, strlen(s));
        if (!s[0]) {
            /* "dir/rank0.json", "dir/rank1.json": the folder names the job */
            const char *slash = strrchr(files[0].name, '/');
            free(s);
            if (slash && slash != files[0].name) {
                const char *b = slash;
                while (b > files[0].name && b[-1] != '/') b--;
                s = xmemdup0(b, (size_t)(slash - b));
            } else {
                s = xasprintf("%d-rank run", n);
            }
        }
    }
    if (!s[0]) {
        free(s);
        s = xstrdup("run");
    }
    return s;
}

/* The first bytes of s, at most max, without cutting a UTF-8 character in
 * two. Owned by caller. */
char *ingest_naming_prefix(const char *s, size_t max)
{
    size_t n = strnlen(s, max);

    for (int k = 0; k < 3 && s[n] && n && ((unsigned char)s[n] & 0xC0) == 0x80; k++) n--;
    return xstrndup(s, n);
}

/* File names become path components of src/: keep them boring. */
char *ingest_naming_safe_file(const char *name)
{
    char *s = xstrdup(ingest_naming_base(name));
    for (char *c = s; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '.' || *c == '-' || *c == '_')) *c = '_';
    if (s[0] == '.' || !s[0]) {
        char *t = xasprintf("trace%s", s);
        free(s);
        s = t;
    }
    return s;
}


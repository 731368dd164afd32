/* http_parse.c — the pure helpers of the HTTP layer: request targets,
 * percent-decoding, query parameters, the base path, Accept-Encoding and
 * token comparison (see include/http/http_parse.h). */
#include "http/http_parse.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/xmalloc.h"


static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int http_url_decode(const char *s, size_t n, int plus_space, char **out, struct err *e)
{
    char *o = xmalloc(n + 1);
    size_t j = 0;

    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
            int lo = hi >= 0 ? hexval(s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                free(o);
                return err_set(e, ERR_INVALID, "bad percent escape in URL");
            }
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_space) {
            c = ' ';
        }
        if (c == '\0') {
            free(o);
            return err_set(e, ERR_INVALID, "NUL byte in URL");
        }
        o[j++] = c;
    }
    o[j] = '\0';
    *out = o;
    return 0;
}

int http_target_split(const char *raw, char **path, const char **query, struct err *e)
{
    const char *q;

    if (raw[0] != '/') return err_set(e, ERR_INVALID, "request target must start with '/'");
    q = strchr(raw, '?');
    if (http_url_decode(raw, q ? (size_t)(q - raw) : strlen(raw), 0, path, e) < 0) return ERR_INVALID;
    *query = q ? q + 1 : NULL;
    return 0;
}

/* Calls fn for each "key[=value]" element of a raw query; stops when fn
 * returns nonzero and returns that. */
static int query_each(const char *query, int (*fn)(void *ctx, const char *el, size_t n, const char *eq),
                      void *ctx)
{
    const char *p = query;

    while (p && *p) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (end > p) {
            int r = fn(ctx, p, (size_t)(end - p), eq);
            if (r) return r;
        }
        p = amp ? amp + 1 : NULL;
    }
    return 0;
}

/* 1 if the element's decoded key is name. */
static int key_is(const char *el, size_t n, const char *eq, const char *name)
{
    size_t klen = eq ? (size_t)(eq - el) : n;
    char *key;
    int same;

    if (klen == 0 || http_url_decode(el, klen, 1, &key, NULL) < 0) return 0;
    same = strcmp(key, name) == 0;
    free(key);
    return same;
}

struct qget {
    const char *name;
    char **out;
};

static int qget_fn(void *ctx, const char *el, size_t n, const char *eq)
{
    struct qget *g = ctx;

    if (!key_is(el, n, eq, g->name)) return 0;
    if (!eq) {
        *g->out = xstrdup("");
        return 1;
    }
    if (http_url_decode(eq + 1, n - (size_t)(eq + 1 - el), 1, g->out, NULL) < 0) return ERR_INVALID;
    return 1;
}

int http_query_get(const char *query, const char *name, char **out)
{
    struct qget g = { name, out };

    return query_each(query, qget_fn, &g);
}

struct qprefix {
    const char *prefix;
    int (*fn)(void *ctx, const char *key, const char *value);
    void *ctx;
};

static int qprefix_fn(void *ctx, const char *el, size_t n, const char *eq)
{
    struct qprefix *q = ctx;
    size_t klen = eq ? (size_t)(eq - el) : n, plen = strlen(q->prefix);
    char *key, *value;
    int r;

    if (klen == 0) return 0;
    if (http_url_decode(el, klen, 1, &key, NULL) < 0) return ERR_INVALID;
    if (strncmp(key, q->prefix, plen) != 0) {
        free(key);
        return 0;
    }
    if (!eq) value = xstrdup("");
    else if (http_url_decode(eq + 1, n - (size_t)(eq + 1 - el), 1, &value, NULL) < 0) {
        free(key);
        return ERR_INVALID;
    }
    r = q->fn(q->ctx, key + plen, value);
    free(key);
    free(value);
    return r;
}

int http_query_prefixed(const char *query, const char *prefix, int (*fn)(void *ctx, const char *key, const char *value),
                        void *ctx)
{
    struct qprefix q = { prefix, fn, ctx };

    return query_each(query, qprefix_fn, &q);
}

struct qwithout {
    const char *name;
    char *buf;
    size_t len;
};

static int qwithout_fn(void *ctx, const char *el, size_t n, const char *eq)
{
    struct qwithout *w = ctx;

    if (key_is(el, n, eq, w->name)) return 0;
    if (w->len) w->buf[w->len++] = '&';
    memcpy(w->buf + w->len, el, n);
    w->len += n;
    return 0;
}

char *http_query_without(const char *query, const char *name)
{
    struct qwithout w = { name, NULL, 0 };

    w.buf = xmalloc((query ? strlen(query) : 0) + 1);
    query_each(query, qwithout_fn, &w);
    w.buf[w.len] = '\0';
    return w.buf;
}

const char *http_strip_base(const char *base, const char *path)
{
    size_t n = strlen(base);

    if (n == 0) return path;
    if (strncmp(path, base, n) != 0) return NULL;
    if (path[n] == '\0' || path[n] == '/') return path + n;
    return NULL;
}

/* q=0 (or 0.0, 0.00, 0.000) means "not acceptable"; anything else is fine. */
static int q_is_zero(const char *params, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if ((params[i] == 'q' || params[i] == 'Q') && (i == 0 || params[i - 1] == ';' || params[i - 1] == ' ')) {
            size_t j = i + 1;
            while (j < n && params[j] == ' ') j++;
            if (j >= n || params[j] != '=') continue;
            j++;
            while (j < n && params[j] == ' ') j++;
            if (j >= n || params[j] != '0') return 0;
            for (j++; j < n && (params[j] == '.' || params[j] == '0'); j++) {}
            return j >= n || params[j] == ' ' || params[j] == ';';
        }
    }
    return 0;
}

int http_accepts_gzip(const char *ae)
{
    int gzip = -1, star = -1;
    const char *p = ae;

    while (p && *p) {
        const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p), *tok, *tend;
        tok = p;
        while (tok < end && (*tok == ' ' || *tok == '\t')) tok++;
        tend = tok;
        while (tend < end && *tend != ';' && *tend != ' ' && *tend != '\t') tend++;
        size_t tl = (size_t)(tend - tok);
        int ok = !q_is_zero(tend, (size_t)(end - tend));
        if ((tl == 4 && strncasecmp(tok, "gzip", 4) == 0) || (tl == 6 && strncasecmp(tok, "x-gzip", 6) == 0))
            gzip = ok;
        else if (tl == 1 && *tok == '*')
            star = ok;
        p = comma ? comma + 1 : NULL;
    }
    if (gzip >= 0) return gzip;
    return star > 0;
}

int http_token_equal(const char *given, const char *want)
{
    size_t gl = strlen(given), wl = strlen(want);
    unsigned char diff = (unsigned char)(gl != wl);

    /* The loop runs over the expected token only, so the time depends on
     * its length (not secret) and never on where the strings differ. */
    for (size_t i = 0; i < wl; i++) diff |= (unsigned char)(want[i] ^ (i < gl ? given[i] : 0));
    return wl > 0 && diff == 0;
}


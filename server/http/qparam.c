/* qparam.c — checked query-string parameters (see include/http/qparam.h). */
#include "http/qparam.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "http/http.h"

/* |µs| past which ns no longer fit an int64 */
#define US_MAX 9.0e15

const char *qparam_get(struct http_req *req, const char *name)
{
    const char *v = http_req_query(req, name);
    return v && *v ? v : NULL;
}

int qparam_parse_int(const char *v, long long min, long long max, long long *out)
{
    const char *d = v + (*v == '-');
    uint64_t x = 0, lim = *v == '-' ? (uint64_t)LLONG_MAX + 1 : (uint64_t)LLONG_MAX;
    long long y;

    if (*d == '\0' || strlen(d) > 19 || strspn(d, "0123456789") != strlen(d)) return -1;
    for (; *d; d++) {
        uint64_t dig = (uint64_t)(*d - '0');
        if (x > (lim - dig) / 10) return -1;
        x = x * 10 + dig;
    }
    /* negated as unsigned so that LLONG_MIN comes out exact */
    y = *v == '-' ? (long long)(0 - x) : (long long)x;
    if (y < min || y > max) return -1;
    *out = y;
    return 0;
}

int qparam_parse_us(const char *v, int64_t *ns)
{
    const char *p = v + (*v == '-' || *v == '+');
    char *end;
    size_t ni = strspn(p, "0123456789");

    if (ni > 0 && ni <= 15 &&
        (p[ni] == '\0' || (p[ni] == '.' && strspn(p + ni + 1, "0123456789") == strlen(p + ni + 1)))) {
        int64_t us = 0, frac = 0;
        const char *f = p[ni] == '.' ? p + ni + 1 : p + ni;
        for (size_t i = 0; i < ni; i++) us = us * 10 + (p[i] - '0');
        for (int i = 0; i < 3; i++) frac = frac * 10 + (*f ? *f++ - '0' : 0);
        if (*f >= '5') frac++; /* round half up on the fourth decimal */
        *ns = (us * 1000 + frac) * (*v == '-' ? -1 : 1);
        return 0;
    }
    if (*v == '\0' || strspn(v, "0123456789+-.eE") != strlen(v)) return -1;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || !isfinite(x) || fabs(x) > US_MAX) return -1;
    *ns = (int64_t)llround(x * 1000.0);
    return 0;
}

int qparam_int(struct http_req *req, const char *name, long long def, long long min, long long max, long long *out,
               struct err *e)
{
    const char *v = qparam_get(req, name);

    if (!v) {
        *out = def;
        return 0;
    }
    if (qparam_parse_int(v, min, max, out) == 0) return 0;
    return err_set(e, ERR_INVALID, "parameter '%s' must be an integer from %lld to %lld", name, min, max);
}

int qparam_us(struct http_req *req, const char *name, int64_t *ns, int *given, struct err *e)
{
    const char *v = qparam_get(req, name);

    *given = 0;
    if (!v) return 0;
    if (qparam_parse_us(v, ns) != 0)
        return err_set(e, ERR_INVALID, "parameter '%s' must be a time in microseconds (a decimal number)", name);
    *given = 1;
    return 0;
}

int qparam_ns(struct http_req *req, const char *name, int64_t *ns, int *given, struct err *e)
{
    const char *v = qparam_get(req, name);
    long long x;

    *given = 0;
    if (!v) return 0;
    if (qparam_parse_int(v, INT64_MIN, INT64_MAX, &x) < 0)
        return err_set(e, ERR_INVALID, "parameter '%s' must be an integer time in ns (the rank's trace clock)",
                       name);
    *ns = x;
    *given = 1;
    return 0;
}

#define KEY_AT(i) (*(const char *const *)(const void *)((const char *)keys + (i) * stride))

int qparam_parse_word(const char *v, const char *const *keys, size_t stride, size_t n, size_t *idx)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v, KEY_AT(i)) == 0) {
            *idx = i;
            return 0;
        }
    }
    return -1;
}

int qparam_pick(struct http_req *req, const char *name, const char *const *keys, size_t stride, size_t n, size_t def,
                size_t *out, struct err *e)
{
    const char *v = qparam_get(req, name);
    char list[256] = "";

    if (!v) {
        *out = def;
        return 0;
    }
    if (qparam_parse_word(v, keys, stride, n, out) == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", KEY_AT(i));
    }
    return err_set(e, ERR_INVALID, "parameter '%s' must be one of: %s", name, list);
}

#undef KEY_AT

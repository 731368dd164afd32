/* logparse.c — log lines → timestamped entries (see include/ingest/logparse.h). */
#include "ingest/logparse.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/xmalloc.h"

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Exactly k digits at s[*at..], advancing *at. */
static int take_digits(const char *s, size_t n, size_t *at, int k, int *v)
{
    int x = 0;
    if (*at + (size_t)k > n) return 0;
    for (int i = 0; i < k; i++) {
        char c = s[*at + (size_t)i];
        if (!is_digit(c)) return 0;
        x = x * 10 + (c - '0');
    }
    *at += (size_t)k;
    *v = x;
    return 1;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* A fraction's digits at s[*at..] as ns of one unit of unit_ns (extra
 * digits past ns precision are read and dropped). */
static int64_t take_fraction(const char *s, size_t n, size_t *at, int64_t unit_ns)
{
    int64_t num = 0, den = 1;
    while (*at < n && is_digit(s[*at])) {
        if (den < 1000000000000000000LL / 10) {
            num = num * 10 + (s[*at] - '0');
            den *= 10;
        }
        (*at)++;
    }
    /* num/den of a unit, in ns, without overflow: unit_ns <= 1e9 */
    return (int64_t)((long double)num * (long double)unit_ns / (long double)den);
}

/* ±HH[:MM] or ±HHMM or Z at s[*at..]: seconds east of UTC. 0: none, 1: read, -1: malformed. */
static int take_zone(const char *s, size_t n, size_t *at, int *off)
{
    if (*at >= n) return 0;
    if (s[*at] == 'Z' || s[*at] == 'z') {
        (*at)++;
        *off = 0;
        return 1;
    }
    if (s[*at] != '+' && s[*at] != '-') return 0;
    int sign = s[*at] == '-' ? -1 : 1, hh, mm = 0;
    size_t p = *at + 1;
    if (!take_digits(s, n, &p, 2, &hh)) return -1;
    if (p < n && s[p] == ':') {
        p++;
        if (!take_digits(s, n, &p, 2, &mm)) return -1;
    } else if (p + 1 < n && is_digit(s[p])) {
        if (!take_digits(s, n, &p, 2, &mm)) return -1;
    }
    if (hh > 23 || mm > 59) return -1;
    *off = sign * (hh * 3600 + mm * 60);
    *at = p;
    return 1;
}

static int iso_time(const char *s, size_t n, size_t *at, int tz, int64_t *ns)
{
    size_t p = *at;
    int y, mo, d, h, mi, se, off = tz;
    if (!take_digits(s, n, &p, 4, &y) || p >= n || s[p++] != '-' || !take_digits(s, n, &p, 2, &mo) || p >= n ||
        s[p++] != '-' || !take_digits(s, n, &p, 2, &d) || p >= n || (s[p] != 'T' && s[p] != ' ' && s[p] != 't'))
        return 0;
    p++;
    if (!take_digits(s, n, &p, 2, &h) || p >= n || s[p++] != ':' || !take_digits(s, n, &p, 2, &mi) || p >= n ||
        s[p++] != ':' || !take_digits(s, n, &p, 2, &se))
        return 0;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return 0;
    int64_t frac = 0;
    if (p + 1 < n && (s[p] == '.' || s[p] == ',') && is_digit(s[p + 1])) {
        p++;
        frac = take_fraction(s, n, &p, 1000000000);
    }
    if (take_zone(s, n, &p, &off) < 0) return 0;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - off;
    *ns = secs * 1000000000 + frac;
    *at = p;
    return 1;
}

/* A unix time whose integer part has 10 (s), 13 (ms), 16 (µs) or 19 (ns) digits. */
static int unix_time(const char *s, size_t n, size_t *at, int64_t *ns)
{
    size_t p = *at;
    uint64_t v = 0;
    int k = 0;
    while (p < n && is_digit(s[p])) {
        if (k == 19) return 0;
        uint64_t nv = v * 10 + (uint64_t)(s[p] - '0');
        v = nv;
        k++;
        p++;
    }
    int64_t unit = k == 10 ? 1000000000 : k == 13 ? 1000000 : k == 16 ? 1000 : k == 19 ? 1 : 0;
    if (!unit || v > (uint64_t)INT64_MAX / (uint64_t)unit) return 0;
    int64_t t = (int64_t)v * unit;
    if (p + 1 < n && s[p] == '.' && is_digit(s[p + 1])) {
        p++;
        t += take_fraction(s, n, &p, unit);
    }
    *ns = t;
    *at = p;
    return 1;
}

int logparse_timestamp(const char *s, size_t n, int tz_offset_s, int64_t *ns, size_t *used)
{
    size_t p = 0;
    int bracket = 0;
    while (p < n && (s[p] == ' ' || s[p] == '\t')) p++;
    if (p < n && s[p] == '[') {
        bracket = 1;
        p++;
    }
    if (!iso_time(s, n, &p, tz_offset_s, ns) && !unix_time(s, n, &p, ns)) return 0;
    /* "2026-11-26 06:00:00x" or "1795344375abc" is not a timestamp */
    if (p < n && (isalnum((unsigned char)s[p]) || s[p] == '.' || s[p] == '_')) return 0;
    if (bracket) {
        if (p >= n || s[p] != ']') return 0;
        p++;
    }
    *used = p;
    return 1;
}

int logparse_tz(const char *s, int *offset_s, struct err *e)
{
    size_t at = 0, n = strlen(s);
    *offset_s = 0;
    if (n == 0) return 0;
    if (take_zone(s, n, &at, offset_s) != 1 || at != n)
        return err_set(e, ERR_INVALID, "tz '%.16s' is not a UTC offset like +02:00, -0530 or Z", s);
    return 0;
}

static void entry_free(struct logparse_entry *en)
{
    free(en->text);
    free(en->job);
    json_decref(en->fields);
}

void logparse_free(struct logparse_result *r)
{
    for (size_t i = 0; i < r->n; i++) entry_free(&r->v[i]);
    free(r->v);
    memset(r, 0, sizeof *r);
}

/* Text as valid UTF-8, owned. */
static char *text_dup(const char *s, size_t n)
{
    if (utf8_valid(s, n)) return xstrndup(s, n);
    char *out = xmalloc(3 * n + 1);
    size_t m = utf8_repair(s, n, out);
    out[m] = '\0';
    return out;
}

static struct logparse_entry *push(struct logparse_result *r)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        r->v = xrealloc(r->v, r->cap * sizeof *r->v);
    }
    struct logparse_entry *en = &r->v[r->n++];
    memset(en, 0, sizeof *en);
    en->rank = -1;
    return en;
}

/* "ts" of a JSON line as unix ns: numbers by magnitude (seconds below
 * 1e11, then ms, µs, ns), strings as ISO or unix text. */
static int json_ts(json_t *v, int tz, int64_t *ns)
{
    if (json_is_number(v)) {
        double x = json_number_value(v);
        if (!(x > 0) || !isfinite(x)) return 0;
        double scale = x < 1e11 ? 1e9 : x < 1e14 ? 1e6 : x < 1e17 ? 1e3 : 1;
        /* rounded to the µs: a double holds unix seconds to about 0.2 µs */
        double us = x * scale / 1000.0;
        if (us > 9.2e15) return 0;
        *ns = (int64_t)llround(us) * 1000;
        return 1;
    }
    if (json_is_string(v)) {
        size_t used;
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        return logparse_timestamp(s, n, tz, ns, &used) && used == n;
    }
    return 0;
}

/* A JSON line: 1 with the entry pushed, 0 when it is not one (no object
 * or no usable "ts"), <0 with e set. */
static int json_line(const char *s, size_t n, int tz, struct logparse_result *r, size_t lineno, struct err *e)
{
    json_t *o = json_loadb(s, n, JSON_DECODE_ANY, NULL);
    int64_t ns;
    if (!json_is_object(o) || !json_ts(json_object_get(o, "ts"), tz, &ns)) {
        json_decref(o);
        return 0;
    }
    struct logparse_entry *en = push(r);
    en->ts_ns = ns;
    json_t *msg = json_object_get(o, "msg");
    if (!json_is_string(msg)) msg = json_object_get(o, "message");
    en->text = xstrdup(json_is_string(msg) ? json_string_value(msg) : "");
    json_t *rank = json_object_get(o, "rank");
    if (json_is_integer(rank) && json_integer_value(rank) >= 0 && json_integer_value(rank) < 1000000)
        en->rank = (int)json_integer_value(rank);
    json_t *job = json_object_get(o, "job_id");
    if (!job) job = json_object_get(o, "job");
    if (json_is_string(job) && json_string_length(job) > 0 && json_string_length(job) <= 128)
        en->job = xstrdup(json_string_value(job));
    else if (json_is_integer(job))
        en->job = xasprintf("%lld", (long long)json_integer_value(job));
    const char *k;
    json_t *v;
    int nf = 0;
    json_object_foreach(o, k, v) {
        if (!strcmp(k, "ts") || !strcmp(k, "msg") || !strcmp(k, "message") || !strcmp(k, "rank") ||
            !strcmp(k, "job") || !strcmp(k, "job_id"))
            continue;
        if (!json_is_number(v) && !json_is_string(v) && !json_is_boolean(v)) continue;
        if (++nf > LOGPARSE_FIELDS_MAX) {
            json_decref(o);
            return err_set(e, ERR_INVALID, "line %zu has more than %d fields", lineno, LOGPARSE_FIELDS_MAX);
        }
        if (json_is_number(v) && !isfinite(json_number_value(v))) continue;
        if (!en->fields) en->fields = json_object();
        json_object_set(en->fields, k, v);
    }
    json_decref(o);
    return 1;
}

/* Appends a continuation line to the last entry, within LOGPARSE_TEXT_MAX. */
static void continue_entry(struct logparse_result *r, const char *s, size_t n)
{
    struct logparse_entry *en = &r->v[r->n - 1];
    size_t have = strlen(en->text);
    if (have + 1 + n > LOGPARSE_TEXT_MAX) {
        r->truncated += n;
        return;
    }
    char *add = text_dup(s, n);
    size_t m = strlen(add);
    en->text = xrealloc(en->text, have + 1 + m + 1);
    en->text[have] = '\n';
    memcpy(en->text + have + 1, add, m + 1);
    free(add);
}

static int parse_line(const char *s, size_t n, int tz, struct logparse_result *r, size_t lineno, struct err *e)
{
    size_t p = 0, used;
    int64_t ns;
    while (p < n && (s[p] == ' ' || s[p] == '\t')) p++;
    if (p == n) return 0; /* blank */
    if (s[p] == '{') {
        int rc = json_line(s + p, n - p, tz, r, lineno, e);
        if (rc < 0) return rc;
        if (rc > 0) goto pushed;
    }
    if (logparse_timestamp(s, n, tz, &ns, &used)) {
        while (used < n && (s[used] == ' ' || s[used] == '\t')) used++;
        struct logparse_entry *en = push(r);
        en->ts_ns = ns;
        en->text = text_dup(s + used, n - used);
        goto pushed;
    }
    if (r->n == 0) r->skipped++;
    else continue_entry(r, s, n);
    return 0;
pushed:
    if (r->n > LOGPARSE_ENTRIES_MAX)
        return err_set(e, ERR_INVALID, "more than %d timestamped lines in one body", LOGPARSE_ENTRIES_MAX);
    return 0;
}

int logparse_parse(const char *buf, size_t len, int tz_offset_s, struct logparse_result *out, struct err *e)
{
    memset(out, 0, sizeof *out);
    if (memchr(buf, '\0', len)) return err_set(e, ERR_INVALID, "the log contains a NUL byte (binary data?)");
    size_t at = 0, lineno = 0;
    while (at < len) {
        const char *nl = memchr(buf + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - buf) : len, n = end - at;
        lineno++;
        if (n > 0 && buf[at + n - 1] == '\r') n--;
        if (n > LOGPARSE_LINE_MAX) {
            logparse_free(out);
            return err_set(e, ERR_INVALID, "line %zu is over %zu bytes", lineno, LOGPARSE_LINE_MAX);
        }
        if (parse_line(buf + at, n, tz_offset_s, out, lineno, e) < 0) {
            logparse_free(out);
            return e->code;
        }
        at = nl ? end + 1 : len;
    }
    return 0;
}

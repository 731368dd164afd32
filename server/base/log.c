#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum log_level min_level = LOG_LEVEL_INFO;

void log_set_level(enum log_level lvl)
{
    min_level = lvl;
}

int log_level_parse(const char *s)
{
    static const char *names[] = { "debug", "info", "warn", "error", "quiet" };
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

void log_write(enum log_level lvl, const char *module, const char *fmt, ...)
{
    static const char *tags[] = { "debug", "info", "warn", "error" };
    char line[2048];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    int n;

    if (lvl < min_level || lvl >= LOG_LEVEL_QUIET) return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s %-8s ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, tags[lvl],
                 module);
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    /* One write per line so lines from several threads never interleave. */
    if (write(STDERR_FILENO, line, (size_t)n) < 0) { /* nowhere left to report it */ }
}

double log_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double log_thread_cpu_s(void)
{
    struct timespec t;
    return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 ? (double)t.tv_sec + (double)t.tv_nsec / 1e9 : 0;
}

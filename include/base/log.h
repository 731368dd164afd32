/*
 * log.h — the one place diagnostics are written.
 *
 * Every module defines LOG_MODULE ("ingest", "http", ...) before including
 * this header and logs through LOG_INFO/LOG_WARN/... which tag the line with
 * the module and a timestamp and write it to stderr. The level is
 * process-wide and set once by main before threads start; after that the
 * module is read-only and safe to call from any thread (one write(2) per line).
 */
#ifndef TB_LOG_H
#define TB_LOG_H

enum log_level { LOG_LEVEL_DEBUG = 0, LOG_LEVEL_INFO, LOG_LEVEL_WARN, LOG_LEVEL_ERROR, LOG_LEVEL_QUIET };

/* Sets the minimum level written. Call before starting threads. */
void log_set_level(enum log_level lvl);

/* Parses "debug|info|warn|error|quiet"; returns -1 when unknown. */
int log_level_parse(const char *s);

void log_write(enum log_level lvl, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Monotonic seconds, for the stage timings the logs report. */
double log_now_s(void);

/* The calling thread's CPU seconds: a stage sharing the cores with others
 * is timed by its own cost too, not only its wall time. */
double log_thread_cpu_s(void);

#ifndef LOG_MODULE
#define LOG_MODULE "main"
#endif
#define LOG_DEBUG(...) log_write(LOG_LEVEL_DEBUG, LOG_MODULE, __VA_ARGS__)
#define LOG_INFO(...) log_write(LOG_LEVEL_INFO, LOG_MODULE, __VA_ARGS__)
#define LOG_WARN(...) log_write(LOG_LEVEL_WARN, LOG_MODULE, __VA_ARGS__)
#define LOG_ERROR(...) log_write(LOG_LEVEL_ERROR, LOG_MODULE, __VA_ARGS__)
/* Logs (debug) how long `what` of rank took since *t, and restarts *t. */
#define LOG_LAP(rank, what, t)                                                                              \
    do {                                                                                                    \
        double log_now_ = log_now_s();                                                                      \
        LOG_DEBUG("rank %d: %s took %.3f s", (rank), (what), log_now_ - *(t));                              \
        *(t) = log_now_;                                                                                    \
    } while (0)

#endif

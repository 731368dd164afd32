/*
 * rules_fixture.h — shared by the rules_*_test.c files (header only): a
 * crafted trace is written as a real Kineto JSON file, imported through
 * ingest_run (parse, analysis, rules: the real pipeline, thresholds from
 * fixture_cfg) and its stored findings are read back with rules_findings.
 *
 * Usage: fixture_init() in main; then
 *   json_t *f = fixture_findings(DEV_H100, CPU(...) "," GPU(...));
 *   CHECK(fixture_has(f, "dataloader_bound", 0));
 *   json_decref(f);
 * fixture_findings_ranks() imports one file per rank ("rank<N>" names);
 * fixture_findings_file() imports a file written otherwise (Nsight SQLite).
 * fixture_trace_add() builds event lists in code (fixture_host and
 * fixture_step add host spans); fixture_num/str/evnum/
 * evstr/has_line read findings and their evidence.
 * Times in the event macros are µs, as in real traces.
 */
#ifndef TB_RULES_FIXTURE_H
#define TB_RULES_FIXTURE_H

#include <stdarg.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "store/catalog.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "derive/rules.h"
#include "ingest/ingest.h"
#include "store/rundb.h"

static char fixture_root[] = "/tmp/tb_rules_XXXXXX";
static struct config fixture_cfg;
static struct catalog *fixture_cat;
static int fixture_seq;

/* deviceProperties of an 80 GB H100 (compute capability 9.0). */
#define DEV_H100                                                                                        \
    "[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\",\"totalGlobalMem\":85029158912,\"computeMajor\":9,"  \
    "\"computeMinor\":0,\"numSms\":132}]"
/* A Pascal GPU without tensor cores (6.1). */
#define DEV_P40                                                                                         \
    "[{\"id\":0,\"name\":\"Tesla P40\",\"totalGlobalMem\":24000000000,\"computeMajor\":6,"              \
    "\"computeMinor\":1,\"numSms\":30}]"

#define X(cat, name, tid, ts, dur, args)                                                                \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":1,\"tid\":" tid ",\"ts\":" #ts     \
    ",\"dur\":" #dur ",\"args\":{" args "}}"
/* Host events on the main thread (tid 1). */
#define CPU(cat, name, ts, dur, args) X(cat, name, "1", ts, dur, args)
/* GPU events on device 0, stream 7. */
#define GPU(cat, name, ts, dur, args)                                                                   \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"pid\":0,\"tid\":7,\"ts\":" #ts            \
    ",\"dur\":" #dur ",\"args\":{\"device\":0,\"stream\":7," args "}}"
#define STEP(n, ts, dur) CPU("user_annotation", "ProfilerStep#" #n, ts, dur, "")
/* A kernel launch (host) and its kernel (GPU), joined by correlation id. */
#define LAUNCH(corr, ts, dur) CPU("cuda_runtime", "cudaLaunchKernel", ts, dur, "\"correlation\":" #corr)
#define KERNEL(name, corr, ts, dur) GPU("kernel", name, ts, dur, "\"correlation\":" #corr)
/* A [memory] event: bytes > 0 allocates at addr, < 0 frees; total = allocated after it. */
#define MEM(ts, addr, bytes, total)                                                                     \
    "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1," \
    "\"ts\":" #ts ",\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":" #addr ",\"Bytes\":" #bytes  \
    ",\"Total Allocated\":" #total ",\"Total Reserved\":" #total "}}"

static inline void fixture_init(void)
{
    struct err e;
    if (!mkdtemp(fixture_root)) exit(1);
    if (rules_config_register(&e) != 0) exit(1); /* the rule_* keys the tests set */
    config_defaults(&fixture_cfg);
    snprintf(fixture_cfg.data_dir, sizeof fixture_cfg.data_dir, "%s", fixture_root);
    fixture_cfg.keep_sources = 0;
    if (catalog_open(fixture_root, &fixture_cat, &e) != 0) exit(1);
}

static inline void fixture_done(void)
{
    struct err e;
    catalog_close(fixture_cat);
    fsutil_rmtree(fixture_root, &e);
}

/* Writes one trace file; extra_header: more top-level members (text
 * starting with ',' such as ",\"distributedInfo\":{...}") or "". */
static inline char *fixture_write(const char *devices, const char *extra_header, const char *events, int rank)
{
    char *path = xasprintf("%s/t%d_rank%d.pt.trace.json", fixture_root, ++fixture_seq, rank);
    FILE *f = fopen(path, "w");
    if (!f) {
        free(path);
        return NULL;
    }
    fprintf(f, "{\"schemaVersion\":1,\"deviceProperties\":%s%s,\"traceEvents\":[%s]}", devices, extra_header,
            events);
    fclose(f);
    return path;
}

/* Imports n rank files as one run through ingest_run; returns the path of
 * its run.db (owned by caller) or NULL on failure (reported on stderr). */
static inline char *fixture_import(const char *devices, const char *extra_header, const char *const *events, int n)
{
    struct err e;
    struct ingest_file files[16];
    char *paths[16];
    char id[CATALOG_ID_LEN + 1];
    char *dbp = NULL;
    if (n > 16) return NULL;
    for (int i = 0; i < n; i++) {
        paths[i] = fixture_write(devices, extra_header, events[i], i);
        files[i] = (struct ingest_file){ paths[i], paths[i], 0 };
    }
    struct ingest_request req = { NULL, files, n, NULL };
    if (ingest_run(fixture_cat, &fixture_cfg, &req, NULL, id, &e) != 0)
        fprintf(stderr, "import failed: %s\n", e.msg);
    else
        dbp = xasprintf("%s/runs/%s/run.db", fixture_root, id);
    for (int i = 0; i < n; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    return dbp;
}

/* Imports n rank files and returns the run's findings (rules_findings of
 * every rank), or NULL on failure (reported on stderr). */
static inline json_t *fixture_findings_ranks(const char *devices, const char *extra_header, const char *const *events,
                                      int n)
{
    struct err e;
    json_t *out = NULL;
    char *dbp = fixture_import(devices, extra_header, events, n);
    sqlite3 *db;
    if (dbp && rundb_open_ro(dbp, &db, &e) == 0) {
        if (rules_findings(db, -1, &out, &e) != 0) fprintf(stderr, "findings: %s\n", e.msg);
        sqlite3_close(db);
    }
    free(dbp);
    return out;
}

/* Imports the file at path (any format the importers probe: an Nsight
 * SQLite export, say) as a one-rank run and returns its findings, or NULL
 * on failure (reported on stderr). The file is left in place. */
static inline json_t *fixture_findings_file(const char *path)
{
    struct err e;
    struct ingest_file file = { path, path, 0 };
    struct ingest_request req = { NULL, &file, 1, NULL };
    char id[CATALOG_ID_LEN + 1];
    json_t *out = NULL;
    sqlite3 *db;
    if (ingest_run(fixture_cat, &fixture_cfg, &req, NULL, id, &e) != 0) {
        fprintf(stderr, "import failed: %s\n", e.msg);
        return NULL;
    }
    char *dbp = xasprintf("%s/runs/%s/run.db", fixture_root, id);
    if (rundb_open_ro(dbp, &db, &e) == 0) {
        if (rules_findings(db, -1, &out, &e) != 0) fprintf(stderr, "findings: %s\n", e.msg);
        sqlite3_close(db);
    }
    free(dbp);
    return out;
}

static inline json_t *fixture_findings(const char *devices, const char *events)
{
    return fixture_findings_ranks(devices, "", &events, 1);
}

/* The finding with this id (and rank, -1: any), or NULL. Borrowed. */
static inline json_t *fixture_get(json_t *findings, const char *id, int rank)
{
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f) {
        json_t *r = json_object_get(f, "rank");
        if (strcmp(json_string_value(json_object_get(f, "id")), id) != 0) continue;
        if (rank < 0 || (json_is_integer(r) && json_integer_value(r) == rank)) return f;
    }
    return NULL;
}

static inline int fixture_has(json_t *findings, const char *id, int rank)
{
    return fixture_get(findings, id, rank) != NULL;
}

/* ---------------------------------------------------------------------- */
/* Building traces in code, reading findings                               */
/* ---------------------------------------------------------------------- */

/* A growing comma-separated list of events (or any text): zero-initialise,
 * fixture_trace_add(), pass t.s on; t.s is owned by the holder (free it,
 * or fixture_trace_reset() to reuse the buffer). */
struct fixture_trace {
    char *s;
    size_t n, cap;
};

/* Appends one printf-formatted item, after a ',' unless it is the first. */
static inline void fixture_trace_add(struct fixture_trace *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline void fixture_trace_add(struct fixture_trace *t, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) exit(1);
    if (t->n + (size_t)k + 2 > t->cap) t->s = xrealloc(t->s, t->cap = (t->n + (size_t)k + 2) * 2);
    if (t->n) t->s[t->n++] = ',';
    vsnprintf(t->s + t->n, (size_t)k + 1, fmt, aq);
    va_end(aq);
    t->n += (size_t)k;
}

/* A host span on thread tid of process 1 (corr 0: no correlation id). */
static inline void fixture_host(struct fixture_trace *t, int tid, const char *cat, const char *name, double ts,
                                double dur, int corr)
{
    if (corr)
        fixture_trace_add(t,
                          "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                          "\"dur\":%.3f,\"args\":{\"correlation\":%d}}",
                          cat, name, tid, ts, dur, corr);
    else
        fixture_trace_add(t,
                          "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,"
                          "\"dur\":%.3f,\"args\":{}}",
                          cat, name, tid, ts, dur);
}

/* The span of ProfilerStep#n on the main thread (tid 1). */
static inline void fixture_step(struct fixture_trace *t, int n, double ts, double dur)
{
    char name[32];
    snprintf(name, sizeof name, "ProfilerStep#%d", n);
    fixture_host(t, 1, "user_annotation", name, ts, dur, 0);
}

/* A runtime launch on thread 1 and the kernel it started on device 0,
 * stream 7, joined by correlation id corr. */
static inline void fixture_launch(struct fixture_trace *t, int corr, double ts, double dur, const char *kernel,
                                  double kts, double kdur)
{
    fixture_host(t, 1, "cuda_runtime", "cudaLaunchKernel", ts, dur, corr);
    fixture_trace_add(t,
                      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%.3f,"
                      "\"dur\":%.3f,\"args\":{\"device\":0,\"stream\":7,\"correlation\":%d}}",
                      kernel, kts, kdur, corr);
}

/* Empties t, keeping its buffer. */
static inline void fixture_trace_reset(struct fixture_trace *t)
{
    t->n = 0;
    if (t->s) t->s[0] = '\0';
}

/* Member k of object o as a number (0 when absent) or a string (NULL). */
static inline double fixture_num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static inline const char *fixture_str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* Member k of finding f's evidence, as above. */
static inline double fixture_evnum(json_t *f, const char *k)
{
    return fixture_num(json_object_get(f, "evidence"), k);
}

static inline const char *fixture_evstr(json_t *f, const char *k)
{
    return fixture_str(json_object_get(f, "evidence"), k);
}

/* The saving finding f's rule estimated, before the critical path capped
 * it (evidence.saving_cap, rules_cap.h) when it did: in many of these
 * short crafted steps the host alone is the path, so the rules' estimates
 * are checked here and the cap in rules_cap_test. */
static inline double fixture_estimate(json_t *f)
{
    json_t *cap = json_object_get(json_object_get(f, "evidence"), "saving_cap");
    return cap ? fixture_num(cap, "estimate_us") : fixture_num(f, "saving_us");
}

/* The severity the rule gave finding f, before a cap lowered it
 * (saving_cap.severity_was, rules_cap.h): checked here as the estimates are. */
static inline const char *fixture_severity(json_t *f)
{
    json_t *was = json_object_get(json_object_get(json_object_get(f, "evidence"), "saving_cap"), "severity_was");
    return was ? json_string_value(was) : json_string_value(json_object_get(f, "severity"));
}

/* Does an evidence line of finding f contain s? */
static inline int fixture_has_line(json_t *f, const char *s)
{
    size_t i;
    json_t *l;
    json_array_foreach(json_object_get(json_object_get(f, "evidence"), "lines"), i, l)
        if (strstr(json_string_value(l), s)) return 1;
    return 0;
}

/* Prints the findings (for a failing test's log). */
static inline void fixture_dump(json_t *findings)
{
    size_t i;
    json_t *f;
    json_array_foreach(findings, i, f)
        fprintf(stderr, "  finding %s rank %lld: %s\n", json_string_value(json_object_get(f, "id")),
                (long long)json_integer_value(json_object_get(f, "rank")),
                json_string_value(json_object_get(f, "title")));
}

#endif

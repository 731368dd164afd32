#include "store/facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "store/model.h"
#include "store/rundb.h"
#include "store/scan.h"

#define prepare_rank scan_prepare_rank

/* The rows of sql over args (?1..) into a new array of sz-byte elements. */
static int rows_of(sqlite3 *db, const char *sql, const int64_t *args, size_t nargs, const char *what, size_t sz,
                   void (*fill)(sqlite3_stmt *st, void *elem), void (*drop)(void *elem), void **out, size_t *n,
                   struct err *e)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = scan_prepare_args(db, sql, args, nargs, &st, e);
    return rc ? rc : scan_collect(st, what, sz, fill, drop, out, n, e);
}

static char *text_dup(sqlite3_stmt *st, int col)
{
    const char *s = (const char *)sqlite3_column_text(st, col);
    return s ? xstrdup(s) : NULL;
}

static void rank_fill(sqlite3_stmt *st, void *elem)
{
    struct facts_rank *r = elem;
    r->rank = sqlite3_column_int(st, 0);
    r->format = text_dup(st, 1);
    r->distributed = text_dup(st, 2);
}

static void rank_drop(void *elem)
{
    struct facts_rank *r = elem;
    free(r->format);
    free(r->distributed);
}

void facts_ranks_free(struct facts_rank *r, size_t n)
{
    for (size_t i = 0; i < n; i++) rank_drop(&r[i]);
    free(r);
}

int facts_ranks(sqlite3 *db, struct facts_rank **out, size_t *n, struct err *e)
{
    return rows_of(db, "SELECT rank, format, distributed FROM rank ORDER BY rank", NULL, 0, "rules (ranks)",
                   sizeof **out, rank_fill, rank_drop, (void **)out, n, e);
}

static void step_fill(sqlite3_stmt *st, void *elem)
{
    struct facts_step *s = elem;
    const char *name = (const char *)sqlite3_column_text(st, 0);
    snprintf(s->name, sizeof s->name, "%s", name ? name : "");
    s->ts = sqlite3_column_int64(st, 1);
    s->dur = sqlite3_column_int64(st, 2);
    s->host_ts = sqlite3_column_int64(st, 3);
    s->host_dur = sqlite3_column_int64(st, 4);
    for (int p = 0; p < FACTS_NPARTS; p++) s->part[p] = sqlite3_column_int64(st, 5 + p);
}

static const char steps_sql[] = "SELECT name, ts, dur, host_ts, host_dur, kernel, memcpy, memset, comm, runtime,"
                                " dataloader, cpu_exec, other FROM step WHERE rank = ?1 ORDER BY idx";

int facts_steps(sqlite3 *db, int rank, struct facts_step **out, size_t *n, struct err *e)
{
    const int64_t arg = rank;
    return rows_of(db, steps_sql, &arg, 1, "rules (steps)", sizeof **out, step_fill, NULL, (void **)out, n, e);
}

static void gpu_fill(sqlite3_stmt *st, void *elem)
{
    struct facts_gpu *g = elem;
    const char *name = (const char *)sqlite3_column_text(st, 1), *cc = (const char *)sqlite3_column_text(st, 3);
    g->device = sqlite3_column_int(st, 0);
    snprintf(g->name, sizeof g->name, "%s", name ? name : "");
    g->memory_bytes = sqlite3_column_int64(st, 2);
    g->cc = cc ? atof(cc) : 0;
    g->util = sqlite3_column_double(st, 4);
    g->tc_share = sqlite3_column_double(st, 5);
    g->kernel_ns = sqlite3_column_int64(st, 6);
    g->tc_ns = sqlite3_column_int64(st, 7);
    g->window_ns = sqlite3_column_int64(st, 8);
}

static const char gpus_sql[] = "SELECT device, name, memory_bytes, cc, util, tc_share, kernel_ns, tc_ns, window_ns"
                               " FROM gpu WHERE rank = ?1 ORDER BY device";

int facts_gpus(sqlite3 *db, int rank, struct facts_gpu **out, size_t *n, struct err *e)
{
    const int64_t arg = rank;
    return rows_of(db, gpus_sql, &arg, 1, "rules (gpus)", sizeof **out, gpu_fill, NULL, (void **)out, n, e);
}

int facts_summary(sqlite3 *db, int rank, json_t **out, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *out = NULL;
    if ((rc = prepare_rank(db, "SELECT summary FROM analysis WHERE rank = ?1", rank, &st, e))) return rc;
    if ((rc = scan_step(st, e, "rules (summary)")) == 1 && sqlite3_column_text(st, 0))
        *out = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

int facts_busiest_pid(sqlite3 *db, int rank, long *pid, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *pid = -1;
    if ((rc = prepare_rank(db,
                           "SELECT pid FROM track WHERE rank = ?1 AND kind = ?2 GROUP BY pid ORDER BY sum(nslices) DESC"
                           " LIMIT 1",
                           rank, &st, e)))
        return rc;
    sqlite3_bind_int(st, 2, TB_TRACK_CPU);
    if ((rc = scan_step(st, e, "rules (process)")) == 1 && sqlite3_column_text(st, 0)) {
        char *end;
        const char *p = (const char *)sqlite3_column_text(st, 0);
        long v = strtol(p, &end, 10);
        if (end != p && !*end && v >= 0) *pid = v;
    }
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

int facts_op_calls(sqlite3 *db, int rank, double *calls, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    *calls = 0;
    if ((rc = prepare_rank(db, "SELECT sum(calls) FROM op_stat WHERE rank = ?1", rank, &st, e))) return rc;
    rc = scan_row_nums(st, "rules (operators)", calls, 1, e);
    return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------------- */
/* Names                                                                    */
/* ---------------------------------------------------------------------- */

/* Unused pattern slots are bound NULL, which matches nothing. */
#define LIKE8                                                                                               \
    "s LIKE ?1 ESCAPE '\\' OR s LIKE ?2 ESCAPE '\\' OR s LIKE ?3 ESCAPE '\\' OR s LIKE ?4 ESCAPE '\\'"      \
    " OR s LIKE ?5 ESCAPE '\\' OR s LIKE ?6 ESCAPE '\\' OR s LIKE ?7 ESCAPE '\\' OR s LIKE ?8 ESCAPE '\\'"

struct facts_names {
    sqlite3_stmt *st;
};

static void bind_pats(sqlite3_stmt *st, int first, const char *const *pats, size_t n)
{
    for (size_t i = 0; i < n && i < FACTS_MAX_PATTERNS; i++)
        sqlite3_bind_text(st, first + (int)i, pats[i], -1, SQLITE_TRANSIENT);
}

int facts_names_open(sqlite3 *db, enum facts_match m, const char *const *pats, size_t n, struct facts_names **out,
                     struct err *e)
{
    struct facts_names *c = xcalloc(1, sizeof *c);
    int rc;
    *out = NULL;
    if (n > FACTS_MAX_PATTERNS) {
        free(c);
        return err_set(e, ERR_INVALID, "names probe: %zu patterns, at most %d", n, FACTS_MAX_PATTERNS);
    }
    if ((rc = rundb_prepare(db,
                            m == FACTS_LIKE ? "SELECT id, s FROM str WHERE " LIKE8
                                            : "SELECT id, s FROM str WHERE s IN (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                            &c->st, e))) {
        free(c);
        return rc;
    }
    bind_pats(c->st, 1, pats, n);
    *out = c;
    return 0;
}

int facts_names_next(struct facts_names *c, uint32_t *id, const char **s, struct err *e)
{
    int rc = scan_step(c->st, e, "run database (names)");
    if (rc == 1) {
        *id = (uint32_t)sqlite3_column_int64(c->st, 0);
        if (s) *s = (const char *)sqlite3_column_text(c->st, 1);
    }
    return rc;
}

void facts_names_close(struct facts_names *c)
{
    if (!c) return;
    sqlite3_finalize(c->st);
    free(c);
}

int facts_names_exist(sqlite3 *db, enum facts_match m, const char *const *pats, size_t n, struct err *e)
{
    struct facts_names *c;
    uint32_t id;
    int rc = facts_names_open(db, m, pats, n, &c, e);
    if (rc) return rc;
    rc = facts_names_next(c, &id, NULL, e);
    facts_names_close(c);
    return rc;
}

int facts_track_named(sqlite3 *db, int rank, const char *const *pats, size_t n, struct err *e)
{
    sqlite3_stmt *st;
    int rc;
    if (n > FACTS_MAX_PATTERNS) return err_set(e, ERR_INVALID, "track probe: %zu patterns", n);
    if ((rc = prepare_rank(db,
                           "SELECT EXISTS(SELECT 1 FROM track t WHERE t.rank = ?1 AND (t.name LIKE ?2 ESCAPE '\\'"
                           " OR t.name LIKE ?3 ESCAPE '\\' OR t.name LIKE ?4 ESCAPE '\\' OR t.name LIKE ?5 ESCAPE '\\'"
                           " OR t.name LIKE ?6 ESCAPE '\\' OR t.name LIKE ?7 ESCAPE '\\' OR t.name LIKE ?8 ESCAPE '\\'"
                           " OR t.name LIKE ?9 ESCAPE '\\'))",
                           rank, &st, e)))
        return rc;
    bind_pats(st, 2, pats, n);
    double yes;
    rc = scan_row_nums(st, "run database (track names)", &yes, 1, e);
    return rc < 0 ? rc : yes != 0;
}

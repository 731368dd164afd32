/* rank_read.c — ranks, steps and kernel times for the cross-rank comparison
 * (see include/store/rank_read.h). */
#include "store/rank_read.h"

#include <stdlib.h>

#include "base/xmalloc.h"
#include "store/rundb.h"
#include "store/scan.h"

static char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? xstrdup((const char *)s) : NULL;
}

static void rank_drop(void *elem)
{
    struct rank_read_rank *r = elem;
    free(r->file);
    free(r->format);
    free(r->dist);
}

void rank_read_ranks_free(struct rank_read_rank *r, size_t n)
{
    for (size_t i = 0; r && i < n; i++) rank_drop(&r[i]);
    free(r);
}

static void rank_fill(sqlite3_stmt *st, void *elem)
{
    struct rank_read_rank *r = elem;
    int64_t *num[] = { &r->base_ns, &r->t0, &r->t1 };
    char **text[] = { &r->file, &r->format, &r->dist };
    r->rank = sqlite3_column_int(st, 0);
    for (int i = 0; i < 3; i++) *num[i] = sqlite3_column_int64(st, 1 + i), *text[i] = col_dup(st, 4 + i);
    r->lo = 1, r->hi = 0;
    if (sqlite3_column_type(st, 7) != SQLITE_NULL) {
        r->lo = sqlite3_column_int64(st, 7);
        r->hi = sqlite3_column_int64(st, 8);
    }
}

int rank_read_ranks(sqlite3 *db, struct rank_read_rank **out, size_t *n, struct err *e)
{
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = rundb_prepare(db,
                           "SELECT r.rank, r.base_ns, r.t0, r.t1, r.file, r.format, r.distributed,"
                           " (SELECT min(first_slice) FROM track WHERE rank = r.rank AND nslices > 0),"
                           " (SELECT max(last_slice) FROM track WHERE rank = r.rank AND nslices > 0)"
                           " FROM rank r ORDER BY r.rank",
                           &st, e);
    if (rc) return rc;
    return scan_collect(st, "run database (ranks)", sizeof **out, rank_fill, rank_drop, (void **)out, n, e);
}

struct rank_read_steps {
    sqlite3_stmt *st;
};

int rank_read_steps_open(sqlite3 *db, struct rank_read_steps **out, struct err *e)
{
    struct rank_read_steps *c = xcalloc(1, sizeof *c);
    int rc = rundb_prepare(db,
                           "SELECT rank, name, ts, dur, kernel, memcpy, memset, comm, runtime, dataloader,"
                           " cpu_exec, other FROM step ORDER BY rank, idx",
                           &c->st, e);
    if (rc) {
        free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int rank_read_steps_next(struct rank_read_steps *c, struct rank_read_step *row, struct err *e)
{
    int rc = scan_step(c->st, e, "run database (steps)");
    if (rc != 1) return rc;
    const char *name = (const char *)sqlite3_column_text(c->st, 1);
    row->rank = sqlite3_column_int(c->st, 0);
    row->name = name ? name : "";
    row->ts = sqlite3_column_int64(c->st, 2);
    row->dur = sqlite3_column_int64(c->st, 3);
    for (int k = 0; k < RANK_READ_NPARTS; k++) row->part[k] = sqlite3_column_int64(c->st, 4 + k);
    return 1;
}

void rank_read_steps_close(struct rank_read_steps *c)
{
    if (!c) return;
    sqlite3_finalize(c->st);
    free(c);
}

struct rank_read_kernels {
    sqlite3_stmt *top, *per;
    int bound; /* per is bound to top's current name */
};

int rank_read_kernels_open(sqlite3 *db, int top_n, struct rank_read_kernels **out, struct err *e)
{
    struct rank_read_kernels *c = xcalloc(1, sizeof *c);
    const int64_t n = top_n;
    int rc = scan_prepare_args(
        db, "SELECT name, sum(total) t, max(comm) FROM kernel_stat GROUP BY name ORDER BY t DESC LIMIT ?1", &n, 1,
        &c->top, e);
    if (!rc)
        rc = rundb_prepare(db, "SELECT rank, sum(total), sum(calls) FROM kernel_stat WHERE name = ?1 GROUP BY rank",
                           &c->per, e);
    if (rc) {
        rank_read_kernels_close(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int rank_read_kernels_next(struct rank_read_kernels *c, const char **name, int64_t *total, int *comm, struct err *e)
{
    c->bound = 0;
    int rc = scan_step(c->top, e, "run database (kernels)");
    if (rc != 1) return rc;
    *name = (const char *)sqlite3_column_text(c->top, 0);
    *total = sqlite3_column_int64(c->top, 1);
    *comm = sqlite3_column_int(c->top, 2) != 0;
    return 1;
}

int rank_read_kernel_ranks_next(struct rank_read_kernels *c, int *rank, int64_t *total, int64_t *calls,
                                struct err *e)
{
    if (!c->bound) {
        const char *name = (const char *)sqlite3_column_text(c->top, 0);
        sqlite3_reset(c->per);
        sqlite3_bind_text(c->per, 1, name ? name : "", -1, SQLITE_TRANSIENT);
        c->bound = 1;
    }
    int rc = scan_step(c->per, e, "run database (kernels by rank)");
    if (rc != 1) return rc;
    *rank = sqlite3_column_int(c->per, 0);
    *total = sqlite3_column_int64(c->per, 1);
    *calls = sqlite3_column_int64(c->per, 2);
    return 1;
}

void rank_read_kernels_close(struct rank_read_kernels *c)
{
    if (!c) return;
    sqlite3_finalize(c->top);
    sqlite3_finalize(c->per);
    free(c);
}

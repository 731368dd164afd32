/* comm_read.c — collective candidates and launch walks for the cross-rank
 * comparison (see include/store/comm_read.h). */
#include "store/comm_read.h"

#include <stdlib.h>

#include "base/xmalloc.h"
#include "store/model.h"
#include "store/rundb.h"
#include "store/scan.h"

struct comm_read_scan {
    sqlite3_stmt *st;
};

int comm_read_scan_open(sqlite3 *db, int rank, int64_t lo, int64_t hi, struct comm_read_scan **out, struct err *e)
{
    struct comm_read_scan *c = xcalloc(1, sizeof *c);
    const int64_t args[] = { lo, hi, rank, TB_TRACK_CPU, TB_K_CPU_OP, TB_K_USER_ANNOTATION, TB_K_KERNEL };
    /* last column: on a CPU thread of the rank */
    int rc = scan_prepare_args(
        db,
        "SELECT ts, dur, name, kind, corr, args, track IN (SELECT id FROM track WHERE rank = ?3 AND kind = ?4)"
        " FROM slice WHERE id BETWEEN ?1 AND ?2 AND kind IN (?5, ?6, ?7)",
        args, sizeof args / sizeof *args, &c->st, e);
    if (rc) {
        free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int comm_read_scan_next(struct comm_read_scan *c, struct comm_read_slice *row, struct err *e)
{
    int rc = scan_step(c->st, e, "run database (collectives)");
    if (rc != 1) return rc;
    row->ts = sqlite3_column_int64(c->st, 0);
    row->dur = sqlite3_column_int64(c->st, 1);
    row->name = (uint32_t)sqlite3_column_int64(c->st, 2);
    row->kernel = sqlite3_column_int(c->st, 3) == TB_K_KERNEL;
    row->corr = sqlite3_column_int64(c->st, 4);
    row->args = (const char *)sqlite3_column_text(c->st, 5);
    row->on_cpu = sqlite3_column_int(c->st, 6) != 0;
    return 1;
}

void comm_read_scan_close(struct comm_read_scan *c)
{
    if (!c) return;
    sqlite3_finalize(c->st);
    free(c);
}

struct comm_read_launch {
    sqlite3_stmt *by_corr, *by_id;
};

int comm_read_launch_open(sqlite3 *db, struct comm_read_launch **out, struct err *e)
{
    struct comm_read_launch *l = xcalloc(1, sizeof *l);
    const int64_t kinds[] = { 0, 0, 0, TB_K_RUNTIME, TB_K_DRIVER };
    int by_ids = scan_has_table(db, "corr_ids", e), rc = by_ids < 0 ? by_ids : 0;
    /* corr_ids, or a run stored before it (index slice_corr): the first by id */
    if (!rc)
        rc = scan_prepare_args(db,
                               by_ids ? "SELECT s.parent FROM corr_ids c JOIN slice s ON s.id = c.id WHERE c.corr = ?1"
                                        " AND c.id BETWEEN ?2 AND ?3 AND s.kind IN (?4, ?5) ORDER BY c.id LIMIT 1"
                                      : "SELECT parent FROM slice WHERE corr = ?1 AND corr != 0 AND kind IN (?4, ?5)"
                                        " AND id BETWEEN ?2 AND ?3 LIMIT 1",
                               kinds, 5, &l->by_corr, e);
    if (!rc) rc = rundb_prepare(db, "SELECT name, args, parent FROM slice WHERE id = ?1", &l->by_id, e);
    if (rc) {
        comm_read_launch_close(l);
        l = NULL;
    }
    *out = l;
    return rc;
}

int comm_read_launch_parent(struct comm_read_launch *l, int64_t corr, int64_t lo, int64_t hi, int64_t *parent,
                            struct err *e)
{
    sqlite3_stmt *q = l->by_corr;
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, corr);
    sqlite3_bind_int64(q, 2, lo);
    sqlite3_bind_int64(q, 3, hi);
    int rc = scan_step(q, e, "run database (launch calls)");
    *parent = rc == 1 ? sqlite3_column_int64(q, 0) : 0;
    sqlite3_reset(q);
    return rc;
}

int comm_read_launch_slice(struct comm_read_launch *l, int64_t id, uint32_t *name, const char **args,
                           int64_t *parent, struct err *e)
{
    sqlite3_stmt *q = l->by_id;
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, id);
    int rc = scan_step(q, e, "run database (launch callers)");
    if (rc != 1) return rc;
    *name = (uint32_t)sqlite3_column_int64(q, 0);
    *args = (const char *)sqlite3_column_text(q, 1);
    *parent = sqlite3_column_int64(q, 2);
    return 1;
}

void comm_read_launch_release(struct comm_read_launch *l)
{
    sqlite3_reset(l->by_corr);
    sqlite3_reset(l->by_id);
}

void comm_read_launch_close(struct comm_read_launch *l)
{
    if (!l) return;
    sqlite3_finalize(l->by_corr);
    sqlite3_finalize(l->by_id);
    free(l);
}

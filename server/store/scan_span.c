#include "store/scan_span.h"

#include <string.h>

#include "base/xmalloc.h"
#include "store/model.h"
#include "store/nameids.h"
#include "store/rundb.h"

struct scan_span {
    sqlite3_stmt *names, *one, *inside, *ops, *str;
    struct nameids *ids;
    int64_t lo, hi;   /* the rank's slice ids */
    int in_name;      /* ids is walking a name of names */
    int rank;
    int64_t inside_end; /* end of the span being walked */
    int64_t inside_track;
};

void scan_span_close(struct scan_span *c)
{
    if (!c) return;
    sqlite3_finalize(c->names);
    sqlite3_finalize(c->one);
    nameids_close(c->ids);
    sqlite3_finalize(c->inside);
    sqlite3_finalize(c->ops);
    sqlite3_finalize(c->str);
    free(c);
}

int scan_span_open(sqlite3 *db, int rank, struct scan_span **out, struct err *e)
{
    struct scan_span *c = xcalloc(1, sizeof *c);
    int rc, by_ids = scan_has_table(db, "corr_ids", e);
    *out = NULL;
    if (by_ids < 0) {
        free(c);
        return by_ids;
    }
    c->rank = rank;
    /* the names from str (small beside slice), the prefix matched with a
     * range on s so that no LIKE escaping applies: s >= prefix AND s <
     * prefix || U+10FFFF (past every UTF-8 suffix); then each name's ids
     * from name_ids, in the rank's id range, and each row by id */
    if ((rc = rundb_prepare(db, "SELECT id FROM str WHERE s >= ?1 AND s < ?1 || char(1114111) ORDER BY id", &c->names,
                            e)) ||
        (rc = rundb_prepare(db, "SELECT " SCAN_SLICE_COLS " FROM slice s WHERE s.id = ?1", &c->one, e)) ||
        (rc = nameids_open(db, &c->ids, e)) || (rc = scan_slice_range(db, rank, &c->lo, &c->hi, e)) < 0 ||
        (rc = rundb_prepare(db, "SELECT " SCAN_SLICE_COLS " FROM slice s WHERE s.id > ?1 ORDER BY s.id", &c->inside,
                            e)) ||
        /* corr_ids, or a run stored before it (index slice_corr) */
        (rc = rundb_prepare(db,
                            by_ids ? "SELECT " SCAN_SLICE_COLS " FROM corr_ids c JOIN slice s ON s.id = c.id"
                                     " JOIN track t ON t.id = s.track WHERE c.corr = ?1 AND t.kind = ?2"
                                     " AND (?3 < 0 OR t.rank = ?3) AND s.kind IN (?4, ?5, ?6) ORDER BY s.ts"
                                   : "SELECT " SCAN_SLICE_COLS " FROM slice s JOIN track t ON t.id = s.track"
                                     " WHERE s.corr = ?1 AND s.corr != 0 AND t.kind = ?2 AND (?3 < 0 OR t.rank = ?3)"
                                     " AND s.kind IN (?4, ?5, ?6) ORDER BY s.ts",
                            &c->ops, e)) ||
        (rc = rundb_prepare(db, "SELECT s FROM str WHERE id = ?1", &c->str, e))) {
        scan_span_close(c);
        return rc;
    }
    sqlite3_bind_int(c->ops, 2, TB_TRACK_GPU);
    sqlite3_bind_int(c->ops, 3, rank);
    sqlite3_bind_int(c->ops, 4, TB_K_KERNEL);
    sqlite3_bind_int(c->ops, 5, TB_K_MEMCPY);
    sqlite3_bind_int(c->ops, 6, TB_K_MEMSET);
    *out = c;
    return 0;
}

int scan_span_named_begin(struct scan_span *c, const char *prefix, struct err *e)
{
    if (strlen(prefix) > 200) return err_set(e, ERR_INVALID, "name prefix too long");
    sqlite3_reset(c->names);
    sqlite3_bind_text(c->names, 1, prefix, -1, SQLITE_TRANSIENT);
    c->in_name = 0;
    return 0;
}

int scan_span_named_next(struct scan_span *c, struct scan_slice *row, struct err *e)
{
    int64_t id;
    int rc;
    for (;;) {
        if (!c->in_name) {
            if ((rc = scan_step(c->names, e, "run database (names)")) != 1) return rc;
            nameids_begin(c->ids, (uint32_t)sqlite3_column_int64(c->names, 0), c->lo, c->hi);
            c->in_name = 1;
        }
        if ((rc = nameids_next(c->ids, &id, e)) < 0) return rc;
        if (rc == 0) {
            c->in_name = 0;
            continue;
        }
        sqlite3_reset(c->one);
        sqlite3_bind_int64(c->one, 1, id);
        if ((rc = scan_step(c->one, e, "run database (named slices)")) == 1) scan_slice_row(c->one, row);
        else if (rc == 0) rc = rundb_damaged(sqlite3_db_handle(c->one), e, "name_ids names a slice that is not stored");
        return rc;
    }
}

int scan_span_inside_begin(struct scan_span *c, const struct scan_slice *span, struct err *e)
{
    (void)e;
    sqlite3_reset(c->inside);
    sqlite3_bind_int64(c->inside, 1, span->id);
    c->inside_end = span->ts + span->dur;
    c->inside_track = span->track;
    return 0;
}

int scan_span_inside_next(struct scan_span *c, struct scan_slice *row, struct err *e)
{
    if (c->inside_track == 0) return 0;
    int rc = scan_step(c->inside, e, "run database (slices inside a span)");
    if (rc == 1) {
        scan_slice_row(c->inside, row);
        /* ids follow (track, ts): the first row of another track, or one
         * starting at the span's end, ends the walk */
        if (row->track == c->inside_track && row->ts < c->inside_end) return 1;
        rc = 0;
    }
    c->inside_track = 0;
    sqlite3_reset(c->inside);
    return rc;
}

int scan_span_ops_begin(struct scan_span *c, int64_t corr, struct err *e)
{
    (void)e;
    sqlite3_reset(c->ops);
    sqlite3_bind_int64(c->ops, 1, corr);
    return 0;
}

int scan_span_ops_next(struct scan_span *c, struct scan_slice *row, struct err *e)
{
    int rc = scan_step(c->ops, e, "run database (GPU ops of a launch)");
    if (rc == 1) scan_slice_row(c->ops, row);
    return rc;
}

int scan_span_fullscan_steps(struct scan_span *c)
{
    return sqlite3_stmt_status(c->ops, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0) +
           sqlite3_stmt_status(c->inside, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0) +
           sqlite3_stmt_status(c->str, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0);
}

int scan_span_name(struct scan_span *c, uint32_t name, const char **out, struct err *e)
{
    sqlite3_reset(c->str);
    sqlite3_bind_int64(c->str, 1, name);
    int rc = scan_step(c->str, e, "run database (names)");
    if (rc == 1) *out = (const char *)sqlite3_column_text(c->str, 0);
    return rc;
}

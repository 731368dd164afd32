/* analyses_read.c — steps, GPU streams and ops for the deeper analyses
 * (see include/store/analyses_read.h). */
#include "store/analyses_read.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/xmalloc.h"
#include "store/model.h"
#include "store/rundb.h"
#include "store/scan.h"

struct analyses_read_steps {
    sqlite3_stmt *st;
};

int analyses_read_steps_open(sqlite3 *db, int rank, struct analyses_read_steps **out, struct err *e)
{
    sqlite3_stmt *st;
    int rc = scan_prepare_rank(db, "SELECT idx, name, ts, dur, host_ts, host_dur FROM step WHERE rank = ?1 ORDER BY ts",
                               rank, &st, e);
    *out = NULL;
    if (rc) return rc;
    *out = xcalloc(1, sizeof **out);
    (*out)->st = st;
    return 0;
}

int analyses_read_steps_next(struct analyses_read_steps *c, struct analyses_read_step *row, struct err *e)
{
    int rc = scan_step(c->st, e, "analyses (steps)");
    if (rc != 1) return rc;
    const char *nm = (const char *)sqlite3_column_text(c->st, 1);
    int64_t *num[] = { &row->ts, &row->dur, &row->host_ts, &row->host_dur };
    row->idx = sqlite3_column_int(c->st, 0);
    row->name = nm ? nm : "";
    for (int i = 0; i < 4; i++) *num[i] = sqlite3_column_int64(c->st, 2 + i);
    return 1;
}

void analyses_read_steps_close(struct analyses_read_steps *c)
{
    if (!c) return;
    sqlite3_finalize(c->st);
    free(c);
}

struct analyses_read_gpu {
    sqlite3_stmt *tr, *sl;
};

int analyses_read_gpu_open(sqlite3 *db, int rank, struct analyses_read_gpu **out, struct err *e)
{
    struct analyses_read_gpu *c = xcalloc(1, sizeof *c);
    const int64_t targs[] = { rank, TB_TRACK_GPU }, sargs[] = { 0, 0, TB_K_KERNEL, TB_K_MEMCPY, TB_K_MEMSET };
    /* a trace without thread_name metadata leaves GPU tracks unnamed */
    int rc = scan_prepare_args(db,
                               "SELECT id, device, CASE WHEN coalesce(name, '') = '' AND stream IS NOT NULL"
                               " THEN 'stream ' || stream ELSE name END, first_slice, last_slice FROM track"
                               " WHERE rank = ?1 AND kind = ?2 AND nslices > 0 ORDER BY id",
                               targs, 2, &c->tr, e);
    /* ?3 kernel, ?4 copy, ?5 memset */
    if (!rc)
        rc = scan_prepare_args(db,
                               "SELECT id, ts, dur, name, kind, corr, CASE WHEN kind IN (?4, ?5) THEN args END"
                               " FROM slice WHERE id BETWEEN ?1 AND ?2 AND kind IN (?3, ?4, ?5)",
                               sargs, 5, &c->sl, e);
    if (rc) {
        analyses_read_gpu_close(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int analyses_read_streams_next(struct analyses_read_gpu *c, struct analyses_read_stream *row, struct err *e)
{
    int rc = scan_step(c->tr, e, "analyses (GPU ops)");
    if (rc != 1) return rc;
    row->track = sqlite3_column_int64(c->tr, 0);
    row->device = sqlite3_column_type(c->tr, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(c->tr, 1);
    row->name = (const char *)sqlite3_column_text(c->tr, 2);
    row->first = sqlite3_column_int64(c->tr, 3);
    row->last = sqlite3_column_int64(c->tr, 4);
    sqlite3_reset(c->sl);
    sqlite3_bind_int64(c->sl, 1, row->first);
    sqlite3_bind_int64(c->sl, 2, row->last);
    return 1;
}

int analyses_read_ops_next(struct analyses_read_gpu *c, struct analyses_read_op *row, struct err *e)
{
    sqlite3_stmt *sl = c->sl;
    int rc = scan_step(sl, e, "analyses (GPU ops)");
    if (rc != 1) return rc;
    int64_t *num[] = { &row->id, &row->ts, &row->dur };
    for (int i = 0; i < 3; i++) *num[i] = sqlite3_column_int64(sl, i);
    row->name = (uint32_t)sqlite3_column_int64(sl, 3);
    row->kind = sqlite3_column_int(sl, 4);
    row->corr = sqlite3_column_int64(sl, 5);
    row->args = (const char *)sqlite3_column_text(sl, 6);
    row->nargs = sqlite3_column_bytes(sl, 6);
    return 1;
}

void analyses_read_gpu_close(struct analyses_read_gpu *c)
{
    if (!c) return;
    sqlite3_finalize(c->tr);
    sqlite3_finalize(c->sl);
    free(c);
}

/* A thread's slices hold the ids first..last with no gap when it has
 * last - first + 1 of them (ids follow (track, ts)): then the ids are
 * counted, not read (gaps: sl reads them). */
struct analyses_read_hosts {
    sqlite3_stmt *tr, *sl, *dense, *cur;
    int64_t next_id, last;
};

int analyses_read_hosts_open(sqlite3 *db, int rank, struct analyses_read_hosts **out, struct err *e)
{
    const int64_t targs[] = { rank, TB_TRACK_GPU };
    struct analyses_read_hosts *c = xcalloc(1, sizeof *c);
    int rc = scan_prepare_args(db,
                               "SELECT id, first_slice, last_slice, nslices FROM track"
                               " WHERE rank = ?1 AND kind != ?2 AND nslices > 0 ORDER BY id",
                               targs, 2, &c->tr, e);
    /* sl and dense: the same columns, dense without the id */
    const char *const sql[2] = { "SELECT ts, dur, parent, name, kind, corr, id FROM slice WHERE id BETWEEN ?1 AND ?2",
                                 "SELECT ts, dur, parent, name, kind, corr FROM slice WHERE id BETWEEN ?1 AND ?2" };
    sqlite3_stmt **st[2] = { &c->sl, &c->dense };
    for (int i = 0; i < 2 && !rc; i++) rc = rundb_prepare(db, sql[i], st[i], e);
    *out = rc ? NULL : c;
    if (rc) analyses_read_hosts_close(c);
    return rc;
}

int analyses_read_hosts_next(struct analyses_read_hosts *c, int64_t *track, int64_t *first, int64_t *last,
                             struct err *e)
{
    int rc = scan_step(c->tr, e, "analyses (host threads)");
    if (rc != 1) return rc;
    *track = sqlite3_column_int64(c->tr, 0);
    *first = sqlite3_column_int64(c->tr, 1);
    *last = sqlite3_column_int64(c->tr, 2);
    c->cur = *last - *first + 1 == sqlite3_column_int64(c->tr, 3) ? c->dense : c->sl;
    c->next_id = *first;
    c->last = *last;
    sqlite3_reset(c->cur);
    sqlite3_bind_int64(c->cur, 1, *first);
    sqlite3_bind_int64(c->cur, 2, *last);
    return 1;
}

int analyses_read_hslices_next(struct analyses_read_hosts *c, struct analyses_read_hslice *row, struct err *e)
{
    sqlite3_stmt *sl = c->cur;
    int rc = scan_step(sl, e, "analyses (host slices)");
    if (rc == 0 && sl == c->dense && c->next_id != c->last + 1)
        return err_set(e, ERR_INVALID, "analyses (host slices): ids %lld..%lld have a gap", (long long)(c->next_id),
                       (long long)c->last);
    if (rc != 1) return rc;
    row->ts = sqlite3_column_int64(sl, 0);
    row->dur = sqlite3_column_int64(sl, 1);
    row->parent = sqlite3_column_int64(sl, 2);
    row->name = (uint32_t)sqlite3_column_int64(sl, 3);
    row->kind = sqlite3_column_int(sl, 4);
    row->corr = sqlite3_column_int64(sl, 5);
    row->id = sl == c->dense ? c->next_id++ : sqlite3_column_int64(sl, 6);
    return 1;
}

void analyses_read_hosts_close(struct analyses_read_hosts *c)
{
    if (!c) return;
    sqlite3_finalize(c->tr);
    sqlite3_finalize(c->sl);
    sqlite3_finalize(c->dense);
    free(c);
}

int analyses_read_gpu_name(sqlite3 *db, int rank, char *buf, size_t n, struct err *e)
{
    sqlite3_stmt *st;
    int rc =
        scan_prepare_rank(db, "SELECT name FROM gpu WHERE rank = ?1 ORDER BY kernel_ns DESC LIMIT 1", rank, &st, e);
    buf[0] = '\0';
    if (rc) return rc;
    if ((rc = scan_step(st, e, "analyses (gpu)")) == 1) {
        const char *nm = (const char *)sqlite3_column_text(st, 0);
        snprintf(buf, n, "%s", nm ? nm : "");
    }
    sqlite3_finalize(st);
    return rc;
}

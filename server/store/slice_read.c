#include "store/slice_read.h"

#include <stdlib.h>

#include "base/xmalloc.h"
#include "store/facts.h"
#include "store/nameids.h"
#include "store/rundb.h"
#include "store/scan.h"

struct slice_read {
    sqlite3_stmt *up, *prev;
};

void slice_read_close(struct slice_read *r)
{
    if (!r) return;
    sqlite3_finalize(r->up);
    sqlite3_finalize(r->prev);
    free(r);
}

int slice_read_open(sqlite3 *db, struct slice_read **out, struct err *e)
{
    static const int64_t gpu_ops[] = { TB_K_KERNEL, TB_K_MEMCPY, TB_K_MEMSET };
    struct slice_read *r = xcalloc(1, sizeof *r);
    int rc;
    *out = NULL;
    /* the GPU op kinds are ?1..?3, the slice and its stream's first ?4, ?5 */
    if ((rc = rundb_prepare(db, "SELECT s.parent, n.s, s.kind FROM slice s JOIN str n ON n.id = s.name WHERE s.id = ?1",
                            &r->up, e)) ||
        (rc = scan_prepare_args(db,
                                "SELECT ts + dur FROM slice WHERE id < ?4 AND id >= ?5 AND kind IN (?1, ?2, ?3)"
                                " ORDER BY id DESC LIMIT 1",
                                gpu_ops, 3, &r->prev, e)))
        slice_read_close(r);
    else
        *out = r;
    return rc;
}

int slice_read_up(struct slice_read *r, int64_t id, struct slice_read_up *row, struct err *e)
{
    sqlite3_reset(r->up);
    sqlite3_bind_int64(r->up, 1, id);
    int rc = scan_step(r->up, e, "run database (parents)");
    if (rc == 1) {
        row->parent = sqlite3_column_int64(r->up, 0);
        row->name = (const char *)sqlite3_column_text(r->up, 1);
        row->kind = (enum tb_kind)sqlite3_column_int(r->up, 2);
    }
    return rc;
}

int slice_read_prev_op_end(struct slice_read *r, int64_t id, int64_t first, int64_t *end, struct err *e)
{
    sqlite3_reset(r->prev);
    sqlite3_bind_int64(r->prev, 4, id);
    sqlite3_bind_int64(r->prev, 5, first);
    int rc = scan_step(r->prev, e, "run database (previous op)");
    if (rc == 1) *end = sqlite3_column_int64(r->prev, 0);
    return rc;
}

struct slice_read_copies {
    sqlite3_stmt *tracks, *copies;
    int in_track;
};

void slice_read_copies_close(struct slice_read_copies *c)
{
    if (!c) return;
    sqlite3_finalize(c->tracks);
    sqlite3_finalize(c->copies);
    free(c);
}

int slice_read_copies_open(sqlite3 *db, int rank, const char *pattern, struct slice_read_copies **out, struct err *e)
{
    struct slice_read_copies *c = xcalloc(1, sizeof *c);
    int rc;
    *out = NULL;
    /* the copies carry their name and byte count, which the slice cursor
     * does not read */
    const int64_t gpu_tracks[] = { rank, TB_TRACK_GPU }, copy = TB_K_MEMCPY;
    /* a stream's id range is bound as ?3, ?4 at each stream */
    if ((rc = scan_prepare_args(db,
                                "SELECT first_slice, last_slice FROM track WHERE rank = ?1 AND kind = ?2 AND nslices > 0",
                                gpu_tracks, 2, &c->tracks, e)) ||
        (rc = scan_prepare_args(db,
                                "SELECT s.ts, s.dur, s.corr, n.s,"
                                " CASE WHEN json_valid(s.args) THEN json_extract(s.args, '$.bytes') END, s.id"
                                " FROM slice s JOIN str n ON n.id = s.name WHERE s.id BETWEEN ?3 AND ?4 AND s.kind = ?1"
                                " AND s.name IN (SELECT id FROM str WHERE s LIKE ?2)",
                                &copy, 1, &c->copies, e))) {
        slice_read_copies_close(c);
        return rc;
    }
    sqlite3_bind_text(c->copies, 2, pattern, -1, SQLITE_TRANSIENT);
    *out = c;
    return 0;
}

int slice_read_copies_track(struct slice_read_copies *c, int64_t *first, struct err *e)
{
    c->in_track = 0;
    int rc = scan_step(c->tracks, e, "run database (GPU tracks)");
    if (rc != 1) return rc;
    *first = sqlite3_column_int64(c->tracks, 0);
    sqlite3_reset(c->copies);
    sqlite3_bind_int64(c->copies, 3, *first);
    sqlite3_bind_int64(c->copies, 4, sqlite3_column_int64(c->tracks, 1));
    c->in_track = 1;
    return 1;
}

int slice_read_copies_next(struct slice_read_copies *c, struct slice_read_copy *row, struct err *e)
{
    if (!c->in_track) return 0;
    int rc = scan_step(c->copies, e, "run database (copies)");
    if (rc != 1) {
        c->in_track = 0;
        return rc;
    }
    sqlite3_stmt *st = c->copies;
    row->ts = sqlite3_column_int64(st, 0);
    row->dur = sqlite3_column_int64(st, 1);
    row->corr = sqlite3_column_int64(st, 2);
    row->name = (const char *)sqlite3_column_text(st, 3);
    row->bytes = sqlite3_column_type(st, 4) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 4);
    row->id = sqlite3_column_int64(st, 5);
    return 1;
}

struct slice_read_spans {
    sqlite3_stmt *st;
};

int slice_read_compute_open(sqlite3 *db, int rank, int64_t lo, int64_t hi, struct slice_read_spans **out,
                            struct err *e)
{
    struct slice_read_spans *c = xcalloc(1, sizeof *c);
    int rc;
    *out = NULL;
    const int64_t args[] = { rank, lo, hi, TB_K_KERNEL, TB_TRACK_GPU };
    if ((rc = scan_prepare_args(db,
                                "SELECT ts, dur FROM slice WHERE id BETWEEN ?2 AND ?3 AND kind = ?4"
                                " AND track IN (SELECT id FROM track WHERE rank = ?1 AND kind = ?5)"
                                " AND name NOT IN (SELECT id FROM str WHERE s IN (SELECT name FROM kernel_stat WHERE comm))"
                                " ORDER BY ts",
                                args, 5, &c->st, e))) {
        free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int slice_read_spans_next(struct slice_read_spans *c, int64_t *ts, int64_t *dur, struct err *e)
{
    int rc = scan_step(c->st, e, "rules (compute kernels)");
    *ts = rc == 1 ? sqlite3_column_int64(c->st, 0) : 0;
    *dur = rc == 1 ? sqlite3_column_int64(c->st, 1) : 0;
    return rc;
}

void slice_read_spans_close(struct slice_read_spans *c)
{
    if (!c) return;
    sqlite3_finalize(c->st);
    free(c);
}

/* Most time first; equal times in name order, as the names were read. */
static int coll_cmp(const void *x, const void *y)
{
    const struct stats_read_group *a = x, *b = y;
    if (a->total != b->total) return a->total > b->total ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* The slices of names[0..nnames) in rank's id range whose row st (bound
 * ?1 = the id) yields: fn(ctx, name, st) for each, name by name, each in id
 * ((track, ts)) order. Returns 0 or < 0. */
static int each_named(sqlite3 *db, int rank, const uint32_t *names, size_t nnames, sqlite3_stmt *st,
                      int (*fn)(void *ctx, uint32_t name, sqlite3_stmt *st), void *ctx, struct err *e)
{
    struct nameids *ids;
    int64_t lo, hi, id;
    int rc = scan_slice_range(db, rank, &lo, &hi, e);
    if (rc < 0 || (rc = nameids_open(db, &ids, e))) return rc;
    for (size_t i = 0; i < nnames && rc >= 0; i++) {
        nameids_begin(ids, names[i], lo, hi);
        while ((rc = nameids_next(ids, &id, e)) == 1) {
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, id);
            if ((rc = scan_step(st, e, "run database (slices by name)")) == 1) rc = fn(ctx, names[i], st);
            if (rc < 0) break;
        }
    }
    nameids_close(ids);
    return rc < 0 ? rc : 0;
}

/* The str ids st yields in its first column. OUT *out: owned by caller. */
static int read_ids(sqlite3_stmt *st, uint32_t **out, size_t *n, struct err *e)
{
    size_t cap = 0;
    int rc;
    *out = NULL;
    *n = 0;
    while ((rc = scan_step(st, e, "run database (names)")) == 1) {
        if (*n == cap) *out = xrealloc(*out, (cap = cap ? cap * 2 : 16) * sizeof **out);
        (*out)[(*n)++] = (uint32_t)sqlite3_column_int64(st, 0);
    }
    return rc;
}

struct colls {
    struct stats_read_group *v;
    size_t n, cap;
    struct scan_names *text;
    struct err *e;
};

static int coll_add(void *ctx, uint32_t name, sqlite3_stmt *st)
{
    struct colls *c = ctx;
    if (!c->n || c->v[c->n - 1].id != name) {
        if (c->n == c->cap) c->v = xrealloc(c->v, (c->cap = c->cap ? c->cap * 2 : 16) * sizeof *c->v);
        struct stats_read_group *g = &c->v[c->n++];
        *g = (struct stats_read_group){ .id = name };
        const char *s;
        int rc = scan_name(c->text, name, &s, c->e);
        if (rc < 0) return rc;
        g->name = s ? xstrdup(s) : NULL;
    }
    c->v[c->n - 1].count++;
    c->v[c->n - 1].total += (double)sqlite3_column_int64(st, 0);
    return 0;
}

int slice_read_host_colls(sqlite3 *db, int rank, struct stats_read_group **out, size_t *n, struct err *e)
{
    const int64_t kinds[] = { 0, TB_K_CPU_OP, TB_K_USER_ANNOTATION };
    sqlite3_stmt *names = NULL, *st = NULL;
    struct colls c = { .e = e };
    uint32_t *ids = NULL;
    size_t nids = 0;
    *out = NULL;
    *n = 0;
    int rc = rundb_prepare(db,
                           "SELECT id FROM str WHERE (s GLOB 'gloo:*' OR s GLOB 'nccl:*') AND s NOT GLOB '*barrier*'"
                           " ORDER BY id",
                           &names, e);
    if (!rc) rc = scan_prepare_args(db, "SELECT dur FROM slice WHERE id = ?1 AND kind IN (?2, ?3)", kinds, 3, &st, e);
    if (!rc) rc = scan_names_open(db, &c.text, e);
    if (!rc) rc = read_ids(names, &ids, &nids, e);
    if (!rc) rc = each_named(db, rank, ids, nids, st, coll_add, &c, e);
    free(ids);
    sqlite3_finalize(names);
    sqlite3_finalize(st);
    scan_names_close(c.text);
    if (rc < 0) {
        stats_read_groups_free(c.v, c.n);
        return rc;
    }
    xqsort(c.v, c.n, sizeof *c.v, coll_cmp);
    *out = c.v;
    *n = c.n;
    return 0;
}

struct spans {
    struct scan_slice *v;
    size_t n, cap;
};

static int span_add(void *ctx, uint32_t name, sqlite3_stmt *st)
{
    struct spans *c = ctx;
    (void)name;
    if (c->n == c->cap) c->v = xrealloc(c->v, (c->cap = c->cap ? c->cap * 2 : 64) * sizeof *c->v);
    scan_slice_row(st, &c->v[c->n++]);
    return 0;
}

int slice_read_named_spans(sqlite3 *db, int rank, const char *const *pats, size_t npats, struct scan_slice **out,
                           size_t *n, struct err *e)
{
    const int64_t args[] = { 0, TB_TRACK_GPU, TB_K_CPU_OP, TB_K_USER_ANNOTATION };
    struct facts_names *names;
    struct spans c = { 0 };
    sqlite3_stmt *st;
    *out = NULL;
    *n = 0;
    /* the names first (the small str table), then each name's ids */
    int rc = scan_prepare_args(db,
                               "SELECT " SCAN_SLICE_COLS " FROM slice s JOIN track t ON t.id = s.track"
                               " WHERE s.id = ?1 AND t.kind != ?2 AND s.kind IN (?3, ?4)",
                               args, 4, &st, e);
    if (rc) return rc;
    if ((rc = facts_names_open(db, FACTS_LIKE, pats, npats, &names, e))) {
        sqlite3_finalize(st);
        return rc;
    }
    uint32_t *ids = NULL, id;
    size_t nids = 0, cap = 0;
    while ((rc = facts_names_next(names, &id, NULL, e)) == 1) {
        if (nids == cap) ids = xrealloc(ids, (cap = cap ? cap * 2 : 16) * sizeof *ids);
        ids[nids++] = id;
    }
    facts_names_close(names);
    if (rc == 0) rc = each_named(db, rank, ids, nids, st, span_add, &c, e);
    free(ids);
    sqlite3_finalize(st);
    if (rc < 0) {
        free(c.v);
        return rc;
    }
    *out = c.v;
    *n = c.n;
    return 0;
}

/* The statements of a slice_read_ids: a track's range, the probe, the
 * range walk, one slice by id. */
enum { IDS_TRACK, IDS_PROBE, IDS_ROWS, IDS_ONE, IDS_N };

struct slice_read_ids {
    sqlite3_stmt *st[IDS_N];
};

void slice_read_ids_close(struct slice_read_ids *r)
{
    for (int i = 0; r && i < IDS_N; i++) sqlite3_finalize(r->st[i]);
    free(r);
}

#define ID_COLS "id, 0, ts, dur, parent, name, kind, corr"

int slice_read_ids_open(sqlite3 *db, enum tb_kind skip, struct slice_read_ids **out, struct err *e)
{
    struct slice_read_ids *r = xcalloc(1, sizeof *r);
    const int64_t skipped = skip;
    int rc;
    *out = NULL;
    if ((rc = rundb_prepare(db, "SELECT first_slice, last_slice FROM track WHERE id = ?1 AND nslices > 0", &r->st[IDS_TRACK],
                            e)) ||
        (rc = rundb_prepare(db, "SELECT id, ts FROM slice WHERE id >= ?1 AND id <= ?2 ORDER BY id LIMIT 1", &r->st[IDS_PROBE],
                            e)) ||
        (rc = scan_prepare_args(db, "SELECT " ID_COLS " FROM slice WHERE id BETWEEN ?2 AND ?3 AND kind != ?1 ORDER BY id",
                                &skipped, 1, &r->st[IDS_ROWS], e)) ||
        (rc = rundb_prepare(db, "SELECT " ID_COLS " FROM slice WHERE id = ?1", &r->st[IDS_ONE], e))) {
        slice_read_ids_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

int slice_read_ids_track(struct slice_read_ids *r, int64_t track, int64_t *first, int64_t *last, struct err *e)
{
    sqlite3_reset(r->st[IDS_TRACK]);
    sqlite3_bind_int64(r->st[IDS_TRACK], 1, track);
    int rc = scan_step(r->st[IDS_TRACK], e, "critical path (track)");
    if (rc == 1 && sqlite3_column_type(r->st[IDS_TRACK], 0) == SQLITE_NULL) rc = 0;
    if (rc == 1) {
        *first = sqlite3_column_int64(r->st[IDS_TRACK], 0);
        *last = sqlite3_column_int64(r->st[IDS_TRACK], 1);
    }
    return rc;
}

int slice_read_ids_first(struct slice_read_ids *r, int64_t lo, int64_t hi, int64_t *id, int64_t *ts, struct err *e)
{
    sqlite3_reset(r->st[IDS_PROBE]);
    sqlite3_bind_int64(r->st[IDS_PROBE], 1, lo);
    sqlite3_bind_int64(r->st[IDS_PROBE], 2, hi);
    int rc = scan_step(r->st[IDS_PROBE], e, "critical path (probe)");
    *id = rc == 1 ? sqlite3_column_int64(r->st[IDS_PROBE], 0) : 0;
    *ts = rc == 1 ? sqlite3_column_int64(r->st[IDS_PROBE], 1) : 0;
    return rc;
}

int slice_read_ids_get(struct slice_read_ids *r, int64_t id, struct scan_slice *row, struct err *e)
{
    sqlite3_reset(r->st[IDS_ONE]);
    sqlite3_bind_int64(r->st[IDS_ONE], 1, id);
    int rc = scan_step(r->st[IDS_ONE], e, "critical path (host slice)");
    if (rc == 1) scan_slice_row(r->st[IDS_ONE], row);
    return rc;
}

void slice_read_ids_begin(struct slice_read_ids *r, int64_t lo, int64_t hi)
{
    sqlite3_reset(r->st[IDS_ROWS]);
    sqlite3_bind_int64(r->st[IDS_ROWS], 2, lo);
    sqlite3_bind_int64(r->st[IDS_ROWS], 3, hi);
}

int slice_read_ids_next(struct slice_read_ids *r, struct scan_slice *row, struct err *e)
{
    int rc = scan_step(r->st[IDS_ROWS], e, "critical path (host slices)");
    if (rc == 1) scan_slice_row(r->st[IDS_ROWS], row);
    return rc;
}

void slice_read_ids_end(struct slice_read_ids *r)
{
    sqlite3_reset(r->st[IDS_ROWS]);
}

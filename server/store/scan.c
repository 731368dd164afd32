#include "store/scan.h"

#include <string.h>

#include "base/corrix.h"
#include "base/xmalloc.h"
#include "store/rundb.h"

#define SLICE_COLS SCAN_SLICE_COLS
#define slice_row scan_slice_row

struct scan_slices {
    sqlite3_stmt *tracks, *slices;
    unsigned kinds;
    int in_track; /* slices is bound to the current track's ids */
    int done;     /* the track statement reached its end */
};

/* The tracks of rank (< 0: every rank) that sel selects, as ?1..?3 of a
 * statement on track: ?2 the one track kind wanted (< 0: any), ?3 the one
 * refused (< 0: none). scan_slices_open and scan_slices_count share it. */
#define TRACK_SEL "(?1 < 0 OR rank = ?1) AND (?2 < 0 OR kind = ?2) AND (?3 < 0 OR kind != ?3)"

static void track_sel_args(int rank, enum scan_tracks sel, int64_t args[3])
{
    args[0] = rank;
    args[1] = sel == SCAN_TRACKS_GPU ? TB_TRACK_GPU : -1;
    args[2] = sel == SCAN_TRACKS_HOST ? TB_TRACK_GPU : -1;
}

int scan_step(sqlite3_stmt *st, struct err *e, const char *what)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    return rundb_db_error(sqlite3_db_handle(st), e, what);
}

void scan_slices_close(struct scan_slices *c)
{
    if (!c) return;
    sqlite3_finalize(c->tracks);
    sqlite3_finalize(c->slices);
    free(c);
}

int scan_slices_open(sqlite3 *db, int rank, enum scan_tracks sel, unsigned kinds, struct scan_slices **out,
                     struct err *e)
{
    struct scan_slices *c = xcalloc(1, sizeof *c);
    int64_t sel_args[3];
    int rc;
    *out = NULL;
    track_sel_args(rank, sel, sel_args);
    if ((rc = scan_prepare_args(db,
                                "SELECT id, first_slice, last_slice FROM track WHERE " TRACK_SEL
                                " AND nslices > 0 ORDER BY id",
                                sel_args, 3, &c->tracks, e)) ||
        /* every kind: no test of each row's kind (the host tracks' walk
         * reads some 700 k rows of tiled33 so) */
        (rc = rundb_prepare(db,
                            (kinds & SCAN_KINDS_ALL) == SCAN_KINDS_ALL
                                ? "SELECT " SLICE_COLS " FROM slice s WHERE id BETWEEN ?1 AND ?2"
                                : "SELECT " SLICE_COLS " FROM slice s"
                                  " WHERE id BETWEEN ?1 AND ?2 AND (?3 >> kind) & 1",
                            &c->slices, e))) {
        scan_slices_close(c);
        return rc;
    }
    c->kinds = kinds & SCAN_KINDS_ALL;
    if (c->kinds != SCAN_KINDS_ALL) sqlite3_bind_int64(c->slices, 3, (sqlite3_int64)c->kinds);
    *out = c;
    return 0;
}

int scan_slices_track(struct scan_slices *c, int64_t *track, struct err *e)
{
    c->in_track = 0;
    if (c->done) return 0;
    int rc = scan_step(c->tracks, e, "run database (tracks)");
    if (rc <= 0) {
        c->done = rc == 0;
        return rc;
    }
    if (track) *track = sqlite3_column_int64(c->tracks, 0);
    sqlite3_reset(c->slices);
    sqlite3_bind_int64(c->slices, 1, sqlite3_column_int64(c->tracks, 1));
    sqlite3_bind_int64(c->slices, 2, sqlite3_column_int64(c->tracks, 2));
    c->in_track = 1;
    return 1;
}

void scan_slices_range(const struct scan_slices *c, int64_t *first, int64_t *last)
{
    *first = sqlite3_column_int64(c->tracks, 1);
    *last = sqlite3_column_int64(c->tracks, 2);
}

void scan_slice_row(sqlite3_stmt *st, struct scan_slice *row)
{
    row->id = sqlite3_column_int64(st, 0);
    row->track = sqlite3_column_int64(st, 1);
    row->ts = sqlite3_column_int64(st, 2);
    row->dur = sqlite3_column_int64(st, 3);
    row->parent = sqlite3_column_int64(st, 4);
    row->name = (uint32_t)sqlite3_column_int64(st, 5);
    row->kind = (enum tb_kind)sqlite3_column_int(st, 6);
    row->corr = sqlite3_column_int64(st, 7);
}

int scan_slices_step(struct scan_slices *c, struct scan_slice *row, struct err *e)
{
    if (!c->in_track) return 0;
    int rc = scan_step(c->slices, e, "run database (slices)");
    if (rc <= 0) {
        c->in_track = 0;
        return rc;
    }
    slice_row(c->slices, row);
    return 1;
}

int scan_slices_next(struct scan_slices *c, struct scan_slice *row, struct err *e)
{
    for (;;) {
        int rc = scan_slices_step(c, row, e);
        if (rc != 0) return rc;
        if ((rc = scan_slices_track(c, NULL, e)) <= 0) return rc;
    }
}

int scan_slice_range(sqlite3 *db, int rank, int64_t *first, int64_t *last, struct err *e)
{
    sqlite3_stmt *st;
    int rc = rundb_prepare(db,
                           "SELECT min(first_slice), max(last_slice) FROM track"
                           " WHERE (?1 < 0 OR rank = ?1) AND nslices > 0",
                           &st, e);
    if (rc) return rc;
    sqlite3_bind_int(st, 1, rank);
    *first = 1;
    *last = 0;
    rc = scan_step(st, e, "run database (slice range)");
    if (rc == 1 && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        *first = sqlite3_column_int64(st, 0);
        *last = sqlite3_column_int64(st, 1);
    } else if (rc == 1) {
        rc = 0;
    }
    sqlite3_finalize(st);
    return rc;
}

struct scan_launch {
    sqlite3 *db;
    int rank;
    sqlite3_stmt *st;
    struct launch_track {
        int64_t id;
        int64_t host; /* 1: not a GPU stream (scan_slices' SCAN_TRACKS_HOST) */
    } *tracks;       /* the rank's tracks, by id */
    size_t ntracks;
    /* preloaded: every launch call of the rank in track then id order, and
     * those with a correlation id by (corr, row) */
    struct scan_slice *mem;
    size_t nmem;
    struct corrix *by_corr; /* key: corr, idx: row of mem */
    size_t nby;
    int preloaded;
    /* the SCAN_HOST_ACTS slices, in track then id order; tracks[i]'s are
     * acts[aofs[i] .. aofs[i + 1]) (aofs NULL: none kept) */
    struct scan_brief *acts;
    size_t nacts, *aofs;
    const struct scan_held *held; /* rows the preload reads from memory, NULL: none */
};

void scan_launch_close(struct scan_launch *l)
{
    if (!l) return;
    sqlite3_finalize(l->st);
    free(l->tracks);
    free(l->mem);
    free(l->by_corr);
    free(l->acts);
    free(l->aofs);
    free(l);
}

/* The order of the answers: earliest, then longest, then first stored. */
static int launch_before(const struct scan_slice *a, const struct scan_slice *b)
{
    if (a->ts != b->ts) return a->ts < b->ts;
    if (a->dur != b->dur) return a->dur > b->dur;
    return a->id < b->id;
}

static const struct launch_track *launch_track_of(const struct scan_launch *l, int64_t track);

/* Keeps b as a SCAN_HOST_ACTS slice of the rank's track t (NULL: another
 * rank's), at most amax in all: past it none are kept. */
static void keep_act(struct scan_launch *l, const struct scan_brief *b, const struct launch_track *t, size_t amax,
                     size_t *cap, int *over)
{
    if (*over) return;
    if (l->nacts == amax) {
        *over = 1;
        return;
    }
    if (l->nacts == *cap) l->acts = xrealloc(l->acts, (*cap = *cap ? *cap * 2 : 4096) * sizeof *l->acts);
    l->acts[l->nacts++] = *b;
    if (t) l->aofs[t - l->tracks + 1]++;
}

void scan_launch_hold(struct scan_launch *l, const struct scan_held *held)
{
    l->held = held;
}

/* What the preload keeps as it goes. */
struct preload {
    size_t max, amax, cap, acap;
    int over, aover;
};

/* Keeps r (a SCAN_LAUNCHES row) of the rank's track t (NULL: another
 * rank's) as a launch call and, with the others, as a host act. */
static void keep_launch(struct scan_launch *l, const struct scan_slice *r, const struct launch_track *t,
                        struct preload *p)
{
    keep_act(l, &(const struct scan_brief){ r->ts, r->dur, r->name, (uint8_t)r->kind }, t, p->amax, &p->acap,
             &p->aover);
    if (p->over) return;
    if (l->nmem == p->max) {
        p->over = 1;
        return;
    }
    if (l->nmem == p->cap) l->mem = xrealloc(l->mem, (p->cap = p->cap ? p->cap * 2 : 4096) * sizeof *l->mem);
    l->mem[l->nmem++] = *r;
}

/* The held rows of track t's ids first..last (rows from l->held) that
 * kinds selects, kept as the table's would be. */
static void preload_held(struct scan_launch *l, const void *rows, int64_t track, int64_t first, int64_t last,
                         unsigned kinds, const struct launch_track *t, struct preload *p)
{
    struct scan_slice r;
    for (int64_t i = 0; i <= last - first; i++) {
        l->held->row(rows, i, &r);
        unsigned kind = SCAN_KIND(r.kind);
        if (!(kind & kinds)) continue;
        r.id = first + i;
        r.track = track;
        if (kind & SCAN_LAUNCHES) keep_launch(l, &r, t, p);
        else keep_act(l, &(const struct scan_brief){ r.ts, r.dur, r.name, (uint8_t)r.kind }, t, p->amax, &p->acap,
                      &p->aover);
    }
}

int scan_launch_preload(struct scan_launch *l, size_t max, size_t amax, struct err *e)
{
    struct scan_slices *c;
    struct scan_slice r;
    struct preload p = { max, amax, 0, 0, 0, amax == 0 };
    int64_t total = 0;
    if (l->preloaded) return 1;
    /* past amax none are kept: known before the pass, so it never holds
     * amax rows only to drop them */
    int rc = p.aover ? 0 : scan_slices_count(l->db, l->rank, SCAN_TRACKS_ALL, &total, e);
    if (rc) return rc;
    if (total > (int64_t)amax) p.aover = 1;
    /* one pass for both: the host slices are most of a rank's rows, and
     * SQLite visits every row of a track whatever the kinds kept */
    const unsigned kinds = SCAN_LAUNCHES | (p.aover ? 0 : SCAN_HOST_ACTS);
    if ((rc = scan_slices_open(l->db, l->rank, SCAN_TRACKS_ALL, kinds, &c, e))) return rc;
    if (!p.aover) l->aofs = xcalloc(l->ntracks + 1, sizeof *l->aofs);
    int64_t track;
    while ((rc = scan_slices_track(c, &track, e)) == 1) {
        const struct launch_track *t = launch_track_of(l, track);
        int64_t first, last;
        scan_slices_range(c, &first, &last);
        const void *rows = l->held ? l->held->track(l->held->arg, track, first, last) : NULL;
        if (rows) {
            preload_held(l, rows, track, first, last, kinds, t, &p);
            continue;
        }
        /* the columns a row's kind needs: an operator or annotation (most
         * rows kept) is read as the 4 a host cursor reads */
        while ((rc = scan_step(c->slices, e, "run database (slices)")) == 1) {
            unsigned kind = SCAN_KIND(sqlite3_column_int(c->slices, 6));
            if (!(kind & SCAN_LAUNCHES)) {
                const struct scan_brief b = { sqlite3_column_int64(c->slices, 2), sqlite3_column_int64(c->slices, 3),
                                              (uint32_t)sqlite3_column_int64(c->slices, 5),
                                              (uint8_t)sqlite3_column_int(c->slices, 6) };
                keep_act(l, &b, t, p.amax, &p.acap, &p.aover);
                continue;
            }
            slice_row(c->slices, &r);
            keep_launch(l, &r, t, &p);
        }
        if (rc < 0) break;
    }
    scan_slices_close(c);
    l->held = NULL;
    if (rc < 0 || p.aover) { /* an error, or too many to hold: the cursors read run.db */
        free(l->acts);
        free(l->aofs);
        l->acts = NULL;
        l->aofs = NULL;
        l->nacts = 0;
    }
    for (size_t i = 0; l->aofs && i < l->ntracks; i++) l->aofs[i + 1] += l->aofs[i];
    if (rc < 0 || p.over) { /* an error, or too many to hold: the point lookups stay */
        free(l->mem);
        l->mem = NULL;
        l->nmem = 0;
        return rc < 0 ? rc : 0;
    }
    l->by_corr = xmalloc((l->nmem ? l->nmem : 1) * sizeof *l->by_corr);
    for (size_t i = 0; i < l->nmem; i++)
        if (l->mem[i].corr) l->by_corr[l->nby++] = (struct corrix){ l->mem[i].corr, (uint32_t)i };
    corrix_sort(l->by_corr, l->nby);
    l->preloaded = 1;
    return 1;
}

int scan_launch_acts(const struct scan_launch *l, size_t i, int64_t *track, const struct scan_brief **rows,
                     size_t *n)
{
    if (!l->aofs || i >= l->ntracks) return 0;
    *track = l->tracks[i].id;
    *rows = l->acts + l->aofs[i];
    *n = l->aofs[i + 1] - l->aofs[i];
    return 1;
}

int scan_launch_rows(const struct scan_launch *l, const struct scan_slice **rows, size_t *n)
{
    *rows = l->mem;
    *n = l->nmem;
    return l->preloaded;
}

static void track_fill(sqlite3_stmt *st, void *elem)
{
    struct launch_track *t = elem;
    t->id = sqlite3_column_int64(st, 0);
    t->host = sqlite3_column_int64(st, 1);
}

int scan_launch_open(sqlite3 *db, int rank, struct scan_launch **out, struct err *e)
{
    struct scan_launch *l = xcalloc(1, sizeof *l);
    sqlite3_stmt *tr;
    const int64_t args[] = { rank, TB_TRACK_GPU };
    int rc;
    *out = NULL;
    l->db = db;
    l->rank = rank;
    /* corr_ids (or, in a run stored before it, index slice_corr) finds the
     * few slices of an id; the rank's tracks (a handful) are held here, and
     * the earliest call chosen here too: a join and a sort per lookup cost
     * as much as the lookup itself, and the rules look up one launch per
     * GPU op */
    int by_ids = scan_has_table(db, "corr_ids", e);
    if (by_ids < 0) {
        scan_launch_close(l);
        return by_ids;
    }
    if ((rc = rundb_prepare(db,
                            by_ids ? "SELECT " SLICE_COLS " FROM corr_ids c JOIN slice s ON s.id = c.id"
                                     " WHERE c.corr = ?1 AND s.kind IN (?2, ?3)"
                                   : "SELECT " SLICE_COLS " FROM slice s"
                                     " WHERE s.corr = ?1 AND s.corr != 0 AND s.kind IN (?2, ?3)",
                            &l->st, e)) ||
        (rc = scan_prepare_args(db, "SELECT id, coalesce(kind != ?2, 0) FROM track WHERE rank = ?1 ORDER BY id", args, 2, &tr,
                                e)) ||
        (rc = scan_collect(tr, "run database (tracks)", sizeof *l->tracks, track_fill, NULL, (void **)&l->tracks,
                           &l->ntracks, e))) {
        scan_launch_close(l);
        return rc;
    }
    sqlite3_bind_int(l->st, 2, TB_K_RUNTIME);
    sqlite3_bind_int(l->st, 3, TB_K_DRIVER);
    *out = l;
    return 0;
}

/* The rank's track of that id, NULL when it is another rank's. */
static const struct launch_track *launch_track_of(const struct scan_launch *l, int64_t track)
{
    size_t lo = 0, hi = l->ntracks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->tracks[mid].id < track) lo = mid + 1;
        else hi = mid;
    }
    return lo < l->ntracks && l->tracks[lo].id == track ? &l->tracks[lo] : NULL;
}

int scan_launch_on_host(const struct scan_launch *l, int64_t track)
{
    const struct launch_track *t = launch_track_of(l, track);
    return t && t->host;
}

int scan_launch_of(struct scan_launch *l, int64_t corr, struct scan_slice *row, struct err *e)
{
    struct scan_slice r;
    int rc, found = 0;
    if (!corr) return 0;
    if (l->preloaded) {
        for (size_t k = corrix_first(l->by_corr, l->nby, corr); k < l->nby && l->by_corr[k].key == corr; k++) {
            const struct scan_slice *m = &l->mem[l->by_corr[k].idx];
            if (!found || launch_before(m, row)) *row = *m;
            found = 1;
        }
        return found;
    }
    sqlite3_reset(l->st);
    sqlite3_bind_int64(l->st, 1, corr);
    while ((rc = scan_step(l->st, e, "run database (launch calls)")) == 1) {
        slice_row(l->st, &r);
        if (!launch_track_of(l, r.track)) continue;
        if (!found || launch_before(&r, row)) *row = r;
        found = 1;
    }
    sqlite3_reset(l->st);
    return rc < 0 ? rc : found;
}

int scan_has_table(sqlite3 *db, const char *name, struct err *e)
{
    sqlite3_stmt *st;
    /* every schema: a connection aside has run.db attached beside its
     * scratch, where sqlite_master is the scratch's */
    int rc = rundb_prepare(db, "SELECT EXISTS(SELECT 1 FROM pragma_table_list WHERE type = 'table' AND name = ?)", &st,
                           e);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    rc = scan_step(st, e, "run database (schema)");
    if (rc == 1) rc = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    return rc;
}

int scan_prepare_args(sqlite3 *db, const char *sql, const int64_t *args, size_t n, sqlite3_stmt **st, struct err *e)
{
    int rc = rundb_prepare(db, sql, st, e);
    for (size_t i = 0; rc == 0 && i < n; i++) sqlite3_bind_int64(*st, (int)i + 1, args[i]);
    return rc;
}

int scan_prepare_rank(sqlite3 *db, const char *sql, int rank, sqlite3_stmt **st, struct err *e)
{
    const int64_t arg = rank;
    return scan_prepare_args(db, sql, &arg, 1, st, e);
}

int scan_row_nums(sqlite3_stmt *st, const char *what, double *v, int n, struct err *e)
{
    int rc = scan_step(st, e, what);
    for (int i = 0; i < n; i++) v[i] = rc == 1 ? sqlite3_column_double(st, i) : 0;
    sqlite3_finalize(st);
    return rc;
}

int scan_collect(sqlite3_stmt *st, const char *what, size_t sz, void (*fill)(sqlite3_stmt *st, void *elem),
                 void (*drop)(void *elem), void **out, size_t *n, struct err *e)
{
    char *v = NULL;
    size_t cap = 0, k = 0;
    int rc;
    while ((rc = scan_step(st, e, what)) == 1) {
        if (k == cap) v = xrealloc(v, (cap = cap ? cap * 2 : 8) * sz);
        memset(v + k * sz, 0, sz);
        fill(st, v + k++ * sz);
    }
    sqlite3_finalize(st);
    if (rc < 0) {
        for (size_t i = 0; drop && i < k; i++) drop(v + i * sz);
        free(v);
        v = NULL, k = 0;
    }
    *out = v;
    *n = k;
    return rc < 0 ? rc : 0;
}

int scan_slices_count(sqlite3 *db, int rank, enum scan_tracks sel, int64_t *n, struct err *e)
{
    sqlite3_stmt *st;
    int64_t args[3];
    track_sel_args(rank, sel, args);
    int rc = scan_prepare_args(db, "SELECT coalesce(sum(nslices), 0) FROM track WHERE " TRACK_SEL, args, 3, &st, e);
    if (rc) return rc;
    rc = scan_step(st, e, "run database (tracks)");
    *n = rc == 1 ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return rc < 0 ? rc : 0;
}

int scan_track_range(sqlite3 *db, int64_t track, int64_t *first, int64_t *last, struct err *e)
{
    sqlite3_stmt *st;
    int rc = scan_prepare_args(db, "SELECT first_slice, last_slice FROM track WHERE id = ?1 AND nslices > 0", &track,
                               1, &st, e);
    if (rc) return rc;
    if ((rc = scan_step(st, e, "run database (track)")) == 1) {
        *first = sqlite3_column_int64(st, 0);
        *last = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return rc;
}

static void ids_fill(sqlite3_stmt *st, void *elem)
{
    struct scan_ids *r = elem;
    r->first = sqlite3_column_int64(st, 0);
    r->last = sqlite3_column_int64(st, 1);
}

int scan_device_streams(sqlite3 *db, int rank, int device, struct scan_ids **out, size_t *n, struct err *e)
{
    sqlite3_stmt *st;
    const int64_t args[] = { rank, device, TB_TRACK_GPU };
    *out = NULL;
    *n = 0;
    int rc = scan_prepare_args(db,
                               "SELECT first_slice, last_slice FROM track WHERE rank = ?1 AND kind = ?3 AND nslices > 0"
                               " AND (device IS NULL OR device = ?2) ORDER BY id",
                               args, 3, &st, e);
    return rc ? rc : scan_collect(st, "run database (GPU streams)", sizeof **out, ids_fill, NULL, (void **)out, n, e);
}

struct scan_range {
    sqlite3_stmt *st;
};

int scan_range_open(sqlite3 *db, unsigned kinds, struct scan_range **out, struct err *e)
{
    struct scan_range *c = xcalloc(1, sizeof *c);
    const int64_t set = kinds & SCAN_KINDS_ALL;
    /* track and parent are not read (0): the sweeps over millions of rows
     * that use it do not need them */
    int rc = scan_prepare_args(db,
                               "SELECT s.id, 0, s.ts, s.dur, 0, s.name, s.kind, s.corr FROM slice s"
                               " WHERE id BETWEEN ?2 AND ?3 AND (?1 >> kind) & 1 ORDER BY id",
                               &set, 1, &c->st, e);
    if (rc) {
        free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

void scan_range_set(struct scan_range *c, int64_t lo, int64_t hi)
{
    sqlite3_reset(c->st);
    sqlite3_bind_int64(c->st, 2, lo);
    sqlite3_bind_int64(c->st, 3, hi);
}

int scan_range_next(struct scan_range *c, struct scan_slice *row, struct err *e)
{
    int rc = scan_step(c->st, e, "run database (slice range)");
    if (rc == 1) { /* the statement's track and parent are constant 0: two column calls a row fewer */
        row->id = sqlite3_column_int64(c->st, 0);
        row->track = row->parent = 0;
        row->ts = sqlite3_column_int64(c->st, 2);
        row->dur = sqlite3_column_int64(c->st, 3);
        row->name = (uint32_t)sqlite3_column_int64(c->st, 5);
        row->kind = (enum tb_kind)sqlite3_column_int(c->st, 6);
        row->corr = sqlite3_column_int64(c->st, 7);
    }
    return rc;
}

void scan_range_close(struct scan_range *c)
{
    if (c) sqlite3_finalize(c->st);
    free(c);
}

struct scan_names {
    sqlite3_stmt *get;
};

int scan_names_open(sqlite3 *db, struct scan_names **out, struct err *e)
{
    struct scan_names *c = xcalloc(1, sizeof *c);
    int rc = rundb_prepare(db, "SELECT s FROM str WHERE id = ?1", &c->get, e);
    if (rc) {
        free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int scan_name(struct scan_names *c, uint32_t id, const char **s, struct err *e)
{
    sqlite3_reset(c->get);
    sqlite3_bind_int64(c->get, 1, id);
    int rc = scan_step(c->get, e, "run database (names)");
    *s = rc == 1 ? (const char *)sqlite3_column_text(c->get, 0) : NULL;
    return rc;
}

void scan_names_close(struct scan_names *c)
{
    if (c) sqlite3_finalize(c->get);
    free(c);
}

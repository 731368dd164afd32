#include "store/nameids.h"

#include <stdlib.h>
#include <string.h>

#include "base/varint.h"
#include "base/xmalloc.h"
#include "store/rundb.h"
#include "store/scan.h"

/* ---------------------------------------------------------------------- */
/* building                                                               */

struct acc {
    uint8_t *buf; /* the gaps after first */
    uint32_t len, cap;
    int64_t first, last, n; /* n 0: nothing held */
};

struct nameids_build {
    struct acc *v; /* by name */
    size_t nv;
    size_t held; /* bytes of the buffers */
    nameids_emit_fn emit;
    void *ctx;
};

struct nameids_build *nameids_build_new(nameids_emit_fn emit, void *ctx)
{
    struct nameids_build *b = xcalloc(1, sizeof *b);
    b->emit = emit;
    b->ctx = ctx;
    return b;
}

static int hand_on(struct nameids_build *b, uint32_t name, struct acc *a, struct err *e)
{
    const struct nameids_chunk c = { name, a->first, a->last, a->n, a->buf, a->len };
    a->n = 0;
    a->len = 0;
    return b->emit(b->ctx, &c, e);
}

int nameids_build_add(struct nameids_build *b, uint32_t name, int64_t id, struct err *e)
{
    if (name >= b->nv) {
        size_t nv = b->nv ? b->nv : 256;
        while (nv <= name) nv *= 2;
        b->v = xrealloc(b->v, nv * sizeof *b->v);
        memset(b->v + b->nv, 0, (nv - b->nv) * sizeof *b->v);
        b->nv = nv;
    }
    struct acc *a = &b->v[name];
    if (a->n && a->len + VARINT_MAX > NAMEIDS_CHUNK) {
        int rc = hand_on(b, name, a, e);
        if (rc) return rc;
    }
    if (!a->n) {
        a->first = a->last = id;
        a->n = 1;
        return 0;
    }
    if (a->cap - a->len < VARINT_MAX) {
        uint32_t cap = a->cap ? a->cap * 2 : 32;
        b->held += cap - a->cap;
        a->buf = xrealloc(a->buf, a->cap = cap);
    }
    a->len += (uint32_t)varint_put(a->buf + a->len, (uint64_t)(id - a->last));
    a->last = id;
    a->n++;
    return b->held > NAMEIDS_HELD_MAX ? nameids_build_flush(b, e) : 0;
}

int nameids_build_flush(struct nameids_build *b, struct err *e)
{
    int rc = 0;
    for (size_t i = 0; i < b->nv && rc == 0; i++) {
        struct acc *a = &b->v[i];
        if (a->n) rc = hand_on(b, (uint32_t)i, a, e);
        free(a->buf);
        a->buf = NULL;
        a->cap = 0;
    }
    b->held = 0;
    return rc;
}

void nameids_build_free(struct nameids_build *b)
{
    if (!b) return;
    for (size_t i = 0; i < b->nv; i++) free(b->v[i].buf);
    free(b->v);
    free(b);
}

/* ---------------------------------------------------------------------- */
/* reading                                                                */

struct nameids {
    sqlite3 *db;
    sqlite3_stmt *chunks; /* name_ids: the chunks of ?1 that may hold ids in [?2, ?3] */
    sqlite3_stmt *ids;    /* before: the ids of ?1 in [?2, ?3] through slice_name */
    sqlite3_stmt *cnt;    /* before: their count */
    int64_t lo, hi;
    /* the chunk being decoded: its next gap at p, left ids to give, cur
     * the last id given (or first, still to give when at_first) */
    const uint8_t *p, *end;
    int64_t cur, last, left;
    int64_t prev_last; /* the last id of the chunk before: chunks may not overlap */
    int at_first, done;
};

int nameids_open(sqlite3 *db, struct nameids **out, struct err *e)
{
    struct nameids *c = xcalloc(1, sizeof *c);
    int rc = scan_has_table(db, "name_ids", e);
    *out = NULL;
    c->db = db;
    if (rc == 1)
        /* from the last chunk starting at or before lo (it may hold lo) to
         * the last starting at or before hi */
        rc = rundb_prepare(db,
                           "SELECT first, last, n, ids FROM name_ids WHERE name = ?1"
                           " AND first >= coalesce((SELECT max(first) FROM name_ids WHERE name = ?1 AND first <= ?2), ?2)"
                           " AND first <= ?3 ORDER BY first",
                           &c->chunks, e);
    else if (rc == 0 &&
             (rc = rundb_prepare(db, "SELECT id FROM slice WHERE name = ?1 AND id BETWEEN ?2 AND ?3 ORDER BY id", &c->ids,
                                 e)) == 0)
        rc = rundb_prepare(db, "SELECT count(*) FROM slice WHERE name = ?1 AND id BETWEEN ?2 AND ?3", &c->cnt, e);
    if (rc < 0) {
        nameids_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

void nameids_close(struct nameids *c)
{
    if (!c) return;
    sqlite3_finalize(c->chunks);
    sqlite3_finalize(c->ids);
    sqlite3_finalize(c->cnt);
    free(c);
}

static void bind3(sqlite3_stmt *st, uint32_t name, int64_t lo, int64_t hi)
{
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, name);
    sqlite3_bind_int64(st, 2, lo);
    sqlite3_bind_int64(st, 3, hi);
}

void nameids_begin(struct nameids *c, uint32_t name, int64_t lo, int64_t hi)
{
    bind3(c->chunks ? c->chunks : c->ids, name, lo, hi);
    c->lo = lo;
    c->hi = hi;
    c->left = 0;
    c->prev_last = INT64_MIN;
    c->done = lo > hi;
}

/* The chunk row of c->chunks as the one being decoded: 0, or damaged. */
static int load_chunk(struct nameids *c, struct err *e)
{
    sqlite3_stmt *st = c->chunks;
    c->cur = sqlite3_column_int64(st, 0);
    c->last = sqlite3_column_int64(st, 1);
    c->left = sqlite3_column_int64(st, 2);
    /* a chunk of one id has no gaps: NULL, which takes no offset */
    c->p = sqlite3_column_blob(st, 3);
    c->end = c->p ? c->p + sqlite3_column_bytes(st, 3) : NULL;
    c->at_first = 1;
    if (c->left < 1 || c->last < c->cur || (c->left == 1) != (c->last == c->cur) || c->cur <= c->prev_last)
        return rundb_damaged(c->db, e, "a chunk of name_ids with inconsistent bounds");
    c->prev_last = c->last;
    return 0;
}

/* The chunk's next id into *id: 0, or damaged. */
static int chunk_next(struct nameids *c, int64_t *id, struct err *e)
{
    uint64_t gap;
    if (c->at_first) {
        c->at_first = 0;
    } else if (!varint_get(&c->p, c->end, &gap) || gap == 0 || gap > (uint64_t)(c->last - c->cur)) {
        return rundb_damaged(c->db, e, "a chunk of name_ids cut short or out of order");
    } else {
        c->cur += (int64_t)gap;
    }
    *id = c->cur;
    if (--c->left == 0 && (c->cur != c->last || c->p != c->end))
        return rundb_damaged(c->db, e, "a chunk of name_ids that does not end at its last id");
    return 0;
}

int nameids_next(struct nameids *c, int64_t *id, struct err *e)
{
    int rc;
    if (!c->chunks) {
        if (c->done) return 0;
        rc = scan_step(c->ids, e, "run database (slices by name)");
        if (rc == 1) *id = sqlite3_column_int64(c->ids, 0);
        else c->done = 1;
        return rc;
    }
    for (;;) {
        if (c->done) return 0;
        if (c->left == 0) {
            if ((rc = scan_step(c->chunks, e, "run database (slices by name)")) != 1 || (rc = load_chunk(c, e)) < 0) {
                c->done = 1;
                return rc;
            }
            if (c->last < c->lo) { /* all before the range */
                c->left = 0;
                continue;
            }
        }
        if ((rc = chunk_next(c, id, e)) < 0) {
            c->done = 1;
            return rc;
        }
        if (*id > c->hi) {
            c->done = 1;
            return 0;
        }
        if (*id >= c->lo) return 1;
    }
}

int nameids_count(struct nameids *c, uint32_t name, int64_t lo, int64_t hi, int64_t *n, struct err *e)
{
    int rc;
    *n = 0;
    if (lo > hi) return 0;
    if (!c->chunks) {
        bind3(c->cnt, name, lo, hi);
        rc = scan_step(c->cnt, e, "run database (slices by name)");
        if (rc == 1) *n = sqlite3_column_int64(c->cnt, 0);
        sqlite3_reset(c->cnt);
        return rc < 0 ? rc : 0;
    }
    nameids_begin(c, name, lo, hi);
    while ((rc = scan_step(c->chunks, e, "run database (slices by name)")) == 1) {
        if ((rc = load_chunk(c, e)) < 0) break;
        if (c->last < lo) continue; /* the chunk before lo, all before it */
        if (c->cur >= lo && c->last <= hi) { /* whole: no need to decode */
            *n += c->left;
            continue;
        }
        /* decoded as far as a walk would go */
        int64_t id = lo;
        while (c->left && id <= hi && (rc = chunk_next(c, &id, e)) == 0)
            if (id >= lo && id <= hi) ++*n;
        if (rc < 0) break;
    }
    sqlite3_reset(c->chunks);
    c->left = 0;
    c->done = 1;
    return rc < 0 ? rc : 0;
}

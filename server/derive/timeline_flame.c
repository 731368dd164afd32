/* timeline_flame.c — the flame graph of a window by time containment (see
 * include/derive/timeline_flame.h). */
#define LOG_MODULE "timeline"
#include "derive/timeline_flame.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"
#include "derive/timeline_query.h"
#include "store/rundb.h"

/* How many open slices a track's walk keeps; deeper ones (pathological
 * overlaps) are closed early. */
#define OPEN_MAX 4096
/* Ancestors looked up for the slices open at the window's start. */
#define CHAIN_MAX 256

void timeline_flame_init(struct tflame *f)
{
    memset(f, 0, sizeof *f);
    hmap_init(&f->index, sizeof(int32_t), 1024);
    hmap_init(&f->lanes, sizeof(struct tflame_group), 16);
    hmap_init(&f->cats, sizeof(struct tflame_group), 16);
    hmap_init(&f->steps, 1, 16);
}

void timeline_flame_step_name(struct tflame *f, uint32_t name)
{
    hmap_put(&f->steps, hmap_hash_u64(name), &name, sizeof name, NULL);
}

void timeline_flame_free(struct tflame *f)
{
    free(f->nodes);
    hmap_free(&f->index, NULL);
    hmap_free(&f->lanes, NULL);
    hmap_free(&f->cats, NULL);
    hmap_free(&f->steps, NULL);
    memset(f, 0, sizeof *f);
}

static struct tflame_group *group(struct hmap *m, int64_t key)
{
    int fresh;
    struct tflame_group *g = hmap_put(m, hmap_hash_u64((uint64_t)key), &key, sizeof key, &fresh);
    if (fresh) g->key = key;
    return g;
}

/* The node of `name` under `parent`, made when new; −1 once full. */
static int32_t node_of(struct tflame *f, int32_t parent, uint32_t name)
{
    struct {
        int32_t parent;
        uint32_t name;
    } key = { parent, name };
    int fresh;
    int32_t *slot = hmap_put(&f->index, hmap_hash_bytes(&key, sizeof key), &key, sizeof key, &fresh);
    if (!fresh) return *slot;
    if (f->n >= TFLAME_NODES) {
        hmap_del(&f->index, hmap_hash_bytes(&key, sizeof key), &key, sizeof key);
        return -1;
    }
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 256;
        f->nodes = xrealloc(f->nodes, f->cap * sizeof *f->nodes);
    }
    f->nodes[f->n] = (struct tflame_node){ .parent = parent, .name = name };
    *slot = (int32_t)f->n;
    return (int32_t)f->n++;
}

/* Earlier start first; at one start the longer one first (it contains the other). */
static int slice_cmp(const void *a, const void *b)
{
    const struct tflame_slice *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name;
}

/* An open slice of the walk: where it ends, its node, its clipped time and
 * that of the slices it contains, its category. */
struct open {
    int64_t end, clip, inner;
    int32_t node;
    uint32_t cat;
};

/* Closes an open slice: its self time to its node, lane and category. */
static void close_open(struct tflame *f, struct tflame_group *lane, const struct open *o)
{
    int64_t self = o->clip - o->inner;
    if (self < 0) self = 0;
    f->nodes[o->node].self += self;
    lane->self += self;
    group(&f->cats, o->cat)->self += self;
}

void timeline_flame_add(struct tflame *f, int64_t track, struct tflame_slice *s, size_t n, int64_t start, int64_t end,
                        int contained)
{
    struct open *stack = xmalloc(OPEN_MAX * sizeof *stack);
    size_t sp = 0;

    if (n) xqsort(s, n, sizeof *s, slice_cmp);
    for (size_t i = 0; i < n; i++) {
        int64_t ts = s[i].ts, te = s[i].ts + s[i].dur;
        int64_t lo = ts > start ? ts : start, hi = te < end ? te : end;
        if (hi < lo || (hi == lo && s[i].dur > 0) || (contained && (ts < start || te > end))) continue;
        struct tflame_group *lane = group(&f->lanes, track);
        /* close what ended before this one starts */
        while (sp > 0 && stack[sp - 1].end <= ts && !(s[i].dur == 0 && stack[sp - 1].end == ts)) close_open(f, lane, &stack[--sp]);
        if (sp == OPEN_MAX) close_open(f, lane, &stack[--sp]);
        /* the innermost open slice containing this one whole; partial overlaps are passed over */
        size_t k = sp;
        while (k > 0 && stack[k - 1].end < te) k--;
        int32_t parent = k > 0 ? stack[k - 1].node : -1;
        uint32_t name = s[i].name;
        if (f->steps.n && hmap_get(&f->steps, hmap_hash_u64(name), &name, sizeof name)) name = TFLAME_STEP;
        int32_t node = node_of(f, parent, name);
        if (node < 0) {
            f->dropped++;
            continue;
        }
        int64_t clip = hi - lo;
        f->nodes[node].count++;
        f->nodes[node].total += clip;
        if (k > 0) stack[k - 1].inner += clip;
        lane = group(&f->lanes, track);
        lane->count++;
        lane->total += clip;
        struct tflame_group *cat = group(&f->cats, s[i].cat);
        cat->count++;
        cat->total += clip;
        stack[sp++] = (struct open){ .end = te, .clip = clip, .inner = 0, .node = node, .cat = s[i].cat };
    }
    if (sp) {
        struct tflame_group *lane = group(&f->lanes, track);
        while (sp > 0) close_open(f, lane, &stack[--sp]);
    }
    free(stack);
}

/* Reads the slice `id` of `track`: 1 = found, 0 = none (or another track's). */
static int read_one(sqlite3 *db, sqlite3_stmt *one, int64_t id, int64_t track, struct tflame_slice *out, int64_t *parent,
                    struct err *e)
{
    sqlite3_reset(one);
    sqlite3_bind_int64(one, 1, id);
    int rc = sqlite3_step(one);
    if (rc == SQLITE_DONE) return 0;
    if (rc != SQLITE_ROW) return rundb_db_error(db, e, "run database (flame)");
    if (sqlite3_column_int64(one, 0) != track) return 0;
    *out = (struct tflame_slice){ sqlite3_column_int64(one, 1), sqlite3_column_int64(one, 2),
                                  (uint32_t)sqlite3_column_int64(one, 3), (uint32_t)sqlite3_column_int64(one, 4) };
    *parent = sqlite3_column_int64(one, 5);
    return 1;
}

int timeline_flame_track(sqlite3 *db, struct tflame *f, int64_t track, int64_t start, int64_t end, int contained,
                         int64_t max_scan, struct err *e)
{
    sqlite3_stmt *one = NULL, *range = NULL;
    struct tflame_slice *s = NULL;
    size_t n = 0, cap = 0;
    int64_t lo, hi;
    int rc, status = -1;

    if (timeline_slice_range(db, track, start, end, &lo, &hi, e) < 0) return e->code;
    if (!f->steps_loaded && !contained) {
        if (rundb_prepare(db, "SELECT id FROM str WHERE s LIKE 'ProfilerStep#%'", &one, e) < 0) goto out;
        while ((rc = sqlite3_step(one)) == SQLITE_ROW) timeline_flame_step_name(f, (uint32_t)sqlite3_column_int64(one, 0));
        sqlite3_finalize(one);
        one = NULL;
        if (rc != SQLITE_DONE) {
            rundb_db_error(db, e, "run database (flame steps)");
            goto out;
        }
        f->steps_loaded = 1;
    }
    if (rundb_prepare(db, "SELECT track, ts, dur, coalesce(name, 0), coalesce(cat, 0), coalesce(parent, 0) FROM slice WHERE id = ?",
                      &one, e) < 0 ||
        rundb_prepare(db, "SELECT ts, dur, coalesce(name, 0), coalesce(cat, 0) FROM slice WHERE id >= ? AND id < ?", &range,
                      e) < 0)
        goto out;
    if (!contained) {
        /* the slices open at start: the last one before it and its parents */
        int64_t id = lo - 1, parent = 0;
        for (int k = 0; id > 0 && k < CHAIN_MAX; k++, id = parent) {
            struct tflame_slice x;
            if ((rc = read_one(db, one, id, track, &x, &parent, e)) < 0) goto out;
            if (!rc) break;
            if (x.ts + x.dur <= start) continue;
            if (n == cap) s = xrealloc(s, (cap = cap ? cap * 2 : 64) * sizeof *s);
            s[n++] = x;
        }
    }
    sqlite3_bind_int64(range, 1, lo);
    sqlite3_bind_int64(range, 2, hi);
    while ((rc = sqlite3_step(range)) == SQLITE_ROW) {
        if (++f->scanned > max_scan) {
            err_set(e, ERR_TOO_LARGE, "the window holds more than %lld slices; narrow it", (long long)max_scan);
            goto out;
        }
        if (n == cap) s = xrealloc(s, (cap = cap ? cap * 2 : 1024) * sizeof *s);
        s[n++] = (struct tflame_slice){ sqlite3_column_int64(range, 0), sqlite3_column_int64(range, 1),
                                        (uint32_t)sqlite3_column_int64(range, 2), (uint32_t)sqlite3_column_int64(range, 3) };
    }
    if (rc != SQLITE_DONE) {
        rundb_db_error(db, e, "run database (flame)");
        goto out;
    }
    timeline_flame_add(f, track, s, n, start, end, contained);
    status = 0;
out:
    free(s);
    sqlite3_finalize(one);
    sqlite3_finalize(range);
    return status == 0 ? 0 : e->code;
}

static int group_cmp(const void *a, const void *b)
{
    const struct tflame_group *x = a, *y = b;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

struct tflame_group *timeline_flame_groups(const struct hmap *m, size_t *n)
{
    struct tflame_group *out = xmalloc((m->n ? m->n : 1) * sizeof *out);
    const struct tflame_group *g;
    size_t pos = 0;
    *n = 0;
    while ((g = hmap_next(m, &pos, NULL, NULL))) out[(*n)++] = *g;
    if (*n) xqsort(out, *n, sizeof *out, group_cmp);
    return out;
}

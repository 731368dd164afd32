#include "derive/slice_feed.h"

#include <stdlib.h>
#include <string.h>

#include "base/hmap.h"
#include "base/xmalloc.h"
#include "derive/summary_walk.h"
#include "store/model.h"

/* A track's rows as the stream gave them; n < 0 when the track came twice
 * (then it is not served). */
struct span {
    int64_t first, n;
};

struct slice_feed {
    int64_t max_rows;
    int64_t first_id; /* the first row's id; 0 before the first slice */
    struct slice_feed_row *rows;
    int64_t nrows, cap;
    int dropped;
    struct span *tracks; /* by track id (1-based), 0..ntracks-1 */
    int64_t ntracks;
    int64_t cur_track; /* the track of the last slice, 0 none */
    struct hmap shapes; /* shape text -> uint32 id */
    char **texts;       /* [0] unused */
    uint32_t ntexts, textcap;
};

struct slice_feed *slice_feed_new(int64_t max_rows)
{
    struct slice_feed *f = xcalloc(1, sizeof *f);
    f->max_rows = max_rows;
    hmap_init(&f->shapes, sizeof(uint32_t), 256);
    f->texts = xcalloc(f->textcap = 64, sizeof *f->texts);
    f->ntexts = 1;
    return f;
}

/* What is held is let go: the trace is too large to hold, or it came in
 * an order the feed cannot serve. */
static void drop(struct slice_feed *f)
{
    f->dropped = 1;
    free(f->rows);
    f->rows = NULL;
    f->nrows = f->cap = 0;
    free(f->tracks);
    f->tracks = NULL;
    f->ntracks = 0;
    for (uint32_t i = 1; i < f->ntexts; i++) free(f->texts[i]);
    f->ntexts = 1;
    hmap_free(&f->shapes, NULL);
}

static struct span *track_span(struct slice_feed *f, int64_t track)
{
    if (track < 1 || track > (int64_t)UINT32_MAX) return NULL;
    if (track > f->ntracks) {
        int64_t n = f->ntracks ? f->ntracks : 16;
        while (n < track) n *= 2;
        f->tracks = xrealloc(f->tracks, sizeof *f->tracks * (size_t)n);
        memset(f->tracks + f->ntracks, 0, sizeof *f->tracks * (size_t)(n - f->ntracks));
        f->ntracks = n;
    }
    return &f->tracks[track - 1];
}

static uint32_t intern(struct slice_feed *f, const char *s)
{
    size_t n = strlen(s);
    int fresh;
    uint32_t *id = hmap_put(&f->shapes, hmap_hash_bytes(s, n), s, n, &fresh);
    if (!fresh) return *id;
    if (f->ntexts == f->textcap) f->texts = xrealloc(f->texts, sizeof *f->texts * (f->textcap *= 2));
    f->texts[f->ntexts] = xstrdup(s);
    return *id = f->ntexts++;
}

static void on_rank(void *ctx, int has_span, int64_t t0, int64_t t1)
{
    (void)ctx, (void)has_span, (void)t0, (void)t1;
}

static void on_slice(void *ctx, const struct rundb_slice_out *s)
{
    struct slice_feed *f = ctx;
    if (f->dropped) return;
    if (!f->first_id) f->first_id = s->id;
    /* ids are the rows' places: a gap (or ids beyond 32 bits, which parent
     * is kept in) would misplace them */
    if (s->id != f->first_id + f->nrows || f->nrows >= f->max_rows || s->id > (int64_t)UINT32_MAX) {
        drop(f);
        return;
    }
    if (s->track != f->cur_track) {
        struct span *sp = track_span(f, s->track);
        if (!sp) {
            drop(f);
            return;
        }
        if (sp->n) sp->n = -1;
        else sp->first = s->id;
        f->cur_track = s->track;
    }
    struct span *sp = &f->tracks[s->track - 1];
    if (sp->n >= 0) sp->n++;
    if (f->nrows == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 4096;
        if (f->cap > f->max_rows) f->cap = f->max_rows;
        f->rows = xrealloc(f->rows, sizeof *f->rows * (size_t)f->cap);
    }
    struct slice_feed_row *r = &f->rows[f->nrows++];
    r->ts = s->ts;
    r->dur = s->dur;
    r->corr = s->corr;
    r->parent = (uint32_t)s->parent;
    r->name = s->name;
    r->kind = (uint8_t)s->kind;
    r->shape = 0;
    /* the walk wants the shapes of operators only; which cpu_op is one it
     * tells by name, later: every cpu_op's is pulled */
    if (s->kind == TB_K_CPU_OP && s->args_len) {
        char *shape = summary_walk_shapes(s->args, s->args_len);
        if (shape) {
            r->shape = intern(f, shape);
            free(shape);
        }
    }
}

static void on_track_end(void *ctx, int64_t track, int present, int max_depth, int64_t nslices)
{
    struct slice_feed *f = ctx;
    (void)track, (void)present, (void)max_depth, (void)nslices;
    f->cur_track = 0; /* the next slice starts a track, even this one again */
}

void slice_feed_sink(struct slice_feed *f, struct rundb_slice_sink *out)
{
    *out = (struct rundb_slice_sink){ on_rank, on_slice, on_track_end, f };
}

const struct slice_feed_row *slice_feed_track(const struct slice_feed *f, int64_t track, int64_t first,
                                                  int64_t last)
{
    if (!f || f->dropped || track < 1 || track > f->ntracks || first < f->first_id || last < first ||
        last >= f->first_id + f->nrows)
        return NULL;
    const struct span *sp = &f->tracks[track - 1];
    if (sp->n <= 0 || sp->first != first || sp->n != last - first + 1) return NULL;
    return &f->rows[first - f->first_id];
}

static const void *held_track(const void *arg, int64_t track, int64_t first, int64_t last)
{
    return slice_feed_track(arg, track, first, last);
}

static void held_row(const void *rows, int64_t i, struct scan_slice *out)
{
    const struct slice_feed_row *r = (const struct slice_feed_row *)rows + i;
    out->ts = r->ts;
    out->dur = r->dur;
    out->parent = r->parent;
    out->corr = r->corr;
    out->name = r->name;
    out->kind = (enum tb_kind)r->kind;
}

void slice_feed_held(const struct slice_feed *f, struct scan_held *out)
{
    *out = (struct scan_held){ held_track, held_row, f };
}

const char *slice_feed_shape(const struct slice_feed *f, uint32_t shape)
{
    return shape && shape < f->ntexts ? f->texts[shape] : NULL;
}

int64_t slice_feed_rows(const struct slice_feed *f)
{
    return f && !f->dropped ? f->nrows : 0;
}

void slice_feed_free(struct slice_feed *f)
{
    if (!f) return;
    drop(f);
    free(f->texts);
    free(f);
}

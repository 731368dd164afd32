#include "store/sorter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"

struct rec {
    struct sorter_key k;
    uint32_t n;
    uint32_t pad;
    /* payload follows, padded to 8 bytes */
};

#define REC_SIZE(n) ((sizeof(struct rec) + (n) + 7) & ~(size_t)7)
#define RUN_BUF (1u << 20)
#define RUN_BUF_MIN (64u << 10)

struct run {
    uint64_t off, end;   /* file range of this run */
    char *buf;
    size_t len, pos;     /* buffered bytes of the run */
    struct rec *cur;     /* current record (points into buf or big) */
    char *big;           /* a record larger than the buffer */
};

struct sorter {
    char *arena;
    size_t cap, used;
    struct rec **idx;
    size_t nidx, idx_cap;
    char tmp_dir[1024];
    int fd;
    uint64_t file_end;
    struct run *runs;
    int nruns;
    int *heap, nheap;
    size_t walk;         /* in-memory iteration position */
    size_t budget;       /* as asked: the merge's read buffers share it */
    size_t run_buf;      /* read buffer of each run while merging */
    int finished;
};

struct sorter *sorter_new(size_t budget, const char *tmp_dir)
{
    struct sorter *s = xcalloc(1, sizeof *s);
    if (budget < (1u << 20)) budget = 1u << 20;
    s->cap = budget;
    s->budget = budget;
    s->arena = xmalloc(s->cap);
    s->fd = -1;
    snprintf(s->tmp_dir, sizeof s->tmp_dir, "%s", tmp_dir ? tmp_dir : "/tmp");
    return s;
}

static int key_cmp(const struct sorter_key *a, const struct sorter_key *b)
{
    if (a->track != b->track) return a->track < b->track ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->dur != b->dur) return a->dur > b->dur ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return 0;
}

static int rec_cmp(const void *x, const void *y)
{
    return key_cmp(&(*(struct rec *const *)x)->k, &(*(struct rec *const *)y)->k);
}

static int write_all(int fd, const void *p, size_t n, struct err *e)
{
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0)
            return err_set(e, errno == ENOSPC ? ERR_NOSPACE : ERR_IO, "cannot write sort run: %s", strerror(errno));
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int spill(struct sorter *s, struct err *e)
{
    if (s->fd < 0) {
        char path[1100];
        snprintf(path, sizeof path, "%s/sortXXXXXX", s->tmp_dir);
        s->fd = mkstemp(path);
        if (s->fd < 0) return err_set(e, ERR_IO, "cannot create a sort file in %s: %s", s->tmp_dir, strerror(errno));
        unlink(path); /* the file lives only as long as the fd */
    }
    xqsort(s->idx, s->nidx, sizeof *s->idx, rec_cmp);
    struct run r = { 0 };
    r.off = s->file_end;
    /* write records in order through a staging buffer */
    char *stage = xmalloc(RUN_BUF);
    size_t sl = 0;
    for (size_t i = 0; i < s->nidx; i++) {
        size_t sz = REC_SIZE(s->idx[i]->n);
        if (sl + sz > RUN_BUF) {
            if (write_all(s->fd, stage, sl, e) != 0) {
                free(stage);
                return e->code;
            }
            sl = 0;
        }
        if (sz > RUN_BUF) {
            if (write_all(s->fd, s->idx[i], sz, e) != 0) {
                free(stage);
                return e->code;
            }
        } else {
            memcpy(stage + sl, s->idx[i], sz);
            sl += sz;
        }
        s->file_end += sz;
    }
    if (sl && write_all(s->fd, stage, sl, e) != 0) {
        free(stage);
        return e->code;
    }
    free(stage);
    r.end = s->file_end;
    s->runs = xrealloc(s->runs, sizeof *s->runs * (size_t)(s->nruns + 1));
    s->runs[s->nruns++] = r;
    s->used = 0;
    s->nidx = 0;
    return 0;
}

int sorter_add(struct sorter *s, const struct sorter_key *k, const void *payload, uint32_t n, struct err *e)
{
    size_t sz = REC_SIZE(n);
    if (s->used + sz > s->cap) {
        if (s->nidx && spill(s, e) != 0) return e->code;
        if (sz > s->cap) {
            /* one record larger than the whole budget: grow just for it */
            s->cap = sz;
            s->arena = xrealloc(s->arena, s->cap);
        }
    }
    struct rec *r = (struct rec *)(s->arena + s->used);
    r->k = *k;
    r->n = n;
    r->pad = 0;
    if (n) memcpy(r + 1, payload, n);
    s->used += sz;
    if (s->nidx == s->idx_cap) {
        s->idx_cap = s->idx_cap ? s->idx_cap * 2 : 4096;
        s->idx = xrealloc(s->idx, sizeof *s->idx * s->idx_cap);
    }
    s->idx[s->nidx++] = r;
    return 0;
}

/* Loads the next record of run r into r->cur (NULL at its end). */
static int run_advance(struct sorter *s, struct run *r, struct err *e)
{
    free(r->big);
    r->big = NULL;
    r->cur = NULL;
    if (r->pos + sizeof(struct rec) > r->len || r->pos + REC_SIZE(((struct rec *)(r->buf + r->pos))->n) > r->len) {
        /* refill: keep the partial bytes at the front */
        size_t keep = r->len - r->pos;
        memmove(r->buf, r->buf + r->pos, keep);
        r->len = keep;
        r->pos = 0;
        while (r->len < s->run_buf && r->off < r->end) {
            size_t want = s->run_buf - r->len;
            if (want > r->end - r->off) want = (size_t)(r->end - r->off);
            ssize_t got = pread(s->fd, r->buf + r->len, want, (off_t)r->off);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) return err_set(e, ERR_IO, "cannot read sort run: %s", got < 0 ? strerror(errno) : "short");
            r->len += (size_t)got;
            r->off += (uint64_t)got;
        }
    }
    if (r->pos + sizeof(struct rec) > r->len) return 0; /* run done */
    struct rec *h = (struct rec *)(r->buf + r->pos);
    size_t sz = REC_SIZE(h->n);
    if (r->pos + sz <= r->len) {
        r->cur = h;
        r->pos += sz;
        return 0;
    }
    /* a record bigger than the buffer: read it whole */
    r->big = xmalloc(sz);
    size_t have = r->len - r->pos;
    memcpy(r->big, h, have);
    while (have < sz) {
        ssize_t got = pread(s->fd, r->big + have, sz - have, (off_t)r->off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return err_set(e, ERR_IO, "cannot read sort run: %s", got < 0 ? strerror(errno) : "short");
        have += (size_t)got;
        r->off += (uint64_t)got;
    }
    r->pos = r->len = 0;
    r->cur = (struct rec *)r->big;
    return 0;
}

static int heap_less(struct sorter *s, int a, int b)
{
    return key_cmp(&s->runs[a].cur->k, &s->runs[b].cur->k) < 0;
}

static void heap_down(struct sorter *s, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && heap_less(s, s->heap[l], s->heap[m])) m = l;
        if (r < s->nheap && heap_less(s, s->heap[r], s->heap[m])) m = r;
        if (m == i) return;
        int t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

int sorter_finish(struct sorter *s, struct err *e)
{
    s->finished = 1;
    if (s->nruns == 0) {
        /* idx is NULL when nothing was added: qsort's pointer must not be */
        if (s->nidx) xqsort(s->idx, s->nidx, sizeof *s->idx, rec_cmp);
        s->walk = 0;
        return 0;
    }
    if (s->nidx && spill(s, e) != 0) return e->code;
    /* the arena is no longer needed: give its memory back before merging */
    free(s->arena);
    s->arena = NULL;
    free(s->idx);
    s->idx = NULL;
    /* The runs' read buffers share the budget (1 MiB each at most, 64 KiB at
     * least): a trace ten times larger has ten times the runs, and memory
     * must not grow with it. */
    s->run_buf = s->budget / (size_t)s->nruns;
    if (s->run_buf > RUN_BUF) s->run_buf = RUN_BUF;
    if (s->run_buf < RUN_BUF_MIN) s->run_buf = RUN_BUF_MIN;
    s->heap = xmalloc(sizeof *s->heap * (size_t)s->nruns);
    for (int i = 0; i < s->nruns; i++) {
        struct run *r = &s->runs[i];
        r->buf = xmalloc(s->run_buf);
        if (run_advance(s, r, e) != 0) return e->code;
        if (r->cur) s->heap[s->nheap++] = i;
    }
    for (int i = s->nheap / 2 - 1; i >= 0; i--) heap_down(s, i);
    return 0;
}

int sorter_next(struct sorter *s, struct sorter_key *k, const void **payload, uint32_t *n, struct err *e)
{
    if (s->nruns == 0) {
        if (s->walk >= s->nidx) return 0;
        struct rec *r = s->idx[s->walk++];
        *k = r->k;
        *payload = r + 1;
        *n = r->n;
        return 1;
    }
    /* The record handed out last time stays valid until now: advance its run. */
    if (s->nheap && s->heap[0] < 0) {
        int ri = ~s->heap[0];
        s->heap[0] = ri;
        if (run_advance(s, &s->runs[ri], e) != 0) return e->code;
        if (!s->runs[ri].cur) s->heap[0] = s->heap[--s->nheap];
        if (s->nheap) heap_down(s, 0);
    }
    if (s->nheap == 0) return 0;
    struct run *r = &s->runs[s->heap[0]];
    *k = r->cur->k;
    *payload = r->cur + 1;
    *n = r->cur->n;
    s->heap[0] = ~s->heap[0]; /* mark: advance on the next call */
    return 1;
}

size_t sorter_run_buffer(const struct sorter *s)
{
    return s->run_buf;
}

int sorter_spilled_runs(const struct sorter *s)
{
    return s->nruns;
}

void sorter_free(struct sorter *s)
{
    if (!s) return;
    for (int i = 0; i < s->nruns; i++) {
        free(s->runs[i].buf);
        free(s->runs[i].big);
    }
    free(s->runs);
    free(s->heap);
    free(s->arena);
    free(s->idx);
    if (s->fd >= 0) close(s->fd);
    free(s);
}

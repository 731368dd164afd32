#define LOG_MODULE "rundb"
#include "store/rundb_spool.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "base/xmalloc.h"
#include "store/rundb_drain.h"
#include "store/sorter.h"

int rundb_spool_new(const char *tmp_dir, int rank, struct rundb_writer **out, struct err *e)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/spoolXXXXXX", tmp_dir);
    int fd = mkstemp(path);
    if (fd < 0) {
        int en = errno;
        return err_set(e, fsutil_errno_code(en), "cannot create a spool file in %s: %s", tmp_dir, strerror(en));
    }
    unlink(path); /* the file lives only as long as the fd */
    struct rundb_writer *w = xcalloc(1, sizeof *w);
    w->spool_fd = fd;
    pthread_mutex_init(&w->bg_mu, NULL);
    snprintf(w->tmp_dir, sizeof w->tmp_dir, "%s", tmp_dir);
    w->cur_buf = xmalloc(BG_CHUNK);
    w->cur_cap = BG_CHUNK;
    w->rank = rank;
    w->in_rank = 1;
    w->t0 = INT64_MAX;
    w->t1 = INT64_MIN;
    *out = w;
    return 0;
}

static void spool_fail(struct rundb_writer *w, const struct err *why)
{
    pthread_mutex_lock(&w->bg_mu);
    if (!w->bg_err.code) {
        w->bg_err = *why;
        w->bg_err_seen = 1;
    }
    pthread_mutex_unlock(&w->bg_mu);
}

void rundb_spool_put(struct rundb_writer *w)
{
    struct err e;
    /* a chunk on disk: its length, then its ops as the writer thread takes them */
    uint64_t len = w->cur_len;
    if (!w->bg_err_seen && (fsutil_write_all(w->spool_fd, &len, sizeof len, "spool write", &e) != 0 ||
                            fsutil_write_all(w->spool_fd, w->cur_buf, w->cur_len, "spool write", &e) != 0))
        spool_fail(w, &e);
    w->cur_len = 0;
    if (w->cur_cap != BG_CHUNK) { /* a one-op buffer made by rundb_writer_emit */
        free(w->cur_buf);
        w->cur_buf = xmalloc(BG_CHUNK);
        w->cur_cap = BG_CHUNK;
    }
}

void rundb_spool_cancel(struct rundb_writer *sp)
{
    struct err e;
    err_set(&e, ERR_INTERNAL, "cancelled: another trace file of the run failed");
    spool_fail(sp, &e);
}

/* Moves the spool's per-rank state (everything but the ops) into w. */
static void take_state(struct rundb_writer *w, struct rundb_writer *sp)
{
    if (w->tracks_cap < w->ntracks + sp->ntracks) {
        w->tracks_cap = w->ntracks + sp->ntracks + 64;
        w->tracks = xrealloc(w->tracks, sizeof *w->tracks * w->tracks_cap);
    }
    for (size_t i = 0; i < sp->ntracks; i++) {
        struct track *t = &w->tracks[w->ntracks++];
        *t = sp->tracks[i];
        t->id = (uint32_t)w->ntracks;
        t->rank = w->rank;
    }
    sp->ntracks = 0;
    w->pnames = sp->pnames;
    w->npnames = sp->npnames;
    sp->pnames = NULL;
    sp->npnames = 0;
    if (sp->nnotes) {
        w->notes = xrealloc(w->notes, sizeof *w->notes * (w->nnotes + sp->nnotes));
        memcpy(w->notes + w->nnotes, sp->notes, sizeof *w->notes * sp->nnotes);
        w->nnotes += sp->nnotes;
        sp->nnotes = 0;
    }
    w->stats = sp->stats;
    w->t0 = sp->t0;
    w->t1 = sp->t1;
    w->rank_header = sp->rank_header;
    sp->rank_header = NULL;
    w->rank_format = sp->rank_format;
    w->rank_base_ns = sp->rank_base_ns;
}

struct idmap {
    uint32_t *str;       /* spool string id -> writer string id */
    size_t nstr;
    uint32_t track_base; /* writer track id = spool track id + track_base */
};

static uint32_t map_str(const struct idmap *m, uint32_t id)
{
    return id < m->nstr ? m->str[id] : 0;
}

static uint32_t map_track(const struct idmap *m, uint32_t id)
{
    return id ? id + m->track_base : 0;
}

/* Where the ids sit in each op's payload: string ids or track ids. */
#define SLICE_PAYLOAD(f) (sizeof(struct sorter_key) + offsetof(struct slice_payload, f))
static const struct id_field {
    uint32_t type;
    size_t off;
    int track;
} id_fields[] = {
    { OP_SLICE, offsetof(struct sorter_key, track), 1 },
    { OP_SLICE, SLICE_PAYLOAD(name), 0 },
    { OP_SLICE, SLICE_PAYLOAD(cat), 0 },
    { OP_FLOW, offsetof(struct op_flow, track), 1 },
    { OP_FLOW, offsetof(struct op_flow, name), 0 },
    { OP_FLOW, offsetof(struct op_flow, cat), 0 },
    { OP_INSTANT, offsetof(struct op_instant, track), 1 },
    { OP_INSTANT, offsetof(struct op_instant, name), 0 },
    { OP_INSTANT, offsetof(struct op_instant, cat), 0 },
    { OP_COUNTER, offsetof(struct op_counter, c) + offsetof(struct tb_counter, track), 1 },
    { OP_COUNTER, offsetof(struct op_counter, c) + offsetof(struct tb_counter, name), 0 },
    { OP_MEM, offsetof(struct op_mem, m) + offsetof(struct tb_mem, track), 1 },
};

/* One spooled op handed to w with its ids mapped. */
static void replay_op(struct rundb_writer *w, struct idmap *m, const struct op_hdr *h, const char *d)
{
    if (h->type == OP_STR) {
        uint32_t id;
        memcpy(&id, d, 4);
        if (id < m->nstr) m->str[id] = rundb_intern(w, d + 4, h->len - 4);
        return;
    }
    char *o = rundb_writer_emit(w, (enum op_type)h->type, h->len);
    memcpy(o, d, h->len);
    for (size_t i = 0; i < sizeof id_fields / sizeof id_fields[0]; i++) {
        const struct id_field *f = &id_fields[i];
        uint32_t id;
        if (f->type != h->type) continue;
        memcpy(&id, o + f->off, sizeof id);
        id = f->track ? map_track(m, id) : map_str(m, id);
        memcpy(o + f->off, &id, sizeof id);
    }
    if (h->type == OP_SLICE) {
        /* ties in the sorter keep the order of the writer's sequence */
        uint64_t seq = w->seq++;
        memcpy(o + offsetof(struct sorter_key, seq), &seq, sizeof seq);
    }
}

static int read_at(int fd, void *buf, size_t n, uint64_t off, struct err *e)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return err_set(e, ERR_IO, "spool read failed: %s", r < 0 ? strerror(errno) : "short file");
        got += (size_t)r;
    }
    return 0;
}

int rundb_spool_replay(struct rundb_writer *w, struct rundb_writer *sp, struct err *e)
{
    if (!w->in_rank || w->rank != sp->rank || w->ntracks != w->rank_first_track)
        return err_set(e, ERR_INTERNAL, "rundb_spool_replay needs the spool's rank just begun");
    rundb_spool_put(sp);
    if (sp->bg_err_seen) {
        pthread_mutex_lock(&sp->bg_mu);
        *e = sp->bg_err;
        pthread_mutex_unlock(&sp->bg_mu);
        return e->code;
    }
    struct idmap m = { xcalloc(sp->next_str + 1, sizeof(uint32_t)), sp->next_str + 1, (uint32_t)w->ntracks };
    take_state(w, sp);
    uint64_t off = 0, len;
    size_t cap = BG_CHUNK;
    char *buf = xmalloc(cap);
    int rc = 0;
    while (rc == 0) {
        ssize_t r = pread(sp->spool_fd, &len, sizeof len, (off_t)off);
        if (r == 0) break;
        if (r != (ssize_t)sizeof len) {
            rc = err_set(e, ERR_IO, "spool read failed: %s", r < 0 ? strerror(errno) : "short file");
            break;
        }
        if (len > cap) {
            free(buf);
            cap = (size_t)len;
            buf = xmalloc(cap);
        }
        if ((rc = read_at(sp->spool_fd, buf, (size_t)len, off + sizeof len, e)) != 0) break;
        off += sizeof len + len;
        for (size_t at = 0; at < len;) {
            const struct op_hdr *h = (const struct op_hdr *)(buf + at);
            replay_op(w, &m, h, (const char *)(h + 1));
            at += sizeof *h + OP_ALIGN(h->len);
        }
    }
    free(buf);
    free(m.str);
    return rc;
}

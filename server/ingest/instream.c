#define LOG_MODULE "instream"
#include "ingest/instream.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#ifdef TB_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include "base/log.h"
#include "base/xmalloc.h"

#define RAW_CHUNK (256 * 1024)
/* igzip reads up to 8 bytes ahead into its bit buffer and, at the end of a
 * member, hands them back by moving next_in backwards, possibly into the
 * previous read: file mode keeps the last REWIND bytes before each read. */
#define REWIND 16
#define RATIO_GRACE ((uint64_t)64 << 20)

#define ZBLOCK ((size_t)1 << 20)
#define ZBLOCKS 3

struct zblock {
    size_t len, pos;
    struct err err;             /* the error that ended the stream, if any */
    char data[];
};

struct instream {
    int fd;                     /* -1 in memory mode */
    const unsigned char *mem;   /* memory mode: borrowed */
    size_t mem_len, mem_pos;
    unsigned char *raw;         /* file mode read buffer */
    uint64_t raw_size, raw_consumed, out_total;
    uint64_t recount;           /* bytes handed back by igzip, counted already */
    size_t raw_last;            /* bytes of the last file read, after the REWIND slack */
    struct instream_limits lim;
    int gzip, z_init, z_end;    /* z_end: last member finished */
    uint64_t member_in;         /* raw bytes of the current member fed so far */
    const unsigned char *in_p;  /* raw bytes not yet inflated */
    size_t in_n;
    z_stream z;
#ifdef TB_HAVE_ISAL
    struct inflate_state *isal; /* set: igzip inflates, z is unused */
#endif
    unsigned char magic[16];
    size_t magic_n;
    /* file-mode gzip: the inflater thread and its blocks (see zthread_main) */
    int zthread_on, zstop;
    pthread_t zthread;
    pthread_mutex_t zmu;
    pthread_cond_t zcv;
    struct zblock *blocks[ZBLOCKS];
    struct zblock *freeq[ZBLOCKS], *readyq[ZBLOCKS], *cur;
    int nfree, nready, rhead;
    uint64_t raw_seen;          /* raw_consumed as of the last block, under zmu */
};

static void *zthread_main(void *arg);

static int raw_fill(struct instream *s, const unsigned char **p, size_t *n, struct err *e)
{
    if (s->fd < 0) {
        /* in pieces: zlib's avail_in is 32-bit, a buffer may be larger */
        *p = s->mem + s->mem_pos;
        *n = s->mem_len - s->mem_pos;
        if (*n > RAW_CHUNK) *n = RAW_CHUNK;
        s->mem_pos += *n;
        return 0;
    }
    /* the stream's last REWIND bytes go before the new ones */
    memmove(s->raw, s->raw + s->raw_last, REWIND);
    for (;;) {
        ssize_t r = read(s->fd, s->raw + REWIND, RAW_CHUNK);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return err_set(e, ERR_IO, "read failed: %s", strerror(errno));
        *p = s->raw + REWIND;
        *n = (size_t)r;
        s->raw_last = (size_t)r;
        return 0;
    }
}

static int open_common(struct instream *s, struct err *e)
{
    /* Peek the magic without losing it: in file mode use pread. */
    if (s->fd >= 0) {
        ssize_t r = pread(s->fd, s->magic, sizeof s->magic, 0);
        if (r < 0) return err_set(e, ERR_IO, "read failed: %s", strerror(errno));
        s->magic_n = (size_t)r;
    } else {
        s->magic_n = s->mem_len < sizeof s->magic ? s->mem_len : sizeof s->magic;
        memcpy(s->magic, s->mem, s->magic_n);
    }
    s->gzip = s->magic_n >= 2 && s->magic[0] == 0x1f && s->magic[1] == 0x8b;
    if (!s->gzip) return 0;
#ifdef TB_HAVE_ISAL
    if (!s->lim.zlib_only) {
        s->isal = xmalloc(sizeof *s->isal);
        isal_inflate_init(s->isal);
        s->isal->crc_flag = ISAL_GZIP;
        return 0;
    }
#endif
    memset(&s->z, 0, sizeof s->z);
    if (inflateInit2(&s->z, 15 + 16) != Z_OK) return err_set(e, ERR_INTERNAL, "zlib init failed");
    s->z_init = 1;
    return 0;
}

int instream_open_file(const char *path, const struct instream_limits *lim, struct instream **out, struct err *e)
{
    struct instream *s;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) return err_set(e, errno == ENOENT ? ERR_NOT_FOUND : ERR_IO, "cannot open %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(e, ERR_INVALID, "%s is not a regular file", path);
    }
    s = xcalloc(1, sizeof *s);
    s->fd = fd;
    s->raw = xcalloc(1, REWIND + RAW_CHUNK);
    s->raw_size = (uint64_t)st.st_size;
    s->lim = *lim;
    if (open_common(s, e) != 0) {
        instream_close(s);
        return e->code;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    if (s->gzip) {
        LOG_DEBUG("%s: gzip, inflated by %s", path, instream_inflater(s));
        pthread_mutex_init(&s->zmu, NULL);
        pthread_cond_init(&s->zcv, NULL);
        for (int i = 0; i < ZBLOCKS; i++) {
            s->blocks[i] = xmalloc(sizeof(struct zblock) + ZBLOCK);
            s->freeq[s->nfree++] = s->blocks[i];
        }
        if (pthread_create(&s->zthread, NULL, zthread_main, s) == 0) {
            s->zthread_on = 1;
        } else {
            /* no thread: inflate on the caller's thread, as in memory mode */
            for (int i = 0; i < ZBLOCKS; i++) free(s->blocks[i]);
            s->nfree = 0;
            pthread_mutex_destroy(&s->zmu);
            pthread_cond_destroy(&s->zcv);
        }
    }
    *out = s;
    return 0;
}

int instream_open_mem(const void *data, size_t n, const struct instream_limits *lim, struct instream **out,
                      struct err *e)
{
    struct instream *s = xcalloc(1, sizeof *s);
    s->fd = -1;
    s->mem = data;
    s->mem_len = n;
    s->raw_size = n;
    s->lim = *lim;
    if (open_common(s, e) != 0) {
        instream_close(s);
        return e->code;
    }
    *out = s;
    return 0;
}

static int check_limits(struct instream *s, struct err *e)
{
    if (s->lim.max_bytes && s->out_total > s->lim.max_bytes)
        return err_set(e, ERR_TOO_LARGE, "the trace inflates to more than the limit of %llu bytes (inflate_limit)",
                       (unsigned long long)s->lim.max_bytes);
    if (s->gzip && s->lim.max_ratio && s->out_total > RATIO_GRACE &&
        s->out_total / (s->raw_consumed ? s->raw_consumed : 1) > s->lim.max_ratio)
        return err_set(e, ERR_TOO_LARGE,
                       "the gzip data expands more than %llu times (a gzip bomb?): refused (inflate_ratio)",
                       (unsigned long long)s->lim.max_ratio);
    return 0;
}

/* Inflates up to cap bytes on the calling thread. */
static int inflate_some(struct instream *s, void *buf, size_t cap, size_t *got, struct err *e);

/* --- the inflater thread ------------------------------------------------ */

/* Decompression is the slowest stage of a gzipped import after parsing, so
 * in file mode it runs on its own thread, filling whole blocks ahead of the
 * parser. Blocks cycle between the free list and the ready queue. */
static void *zthread_main(void *arg)
{
    pthread_setname_np(pthread_self(), "tb-inflate");
    struct instream *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->zmu);
        while (!s->zstop && s->nfree == 0) pthread_cond_wait(&s->zcv, &s->zmu);
        if (s->zstop) {
            pthread_mutex_unlock(&s->zmu);
            break;
        }
        struct zblock *b = s->freeq[--s->nfree];
        pthread_mutex_unlock(&s->zmu);

        size_t got = 0, fill = 0;
        err_clear(&b->err);
        /* fill the block completely unless the stream ends or fails */
        while (fill < ZBLOCK) {
            if (inflate_some(s, b->data + fill, ZBLOCK - fill, &got, &b->err) != 0) break;
            if (got == 0) break;
            fill += got;
        }
        b->len = fill;
        b->pos = 0;
        int last = b->err.code != 0 || fill < ZBLOCK;

        pthread_mutex_lock(&s->zmu);
        s->readyq[(s->rhead + s->nready) % ZBLOCKS] = b;
        s->nready++;
        s->raw_seen = s->raw_consumed;
        pthread_cond_broadcast(&s->zcv);
        pthread_mutex_unlock(&s->zmu);
        if (last) break;
    }
    return NULL;
}

static int zthread_read(struct instream *s, void *buf, size_t cap, size_t *got, struct err *e)
{
    for (;;) {
        if (s->cur && s->cur->pos < s->cur->len) {
            size_t n = s->cur->len - s->cur->pos;
            if (n > cap) n = cap;
            memcpy(buf, s->cur->data + s->cur->pos, n);
            s->cur->pos += n;
            *got = n;
            return 0;
        }
        if (s->cur) {
            if (s->cur->err.code) {
                *e = s->cur->err;
                return e->code;
            }
            if (s->cur->len < ZBLOCK) { /* the short block was the last */
                *got = 0;
                return 0;
            }
        }
        pthread_mutex_lock(&s->zmu);
        if (s->cur) {
            s->freeq[s->nfree++] = s->cur;
            s->cur = NULL;
            pthread_cond_broadcast(&s->zcv);
        }
        while (s->nready == 0) pthread_cond_wait(&s->zcv, &s->zmu);
        s->cur = s->readyq[s->rhead];
        s->rhead = (s->rhead + 1) % ZBLOCKS;
        s->nready--;
        pthread_mutex_unlock(&s->zmu);
    }
}

int instream_read(struct instream *s, void *buf, size_t cap, size_t *got, struct err *e)
{
    *got = 0;
    if (s->zthread_on) return zthread_read(s, buf, cap, got, e);
    if (s->gzip) return inflate_some(s, buf, cap, got, e);
    if (s->fd >= 0) {
        for (;;) {
            ssize_t r = read(s->fd, buf, cap);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) return err_set(e, ERR_IO, "read failed: %s", strerror(errno));
            *got = (size_t)r;
            break;
        }
    } else {
        size_t n = s->mem_len - s->mem_pos;
        if (n > cap) n = cap;
        memcpy(buf, s->mem + s->mem_pos, n);
        s->mem_pos += n;
        *got = n;
    }
    s->raw_consumed += *got;
    s->out_total += *got;
    return check_limits(s, e);
}

/* --- the two inflaters ---------------------------------------------------- */

/* What zlib says of a gzip header's first four bytes, for igzip, which
 * skips the reserved flag bits and reports the rest differently: the same
 * input gets the same answer from both. NULL when byte c at pos is fine. */
static const char *header_error(uint64_t pos, unsigned char c)
{
    if ((pos == 0 && c != 0x1f) || (pos == 1 && c != 0x8b)) return "incorrect header check";
    if (pos == 2 && c != 8) return "unknown compression method";
    if (pos == 3 && (c & 0xe0)) return "unknown header flags set";
    return NULL;
}

/* One step of the inflater in use over (*in, *in_n) into out[0..out_n):
 * *in and *in_n are moved past what it took; igzip may move them back at
 * the end of a member (REWIND). OUT *made. Returns 0 to go on, 1 at the
 * end of a gzip member (trailer checked), -1 on corrupt data with *msg
 * set. The rest of the stream logic (members, padding, truncation,
 * limits) is shared, so both inflaters keep every guard identical. */
static int codec_step(struct instream *s, const unsigned char **in, size_t *in_n, unsigned char *out, size_t out_n,
                      size_t *made, const char **msg)
{
#ifdef TB_HAVE_ISAL
    if (s->isal) {
        struct inflate_state *st = s->isal;
        for (uint64_t pos = s->member_in; pos < 4 && pos < s->member_in + *in_n; pos++)
            if ((*msg = header_error(pos, (*in)[pos - s->member_in])) != NULL) {
                *in += pos - s->member_in;
                *in_n -= (size_t)(pos - s->member_in);
                *made = 0;
                return -1;
            }
        size_t given = *in_n;
        st->next_in = (uint8_t *)*in;
        st->avail_in = (uint32_t)*in_n;
        st->next_out = out;
        st->avail_out = (uint32_t)out_n;
        int rc = isal_inflate(st);
        *made = out_n - st->avail_out;
        if (st->avail_in > given + 8) {
            *msg = "inflate failed";
            return -1;
        }
        *in = st->next_in;
        *in_n = st->avail_in;
        switch (rc) {
        case ISAL_DECOMP_OK:
        case ISAL_END_INPUT:
        case ISAL_OUT_OVERFLOW:
            return st->block_state == ISAL_BLOCK_FINISH;
        case ISAL_INVALID_BLOCK: *msg = "invalid block"; break;
        case ISAL_INVALID_SYMBOL: *msg = "invalid code"; break;
        case ISAL_INVALID_LOOKBACK: *msg = "invalid distance too far back"; break;
        case ISAL_INVALID_WRAPPER: *msg = "incorrect header check"; break;
        case ISAL_UNSUPPORTED_METHOD: *msg = "unknown compression method"; break;
        case ISAL_INCORRECT_CHECKSUM: *msg = "incorrect data check"; break;
        default: *msg = "inflate failed"; break;
        }
        return -1;
    }
#endif
    s->z.next_in = (unsigned char *)*in;
    s->z.avail_in = (uInt)*in_n;
    s->z.next_out = out;
    s->z.avail_out = (uInt)out_n;
    int rc = inflate(&s->z, Z_NO_FLUSH);
    *made = out_n - s->z.avail_out;
    *in = s->z.next_in;
    *in_n = s->z.avail_in;
    if (rc == Z_STREAM_END) return 1;
    if (rc == Z_OK || (rc == Z_BUF_ERROR && s->z.avail_in == 0)) return 0; /* Z_BUF_ERROR: needs more input */
    *msg = s->z.msg ? s->z.msg : "inflate failed";
    return -1;
}

/* n raw bytes taken by the inflater; bytes igzip handed back are counted
 * once, so that progress never moves backwards. */
static void count_in(struct instream *s, uint64_t n)
{
    uint64_t again = n < s->recount ? n : s->recount;
    s->recount -= again;
    s->raw_consumed += n - again;
}

/* Ready for the next member. */
static int codec_reset(struct instream *s, struct err *e)
{
#ifdef TB_HAVE_ISAL
    if (s->isal) {
        isal_inflate_reset(s->isal);
        s->isal->crc_flag = ISAL_GZIP;
        return 0;
    }
#endif
    return inflateReset(&s->z) == Z_OK ? 0 : err_set(e, ERR_INTERNAL, "zlib reset failed");
}

static int inflate_some(struct instream *s, void *buf, size_t cap, size_t *got, struct err *e)
{
    unsigned char *out = buf;
    size_t want = cap > UINT32_MAX ? UINT32_MAX : cap, left = want;
    *got = 0;
    while (left > 0) {
        int eof = 0;
        if (s->in_n == 0) {
            const unsigned char *p = NULL;
            size_t n = 0;
            if (raw_fill(s, &p, &n, e) != 0) return e->code;
            s->in_p = p;
            s->in_n = n;
            eof = n == 0;
        }
        if (s->z_end) {
            if (eof) break;
            /* Another member follows: skip stray zero padding, else restart. */
            while (s->in_n && *s->in_p == 0) {
                s->in_p++;
                s->in_n--;
                count_in(s, 1);
            }
            if (!s->in_n) continue;
            if (codec_reset(s, e) != 0) return e->code;
            s->z_end = 0;
            s->member_in = 0;
        }
        size_t before = s->in_n, made = 0;
        const char *msg = NULL;
        /* at the end of the input the inflater may still hold output
         * (igzip reads ahead into its bit buffer): one step with no input */
        int rc = codec_step(s, &s->in_p, &s->in_n, out, left, &made, &msg);
        if (s->in_n <= before) {
            count_in(s, before - s->in_n);
            s->member_in += before - s->in_n;
        } else {
            s->recount += s->in_n - before; /* handed back at a member's end */
        }
        out += made;
        left -= made;
        if (rc < 0)
            return err_set(e, ERR_INVALID, "corrupt gzip data at compressed byte %llu: %s",
                           (unsigned long long)s->raw_consumed, msg);
        if (rc == 1) {
            s->z_end = 1;
            continue;
        }
        if (eof && made == 0) {
            if (s->member_in) return err_set(e, ERR_INVALID, "the gzip data is cut off (truncated file)");
            if (s->raw_consumed == 0) return err_set(e, ERR_INVALID, "empty gzip file");
            break;
        }
    }
    *got = want - left;
    s->out_total += *got;
    return check_limits(s, e);
}

uint64_t instream_raw_consumed(const struct instream *s)
{
    if (!s->zthread_on) return s->raw_consumed;
    pthread_mutex_lock((pthread_mutex_t *)&s->zmu);
    uint64_t v = s->raw_seen;
    pthread_mutex_unlock((pthread_mutex_t *)&s->zmu);
    return v;
}

uint64_t instream_raw_size(const struct instream *s)
{
    return s->raw_size;
}

int instream_is_gzip(const struct instream *s)
{
    return s->gzip;
}

const char *instream_inflater(const struct instream *s)
{
    if (!s->gzip) return NULL;
#ifdef TB_HAVE_ISAL
    if (s->isal) return "igzip";
#endif
    return "zlib";
}

const unsigned char *instream_magic(const struct instream *s, size_t *n)
{
    *n = s->magic_n;
    return s->magic;
}

void instream_close(struct instream *s)
{
    if (!s) return;
    if (s->zthread_on) {
        pthread_mutex_lock(&s->zmu);
        s->zstop = 1;
        pthread_cond_broadcast(&s->zcv);
        pthread_mutex_unlock(&s->zmu);
        pthread_join(s->zthread, NULL);
        for (int i = 0; i < ZBLOCKS; i++) free(s->blocks[i]);
        pthread_mutex_destroy(&s->zmu);
        pthread_cond_destroy(&s->zcv);
    }
    if (s->z_init) inflateEnd(&s->z);
#ifdef TB_HAVE_ISAL
    free(s->isal);
#endif
    if (s->fd >= 0) close(s->fd);
    free(s->raw);
    free(s);
}

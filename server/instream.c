#define LOG_MODULE "instream"
#include "instream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "log.h"
#include "xmalloc.h"

#define RAW_CHUNK (256 * 1024)
#define RATIO_GRACE ((uint64_t)64 << 20)

struct instream {
    int fd;                     /* -1 in memory mode */
    const unsigned char *mem;   /* memory mode: borrowed */
    size_t mem_len, mem_pos;
    unsigned char *raw;         /* file mode read buffer */
    uint64_t raw_size, raw_consumed, out_total;
    struct instream_limits lim;
    int gzip, z_init, z_end;    /* z_end: last member finished */
    z_stream z;
    unsigned char magic[16];
    size_t magic_n;
};

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
    for (;;) {
        ssize_t r = read(s->fd, s->raw, RAW_CHUNK);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return err_set(e, ERR_IO, "read failed: %s", strerror(errno));
        *p = s->raw;
        *n = (size_t)r;
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
    if (s->gzip) {
        memset(&s->z, 0, sizeof s->z);
        if (inflateInit2(&s->z, 15 + 16) != Z_OK) return err_set(e, ERR_INTERNAL, "zlib init failed");
        s->z_init = 1;
    }
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
    s->raw = xmalloc(RAW_CHUNK);
    s->raw_size = (uint64_t)st.st_size;
    s->lim = *lim;
    if (open_common(s, e) != 0) {
        instream_close(s);
        return e->code;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
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

int instream_read(struct instream *s, void *buf, size_t cap, size_t *got, struct err *e)
{
    *got = 0;
    if (!s->gzip) {
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

    s->z.next_out = buf;
    s->z.avail_out = (uInt)(cap > UINT32_MAX ? UINT32_MAX : cap);
    while (s->z.avail_out > 0) {
        int rc;
        if (s->z.avail_in == 0) {
            const unsigned char *p = NULL;
            size_t n = 0;
            if (raw_fill(s, &p, &n, e) != 0) return e->code;
            if (n == 0) {
                if (!s->z_end && s->z.total_in > 0)
                    return err_set(e, ERR_INVALID, "the gzip data is cut off (truncated file)");
                if (s->raw_consumed == 0 && !s->z_end)
                    return err_set(e, ERR_INVALID, "empty gzip file");
                break;
            }
            s->z.next_in = (unsigned char *)p;
            s->z.avail_in = (uInt)n;
        }
        if (s->z_end) {
            /* Another member follows: skip stray zero padding, else restart. */
            while (s->z.avail_in && *s->z.next_in == 0) {
                s->z.next_in++;
                s->z.avail_in--;
                s->raw_consumed++;
            }
            if (!s->z.avail_in) continue;
            if (inflateReset(&s->z) != Z_OK) return err_set(e, ERR_INTERNAL, "zlib reset failed");
            s->z_end = 0;
        }
        uInt before_in = s->z.avail_in;
        rc = inflate(&s->z, Z_NO_FLUSH);
        s->raw_consumed += before_in - s->z.avail_in;
        if (rc == Z_STREAM_END) {
            s->z_end = 1;
            continue;
        }
        if (rc == Z_BUF_ERROR && s->z.avail_in == 0) continue; /* needs more input */
        if (rc != Z_OK)
            return err_set(e, ERR_INVALID, "corrupt gzip data at compressed byte %llu: %s",
                           (unsigned long long)s->raw_consumed, s->z.msg ? s->z.msg : "inflate failed");
    }
    *got = cap - s->z.avail_out;
    s->out_total += *got;
    return check_limits(s, e);
}

uint64_t instream_raw_consumed(const struct instream *s)
{
    return s->raw_consumed;
}

uint64_t instream_raw_size(const struct instream *s)
{
    return s->raw_size;
}

int instream_is_gzip(const struct instream *s)
{
    return s->gzip;
}

const unsigned char *instream_magic(const struct instream *s, size_t *n)
{
    *n = s->magic_n;
    return s->magic;
}

void instream_close(struct instream *s)
{
    if (!s) return;
    if (s->z_init) inflateEnd(&s->z);
    if (s->fd >= 0) close(s->fd);
    free(s->raw);
    free(s);
}

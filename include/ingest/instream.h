/*
 * instream.h — the byte source every importer reads: a file or a memory
 * buffer, transparently inflated when it is gzip (several concatenated
 * members are allowed, as `cat a.gz b.gz` produces).
 *
 * Limits are enforced here, once, for every format: the inflated size may
 * not exceed lim.max_bytes, and past the first 64 MiB the inflated/compressed
 * ratio may not exceed lim.max_ratio — a gzip bomb ends with ERR_TOO_LARGE
 * after at most that much work, never by exhausting memory or disk.
 *
 * gzip is inflated by ISA-L's igzip when the build found it (TB_HAVE_ISAL:
 * several times faster) unless lim.zlib_only, else by zlib; both sit behind
 * one step function, so members, padding, truncation and the limits are
 * handled by the same code whichever inflates.
 *
 * An instream is used by one thread. It owns its fd (file mode) or borrows
 * the caller's buffer (memory mode, which must outlive it). A gzip file is
 * inflated ahead of the reader on a thread of its own, a few 1 MiB blocks
 * at a time; memory mode inflates on the caller's thread.
 */
#ifndef TB_INSTREAM_H
#define TB_INSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct instream_limits {
    uint64_t max_bytes; /* inflated bytes; 0 = unlimited */
    uint64_t max_ratio; /* inflated/compressed past 64 MiB; 0 = unlimited */
    int zlib_only;      /* 1: inflate with zlib even where igzip was built in */
};

struct instream;

/* OUT *out: owned by caller, release with instream_close. */
int instream_open_file(const char *path, const struct instream_limits *lim, struct instream **out, struct err *e);
int instream_open_mem(const void *data, size_t n, const struct instream_limits *lim, struct instream **out,
                      struct err *e);

/* Reads up to cap bytes of content. OUT *got (0 only at the end).
 * Returns 0 or an error (corrupt gzip, limit exceeded, I/O). */
int instream_read(struct instream *s, void *buf, size_t cap, size_t *got, struct err *e);

/* Raw (compressed) bytes consumed so far, for progress. */
uint64_t instream_raw_consumed(const struct instream *s);

/* Size of the raw input in bytes (file size or buffer length). */
uint64_t instream_raw_size(const struct instream *s);

/* 1 when the input is gzip. Valid after open. */
int instream_is_gzip(const struct instream *s);

/* What inflates the input: "igzip", "zlib", or NULL when it is not gzip. */
const char *instream_inflater(const struct instream *s);

/* The first raw bytes of the input (up to 16), for format probes. */
const unsigned char *instream_magic(const struct instream *s, size_t *n);

void instream_close(struct instream *s);

#endif

/*
 * mpart.h — a streaming multipart/form-data parser (RFC 7578 / RFC 2046).
 *
 * Owns nothing but its own small state: the body is fed in chunks of any
 * size, split anywhere (inside a delimiter, inside headers), and every byte
 * of part content is handed to the data callback exactly once, in order,
 * without buffering whole parts. Only the header block of the current part
 * is buffered, bounded by MPART_HEADER_MAX; at most MPART_PARTS_MAX parts.
 *
 * States (struct mpart, advanced by mpart_feed):
 *   preamble -> boundary line -> headers -> data -> boundary line -> ...
 *   -> epilogue (after the closing "--boundary--", remaining bytes ignored)
 *   any state -> failed (sticky: every later call returns the same error)
 * mpart_finish() succeeds only in the epilogue state: a body that stops
 * before the closing delimiter is a truncated upload.
 *
 * Callbacks run on the feeding thread, inside mpart_feed. The strings in
 * struct mpart_part are borrowed: valid until the part's part_end callback
 * (or until mpart_free). A callback returning <0 aborts the parse with its
 * error (it fills e). One parser is used by one thread at a time.
 */
#ifndef TB_MPART_H
#define TB_MPART_H

#include <stddef.h>

#include "base/err.h"

#define MPART_BOUNDARY_MAX 70        /* RFC 2046 limit */
#define MPART_HEADER_MAX (16 * 1024) /* bytes in one part's header block */
#define MPART_PARTS_MAX 1024
#define MPART_FILENAME_MAX 255       /* bytes, after removing directories */

struct mpart;

/* What part_begin learns about a part; all strings borrowed (see above). */
struct mpart_part {
    const char *name;         /* form field name, never NULL */
    const char *filename;     /* cleaned base name, NULL for a plain field */
    const char *content_type; /* the part's Content-Type, NULL if absent */
    int index;                /* 0-based position of the part in the body */
};

struct mpart_callbacks {
    int (*part_begin)(void *ctx, const struct mpart_part *part, struct err *e);
    /* n > 0; data is borrowed for the call. */
    int (*data)(void *ctx, const char *data, size_t n, struct err *e);
    int (*part_end)(void *ctx, struct err *e);
};

/* Extracts the boundary parameter from a Content-Type header value such as
 * `multipart/form-data; boundary="abc"`.
 * OUT out: NUL-terminated boundary (1..70 RFC 2046 characters).
 * ERR_UNSUPPORTED if the media type is not multipart/form-data, ERR_INVALID
 * if the boundary is missing or malformed. */
int mpart_boundary(const char *content_type, char out[MPART_BOUNDARY_MAX + 1], struct err *e);

/* Creates a parser. boundary must have come from mpart_boundary (checked
 * again: ERR_INVALID). cb is borrowed for the parser's lifetime.
 * OUT *out: owned by caller, release with mpart_free. */
int mpart_new(const char *boundary, const struct mpart_callbacks *cb, void *ctx, struct mpart **out,
              struct err *e);

/* Feeds the next n bytes of the body. Returns 0, or the first error:
 * ERR_INVALID (malformed body), ERR_TOO_LARGE (header block or part count
 * over its limit) or whatever a callback returned. */
int mpart_feed(struct mpart *p, const char *data, size_t n, struct err *e);

/* Declares the end of the body. 0 if the closing delimiter was seen, else
 * ERR_INVALID ("truncated") or the earlier sticky error. */
int mpart_finish(struct mpart *p, struct err *e);

/* Frees p (NULL is fine). Does not call part_end for an unfinished part. */
void mpart_free(struct mpart *p);

/* Reduces a client-supplied file name to its base name: strips every
 * directory part (both '/' and '\') and makes it valid UTF-8, each byte of
 * an invalid sequence a U+FFFD (names end up in JSON, which must be UTF-8).
 * ERR_INVALID when the result is empty, "." or "..", longer than
 * MPART_FILENAME_MAX or holds control characters.
 * OUT out: the cleaned name. Shared with raw uploads' ?filename=. */
int mpart_filename_clean(const char *in, char out[MPART_FILENAME_MAX + 1], struct err *e);

#endif

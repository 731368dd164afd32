/*
 * assets.h — the web UI's static files: the copy embedded in the binary and,
 * with --web-dir, the same files read from disk (for front-end work).
 *
 * The embedded table is generated at build time by server/gen_assets.sh
 * (build/assets_gen.c): one entry per file under web/, keyed by its URL
 * path ("/index.html", "/js/app.js"), terminated by {0, 0, 0}. It is
 * static, read-only data, so every function here may be called from any
 * thread; nothing returned needs freeing except the fd of assets_open_disk.
 *
 * Disk mode trusts nothing in the URL: a path holding NUL or a backslash,
 * not starting with '/', with an empty segment or a segment starting with
 * '.' (so "..", "." and hidden files) is refused before touching the
 * filesystem, and the realpath() of the file must stay inside the realpath()
 * of web_dir, so symlinks cannot lead out of it either.
 */
#ifndef TB_ASSETS_H
#define TB_ASSETS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct asset {
    const char *path;          /* URL path, starts with '/' */
    const unsigned char *data; /* file bytes (followed by a NUL not counted in len) */
    size_t len;
};

/* Generated; last entry is {0, 0, 0}. */
extern const struct asset assets_table[];

/* The embedded file for a URL path ("/" means "/index.html"), or NULL.
 * Static: a pointer into assets_table. */
const struct asset *assets_find(const char *path);

/* MIME type for a path by its extension (html, js, css, svg, png, json,
 * ico, woff2, ...); "application/octet-stream" when unknown. Static string. */
const char *assets_mime(const char *path);

/* Opens web_dir + path for reading (path as in assets_find; "/" means
 * "/index.html"; len bytes, may not hold NUL).
 * OUT *fd: an open read-only descriptor of a regular file, owned by caller.
 * OUT *size: its size in bytes.
 * ERR_NOT_FOUND for a missing file or a folder, ERR_INVALID for a path
 * refused as traversal, ERR_IO for other failures. */
int assets_open_disk(const char *web_dir, const char *path, size_t len, int *fd, uint64_t *size, struct err *e);

#endif

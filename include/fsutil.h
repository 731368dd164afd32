/*
 * fsutil.h — small filesystem helpers shared by the store and ingest:
 * recursive removal, private directory creation, durable renames and file
 * copies. All paths are plain C strings borrowed for the call; nothing here
 * keeps state, so every function may be called from any thread.
 *
 * Directories are created 0700 and files 0600: on a shared login node
 * other users must not read someone's traces.
 */
#ifndef TB_FSUTIL_H
#define TB_FSUTIL_H

#include <stdint.h>

#include "err.h"

/* mkdir -p with mode 0700 for every component created. */
int fsutil_mkdirs(const char *path, struct err *e);

/* rm -rf; a missing path is success. Never follows symlinks. */
int fsutil_rmtree(const char *path, struct err *e);

/* Copies src to dst (created 0600, must not exist). */
int fsutil_copy(const char *src, const char *dst, struct err *e);

/* A hard link when src and dst share a filesystem (no bytes copied), else
 * a copy. */
int fsutil_link_or_copy(const char *src, const char *dst, struct err *e);

/* Moves src to dst: rename, or copy + unlink across filesystems. */
int fsutil_move(const char *src, const char *dst, struct err *e);

/* fsync a file or directory by path. */
int fsutil_fsync_path(const char *path, struct err *e);

/* Size of a regular file, or -1. */
int64_t fsutil_file_size(const char *path);

/* Maps errno to our codes: ENOSPC/EROFS/EDQUOT -> ERR_NOSPACE, else ERR_IO. */
int fsutil_errno_code(int errnum);

#endif

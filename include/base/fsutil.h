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

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Writes buf[0..n) to fd whole (short writes and EINTR resumed). On
 * failure the message is "<what>: <strerror>" and the code
 * fsutil_errno_code's (ERR_NOSPACE for a full disk or quota). */
int fsutil_write_all(int fd, const void *buf, size_t n, const char *what, struct err *e);

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

/* Starts writing path's dirty pages to disk without waiting for them, so
 * that a later fsutil_fsync_path waits only for what changed since (or is
 * still in flight). Best effort: returns the time it took in seconds, or
 * -1 when the file cannot be opened or the system cannot do it (then the
 * fsync does all the work, as without this call). */
double fsutil_writeback_start(const char *path);

/* Size of a regular file, or -1. */
int64_t fsutil_file_size(const char *path);

/* The data folder's lock (<data_dir>/lock, flock): every ingest, upload
 * and rank renumbering holds it shared while it has folders in tmp/, an
 * uncatalogued run folder or a swap in progress; the start-up cleanups (catalog orphans, tmp sweep) take it
 * exclusively and skip their sweep when they cannot, so a server and an
 * `import` on one data folder never delete each other's work.
 * exclusive: LOCK_EX without waiting (returns 1 when held elsewhere), else
 * LOCK_SH waiting. Returns 0 with *fd set (release: fsutil_unlock), 1 busy,
 * or an error code (a read-only folder cannot create the file). */
int fsutil_lock_data(const char *data_dir, int exclusive, int *fd, struct err *e);

/* Releases a lock from fsutil_lock_data (fd < 0: nothing). */
void fsutil_unlock(int fd);

/* Swaps two paths in one step (renameat2 RENAME_EXCHANGE): afterwards a
 * names what b named and b what a named, and no moment exists where either
 * is missing. Both must exist on one filesystem. ERR_NOT_FOUND when one is
 * missing; ERR_IO where the filesystem cannot exchange. */
int fsutil_exchange(const char *a, const char *b, struct err *e);

/* Test hook for crash tests: when the environment variable TB_TEST_CRASH_AT
 * equals point, the process kills itself with SIGKILL right here, as a
 * kill -9 or a power cut at that step would. A no-op otherwise. */
void fsutil_crash_point(const char *point);

/* Maps errno to our codes: ENOSPC/EROFS/EDQUOT -> ERR_NOSPACE, else ERR_IO. */
int fsutil_errno_code(int errnum);

#endif

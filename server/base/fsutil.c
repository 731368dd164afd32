#include "base/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/xmalloc.h"

int fsutil_errno_code(int errnum)
{
    return errnum == ENOSPC || errnum == EROFS || errnum == EDQUOT ? ERR_NOSPACE : ERR_IO;
}

int fsutil_write_all(int fd, const void *buf, size_t n, const char *what, struct err *e)
{
    const char *d = buf;

    while (n > 0) {
        ssize_t w = write(fd, d, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            int en = errno;
            return err_set(e, fsutil_errno_code(en), "%s: %s", what, strerror(en));
        }
        d += w;
        n -= (size_t)w;
    }
    return 0;
}

int fsutil_mkdirs(const char *path, struct err *e)
{
    char *p = xstrdup(path);
    for (char *c = p + 1;; c++) {
        if (*c == '/' || *c == '\0') {
            char save = *c;
            *c = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                int en = errno;
                err_set(e, fsutil_errno_code(en), "cannot create folder %s: %s", p, strerror(en));
                free(p);
                return e->code;
            }
            *c = save;
            if (!save) break;
        }
    }
    free(p);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return err_set(e, ERR_IO, "%s exists and is not a folder", path);
    return 0;
}

int fsutil_rmtree(const char *path, struct err *e)
{
    struct stat st;
    if (lstat(path, &st) != 0) return errno == ENOENT ? 0 : err_set(e, ERR_IO, "cannot stat %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) != 0 && errno != ENOENT) return err_set(e, ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) return err_set(e, ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        char *child = xasprintf("%s/%s", path, de->d_name);
        if (fsutil_rmtree(child, e) != 0) rc = e->code;
        free(child);
    }
    closedir(d);
    if (rc == 0 && rmdir(path) != 0 && errno != ENOENT) rc = err_set(e, ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    return rc;
}

int fsutil_copy(const char *src, const char *dst, struct err *e)
{
    int in = open(src, O_RDONLY | O_CLOEXEC), out;
    if (in < 0) return err_set(e, ERR_IO, "cannot open %s: %s", src, strerror(errno));
    out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        int en = errno;
        close(in);
        return err_set(e, fsutil_errno_code(en), "cannot create %s: %s", dst, strerror(en));
    }
    char *buf = xmalloc(1 << 20);
    char *what = xasprintf("cannot write %s", dst);
    int rc = 0;
    for (;;) {
        ssize_t r = read(in, buf, 1 << 20);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            rc = err_set(e, ERR_IO, "cannot read %s: %s", src, strerror(errno));
            break;
        }
        if (r == 0) break;
        if ((rc = fsutil_write_all(out, buf, (size_t)r, what, e)) != 0) break;
    }
    free(buf);
    free(what);
    close(in);
    if (close(out) != 0 && rc == 0) rc = err_set(e, ERR_IO, "cannot write %s: %s", dst, strerror(errno));
    if (rc) unlink(dst);
    return rc;
}

int fsutil_link_or_copy(const char *src, const char *dst, struct err *e)
{
    if (link(src, dst) == 0) return 0;
    return fsutil_copy(src, dst, e);
}

int fsutil_move(const char *src, const char *dst, struct err *e)
{
    if (rename(src, dst) == 0) return 0;
    if (errno != EXDEV) return err_set(e, fsutil_errno_code(errno), "cannot move %s: %s", src, strerror(errno));
    if (fsutil_copy(src, dst, e) != 0) return e->code;
    unlink(src);
    return 0;
}

int fsutil_fsync_path(const char *path, struct err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(e, ERR_IO, "cannot open %s: %s", path, strerror(errno));
    int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : err_set(e, ERR_IO, "fsync %s: %s", path, strerror(errno));
    close(fd);
    return rc;
}

double fsutil_writeback_start(const char *path)
{
    struct timespec t0, t1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* WRITE alone: queue the pages for writeback and return; no wait for
     * pages already in flight, nor for the device */
    int rc = sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    close(fd);
    return rc == 0 ? (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9 : -1;
}

int64_t fsutil_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (int64_t)st.st_size : -1;
}

int fsutil_lock_data(const char *data_dir, int exclusive, int *fd, struct err *e)
{
    char *path = xasprintf("%s/lock", data_dir);
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (*fd < 0) {
        int en = errno;
        err_set(e, fsutil_errno_code(en), "cannot open the data folder lock %s: %s", path, strerror(en));
        free(path);
        return e->code;
    }
    free(path);
    int rc;
    while ((rc = flock(*fd, exclusive ? LOCK_EX | LOCK_NB : LOCK_SH)) != 0 && errno == EINTR) {}
    if (rc == 0) return 0;
    int en = errno;
    close(*fd);
    *fd = -1;
    if (exclusive && en == EWOULDBLOCK) return 1;
    return err_set(e, ERR_IO, "cannot lock the data folder: %s", strerror(en));
}

int fsutil_exchange(const char *a, const char *b, struct err *e)
{
    if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0) return 0;
    int en = errno;
    if (en == EINVAL || en == ENOSYS || en == ENOTSUP)
        return err_set(e, ERR_IO, "cannot swap %s and %s: the filesystem cannot exchange two folders in one step",
                       a, b);
    return err_set(e, en == ENOENT ? ERR_NOT_FOUND : fsutil_errno_code(en), "cannot swap %s and %s: %s", a, b,
                   strerror(en));
}

void fsutil_crash_point(const char *point)
{
    const char *want = getenv("TB_TEST_CRASH_AT");
    if (want && strcmp(want, point) == 0) kill(getpid(), SIGKILL);
}

void fsutil_unlock(int fd)
{
    if (fd >= 0) close(fd);
}

/* assets.c — embedded and on-disk web files (see include/http/assets.h). */
#define LOG_MODULE "assets"
#include "http/assets.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/xmalloc.h"

static const struct {
    const char *ext;
    const char *mime;
} mime_table[] = {
    { "html", "text/html; charset=utf-8" },
    { "js", "text/javascript; charset=utf-8" },
    { "mjs", "text/javascript; charset=utf-8" },
    { "css", "text/css; charset=utf-8" },
    { "svg", "image/svg+xml" },
    { "png", "image/png" },
    { "json", "application/json" },
    { "map", "application/json" },
    { "ico", "image/x-icon" },
    { "woff2", "font/woff2" },
    { "txt", "text/plain; charset=utf-8" },
};

const char *assets_mime(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash : path, '.');

    if (dot)
        for (size_t i = 0; i < sizeof mime_table / sizeof mime_table[0]; i++)
            if (strcasecmp(dot + 1, mime_table[i].ext) == 0) return mime_table[i].mime;
    return "application/octet-stream";
}

const struct asset *assets_find(const char *path)
{
    if (strcmp(path, "/") == 0) path = "/index.html";
    for (const struct asset *a = assets_table; a->path; a++)
        if (strcmp(a->path, path) == 0) return a;
    return NULL;
}

/* Lexical checks first, so obviously hostile paths never reach the
 * filesystem (and never show up in a realpath error). */
static int path_acceptable(const char *path, size_t len)
{
    if (len == 0 || path[0] != '/' || memchr(path, '\0', len) || memchr(path, '\\', len)) return 0;
    for (size_t i = 0; i < len; i++) {
        if (path[i] != '/') continue;
        size_t s = i + 1, end = s;
        while (end < len && path[end] != '/') end++;
        size_t seg = end - s;
        /* "." and ".." walk the tree; other dot names are hidden files,
         * which gen_assets.sh leaves out of the embedded copy too. */
        if (seg > 0 && path[s] == '.') return 0;
        if (seg == 0 && end < len) return 0;
    }
    return 1;
}

int assets_open_disk(const char *web_dir, const char *path, size_t len, int *fd_out, uint64_t *size,
                     struct err *e)
{
    char root[PATH_MAX], real[PATH_MAX], *joined;
    size_t rlen;
    struct stat st;
    int fd;

    if (!path_acceptable(path, len)) return err_set(e, ERR_INVALID, "refused asset path");
    if (len == 1) path = "/index.html", len = strlen(path);
    if (!realpath(web_dir, root)) return err_set(e, ERR_IO, "web_dir %s: %s", web_dir, strerror(errno));
    joined = xasprintf("%s%.*s", root, (int)len, path);
    if (!realpath(joined, real)) {
        int errsv = errno;
        free(joined);
        if (errsv == ENOENT || errsv == ENOTDIR) return err_set(e, ERR_NOT_FOUND, "no such file");
        return err_set(e, ERR_IO, "asset: %s", strerror(errsv));
    }
    free(joined);
    rlen = strlen(root);
    /* Inside means root itself followed by '/' (root "/" is its own case). */
    if (strncmp(real, root, rlen) != 0 || (real[rlen] != '/' && !(rlen == 1 && root[0] == '/'))) {
        LOG_WARN("asset path %.*s resolves outside web_dir", (int)len, path);
        return err_set(e, ERR_INVALID, "refused asset path");
    }
    /* real has no symlinks left; O_NOFOLLOW catches one swapped in since. */
    fd = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ENOENT) return err_set(e, ERR_NOT_FOUND, "no such file");
        return err_set(e, ERR_IO, "asset: %s", strerror(errno));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(e, ERR_NOT_FOUND, "not a file");
    }
    *fd_out = fd;
    *size = (uint64_t)st.st_size;
    return 0;
}

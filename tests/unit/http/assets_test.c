/* assets_test.c — MIME types, the embedded table, and --web-dir mode
 * refusing traversal (.., absolute, NUL, symlinks out of the folder). */
#include "harness.h"

#include "http/assets.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_mime(void)
{
    CHECK_EQ_STR(assets_mime("/index.html"), "text/html; charset=utf-8");
    CHECK_EQ_STR(assets_mime("/js/app.js"), "text/javascript; charset=utf-8");
    CHECK_EQ_STR(assets_mime("/css/app.css"), "text/css; charset=utf-8");
    CHECK_EQ_STR(assets_mime("/favicon.svg"), "image/svg+xml");
    CHECK_EQ_STR(assets_mime("/logo.PNG"), "image/png");
    CHECK_EQ_STR(assets_mime("/dev/fixtures/runs.json"), "application/json");
    CHECK_EQ_STR(assets_mime("/favicon.ico"), "image/x-icon");
    CHECK_EQ_STR(assets_mime("/fonts/x.woff2"), "font/woff2");
    CHECK_EQ_STR(assets_mime("/README"), "application/octet-stream");
    CHECK_EQ_STR(assets_mime("/dir.js/README"), "application/octet-stream");
    CHECK_EQ_STR(assets_mime("/x.exe"), "application/octet-stream");
}

static void test_table(void)
{
    int n = 0;

    for (const struct asset *a = assets_table; a->path; a++, n++) {
        CHECK(a->path[0] == '/');
        CHECK(a->data != NULL);
        CHECK(a->data[a->len] == 0); /* gen_assets.sh appends a NUL */
        CHECK(assets_find(a->path) == a);
    }
    if (assets_find("/index.html")) CHECK(assets_find("/") == assets_find("/index.html"));
    CHECK(assets_find("/no/such/file.js") == NULL);
    CHECK(assets_find("/../index.html") == NULL);
    CHECK(assets_find("") == NULL);
    printf("  %d embedded assets\n", n);
}

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static int open_rc(const char *path, size_t len)
{
    struct err e;
    uint64_t size = 0;
    int fd = -1, rc;
    char web[PATH_MAX];

    snprintf(web, sizeof web, "%s/web", root);
    rc = assets_open_disk(web, path, len, &fd, &size, &e);
    if (rc == 0) close(fd);
    return rc;
}

static int open_str(const char *path)
{
    return open_rc(path, strlen(path));
}

static void test_disk(void)
{
    char web[PATH_MAX], p[PATH_MAX];
    struct err e;
    uint64_t size = 0;
    int fd = -1;

    strcpy(root, "/tmp/tb_assets_test_XXXXXX");
    REQUIRE(mkdtemp(root) != NULL);
    snprintf(web, sizeof web, "%s/web", root);
    mkdir(web, 0700);
    snprintf(p, sizeof p, "%s/web/js", root);
    mkdir(p, 0700);
    put("web/index.html", "<!doctype html>");
    put("web/js/app.js", "export {};");
    put("web/.hidden", "secret");
    put("secret.txt", "outside");
    snprintf(p, sizeof p, "%s/web/escape.txt", root);
    CHECK(symlink("../secret.txt", p) == 0);
    snprintf(p, sizeof p, "%s/web/up", root);
    CHECK(symlink("..", p) == 0);
    snprintf(p, sizeof p, "%s/web/inside.js", root);
    CHECK(symlink("js/app.js", p) == 0);

    CHECK_EQ_INT(assets_open_disk(web, "/", 1, &fd, &size, &e), 0);
    CHECK(size == strlen("<!doctype html>"));
    if (fd >= 0) close(fd);
    CHECK_EQ_INT(open_str("/index.html"), 0);
    CHECK_EQ_INT(open_str("/js/app.js"), 0);
    CHECK_EQ_INT(open_str("/inside.js"), 0); /* a symlink that stays inside is fine */

    CHECK_EQ_INT(open_str("/nope.js"), ERR_NOT_FOUND);
    CHECK_EQ_INT(open_str("/js"), ERR_NOT_FOUND);  /* folders are not files */
    CHECK_EQ_INT(open_str("/js/"), ERR_NOT_FOUND);
    CHECK_EQ_INT(open_str("/index.html/x"), ERR_NOT_FOUND);

    CHECK_EQ_INT(open_str("/../secret.txt"), ERR_INVALID);
    CHECK_EQ_INT(open_str("/js/../index.html"), ERR_INVALID);
    CHECK_EQ_INT(open_str("/js/.."), ERR_INVALID);
    CHECK_EQ_INT(open_str("/./index.html"), ERR_INVALID);
    CHECK_EQ_INT(open_str("/.hidden"), ERR_INVALID);
    CHECK_EQ_INT(open_str("//etc/passwd"), ERR_INVALID);
    CHECK_EQ_INT(open_str("index.html"), ERR_INVALID);
    CHECK_EQ_INT(open_str(""), ERR_INVALID);
    CHECK_EQ_INT(open_str("/js\\..\\..\\secret.txt"), ERR_INVALID);
    CHECK_EQ_INT(open_rc("/index.html\0.png", 16), ERR_INVALID);
    CHECK_EQ_INT(open_str("/escape.txt"), ERR_INVALID); /* symlink out of web_dir */
    CHECK_EQ_INT(open_str("/up/secret.txt"), ERR_INVALID);
    /* Containment is judged on the resolved path: this one comes back in. */
    CHECK_EQ_INT(open_str("/up/web/index.html"), 0);

    CHECK_EQ_INT(assets_open_disk("/nonexistent-web-dir", "/index.html", 11, &fd, &size, &e), ERR_IO);

    /* Clean up the scratch tree. */
    snprintf(p, sizeof p, "rm -rf '%s'", root);
    CHECK(system(p) == 0);
}

int main(void)
{
    RUN(test_mime);
    RUN(test_table);
    RUN(test_disk);
    return harness_done("assets");
}

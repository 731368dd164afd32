/* fsutil_test — folder creation modes, recursive removal, copies, moves. */
#include "../../../server/base/fsutil.c"
#include "harness.h"

static char root[] = "/tmp/tb_fsutil_XXXXXX";

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

static void test_mkdirs_private(void)
{
    struct err e;
    char *p = xasprintf("%s/a/b/c", root);
    mode_t old = umask(022);
    CHECK_EQ_INT(fsutil_mkdirs(p, &e), 0);
    umask(old);
    struct stat st;
    CHECK(stat(p, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_EQ_INT(st.st_mode & 0777, 0700);
    CHECK_EQ_INT(fsutil_mkdirs(p, &e), 0); /* idempotent */
    char *f = xasprintf("%s/file", root);
    write_file(f, "x");
    CHECK(fsutil_mkdirs(f, &e) != 0); /* a file in the way */
    free(f);
    free(p);
}

static void test_copy_move_rmtree(void)
{
    struct err e;
    char *a = xasprintf("%s/src.txt", root), *b = xasprintf("%s/dst.txt", root), *c = xasprintf("%s/moved.txt", root);
    write_file(a, "payload");
    CHECK_EQ_INT(fsutil_copy(a, b, &e), 0);
    CHECK_EQ_INT(fsutil_file_size(b), 7);
    CHECK(fsutil_copy(a, b, &e) != 0); /* never overwrites */
    CHECK_EQ_INT(fsutil_move(b, c, &e), 0);
    CHECK_EQ_INT(fsutil_file_size(b), -1);
    CHECK_EQ_INT(fsutil_file_size(c), 7);
    char *l = xasprintf("%s/linked.txt", root);
    CHECK_EQ_INT(fsutil_link_or_copy(a, l, &e), 0);
    CHECK_EQ_INT(fsutil_file_size(l), 7);
    CHECK_EQ_INT(fsutil_rmtree(root, &e), 0);
    struct stat st;
    CHECK(stat(root, &st) != 0);
    CHECK_EQ_INT(fsutil_rmtree(root, &e), 0); /* missing is fine */
    free(a);
    free(b);
    free(c);
    free(l);
}

/* Two folders swap names in one step; a missing one is ERR_NOT_FOUND and
 * changes nothing. */
static void test_exchange(void)
{
    struct err e;
    char *a = xasprintf("%s/xa", root), *b = xasprintf("%s/xb", root);
    char *fa = xasprintf("%s/f", a), *fb = xasprintf("%s/f", b), buf[8] = "";
    CHECK_EQ_INT(fsutil_mkdirs(a, &e), 0);
    CHECK_EQ_INT(fsutil_mkdirs(b, &e), 0);
    write_file(fa, "A");
    write_file(fb, "B");
    CHECK_EQ_INT(fsutil_exchange(a, b, &e), 0);
    FILE *f = fopen(fa, "r");
    REQUIRE(f != NULL);
    CHECK(fgets(buf, sizeof buf, f) != NULL);
    fclose(f);
    CHECK_EQ_STR(buf, "B");
    fsutil_rmtree(b, &e);
    CHECK_EQ_INT(fsutil_exchange(a, b, &e), ERR_NOT_FOUND);
    CHECK(fsutil_file_size(fa) == 1);
    fsutil_crash_point("not-set"); /* TB_TEST_CRASH_AT unset: nothing happens */
    fsutil_rmtree(a, &e);
    free(a);
    free(b);
    free(fa);
    free(fb);
}

static void test_errno_codes(void)
{
    CHECK_EQ_INT(fsutil_errno_code(ENOSPC), ERR_NOSPACE);
    CHECK_EQ_INT(fsutil_errno_code(EROFS), ERR_NOSPACE);
    CHECK_EQ_INT(fsutil_errno_code(EACCES), ERR_IO);
}

/* Whole writes through a pipe; a full disk (/dev/full) is ERR_NOSPACE with
 * the caller's words first. */
static void test_write_all(void)
{
    struct err e;
    int p[2];
    char big[100000], back[100000];
    REQUIRE(pipe(p) == 0);
    memset(big, 'x', 60000);
    CHECK_EQ_INT(fsutil_write_all(p[1], big, 60000, "piping", &e), 0);
    close(p[1]);
    size_t got = 0;
    ssize_t r;
    while ((r = read(p[0], back + got, sizeof back - got)) > 0) got += (size_t)r;
    close(p[0]);
    CHECK_EQ_INT(got, 60000);
    int fd = open("/dev/full", O_WRONLY);
    if (fd >= 0) {
        CHECK_EQ_INT(fsutil_write_all(fd, "abc", 3, "saving the upload", &e), ERR_NOSPACE);
        CHECK(strncmp(e.msg, "saving the upload: ", 19) == 0);
        close(fd);
    }
}

/* The writeback of a file with dirty pages is queued (a time, not -1) and
 * leaves its bytes as they were; a missing file is -1, and the fsync
 * after it still works. */
static void test_writeback(void)
{
    struct err e;
    char *dir = xasprintf("%s/wb", root), *p = xasprintf("%s/dirty.bin", dir);
    REQUIRE(fsutil_mkdirs(dir, &e) == 0);
    static char buf[1 << 20];
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (char)(i * 131 + 7);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    REQUIRE(fd >= 0);
    for (int k = 0; k < 4; k++) CHECK_EQ_INT(fsutil_write_all(fd, buf, sizeof buf, "writing", &e), 0);
    close(fd);
    CHECK(fsutil_writeback_start(p) >= 0);
    CHECK_EQ_INT(fsutil_fsync_path(p, &e), 0);
    CHECK_EQ_INT(fsutil_file_size(p), 4 << 20);
    static char back[1 << 20];
    fd = open(p, O_RDONLY);
    REQUIRE(fd >= 0);
    CHECK(pread(fd, back, sizeof back, 3 << 20) == (ssize_t)sizeof back);
    CHECK(memcmp(back, buf, sizeof buf) == 0);
    close(fd);
    char *gone = xasprintf("%s/nothing-here", dir);
    CHECK(fsutil_writeback_start(gone) == -1);
    free(gone);
    free(p);
    free(dir);
}

int main(void)
{
    if (!mkdtemp(root)) return 1;
    RUN(test_mkdirs_private);
    RUN(test_exchange);
    RUN(test_copy_move_rmtree);
    RUN(test_errno_codes);
    RUN(test_write_all);
    RUN(test_writeback);
    return harness_done("fsutil_test");
}

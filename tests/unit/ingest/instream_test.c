/* instream_test.c — the byte source: plain and gzip files, concatenated
 * members, empty files, corrupt and truncated gzip, the inflate limit, a
 * gzip bomb stopped by the ratio limit, and progress (raw_consumed).
 * Every test runs twice, with igzip (when built in) and with zlib forced
 * (lim.zlib_only), and test_inflaters_agree compares the two directly. */
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "base/fsutil.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "ingest/instream.h"

static char tmpdir[] = "/tmp/instream_test-XXXXXX";

/* Writes n bytes to tmpdir/name; returns the path (owned by caller). */
static char *write_file(const char *name, const void *d, size_t n)
{
    char *path = xasprintf("%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(d, 1, n, f) != n)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fclose(f);
    return path;
}

/* gzip of d[0..n) at level (one member). OUT *out owned by caller. */
static size_t gzip_mem(const void *d, size_t n, int level, unsigned char **out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) exit(1);
    size_t cap = deflateBound(&z, n) + 64;
    *out = xmalloc(cap);
    z.next_in = (unsigned char *)d;
    z.avail_in = (uInt)n;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) exit(1);
    deflateEnd(&z);
    return cap - z.avail_out;
}

/* Test content: text that compresses well but is not trivially uniform. */
static char *make_text(size_t n)
{
    char *s = xmalloc(n + 1);
    unsigned x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        s[i] = "{}[]\",:abcdefghij0123456789 \n"[(x >> 16) % 29];
    }
    s[n] = '\0';
    return s;
}

/* Reads the whole stream with buffers of `step` bytes, checking that
 * raw_consumed only grows. OUT *out (owned), *len. Returns the result. */
static int read_all(struct instream *s, size_t step, char **out, size_t *len, struct err *e)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap);
    uint64_t last = 0;
    int rc = 0, monotone = 1;

    for (;;) {
        size_t got;
        if (n + step > cap) {
            cap = (n + step) * 2;
            buf = xrealloc(buf, cap);
        }
        rc = instream_read(s, buf + n, step, &got, e);
        uint64_t now = instream_raw_consumed(s);
        if (now < last || now > instream_raw_size(s)) monotone = 0;
        last = now;
        if (rc != 0 || got == 0) break;
        n += got;
    }
    CHECK(monotone);
    *out = buf;
    *len = n;
    return rc;
}

/* The pass: 1 forces zlib (set by main before each round of tests). */
static int zlib_only;
static struct instream_limits no_limits = { 0, 0, 0 };

static void test_plain_file(void)
{
    char *text = make_text(700000);
    char *path = write_file("plain.json", text, 700000);
    struct instream *s;
    struct err e;
    char *got;
    size_t n;

    REQUIRE(instream_open_file(path, &no_limits, &s, &e) == 0);
    CHECK_EQ_INT(instream_is_gzip(s), 0);
    CHECK_EQ_INT(instream_raw_size(s), 700000);
    size_t mn;
    const unsigned char *m = instream_magic(s, &mn);
    CHECK(mn == 16 && memcmp(m, text, 16) == 0);
    CHECK_EQ_INT(read_all(s, 4093, &got, &n, &e), 0);
    CHECK(n == 700000 && memcmp(got, text, n) == 0);
    CHECK_EQ_INT(instream_raw_consumed(s), 700000);
    instream_close(s);
    free(got);
    free(path);
    free(text);
}

static void test_gzip_file(void)
{
    size_t tn = 2000000;
    char *text = make_text(tn);
    unsigned char *gz;
    size_t gn = gzip_mem(text, tn, 6, &gz);
    char *path = write_file("one.json.gz", gz, gn);
    int sizes[] = { 1, 777, 65536, 1 << 20 };

    for (int i = 0; i < 4; i++) {
        struct instream *s;
        struct err e;
        char *got;
        size_t n;
        REQUIRE(instream_open_file(path, &no_limits, &s, &e) == 0);
        CHECK_EQ_INT(instream_is_gzip(s), 1);
        CHECK_EQ_INT(instream_raw_size(s), gn);
        size_t mn;
        const unsigned char *m = instream_magic(s, &mn);
        CHECK(mn >= 2 && m[0] == 0x1f && m[1] == 0x8b);
        if (sizes[i] == 1) {
            /* one byte at a time is slow: check the first 100 KB only */
            char b;
            size_t k = 0, got1 = 1;
            int ok = 1;
            while (k < 100000 && got1 == 1) {
                if (instream_read(s, &b, 1, &got1, &e) != 0 || (got1 && b != text[k])) ok = 0;
                k += got1;
            }
            CHECK(ok && k == 100000);
        } else {
            CHECK_EQ_INT(read_all(s, (size_t)sizes[i], &got, &n, &e), 0);
            CHECK(n == tn && memcmp(got, text, n) == 0);
            CHECK_EQ_INT(instream_raw_consumed(s), gn);
            free(got);
        }
        instream_close(s);
    }
    free(path);
    free(gz);
    free(text);
}

/* `cat a.gz b.gz c.gz`, with zero padding after one member (tar and some
 * tools pad): one stream of a + b + c. */
static void test_concatenated_members(void)
{
    char *a = make_text(300000), *b = "second member\n", *c = make_text(5000);
    unsigned char *ga, *gb, *gc, *ge;
    size_t na = gzip_mem(a, 300000, 9, &ga), nb = gzip_mem(b, strlen(b), 1, &gb), nc = gzip_mem(c, 5000, 0, &gc);
    size_t ne = gzip_mem("", 0, 6, &ge);
    size_t total = na + nb + 64 + ne + nc;
    unsigned char *all = xcalloc(1, total);
    size_t k = 0;
    memcpy(all + k, ga, na), k += na;
    memcpy(all + k, gb, nb), k += nb;
    k += 64; /* zero padding */
    memcpy(all + k, ge, ne), k += ne; /* an empty member */
    memcpy(all + k, gc, nc), k += nc;
    char *path = write_file("cat.json.gz", all, k);
    char *want = xasprintf("%.*s%s%.*s", 300000, a, b, 5000, c);
    size_t wn = strlen(want);

    for (int mode = 0; mode < 2; mode++) {
        struct instream *s;
        struct err e;
        char *got;
        size_t n;
        if (mode == 0) REQUIRE(instream_open_file(path, &no_limits, &s, &e) == 0);
        else REQUIRE(instream_open_mem(all, k, &no_limits, &s, &e) == 0);
        CHECK_EQ_INT(read_all(s, 10007, &got, &n, &e), 0);
        CHECK(n == wn && memcmp(got, want, n) == 0);
        CHECK_EQ_INT(instream_raw_consumed(s), k);
        instream_close(s);
        free(got);
    }
    free(want);
    free(path);
    free(all);
    free(ga);
    free(gb);
    free(gc);
    free(ge);
    free(a);
    free(c);
}

static void test_empty_file(void)
{
    char *path = write_file("empty.json", "", 0);
    struct instream *s;
    struct err e;
    char buf[16];
    size_t got = 99, mn = 99;

    REQUIRE(instream_open_file(path, &no_limits, &s, &e) == 0);
    CHECK_EQ_INT(instream_is_gzip(s), 0);
    CHECK_EQ_INT(instream_raw_size(s), 0);
    instream_magic(s, &mn);
    CHECK_EQ_INT(mn, 0);
    CHECK_EQ_INT(instream_read(s, buf, sizeof buf, &got, &e), 0);
    CHECK_EQ_INT(got, 0);
    instream_close(s);
    free(path);

    /* the same from memory */
    REQUIRE(instream_open_mem("", 0, &no_limits, &s, &e) == 0);
    CHECK_EQ_INT(instream_read(s, buf, sizeof buf, &got, &e), 0);
    CHECK_EQ_INT(got, 0);
    instream_close(s);
}

static void test_open_errors(void)
{
    struct instream *s = NULL;
    struct err e;
    char *missing = xasprintf("%s/does-not-exist.json", tmpdir);
    CHECK_EQ_INT(instream_open_file(missing, &no_limits, &s, &e), ERR_NOT_FOUND);
    CHECK(strstr(e.msg, "does-not-exist") != NULL);
    CHECK_EQ_INT(instream_open_file(tmpdir, &no_limits, &s, &e), ERR_INVALID);
    CHECK(strstr(e.msg, "not a regular file") != NULL);
    free(missing);
}

/* Magic bytes of gzip followed by something else. */
static void test_not_really_gzip(void)
{
    static const char *cases[] = { "\x1f\x8b" "this is not a deflate stream, just text after the magic",
                                   "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" "\xff\xff\xff\xff garbage" };
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "fake%d.json.gz", i);
        char *path = write_file(name, cases[i], strlen(cases[i]));
        struct instream *s;
        struct err e;
        char *got;
        size_t n;
        REQUIRE(instream_open_file(path, &no_limits, &s, &e) == 0);
        CHECK_EQ_INT(instream_is_gzip(s), 1);
        CHECK_EQ_INT(read_all(s, 4096, &got, &n, &e), ERR_INVALID);
        CHECK(strstr(e.msg, "gzip") != NULL);
        instream_close(s);
        free(got);
        free(path);
    }
}

static void test_truncated_gzip(void)
{
    char *text = make_text(400000);
    unsigned char *gz;
    size_t gn = gzip_mem(text, 400000, 6, &gz);
    /* cut in the deflate data, in the trailer, and right after the header */
    size_t cuts[] = { gn / 2, gn - 4, gn - 1, 10, 2 };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "cut%zu.json.gz", i);
        char *path = write_file(name, gz, cuts[i]);
        struct instream *s;
        struct err e;
        char *got;
        size_t n;
        REQUIRE(instream_open_file(path, &no_limits, &s, &e) == 0);
        int rc = read_all(s, 65536, &got, &n, &e);
        CHECK_EQ_INT(rc, ERR_INVALID);
        if (rc == ERR_INVALID) CHECK(strstr(e.msg, "truncated") != NULL);
        CHECK(n <= 400000 && memcmp(got, text, n) == 0); /* what came out was right */
        instream_close(s);
        free(got);
        free(path);
    }
    free(gz);
    free(text);
}

static void test_inflate_limit(void)
{
    char *text = make_text(100000);
    unsigned char *gz;
    size_t gn = gzip_mem(text, 100000, 6, &gz);
    char *plain = write_file("limit.json", text, 100000);
    char *zipped = write_file("limit.json.gz", gz, gn);
    const char *paths[] = { plain, zipped };

    for (int i = 0; i < 2; i++) {
        struct instream_limits at = { 100000, 0, zlib_only }, below = { 99999, 0, zlib_only };
        struct instream *s;
        struct err e;
        char *got;
        size_t n;
        REQUIRE(instream_open_file(paths[i], &at, &s, &e) == 0);
        CHECK_EQ_INT(read_all(s, 8192, &got, &n, &e), 0); /* exactly at the limit is fine */
        CHECK_EQ_INT(n, 100000);
        instream_close(s);
        free(got);
        REQUIRE(instream_open_file(paths[i], &below, &s, &e) == 0);
        CHECK_EQ_INT(read_all(s, 8192, &got, &n, &e), ERR_TOO_LARGE);
        CHECK(strstr(e.msg, "inflate_limit") != NULL);
        CHECK(n <= 99999 + 8192);
        instream_close(s);
        free(got);
    }
    free(plain);
    free(zipped);
    free(gz);
    free(text);
}

/* 200 MB of zeros compress about 1000:1. With the default ratio 200 the
 * read must stop soon after the 64 MiB grace, long before 200 MB. */
static void test_gzip_bomb(void)
{
    size_t total = 200u << 20, chunk = 1 << 20;
    char *path = xasprintf("%s/bomb.json.gz", tmpdir);
    gzFile g = gzopen(path, "wb9");
    char *zeros = xcalloc(1, chunk);
    REQUIRE(g != NULL);
    for (size_t k = 0; k < total; k += chunk) gzwrite(g, zeros, (unsigned)chunk);
    gzclose(g);
    free(zeros);
    int64_t raw = fsutil_file_size(path);
    CHECK(raw > 0 && raw < (int64_t)(total / 200));

    struct instream_limits lim = { 64ull << 30, 200, zlib_only };
    struct instream *s;
    struct err e;
    struct timespec t0, t1;
    char *buf = xmalloc(1 << 20);
    uint64_t out = 0;
    size_t got;
    int rc;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    REQUIRE(instream_open_file(path, &lim, &s, &e) == 0);
    while ((rc = instream_read(s, buf, 1 << 20, &got, &e)) == 0 && got) out += got;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    CHECK_EQ_INT(rc, ERR_TOO_LARGE);
    CHECK(strstr(e.msg, "gzip bomb") != NULL);
    CHECK(out < (80ull << 20)); /* stopped just past the 64 MiB grace */
    CHECK(secs < 10);
    instream_close(s);

    /* ratio 0 = unlimited: the same file reads to the end */
    struct instream_limits nolim = { 0, 0, zlib_only };
    REQUIRE(instream_open_file(path, &nolim, &s, &e) == 0);
    out = 0;
    while ((rc = instream_read(s, buf, 1 << 20, &got, &e)) == 0 && got) out += got;
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(out, total);
    instream_close(s);
    unlink(path);
    free(buf);
    free(path);
}

/* Progress on a large gzip file: raw_consumed grows steadily to the size. */
static void test_progress(void)
{
    /* 16 inflated blocks: the inflater thread may run up to ZBLOCKS ahead of
     * the reader (more on a busy machine, where it got there first), and
     * progress must still move many times. */
    size_t tn = 16000000;
    char *text = make_text(tn);
    unsigned char *gz;
    size_t gn = gzip_mem(text, tn, 6, &gz);
    char *path = write_file("progress.json.gz", gz, gn);
    struct instream *s;
    struct err e;
    char buf[65536];
    size_t got;
    uint64_t last = 0;
    int steps = 0, monotone = 1, rc;

    REQUIRE(instream_open_file(path, &no_limits, &s, &e) == 0);
    CHECK_EQ_INT(instream_raw_consumed(s), 0);
    while ((rc = instream_read(s, buf, sizeof buf, &got, &e)) == 0 && got) {
        uint64_t now = instream_raw_consumed(s);
        if (now < last) monotone = 0;
        if (now > last) steps++;
        last = now;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK(monotone);
    CHECK(steps > 3); /* progress moves during the read, not only at its end */
    CHECK_EQ_INT(last, gn);
    instream_close(s);
    free(path);
    free(gz);
    free(text);
}

/* Reads path (file mode) or d[0..n) (memory mode) whole with one inflater.
 * OUT *out (owned), *len, *e. Returns the result. */
static int read_with(int zlib, const char *path, const void *d, size_t n, size_t step, char **out, size_t *len,
                     struct err *e)
{
    struct instream_limits lim = { 0, 0, zlib };
    struct instream *s;
    *out = NULL;
    *len = 0;
    int rc = path ? instream_open_file(path, &lim, &s, e) : instream_open_mem(d, n, &lim, &s, e);
    if (rc) return rc;
    const char *which = instream_inflater(s);
#ifdef TB_HAVE_ISAL
    CHECK_EQ_STR(which ? which : "-", zlib ? "zlib" : "igzip");
#else
    CHECK_EQ_STR(which ? which : "-", "zlib");
#endif
    rc = read_all(s, step, out, len, e);
    instream_close(s);
    return rc;
}

/* igzip and zlib give the same bytes for good input, and the same error
 * (code and message up to the position) for bad input: a flipped bit in
 * the data, the CRC or the length, cuts, a bad method, garbage members. */
static void test_inflaters_agree(void)
{
    size_t tn = 1500000;
    char *text = make_text(tn);
    unsigned char *gz;
    size_t gn = gzip_mem(text, tn, 6, &gz);
    unsigned char *bad = xmalloc(gn + 16);
    struct {
        size_t at, len;
        int xor;
    } cases[] = { { 0, gn, 0 },        { gn / 3, gn, 0x10 }, { gn - 6, gn, 0x01 }, { gn - 2, gn, 0x01 },
                  { 2, gn, 0x07 },     { 0, gn - 3, 0 },     { 0, 11, 0 },         { 0, gn / 2, 0 },
                  { 3, gn, 0xe0 } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(bad, gz, gn);
        bad[cases[i].at] ^= (unsigned char)cases[i].xor;
        size_t n = cases[i].len;
        char name[32];
        snprintf(name, sizeof name, "agree%zu.json.gz", i);
        char *path = write_file(name, bad, n);
        for (int mode = 0; mode < 2; mode++) {
            char *a, *b;
            size_t na, nb;
            struct err ea, eb;
            err_clear(&ea);
            err_clear(&eb);
            int ra = read_with(0, mode ? NULL : path, bad, n, 65536, &a, &na, &ea);
            int rb = read_with(1, mode ? NULL : path, bad, n, 65536, &b, &nb, &eb);
            CHECK_EQ_INT(ra, rb);
            if (ra != rb) fprintf(stderr, "case %zu: %s / %s\n", i, ea.msg, eb.msg);
            if (ra == 0) CHECK(na == nb && memcmp(a, b, na) == 0);
            /* the same sentence; the byte it names may differ */
            const char *ca = strchr(ea.msg, ' '), *cb = strchr(eb.msg, ' ');
            if (ra) CHECK(strncmp(ea.msg, eb.msg, 12) == 0 && ca && cb);
            if (i == 0) CHECK(ra == 0 && na == tn && memcmp(a, text, tn) == 0);
            free(a);
            free(b);
        }
        free(path);
    }
    free(bad);
    free(gz);
    free(text);
}

/* A member ending within a few bytes of a 256 KiB file read, then another
 * member, zero padding or junk: igzip hands back the bytes it read ahead,
 * some from the previous read. Both inflaters give the same bytes, the
 * same error and progress that never moves back, at every offset. */
static void test_member_end_at_read_boundary(void)
{
    const size_t chunk = 256 * 1024;
    char *text = make_text(chunk);
    unsigned char *tail;
    size_t tn = gzip_mem("after", 5, 6, &tail);
    int found = 0;
    for (size_t len = chunk - 200; len < chunk && found < 12; len++) {
        unsigned char *gz;
        size_t gn = gzip_mem(text, len, 0, &gz); /* stored: one more byte in, one more out */
        if (gn + 12 < chunk || gn > chunk) {
            free(gz);
            continue;
        }
        found++;
        for (int after = 0; after < 3; after++) {
            unsigned char *all = xcalloc(1, gn + tn + 8);
            memcpy(all, gz, gn);
            size_t n = gn;
            if (after == 0) memcpy(all + n, tail, tn), n += tn;
            else if (after == 1) n += 8; /* zero padding */
            else memcpy(all + n, "junk", 4), n += 4;
            char *path = write_file("boundary.json.gz", all, n);
            char *a, *b;
            size_t na, nb;
            struct err ea, eb;
            int ra = read_with(0, path, NULL, 0, 65536, &a, &na, &ea);
            int rb = read_with(1, path, NULL, 0, 65536, &b, &nb, &eb);
            CHECK_EQ_INT(ra, rb);
            CHECK_EQ_INT(ra, after == 2 ? ERR_INVALID : 0);
            if (ra == 0) CHECK(na == nb && memcmp(a, b, na) == 0 && na == len + (after == 0 ? 5 : 0));
            else CHECK(strrchr(ea.msg, ':') && strrchr(eb.msg, ':') &&
                       strcmp(strrchr(ea.msg, ':'), strrchr(eb.msg, ':')) == 0); /* what, not where */
            if (ra == 0) CHECK(memcmp(a, text, len) == 0);
            free(a);
            free(b);
            free(path);
            free(all);
        }
        free(gz);
    }
    CHECK(found >= 10);
    free(tail);
    free(text);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    for (zlib_only = 0; zlib_only < 2; zlib_only++) {
        no_limits.zlib_only = zlib_only;
        RUN(test_plain_file);
        RUN(test_gzip_file);
        RUN(test_concatenated_members);
        RUN(test_empty_file);
        RUN(test_open_errors);
        RUN(test_not_really_gzip);
        RUN(test_truncated_gzip);
        RUN(test_inflate_limit);
        RUN(test_gzip_bomb);
        RUN(test_progress);
    }
    RUN(test_inflaters_agree);
    RUN(test_member_end_at_read_boundary);
    struct err e;
    fsutil_rmtree(tmpdir, &e);
    return harness_done("instream");
}

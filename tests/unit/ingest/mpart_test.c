/* mpart_test.c — the multipart parser: every split point, look-alike
 * delimiters, CRLF edges, truncation, limits and file name cleaning. */
#include "harness.h"
#include "base/xmalloc.h"
#include "ingest/mpart.h"

/* The callbacks write a transcript: "[name|filename|ctype]" at a part's
 * start, the data bytes, "{end}" at its end. Equal transcripts mean equal
 * parses whatever the chunking. */
struct rec {
    char *buf;
    size_t len, cap;
    int fail_at_part; /* part_begin of this index fails; -1 never */
};

static void rec_add(struct rec *r, const char *s, size_t n)
{
    if (r->len + n + 1 > r->cap) {
        r->cap = (r->len + n + 1) * 2;
        r->buf = xrealloc(r->buf, r->cap);
    }
    memcpy(r->buf + r->len, s, n);
    r->len += n;
    r->buf[r->len] = '\0';
}

static int on_begin(void *ctx, const struct mpart_part *p, struct err *e)
{
    struct rec *r = ctx;
    char tmp[600];
    int n;

    if (p->index == r->fail_at_part) return err_set(e, ERR_IO, "disk full (test)");
    n = snprintf(tmp, sizeof tmp, "[%s|%s|%s]", p->name, p->filename ? p->filename : "-",
                 p->content_type ? p->content_type : "-");
    rec_add(r, tmp, (size_t)n);
    return 0;
}

static int on_data(void *ctx, const char *d, size_t n, struct err *e)
{
    CHECK(n > 0);
    rec_add(ctx, d, n);
    return 0;
}

static int on_end(void *ctx, struct err *e)
{
    rec_add(ctx, "{end}", 5);
    return 0;
}

static const struct mpart_callbacks cbs = { on_begin, on_data, on_end };

/* Parses body fed in pieces cut at the offsets in cuts[] (ascending).
 * Returns the first error code (0 if none) and the transcript in r. */
static int parse_cuts(const char *boundary, const char *body, size_t n, const size_t *cuts, int ncuts,
                      struct rec *r, struct err *e)
{
    struct mpart *p;
    size_t at = 0;
    int rc;

    r->len = 0;
    rec_add(r, "", 0);
    if ((rc = mpart_new(boundary, &cbs, r, &p, e)) < 0) return rc;
    for (int i = 0; i <= ncuts && rc == 0; i++) {
        size_t to = i < ncuts ? cuts[i] : n;
        rc = mpart_feed(p, body + at, to - at, e);
        at = to;
    }
    if (rc == 0) rc = mpart_finish(p, e);
    mpart_free(p);
    return rc;
}

static int parse_whole(const char *boundary, const char *body, size_t n, struct rec *r, struct err *e)
{
    return parse_cuts(boundary, body, n, NULL, 0, r, e);
}

#define B "xYz-Bound4ry"
#define BODY2                                                                                       \
    "--" B "\r\n"                                                                                   \
    "Content-Disposition: form-data; name=\"name\"\r\n"                                             \
    "\r\n"                                                                                          \
    "my run\r\n"                                                                                    \
    "--" B "\r\n"                                                                                   \
    "Content-Disposition: form-data; name=\"file\"; filename=\"rank0.json\"\r\n"                    \
    "Content-Type: application/json\r\n"                                                            \
    "\r\n"                                                                                          \
    "{\"traceEvents\": []}\r\n"                                                                     \
    "--" B "--\r\n"
#define WANT2 "[name|-|-]my run{end}[file|rank0.json|application/json]{\"traceEvents\": []}{end}"

static void test_basic(void)
{
    struct rec r = { 0 };
    struct err e;

    r.fail_at_part = -1;
    CHECK_EQ_INT(parse_whole(B, BODY2, sizeof BODY2 - 1, &r, &e), 0);
    CHECK_EQ_STR(r.buf, WANT2);
    free(r.buf);
}

/* Every cut into two pieces, every cut into three, and byte by byte. */
static void check_all_splits(const char *boundary, const char *body, size_t n, const char *want, int want_rc)
{
    struct rec r = { 0 };
    struct err e;
    size_t cuts[2];
    int bad = 0;

    r.fail_at_part = -1;
    for (size_t i = 0; i <= n; i++) {
        cuts[0] = i;
        int rc = parse_cuts(boundary, body, n, cuts, 1, &r, &e);
        if (rc != want_rc || (want && strcmp(r.buf, want) != 0)) bad++;
        for (size_t j = i; j <= n && n < 600; j += 3) {
            cuts[1] = j;
            rc = parse_cuts(boundary, body, n, cuts, 2, &r, &e);
            if (rc != want_rc || (want && strcmp(r.buf, want) != 0)) bad++;
        }
    }
    {
        size_t *all = xmalloc((n + 1) * sizeof *all);
        for (size_t i = 0; i < n; i++) all[i] = i + 1;
        int rc = parse_cuts(boundary, body, n, all, (int)n, &r, &e);
        if (rc != want_rc || (want && strcmp(r.buf, want) != 0)) bad++;
        free(all);
    }
    CHECK_EQ_INT(bad, 0);
    free(r.buf);
}

static void test_splits(void)
{
    check_all_splits(B, BODY2, sizeof BODY2 - 1, WANT2, 0);
}

/* Data that looks like the delimiter but is not: each must come out as
 * content, whatever the chunking. */
static void test_lookalikes(void)
{
    static const char *cases[] = {
        "--" B,                         /* no CRLF before it */
        "\r\n--xYz-Bound4r",            /* a prefix */
        "\r\n--xYz-Bound4r\r\n--xYz-Bo", /* prefix then restart */
        "\r\r\n-",                      /* CR CR LF */
        "\r\n-" B,                      /* one dash */
        "\n--" B,                       /* LF only */
        "\r--" B,                       /* CR only */
        "\r\n\r\n",                     /* blank lines */
        "ends with CR\r",
        "ends with CRLF\r\n",
        "",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[512], want[512];
        int n = snprintf(body, sizeof body,
                         "preamble\r\n--" B "\r\n"
                         "Content-Disposition: form-data; name=\"f\"; filename=\"a.json\"\r\n\r\n"
                         "%s\r\n--" B "--",
                         cases[i]);
        snprintf(want, sizeof want, "[f|a.json|-]%s{end}", cases[i]);
        check_all_splits(B, body, (size_t)n, want, 0);
    }
}

static void test_crlf_edges(void)
{
    struct rec r = { 0 };
    struct err e;
    static const char padded[] = "--" B " \t\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--" B
                                 "--\r\nepilogue --" B "\r\n junk";
    static const char empty_part[] = "--" B "\r\nContent-Disposition: form-data; name=a\r\n\r\n\r\n--" B "--";
    static const char lf_only[] = "--" B "\nContent-Disposition: form-data; name=a\n\nx\n--" B "--\n";
    static const char bad_after[] = "--" B "\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--" B "X";
    static const char bare_cr_hdr[] = "--" B "\r\nContent-Disposition: form-data; name=a\rX\r\n\r\nx\r\n--" B "--";
    static const char no_headers[] = "--" B "\r\n\r\nx\r\n--" B "--";

    r.fail_at_part = -1;
    CHECK_EQ_INT(parse_whole(B, padded, sizeof padded - 1, &r, &e), 0);
    CHECK_EQ_STR(r.buf, "[a|-|-]x{end}");
    check_all_splits(B, padded, sizeof padded - 1, "[a|-|-]x{end}", 0);
    CHECK_EQ_INT(parse_whole(B, empty_part, sizeof empty_part - 1, &r, &e), 0);
    CHECK_EQ_STR(r.buf, "[a|-|-]{end}");
    CHECK_EQ_INT(parse_whole(B, lf_only, sizeof lf_only - 1, &r, &e), ERR_INVALID);
    CHECK_EQ_INT(parse_whole(B, bad_after, sizeof bad_after - 1, &r, &e), ERR_INVALID);
    CHECK_EQ_INT(parse_whole(B, bare_cr_hdr, sizeof bare_cr_hdr - 1, &r, &e), ERR_INVALID);
    CHECK_EQ_INT(parse_whole(B, no_headers, sizeof no_headers - 1, &r, &e), ERR_INVALID);
    free(r.buf);
}

static void test_truncated(void)
{
    struct rec r = { 0 };
    struct err e;
    int bad = 0;

    r.fail_at_part = -1;
    for (size_t n = 0; n < sizeof BODY2 - 3; n++) /* -3: "\r\n" after "--" is optional */
        if (parse_whole(B, BODY2, n, &r, &e) != ERR_INVALID) bad++;
    CHECK_EQ_INT(bad, 0);
    CHECK(strstr(e.msg, "truncated") != NULL);
    CHECK_EQ_INT(parse_whole(B, "", 0, &r, &e), ERR_INVALID);
    CHECK_EQ_INT(parse_whole(B, "no boundary at all", 18, &r, &e), ERR_INVALID);
    free(r.buf);
}

static void test_filenames(void)
{
    static const struct { const char *in, *out; } ok[] = {
        { "rank0.pt.trace.json.gz", "rank0.pt.trace.json.gz" },
        { "C:\\Users\\me\\trace.json", "trace.json" },
        { "/abs/path/x.json", "x.json" },
        { "../../etc/passwd", "passwd" },
        { "mixed/dir\\win/f", "f" },
        { "...", "..." },
        { "caf\xc3\xa9.json", "caf\xc3\xa9.json" },
        { "raw\xff.json.gz", "raw\xef\xbf\xbd.json.gz" },          /* not UTF-8: U+FFFD */
        { "r\xff\xfe.json", "r\xef\xbf\xbd\xef\xbf\xbd.json" },
    };
    static const char *bad[] = { "", ".", "..", "dir/", "dir\\", "a/..", "a\\.", "tab\there", "nl\nx" };
    char out[MPART_FILENAME_MAX + 1], longname[400];
    struct err e;

    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        CHECK_EQ_INT(mpart_filename_clean(ok[i].in, out, &e), 0);
        CHECK_EQ_STR(out, ok[i].out);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(mpart_filename_clean(bad[i], out, &e), ERR_INVALID);
    memset(longname, 'a', 256);
    longname[256] = '\0';
    CHECK_EQ_INT(mpart_filename_clean(longname, out, &e), ERR_INVALID);
    longname[255] = '\0';
    CHECK_EQ_INT(mpart_filename_clean(longname, out, &e), 0);
    /* 255 bytes, but longer than that once repaired */
    memset(longname, 0xff, 100);
    CHECK_EQ_INT(mpart_filename_clean(longname, out, &e), ERR_INVALID);
    CHECK(strstr(e.msg, "U+FFFD") != NULL);

    /* Through the parser: the callback sees the cleaned name; a refused
     * name fails the parse. */
    {
        struct rec r = { 0 };
        static const char win[] = "--" B "\r\nContent-Disposition: form-data; name=\"f\"; "
                                  "filename=\"C:\\dir\\r1.json\"\r\n\r\nx\r\n--" B "--";
        static const char dots[] = "--" B "\r\nContent-Disposition: form-data; name=\"f\"; "
                                   "filename=\"..\"\r\n\r\nx\r\n--" B "--";
        static const char empty[] = "--" B "\r\nContent-Disposition: form-data; name=\"f\"; "
                                    "filename=\"\"\r\n\r\n\r\n--" B "--";
        static const char esc[] = "--" B "\r\nContent-Disposition: form-data; name=\"f\"; "
                                  "filename=\"a\\\"b.json\"\r\n\r\nx\r\n--" B "--";
        r.fail_at_part = -1;
        CHECK_EQ_INT(parse_whole(B, win, sizeof win - 1, &r, &e), 0);
        CHECK_EQ_STR(r.buf, "[f|r1.json|-]x{end}");
        CHECK_EQ_INT(parse_whole(B, dots, sizeof dots - 1, &r, &e), ERR_INVALID);
        CHECK_EQ_INT(parse_whole(B, empty, sizeof empty - 1, &r, &e), ERR_INVALID);
        CHECK_EQ_INT(parse_whole(B, esc, sizeof esc - 1, &r, &e), 0);
        CHECK_EQ_STR(r.buf, "[f|a\"b.json|-]x{end}");
        free(r.buf);
    }
}

static void test_boundary_header(void)
{
    char b[MPART_BOUNDARY_MAX + 1];
    struct err e;
    char big[200];

    CHECK_EQ_INT(mpart_boundary("multipart/form-data; boundary=abc123", b, &e), 0);
    CHECK_EQ_STR(b, "abc123");
    CHECK_EQ_INT(mpart_boundary("Multipart/Form-Data;charset=utf-8;BOUNDARY=\"a b:c\"", b, &e), 0);
    CHECK_EQ_STR(b, "a b:c");
    CHECK_EQ_INT(mpart_boundary("multipart/form-data ; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW", b, &e), 0);
    CHECK_EQ_STR(b, "----WebKitFormBoundary7MA4YWxkTrZu0gW");
    CHECK_EQ_INT(mpart_boundary("multipart/form-data", b, &e), ERR_INVALID);
    CHECK_EQ_INT(mpart_boundary("multipart/form-data; boundary=", b, &e), ERR_INVALID);
    CHECK_EQ_INT(mpart_boundary("multipart/form-data; boundary=\"\"", b, &e), ERR_INVALID);
    CHECK_EQ_INT(mpart_boundary("multipart/form-data; boundary=\"ends with space \"", b, &e), ERR_INVALID);
    CHECK_EQ_INT(mpart_boundary("multipart/form-data; boundary=\"bad\rchar\"", b, &e), ERR_INVALID);
    CHECK_EQ_INT(mpart_boundary("multipart/form-data; boundary=a; boundary=b", b, &e), ERR_INVALID);
    CHECK_EQ_INT(mpart_boundary("multipart/form-data; boundary=\"unterminated", b, &e), ERR_INVALID);
    CHECK_EQ_INT(mpart_boundary("multipart/mixed; boundary=abc", b, &e), ERR_UNSUPPORTED);
    CHECK_EQ_INT(mpart_boundary("multipart/form-database; boundary=abc", b, &e), ERR_UNSUPPORTED);
    CHECK_EQ_INT(mpart_boundary("application/json", b, &e), ERR_UNSUPPORTED);
    CHECK_EQ_INT(mpart_boundary(NULL, b, &e), ERR_UNSUPPORTED);
    memset(big, 'q', sizeof big);
    snprintf(big, sizeof big, "multipart/form-data; boundary=%071d", 7);
    CHECK_EQ_INT(mpart_boundary(big, b, &e), ERR_INVALID);
    snprintf(big, sizeof big, "multipart/form-data; boundary=%070d", 7);
    CHECK_EQ_INT(mpart_boundary(big, b, &e), 0);
    CHECK_EQ_INT((int)strlen(b), 70);
}

static void test_limits(void)
{
    struct rec r = { 0 };
    struct err e;
    size_t cap = 1200 * 80 + MPART_HEADER_MAX + 200, n;
    char *body = xmalloc(cap);
    int i;

    r.fail_at_part = -1;
    /* A header block just over the limit. */
    n = (size_t)snprintf(body, cap, "--%s\r\nContent-Disposition: form-data; name=a\r\nX-Pad: ", B);
    while (n < MPART_HEADER_MAX + 100) body[n++] = 'p';
    n += (size_t)snprintf(body + n, cap - n, "\r\n\r\nx\r\n--%s--", B);
    CHECK_EQ_INT(parse_whole(B, body, n, &r, &e), ERR_TOO_LARGE);

    /* Exactly MPART_PARTS_MAX parts pass; one more fails. */
    for (int extra = 0; extra <= 1; extra++) {
        n = 0;
        for (i = 0; i < MPART_PARTS_MAX + extra; i++)
            n += (size_t)snprintf(body + n, cap - n,
                                  "--%s\r\nContent-Disposition: form-data; name=p%d\r\n\r\nv\r\n", B, i);
        n += (size_t)snprintf(body + n, cap - n, "--%s--\r\n", B);
        CHECK_EQ_INT(parse_whole(B, body, n, &r, &e), extra ? ERR_TOO_LARGE : 0);
    }
    free(body);
    free(r.buf);
}

static void test_callback_error_sticky(void)
{
    struct rec r = { 0 };
    struct err e;
    struct mpart *p;

    r.fail_at_part = 1;
    rec_add(&r, "", 0);
    REQUIRE(mpart_new(B, &cbs, &r, &p, &e) == 0);
    CHECK_EQ_INT(mpart_feed(p, BODY2, sizeof BODY2 - 1, &e), ERR_IO);
    CHECK(strstr(e.msg, "disk full") != NULL);
    err_clear(&e);
    CHECK_EQ_INT(mpart_feed(p, "more", 4, &e), ERR_IO);
    CHECK(strstr(e.msg, "disk full") != NULL);
    CHECK_EQ_INT(mpart_finish(p, &e), ERR_IO);
    mpart_free(p);
    free(r.buf);
    CHECK_EQ_INT(mpart_new("bad\nboundary", &cbs, &r, &p, &e), ERR_INVALID);
}

static void test_malformed_headers(void)
{
    static const char *cases[] = {
        "Content-Disposition: attachment; name=a\r\n",
        "Content-Disposition: form-data\r\n",
        "Content-Disposition: form-data; name=a; name=b\r\n",
        "Content-Disposition: form-data; name=a\r\nContent-Disposition: form-data; name=b\r\n",
        "Content-Disposition: form-data; name=a\r\n folded\r\n",
        "Content-Disposition: form-data; name\r\n",
        "Content-Disposition: form-data name=a\r\n",
        "no colon\r\n",
        "Bad Name: x\r\nContent-Disposition: form-data; name=a\r\n",
    };
    struct rec r = { 0 };
    struct err e;

    r.fail_at_part = -1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[512];
        int n = snprintf(body, sizeof body, "--" B "\r\n%s\r\nx\r\n--" B "--", cases[i]);
        int rc = parse_whole(B, body, (size_t)n, &r, &e);
        if (rc != ERR_INVALID) fprintf(stderr, "case %zu: rc %d\n", i, rc);
        CHECK_EQ_INT(rc, ERR_INVALID);
    }
    free(r.buf);
}

int main(void)
{
    RUN(test_basic);
    RUN(test_splits);
    RUN(test_lookalikes);
    RUN(test_crlf_edges);
    RUN(test_truncated);
    RUN(test_filenames);
    RUN(test_boundary_header);
    RUN(test_limits);
    RUN(test_callback_error_sticky);
    RUN(test_malformed_headers);
    return harness_done("mpart");
}

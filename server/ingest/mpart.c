/* mpart.c — streaming multipart/form-data parser (see include/ingest/mpart.h). */
#include "base/utf8.h"
#include "ingest/mpart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/jtok.h"
#include "base/xmalloc.h"

enum mpart_state {
    ST_PREAMBLE,   /* before the first delimiter; bytes discarded */
    ST_BLINE,      /* just after a delimiter: "--", padding or CRLF next */
    ST_BLINE_DASH, /* saw one '-' of the closing "--" */
    ST_BLINE_PAD,  /* transport padding (spaces, tabs) before CRLF */
    ST_BLINE_LF,   /* saw the CR ending the boundary line */
    ST_HEADERS,    /* collecting a part's header block */
    ST_DATA,       /* part content, scanning for the delimiter */
    ST_EPILOGUE,   /* after the closing delimiter; bytes discarded */
    ST_FAILED      /* sticky error in p->err */
};

struct mpart {
    const struct mpart_callbacks *cb;
    void *ctx;
    enum mpart_state st;
    /* "\r\n--" + boundary. No byte after the first one is '\r' (boundary
     * characters exclude it), which keeps the matcher below a simple
     * prefix counter: on a mismatch the only possible restart is a '\r'. */
    char delim[4 + MPART_BOUNDARY_MAX + 1];
    size_t dlen;
    size_t held;   /* bytes of delim matched so far, not yet passed on */
    char hdr[MPART_HEADER_MAX];
    size_t hlen;
    int nparts;
    int in_part;   /* part_begin called, part_end not yet */
    char *name, *filename, *ctype; /* current part, owned */
    struct err err;
};

/* ------------------------------------------------------------------------ */
/* Small lexing helpers                                                       */
/* ------------------------------------------------------------------------ */

/* RFC 7230 tchar. */
static int is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* RFC 2046 bchars (the last one may not be a space). */
static int is_bchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("'()+_,-./:=? ", c));
}

static int boundary_valid(const char *b)
{
    size_t n = strlen(b);

    if (n == 0 || n > MPART_BOUNDARY_MAX || b[n - 1] == ' ') return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_bchar((unsigned char)b[i])) return 0;
    return 1;
}

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

/* Reads the next `; name=value` parameter of a header value at *pp.
 * OUT name (lowercased, "" when longer than nsz-1 so it matches nothing),
 * OUT val (unquoted; vsz must exceed the input's length).
 * Returns 1 for a parameter, 0 at the end, ERR_INVALID if malformed.
 * Inside quotes only \" and \\ are escapes: browsers send Windows paths
 * with bare backslashes, which must survive for mpart_filename_clean. */
static int next_param(const char **pp, char *name, size_t nsz, char *val, size_t vsz, struct err *e)
{
    const char *p = skip_ws(*pp), *n0;
    size_t nl, vl = 0;

    if (*p == '\0') return 0;
    if (*p != ';') return err_set(e, ERR_INVALID, "expected ';' between header parameters");
    p = skip_ws(p + 1);
    if (*p == '\0') return *pp = p, 0; /* a trailing ';' is harmless */
    n0 = p;
    while (is_tchar((unsigned char)*p)) p++;
    nl = (size_t)(p - n0);
    if (nl == 0) return err_set(e, ERR_INVALID, "header parameter without a name");
    if (nl < nsz) {
        for (size_t i = 0; i < nl; i++) {
            char c = n0[i];
            name[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
        }
        name[nl] = '\0';
    } else {
        name[0] = '\0';
    }
    p = skip_ws(p);
    if (*p != '=') return err_set(e, ERR_INVALID, "header parameter '%.*s' has no value", (int)nl, n0);
    p = skip_ws(p + 1);
    if (*p == '"') {
        for (p++;; p++) {
            if (*p == '\0') return err_set(e, ERR_INVALID, "unterminated quoted header parameter");
            if (*p == '"') break;
            if (*p == '\\' && (p[1] == '"' || p[1] == '\\')) p++;
            if (vl + 1 < vsz) val[vl++] = *p;
        }
        p++;
    } else {
        const char *v0 = p;
        while (is_tchar((unsigned char)*p)) p++;
        if (p == v0) return err_set(e, ERR_INVALID, "header parameter '%.*s' has an empty value", (int)nl, n0);
        vl = (size_t)(p - v0);
        if (vl >= vsz) vl = vsz - 1;
        memcpy(val, v0, vl);
    }
    val[vl] = '\0';
    *pp = p;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Public helpers                                                             */
/* ------------------------------------------------------------------------ */

int mpart_filename_clean(const char *in, char out[MPART_FILENAME_MAX + 1], struct err *e)
{
    const char *base = in;
    size_t n;

    for (const char *p = in; *p; p++)
        if (*p == '/' || *p == '\\') base = p + 1;
    n = strlen(base);
    if (n == 0 || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return err_set(e, ERR_INVALID, "file name '%.100s' has no usable base name", in);
    if (n > MPART_FILENAME_MAX)
        return err_set(e, ERR_INVALID, "file name longer than %d bytes", MPART_FILENAME_MAX);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)base[i];
        if (c < 0x20 || c == 0x7f) return err_set(e, ERR_INVALID, "file name holds control characters");
    }
    char fixed[3 * MPART_FILENAME_MAX];
    n = utf8_repair(base, n, fixed);
    if (n > MPART_FILENAME_MAX)
        return err_set(e, ERR_INVALID, "file name longer than %d bytes once its bytes that are not UTF-8 are "
                                       "replaced with U+FFFD", MPART_FILENAME_MAX);
    memcpy(out, fixed, n);
    out[n] = '\0';
    return 0;
}

int mpart_boundary(const char *content_type, char out[MPART_BOUNDARY_MAX + 1], struct err *e)
{
    static const char mt[] = "multipart/form-data";
    const char *p;
    char name[16], *val;
    int r, found = 0;

    if (!content_type) return err_set(e, ERR_UNSUPPORTED, "no Content-Type");
    p = skip_ws(content_type);
    if (strncasecmp(p, mt, sizeof mt - 1) != 0 || (p[sizeof mt - 1] && !strchr(" \t;", p[sizeof mt - 1])))
        return err_set(e, ERR_UNSUPPORTED, "Content-Type is not multipart/form-data");
    p += sizeof mt - 1;
    val = xmalloc(strlen(p) + 1);
    while ((r = next_param(&p, name, sizeof name, val, strlen(p) + 1, e)) == 1) {
        if (strcmp(name, "boundary") != 0) continue;
        if (found) {
            r = err_set(e, ERR_INVALID, "multipart Content-Type has two boundary parameters");
            break;
        }
        if (!boundary_valid(val)) {
            r = err_set(e, ERR_INVALID, "multipart boundary is empty, too long or has invalid characters");
            break;
        }
        memcpy(out, val, strlen(val) + 1);
        found = 1;
    }
    free(val);
    if (r < 0) return r;
    if (!found) return err_set(e, ERR_INVALID, "multipart Content-Type without a boundary");
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                     */
/* ------------------------------------------------------------------------ */

int mpart_new(const char *boundary, const struct mpart_callbacks *cb, void *ctx, struct mpart **out,
              struct err *e)
{
    struct mpart *p;

    if (!boundary_valid(boundary)) return err_set(e, ERR_INVALID, "invalid multipart boundary");
    p = xcalloc(1, sizeof *p);
    p->cb = cb;
    p->ctx = ctx;
    p->dlen = (size_t)snprintf(p->delim, sizeof p->delim, "\r\n--%s", boundary);
    /* The body may open with "--boundary" directly: act as if the CRLF
     * before it had been seen. */
    p->st = ST_PREAMBLE;
    p->held = 2;
    *out = p;
    return 0;
}

static void clear_part(struct mpart *p)
{
    free(p->name);
    free(p->filename);
    free(p->ctype);
    p->name = p->filename = p->ctype = NULL;
}

void mpart_free(struct mpart *p)
{
    if (!p) return;
    clear_part(p);
    free(p);
}

static int fail(struct mpart *p, int code, struct err *e)
{
    /* Callbacks fill e themselves; keep a copy so the error is sticky. */
    if (e) p->err = *e;
    else err_set(&p->err, code, "multipart parse failed");
    p->err.code = code;
    p->st = ST_FAILED;
    return code;
}

static char *trimmed_dup(const char *s)
{
    const char *end;

    s = skip_ws(s);
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t')) end--;
    return xmemdup0(s, (size_t)(end - s));
}

/* Parses Content-Disposition: form-data; name=..; filename=.. into p. */
static int parse_disposition(struct mpart *p, const char *v, struct err *e)
{
    static const char fd[] = "form-data";
    char name[16], *val, clean[MPART_FILENAME_MAX + 1];
    int r;

    v = skip_ws(v);
    if (strncasecmp(v, fd, sizeof fd - 1) != 0 || (v[sizeof fd - 1] && !strchr(" \t;", v[sizeof fd - 1])))
        return err_set(e, ERR_INVALID, "part Content-Disposition is not form-data");
    v += sizeof fd - 1;
    val = xmalloc(strlen(v) + 1);
    while ((r = next_param(&v, name, sizeof name, val, strlen(v) + 1, e)) == 1) {
        if (strcmp(name, "name") == 0) {
            if (p->name) { r = err_set(e, ERR_INVALID, "part has two name parameters"); break; }
            p->name = xstrdup(val);
        } else if (strcmp(name, "filename") == 0) {
            if (p->filename) { r = err_set(e, ERR_INVALID, "part has two filename parameters"); break; }
            if ((r = mpart_filename_clean(val, clean, e)) < 0) break;
            p->filename = xstrdup(clean);
        }
        /* Others (filename* and extensions) carry nothing we use. */
    }
    free(val);
    if (r < 0) return r;
    if (!p->name) return err_set(e, ERR_INVALID, "part Content-Disposition has no name");
    return 0;
}

/* The header block is complete in p->hdr (ending with an empty line).
 * Fills the part fields and calls part_begin. */
static int parse_headers(struct mpart *p, struct err *e)
{
    char *line = p->hdr, *end = p->hdr + p->hlen;
    int seen_cd = 0, r;
    struct mpart_part part;

    for (;;) {
        char *eol = memchr(line, '\r', (size_t)(end - line)), *colon, *q;
        /* parse ensured the block ends in CRLF CRLF, so eol exists. */
        if (!eol || eol[1] != '\n') return err_set(e, ERR_INVALID, "bare CR in part headers");
        if (eol == line) break; /* the empty line */
        *eol = '\0';
        for (q = line; q < eol; q++) {
            unsigned char c = (unsigned char)*q;
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                return err_set(e, ERR_INVALID, "control character in part headers");
        }
        if (line[0] == ' ' || line[0] == '\t')
            return err_set(e, ERR_INVALID, "folded part header lines are not supported");
        colon = strchr(line, ':');
        if (!colon || colon == line) return err_set(e, ERR_INVALID, "malformed part header line");
        for (q = line; q < colon; q++)
            if (!is_tchar((unsigned char)*q)) return err_set(e, ERR_INVALID, "malformed part header name");
        *colon = '\0';
        if (strcasecmp(line, "Content-Disposition") == 0) {
            if (seen_cd++) return err_set(e, ERR_INVALID, "part has two Content-Disposition headers");
            if ((r = parse_disposition(p, colon + 1, e)) < 0) return r;
        } else if (strcasecmp(line, "Content-Type") == 0) {
            free(p->ctype);
            p->ctype = trimmed_dup(colon + 1);
        }
        line = eol + 2;
    }
    if (!seen_cd) return err_set(e, ERR_INVALID, "part without Content-Disposition");
    part.name = p->name;
    part.filename = p->filename;
    part.content_type = p->ctype;
    part.index = p->nparts - 1;
    p->in_part = 1;
    return p->cb->part_begin ? p->cb->part_begin(p->ctx, &part, e) : 0;
}

static int emit(struct mpart *p, const char *d, size_t n, struct err *e)
{
    if (n == 0 || p->st != ST_DATA || !p->cb->data) return 0;
    return p->cb->data(p->ctx, d, n, e);
}

/* A delimiter was matched: close the current part, if any. */
static int delimiter_seen(struct mpart *p, struct err *e)
{
    int r = 0;

    if (p->in_part) {
        p->in_part = 0;
        if (p->cb->part_end) r = p->cb->part_end(p->ctx, e);
        clear_part(p);
    }
    p->held = 0;
    p->st = ST_BLINE;
    return r;
}

/* Scans data (or preamble) bytes for the delimiter. Returns bytes consumed
 * (stops right after a delimiter) or <0 on a callback error. Content is
 * passed on in runs as long as possible: a '\r' that the bytes at hand
 * already show is no delimiter does not split the run, so a chunk usually
 * becomes one data callback. */
static long scan(struct mpart *p, const char *d, size_t n, struct err *e)
{
    size_t i = 0;
    int r;

    if (p->held > 0) {
        /* A delimiter prefix carried over from the previous chunk. */
        size_t need = p->dlen - p->held, cmp = need < n ? need : n;
        if (memcmp(d, p->delim + p->held, cmp) == 0) {
            if (cmp < need) {
                p->held += cmp;
                return (long)n;
            }
            if ((r = delimiter_seen(p, e)) < 0) return r;
            return (long)need;
        }
        /* Not a delimiter: the held bytes were content. None of them but
         * the first is a '\r', so no delimiter can start inside them. */
        if ((r = emit(p, p->delim, p->held, e)) < 0) return r;
        p->held = 0;
    }
    while (i < n) {
        const char *cr = memchr(d + i, '\r', n - i);
        size_t at, avail, cmp;
        if (!cr) break;
        at = (size_t)(cr - d);
        avail = n - at;
        cmp = avail < p->dlen ? avail : p->dlen;
        if (memcmp(d + at, p->delim, cmp) != 0) {
            i = at + 1;
            continue;
        }
        if ((r = emit(p, d, at, e)) < 0) return r;
        if (cmp < p->dlen) {
            p->held = cmp; /* a possible delimiter runs past this chunk */
            return (long)n;
        }
        if ((r = delimiter_seen(p, e)) < 0) return r;
        return (long)(at + p->dlen);
    }
    if ((r = emit(p, d, n, e)) < 0) return r;
    return (long)n;
}

static int header_byte(struct mpart *p, char c, struct err *e)
{
    if (p->hlen == sizeof p->hdr)
        return err_set(e, ERR_TOO_LARGE, "part header block longer than %d bytes", MPART_HEADER_MAX);
    p->hdr[p->hlen++] = c;
    if (c != '\n' || p->hlen < 2 || p->hdr[p->hlen - 2] != '\r') return 0;
    if (p->hlen == 2 || (p->hlen >= 4 && memcmp(p->hdr + p->hlen - 4, "\r\n\r\n", 4) == 0)) {
        int r = parse_headers(p, e);
        if (r < 0) return r;
        p->st = ST_DATA;
        p->held = 0;
    }
    return 0;
}

int mpart_feed(struct mpart *p, const char *data, size_t n, struct err *e)
{
    size_t i = 0;
    int r = 0;

    if (p->st == ST_FAILED) {
        if (e) *e = p->err;
        return p->err.code;
    }
    while (i < n && r == 0) {
        char c = data[i];
        switch (p->st) {
        case ST_PREAMBLE:
        case ST_DATA: {
            long used = scan(p, data + i, n - i, e);
            if (used < 0) r = (int)used;
            else i += (size_t)used;
            break;
        }
        case ST_BLINE:
            i++;
            if (c == '-') p->st = ST_BLINE_DASH;
            else if (c == ' ' || c == '\t') p->st = ST_BLINE_PAD;
            else if (c == '\r') p->st = ST_BLINE_LF;
            else r = err_set(e, ERR_INVALID, "multipart boundary followed by unexpected bytes");
            break;
        case ST_BLINE_DASH:
            i++;
            if (c == '-') p->st = ST_EPILOGUE;
            else r = err_set(e, ERR_INVALID, "malformed closing multipart boundary");
            break;
        case ST_BLINE_PAD:
            i++;
            if (c == '\r') p->st = ST_BLINE_LF;
            else if (c != ' ' && c != '\t')
                r = err_set(e, ERR_INVALID, "multipart boundary followed by unexpected bytes");
            break;
        case ST_BLINE_LF:
            i++;
            if (c != '\n') {
                r = err_set(e, ERR_INVALID, "multipart boundary line not ended by CRLF");
            } else if (p->nparts == MPART_PARTS_MAX) {
                r = err_set(e, ERR_TOO_LARGE, "more than %d parts in the upload", MPART_PARTS_MAX);
            } else {
                p->nparts++;
                p->hlen = 0;
                p->st = ST_HEADERS;
            }
            break;
        case ST_HEADERS:
            i++;
            if (c == '\0') r = err_set(e, ERR_INVALID, "NUL byte in part headers");
            else r = header_byte(p, c, e);
            break;
        case ST_EPILOGUE:
            i = n;
            break;
        case ST_FAILED:
            break;
        }
    }
    if (r < 0) return fail(p, r, e);
    return 0;
}

int mpart_finish(struct mpart *p, struct err *e)
{
    if (p->st == ST_FAILED) {
        if (e) *e = p->err;
        return p->err.code;
    }
    if (p->st != ST_EPILOGUE) {
        err_set(e, ERR_INVALID, "truncated upload: the multipart body ended before its closing boundary");
        return fail(p, ERR_INVALID, e);
    }
    return 0;
}

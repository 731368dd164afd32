/* mpart_fuzz.c — multipart parser. Input: "boundary\n" then the body.
 * Invariant: feeding the body in pseudo-random chunks gives the same
 * callbacks and the same result as feeding it whole, and callbacks nest
 * (data and part_end only inside a part). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/mpart.h"

struct fz { uint32_t hash; size_t bytes; int in_part, parts, broken; };

static void mix(struct fz *z, const void *d, size_t n)
{
    for (size_t i = 0; i < n; i++) z->hash = (z->hash ^ ((const uint8_t *)d)[i]) * 16777619u;
}
static int begin(void *c, const struct mpart_part *p, struct err *e)
{
    struct fz *z = c;
    if (z->in_part || !p->name || (p->filename && (!*p->filename || strchr(p->filename, '/')))) z->broken = 1;
    z->in_part = 1;
    z->parts++;
    mix(z, p->name, strlen(p->name) + 1);
    if (p->filename) mix(z, p->filename, strlen(p->filename) + 1);
    return 0;
}
static int data(void *c, const char *d, size_t n, struct err *e)
{
    struct fz *z = c;
    if (!z->in_part || n == 0) z->broken = 1;
    z->bytes += n;
    mix(z, d, n);
    return 0;
}
static int end(void *c, struct err *e)
{
    struct fz *z = c;
    if (!z->in_part) z->broken = 1;
    z->in_part = 0;
    mix(z, "}", 1);
    return 0;
}
static const struct mpart_callbacks cbs = { begin, data, end };

static int run(const char *b, const uint8_t *d, size_t n, uint32_t seed, struct fz *z)
{
    struct mpart *p;
    struct err e;
    size_t at = 0;
    int rc;

    memset(z, 0, sizeof *z);
    if (mpart_new(b, &cbs, z, &p, &e) < 0) return 1;
    for (rc = 0; at < n && rc == 0;) {
        size_t k = seed ? 1 + (seed = seed * 1103515245u + 12345u) % 97 : n - at;
        if (k > n - at) k = n - at;
        rc = mpart_feed(p, (const char *)d + at, k, &e);
        at += k;
    }
    if (rc == 0) rc = mpart_finish(p, &e);
    mpart_free(p);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    char b[MPART_BOUNDARY_MAX + 1] = "fuzzB";
    const uint8_t *nl = memchr(d, '\n', n < sizeof b ? n : sizeof b);
    struct fz whole, chunked;
    int r1, r2;

    if (nl) {
        memcpy(b, d, (size_t)(nl - d));
        b[nl - d] = '\0';
        n -= (size_t)(nl - d) + 1;
        d = nl + 1;
    }
    r1 = run(b, d, n, 0, &whole);
    r2 = run(b, d, n, (uint32_t)n | 1u, &chunked);
    if (r1 != r2 || whole.broken || chunked.broken || whole.hash != chunked.hash || whole.bytes != chunked.bytes)
        abort();
    return 0;
}

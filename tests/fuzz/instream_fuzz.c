/* instream_fuzz.c — the gzip/plain byte source (instream_open_mem), with
 * small limits. The input is read twice with different buffer sizes, then
 * gzip-compressed here and read back, whole and cut in half.
 * Invariants: both reads succeed or both fail, with the same bytes; a plain
 * input comes back unchanged; raw_consumed only grows and never passes
 * raw_size; nothing beyond max_bytes is ever returned; our own gzip of the
 * input inflates back to it exactly, and a cut copy is an error (never a
 * silent short read); zlib (lim.zlib_only) and igzip, when built in, agree:
 * both succeed with the same bytes or both fail. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ingest/instream.h"

#define MAX_OUT (1u << 20)

/* Reads everything with buffers of step bytes into buffer `slot`.
 * OUT *out (borrowed until the next call with that slot), *len.
 * Returns the read result. */
static int read_all(int slot, const uint8_t *d, size_t n, size_t step, uint64_t max_bytes, int zlib,
                    unsigned char **out, size_t *len)
{
    struct instream_limits lim = { max_bytes, 50, zlib };
    struct instream *s;
    struct err e;
    /* one output buffer per call site, kept across inputs: a fresh 1 MiB
     * per read made the fuzzer spend its time in page faults */
    static unsigned char *bufs[4];
    if (!bufs[slot]) bufs[slot] = malloc(MAX_OUT + 1);
    unsigned char *buf = bufs[slot];
    uint64_t last = 0;
    size_t have = 0;
    int rc;

    *out = buf;
    *len = 0;
    if ((rc = instream_open_mem(d, n, &lim, &s, &e)) != 0) return rc;
    size_t mn;
    const unsigned char *m = instream_magic(s, &mn);
    if (mn > 16 || mn > n || (mn && memcmp(m, d, mn) != 0)) abort();
    if (instream_raw_size(s) != n) abort();
    for (;;) {
        size_t got = 0, cap = step;
        if (have + cap > MAX_OUT + 1) cap = MAX_OUT + 1 - have;
        if (cap == 0) break;
        rc = instream_read(s, buf + have, cap, &got, &e);
        uint64_t now = instream_raw_consumed(s);
        if (now < last || now > n || got > cap) abort();
        last = now;
        if (rc != 0) {
            if (e.code != rc || !e.msg[0]) abort();
            break;
        }
        if (got == 0) break;
        have += got;
    }
    if (max_bytes && have > max_bytes && rc == 0) abort();
    instream_close(s);
    *len = have;
    return rc;
}

static size_t gz(const uint8_t *d, size_t n, unsigned char **out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) abort();
    size_t cap = deflateBound(&z, n) + 64;
    *out = malloc(cap);
    z.next_in = (unsigned char *)d;
    z.avail_in = (uInt)n;
    z.next_out = *out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) abort();
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    unsigned char *a, *b, *c;
    size_t na, nb, nc;
    int is_gz = n >= 2 && d[0] == 0x1f && d[1] == 0x8b;

    int ra = read_all(0, d, n, 4096, 256 * 1024, 0, &a, &na);
    int rb = read_all(1, d, n, 1 + (n % 13) * 131, 256 * 1024, 1, &b, &nb);
    /* On an error the bytes handed out before it depend on the buffer size,
     * and so may the error when two apply (a member past max_bytes with a
     * bad CRC: small reads hit the limit first, large ones the CRC). */
    if ((ra == 0) != (rb == 0) || (ra == 0 && (na != nb || memcmp(a, b, na) != 0))) abort();
    if (!is_gz && (ra != 0 || na != n || memcmp(a, d, n) != 0)) abort();

    /* Our own gzip of the input must round-trip; cut, it must fail. */
    if (n <= 64 * 1024) {
        unsigned char *z;
        size_t nz = gz(d, n, &z);
        int rc = read_all(2, z, nz, 1 + (n % 4096), 0, 0, &c, &nc);
        if (rc != 0 || nc != n || memcmp(c, d, n) != 0) abort();
        rc = read_all(3, z, nz, 1 + (n % 4096), 0, 1, &c, &nc);
        if (rc != 0 || nc != n || memcmp(c, d, n) != 0) abort();
        rc = read_all(2, z, nz / 2 > 2 ? nz / 2 : 2, 4096, 0, n & 1, &c, &nc);
        if (rc != ERR_INVALID) abort();
        /* two members back to back read as one stream */
        unsigned char *zz = malloc(2 * nz);
        memcpy(zz, z, nz);
        memcpy(zz + nz, z, nz);
        rc = read_all(2, zz, 2 * nz, 4096, 0, 0, &c, &nc);
        if (rc != 0 || nc != 2 * n || (n && (memcmp(c, d, n) != 0 || memcmp(c + n, d, n) != 0))) abort();
        free(zz);
        free(z);
    }
    return 0;
}

/* sha256.c — SHA-256 (see include/base/sha256.h).
 *
 * Two block functions with one contract (fold N whole 64-byte blocks into
 * h[8]): the portable one, and on x86-64 one on the SHA extensions, picked
 * per hash by sha256_init from CPUID. The portable code hashes ~340 MB/s,
 * which made the duplicate check ~15 % of an import's CPU; the extensions
 * do it several times faster on the CPUs of today's GPU servers. */
#include "base/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/xmalloc.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(uint32_t st[8], const unsigned char *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    st[0] += a, st[1] += b, st[2] += c, st[3] += d;
    st[4] += e, st[5] += f, st[6] += g, st[7] += h;
}

static void blocks_portable(uint32_t st[8], const unsigned char *p, size_t n)
{
    for (; n; n--, p += 64) block(st, p);
}

#ifdef SHA256_X86
/* The extensions keep the state as two vectors, ABEF and CDGH (the order
 * sha256rnds2 wants); each step below runs four rounds and, in the first
 * twelve, extends the message schedule by four words, so w[] always holds
 * the sixteen words the next four steps need. */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks_shani(uint32_t st[8], const unsigned char *p, size_t n)
{
    const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&st[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&st[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

    for (; n; n--, p += 64) {
        __m128i abef0 = abef, cdgh0 = cdgh, w[4];
        for (int i = 0; i < 4; i++)
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), bswap);
        for (int g = 0; g < 16; g++) {
            __m128i m = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)&K[4 * g]));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
            if (g < 12) {
                __m128i t = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
                t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
                w[g & 3] = _mm_sha256msg2_epu32(t, w[(g + 3) & 3]);
            }
        }
        abef = _mm_add_epi32(abef, abef0);
        cdgh = _mm_add_epi32(cdgh, cdgh0);
    }
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&st[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&st[4], _mm_alignr_epi8(dchg, feba, 8));
}

static int cpu_has_shani(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & bit_SHA) != 0;
}
#endif

static void blocks(struct sha256 *s, const unsigned char *p, size_t n)
{
#ifdef SHA256_X86
    if (s->accel) {
        blocks_shani(s->h, p, n);
        return;
    }
#endif
    blocks_portable(s->h, p, n);
}

void sha256_init(struct sha256 *s)
{
    static const uint32_t h0[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->nbuf = 0;
#ifdef SHA256_X86
    s->accel = cpu_has_shani();
#else
    s->accel = 0;
#endif
}

void sha256_update(struct sha256 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->bytes += n;
    if (s->nbuf) {
        size_t k = 64 - s->nbuf < n ? 64 - s->nbuf : n;
        memcpy(s->buf + s->nbuf, p, k);
        s->nbuf += k, p += k, n -= k;
        if (s->nbuf < 64) return;
        blocks(s, s->buf, 1);
        s->nbuf = 0;
    }
    blocks(s, p, n / 64);
    p += n / 64 * 64, n %= 64;
    memcpy(s->buf, p, n);
    s->nbuf = n;
}

void sha256_hex(struct sha256 *s, char hex[SHA256_HEX_LEN + 1])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad[72] = { 0x80 };
    size_t npad = (s->nbuf < 56 ? 56 : 120) - s->nbuf;
    for (int i = 0; i < 8; i++) pad[npad + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(s, pad, npad + 8);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", s->h[i]);
}

int sha256_file(const char *path, char hex[SHA256_HEX_LEN + 1], struct err *e)
{
    enum { CHUNK = 1 << 20 };
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(e, ERR_IO, "cannot read %s: %s", path, strerror(errno));
    char *buf = xmalloc(CHUNK);
    struct sha256 s;
    ssize_t n;
    sha256_init(&s);
    while ((n = read(fd, buf, CHUNK)) > 0) sha256_update(&s, buf, (size_t)n);
    int en = errno;
    close(fd);
    free(buf);
    if (n < 0) return err_set(e, ERR_IO, "cannot read %s: %s", path, strerror(en));
    sha256_hex(&s, hex);
    return 0;
}

static int cmp_hex(const void *a, const void *b)
{
    return memcmp(a, b, SHA256_HEX_LEN);
}

void sha256_of_hashes(char (*hexes)[SHA256_HEX_LEN + 1], int n, char out[SHA256_HEX_LEN + 1])
{
    struct sha256 s;
    if (n > 1) xqsort(hexes, (size_t)n, sizeof *hexes, cmp_hex);
    sha256_init(&s);
    for (int i = 0; i < n; i++) {
        sha256_update(&s, hexes[i], SHA256_HEX_LEN);
        sha256_update(&s, "\n", 1);
    }
    sha256_hex(&s, out);
}

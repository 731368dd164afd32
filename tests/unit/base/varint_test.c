/* varint_test — LEB128 round trips at every length boundary and the
 * extremes, the bytes of known values, zigzag both ways at the int64
 * extremes, and the refusals: a varint cut short and one past 64 bits. */
#include "base/varint.h"

#include <string.h>

#include "harness.h"

static void test_round_trip(void)
{
    uint8_t buf[VARINT_MAX * 200];
    uint64_t in[200];
    size_t n = 0, len = 0;
    /* 2^k - 1, 2^k and 2^k + 1 for every k: each byte-count boundary */
    for (int k = 0; k < 64; k++) {
        in[n++] = ((uint64_t)1 << k) - 1;
        in[n++] = (uint64_t)1 << k;
        in[n++] = ((uint64_t)1 << k) + 1;
    }
    in[n++] = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t w = varint_put(buf + len, in[i]);
        /* seven bits a byte */
        size_t bits = 1;
        for (uint64_t v = in[i] >> 1; v; v >>= 1) bits++;
        CHECK_EQ_INT(w, (bits + 6) / 7);
        len += w;
    }
    const uint8_t *p = buf, *end = buf + len;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v;
        if (!varint_get(&p, end, &v) || v != in[i]) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(p == end);
}

static void test_bytes(void)
{
    uint8_t b[VARINT_MAX];
    CHECK_EQ_INT(varint_put(b, 0), 1);
    CHECK_EQ_INT(b[0], 0);
    CHECK_EQ_INT(varint_put(b, 300), 2); /* 0b10_0101100 */
    CHECK_EQ_INT(b[0], 0xac);
    CHECK_EQ_INT(b[1], 0x02);
    CHECK_EQ_INT(varint_put(b, UINT64_MAX), VARINT_MAX);
    CHECK_EQ_INT(b[9], 0x01);
}

static void test_refusals(void)
{
    const uint8_t cut[] = { 0x80, 0x80 }, *p = cut;
    uint64_t v = 7;
    CHECK_EQ_INT(varint_get(&p, cut + sizeof cut, &v), 0);
    CHECK_EQ_INT(v, 7); /* untouched */
    uint8_t longer[12];
    memset(longer, 0x80, sizeof longer);
    longer[11] = 0x01;
    p = longer;
    CHECK_EQ_INT(varint_get(&p, longer + sizeof longer, &v), 0);
    p = cut;
    CHECK_EQ_INT(varint_get(&p, cut, &v), 0); /* nothing to read */
}

static void test_zigzag(void)
{
    const int64_t in[] = { 0, -1, 1, -2, 2, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
    const uint64_t want[] = { 0, 1, 2, 3, 4, UINT64_MAX - 1, UINT64_MAX, UINT64_MAX - 2 };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        CHECK(varint_zigzag(in[i]) == want[i]);
        CHECK(varint_unzigzag(want[i]) == in[i]);
    }
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_bytes);
    RUN(test_refusals);
    RUN(test_zigzag);
    return harness_done("varint_test");
}

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

/* A buffer grows past its first 4 KiB and keeps what was written. */
static void test_buf(void)
{
    struct varint_buf b = { NULL, 0, 0 };
    for (uint64_t i = 0; i < 3000; i++) varint_buf_put(&b, i * i * 977);
    CHECK(b.len > 4096 && b.cap >= b.len);
    const uint8_t *p = b.v;
    uint64_t v;
    int ok = 1;
    for (uint64_t i = 0; i < 3000; i++) ok &= varint_get(&p, b.v + b.len, &v) && v == i * i * 977;
    CHECK(ok && p == b.v + b.len);
    uint8_t *room = varint_buf_room(&b, 100000);
    CHECK(room == b.v + b.len && b.cap - b.len >= 100000);
    varint_buf_free(&b);
    CHECK(b.v == NULL && b.len == 0 && b.cap == 0);
}

/* Rows of a chunk: n rows then the end; past the n-th row nothing may be
 * left; a field that does not decode or a short take damages the chunk for
 * good. */
static void test_rows(void)
{
    const uint8_t two[] = { 0x05, 0x81, 0x01, 0x07, 0x01, 0x02, 0x03, 0x04 }; /* (5, 129) (7) + 4 raw */
    struct varint_rows r;
    uint64_t v[2];
    const uint8_t *raw;

    varint_rows_begin(&r, two, sizeof two, 2);
    CHECK_EQ_INT(varint_rows_next(&r), 1);
    CHECK_EQ_INT(varint_rows_get(&r, v, 2), 1);
    CHECK(v[0] == 5 && v[1] == 129);
    CHECK_EQ_INT(varint_rows_next(&r), 1);
    CHECK_EQ_INT(varint_rows_get(&r, v, 1), 1);
    CHECK(v[0] == 7);
    raw = varint_rows_take(&r, 4);
    CHECK(raw == two + 4);
    CHECK_EQ_INT(varint_rows_next(&r), 0);
    CHECK_EQ_INT(varint_rows_next(&r), 0);

    /* a row fewer than the bytes hold: the rest is damage */
    varint_rows_begin(&r, two, sizeof two, 1);
    CHECK_EQ_INT(varint_rows_next(&r), 1);
    CHECK_EQ_INT(varint_rows_get(&r, v, 2), 1);
    CHECK_EQ_INT(varint_rows_next(&r), -1);
    CHECK_EQ_INT(varint_rows_next(&r), -1);

    /* a field past the end, then nothing more is read */
    varint_rows_begin(&r, two, 2, 3);
    CHECK_EQ_INT(varint_rows_next(&r), 1);
    CHECK_EQ_INT(varint_rows_get(&r, v, 2), 0);
    CHECK_EQ_INT(varint_rows_next(&r), -1);
    CHECK_EQ_INT(varint_rows_get(&r, v, 1), 0);

    /* a take past the end */
    varint_rows_begin(&r, two, sizeof two, 1);
    CHECK_EQ_INT(varint_rows_next(&r), 1);
    CHECK(varint_rows_take(&r, sizeof two + 1) == NULL);
    CHECK_EQ_INT(varint_rows_next(&r), -1);

    /* a value out of range, and a negative count */
    varint_rows_begin(&r, two, sizeof two, 2);
    CHECK_EQ_INT(varint_rows_next(&r), 1);
    CHECK_EQ_INT(varint_rows_fail(&r), -1);
    CHECK_EQ_INT(varint_rows_next(&r), -1);
    varint_rows_begin(&r, two, sizeof two, -1);
    CHECK_EQ_INT(varint_rows_next(&r), -1);
    varint_rows_begin(&r, NULL, 0, 0);
    CHECK_EQ_INT(varint_rows_next(&r), 0);
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_bytes);
    RUN(test_refusals);
    RUN(test_zigzag);
    RUN(test_buf);
    RUN(test_rows);
    return harness_done("varint_test");
}

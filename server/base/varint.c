#include "base/varint.h"

size_t varint_put(uint8_t *dst, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        dst[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    dst[n++] = (uint8_t)v;
    return n;
}

int varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t c = *(*p)++;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

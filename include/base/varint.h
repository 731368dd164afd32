/*
 * varint.h — LEB128 varints: seven bits a byte, low bits first, the top bit
 * set on every byte but the last. The blobs of run.db that hold long runs of
 * small numbers (the critical path's segments, the slice ids of each name)
 * use them; zigzag maps a signed delta to a small unsigned one.
 *
 * Writing: the caller keeps VARINT_MAX bytes of room at dst. Reading never
 * goes past end and refuses a varint longer than 64 bits, so a garbled blob
 * is an error, never an overrun. Memory: none. Threads: none.
 */
#ifndef TB_VARINT_H
#define TB_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX 10 /* bytes of the largest uint64 */

/* Writes v at dst; returns the bytes written (1 to VARINT_MAX). */
size_t varint_put(uint8_t *dst, uint64_t v);

/* Reads the varint at *p (advanced past it) into *v: 1, or 0 when it runs
 * past end or past 64 bits. */
int varint_get(const uint8_t **p, const uint8_t *end, uint64_t *v);

/* d as zigzag (0, -1, 1, -2 ... -> 0, 1, 2, 3 ...) and back. */
static inline uint64_t varint_zigzag(int64_t d)
{
    return ((uint64_t)d << 1) ^ ((uint64_t)d >> 63 ? UINT64_MAX : 0);
}

static inline int64_t varint_unzigzag(uint64_t z)
{
    return (int64_t)((z >> 1) ^ (z & 1 ? UINT64_MAX : 0));
}

#endif

/*
 * varint.h — LEB128 varints: seven bits a byte, low bits first, the top bit
 * set on every byte but the last. The blobs of run.db that hold long runs of
 * small numbers (the critical path's segments, the slice ids of each name)
 * use them; zigzag maps a signed delta to a small unsigned one.
 *
 * Writing: the caller keeps VARINT_MAX bytes of room at dst, or appends to
 * a struct varint_buf, which grows. Reading never goes past end and
 * refuses a varint longer than 64 bits, so a garbled blob is an error,
 * never an overrun; struct varint_rows reads a chunk of n rows (run.db's
 * packed tables) and, once damaged, stays damaged.
 *
 * Memory: a varint_buf owns its bytes (varint_buf_free); a varint_rows
 * borrows its blob. Threads: none.
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

/* A growing byte buffer that rows of varints are appended to. */
struct varint_buf {
    uint8_t *v;
    size_t len, cap;
};

/* Room for n more bytes at b->v + b->len (the caller advances len). */
uint8_t *varint_buf_room(struct varint_buf *b, size_t n);

/* Appends v. */
void varint_buf_put(struct varint_buf *b, uint64_t v);

/* Frees the bytes; b is empty and reusable. */
void varint_buf_free(struct varint_buf *b);

/* A chunk of n rows in blob[0..size): per row varint_rows_next, then its
 * fields with varint_rows_get / varint_rows_take; a field that does not
 * decode, or varint_rows_fail for one out of range, damages the chunk for
 * good: the next call must not read on from mid-row. */
struct varint_rows {
    const uint8_t *p, *end;
    int64_t left; /* rows not begun; -1: damaged */
};

/* n < 0 is a damaged chunk. */
void varint_rows_begin(struct varint_rows *r, const void *blob, size_t size, int64_t n);

/* 1: a row follows, 0: the n rows were read and nothing is left, -1: damaged
 * (bytes past the n-th row included). */
int varint_rows_next(struct varint_rows *r);

/* The row's next n varints into v: 1, or 0 (then damaged). */
int varint_rows_get(struct varint_rows *r, uint64_t *v, int n);

/* The row's next n raw bytes, or NULL (then damaged). */
const uint8_t *varint_rows_take(struct varint_rows *r, size_t n);

/* Marks the chunk damaged; returns -1. */
int varint_rows_fail(struct varint_rows *r);

#endif

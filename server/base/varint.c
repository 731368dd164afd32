#include "base/varint.h"

#include <stdlib.h>

#include "base/xmalloc.h"

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

uint8_t *varint_buf_room(struct varint_buf *b, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap - b->len < n) cap *= 2;
        b->v = xrealloc(b->v, cap);
        b->cap = cap;
    }
    return b->v + b->len;
}

void varint_buf_put(struct varint_buf *b, uint64_t v)
{
    b->len += varint_put(varint_buf_room(b, VARINT_MAX), v);
}

void varint_buf_free(struct varint_buf *b)
{
    free(b->v);
    b->v = NULL;
    b->len = b->cap = 0;
}

void varint_rows_begin(struct varint_rows *r, const void *blob, size_t size, int64_t n)
{
    r->p = blob;
    r->end = size ? r->p + size : r->p; /* an empty blob comes as NULL: no offset on it */
    r->left = n >= 0 ? n : -1;
}

int varint_rows_next(struct varint_rows *r)
{
    if (r->left < 0) return -1;
    if (r->left == 0) return r->p == r->end ? 0 : varint_rows_fail(r);
    r->left--;
    return 1;
}

int varint_rows_get(struct varint_rows *r, uint64_t *v, int n)
{
    for (int i = 0; i < n; i++)
        if (r->left < 0 || !varint_get(&r->p, r->end, &v[i])) return varint_rows_fail(r) + 1;
    return 1;
}

const uint8_t *varint_rows_take(struct varint_rows *r, size_t n)
{
    if (r->left < 0 || (size_t)(r->end - r->p) < n) {
        varint_rows_fail(r);
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    return at;
}

int varint_rows_fail(struct varint_rows *r)
{
    r->left = -1;
    return -1;
}

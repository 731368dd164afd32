#include "base/hmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/xmalloc.h"

enum { S_EMPTY, S_LIVE, S_TOMB };

/* A slot's header; the value follows at HDR bytes (8-aligned). */
struct slot {
    uint64_t hash;
    size_t klen;
    int state;
    union {
        unsigned char in[HMAP_INLINE_KEY];
        unsigned char *out;
    } key;
};

#define HDR ((sizeof(struct slot) + 7) & ~(size_t)7)

static struct slot *slot_at(const struct hmap *m, size_t i)
{
    return (struct slot *)(void *)(m->slots + i * m->stride);
}

static void *val_of(struct slot *s)
{
    return (unsigned char *)s + HDR;
}

static const unsigned char *key_of(const struct slot *s)
{
    return s->klen <= HMAP_INLINE_KEY ? s->key.in : s->key.out;
}

static int key_eq(const struct slot *s, uint64_t hash, const void *key, size_t klen)
{
    return s->state == S_LIVE && s->hash == hash && s->klen == klen && memcmp(key_of(s), key, klen) == 0;
}

void hmap_init(struct hmap *m, size_t vsize, size_t min_cap)
{
    memset(m, 0, sizeof *m);
    m->vsize = vsize;
    m->stride = HDR + ((vsize + 7) & ~(size_t)7);
    m->min_cap = min_cap ? min_cap : 16;
}

uint64_t hmap_hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
    return h;
}

uint64_t hmap_hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static void grow(struct hmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : m->min_cap;
    unsigned char *old = m->slots;
    size_t ocap = m->cap;
    /* malloc + memset, not calloc: a large calloc is fresh zero pages that
     * the rehash below reads before writing, mapping the shared zero page
     * first; each page then takes a second fault, a copy and a TLB
     * shootdown across the cores when written. Writing first faults once. */
    m->slots = xmalloc(ncap * m->stride);
    memset(m->slots, 0, ncap * m->stride);
    m->cap = ncap;
    m->n = m->used = 0;
    for (size_t i = 0; i < ocap; i++) {
        struct slot *s = (struct slot *)(void *)(old + i * m->stride);
        if (s->state != S_LIVE) continue;
        size_t k = (size_t)s->hash & (ncap - 1);
        while (slot_at(m, k)->state != S_EMPTY) k = (k + 1) & (ncap - 1);
        memcpy(slot_at(m, k), s, m->stride);
        m->n++;
    }
    m->used = m->n;
    free(old);
}

void *hmap_put(struct hmap *m, uint64_t hash, const void *key, size_t klen, int *fresh)
{
    if (m->used * 2 >= m->cap) grow(m);
    size_t k = (size_t)hash & (m->cap - 1), tomb = SIZE_MAX;
    for (struct slot *s; (s = slot_at(m, k))->state != S_EMPTY; k = (k + 1) & (m->cap - 1)) {
        if (key_eq(s, hash, key, klen)) {
            if (fresh) *fresh = 0;
            return val_of(s);
        }
        if (s->state == S_TOMB && tomb == SIZE_MAX) tomb = k;
    }
    if (tomb != SIZE_MAX) k = tomb;
    else m->used++;
    m->n++;
    struct slot *s = slot_at(m, k);
    memset(s, 0, m->stride);
    s->hash = hash;
    s->klen = klen;
    s->state = S_LIVE;
    if (klen <= HMAP_INLINE_KEY) memcpy(s->key.in, key, klen);
    else s->key.out = (unsigned char *)xmemdup0(key, klen);
    if (fresh) *fresh = 1;
    return val_of(s);
}

static struct slot *find(const struct hmap *m, uint64_t hash, const void *key, size_t klen)
{
    if (!m->cap) return NULL;
    for (size_t k = (size_t)hash & (m->cap - 1);; k = (k + 1) & (m->cap - 1)) {
        struct slot *s = slot_at(m, k);
        if (s->state == S_EMPTY) return NULL;
        if (key_eq(s, hash, key, klen)) return s;
    }
}

void *hmap_get(const struct hmap *m, uint64_t hash, const void *key, size_t klen)
{
    struct slot *s = find(m, hash, key, klen);
    return s ? val_of(s) : NULL;
}

int hmap_del(struct hmap *m, uint64_t hash, const void *key, size_t klen)
{
    struct slot *s = find(m, hash, key, klen);
    if (!s) return 0;
    if (s->klen > HMAP_INLINE_KEY) free(s->key.out);
    s->state = S_TOMB;
    m->n--;
    return 1;
}

void *hmap_next(const struct hmap *m, size_t *pos, const void **key, size_t *klen)
{
    for (; *pos < m->cap; (*pos)++) {
        struct slot *s = slot_at(m, *pos);
        if (s->state != S_LIVE) continue;
        (*pos)++;
        if (key) *key = key_of(s);
        if (klen) *klen = s->klen;
        return val_of(s);
    }
    return NULL;
}

void hmap_free(struct hmap *m, void (*free_val)(void *val))
{
    for (size_t i = 0; i < m->cap; i++) {
        struct slot *s = slot_at(m, i);
        if (s->state != S_LIVE) continue;
        if (free_val) free_val(val_of(s));
        if (s->klen > HMAP_INLINE_KEY) free(s->key.out);
    }
    free(m->slots);
    hmap_init(m, m->vsize, m->min_cap);
}

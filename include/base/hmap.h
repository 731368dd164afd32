/*
 * hmap.h — the one hash map: open addressing with linear probing, keys of
 * any length copied in, values of a fixed size stored inline in the slot.
 *
 * The caller computes each key's hash (hmap_hash_bytes for text,
 * hmap_hash_u64 for integers) and passes it with the key, so a map keyed by
 * a struct or an integer hashes it the way that key wants. The table grows
 * to twice its size when live entries plus tombstones reach half of it,
 * checked at the start of each hmap_put; growing drops the tombstones and
 * reinserts the live entries in slot order. Iteration (hmap_next) walks the
 * slots in order, so for the same hashes and the same sequence of calls the
 * order is the same from run to run: callers that write rows in map order
 * rely on that.
 *
 * Memory: keys are copied (inline up to HMAP_INLINE_KEY bytes, else on the
 * heap) and freed by hmap_del/hmap_free; a value pointer returned by
 * hmap_put or hmap_get is borrowed, valid until the next hmap_put or
 * hmap_del on the map. What a value points to is the caller's; hmap_free
 * calls free_val on each value's address when given. Not thread-safe: one
 * map belongs to one thread at a time.
 */
#ifndef TB_HMAP_H
#define TB_HMAP_H

#include <stddef.h>
#include <stdint.h>

#define HMAP_INLINE_KEY 16

struct hmap {
    unsigned char *slots; /* cap * stride bytes; owned */
    size_t cap;           /* 0 or a power of two */
    size_t n;             /* live entries */
    size_t used;          /* live entries plus tombstones */
    size_t vsize;         /* bytes of each value */
    size_t stride;        /* bytes of each slot */
    size_t min_cap;       /* the first table's size, a power of two */
};

/* An empty map of values of vsize bytes; the first hmap_put makes a table
 * of min_cap slots (a power of two). Allocates nothing. */
void hmap_init(struct hmap *m, size_t vsize, size_t min_cap);

/* FNV-1a over n bytes. */
uint64_t hmap_hash_bytes(const void *p, size_t n);

/* A 64-bit finalizer mix of x (integers as keys). */
uint64_t hmap_hash_u64(uint64_t x);

/* The value for key, added zero-filled when absent (then *fresh = 1, else
 * 0; fresh may be NULL). Borrowed until the next hmap_put/hmap_del. */
void *hmap_put(struct hmap *m, uint64_t hash, const void *key, size_t klen, int *fresh);

/* The value for key, or NULL. Borrowed until the next hmap_put/hmap_del. */
void *hmap_get(const struct hmap *m, uint64_t hash, const void *key, size_t klen);

/* Removes key (its slot becomes a tombstone); returns 1 when it was there,
 * else 0. */
int hmap_del(struct hmap *m, uint64_t hash, const void *key, size_t klen);

/* Iteration in slot order: start with *pos = 0; returns the next value (and
 * its key in *key and *klen when those are not NULL), NULL at the end. The map
 * must not change during the walk. Borrowed. */
void *hmap_next(const struct hmap *m, size_t *pos, const void **key, size_t *klen);

/* Frees the table and the copied keys, calling free_val (when not NULL) on
 * each live value's address first; leaves an empty map of the same value
 * size. */
void hmap_free(struct hmap *m, void (*free_val)(void *val));

#endif

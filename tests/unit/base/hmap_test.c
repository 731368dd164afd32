/* hmap_test — the one hash map: put/get across growth, long and short keys,
 * tombstones reused and dropped on growth, slot-order iteration that
 * repeats for the same calls, and free_val on every live value. */
#include "base/hmap.h"

#include <stdio.h>
#include <string.h>

#include "harness.h"

static uint64_t h64(int64_t x)
{
    return hmap_hash_u64((uint64_t)x);
}

static void test_put_get_grow(void)
{
    struct hmap m;
    hmap_init(&m, sizeof(int64_t), 4);
    for (int64_t i = 1; i <= 1000; i++) {
        int fresh = 0;
        int64_t *v = hmap_put(&m, h64(i), &i, sizeof i, &fresh);
        CHECK(fresh == 1 && *v == 0);
        *v = i * 10;
    }
    CHECK_EQ_INT(m.n, 1000);
    CHECK(m.cap >= 2000);
    int ok = 1;
    for (int64_t i = 1; i <= 1000; i++) {
        int64_t *v = hmap_get(&m, h64(i), &i, sizeof i);
        ok &= v && *v == i * 10;
    }
    CHECK(ok);
    int64_t absent = 5000;
    CHECK(hmap_get(&m, h64(absent), &absent, sizeof absent) == NULL);
    int fresh = 1;
    int64_t one = 1;
    CHECK(*(int64_t *)hmap_put(&m, h64(one), &one, sizeof one, &fresh) == 10 && fresh == 0);
    hmap_free(&m, NULL);
    CHECK(m.cap == 0 && m.n == 0);
}

static void test_text_keys(void)
{
    struct hmap m;
    hmap_init(&m, sizeof(int), 8);
    const char *keys[] = { "a", "sixteen-bytes-ok", "a key longer than the inline sixteen bytes", "" };
    for (int i = 0; i < 4; i++) *(int *)hmap_put(&m, hmap_hash_bytes(keys[i], strlen(keys[i])), keys[i],
                                                 strlen(keys[i]), NULL) = i + 1;
    for (int i = 0; i < 4; i++) {
        int *v = hmap_get(&m, hmap_hash_bytes(keys[i], strlen(keys[i])), keys[i], strlen(keys[i]));
        CHECK(v && *v == i + 1);
    }
    /* a key that is a prefix of another is a different key */
    CHECK(hmap_get(&m, hmap_hash_bytes("sixteen", 7), "sixteen", 7) == NULL);
    size_t pos = 0, klen, seen = 0;
    const void *k;
    while (hmap_next(&m, &pos, &k, &klen)) seen += klen;
    CHECK_EQ_INT(seen, 1 + 16 + strlen(keys[2]));
    hmap_free(&m, NULL);
}

static void test_tombstones(void)
{
    struct hmap m;
    hmap_init(&m, sizeof(int), 16);
    for (int i = 0; i < 6; i++) hmap_put(&m, 7, &i, sizeof i, NULL); /* one chain */
    int three = 3;
    CHECK(hmap_del(&m, 7, &three, sizeof three) == 1);
    CHECK(hmap_del(&m, 7, &three, sizeof three) == 0);
    CHECK_EQ_INT(m.n, 5);
    CHECK_EQ_INT(m.used, 6);
    int five = 5;
    CHECK(hmap_get(&m, 7, &five, sizeof five) != NULL); /* found past the tombstone */
    int fresh = 0;
    hmap_put(&m, 7, &three, sizeof three, &fresh); /* reuses the tombstone */
    CHECK(fresh == 1 && m.used == 6 && m.n == 6);
    CHECK(hmap_del(&m, 7, &three, sizeof three) == 1);
    int nine = 9, ten = 10, eleven = 11, twelve = 12;
    hmap_put(&m, 7, &nine, sizeof nine, NULL); /* takes the tombstone */
    hmap_put(&m, 7, &ten, sizeof ten, NULL);
    hmap_put(&m, 7, &eleven, sizeof eleven, NULL);
    CHECK(m.cap == 16 && m.n == 8 && m.used == 8);
    CHECK(hmap_del(&m, 7, &ten, sizeof ten) == 1);
    hmap_put(&m, 7, &twelve, sizeof twelve, NULL); /* used reached half: grows, tombstone dropped */
    CHECK_EQ_INT(m.cap, 32);
    CHECK_EQ_INT(m.n, 8);
    CHECK_EQ_INT(m.used, 8);
    CHECK(hmap_get(&m, 7, &ten, sizeof ten) == NULL);
    hmap_free(&m, NULL);
}

static void fill(struct hmap *m, char *order, size_t cap)
{
    hmap_init(m, sizeof(int), 8);
    char key[16];
    for (int i = 0; i < 40; i++) {
        int n = snprintf(key, sizeof key, "k%d", i * 7 % 40);
        *(int *)hmap_put(m, hmap_hash_bytes(key, (size_t)n), key, (size_t)n, NULL) = i * 7 % 40;
    }
    size_t pos = 0, o = 0;
    int *v;
    while ((v = hmap_next(m, &pos, NULL, NULL)) && o + 4 < cap) o += (size_t)snprintf(order + o, cap - o, "%d,", *v);
}

static void test_order_repeats(void)
{
    struct hmap a, b;
    char oa[256], ob[256];
    fill(&a, oa, sizeof oa);
    fill(&b, ob, sizeof ob);
    CHECK_EQ_STR(oa, ob);
    CHECK_EQ_INT(a.n, 40);
    hmap_free(&a, NULL);
    hmap_free(&b, NULL);
}

static int freed;
static void count_free(void *v)
{
    freed += *(int *)v;
}

static void test_free_val(void)
{
    struct hmap m;
    hmap_init(&m, sizeof(int), 4);
    for (int i = 1; i <= 4; i++) *(int *)hmap_put(&m, h64(i), &i, sizeof i, NULL) = i;
    int two = 2;
    hmap_del(&m, h64(two), &two, sizeof two);
    hmap_free(&m, count_free);
    CHECK_EQ_INT(freed, 1 + 3 + 4);
}

int main(void)
{
    RUN(test_put_get_grow);
    RUN(test_text_keys);
    RUN(test_tombstones);
    RUN(test_order_repeats);
    RUN(test_free_val);
    return harness_done("hmap");
}

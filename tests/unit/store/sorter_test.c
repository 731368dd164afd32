/* sorter_test.c — the external merge sort: random variable-size records,
 * threads interleaved and each mostly in time order (as in a trace),
 * under a 1 MiB budget (many spilled runs), ties on ts and dur, records
 * larger than the run buffer, the in-memory path and empty input. Every
 * output is checked against qsort of the same keys, payload bytes included. */
#include <dirent.h>
#include <stdint.h>

#include "base/fsutil.h"
#include "harness.h"
#include "base/xmalloc.h"
#include "store/sorter.h"

static char tmpdir[] = "/tmp/sorter_test-XXXXXX";

struct item {
    struct sorter_key k;
    uint32_t n;
};

static int key_cmp(const struct sorter_key *a, const struct sorter_key *b)
{
    if (a->track != b->track) return a->track < b->track ? -1 : 1;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    if (a->dur != b->dur) return a->dur > b->dur ? -1 : 1; /* longer first */
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return 0;
}

static int item_cmp(const void *x, const void *y)
{
    return key_cmp(&((const struct item *)x)->k, &((const struct item *)y)->k);
}

/* The payload of record seq: its bytes are a function of (seq, i), so any
 * mix-up of records or offsets shows. */
static void fill_payload(uint8_t *p, uint32_t n, uint64_t seq)
{
    for (uint32_t i = 0; i < n; i++) p[i] = (uint8_t)(seq * 131 + i * 7 + (i >> 8));
}

static int payload_ok(const uint8_t *p, uint32_t n, uint64_t seq)
{
    for (uint32_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seq * 131 + i * 7 + (i >> 8))) return 0;
    return 1;
}

static unsigned long long rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    return harness_rand(&rng);
}

static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *de;
    int n = 0;
    if (!d) return 0;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) n++;
    closedir(d);
    return n == 0;
}

/* Adds items[0..n) (payloads from fill_payload), drains the sorter and
 * checks order, keys and payloads against qsort. Returns spilled runs. */
static int sort_and_check(struct item *items, size_t n, size_t budget)
{
    struct sorter *s = sorter_new(budget, tmpdir);
    struct err e;
    uint8_t *buf = NULL;
    size_t cap = 0;
    int add_fail = 0;

    for (size_t i = 0; i < n; i++) {
        if (items[i].n > cap) {
            cap = items[i].n;
            buf = xrealloc(buf, cap);
        }
        fill_payload(buf, items[i].n, items[i].k.seq);
        if (sorter_add(s, &items[i].k, buf, items[i].n, &e) != 0) add_fail++;
    }
    free(buf);
    CHECK_EQ_INT(add_fail, 0);
    int runs = sorter_spilled_runs(s);
    CHECK_EQ_INT(sorter_finish(s, &e), 0);
    /* the merge's read buffers share the budget: 64 KiB each at least */
    if (runs) {
        size_t rb = sorter_run_buffer(s), floor = 64u << 10;
        CHECK(rb >= floor && rb <= (1u << 20));
        CHECK(rb * (size_t)runs <= (budget > floor * (size_t)runs ? budget : floor * (size_t)runs));
    } else {
        CHECK_EQ_INT(sorter_run_buffer(s), 0);
    }

    struct item *want = xmalloc(sizeof *want * (n ? n : 1));
    memcpy(want, items, sizeof *want * n);
    qsort(want, n, sizeof *want, item_cmp);

    struct sorter_key k;
    const void *p;
    uint32_t pn;
    size_t i = 0;
    int rc, bad_key = 0, bad_payload = 0;
    while ((rc = sorter_next(s, &k, &p, &pn, &e)) == 1) {
        if (i >= n) {
            i++;
            continue;
        }
        if (key_cmp(&k, &want[i].k) != 0 || pn != want[i].n) {
            if (!bad_key++)
                fprintf(stderr, "record %zu: got track %u ts %lld dur %lld seq %llu, want seq %llu\n", i, k.track,
                        (long long)k.ts, (long long)k.dur, (unsigned long long)k.seq,
                        (unsigned long long)want[i].k.seq);
        } else if (!payload_ok(p, pn, k.seq)) {
            bad_payload++;
        }
        i++;
    }
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_INT(i, n);
    CHECK_EQ_INT(bad_key, 0);
    CHECK_EQ_INT(bad_payload, 0);
    /* after the end, still the end */
    CHECK_EQ_INT(sorter_next(s, &k, &p, &pn, &e), 0);
    sorter_free(s);
    free(want);
    CHECK(dir_is_empty(tmpdir)); /* spill files are unlinked */
    return runs;
}

/* Many random records under the smallest budget: dozens of runs. */
static void test_random_spilled(void)
{
    size_t n = 30000;
    struct item *items = xmalloc(sizeof *items * n);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        items[i].k.track = (uint32_t)(1 + next_rand() % 7);
        items[i].k.ts = (int64_t)(next_rand() % 5000) - 1000; /* many ties, negatives too */
        items[i].k.dur = (int64_t)(next_rand() % 4);          /* many equal durations */
        items[i].k.seq = i;
        uint64_t r = next_rand() % 100;
        items[i].n = r < 5 ? 0 : r < 90 ? (uint32_t)(next_rand() % 600) : (uint32_t)(next_rand() % 6000);
        bytes += items[i].n + 40;
    }
    int runs = sort_and_check(items, n, 1u << 20);
    CHECK(runs >= (int)(bytes >> 20) - 1);
    CHECK(runs > 8);
    free(items);
}

/* The shape of a real trace: threads interleaved, each mostly in time
 * order (nested slices: a parent before its children, same start longer
 * first) with a few events out of place, in memory and spilled; then the
 * same over track ids too far apart to count, and in reverse order. */
static void test_threads_in_order(void)
{
    size_t n = 40000;
    struct item *items = xmalloc(sizeof *items * n);
    int64_t clock[6] = { 0 };
    for (int pass = 0; pass < 4; pass++) {
        for (size_t i = 0; i < n; i++) {
            uint32_t t = (uint32_t)(next_rand() % 6);
            clock[t] += (int64_t)(next_rand() % 3); /* ties as nested starts */
            items[i].k.track = pass == 2 ? 1 + t * 1000003u : 1 + t;
            items[i].k.ts = clock[t];
            items[i].k.dur = (int64_t)(next_rand() % 50);
            if (next_rand() % 997 == 0) items[i].k.ts -= (int64_t)(next_rand() % 5000); /* out of place */
            if (pass == 3) items[i].k.ts = -clock[t];                                   /* reversed */
            items[i].k.seq = i;
            items[i].n = (uint32_t)(next_rand() % 40);
        }
        CHECK_EQ_INT(sort_and_check(items, n, 64u << 20), 0);
        CHECK(sort_and_check(items, n, 1u << 20) > 0);
    }
    free(items);
}

/* Equal start: longer first; equal start and length: insertion order. */
static void test_ties(void)
{
    struct item items[] = {
        { { 1, 100, 5, 0 }, 3 },  { { 1, 100, 50, 1 }, 4 }, { { 1, 100, 5, 2 }, 5 },  { { 1, 100, 500, 3 }, 0 },
        { { 1, 100, 5, 4 }, 1 },  { { 1, 99, 1, 5 }, 2 },   { { 0, 100, 5, 6 }, 7 },  { { 1, 100, 50, 7 }, 9 },
        { { 2, -5, 0, 8 }, 10 },  { { 1, 100, 0, 9 }, 11 }, { { 1, 100, -1, 10 }, 3 },
    };
    size_t n = sizeof items / sizeof items[0];
    CHECK_EQ_INT(sort_and_check(items, n, 1u << 20), 0);

    /* explicitly: the order of seq numbers that must come out */
    struct sorter *s = sorter_new(0, tmpdir);
    struct err e;
    for (size_t i = 0; i < n; i++) CHECK_EQ_INT(sorter_add(s, &items[i].k, "x", 1, &e), 0);
    CHECK_EQ_INT(sorter_finish(s, &e), 0);
    static const uint64_t order[] = { 6, 5, 3, 1, 7, 0, 2, 4, 9, 10, 8 };
    struct sorter_key k;
    const void *p;
    uint32_t pn;
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ_INT(sorter_next(s, &k, &p, &pn, &e), 1);
        CHECK_EQ_INT(k.seq, order[i]);
    }
    CHECK_EQ_INT(sorter_next(s, &k, &p, &pn, &e), 0);
    sorter_free(s);
}

/* The same ties, but spread over many spilled runs: the merge must keep
 * insertion order across runs too. */
static void test_ties_across_runs(void)
{
    size_t n = 20000;
    struct item *items = xmalloc(sizeof *items * n);
    for (size_t i = 0; i < n; i++) {
        items[i].k.track = 3;
        items[i].k.ts = (int64_t)(i % 3);
        items[i].k.dur = (int64_t)(i % 2) * 10;
        items[i].k.seq = i;
        items[i].n = 200;
    }
    CHECK(sort_and_check(items, n, 1u << 20) >= 3);
    free(items);
}

/* Records larger than the 1 MiB run buffer (and than the whole budget),
 * mixed with small ones, in several runs. */
static void test_big_records(void)
{
    size_t n = 4000;
    struct item *items = xmalloc(sizeof *items * n);
    for (size_t i = 0; i < n; i++) {
        items[i].k.track = (uint32_t)(next_rand() % 3);
        items[i].k.ts = (int64_t)(next_rand() % 1000);
        items[i].k.dur = (int64_t)(next_rand() % 100);
        items[i].k.seq = i;
        items[i].n = (uint32_t)(next_rand() % 2000);
    }
    items[10].n = 3u << 20;            /* bigger than budget and run buffer */
    items[1500].n = (1u << 20) + 1;    /* just over the run buffer */
    items[1501].n = (1u << 20) - 40;   /* a record that nearly fills it */
    items[2500].n = (5u << 20) / 2;
    items[3999].n = 2u << 20;          /* the last record, alone in the arena */
    int runs = sort_and_check(items, n, 1u << 20);
    CHECK(runs >= 4);
    free(items);
}

static void test_no_spill(void)
{
    size_t n = 5000;
    struct item *items = xmalloc(sizeof *items * n);
    for (size_t i = 0; i < n; i++) {
        items[i].k.track = (uint32_t)(next_rand() % 4);
        items[i].k.ts = (int64_t)(next_rand() % 300);
        items[i].k.dur = (int64_t)(next_rand() % 5);
        items[i].k.seq = i;
        items[i].n = (uint32_t)(next_rand() % 300);
    }
    CHECK_EQ_INT(sort_and_check(items, n, 64u << 20), 0);
    /* a big record that fits the budget stays in memory too */
    items[7].n = 3u << 20;
    CHECK_EQ_INT(sort_and_check(items, n, 64u << 20), 0);
    free(items);
}

static void test_empty(void)
{
    struct sorter *s = sorter_new(1u << 20, tmpdir);
    struct err e;
    struct sorter_key k;
    const void *p;
    uint32_t pn;
    CHECK_EQ_INT(sorter_finish(s, &e), 0);
    CHECK_EQ_INT(sorter_next(s, &k, &p, &pn, &e), 0);
    CHECK_EQ_INT(sorter_spilled_runs(s), 0);
    sorter_free(s);
    sorter_free(NULL);

    /* one record only, zero-length payload */
    struct item one = { { 9, 1, 2, 3 }, 0 };
    CHECK_EQ_INT(sort_and_check(&one, 1, 0), 0);
}

/* A temp folder that does not exist: the spill fails with an I/O error,
 * not a crash. */
static void test_bad_tmp_dir(void)
{
    struct sorter *s = sorter_new(1u << 20, "/nonexistent/sorter-test");
    struct err e;
    char *buf = xcalloc(1, 4096);
    struct sorter_key k = { 1, 0, 0, 0 };
    int rc = 0;
    for (int i = 0; i < 1000 && rc == 0; i++) {
        k.seq = (uint64_t)i;
        rc = sorter_add(s, &k, buf, 4096, &e);
    }
    CHECK_EQ_INT(rc, ERR_IO);
    CHECK(strstr(e.msg, "/nonexistent/sorter-test") != NULL);
    sorter_free(s);
    free(buf);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_random_spilled);
    RUN(test_threads_in_order);
    RUN(test_ties);
    RUN(test_ties_across_runs);
    RUN(test_big_records);
    RUN(test_no_spill);
    RUN(test_empty);
    RUN(test_bad_tmp_dir);
    struct err e;
    fsutil_rmtree(tmpdir, &e);
    return harness_done("sorter");
}

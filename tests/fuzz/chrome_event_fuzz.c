/* chrome_event_fuzz.c — the importer's one-pass event reader
 * (import_chrome_event_fast) against the path it shortcuts: the extent scan
 * (the span parser's skip of a nested value, the window reader's scan),
 * the event's members, then its args object's integers read again.
 * The input is an event object's bytes, read where they end with the input
 * (as at a window's end) and again inside a buffer that goes on.
 * Invariants: where the one pass reads an event (returns 1), the extent
 * scan finds an object of the same length, the members read from it are the
 * same tokens (type, bytes, escape flag) and, where its args member is an
 * object, the args' integers are import_chrome_args_scan's. Past the end
 * of an event it never reads: the same input followed by more bytes gives
 * the same answer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jtok.h"
#include "ingest/import_chrome.h"

static int same_val(const struct jtok_val *a, const struct jtok_val *b)
{
    return a->type == b->type && a->p == b->p && a->n == b->n && a->escaped == b->escaped;
}

static int same_args(const struct import_chrome_args *a, const struct import_chrome_args *b)
{
    return a->corr == b->corr && a->ext == b->ext && a->dev_type == b->dev_type && a->dev_id == b->dev_id &&
           a->addr == b->addr && a->bytes == b->bytes && a->total_alloc == b->total_alloc &&
           a->total_reserved == b->total_reserved && a->has_bytes == b->has_bytes;
}

/* Checks the one pass over [p, end) against the slow path; returns its answer. */
static int check(const char *p, const char *end, size_t *len)
{
    struct import_chrome_event x;
    size_t n = 0;
    if (import_chrome_event_fast(p, end, &x, &n) != 1) return 0;
    if (n == 0 || n > (size_t)(end - p)) abort();
    const char *cur = p;
    struct jtok_val whole;
    struct err e;
    if (jtok_span_value(&cur, end, &whole, &e) != 0 || whole.type != JT_OBJECT || whole.n != n) abort();
    struct import_chrome_ev ev;
    if (import_chrome_event_members(p, n, &ev, &e) != 0) abort();
    const struct jtok_val *f[] = { &ev.ph, &ev.cat, &ev.name, &ev.pid, &ev.tid, &ev.ts,
                                   &ev.dur, &ev.id, &ev.bp, &ev.s, &ev.args, &ev.bind_id };
    const struct jtok_val *g[] = { &x.ev.ph, &x.ev.cat, &x.ev.name, &x.ev.pid, &x.ev.tid, &x.ev.ts,
                                   &x.ev.dur, &x.ev.id, &x.ev.bp, &x.ev.s, &x.ev.args, &x.ev.bind_id };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!same_val(f[i], g[i])) abort();
    if (ev.args.type == JT_OBJECT) {
        struct import_chrome_args a;
        import_chrome_args_scan(&ev.args, &a);
        if (!x.has_a || !same_args(&a, &x.a)) abort();
    }
    *len = n;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    /* an exact-size copy (reads past it are ASan's), then one followed by more */
    char *p = malloc(n ? n : 1), *q = malloc(n + 64);
    if (!p || !q) abort();
    memcpy(p, d, n);
    memcpy(q, d, n);
    memset(q + n, '}', 64);
    size_t a = 0, b = 0;
    int ra = check(p, p + n, &a), rb = check(q, q + n + 64, &b);
    if (ra && (!rb || a != b)) abort(); /* a whole event reads the same whatever follows */
    free(p);
    free(q);
    return 0;
}

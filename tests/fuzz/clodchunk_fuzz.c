/* clodchunk_fuzz.c — one chunk of clodpack from the input (the level, the
 * row count and the first bucket from its first bytes, the rest as the
 * blob), decoded row by row. Invariants: at most n rows, each in a bucket
 * at or after the one before and at or after the chunk's, its n not
 * negative and its first sample inside its bucket; the walk ends at 0 or
 * -1, and stays there. */
#include <stdint.h>
#include <stdlib.h>

#include "derive/timeline_counters.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    int level = data[0] % 64;
    int64_t n = data[1], first = (int64_t)(int8_t)data[2] * 1000 + data[3];
    struct timeline_clod_chunk c;
    struct timeline_clod_row r;
    int64_t got = 0, prev = first;
    int rc;
    timeline_clod_chunk_begin(&c, level, first, n, data + 4, size - 4);
    while ((rc = timeline_clod_chunk_next(&c, &r)) == 1) {
        if (++got > n || r.bucket < prev || r.n < 0) abort();
        int64_t start = r.bucket * ((int64_t)1 << level);
        if (r.fts < start || r.fts - start >= ((int64_t)1 << level)) abort();
        prev = r.bucket;
    }
    if (rc != 0 && rc != -1) abort();
    if (timeline_clod_chunk_next(&c, &r) != rc) abort();
    return 0;
}

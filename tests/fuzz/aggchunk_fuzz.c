/* aggchunk_fuzz.c — one chunk of taggpack from the input (the row count and
 * the first bucket from its first bytes, the rest as the blob), decoded row
 * by row. Invariants: at most n rows, each in a bucket at or after the one
 * before and the chunk's; the walk ends at 0 or -1, and stays there. */
#include <stdint.h>
#include <stdlib.h>

#include "derive/timeline_agg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    int64_t n = data[0], first = (int64_t)(int8_t)data[1] * 1000 + data[2];
    struct timeline_agg_chunk c;
    struct timeline_agg_row r;
    int64_t got = 0, prev = first;
    int rc;
    timeline_agg_chunk_begin(&c, first, n, data + 3, size - 3);
    while ((rc = timeline_agg_chunk_next(&c, &r)) == 1) {
        if (++got > n || r.bucket < prev) abort();
        prev = r.bucket;
    }
    if (rc != 0 && rc != -1) abort();
    if (timeline_agg_chunk_next(&c, &r) != rc) abort();
    return 0;
}

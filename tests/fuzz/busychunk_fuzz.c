/* busychunk_fuzz.c — one chunk of gpubusypack from the input (the sample
 * count and the first time from its first bytes, the rest as the blob),
 * decoded sample by sample. Invariants: at most n samples, each at or
 * after the one before and the chunk's time; the walk ends at 0 or -1, and
 * stays there. */
#include <stdint.h>
#include <stdlib.h>

#include "derive/timeline_counters.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    int64_t n = data[0], first = (int64_t)(int8_t)data[1] * 1000000 + data[2];
    struct timeline_busy_chunk c;
    int64_t got = 0, prev = first, ts, v;
    int rc;
    timeline_busy_chunk_begin(&c, first, n, data + 3, size - 3);
    while ((rc = timeline_busy_chunk_next(&c, &ts, &v)) == 1) {
        if (++got > n || ts < prev) abort();
        prev = ts;
    }
    if (rc != 0 && rc != -1) abort();
    if (timeline_busy_chunk_next(&c, &ts, &v) != rc) abort();
    return 0;
}

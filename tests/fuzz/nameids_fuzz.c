/* nameids_fuzz.c — chunks of name_ids from the input (the bounds, the
 * count and the gaps of each, any bytes), walked and counted over a range
 * from the input. Invariants: a walk yields ids ascending within the range
 * and within a chunk's bounds, and ends at 0 or ERR_DAMAGED, nothing else;
 * a count ends at 0 or ERR_DAMAGED, and when both end at 0 they agree. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>

#include "store/nameids.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sqlite3 *db;
    sqlite3_stmt *ins;
    struct nameids *c;
    struct err e;
    if (size < 3) return 0;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) abort();
    if (sqlite3_exec(db,
                     "CREATE TABLE name_ids(name INTEGER, first INTEGER, last INTEGER, n INTEGER, ids BLOB,"
                     " PRIMARY KEY(name, first)) WITHOUT ROWID",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO name_ids VALUES(1, ?, ?, ?, ?)", -1, &ins, NULL) != SQLITE_OK)
        abort();
    int nchunks = 1 + data[0] % 3;
    int64_t lo = data[1], hi = lo + data[2], lowest = INT64_MAX, highest = INT64_MIN;
    size_t off = 3;
    for (int k = 0; k < nchunks && off + 4 <= size; k++) {
        int64_t first = data[off] * 4, last = first + data[off + 1], n = data[off + 2] % 64;
        size_t len = data[off + 3];
        off += 4;
        if (len > size - off) len = size - off;
        sqlite3_reset(ins);
        sqlite3_bind_int64(ins, 1, first);
        sqlite3_bind_int64(ins, 2, last);
        sqlite3_bind_int64(ins, 3, n);
        sqlite3_bind_blob(ins, 4, data + off, (int)len, SQLITE_STATIC);
        if (sqlite3_step(ins) != SQLITE_DONE) abort();
        off += len;
        if (first < lowest) lowest = first;
        if (last > highest) highest = last;
    }
    sqlite3_finalize(ins);
    if (nameids_open(db, &c, &e) != 0) abort();
    int64_t id, prev = INT64_MIN, got = 0, n;
    int rc;
    nameids_begin(c, 1, lo, hi);
    while ((rc = nameids_next(c, &id, &e)) == 1) {
        if (id <= prev || id < lo || id > hi || id < lowest || id > highest) abort();
        prev = id;
        got++;
    }
    if (rc != 0 && rc != ERR_DAMAGED) abort();
    int crc = nameids_count(c, 1, lo, hi, &n, &e);
    if (crc != 0 && crc != ERR_DAMAGED) abort();
    /* a count reads every chunk starting in the range, and may find damage
     * past where a walk stopped */
    if (rc == 0 && crc == 0 && n != got) abort();
    nameids_close(c);
    sqlite3_close(db);
    return 0;
}

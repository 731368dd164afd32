/*
 * sha256.h — SHA-256 (FIPS 180-4), for the content hash that spots a
 * trace uploaded twice (catalog "hash": the hash of the sorted per-file
 * hashes, so the order of a run's files does not matter).
 *
 * A struct sha256 is the caller's (on its stack, no allocation) and is
 * used by one thread at a time; the functions keep no other state.
 * sha256_file reads a file in 1 MiB pieces; no other I/O.
 *
 * sha256_init sets `accel` when the CPU has the x86 SHA extensions; the
 * blocks are then hashed with them. Both paths give the same hash; a caller
 * may clear `accel` after sha256_init to force the portable code (the unit
 * test checks both).
 */
#ifndef TB_SHA256_H
#define TB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define SHA256_HEX_LEN 64

struct sha256 {
    uint32_t h[8];
    uint64_t bytes;
    unsigned char buf[64];
    size_t nbuf;
    int accel;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* Ends the hash: OUT hex, 64 lowercase hex digits and a NUL. */
void sha256_hex(struct sha256 *s, char hex[SHA256_HEX_LEN + 1]);

/* The hash of a whole file (as stored: a .gz is hashed compressed). ERR_IO. */
int sha256_file(const char *path, char hex[SHA256_HEX_LEN + 1], struct err *e);

/* The content hash of a run: sha256 of its files' hashes sorted and joined
 * with '\n' (hexes: n strings of 64 digits; they are sorted in place). */
void sha256_of_hashes(char (*hexes)[SHA256_HEX_LEN + 1], int n, char out[SHA256_HEX_LEN + 1]);

#endif

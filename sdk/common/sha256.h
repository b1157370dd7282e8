/*
 * sha256.h — SHA-256 (FIPS 180-4), streaming.
 *
 * Used for content-hash image tags (imagebuild) and anywhere a stable digest
 * of bytes is needed. The context is held by value; nothing is allocated.
 */
#ifndef TY_SHA256_H
#define TY_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN 32
#define SHA256_HEX_LEN 65 /* 64 hex digits and a NUL */

struct sha256 {
    uint32_t h[8];
    uint64_t bytes; /* total length so far */
    uint8_t block[64];
    size_t fill; /* bytes waiting in block */
};

void ty__sha256_init(struct sha256 *s);
void ty__sha256_update(struct sha256 *s, const void *data, size_t len);
/* Finish and write the digest; s must be re-initialised before reuse. */
void ty__sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);
/* Digest of one buffer. */
void ty__sha256_buf(const void *data, size_t len, uint8_t out[SHA256_LEN]);
/* Lower-case hex of a digest into out (SHA256_HEX_LEN bytes). */
/* Use the portable compression even where the CPU has SHA instructions
 * (on = 1), or go back to choosing (on = 0). For tests. */
void ty__sha256_force_portable(int on);
void ty__sha256_hex(const uint8_t digest[SHA256_LEN], char out[SHA256_HEX_LEN]);

#endif

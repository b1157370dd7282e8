/*
 * ty_digest.c — the SDK's public SHA-256, for plans that address data by
 * content (the memory-stress plan names every block by its hash). The
 * implementation is the one the runner uses for image tags (sha256.c).
 */
#include "sha256.h"
#include "testyard.h"

void
ty_sha256(const void *data, size_t len, uint8_t out[32])
{
    ty__sha256_buf(data, len, out);
}

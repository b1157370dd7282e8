/*
 * ty_hash.h — FNV-1a, the one non-cryptographic hash of the runner and the
 * SDK: the pprof writer's string table, the runner's site ranking, the sync
 * service's maps and the metrics registry all use it (SHA-256 is in
 * sha256.h).
 *
 * 64-bit FNV-1a: start from TY__FNV_BASIS (or a value mixed from it), and
 * for each byte h = (h ^ byte) * TY__FNV_PRIME.
 */
#ifndef TY_HASH_H
#define TY_HASH_H

#include <stddef.h>
#include <stdint.h>

#define TY__FNV_BASIS 0xcbf29ce484222325ULL
#define TY__FNV_PRIME 0x100000001b3ULL

/* h carried on over n bytes at p. */
uint64_t ty__fnv1a(uint64_t h, const void *p, size_t n);
/* h carried on over the bytes of s, without its NUL. */
uint64_t ty__fnv1a_str(uint64_t h, const char *s);

#endif

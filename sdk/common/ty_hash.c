/* ty_hash.c — FNV-1a; see ty_hash.h. */
#include "ty_hash.h"

uint64_t
ty__fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * TY__FNV_PRIME;
    return h;
}

uint64_t
ty__fnv1a_str(uint64_t h, const char *s)
{
    for (const unsigned char *b = (const unsigned char *)s; *b != '\0'; b++)
        h = (h ^ *b) * TY__FNV_PRIME;
    return h;
}

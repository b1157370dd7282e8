/*
 * sha256.c — SHA-256 as FIPS 180-4 specifies it: 64-byte blocks, a
 * message schedule of 64 words, big-endian length padding.
 *
 * It is on a hot path: plans address every block they move by its hash
 * (memory-stress hashes every byte twice per round), so the compression
 * uses the CPU's SHA instructions when it has them (x86 SHA extensions,
 * checked once at run time) and an unrolled portable version otherwise.
 * TESTYARD_SHA256_PORTABLE in the environment forces the portable one, so
 * tests can check both against the same vectors.
 */
#include "sha256.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
ror(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static inline uint32_t
load_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

/* One round with the working variables named rather than shifted through
 * an array: the eight names rotate from one round to the next, so after
 * eight rounds they are back in place and nothing was copied. */
#define ROUND(a, b, c, d, e, f, g, h, i)                                       \
    do {                                                                       \
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +              \
                      ((e & f) ^ (~e & g)) + k[i] + w[i];                      \
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +                  \
                      ((a & b) ^ (a & c) ^ (b & c));                           \
        d += t1;                                                               \
        h = t1 + t2;                                                           \
    } while (0)

static void
compress_portable(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
    for (; nblocks > 0; nblocks--, p += 64) {
        uint32_t w[64];
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
        uint32_t e = h[4], f = h[5], g = h[6], hh = h[7];

        for (int i = 0; i < 16; i++)
            w[i] = load_be32(p + 4 * i);
        for (int i = 16; i < 64; i++)
            w[i] = w[i - 16] + w[i - 7] +
                   (ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3)) +
                   (ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10));
        for (int i = 0; i < 64; i += 8) {
            ROUND(a, b, c, d, e, f, g, hh, i);
            ROUND(hh, a, b, c, d, e, f, g, i + 1);
            ROUND(g, hh, a, b, c, d, e, f, i + 2);
            ROUND(f, g, hh, a, b, c, d, e, i + 3);
            ROUND(e, f, g, hh, a, b, c, d, i + 4);
            ROUND(d, e, f, g, hh, a, b, c, i + 5);
            ROUND(c, d, e, f, g, hh, a, b, i + 6);
            ROUND(b, c, d, e, f, g, hh, a, i + 7);
        }
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
        h[5] += f;
        h[6] += g;
        h[7] += hh;
    }
}

#if defined(__x86_64__) && !defined(TY_SANITIZE)
#include <immintrin.h>

#define SHA_NI __attribute__((target("sha,sse4.1,ssse3")))

/* The x86 SHA extensions keep the state as two vectors, ABEF and CDGH;
 * each sha256rnds2 does two rounds, and sha256msg1/msg2 compute the
 * message schedule four words at a time. Round group j (rounds 4j..4j+3)
 * uses m[j % 4]; while it runs, the words of groups j+1 and j+3 are being
 * prepared. */
static SHA_NI void
compress_shani(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
    const __m128i bswap =
        _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i t = _mm_loadu_si128((const __m128i *)&h[0]);
    __m128i s1 = _mm_loadu_si128((const __m128i *)&h[4]);
    __m128i s0;

    t = _mm_shuffle_epi32(t, 0xb1);
    s1 = _mm_shuffle_epi32(s1, 0x1b);
    s0 = _mm_alignr_epi8(t, s1, 8);
    s1 = _mm_blend_epi16(s1, t, 0xf0);
    for (; nblocks > 0; nblocks--, p += 64) {
        __m128i save0 = s0, save1 = s1, m[4], msg;

        for (int j = 0; j < 4; j++)
            m[j] = _mm_shuffle_epi8(
                _mm_loadu_si128((const __m128i *)(p + 16 * j)), bswap);
            /* Fully unrolled, m[] indexes are constants and stay in registers.
             */
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++) {
            msg = _mm_add_epi32(m[j & 3],
                                _mm_loadu_si128((const __m128i *)&k[4 * j]));
            s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
            if (j >= 3 && j <= 14) {
                t = _mm_alignr_epi8(m[j & 3], m[(j + 3) & 3], 4);
                m[(j + 1) & 3] = _mm_add_epi32(m[(j + 1) & 3], t);
                m[(j + 1) & 3] = _mm_sha256msg2_epu32(m[(j + 1) & 3], m[j & 3]);
            }
            msg = _mm_shuffle_epi32(msg, 0x0e);
            s0 = _mm_sha256rnds2_epu32(s0, s1, msg);
            if (j >= 1 && j <= 12)
                m[(j + 3) & 3] = _mm_sha256msg1_epu32(m[(j + 3) & 3], m[j & 3]);
        }
        s0 = _mm_add_epi32(s0, save0);
        s1 = _mm_add_epi32(s1, save1);
    }
    t = _mm_shuffle_epi32(s0, 0x1b);
    s1 = _mm_shuffle_epi32(s1, 0xb1);
    s0 = _mm_blend_epi16(t, s1, 0xf0);
    s1 = _mm_alignr_epi8(s1, t, 8);
    _mm_storeu_si128((__m128i *)&h[0], s0);
    _mm_storeu_si128((__m128i *)&h[4], s1);
}

static int cached = -1;

static int
have_shani(void)
{
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("sha") &&
                 __builtin_cpu_supports("sse4.1") &&
                 __builtin_cpu_supports("ssse3");
        if (getenv("TESTYARD_SHA256_PORTABLE") != NULL)
            cached = 0;
    }
    return cached;
}
#endif

void
ty__sha256_force_portable(int on)
{
#if defined(__x86_64__) && !defined(TY_SANITIZE)
    cached = on ? 0 : -1;
#else
    (void)on;
#endif
}

static void
compress(struct sha256 *s, const uint8_t *p, size_t nblocks)
{
#if defined(__x86_64__) && !defined(TY_SANITIZE)
    if (have_shani()) {
        compress_shani(s->h, p, nblocks);
        return;
    }
#endif
    compress_portable(s->h, p, nblocks);
}

void
ty__sha256_init(struct sha256 *s)
{
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                   0xa54ff53a, 0x510e527f, 0x9b05688c,
                                   0x1f83d9ab, 0x5be0cd19};

    memcpy(s->h, iv, sizeof(iv));
    s->bytes = 0;
    s->fill = 0;
}

void
ty__sha256_update(struct sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;

    s->bytes += len;
    while (len > 0) {
        size_t n = sizeof(s->block) - s->fill;

        if (s->fill == 0 && len >= sizeof(s->block)) {
            size_t blocks = len / sizeof(s->block);

            compress(s, p, blocks);
            p += blocks * sizeof(s->block);
            len -= blocks * sizeof(s->block);
            continue;
        }
        if (n > len)
            n = len;
        memcpy(s->block + s->fill, p, n);
        s->fill += n;
        p += n;
        len -= n;
        if (s->fill == sizeof(s->block)) {
            compress(s, s->block, 1);
            s->fill = 0;
        }
    }
}

void
ty__sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN])
{
    uint64_t bits = s->bytes * 8;

    s->block[s->fill++] = 0x80;
    if (s->fill > 56) {
        memset(s->block + s->fill, 0, sizeof(s->block) - s->fill);
        compress(s, s->block, 1);
        s->fill = 0;
    }
    memset(s->block + s->fill, 0, 56 - s->fill);
    for (int i = 0; i < 8; i++)
        s->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
    compress(s, s->block, 1);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void
ty__sha256_buf(const void *data, size_t len, uint8_t out[SHA256_LEN])
{
    struct sha256 s;

    ty__sha256_init(&s);
    ty__sha256_update(&s, data, len);
    ty__sha256_final(&s, out);
}

void
ty__sha256_hex(const uint8_t digest[SHA256_LEN], char out[SHA256_HEX_LEN])
{
    static const char hex[] = "0123456789abcdef";

    for (int i = 0; i < SHA256_LEN; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[2 * SHA256_LEN] = '\0';
}

/*
 * test_sha256.c — SHA-256 against the FIPS 180-4 / NIST example vectors,
 * and streaming in odd-sized pieces against the one-shot digest.
 */
#include "sha256.h"
#include "th.h"

#include <stdlib.h>
#include <string.h>

static void
hex_of(const void *data, size_t len, char out[SHA256_HEX_LEN])
{
    uint8_t d[SHA256_LEN];

    ty__sha256_buf(data, len, d);
    ty__sha256_hex(d, out);
}

static void
t_vectors(void)
{
    static const struct {
        const char *in;
        const char *hex;
    } v[] = {
        {"",
         "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc",
         "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
         "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
        {"The quick brown fox jumps over the lazy dog",
         "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"},
    };
    char hex[SHA256_HEX_LEN];

    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        hex_of(v[i].in, strlen(v[i].in), hex);
        CHECK_EQ_STR(hex, v[i].hex);
    }
}

static void
t_million_a(void)
{
    char hex[SHA256_HEX_LEN];
    char *a = malloc(1000000);

    memset(a, 'a', 1000000);
    hex_of(a, 1000000, hex);
    CHECK_EQ_STR(
        hex,
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

/* Lengths around the 55/56/64-byte padding edges, fed in pieces of every
 * size from 1 to 70, must match the one-shot digest. */
static void
t_streaming(void)
{
    uint8_t data[300];

    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (uint8_t)(i * 7 + 3);
    for (size_t len = 50; len < sizeof(data); len += 7) {
        uint8_t want[SHA256_LEN];

        ty__sha256_buf(data, len, want);
        for (size_t piece = 1; piece <= 70; piece++) {
            struct sha256 s;
            uint8_t got[SHA256_LEN];

            ty__sha256_init(&s);
            for (size_t off = 0; off < len; off += piece)
                ty__sha256_update(&s, data + off,
                                  len - off < piece ? len - off : piece);
            ty__sha256_final(&s, got);
            CHECK_MSG(memcmp(got, want, SHA256_LEN) == 0,
                      "len %zu piece %zu differs", len, piece);
        }
    }
}

static void
t_padding_edges(void)
{
    /* 55, 56 and 64 'a's, checked against sha256sum. */
    static const struct {
        size_t n;
        const char *hex;
    } v[] = {
        {55,
         "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {56,
         "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {64,
         "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
    };
    char a[64], hex[SHA256_HEX_LEN];

    memset(a, 'a', sizeof(a));
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        hex_of(a, v[i].n, hex);
        CHECK_EQ_STR(hex, v[i].hex);
    }
}

/* The same checks through the portable compression, which is not the
 * one chosen on a CPU with SHA instructions. */
static void
t_portable(void)
{
    int before = th_failures();

    ty__sha256_force_portable(1);
    t_vectors();
    t_million_a();
    t_streaming();
    t_padding_edges();
    ty__sha256_force_portable(0);
    CHECK_EQ_INT(th_failures(), before);
}

/* Both compressions agree on many lengths of pseudo-random data. */
static void
t_paths_agree(void)
{
    static uint8_t buf[4096 + 70];
    uint32_t x = 12345;

    for (size_t i = 0; i < sizeof(buf); i++) {
        x = x * 1103515245 + 12345;
        buf[i] = (uint8_t)(x >> 16);
    }
    for (size_t len = 0; len < sizeof(buf); len += 61) {
        uint8_t a[SHA256_LEN], b[SHA256_LEN];

        ty__sha256_force_portable(1);
        ty__sha256_buf(buf, len, a);
        ty__sha256_force_portable(0);
        ty__sha256_buf(buf, len, b);
        CHECK_MSG(memcmp(a, b, sizeof(a)) == 0, "length %zu differs", len);
    }
}

static const struct th_case cases[] = {
    {"vectors", t_vectors},
    {"million_a", t_million_a},
    {"streaming", t_streaming},
    {"padding_edges", t_padding_edges},
    {"portable", t_portable},
    {"paths_agree", t_paths_agree},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

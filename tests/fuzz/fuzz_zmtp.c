/*
 * fuzz_zmtp.c — the SDK's ZMTP reader (sdk/ty_zmtp.c) on what arrives from
 * the coordinator's side: its greeting, its READY and frames, split into
 * pieces as recv(2) could return them, and every message's first frame
 * decoded as the SDK's connection decodes it (fuzz_wire_resp.h).
 *
 * The first byte seeds the piece sizes (0: all at once); the rest is the
 * byte stream.
 */
#include "fuzz_wire_resp.h"
#include "ty_zmtp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
on_message(void *arg, const char *data, size_t len)
{
    char *copy = malloc(len ? len : 1);

    (*(size_t *)arg)++;
    memcpy(copy, data, len);
    fuzz_resp(copy, len);
    free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ty__zmtp *z;
    unsigned piece, seed;
    size_t off = 1, nmsg = 0;

    if (size < 1)
        return 0;
    z = ty__zmtp_new_unconnected();
    seed = data[0];
    while (off < size) {
        size_t n = size - off;

        piece = seed == 0 ? (unsigned)n : 1 + (seed % 97);
        seed = seed * 1103515245u + 12345u;
        if (n > piece)
            n = piece;
        if (ty__zmtp_input(z, data + off, n, on_message, &nmsg) < 0)
            break;
        off += n;
    }
    if (off < size && ty__zmtp_error(z)[0] == '\0')
        fuzz_fail("a broken connection without a reason");
    ty__zmtp_free(&z);
    return 0;
}

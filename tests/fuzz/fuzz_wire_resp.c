/*
 * fuzz_wire_resp.c — the SDK's response decoder (ty__wire_resp_decode,
 * sdk/common/ty_wire.c, and its flat fast path in sdk/common/ty_wire_flat.c) on
 * what a coordinator, or something pretending to be one, could answer. The
 * input is the frame; the checks are in fuzz_wire_resp.h.
 */
#include "fuzz_wire_resp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* in a buffer of its own size, so ASan sees any overread */
    char *json = malloc(size ? size : 1);

    memcpy(json, data, size);
    fuzz_resp(json, size);
    free(json);
    return 0;
}

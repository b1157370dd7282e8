/*
 * fuzz_composition_json.c — the composition loader on .json files: the
 * file reader, the YAML tree (after cJSON's strict check), the checks and the
 * resolution against the plan's manifest (runner/config/composition*.c,
 * runner/config/yamltree*.c).
 */
#include "fuzz_composition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_composition(data, size, "compositions/c.json");
}

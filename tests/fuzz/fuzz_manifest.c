/*
 * fuzz_manifest.c — a plan's manifest.yaml (runner/config/manifest.c, with the
 * YAML tree and the parameter declarations of runner/config/params.c): the
 * input is written as plans/p/manifest.yaml and loaded with and without the
 * name it must have.
 */
#include "fuzz.h"
#include "config/config.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = fuzz_file("plans/p/manifest.yaml", data, size);
    struct err err = {0};
    struct manifest *m = manifest_load(path, size % 2 ? "p" : NULL, &err);

    if (m == NULL && (err.msg[0] == '\0' || strchr(err.msg, '\n') != NULL))
        fuzz_fail("a refusal without one line of message: \"%s\"", err.msg);
    for (size_t i = 0; m != NULL && i < m->ncases; i++) {
        const struct manifest_case *c = &m->cases[i];

        if (manifest_case(m, c->name) == NULL || c->min_instances < 1 ||
            c->max_instances < c->min_instances)
            fuzz_fail("case %zu (%s) accepted with bounds %lld..%lld", i,
                      c->name, (long long)c->min_instances,
                      (long long)c->max_instances);
    }
    manifest_destroy(&m);
    free(path);
    return 0;
}

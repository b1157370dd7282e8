/*
 * fuzz_composition.h — the body shared by the composition harnesses
 * (fuzz_composition_yaml.c, fuzz_composition_json.c): the input is written
 * as compositions/c.<ext> and loaded against the checkout's plans/, and a
 * composition that loads is printed as `testyard validate` prints it.
 */
#ifndef TY_FUZZ_COMPOSITION_H
#define TY_FUZZ_COMPOSITION_H

#include "backend/backend.h"
#include "config/config.h"
#include "fuzz.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

static int
fuzz_composition(const uint8_t *data, size_t size, const char *name)
{
    static char *plans;
    struct composition_opts opts = {0};
    struct err err = {0};
    char *path = fuzz_file(name, data, size);
    struct composition *c;

    if (plans == NULL) {
        char *root = fuzz_root();

        plans = path_join(root, "plans");
        free(root);
    }
    opts.plans_dir = plans;
    opts.runners = backend_runners();
    c = composition_load(path, &opts, &err);
    if (c == NULL && (err.msg[0] == '\0' || strchr(err.msg, '\n') != NULL))
        fuzz_fail("a refusal without one line of message: \"%s\"", err.msg);
    if (c != NULL) {
        cJSON *j = composition_to_json(c);
        char *s = j ? cJSON_PrintUnformatted(j) : NULL;

        if (s == NULL)
            fuzz_fail("composition_to_json failed on a loaded composition");
        free(s);
        cJSON_Delete(j);
    }
    composition_destroy(&c);
    free(path);
    return 0;
}

#endif

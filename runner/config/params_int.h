/*
 * config/params_int.h — typed test parameters: their declarations in a plan
 * manifest, the check of a value against its declaration, and the layering of
 * manifest default < global < group that gives each group its parameters.
 *
 * A resolved value is JSON, as instances receive it: int and float are
 * numbers, bool is true/false, string and enum are strings, size and
 * duration are the string as the user wrote it (checked here; the SDK
 * parses it with the same ty_units code), arrays are JSON arrays of those.
 *
 * Ownership: a struct params owns its declarations and everything in them;
 * cJSON values returned are the caller's (cJSON_Delete). Nodes are borrowed.
 */
#ifndef TY_PARAMS_H
#define TY_PARAMS_H

#include "base/err.h"
#include "config/config.h"
#include "config/yamltree_int.h"

#include <cjson/cJSON.h>
#include <stddef.h>

void params__init(struct params *ps);
void params__release(struct params *ps);

/* Append the declarations of a manifest's `params:` mapping (at path) to
 * ps. Defaults are checked against their type; errors point into the
 * manifest. Names already in ps are an error. */
int params__parse(struct params *ps, const struct ynode *map, const char *path,
                  struct err *err);

const struct param *params__find(const struct params *ps, const char *name);

/* Check value v (at path) against p and return it in resolved form. */
cJSON *params__convert(const struct param *p, const struct ynode *v,
                       const char *path, struct err *err);

/* The parameters one group gets. */
struct params_layers {
    const struct params *const *decls; /* plan params, then case params */
    size_t ndecls;
    const char *scope;          /* "case \"stress\"", for messages */
    const struct ynode *global; /* global.run.test_params or NULL */
    const char *global_path;
    const struct ynode *group; /* groups[i].run.test_params or NULL */
    const char *group_path;
    const struct ynode *where; /* group node: where "required" points */
    const char *where_path;
};

/* Check every key of both layers (unknown names fail with a suggestion),
 * then resolve every declared parameter: group value, else global value,
 * else default; a parameter with none of these fails. Returns an object
 * whose keys follow the declarations' order. */
cJSON *params__resolve(const struct params_layers *l, struct err *err);

/* Parameters with no declaration (a group that runs its own program):
 * global < group (either may be NULL), key by key, as YAML's core schema
 * reads them: numbers, true/false and null as such (a number JSON cannot
 * carry, such as .inf or an integer of more than 15 digits, stays its
 * text), lists and mappings as arrays and objects, the rest strings. */
cJSON *params__as_written(const struct ynode *global,
                          const struct ynode *group);

#endif

/*
 * test_params.c — parameter declarations, value checks against a type, and
 * the layering manifest default < global < group.
 */
#include "config/params_int.h"
#include "th.h"
#include "base/util.h"
#include "config/yamltree_int.h"

#include <stdlib.h>
#include <string.h>

static struct yamltree *
tree(const char *text)
{
    struct err err = {0};
    struct yamltree *t =
        yamltree__parse("m.yaml", text, strlen(text), false, &err);

    if (t == NULL)
        th_fail(__FILE__, __LINE__, "parse: %s", err.msg);
    return t;
}

/* Parse `text` (a params mapping) into ps; returns the error message or
 * "" on success. */
static const char *
declare(struct params *ps, const char *text)
{
    static struct err err;
    struct yamltree *t = tree(text);
    int rc;

    err_clear(&err);
    params__init(ps);
    if (t == NULL)
        return "parse failed";
    rc = params__parse(ps, t->root, "params", &err);
    yamltree__destroy(&t);
    return rc == 0 ? "" : err.msg;
}

static const char *const decls =
    "n: {type: int, default: 3}\n"
    "f: {type: float, default: 0.5}\n"
    "b: {type: bool, default: false}\n"
    "s: {type: string}\n"
    "e: {type: enum, values: [none, simple, detailed], default: none}\n"
    "z: {type: size, default: 64MB, unit: bytes, description: per file}\n"
    "d: {type: duration, default: 0}\n"
    "a: {type: array, items: duration, default: [\"0ms\"]}\n"
    "ae: {type: array, items: enum, values: [x, y], default: [x, y, x]}\n";

static void
t_declare(void)
{
    struct params ps;
    const struct param *p;
    char name[64];
    char *text;

    CHECK_EQ_STR(declare(&ps, decls), "");
    CHECK_EQ_INT(ps.n, 9);
    p = params__find(&ps, "z");
    CHECK(p != NULL && p->type == PARAM_SIZE);
    if (p != NULL) {
        CHECK_EQ_STR(p->unit, "bytes");
        CHECK_EQ_STR(p->description, "per file");
        CHECK_EQ_STR(p->def->valuestring, "64MB");
    }
    p = params__find(&ps, "s");
    CHECK(p != NULL && p->def == NULL);
    p = params__find(&ps, "ae");
    if (p != NULL) {
        params_type_name(p, name, sizeof(name));
        CHECK_EQ_STR(name, "array of enum");
        CHECK_EQ_INT(p->nvalues, 2);
        text = cJSON_PrintUnformatted(p->def);
        CHECK_EQ_STR(text, "[\"x\",\"y\",\"x\"]");
        free(text);
    }
    CHECK(params__find(&ps, "nope") == NULL);
    params__release(&ps);
    CHECK_EQ_INT(ps.n, 0);
}

static void
t_declare_errors(void)
{
    static const struct {
        const char *text;
        const char *msg;
    } bad[] = {
        {"n: {type: integer}",
         "m.yaml:1:11: params.n.type: expected one of int, float, bool, "
         "string, enum, size, duration, array, got \"integer\""},
        {"n: {type: int, default: lots}",
         "m.yaml:1:25: params.n.default: expected an integer, got \"lots\""},
        {"n: {type: int, dflt: 1}", "m.yaml:1:16: params.n.dflt: unknown key"},
        {"n: {type: int, defualt: 1}",
         "m.yaml:1:16: params.n.defualt: unknown key; did you mean "
         "\"default\"?"},
        {"e: {type: enum}",
         "m.yaml:1:4: params.e: missing required key \"values\" (the "
         "allowed values of an enum)"},
        {"e: {type: enum, values: []}",
         "m.yaml:1:25: params.e.values: expected at least one value, got "
         "an empty list"},
        {"e: {type: enum, values: [a, b, a]}",
         "m.yaml:1:32: params.e.values[2]: duplicate value \"a\""},
        {"n: {type: int, values: [1]}",
         "m.yaml:1:24: params.n.values: values are only for type enum (or "
         "an array of enum)"},
        {"a: {type: array}",
         "m.yaml:1:4: params.a: missing required key \"items\" (the type "
         "of an array's elements)"},
        {"a: {type: array, items: array}",
         "m.yaml:1:25: params.a.items: expected one of int, float, bool, "
         "string, enum, size, duration, got \"array\""},
        {"n: {type: int, items: int}",
         "m.yaml:1:23: params.n.items: items is only for type array"},
        {"9lives: {type: int}",
         "m.yaml:1:1: params.9lives: expected a parameter name (a letter "
         "or _ then letters, digits, _ or -; at most 64)"},
        {"n: int", "m.yaml:1:4: params.n: expected a mapping (key: value "
                   "lines), got \"int\""},
        {"d: {type: duration, default: 5}",
         "m.yaml:1:30: params.d.default: expected a duration like 250ms, "
         "30s, 10m or 1m30s, got 5; add a unit, e.g. 5s"},
    };

    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        struct params ps;

        CHECK_EQ_STR(declare(&ps, bad[i].text), bad[i].msg);
        params__release(&ps);
    }
}

/* Convert the value of "v: ..." for parameter name of decls. */
static char *
convert(const char *name, const char *value_yaml, struct err *err)
{
    struct params ps;
    struct yamltree *t = tree(value_yaml);
    const struct param *p;
    cJSON *v;
    char *text = NULL;

    declare(&ps, decls);
    p = params__find(&ps, name);
    err_clear(err);
    v = t && p ? params__convert(p, yamltree__get(t->root, "v"), "v", err)
               : NULL;
    if (v != NULL)
        text = cJSON_PrintUnformatted(v);
    cJSON_Delete(v);
    yamltree__destroy(&t);
    params__release(&ps);
    return text;
}

static void
check_converts(const char *name, const char *yaml, const char *want)
{
    struct err err;
    char *got = convert(name, yaml, &err);

    CHECK_MSG(got != NULL && strcmp(got, want) == 0,
              "%s %s: got %s (%s), want %s", name, yaml, got ? got : "NULL",
              err.msg, want);
    free(got);
}

static void
check_refuses(const char *name, const char *yaml, const char *msg)
{
    struct err err;
    char *got = convert(name, yaml, &err);

    CHECK_MSG(got == NULL, "%s %s: accepted as %s", name, yaml, got);
    CHECK_EQ_STR(err.msg, msg);
    free(got);
}

static void
t_convert(void)
{
    check_converts("n", "v: -12", "-12");
    check_converts("n", "v: 999999999999999", "999999999999999");
    check_converts("f", "v: 2", "2");
    check_converts("f", "v: 0.25", "0.25");
    check_converts("b", "v: true", "true");
    check_converts("s", "v: 12", "\"12\"");
    check_converts("s", "v: ''", "\"\"");
    check_converts("e", "v: 'simple'", "\"simple\"");
    check_converts("z", "v: 4096", "\"4096\"");
    check_converts("z", "v: 1.5Gi", "\"1.5Gi\"");
    check_converts("d", "v: 1m30s", "\"1m30s\"");
    check_converts("a", "v: [0, 10ms]", "[\"0\",\"10ms\"]");
    check_converts("a", "v: []", "[]");
    check_converts("ae", "v: [y]", "[\"y\"]");
}

static void
t_convert_errors(void)
{
    check_refuses("n", "v: \"4\"",
                  "m.yaml:1:4: v: expected an integer, got the string "
                  "\"4\"; remove the quotes");
    check_refuses("n", "v: -1000000000000000",
                  "m.yaml:1:4: v: expected an integer of at most 15 digits, "
                  "got -1000000000000000");
    check_refuses("f", "v: .nan",
                  "m.yaml:1:4: v: expected a finite number, got .nan");
    check_refuses("b", "v: 1", "m.yaml:1:4: v: expected true or false, got 1");
    check_refuses("s", "v: ~", "m.yaml:1:4: v: expected a string, got ~");
    check_refuses("e", "v: \"true\"",
                  "m.yaml:1:4: v: expected one of none, simple, detailed, "
                  "got \"true\"");
    check_refuses("e", "v: simpel",
                  "m.yaml:1:4: v: expected one of none, simple, detailed, "
                  "got \"simpel\"; did you mean \"simple\"?");
    check_refuses("z", "v: -5",
                  "m.yaml:1:4: v: expected a size like 512Mi, 1GiB (powers "
                  "of 1024) or 512MB (powers of 1000), got -5");
    check_refuses("a", "v: 10ms",
                  "m.yaml:1:4: v: expected a list (array of duration), got "
                  "\"10ms\"");
    check_refuses("a", "v: [1s, [2s]]",
                  "m.yaml:1:9: v[1]: expected a duration like 250ms, 30s, "
                  "10m or 1m30s, got a list");
    check_refuses("ae", "v: [x, z]",
                  "m.yaml:1:8: v[1]: expected one of x, y, got \"z\"");
}

struct layered {
    struct params plan, cases;
    struct yamltree *t;
    struct params_layers l;
    const struct params *decls[2];
};

static void
layered_init(struct layered *x, const char *case_decls, const char *values)
{
    declare(&x->plan, decls);
    declare(&x->cases, case_decls);
    x->t = tree(values);
    x->decls[0] = &x->plan;
    x->decls[1] = &x->cases;
    x->l = (struct params_layers){
        .decls = x->decls,
        .ndecls = 2,
        .scope = "case \"c\" of plan \"p\"",
        .global = yamltree__get(x->t->root, "global"),
        .global_path = "global.run.test_params",
        .group = yamltree__get(x->t->root, "group"),
        .group_path = "groups[0].run.test_params",
        .where = x->t->root,
        .where_path = "groups[0]",
    };
}

static void
layered_release(struct layered *x)
{
    params__release(&x->plan);
    params__release(&x->cases);
    yamltree__destroy(&x->t);
}

static void
t_resolve(void)
{
    struct layered x;
    struct err err = {0};
    cJSON *v;
    char *text;

    layered_init(&x, "seed: {type: int}\n",
                 "global: {n: 5, s: g, seed: 1, z: 1Gi}\n"
                 "group: {n: 7, seed: 2}\n");
    v = params__resolve(&x.l, &err);
    CHECK_MSG(v != NULL, "%s", err.msg);
    text = v ? cJSON_PrintUnformatted(v) : NULL;
    CHECK_EQ_STR(text, "{\"n\":7,\"f\":0.5,\"b\":false,\"s\":\"g\",\"e\":"
                       "\"none\",\"z\":\"1Gi\",\"d\":\"0\",\"a\":[\"0ms\"],"
                       "\"ae\":[\"x\",\"y\",\"x\"],\"seed\":2}");
    free(text);
    cJSON_Delete(v);
    layered_release(&x);
}

static void
t_resolve_errors(void)
{
    struct layered x;
    struct err err = {0};

    layered_init(&x, "seed: {type: int}\n", "global: {s: g}\n");
    CHECK(params__resolve(&x.l, &err) == NULL);
    CHECK_EQ_STR(err.msg, "m.yaml:1:1: groups[0]: parameter \"seed\" has no "
                          "default in the manifest; set it in "
                          "global.run.test_params or in this group's "
                          "run.test_params");
    layered_release(&x);

    layered_init(&x, "{}", "global: {s: g}\ngroup: {ae1: 1}\n");
    CHECK(params__resolve(&x.l, &err) == NULL);
    CHECK_EQ_STR(err.msg, "m.yaml:2:9: groups[0].run.test_params.ae1: "
                          "unknown parameter; did you mean \"ae\"?");
    layered_release(&x);

    layered_init(&x, "{}", "global: {s: g, bandwidth: 1}\n");
    CHECK(params__resolve(&x.l, &err) == NULL);
    CHECK_EQ_STR(err.msg, "m.yaml:1:16: global.run.test_params.bandwidth: "
                          "unknown parameter; case \"c\" of plan \"p\" takes "
                          "n, f, b, s, e, z, d, a, ae");
    layered_release(&x);

    /* A bad global value is reported at the global value. */
    layered_init(&x, "{}", "global: {s: g, n: many}\ngroup: {}\n");
    CHECK(params__resolve(&x.l, &err) == NULL);
    CHECK_CONTAINS(err.msg, "m.yaml:1:19: global.run.test_params.n: ");
    layered_release(&x);

    layered_init(&x, "{}", "global: [1]\n");
    CHECK(params__resolve(&x.l, &err) == NULL);
    CHECK_CONTAINS(err.msg, "global.run.test_params: expected a mapping");
    layered_release(&x);
}

static const struct th_case cases[] = {
    {"declare", t_declare}, {"declare_errors", t_declare_errors},
    {"convert", t_convert}, {"convert_errors", t_convert_errors},
    {"resolve", t_resolve}, {"resolve_errors", t_resolve_errors},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

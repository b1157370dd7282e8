/*
 * test_yamltree.c — loading YAML and JSON into positioned nodes, the limits
 * the loader enforces, and the typed readers' messages.
 */
#include "base/err.h"
#include "base/strbuf.h"
#include "th.h"
#include "base/util.h"
#include "config/yamltree_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct yamltree *
parse(const char *text, bool json, struct err *err)
{
    err_clear(err);
    return yamltree__parse(json ? "t.json" : "t.yaml", text, strlen(text), json,
                           err);
}

/* The message of a parse that must fail. */
static const char *
parse_error(const char *text, bool json)
{
    static struct err err;
    struct yamltree *t = parse(text, json, &err);

    CHECK_MSG(t == NULL, "\"%s\" parsed", text);
    yamltree__destroy(&t);
    if (err.status != EXIT_DATAERR)
        th_fail(__FILE__, __LINE__, "status %d", err.status);
    return err.msg;
}

static void
t_positions(void)
{
    struct err err;
    struct yamltree *t =
        parse("a: 1\nb:\n  c: \"x y\"\n  d: [7, 'q']\n", false, &err);
    const struct ynode *b, *c, *d;

    CHECK(t != NULL);
    if (t == NULL)
        return;
    CHECK_EQ_INT(t->root->kind, YNODE_MAP);
    CHECK_EQ_INT(yamltree__len(t->root), 2);
    CHECK_EQ_INT(yamltree__key_at(t->root, 0)->line, 1);
    CHECK_EQ_INT(yamltree__val_at(t->root, 0)->col, 4);
    b = yamltree__get(t->root, "b");
    c = yamltree__get(b, "c");
    CHECK_EQ_INT(c->line, 3);
    CHECK_EQ_INT(c->col, 6);
    CHECK_EQ_STR(c->str, "x y");
    CHECK(!c->plain);
    d = yamltree__get(b, "d");
    CHECK_EQ_INT(d->kind, YNODE_SEQ);
    CHECK_EQ_INT(yamltree__val_at(d, 1)->col, 10);
    CHECK(yamltree__val_at(d, 0)->plain);
    CHECK(yamltree__get(t->root, "nope") == NULL);
    yamltree__destroy(&t);
    CHECK(t == NULL);
}

static void
t_scalar_types(void)
{
    struct err err;
    struct yamltree *t = parse("[true, False, 12, -3, 1.5, 2e3, .5, ~, null,"
                               " '', word, '4', \"true\", 0x10, .inf]",
                               false, &err);
    static const enum yscalar_type want[] = {
        YSCALAR_BOOL,   YSCALAR_BOOL,   YSCALAR_INT,    YSCALAR_INT,
        YSCALAR_FLOAT,  YSCALAR_FLOAT,  YSCALAR_FLOAT,  YSCALAR_NULL,
        YSCALAR_NULL,   YSCALAR_STRING, YSCALAR_STRING, YSCALAR_STRING,
        YSCALAR_STRING, YSCALAR_STRING, YSCALAR_FLOAT};

    CHECK(t != NULL);
    if (t == NULL)
        return;
    CHECK_EQ_INT(yamltree__len(t->root), ARRAY_LEN(want));
    for (size_t i = 0; i < ARRAY_LEN(want); i++)
        CHECK_MSG(yamltree__scalar_type(yamltree__val_at(t->root, i)) ==
                      want[i],
                  "item %zu \"%s\"", i, yamltree__val_at(t->root, i)->str);
    yamltree__destroy(&t);
}

static void
t_json_same_tree(void)
{
    struct err err;
    struct yamltree *t = parse("{\n\t\"a\": [1, \"x\"],\n\t\"b\": {\"c\": "
                               "true}\n}\n",
                               true, &err);
    const struct ynode *a;

    CHECK_MSG(t != NULL, "%s", err.msg);
    if (t == NULL)
        return;
    a = yamltree__get(t->root, "a");
    CHECK_EQ_INT(a->line, 2);
    CHECK_EQ_INT(a->col, 7);
    CHECK(yamltree__val_at(a, 0)->plain);
    CHECK(!yamltree__val_at(a, 1)->plain);
    CHECK_EQ_INT(
        yamltree__scalar_type(yamltree__get(yamltree__get(t->root, "b"), "c")),
        YSCALAR_BOOL);
    yamltree__destroy(&t);
}

static void
t_json_errors(void)
{
    CHECK_EQ_STR(parse_error("{\n  \"a\": 1,\n}\n", true),
                 "t.json:3:1: invalid JSON: unexpected '}'");
    CHECK_EQ_STR(parse_error("{'a': 1}", true),
                 "t.json:1:2: invalid JSON: unexpected '''");
    CHECK_EQ_STR(parse_error("{\"a\": tru}", true),
                 "t.json:1:7: invalid JSON: unexpected 'tru'");
    CHECK_EQ_STR(parse_error("[1,\n 2", true),
                 "t.json:2:3: invalid JSON: unexpected end of file");
    /* Not JSON, but fine YAML: the .json check must catch it. */
    CHECK_CONTAINS(parse_error("a: 1\n", true), "invalid JSON");
}

static void
t_yaml_errors(void)
{
    CHECK_CONTAINS(parse_error("a: b: c\n", false),
                   "t.yaml:1:5: invalid YAML: mapping values");
    CHECK_CONTAINS(parse_error("a:\n\tb: 1\n", false), "tab");
    CHECK_EQ_STR(parse_error("a: 1\nb:\n  x: 1\n  x: 2\n", false),
                 "t.yaml:4:3: b.x: duplicate key (first at line 3)");
    CHECK_CONTAINS(parse_error("a: 1\n---\nb: 2\n", false),
                   "t.yaml:2:1: a second YAML document");
    CHECK_CONTAINS(parse_error("? [a]\n: 1\n", false),
                   "a mapping key must be a plain word");
    CHECK_CONTAINS(parse_error("a: *nope\n", false),
                   "alias *nope names no anchor");
    CHECK_CONTAINS(parse_error("a: &x [1, *x]\n", false),
                   "inside the value it names");
    CHECK_CONTAINS(parse_error("a: !!binary aGk=\n", false),
                   "tag !!binary is not supported");
    CHECK_CONTAINS(parse_error("a: \"x\\0y\"\n", false), "NUL");
    CHECK_CONTAINS(parse_error("a: \xff\n", false),
                   "t.yaml:1:4: invalid YAML: invalid leading UTF-8");
}

static void
t_limits(void)
{
    struct strbuf sb;
    struct err err;
    struct yamltree *t;

    strbuf_init(&sb);
    for (int i = 0; i < 70; i++)
        strbuf_addc(&sb, '[');
    for (int i = 0; i < 70; i++)
        strbuf_addc(&sb, ']');
    CHECK_CONTAINS(parse_error(sb.buf, false), "nested more than 64");
    strbuf_release(&sb);
    CHECK_CONTAINS(parse_error("a: &a [1,1,1,1,1,1,1,1,1,1]\n"
                               "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                               "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                               "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                               "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                               "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
                               false),
                   "t.yaml:6:");
    /* A few aliases are fine and share their node. */
    t = parse("a: &x {k: 1}\nb: *x\n", false, &err);
    CHECK(t != NULL);
    if (t != NULL)
        CHECK(yamltree__get(t->root, "a") == yamltree__get(t->root, "b"));
    yamltree__destroy(&t);
}

static void
t_load_file(void)
{
    char *big = path_join(th_tmpdir(), "big.yaml");
    char *ok = path_join(th_tmpdir(), "ok.yaml");
    char *missing = path_join(th_tmpdir(), "missing.yaml");
    size_t n = YAMLTREE_MAX_BYTES + 1;
    char *data = xmalloc(n);
    struct yamltree *t;
    struct err err = {0};

    memset(data, '#', n);
    CHECK(file_write_atomic(big, data, n, &err) == 0);
    CHECK(file_write_atomic(ok, "x: 1\n", 5, &err) == 0);
    CHECK(yamltree__load(big, &err) == NULL);
    CHECK_CONTAINS(err.msg, "larger than 4 MiB");
    CHECK_EQ_INT(err.status, EXIT_DATAERR);
    err_clear(&err);
    CHECK(yamltree__load(missing, &err) == NULL);
    CHECK_EQ_INT(err.status, EXIT_NOINPUT);
    t = yamltree__load(ok, &err);
    CHECK(t != NULL && strcmp(t->file, ok) == 0);
    yamltree__destroy(&t);
    free(data);
    free(big);
    free(ok);
    free(missing);
}

static void
t_got(void)
{
    struct err err;
    struct yamltree *t =
        parse("[12, true, word, \"q\\\"t\", {}, [], ~, ]", false, &err);
    static const char *const want[] = {
        "12", "true", "\"word\"", "\"q\\\"t\"", "a mapping", "a list", "~"};
    char buf[128];

    CHECK(t != NULL);
    if (t == NULL)
        return;
    for (size_t i = 0; i < ARRAY_LEN(want); i++) {
        yamltree__got(yamltree__val_at(t->root, i), buf, sizeof(buf));
        CHECK_EQ_STR(buf, want[i]);
    }
    yamltree__got(NULL, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "nothing");
    yamltree__destroy(&t);
}

/* Run one typed reader on the value of "v: ..." and return its message
 * ("" when it succeeded). */
static const char *
read_msg(const char *yaml, int (*fn)(const struct ynode *, struct err *))
{
    static struct err err;
    struct yamltree *t = parse(yaml, false, &err);

    err_clear(&err);
    if (t == NULL)
        return "parse failed";
    if (fn(yamltree__get(t->root, "v"), &err) == 0)
        err.msg[0] = '\0';
    yamltree__destroy(&t);
    return err.msg;
}

static int
rd_int(const struct ynode *n, struct err *err)
{
    int64_t v;

    return yamltree__int(n, "v", 1, 10, &v, err);
}

static int
rd_bool(const struct ynode *n, struct err *err)
{
    bool v;

    return yamltree__bool(n, "v", &v, err);
}

static int
rd_size(const struct ynode *n, struct err *err)
{
    uint64_t v;

    return yamltree__size(n, "v", &v, err);
}

static int
rd_duration(const struct ynode *n, struct err *err)
{
    int64_t v;

    return yamltree__duration(n, "v", &v, err);
}

static int
rd_cpu(const struct ynode *n, struct err *err)
{
    int64_t v;

    return yamltree__cpu(n, "v", &v, err);
}

static int
rd_enum(const struct ynode *n, struct err *err)
{
    static const char *const values[] = {"host", "bridge", NULL};

    return yamltree__enum(n, "v", values, err) < 0 ? -1 : 0;
}

static void
t_readers(void)
{
    CHECK_EQ_STR(read_msg("v: 3", rd_int), "");
    CHECK_EQ_STR(read_msg("v: \"3\"", rd_int),
                 "t.yaml:1:4: v: expected an integer from 1 to 10, got the "
                 "string \"3\"; remove the quotes");
    CHECK_EQ_STR(read_msg("v: 11", rd_int),
                 "t.yaml:1:4: v: expected an integer from 1 to 10, got 11");
    CHECK_EQ_STR(read_msg("v: 99999999999999999999", rd_int),
                 "t.yaml:1:4: v: expected an integer from 1 to 10, got "
                 "99999999999999999999");
    CHECK_EQ_STR(read_msg("v: off", rd_bool),
                 "t.yaml:1:4: v: expected true or false, got \"off\"; did "
                 "you mean false?");
    CHECK_EQ_STR(read_msg("v: 'true'", rd_bool),
                 "t.yaml:1:4: v: expected true or false, got the string "
                 "\"true\"; remove the quotes");
    CHECK_EQ_STR(read_msg("v: 512Mi", rd_size), "");
    CHECK_EQ_STR(read_msg("v: 4096", rd_size), "");
    CHECK_CONTAINS(read_msg("v: 512m", rd_size), "got \"512m\": ambiguous");
    CHECK_EQ_STR(read_msg("v: 0", rd_duration), "");
    CHECK_CONTAINS(read_msg("v: 30", rd_duration),
                   "got 30; add a unit, e.g. 30s");
    CHECK_CONTAINS(read_msg("v: {a: 1}", rd_duration), "got a mapping");
    CHECK_EQ_STR(read_msg("v: 0.5", rd_cpu), "");
    CHECK_CONTAINS(read_msg("v: 2 cores", rd_cpu), "got \"2 cores\"");
    CHECK_EQ_STR(read_msg("v: bridge", rd_enum), "");
    CHECK_EQ_STR(read_msg("v: brigde", rd_enum),
                 "t.yaml:1:4: v: expected one of host, bridge, got "
                 "\"brigde\"; did you mean \"bridge\"?");
}

static void
t_check_keys(void)
{
    static const char *const allowed[] = {"memory", "cpu", NULL};
    struct err err;
    struct yamltree *t = parse("r:\n  cpu: 1\n  memroy: 1Gi\n", false, &err);

    CHECK(t != NULL);
    if (t == NULL)
        return;
    CHECK(yamltree__check_keys(yamltree__get(t->root, "r"), "r", allowed,
                               &err) < 0);
    CHECK_EQ_STR(err.msg, "t.yaml:3:3: r.memroy: unknown key; did you mean "
                          "\"memory\"?");
    CHECK(yamltree__require(t->root, "", "s", &err) == NULL);
    CHECK_EQ_STR(err.msg, "t.yaml:1:1: missing required key \"s\"");
    yamltree__destroy(&t);
}

static void
t_empty(void)
{
    static const char *const empties[] = {"", "# just a comment\n", "---\n",
                                          "~\n"};
    struct err err;

    for (size_t i = 0; i < ARRAY_LEN(empties); i++) {
        struct yamltree *t = parse(empties[i], false, &err);

        CHECK(t != NULL);
        if (t == NULL)
            continue;
        CHECK(yamltree__want_root_map(t, "a map", &err) < 0);
        CHECK_EQ_STR(err.msg, "t.yaml:1:1: the file is empty; expected a map");
        yamltree__destroy(&t);
    }
}

static const struct th_case cases[] = {
    {"positions", t_positions},
    {"scalar_types", t_scalar_types},
    {"json_same_tree", t_json_same_tree},
    {"json_errors", t_json_errors},
    {"yaml_errors", t_yaml_errors},
    {"limits", t_limits},
    {"load_file", t_load_file},
    {"got", t_got},
    {"readers", t_readers},
    {"check_keys", t_check_keys},
    {"empty", t_empty},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

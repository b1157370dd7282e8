/*
 * params.c — declaring, checking and layering typed test parameters (see
 * config/params_int.h).
 *
 * The manifest declares each parameter's type once; every value written
 * anywhere — a default in the manifest, global.run.test_params, a group's
 * run.test_params — goes through params__convert(), so a value is checked
 * the same way wherever it is written and its error points at it. A
 * group that runs its own program has no declarations: its values are
 * passed on as written (params__as_written).
 */
#include "config/params_int.h"

#include "base/strbuf.h"
#include "base/strvec.h"
#include "config/suggest_int.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cJSON prints numbers with 15 significant digits: a longer integer would
 * reach the instance rounded, or as 1e+15. */
#define PARAM_INT_LIMIT INT64_C(999999999999999)

static const char *const type_names[] = {
    [PARAM_INT] = "int",
    [PARAM_FLOAT] = "float",
    [PARAM_BOOL] = "bool",
    [PARAM_STRING] = "string",
    [PARAM_ENUM] = "enum",
    [PARAM_SIZE] = "size",
    [PARAM_DURATION] = "duration",
    [PARAM_ARRAY] = "array",
    NULL,
};

/* The element types an array may have: every type but array. */
static const char *const item_names[] = {
    "int", "float", "bool", "string", "enum", "size", "duration", NULL,
};

static const char *const decl_keys[] = {
    "type", "default", "unit", "description", "values", "items", NULL,
};

void
params__init(struct params *ps)
{
    ps->v = NULL;
    ps->n = 0;
    ps->cap = 0;
}

void
params__release(struct params *ps)
{
    for (size_t i = 0; i < ps->n; i++) {
        struct param *p = &ps->v[i];

        free(p->name);
        strv_free(p->values);
        cJSON_Delete(p->def);
        free(p->unit);
        free(p->description);
    }
    free(ps->v);
    params__init(ps);
}

void
params_type_name(const struct param *p, char *buf, size_t size)
{
    if (p->type == PARAM_ARRAY)
        snprintf(buf, size, "array of %s", type_names[p->items]);
    else
        snprintf(buf, size, "%s", type_names[p->type]);
}

const struct param *
params__find(const struct params *ps, const char *name)
{
    for (size_t i = 0; i < ps->n; i++)
        if (strcmp(ps->v[i].name, name) == 0)
            return &ps->v[i];
    return NULL;
}

static cJSON *
convert_int(const struct ynode *v, const char *path, struct err *err)
{
    int64_t i;

    if (yamltree__int(v, path, INT64_MIN, INT64_MAX, &i, err) < 0)
        return NULL;
    if (i > PARAM_INT_LIMIT || i < -PARAM_INT_LIMIT) {
        yamltree__fail(v, path, err,
                       "expected an integer of at most 15 digits, got %s",
                       v->str);
        return NULL;
    }
    return cJSON_CreateNumber((double)i);
}

static cJSON *
convert_scalar(enum param_type t, char **values, const struct ynode *v,
               const char *path, struct err *err)
{
    uint64_t bytes;
    int64_t ns;
    double d;
    bool b;
    int i;

    switch (t) {
    case PARAM_INT:
        return convert_int(v, path, err);
    case PARAM_FLOAT:
        if (yamltree__float(v, path, &d, err) < 0)
            return NULL;
        return cJSON_CreateNumber(d);
    case PARAM_BOOL:
        if (yamltree__bool(v, path, &b, err) < 0)
            return NULL;
        return cJSON_CreateBool(b);
    case PARAM_STRING:
        if (v->kind != YNODE_SCALAR ||
            yamltree__scalar_type(v) == YSCALAR_NULL) {
            char got[128];

            yamltree__got(v, got, sizeof(got));
            yamltree__fail(v, path, err, "expected a string, got %s", got);
            return NULL;
        }
        return cJSON_CreateString(v->str);
    case PARAM_ENUM:
        i = yamltree__enum(v, path, (const char *const *)values, err);
        return i < 0 ? NULL : cJSON_CreateString(values[i]);
    case PARAM_SIZE:
        if (yamltree__size(v, path, &bytes, err) < 0)
            return NULL;
        return cJSON_CreateString(v->str);
    case PARAM_DURATION:
        if (yamltree__duration(v, path, &ns, err) < 0)
            return NULL;
        return cJSON_CreateString(v->str);
    case PARAM_ARRAY:
        break;
    }
    return NULL;
}

static cJSON *
convert_array(const struct param *p, const struct ynode *v, const char *path,
              struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX], what[64];
    cJSON *arr;

    if (v->kind != YNODE_SEQ) {
        char got[128];

        yamltree__got(v, got, sizeof(got));
        params_type_name(p, what, sizeof(what));
        yamltree__fail(v, path, err, "expected a list (%s), got %s", what, got);
        return NULL;
    }
    arr = cJSON_CreateArray();
    for (size_t i = 0; i < yamltree__len(v); i++) {
        cJSON *item;

        yamltree__path_index(ipath, path, i);
        item = convert_scalar(p->items, p->values, yamltree__val_at(v, i),
                              ipath, err);
        if (item == NULL) {
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddItemToArray(arr, item);
    }
    return arr;
}

cJSON *
params__convert(const struct param *p, const struct ynode *v, const char *path,
                struct err *err)
{
    if (p->type == PARAM_ARRAY)
        return convert_array(p, v, path, err);
    return convert_scalar(p->type, p->values, v, path, err);
}

/* Parameter names end up as JSON keys and in messages: keep them words. */
static bool
valid_name(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789_-") == strlen(s) &&
           strlen(s) <= 64;
}

static int
parse_values(struct param *p, const struct ynode *decl, const char *path,
             struct err *err)
{
    const struct ynode *v = yamltree__get(decl, "values");
    bool wants = p->type == PARAM_ENUM ||
                 (p->type == PARAM_ARRAY && p->items == PARAM_ENUM);
    char vpath[YAMLTREE_PATH_MAX], ipath[YAMLTREE_PATH_MAX];

    yamltree__path_key(vpath, path, "values");
    if (v == NULL && !wants)
        return 0;
    if (v == NULL)
        return yamltree__fail(decl, path, err,
                              "missing required key \"values\" (the "
                              "allowed values of an enum)");
    if (!wants)
        return yamltree__fail(v, vpath, err,
                              "values are only for type enum (or an array "
                              "of enum)");
    if (yamltree__strings(v, vpath, &p->values, &p->nvalues, err) < 0)
        return -1;
    if (p->nvalues == 0)
        return yamltree__fail(v, vpath, err,
                              "expected at least one value, got an empty "
                              "list");
    for (size_t i = 1; i < p->nvalues; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->values[i], p->values[j]) == 0)
                return yamltree__fail(yamltree__val_at(v, i),
                                      yamltree__path_index(ipath, vpath, i),
                                      err, "duplicate value \"%s\"",
                                      p->values[i]);
    return 0;
}

static int
parse_type(struct param *p, const struct ynode *decl, const char *path,
           struct err *err)
{
    char tpath[YAMLTREE_PATH_MAX];
    const struct ynode *t = yamltree__require(decl, path, "type", err);
    const struct ynode *items = yamltree__get(decl, "items");
    int i;

    if (t == NULL)
        return -1;
    i = yamltree__enum(t, yamltree__path_key(tpath, path, "type"), type_names,
                       err);
    if (i < 0)
        return -1;
    p->type = (enum param_type)i;
    yamltree__path_key(tpath, path, "items");
    if (p->type != PARAM_ARRAY && items != NULL)
        return yamltree__fail(items, tpath, err,
                              "items is only for type array");
    if (p->type != PARAM_ARRAY)
        return 0;
    if (items == NULL)
        return yamltree__fail(decl, path, err,
                              "missing required key \"items\" (the type of "
                              "an array's elements)");
    i = yamltree__enum(items, tpath, item_names, err);
    if (i < 0)
        return -1;
    p->items = (enum param_type)i;
    return 0;
}

static int
parse_decl(struct param *p, const struct ynode *decl, const char *path,
           struct err *err)
{
    char dpath[YAMLTREE_PATH_MAX];
    const struct ynode *def = yamltree__get(decl, "default");

    if (yamltree__want_map(decl, path, err) < 0 ||
        yamltree__check_keys(decl, path, decl_keys, err) < 0 ||
        parse_type(p, decl, path, err) < 0 ||
        parse_values(p, decl, path, err) < 0 ||
        yamltree__opt_string(decl, path, "unit", &p->unit, err) < 0 ||
        yamltree__opt_string(decl, path, "description", &p->description, err) <
            0)
        return -1;
    if (def == NULL)
        return 0;
    p->def = params__convert(p, def, yamltree__path_key(dpath, path, "default"),
                             err);
    return p->def == NULL ? -1 : 0;
}

int
params__parse(struct params *ps, const struct ynode *map, const char *path,
              struct err *err)
{
    char ppath[YAMLTREE_PATH_MAX];

    if (yamltree__want_map(map, path, err) < 0)
        return -1;
    for (size_t i = 0; i < yamltree__len(map); i++) {
        const struct ynode *key = yamltree__key_at(map, i);
        struct param *p;

        yamltree__path_key(ppath, path, key->str);
        if (!valid_name(key->str))
            return yamltree__fail(key, ppath, err,
                                  "expected a parameter name (a letter or _ "
                                  "then letters, digits, _ or -; at most 64)");
        if (params__find(ps, key->str) != NULL)
            return yamltree__fail(key, ppath, err,
                                  "parameter already declared (plan and case "
                                  "parameters share one set of names)");
        xgrow(&ps->v, &ps->cap, ps->n + 1, sizeof(*ps->v));
        p = &ps->v[ps->n++];
        memset(p, 0, sizeof(*p));
        p->name = xstrdup(key->str);
        if (parse_decl(p, yamltree__val_at(map, i), ppath, err) < 0)
            return -1;
    }
    return 0;
}

static size_t
collect_names(const struct params_layers *l, const char **names, size_t max)
{
    size_t n = 0;

    for (size_t d = 0; d < l->ndecls; d++)
        for (size_t i = 0; i < l->decls[d]->n && n < max; i++)
            names[n++] = l->decls[d]->v[i].name;
    return n;
}

static const struct param *
find_decl(const struct params_layers *l, const char *name)
{
    for (size_t d = 0; d < l->ndecls; d++) {
        const struct param *p = params__find(l->decls[d], name);

        if (p != NULL)
            return p;
    }
    return NULL;
}

static int
unknown_param(const struct params_layers *l, const struct ynode *key,
              const char *path, struct err *err)
{
    const char *names[256];
    size_t n = collect_names(l, names, ARRAY_LEN(names));
    const char *hint = suggest__closest(key->str, names, n);
    struct strbuf sb;
    int rc;

    if (hint != NULL)
        return yamltree__fail(key, path, err,
                              "unknown parameter; did you mean \"%s\"?", hint);
    strbuf_init(&sb);
    strbuf_adds(&sb, n ? "" : "none");
    for (size_t i = 0; i < n; i++)
        strbuf_addf(&sb, "%s%s", i ? ", " : "", names[i]);
    rc = yamltree__fail(key, path, err, "unknown parameter; %s takes %s",
                        l->scope, sb.buf);
    strbuf_release(&sb);
    return rc;
}

static int
check_layer(const struct params_layers *l, const struct ynode *layer,
            const char *path, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];

    if (layer == NULL)
        return 0;
    if (yamltree__want_map(layer, path, err) < 0)
        return -1;
    for (size_t i = 0; i < yamltree__len(layer); i++) {
        const struct ynode *key = yamltree__key_at(layer, i);

        yamltree__path_key(kpath, path, key->str);
        if (find_decl(l, key->str) == NULL)
            return unknown_param(l, key, kpath, err);
    }
    return 0;
}

static cJSON *
resolve_one(const struct params_layers *l, const struct param *p,
            struct err *err)
{
    char path[YAMLTREE_PATH_MAX];
    const struct ynode *v;

    if ((v = yamltree__get(l->group, p->name)) != NULL)
        return params__convert(
            p, v, yamltree__path_key(path, l->group_path, p->name), err);
    if ((v = yamltree__get(l->global, p->name)) != NULL)
        return params__convert(
            p, v, yamltree__path_key(path, l->global_path, p->name), err);
    if (p->def != NULL)
        return cJSON_Duplicate(p->def, 1);
    yamltree__fail(l->where, l->where_path, err,
                   "parameter \"%s\" has no default in the manifest; set it "
                   "in global.run.test_params or in this group's "
                   "run.test_params",
                   p->name);
    return NULL;
}

cJSON *
params__resolve(const struct params_layers *l, struct err *err)
{
    cJSON *out;

    if (check_layer(l, l->global, l->global_path, err) < 0 ||
        check_layer(l, l->group, l->group_path, err) < 0)
        return NULL;
    out = cJSON_CreateObject();
    for (size_t d = 0; d < l->ndecls; d++) {
        for (size_t i = 0; i < l->decls[d]->n; i++) {
            const struct param *p = &l->decls[d]->v[i];
            cJSON *v = resolve_one(l, p, err);

            if (v == NULL) {
                cJSON_Delete(out);
                return NULL;
            }
            cJSON_AddItemToObject(out, p->name, v);
        }
    }
    return out;
}

/* A node as JSON: what it means under YAML's core schema. */
static cJSON *
as_written(const struct ynode *v)
{
    cJSON *o;

    if (v->kind == YNODE_SCALAR) {
        const char *digits = v->str + (v->str[0] == '-' || v->str[0] == '+');

        switch (yamltree__scalar_type(v)) {
        case YSCALAR_NULL:
            return cJSON_CreateNull();
        case YSCALAR_BOOL:
            return cJSON_CreateBool(v->str[0] == 't' || v->str[0] == 'T');
        case YSCALAR_INT:
            /* Past 15 digits a JSON number would arrive rounded. */
            if (strlen(digits) <= 15)
                return cJSON_CreateNumber(strtod(v->str, NULL));
            break;
        case YSCALAR_FLOAT:
            /* .inf and .nan: no JSON number. */
            if (strpbrk(v->str, "iInN") == NULL)
                return cJSON_CreateNumber(strtod(v->str, NULL));
            break;
        case YSCALAR_STRING:
            break;
        }
        return cJSON_CreateString(v->str);
    }
    o = v->kind == YNODE_MAP ? cJSON_CreateObject() : cJSON_CreateArray();
    for (size_t i = 0; i < yamltree__len(v); i++)
        if (v->kind == YNODE_MAP)
            cJSON_AddItemToObject(o, yamltree__key_at(v, i)->str,
                                  as_written(yamltree__val_at(v, i)));
        else
            cJSON_AddItemToArray(o, as_written(yamltree__val_at(v, i)));
    return o;
}

cJSON *
params__as_written(const struct ynode *global, const struct ynode *group)
{
    const struct ynode *layers[] = {global, group};
    cJSON *o = cJSON_CreateObject();

    for (size_t k = 0; k < ARRAY_LEN(layers); k++)
        for (size_t j = 0; j < yamltree__len(layers[k]); j++) {
            const char *name = yamltree__key_at(layers[k], j)->str;
            cJSON *v = as_written(yamltree__val_at(layers[k], j));

            if (cJSON_GetObjectItemCaseSensitive(o, name) != NULL)
                cJSON_ReplaceItemInObjectCaseSensitive(o, name, v);
            else
                cJSON_AddItemToObject(o, name, v);
        }
    return o;
}

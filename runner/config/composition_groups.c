/*
 * composition_groups.c — the groups of a composition: ids, instance counts
 * and percentages, resources and run sections, then everything the plan's
 * manifest says about them (see config/composition_int.h).
 *
 * Percentages resolve as Testground resolves them: each group gets
 * round(fraction × total_instances), rounding halves away from zero, and
 * the counts must then add up to total_instances exactly. Unlike
 * Testground, a group that rounds to no instance at all is an error rather
 * than a group that silently never runs.
 */
#include "config/composition_int.h"

#include "base/strbuf.h"
#include "base/strvec.h"
#include "config/suggest_int.h"
#include "base/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const group_keys[] = {"id", "instances", "resources", "run",
                                         NULL};
static const char *const instance_keys[] = {"count", "percentage", NULL};
static const char *const resource_keys[] = {"memory", "cpu", NULL};
static const char *const group_run_keys[] = {
    "test_params", "artifact", "root",  "log_limit", "output_quota",
    "command",     "image",    "args",  "env",       "workdir",
    "profiles",    "disk",     "ready", NULL};

/* Docker refuses memory limits under 6 MiB. */
#define MIN_MEMORY ((uint64_t)6 << 20)
#define MAX_COUNT 1000000

static int
parse_id(struct comp_load *l, size_t i, const char *path, struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX], got[128];
    struct comp_group_src *s = &l->src[i];
    struct composition_group *g = &l->c->groups[i];

    s->id = yamltree__require(s->node, path, "id", err);
    if (s->id == NULL)
        return -1;
    yamltree__path_key(ipath, path, "id");
    if (s->id->kind != YNODE_SCALAR || !manifest_valid_id(s->id->str, false)) {
        yamltree__got(s->id, got, sizeof(got));
        return yamltree__fail(s->id, ipath, err,
                              "expected a group id of lowercase letters, "
                              "digits, '_' and '-' (starting with a letter "
                              "or digit, at most 64), got %s",
                              got);
    }
    g->id = xstrdup(s->id->str);
    for (size_t j = 0; j < i; j++)
        if (strcmp(l->c->groups[j].id, g->id) == 0)
            return yamltree__fail(s->id, ipath, err,
                                  "duplicate group id \"%s\" (first at line "
                                  "%d)",
                                  g->id, l->src[j].id->line);
    return 0;
}

bool
composition__percent_text(const char *s, double *pct)
{
    size_t len = strlen(s);
    char *end;

    if (len < 2 || s[len - 1] != '%' || !(s[0] >= '0' && s[0] <= '9'))
        return false;
    if (strspn(s, "0123456789.") != len - 1)
        return false;
    *pct = strtod(s, &end);
    return end == s + len - 1;
}

static int
parse_percentage(const struct ynode *v, const char *path, double *f,
                 struct err *err)
{
    enum yscalar_type t = yamltree__scalar_type(v);
    char got[128];
    double pct;

    if (t == YSCALAR_INT || t == YSCALAR_FLOAT) {
        *f = strtod(v->str, NULL);
        if (*f > 0 && *f <= 1)
            return 0;
    } else if (v->kind == YNODE_SCALAR &&
               composition__percent_text(v->str, &pct) && pct > 0 &&
               pct <= 100) {
        *f = pct / 100;
        return 0;
    }
    yamltree__got(v, got, sizeof(got));
    return yamltree__fail(v, path, err,
                          "expected a fraction 0 < p <= 1 such as 0.25, or a "
                          "percentage such as \"25%%\", got %s%s",
                          got,
                          v->kind == YNODE_SCALAR && !v->plain &&
                                  strtod(v->str, NULL) > 0 &&
                                  !strchr(v->str, '%')
                              ? "; remove the quotes"
                              : "");
}

static int
parse_instances(struct comp_load *l, size_t i, const char *path,
                struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX];
    struct comp_group_src *s = &l->src[i];
    const struct ynode *in = yamltree__require(s->node, path, "instances", err);

    yamltree__path_key(ipath, path, "instances");
    if (in == NULL || yamltree__want_map(in, ipath, err) < 0 ||
        composition__check_keys(in, ipath, instance_keys, err) < 0)
        return -1;
    s->count = yamltree__get(in, "count");
    s->percentage = yamltree__get(in, "percentage");
    if ((s->count == NULL) == (s->percentage == NULL))
        return yamltree__fail(in, ipath, err,
                              "expected exactly one of count or percentage, "
                              "got %s",
                              s->count ? "both" : "neither");
    if (s->count != NULL)
        return yamltree__int(s->count,
                             yamltree__path_key(kpath, ipath, "count"), 1,
                             MAX_COUNT, &l->c->groups[i].instances, err);
    return parse_percentage(s->percentage,
                            yamltree__path_key(kpath, ipath, "percentage"),
                            &s->fraction, err);
}

static int
parse_resources(struct comp_load *l, size_t i, const char *path,
                struct err *err)
{
    char rpath[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX];
    struct composition_group *g = &l->c->groups[i];
    const struct ynode *r = yamltree__get(l->src[i].node, "resources");
    const struct ynode *mem, *cpu;

    yamltree__path_key(rpath, path, "resources");
    if (r == NULL)
        return 0;
    if (yamltree__want_map(r, rpath, err) < 0 ||
        composition__check_keys(r, rpath, resource_keys, err) < 0)
        return -1;
    if ((mem = yamltree__get(r, "memory")) != NULL) {
        yamltree__path_key(kpath, rpath, "memory");
        if (yamltree__size(mem, kpath, &g->memory_bytes, err) < 0)
            return -1;
        if (g->memory_bytes < MIN_MEMORY)
            return yamltree__fail(mem, kpath, err,
                                  "expected at least 6Mi (the smallest "
                                  "memory limit Docker takes), got %s",
                                  mem->str);
    }
    if ((cpu = yamltree__get(r, "cpu")) != NULL)
        return yamltree__cpu(cpu, yamltree__path_key(kpath, rpath, "cpu"),
                             &g->millicpu, err);
    return 0;
}

/* A size of at least min bytes at map[key], when present. */
static int
read_size_min(const struct ynode *map, const char *path, const char *key,
              uint64_t min, const char *what, uint64_t *out, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];
    const struct ynode *v = yamltree__get(map, key);
    uint64_t n;

    if (v == NULL)
        return 0;
    yamltree__path_key(kpath, path, key);
    if (yamltree__size(v, kpath, &n, err) < 0)
        return -1;
    if (n < min)
        return yamltree__fail(v, kpath, err,
                              "expected a size of at least %s, "
                              "got %s",
                              what, v->str);
    *out = n;
    return 0;
}

int
composition__run_outputs(const struct ynode *run, const char *run_path,
                         uint64_t *log_limit, uint64_t *quota, struct err *err)
{
    if (read_size_min(run, run_path, "log_limit", COMPOSITION_MIN_LOG_LIMIT,
                      "4Ki", log_limit, err) < 0)
        return -1;
    return read_size_min(run, run_path, "output_quota", 1, "1 byte", quota,
                         err);
}

/* Why a run.disk path cannot be taken, or NULL. */
static const char *
bad_disk_path(const char *p)
{
    if (p[0] == '\0')
        return "a path";
    if (strlen(p) >= 1024)
        return "a path shorter than 1024 bytes";
    for (const char *c = p; c != NULL; c = strchr(c, '/'))
        if (strncmp(c += *c == '/', "..", 2) == 0 &&
            (c[2] == '/' || c[2] == '\0'))
            return "a path without \"..\" (relative ones are taken in the "
                   "instance's outputs folder, absolute ones in its file "
                   "system)";
    return NULL;
}

int
composition__read_disk(const struct ynode *run, const char *run_path,
                       char ***out, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX], ipath[YAMLTREE_PATH_MAX], got[128];
    const struct ynode *v = yamltree__get(run, "disk");
    struct strvec sv = {0};
    const char *why;
    size_t n;

    if (v == NULL)
        return 0;
    yamltree__path_key(kpath, run_path, "disk");
    n = v->kind == YNODE_SEQ ? yamltree__len(v) : 0;
    if (v->kind != YNODE_SEQ || n > COMPOSITION_MAX_DISK) {
        yamltree__got(v, got, sizeof(got));
        return yamltree__fail(
            v, kpath, err, "expected a list of at most %d paths, got %s",
            COMPOSITION_MAX_DISK, v->kind == YNODE_SEQ ? "more" : got);
    }
    for (size_t i = 0; i < n; i++) {
        const struct ynode *p = yamltree__val_at(v, i);

        yamltree__path_index(ipath, kpath, i);
        why = "a path";
        if (p->kind == YNODE_SCALAR && yamltree__scalar_type(p) != YSCALAR_NULL)
            why = bad_disk_path(p->str);
        for (size_t j = 0; why == NULL && j < i; j++)
            if (strcmp(yamltree__val_at(v, j)->str, p->str) == 0)
                why = "a path not named before in the list";
        if (why != NULL) {
            yamltree__got(p, got, sizeof(got));
            return yamltree__fail(p, ipath, err, "expected %s, got %s", why,
                                  got);
        }
    }
    strv_free(*out);
    for (size_t i = 0; i < n; i++)
        strvec_push(&sv, yamltree__val_at(v, i)->str);
    *out = strvec_detach(&sv);
    return 0;
}

static char **
copy_paths(char *const *v)
{
    struct strvec sv = {0};

    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        strvec_push(&sv, v[i]);
    return strvec_detach(&sv);
}

static int
parse_run(struct comp_load *l, size_t i, const char *path, struct err *err)
{
    char rpath[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX], got[128];
    struct comp_group_src *s = &l->src[i];
    const struct ynode *run = yamltree__get(s->node, "run");
    const struct ynode *art;

    yamltree__path_key(rpath, path, "run");
    l->c->groups[i].log_limit = l->global_log_limit;
    l->c->groups[i].output_quota = l->global_output_quota;
    l->c->groups[i].disk = copy_paths(l->global_disk);
    l->c->groups[i].ready = composition__ready_copy(&l->global_ready);
    if (run == NULL)
        return 0;
    if (yamltree__want_map(run, rpath, err) < 0 ||
        composition__check_keys(run, rpath, group_run_keys, err) < 0 ||
        composition__run_outputs(run, rpath, &l->c->groups[i].log_limit,
                                 &l->c->groups[i].output_quota, err) < 0 ||
        composition__read_program(run, rpath, false, &s->prog, err) < 0 ||
        composition__read_disk(run, rpath, &l->c->groups[i].disk, err) < 0 ||
        composition__read_ready(run, rpath, &l->c->groups[i].ready, err) < 0)
        return -1;
    s->root = yamltree__get(run, "root");
    if (composition__read_root(s->root, rpath, &l->c->groups[i].root, err) < 0)
        return -1;
    s->test_params = yamltree__get(run, "test_params");
    if (s->test_params != NULL &&
        yamltree__want_map(s->test_params,
                           yamltree__path_key(kpath, rpath, "test_params"),
                           err) < 0)
        return -1;
    if ((art = yamltree__get(run, "artifact")) == NULL)
        return 0;
    if (art->kind != YNODE_SCALAR || art->len == 0 ||
        yamltree__scalar_type(art) == YSCALAR_NULL) {
        yamltree__got(art, got, sizeof(got));
        return yamltree__fail(art, yamltree__path_key(kpath, rpath, "artifact"),
                              err, "expected an image name or a path, got %s",
                              got);
    }
    l->c->groups[i].artifact = xstrdup(art->str);
    return 0;
}

static int
parse_group(struct comp_load *l, size_t i, struct err *err)
{
    char path[YAMLTREE_PATH_MAX];

    yamltree__path_index(path, "groups", i);
    l->src[i].node = yamltree__val_at(l->groups, i);
    if (yamltree__want_map(l->src[i].node, path, err) < 0 ||
        composition__check_keys(l->src[i].node, path, group_keys, err) < 0)
        return -1;
    if (parse_id(l, i, path, err) < 0 || parse_instances(l, i, path, err) < 0 ||
        parse_resources(l, i, path, err) < 0 || parse_run(l, i, path, err) < 0)
        return -1;
    if (l->src[i].root == NULL)
        l->c->groups[i].root = l->root_default;
    if (l->c->groups[i].artifact == NULL && l->global_artifact != NULL)
        l->c->groups[i].artifact = xstrdup(l->global_artifact);
    return 0;
}

int
composition__parse_groups(struct comp_load *l, struct err *err)
{
    size_t n;

    l->groups = yamltree__require(l->root, "", "groups", err);
    if (l->groups == NULL || yamltree__want_seq(l->groups, "groups", err) < 0)
        return -1;
    n = yamltree__len(l->groups);
    if (n == 0)
        return yamltree__fail(l->groups, "groups", err,
                              "expected at least one group, got an empty "
                              "list");
    l->c->groups = xcalloc(n, sizeof(*l->c->groups));
    l->src = xcalloc(n, sizeof(*l->src));
    for (size_t i = 0; i < n; i++) {
        l->c->ngroups = i + 1;
        if (parse_group(l, i, err) < 0)
            return -1;
    }
    return 0;
}

/* "providers 1 + requestors 8 (0.75 of 10) = 9" */
static void
describe_sum(const struct comp_load *l, int64_t sum, struct strbuf *sb)
{
    const struct composition *c = l->c;

    for (size_t i = 0; i < c->ngroups; i++) {
        if (i == 8 && c->ngroups > 9) {
            strbuf_addf(sb, " + %zu more groups", c->ngroups - i);
            break;
        }
        strbuf_addf(sb, "%s%s %lld", i ? " + " : "", c->groups[i].id,
                    (long long)c->groups[i].instances);
        if (l->src[i].percentage != NULL)
            strbuf_addf(sb, " (%.20s of %lld)", l->src[i].percentage->str,
                        (long long)c->total_instances);
    }
    strbuf_addf(sb, " = %lld", (long long)sum);
}

static int
resolve_percentage(struct comp_load *l, size_t i, struct err *err)
{
    char gpath[YAMLTREE_PATH_MAX], path[YAMLTREE_PATH_MAX];
    const struct comp_group_src *s = &l->src[i];
    int64_t total = l->c->total_instances;

    yamltree__path_key(path, yamltree__path_index(gpath, "groups", i),
                       "instances.percentage");
    if (l->total == NULL)
        return yamltree__fail(s->percentage, path, err,
                              "a percentage needs global.total_instances, "
                              "which is not set");
    l->c->groups[i].instances = llround(s->fraction * (double)total);
    if (l->c->groups[i].instances >= 1)
        return 0;
    return yamltree__fail(s->percentage, path, err,
                          "%s of %lld instances rounds to 0; a group needs at "
                          "least 1 instance",
                          s->percentage->str, (long long)total);
}

int
composition__resolve_instances(struct comp_load *l, struct err *err)
{
    struct composition *c = l->c;
    struct strbuf sb;
    int64_t sum = 0;
    int rc;

    for (size_t i = 0; i < c->ngroups; i++) {
        if (l->src[i].percentage != NULL && resolve_percentage(l, i, err) < 0)
            return -1;
        sum += c->groups[i].instances;
    }
    if (l->total == NULL || sum == c->total_instances) {
        c->total_instances = sum;
        return 0;
    }
    strbuf_init(&sb);
    describe_sum(l, sum, &sb);
    rc = yamltree__fail(l->total, "global.total_instances", err,
                        "expected the sum of the groups' instances (%s), got "
                        "%lld",
                        sb.buf, (long long)c->total_instances);
    strbuf_release(&sb);
    return rc;
}

/* The case's instance bounds hold for the instances that run the plan. */
static int
check_bounds(const struct comp_load *l, struct err *err)
{
    const struct composition *c = l->c;
    const struct manifest_case *mc = c->tcase;
    int64_t n = 0;
    bool all;

    for (size_t i = 0; i < c->ngroups; i++)
        if (!composition_group_blackbox(&c->groups[i]))
            n += c->groups[i].instances;
    if (n >= mc->min_instances && n <= mc->max_instances)
        return 0;
    all = n == c->total_instances;
    return yamltree__fail(
        all && l->total ? l->total : l->groups,
        all && l->total ? "global.total_instances" : "groups", err,
        "expected %lld to %lld instances in all for case "
        "\"%s\" of plan \"%s\", got %lld%s",
        (long long)mc->min_instances, (long long)mc->max_instances, mc->name,
        c->manifest->name, (long long)n,
        all ? "" : " in the groups that run the plan");
}

static int
check_group_allowed(const struct comp_load *l, size_t i, struct err *err)
{
    const struct manifest_case *mc = l->c->tcase;
    const char *id = l->c->groups[i].id;
    char gpath[YAMLTREE_PATH_MAX], path[YAMLTREE_PATH_MAX];
    const char *hint;
    struct strbuf sb;
    int rc;

    if (manifest_case_allows(mc, id))
        return 0;
    strbuf_init(&sb);
    for (size_t g = 0; g < mc->ngroups; g++)
        strbuf_addf(&sb, "%s%s", g ? ", " : "", mc->groups[g]);
    hint = suggest__closest(id, (const char *const *)mc->groups, mc->ngroups);
    yamltree__path_key(path, yamltree__path_index(gpath, "groups", i), "id");
    rc = yamltree__fail(l->src[i].id, path, err,
                        "expected one of the groups case \"%s\" accepts (%s), "
                        "got \"%s\"%s%s%s",
                        mc->name, sb.buf, id, hint ? "; did you mean \"" : "",
                        hint ? hint : "", hint ? "\"?" : "");
    strbuf_release(&sb);
    return rc;
}

static int
resolve_params(struct comp_load *l, size_t i, struct err *err)
{
    const struct composition *c = l->c;
    const struct params *decls[] = {&c->manifest->params, &c->tcase->params};
    char gpath[YAMLTREE_PATH_MAX], tpath[YAMLTREE_PATH_MAX];
    char scope[256];
    struct params_layers layers = {
        .decls = decls,
        .ndecls = ARRAY_LEN(decls),
        .scope = scope,
        .global = l->global_params,
        .global_path = "global.run.test_params",
        .group = l->src[i].test_params,
        .group_path = tpath,
        .where = l->src[i].node,
        .where_path = gpath,
    };

    snprintf(scope, sizeof(scope), "case \"%s\" of plan \"%s\"", c->tcase->name,
             c->manifest->name);
    yamltree__path_index(gpath, "groups", i);
    yamltree__path_key(tpath, gpath, "run.test_params");
    l->c->groups[i].params = params__resolve(&layers, err);
    return l->c->groups[i].params == NULL ? -1 : 0;
}

int
composition__check_case(struct comp_load *l, struct err *err)
{
    struct composition *c = l->c;

    if (c->plan != NULL && composition_needs_plan(c) &&
        check_bounds(l, err) < 0)
        return -1;
    for (size_t i = 0; c->plan != NULL && i < c->ngroups; i++)
        if (!composition_group_blackbox(&c->groups[i]) &&
            check_group_allowed(l, i, err) < 0)
            return -1;
    for (size_t i = 0; i < c->ngroups; i++) {
        if (!composition_group_blackbox(&c->groups[i])) {
            if (resolve_params(l, i, err) < 0)
                return -1;
            continue;
        }
        c->groups[i].params =
            params__as_written(l->global_params, l->src[i].test_params);
    }
    return 0;
}

/*
 * manifest.c — loading and checking a plan's manifest.yaml, and finding a
 * plan's folder (see manifest.h and docs/manifests.md).
 *
 * A composition names its plan; the composition loader finds the plan's
 * folder with manifest_locate(), loads its manifest here, and checks the
 * composition's case, groups, instance count and parameters against it.
 * The builder later compiles build.sources from the same struct.
 */
#include "base/strbuf.h"
#include "base/strvec.h"
#include "config/config.h"
#include "config/params_int.h"

#include "base/util.h"
#include "config/yamltree_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const top_keys[] = {"name",   "description", "build",
                                       "params", "cases",       NULL};
static const char *const build_keys[] = {"sources", "cflags", "pkg_config",
                                         "ldlibs", NULL};
static const char *const case_keys[] = {"name",   "description", "instances",
                                        "groups", "params",      NULL};
static const char *const bound_keys[] = {"min", "max", NULL};

#define MANIFEST_MAX_INSTANCES 1000000

bool
manifest_valid_id(const char *s, bool dots)
{
    const char *rest = dots ? "abcdefghijklmnopqrstuvwxyz0123456789_-."
                            : "abcdefghijklmnopqrstuvwxyz0123456789_-";
    size_t len = strlen(s);

    if (len == 0 || len > 64)
        return false;
    if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
        return false;
    return strspn(s, rest) == len;
}

/* A name: a scalar matching manifest_valid_id; *out is the caller's. */
static int
read_name(const struct ynode *n, const char *path, char **out, struct err *err)
{
    char got[128];

    if (n->kind == YNODE_SCALAR && manifest_valid_id(n->str, true))
        return yamltree__string(n, path, out, err);
    yamltree__got(n, got, sizeof(got));
    return yamltree__fail(n, path, err,
                          "expected a name of lowercase letters, digits, "
                          "'_', '-' and '.' (starting with a letter or "
                          "digit), got %s",
                          got);
}

/* An optional list of strings; absent gives an empty list. */
static int
read_list(const struct ynode *map, const char *path, const char *key,
          char ***out, size_t *count, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];
    const struct ynode *v = yamltree__get(map, key);

    if (v == NULL) {
        *out = xcalloc(1, sizeof(**out));
        *count = 0;
        return 0;
    }
    return yamltree__strings(v, yamltree__path_key(kpath, path, key), out,
                             count, err);
}

/* Sources are files inside the plan folder. */
static int
check_sources(const struct manifest *m, const struct ynode *list,
              struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX];

    if (m->nsources == 0)
        return yamltree__fail(list, "build.sources", err,
                              "expected at least one source file, got an "
                              "empty list");
    for (size_t i = 0; i < m->nsources; i++) {
        const char *s = m->sources[i];

        if (s[0] != '/' && strcmp(s, "..") != 0 && strncmp(s, "../", 3) &&
            !strstr(s, "/../") &&
            !(strlen(s) >= 3 && !strcmp(s + strlen(s) - 3, "/..")))
            continue;
        return yamltree__fail(yamltree__val_at(list, i),
                              yamltree__path_index(ipath, "build.sources", i),
                              err,
                              "expected a path inside the plan folder, got "
                              "\"%s\"",
                              s);
    }
    return 0;
}

static int
parse_build(struct manifest *m, const struct ynode *root, struct err *err)
{
    const struct ynode *b = yamltree__require(root, "", "build", err);
    const struct ynode *src;

    if (b == NULL || yamltree__want_map(b, "build", err) < 0 ||
        yamltree__check_keys(b, "build", build_keys, err) < 0)
        return -1;
    src = yamltree__require(b, "build", "sources", err);
    if (src == NULL ||
        yamltree__strings(src, "build.sources", &m->sources, &m->nsources,
                          err) < 0 ||
        check_sources(m, src, err) < 0)
        return -1;
    if (read_list(b, "build", "cflags", &m->cflags, &m->ncflags, err) < 0 ||
        read_list(b, "build", "pkg_config", &m->pkg_config, &m->npkg_config,
                  err) < 0 ||
        read_list(b, "build", "ldlibs", &m->ldlibs, &m->nldlibs, err) < 0)
        return -1;
    return 0;
}

static int
parse_bounds(struct manifest_case *c, const struct ynode *cn, const char *path,
             struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX];
    const struct ynode *in = yamltree__require(cn, path, "instances", err);
    const struct ynode *min, *max;

    yamltree__path_key(ipath, path, "instances");
    if (in == NULL || yamltree__want_map(in, ipath, err) < 0 ||
        yamltree__check_keys(in, ipath, bound_keys, err) < 0)
        return -1;
    if ((min = yamltree__require(in, ipath, "min", err)) == NULL ||
        (max = yamltree__require(in, ipath, "max", err)) == NULL)
        return -1;
    if (yamltree__int(min, yamltree__path_key(kpath, ipath, "min"), 1,
                      MANIFEST_MAX_INSTANCES, &c->min_instances, err) < 0)
        return -1;
    return yamltree__int(max, yamltree__path_key(kpath, ipath, "max"),
                         c->min_instances, MANIFEST_MAX_INSTANCES,
                         &c->max_instances, err);
}

static int
parse_groups(struct manifest_case *c, const struct ynode *cn, const char *path,
             struct err *err)
{
    char gpath[YAMLTREE_PATH_MAX], ipath[YAMLTREE_PATH_MAX];
    const struct ynode *g = yamltree__get(cn, "groups");

    if (g == NULL)
        return 0;
    yamltree__path_key(gpath, path, "groups");
    if (yamltree__strings(g, gpath, &c->groups, &c->ngroups, err) < 0)
        return -1;
    if (c->ngroups == 0)
        return yamltree__fail(g, gpath, err,
                              "expected at least one group id (leave groups "
                              "out to accept any), got an empty list");
    for (size_t i = 0; i < c->ngroups; i++) {
        const struct ynode *item = yamltree__val_at(g, i);

        yamltree__path_index(ipath, gpath, i);
        if (!manifest_valid_id(c->groups[i], false))
            return yamltree__fail(item, ipath, err,
                                  "expected a group id of lowercase letters, "
                                  "digits, '_' and '-', got \"%s\"",
                                  c->groups[i]);
        for (size_t j = 0; j < i; j++)
            if (strcmp(c->groups[i], c->groups[j]) == 0)
                return yamltree__fail(item, ipath, err,
                                      "duplicate group id \"%s\"",
                                      c->groups[i]);
    }
    return 0;
}

/* Case parameters share the plan parameters' names: a case may add
 * parameters, not redefine the plan's. */
static int
parse_case_params(const struct manifest *m, struct manifest_case *c,
                  const struct ynode *cn, const char *path, struct err *err)
{
    char ppath[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX];
    const struct ynode *p = yamltree__get(cn, "params");

    if (p == NULL)
        return 0;
    yamltree__path_key(ppath, path, "params");
    for (size_t i = 0; i < yamltree__len(p); i++) {
        const struct ynode *key = yamltree__key_at(p, i);

        if (params__find(&m->params, key->str) != NULL)
            return yamltree__fail(
                key, yamltree__path_key(kpath, ppath, key->str), err,
                "parameter already declared in the plan's "
                "params; a case cannot redeclare it");
    }
    return params__parse(&c->params, p, ppath, err);
}

static int
parse_case(struct manifest *m, struct manifest_case *c, const struct ynode *cn,
           const char *path, struct err *err)
{
    char npath[YAMLTREE_PATH_MAX];
    const struct ynode *name;

    params__init(&c->params);
    if (yamltree__want_map(cn, path, err) < 0 ||
        yamltree__check_keys(cn, path, case_keys, err) < 0)
        return -1;
    if ((name = yamltree__require(cn, path, "name", err)) == NULL ||
        read_name(name, yamltree__path_key(npath, path, "name"), &c->name,
                  err) < 0)
        return -1;
    if (manifest_case(m, c->name) != c)
        return yamltree__fail(name, npath, err, "duplicate case name \"%s\"",
                              c->name);
    if (yamltree__opt_string(cn, path, "description", &c->description, err) <
            0 ||
        parse_bounds(c, cn, path, err) < 0 ||
        parse_groups(c, cn, path, err) < 0)
        return -1;
    return parse_case_params(m, c, cn, path, err);
}

static int
parse_cases(struct manifest *m, const struct ynode *root, struct err *err)
{
    char cpath[YAMLTREE_PATH_MAX];
    const struct ynode *cs = yamltree__require(root, "", "cases", err);
    size_t n;

    if (cs == NULL || yamltree__want_seq(cs, "cases", err) < 0)
        return -1;
    n = yamltree__len(cs);
    if (n == 0)
        return yamltree__fail(cs, "cases", err,
                              "expected at least one test case, got an "
                              "empty list");
    m->cases = xcalloc(n, sizeof(*m->cases));
    for (size_t i = 0; i < n; i++) {
        m->ncases = i + 1;
        if (parse_case(m, &m->cases[i], yamltree__val_at(cs, i),
                       yamltree__path_index(cpath, "cases", i), err) < 0)
            return -1;
    }
    return 0;
}

static int
parse_plan_name(struct manifest *m, const struct ynode *root,
                const char *expect, struct err *err)
{
    const struct ynode *n = yamltree__require(root, "", "name", err);

    if (n == NULL || read_name(n, "name", &m->name, err) < 0)
        return -1;
    if (expect != NULL && strcmp(m->name, expect) != 0)
        return yamltree__fail(n, "name", err,
                              "expected \"%s\" (the name of the plan's "
                              "folder), got \"%s\"",
                              expect, m->name);
    return 0;
}

/* What parse_root fills, and the name the manifest must carry (or NULL). */
struct root_arg {
    struct manifest *m;
    const char *expect;
};

static int
parse_root(const struct yamltree *t, void *arg, struct err *err)
{
    const struct root_arg *a = arg;
    struct manifest *m = a->m;
    const struct ynode *root = t->root;
    const struct ynode *params;

    if (yamltree__want_root_map(t, "a manifest (name, build, params, cases)",
                                err) < 0 ||
        yamltree__check_keys(root, "", top_keys, err) < 0 ||
        parse_plan_name(m, root, a->expect, err) < 0 ||
        yamltree__opt_string(root, "", "description", &m->description, err) <
            0 ||
        parse_build(m, root, err) < 0)
        return -1;
    params = yamltree__get(root, "params");
    if (params != NULL && params__parse(&m->params, params, "params", err) < 0)
        return -1;
    return parse_cases(m, root, err);
}

struct manifest *
manifest_load(const char *path, const char *expect_name, struct err *err)
{
    struct manifest *m = xcalloc(1, sizeof(*m));
    struct root_arg a = {m, expect_name};

    m->path = xstrdup(path);
    m->dir = path_dirname(path);
    params__init(&m->params);
    if (yamltree__load_with(path, parse_root, &a, err) < 0)
        manifest_destroy(&m);
    return m;
}

void
manifest_destroy(struct manifest **mp)
{
    struct manifest *m = mp ? *mp : NULL;

    if (m == NULL)
        return;
    for (size_t i = 0; i < m->ncases; i++) {
        free(m->cases[i].name);
        free(m->cases[i].description);
        strv_free(m->cases[i].groups);
        params__release(&m->cases[i].params);
    }
    free(m->cases);
    params__release(&m->params);
    strv_free(m->sources);
    strv_free(m->cflags);
    strv_free(m->pkg_config);
    strv_free(m->ldlibs);
    free(m->path);
    free(m->dir);
    free(m->name);
    free(m->description);
    free(m);
    *mp = NULL;
}

const struct manifest_case *
manifest_case(const struct manifest *m, const char *name)
{
    for (size_t i = 0; i < m->ncases; i++)
        if (m->cases[i].name != NULL && strcmp(m->cases[i].name, name) == 0)
            return &m->cases[i];
    return NULL;
}

bool
manifest_case_allows(const struct manifest_case *c, const char *id)
{
    if (c->groups == NULL)
        return true;
    for (size_t i = 0; i < c->ngroups; i++)
        if (strcmp(c->groups[i], id) == 0)
            return true;
    return false;
}

static void
add_candidate(char **dirs, size_t *n, char *dir)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(dirs[i], dir) == 0) {
            free(dir);
            return;
        }
    }
    dirs[(*n)++] = dir;
}

static size_t
candidates(char **dirs, const char *plans_dir, const char *from_dir)
{
    const char *env = getenv("TESTYARD_PLANS");
    cleanup_free char *exe = exe_dir();
    size_t n = 0;

    if (plans_dir == NULL && env != NULL && env[0] != '\0')
        plans_dir = env;
    if (plans_dir != NULL)
        add_candidate(dirs, &n, xstrdup(plans_dir));
    if (from_dir != NULL)
        add_candidate(dirs, &n, path_join(from_dir, "../plans"));
    add_candidate(dirs, &n, xstrdup("plans"));
    add_candidate(dirs, &n, path_join(exe, "../plans"));
    add_candidate(dirs, &n, xstrdup(TY_PREFIX "/share/testyard/plans"));
    return n;
}

/* path with "name/.." pairs removed, in place. */
static void
collapse_dots(char *path)
{
    char *p;

    while ((p = strstr(path, "/../")) != NULL) {
        char *start = p;

        while (start > path && start[-1] != '/')
            start--;
        if ((p - start == 2 && strncmp(start, "..", 2) == 0) ||
            (p - start == 1 && start[0] == '.') || p == start)
            return;
        memmove(start, p + 4, strlen(p + 4) + 1);
    }
}

/* "compositions/../plans/x" reads better as "plans/x"; take the short form
 * only when it is the same directory (a symlinked folder may make it
 * another one). */
static char *
tidy(char *dir)
{
    char *t = xstrdup(dir);
    struct stat a, b;

    collapse_dots(t);
    if (t[0] != '\0' && stat(dir, &a) == 0 && stat(t, &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
        free(dir);
        return t;
    }
    free(t);
    return dir;
}

static char *
search(char **dirs, size_t n, const char *plan)
{
    for (size_t i = 0; i < n; i++) {
        char *dir = path_join(dirs[i], plan);
        cleanup_free char *mf = path_join(dir, MANIFEST_FILE);

        if (path_exists(mf) && !path_is_dir(mf))
            return tidy(dir);
        free(dir);
    }
    return NULL;
}

char *
manifest_locate(const char *plan, const char *plans_dir, const char *from_dir,
                struct err *err)
{
    char *dirs[5];
    size_t n = candidates(dirs, plans_dir, from_dir);
    char *found = NULL;
    struct strbuf sb;

    if (manifest_valid_id(plan, true))
        found = search(dirs, n, plan);
    strbuf_init(&sb);
    for (size_t i = 0; i < n; i++) {
        strbuf_addf(&sb, "%s%s", i ? ", " : "", dirs[i]);
        free(dirs[i]);
    }
    if (found == NULL) {
        err_set(err, ENOENT, "plan \"%s\" not found; looked for %s/%s in %s",
                plan, plan, MANIFEST_FILE, sb.buf);
        err_status(err, EXIT_DATAERR);
    }
    strbuf_release(&sb);
    return found;
}

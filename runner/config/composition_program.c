/*
 * composition_program.c — what a group runs when it does not run the plan:
 * run.command, run.image, run.args, run.env, run.workdir and a group's
 * run.profiles.heap (see config/config.h, docs/compositions.md).
 *
 * Each run section's keys are type-checked as they are read (global.run's
 * and every group's); once every group is read, each group gets global.run
 * < its own, key by key (env variable by variable), and what the world has
 * to say is asked then: the program is looked up in PATH or next to the
 * composition and must be an executable file, a host workdir must exist,
 * an image needs a runner that runs images. Every error points at the key
 * that was written, in global.run or in the group.
 */
#include "config/composition_int.h"

#include "base/strbuf.h"
#include "base/strvec.h"
#include "base/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The PATH execvp searches when there is none (confstr _CS_PATH). */
#define DEFAULT_PATH "/bin:/usr/bin"
/* Docker refuses longer references. */
#define MAX_IMAGE_REF 255

static const char *const group_profile_keys[] = {"heap", NULL};
static const char *const heap_modes[] = {"preload", "off", NULL};

/* Variables the runner sets in every instance: a composition's env cannot
 * replace them. prefix: every name starting so. */
static const struct {
    const char *name;
    bool prefix;
    const char *why;
} reserved_env[] = {
    {"TEST_", true, "the Testground variables TEST_* are testyard's"},
    {"SYNC_SERVICE_", true, "it says where the sync service is"},
    {"TESTYARD_SYNC_", true, "it says where the sync service is"},
    {"TESTYARD_GROUP_INDEX", false, "it numbers the instances"},
    {"TESTYARD_GLOBAL_INDEX", false, "it numbers the instances"},
    {"TESTYARD_PLAN_INSTANCES", false, "it counts the instances"},
    {"TESTYARD_PARAMS", false, "set parameters under run.test_params"},
    {"TESTYARD_DEADLINE_MS", false, "set global.run_config.timeout"},
    {"TESTYARD_HEAP_RATE", false, "set global.run.profiles.heap_rate"},
    {"TESTYARD_HEAP_PEAK_STEP", false, "set global.run.profiles.heap_peak"},
    {"TESTYARD_HEAP_PROFILE_INTERVAL", false, "set global.run.profiles.heap"},
    {"TESTYARD_DIAGNOSTICS_INTERVAL", false,
     "set global.run_config.diagnostics_interval"},
};

bool
composition__is_text(const struct ynode *v)
{
    return v->kind == YNODE_SCALAR && v->len > 0 &&
           yamltree__scalar_type(v) != YSCALAR_NULL;
}

int
composition__fail_got(const struct ynode *v, const char *path, const char *what,
                      struct err *err)
{
    char got[128];

    yamltree__got(v, got, sizeof(got));
    if (v->kind == YNODE_SEQ && yamltree__len(v) == 0)
        snprintf(got, sizeof(got), "an empty list");
    return yamltree__fail(v, path, err, "expected %s, got %s", what, got);
}

static int
check_command(const struct ynode *v, const char *path, struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX];

    if (composition__is_text(v))
        return 0;
    if (v->kind != YNODE_SEQ || yamltree__len(v) == 0)
        return composition__fail_got(
            v, path,
            "a program and its arguments, [path, arg...], or "
            "one path",
            err);
    for (size_t i = 0; i < yamltree__len(v); i++)
        if (!composition__is_text(yamltree__val_at(v, i)))
            return composition__fail_got(
                yamltree__val_at(v, i), yamltree__path_index(ipath, path, i),
                "a non-empty string (one word of the command; "
                "no shell splits it)",
                err);
    return 0;
}

static int
check_args(const struct ynode *v, const char *path, struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX];

    if (v->kind != YNODE_SEQ)
        return composition__fail_got(v, path, "a list of arguments", err);
    for (size_t i = 0; i < yamltree__len(v); i++) {
        const struct ynode *a = yamltree__val_at(v, i);

        if (a->kind != YNODE_SCALAR || yamltree__scalar_type(a) == YSCALAR_NULL)
            return composition__fail_got(
                a, yamltree__path_index(ipath, path, i),
                "one argument (a string, number or bool; \"\" "
                "for an empty one)",
                err);
    }
    return 0;
}

static bool
is_lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* [a-z0-9]+ joined by '.', '_', "__" or runs of '-'. */
static bool
valid_path_component(const char *s, size_t n)
{
    size_t i = 0;

    for (;;) {
        size_t start = i;

        while (i < n && is_lower_alnum(s[i]))
            i++;
        if (i == start)
            return false;
        if (i == n)
            return true;
        if (s[i] == '.')
            i++;
        else if (s[i] == '_')
            i += i + 1 < n && s[i + 1] == '_' ? 2 : 1;
        else if (s[i] == '-')
            i += strspn(s + i, "-");
        else
            return false;
        if (i >= n)
            return false;
    }
}

/* A registry host, with a port: "localhost:5000", "ghcr.io". */
static bool
is_domain(const char *s, size_t n)
{
    return (memchr(s, '.', n) != NULL || memchr(s, ':', n) != NULL ||
            (n == 9 && strncmp(s, "localhost", 9) == 0)) &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789.-:") >= n;
}

/* name[:tag][@algo:hex], as Docker's reference grammar has it. */
static bool
valid_image_ref(const char *ref)
{
    cleanup_free char *s = xstrdup(ref);
    char *at = strchr(s, '@'), *slash, *colon, *p;

    if (strlen(s) > MAX_IMAGE_REF || strpbrk(s, " \t\n") != NULL)
        return false;
    if (at != NULL) {
        *at++ = '\0';
        colon = strchr(at, ':');
        if (colon == NULL || colon == at || strlen(colon + 1) < 32 ||
            strspn(colon + 1, "0123456789abcdefABCDEF") != strlen(colon + 1))
            return false;
    }
    slash = strrchr(s, '/');
    colon = strrchr(slash ? slash : s, ':');
    if (colon != NULL) {
        *colon++ = '\0';
        if (*colon == '\0' || *colon == '.' || *colon == '-' ||
            strlen(colon) > 128)
            return false;
    }
    p = s;
    slash = strchr(p, '/');
    if (slash != NULL && is_domain(p, (size_t)(slash - p)))
        p = slash + 1;
    for (; (slash = strchr(p, '/')) != NULL; p = slash + 1)
        if (!valid_path_component(p, (size_t)(slash - p)))
            return false;
    return valid_path_component(p, strlen(p));
}

static int
check_image(const struct ynode *v, const char *path, struct err *err)
{
    if (!composition__is_text(v))
        return composition__fail_got(
            v, path, "an image name such as memcached:1.6", err);
    if (valid_image_ref(v->str))
        return 0;
    return composition__fail_got(
        v, path,
        "a Docker image reference such as memcached:1.6 or "
        "registry:5000/team/app@sha256:<digest> (repository "
        "names are lowercase)",
        err);
}

static bool
valid_env_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                     "0123456789_") == strlen(s);
}

/* Why testyard keeps name to itself, or NULL. */
static const char *
reserved_why(const char *name)
{
    for (size_t i = 0; i < ARRAY_LEN(reserved_env); i++) {
        const char *r = reserved_env[i].name;

        if (reserved_env[i].prefix ? strncmp(name, r, strlen(r)) == 0
                                   : strcmp(name, r) == 0)
            return reserved_env[i].why;
    }
    return NULL;
}

static int
check_env(const struct ynode *v, const char *path, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];

    if (yamltree__want_map(v, path, err) < 0)
        return -1;
    for (size_t i = 0; i < yamltree__len(v); i++) {
        const struct ynode *k = yamltree__key_at(v, i);
        const struct ynode *val = yamltree__val_at(v, i);
        const char *why;

        yamltree__path_key(kpath, path, k->str);
        if (!valid_env_name(k->str))
            return composition__fail_got(
                k, kpath,
                "a variable name (letters, digits and '_', not "
                "starting with a digit)",
                err);
        if ((why = reserved_why(k->str)) != NULL)
            return yamltree__fail(k, kpath, err,
                                  "testyard sets %s itself in every instance "
                                  "(%s)",
                                  k->str, why);
        if (val->kind != YNODE_SCALAR ||
            yamltree__scalar_type(val) == YSCALAR_NULL)
            return composition__fail_got(
                val, kpath,
                "a value (a string, number or bool; \"\" for an "
                "empty one)",
                err);
    }
    return 0;
}

/* A group's run.profiles: heap: preload or off, nothing else. */
static int
check_group_profiles(const struct ynode *p, const char *path,
                     const struct ynode **heap, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];

    if (yamltree__want_map(p, path, err) < 0)
        return -1;
    for (size_t i = 0; i < yamltree__len(p); i++) {
        const struct ynode *k = yamltree__key_at(p, i);

        if (strcmp(k->str, "heap_rate") == 0 ||
            strcmp(k->str, "heap_peak") == 0)
            return yamltree__fail(k, yamltree__path_key(kpath, path, k->str),
                                  err,
                                  "unknown key; %s is the whole run's: set "
                                  "it in global.run.profiles",
                                  k->str);
    }
    if (composition__check_keys(p, path, group_profile_keys, err) < 0)
        return -1;
    if ((*heap = yamltree__get(p, "heap")) == NULL)
        return 0;
    yamltree__path_key(kpath, path, "heap");
    for (size_t i = 0; heap_modes[i] != NULL; i++)
        if ((*heap)->kind == YNODE_SCALAR &&
            strcmp((*heap)->str, heap_modes[i]) == 0)
            return 0;
    return composition__fail_got(
        *heap, kpath,
        "preload or off (a group's profiles.heap; the interval "
        "of periodic profiles is global.run.profiles.heap)",
        err);
}

static int
check_workdir(const struct ynode *v, const char *path, struct err *err)
{
    return composition__is_text(v)
               ? 0
               : composition__fail_got(v, path, "a folder", err);
}

/* A key of run read with its checker, into *out. */
static int
read_key(const struct ynode *run, const char *run_path, const char *key,
         int (*check)(const struct ynode *, const char *, struct err *),
         const struct ynode **out, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];

    *out = yamltree__get(run, key);
    if (*out == NULL)
        return 0;
    return check(*out, yamltree__path_key(kpath, run_path, key), err);
}

/* run.artifact is a ready build of the plan: not with a program of the
 * same section. */
static int
check_artifact(const struct comp_prog *p, const char *run_path, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];

    if (p->artifact == NULL || (p->command == NULL && p->image == NULL))
        return 0;
    return yamltree__fail(p->artifact,
                          yamltree__path_key(kpath, run_path, "artifact"), err,
                          "a ready build of the plan cannot go with run.%s "
                          "(a program instead of the plan); remove one",
                          p->image ? "image" : "command");
}

int
composition__read_program(const struct ynode *run, const char *run_path,
                          bool global, struct comp_prog *p, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];
    const struct ynode *prof;

    if (read_key(run, run_path, "command", check_command, &p->command, err) <
            0 ||
        read_key(run, run_path, "image", check_image, &p->image, err) < 0 ||
        read_key(run, run_path, "args", check_args, &p->args, err) < 0 ||
        read_key(run, run_path, "env", check_env, &p->env, err) < 0 ||
        read_key(run, run_path, "workdir", check_workdir, &p->workdir, err) < 0)
        return -1;
    p->artifact = yamltree__get(run, "artifact");
    if (check_artifact(p, run_path, err) < 0)
        return -1;
    if (global || (prof = yamltree__get(run, "profiles")) == NULL)
        return 0;
    return check_group_profiles(
        prof, yamltree__path_key(kpath, run_path, "profiles"), &p->heap, err);
}

/* One key of a group: its own, else global.run's, with the path of the
 * one that was written. */
struct picked {
    const struct ynode *v;
    char path[YAMLTREE_PATH_MAX];
};

static void
pick(struct picked *out, const struct ynode *own, const struct ynode *global,
     size_t i, const char *key)
{
    char gpath[YAMLTREE_PATH_MAX], rpath[YAMLTREE_PATH_MAX];

    out->v = own ? own : global;
    if (own != NULL)
        yamltree__path_key(rpath, yamltree__path_index(gpath, "groups", i),
                           "run");
    else
        snprintf(rpath, sizeof(rpath), "global.run");
    yamltree__path_key(out->path, rpath, key);
}

static char **
words(const struct ynode *v)
{
    struct strvec sv = {0};

    if (v->kind == YNODE_SCALAR)
        strvec_push(&sv, v->str);
    for (size_t i = 0; v->kind == YNODE_SEQ && i < yamltree__len(v); i++)
        strvec_push(&sv, yamltree__val_at(v, i)->str);
    return strvec_detach(&sv);
}

/* path absolute (from the current folder), without "." components or
 * repeated slashes; ".." is kept, as a folder may be a link. */
static char *
absolute_clean(const char *path)
{
    cleanup_free char *abs = path_absolute(path);
    struct strbuf sb;

    strbuf_init(&sb);
    for (const char *p = abs; *p != '\0';) {
        size_t n;

        p += strspn(p, "/");
        n = strcspn(p, "/");
        if (n > 0 && !(n == 1 && p[0] == '.'))
            strbuf_addf(&sb, "/%.*s", (int)n, p);
        p += n;
    }
    if (sb.len == 0)
        strbuf_addc(&sb, '/');
    return strbuf_detach(&sb);
}

/* A path written in the composition: from its folder when relative. */
static char *
from_composition(const struct comp_load *l, const char *path)
{
    cleanup_free char *dir = composition_base_dir(l->c, l->opts);
    cleanup_free char *joined =
        path[0] == '/' ? xstrdup(path) : path_join(dir, path);

    return absolute_clean(joined);
}

/* NULL when path is an executable regular file, else why not. */
static const char *
not_executable(const char *path)
{
    struct stat st;

    if (stat(path, &st) < 0)
        return "no such file";
    if (S_ISDIR(st.st_mode))
        return "a folder, not a program";
    if (!S_ISREG(st.st_mode))
        return "not a regular file";
    return access(path, X_OK) == 0 ? NULL : "not executable (chmod +x)";
}

/* name in the coordinator's PATH, as execvp(3) finds it. */
static char *
search_path(const char *name, const struct ynode *at, const char *path,
            struct err *err)
{
    const char *env = getenv("PATH");
    const char *dirs = env ? env : DEFAULT_PATH, *p = dirs;
    char skipped[PATH_MAX + 64] = "";

    for (;;) {
        size_t n = strcspn(p, ":");
        cleanup_free char *dir = n ? xstrndup(p, n) : xstrdup(".");
        cleanup_free char *cand = path_join(dir, name);
        const char *why = not_executable(cand);

        if (why == NULL)
            return absolute_clean(cand);
        if (skipped[0] == '\0' && strcmp(why, "no such file") != 0)
            snprintf(skipped, sizeof(skipped), "; %s is %s", cand, why);
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    yamltree__fail(at, path, err, "\"%s\" not found in PATH (%.300s%s)%s", name,
                   dirs, strlen(dirs) > 300 ? "..." : "", skipped);
    return NULL;
}

/* The host program command[0]: absolute, executable. */
static char *
resolve_program(const struct comp_load *l, const char *name,
                const struct ynode *at, const char *path, struct err *err)
{
    char *abs;
    const char *why;

    if (strchr(name, '/') == NULL)
        return search_path(name, at, path, err);
    abs = from_composition(l, name);
    if ((why = not_executable(abs)) == NULL)
        return abs;
    yamltree__fail(at, path, err, "%s: %s%s", abs, why,
                   name[0] == '/' ? ""
                                  : " (a relative command is taken from the "
                                    "composition's folder)");
    free(abs);
    return NULL;
}

static int
resolve_command(const struct comp_load *l, struct composition_group *g,
                const struct picked *cmd, struct err *err)
{
    char path[YAMLTREE_PATH_MAX];
    const struct ynode *at = cmd->v;
    char *abs;

    g->command = words(cmd->v);
    if (g->image != NULL)
        return 0;
    snprintf(path, sizeof(path), "%s", cmd->path);
    if (cmd->v->kind == YNODE_SEQ) {
        at = yamltree__val_at(cmd->v, 0);
        yamltree__path_index(path, cmd->path, 0);
    }
    if ((abs = resolve_program(l, g->command[0], at, path, err)) == NULL)
        return -1;
    free(g->command[0]);
    g->command[0] = abs;
    return 0;
}

static int
resolve_workdir(const struct comp_load *l, struct composition_group *g,
                const struct picked *wd, struct err *err)
{
    if (l->runner->no_image == NULL) {
        if (wd->v->str[0] == '/') {
            g->workdir = xstrdup(wd->v->str);
            return 0;
        }
        return composition__fail_got(wd->v, wd->path,
                                     "an absolute path in the container", err);
    }
    g->workdir = from_composition(l, wd->v->str);
    if (path_is_dir(g->workdir))
        return 0;
    return yamltree__fail(
        wd->v, wd->path, err, "expected an existing folder, got \"%s\" (%s%s)",
        wd->v->str, g->workdir,
        path_exists(g->workdir) ? " is not a folder" : ": no such folder");
}

/* env: global.run's variables, then the group's, a group's replacing a
 * global one of the same name in its place. */
static char **
merge_env(const struct ynode *global, const struct ynode *own)
{
    const struct ynode *layers[] = {global, own};
    struct strvec sv = {0};

    for (size_t l = 0; l < ARRAY_LEN(layers); l++)
        for (size_t i = 0; i < yamltree__len(layers[l]); i++) {
            const char *k = yamltree__key_at(layers[l], i)->str;
            const char *v = yamltree__val_at(layers[l], i)->str;
            size_t kl = strlen(k), j = 0;

            while (j < sv.n &&
                   !(strncmp(sv.v[j], k, kl) == 0 && sv.v[j][kl] == '='))
                j++;
            if (j == sv.n) {
                strvec_pushf(&sv, "%s=%s", k, v);
                continue;
            }
            free(sv.v[j]);
            sv.v[j] = xasprintf("%s=%s", k, v);
        }
    return strvec_detach(&sv);
}

static int
resolve_image(const struct comp_load *l, struct composition_group *g,
              const struct picked *img, struct err *err)
{
    if (l->runner->no_image != NULL)
        return yamltree__fail(img->v, img->path, err,
                              "expected no image with runner %s (%s); name "
                              "the host program with run.command",
                              l->c->runner, l->runner->no_image);
    g->image = xstrdup(img->v->str);
    return 0;
}

static const char plan_links_heap[] =
    "the plan links the heap profiler; profiles.heap: preload is for groups "
    "with run.command or run.image";

static int
resolve_heap(const struct comp_load *l, size_t i, struct err *err)
{
    struct composition_group *g = &l->c->groups[i];
    const struct ynode *own = l->src[i].prog.heap;
    struct picked h;

    if (own == NULL) {
        g->heap_preload =
            l->global_prog.heap != NULL && composition_group_blackbox(g);
        return 0;
    }
    g->heap_preload = strcmp(own->str, "preload") == 0;
    if (!g->heap_preload || composition_group_blackbox(g))
        return 0;
    pick(&h, own, NULL, i, "profiles.heap");
    return yamltree__fail(own, h.path, err, "%s", plan_links_heap);
}

/* The program keys of group i, global < group. */
static int
resolve_group(struct comp_load *l, size_t i, struct err *err)
{
    const struct comp_prog *own = &l->src[i].prog, *gl = &l->global_prog;
    struct composition_group *g = &l->c->groups[i];
    struct picked cmd, img, args, wd;

    pick(&cmd, own->command, gl->command, i, "command");
    pick(&img, own->image, gl->image, i, "image");
    pick(&args, own->args, gl->args, i, "args");
    pick(&wd, own->workdir, gl->workdir, i, "workdir");
    if ((img.v != NULL && resolve_image(l, g, &img, err) < 0) ||
        (cmd.v != NULL && resolve_command(l, g, &cmd, err) < 0))
        return -1;
    if (img.v != NULL || cmd.v != NULL) {
        const struct picked *at = img.v ? &img : &cmd;

        g->program_at = xasprintf("%s:%d:%d: %s", at->v->file, at->v->line,
                                  at->v->col, at->path);
        if (own->artifact == NULL) {
            free(g->artifact);
            g->artifact = NULL;
        }
    }
    g->args = args.v ? words(args.v) : xcalloc(1, sizeof(char *));
    g->env = merge_env(gl->env, own->env);
    if (wd.v != NULL && resolve_workdir(l, g, &wd, err) < 0)
        return -1;
    return resolve_heap(l, i, err);
}

/* A group's own run.artifact with a program it inherits from global.run. */
static int
check_inherited_artifact(const struct comp_load *l, size_t i, struct err *err)
{
    char gpath[YAMLTREE_PATH_MAX], path[YAMLTREE_PATH_MAX];
    const struct comp_prog *own = &l->src[i].prog;

    if (own->artifact == NULL || !composition_group_blackbox(&l->c->groups[i]))
        return 0;
    yamltree__path_key(path, yamltree__path_index(gpath, "groups", i),
                       "run.artifact");
    return yamltree__fail(own->artifact, path, err,
                          "a ready build of the plan cannot go with "
                          "global.run.%s (a program instead of the plan); "
                          "remove one",
                          l->global_prog.image ? "image" : "command");
}

int
composition__resolve_programs(struct comp_load *l, struct err *err)
{
    bool any = false;

    for (size_t i = 0; i < l->c->ngroups; i++) {
        if (resolve_group(l, i, err) < 0 ||
            check_inherited_artifact(l, i, err) < 0)
            return -1;
        any = any || composition_group_blackbox(&l->c->groups[i]);
    }
    if (l->global_prog.heap == NULL || any)
        return 0;
    return yamltree__fail(l->global_prog.heap, "global.run.profiles.heap", err,
                          "%s", plan_links_heap);
}

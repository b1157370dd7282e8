/*
 * composition.c — loading a composition: the top level, metadata and the
 * global section, finding the plan and its manifest, and the order in
 * which everything is checked (see config/config.h, docs/compositions.md).
 *
 * Checks run from the file itself outwards: first what the composition
 * says on its own (keys, types, units, groups, percentages), then what it
 * asks of the host (the programs and folders of groups that run their
 * own program, composition_program.c), then what it asks of the plan
 * (case, instance bounds, groups, parameters), so the first error a user
 * sees is the one nearest to what they wrote. Without global.plan, which
 * only groups that all run their own program may leave out, there is no
 * plan to ask.
 */
#include "config/composition_int.h"

#include "base/strbuf.h"
#include "base/strvec.h"
#include "config/suggest_int.h"
#include "base/util.h"
#include "ty_units.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const top_keys[] = {"metadata", "global", "groups", NULL};
static const char *const metadata_keys[] = {"name", "author", "description",
                                            NULL};
static const char *const global_keys[] = {
    "plan", "case", "runner", "total_instances", "run", "run_config", NULL};
static const char *const run_keys[] = {
    "test_params",  "profiles", "artifact", "root", "log_limit",
    "output_quota", "command",  "image",    "args", "env",
    "workdir",      "disk",     "ready",    NULL};
static const char *const run_config_keys[] = {"timeout",
                                              "keep_containers",
                                              "network",
                                              "memory_sample_interval",
                                              "diagnostics_interval",
                                              "pre_oom_snapshot",
                                              "process_sample",
                                              "disk_sample",
                                              "stages",
                                              NULL};
static const char *const profile_keys[] = {"heap", "heap_rate", "heap_peak",
                                           NULL};
static const char *const networks[] = {"host", "bridge", NULL};

#define MAX_TOTAL_INSTANCES 1000000
/* The most runners a registry may list (composition_opts.runners). */
#define MAX_RUNNERS 16

static const struct {
    const char *key;
    const char *hint;
} testground_keys[] = {
    {"builder", "testyard builds the plan as its manifest's build section "
                "says; remove this key"},
    {"build_config", "testyard builds the plan as its manifest's build "
                     "section says; remove this key"},
    {"build", "testyard builds the plan as its manifest's build section "
              "says; remove this key"},
    {"disable_metrics", "testyard always writes metrics to files; remove "
                        "this key"},
};

int
composition__check_keys(const struct ynode *map, const char *path,
                        const char *const *allowed, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];

    for (size_t i = 0; i < yamltree__len(map); i++) {
        const struct ynode *key = yamltree__key_at(map, i);

        for (size_t k = 0; k < ARRAY_LEN(testground_keys); k++)
            if (strcmp(key->str, testground_keys[k].key) == 0)
                return yamltree__fail(
                    key, yamltree__path_key(kpath, path, key->str), err,
                    "unknown key; %s", testground_keys[k].hint);
    }
    return yamltree__check_keys(map, path, allowed, err);
}

/* A section that must be a mapping with known keys, or absent. */
static const struct ynode *
section(const struct ynode *map, const char *path, const char *key,
        const char *const *allowed, char *kpath, struct err *err, bool *bad)
{
    const struct ynode *s = yamltree__get(map, key);

    yamltree__path_key(kpath, path, key);
    *bad = s != NULL && (yamltree__want_map(s, kpath, err) < 0 ||
                         composition__check_keys(s, kpath, allowed, err) < 0);
    return s;
}

static char *
name_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *dot;

    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    return dot && dot != base ? xstrndup(base, (size_t)(dot - base))
                              : xstrdup(base);
}

static int
parse_metadata(struct comp_load *l, struct err *err)
{
    char path[YAMLTREE_PATH_MAX];
    struct composition *c = l->c;
    bool bad;
    const struct ynode *md =
        section(l->root, "", "metadata", metadata_keys, path, err, &bad);

    if (bad || yamltree__opt_string(md, path, "name", &c->name, err) < 0 ||
        yamltree__opt_string(md, path, "author", &c->author, err) < 0 ||
        yamltree__opt_string(md, path, "description", &c->description, err) < 0)
        return -1;
    if (c->name == NULL)
        c->name = name_from_path(c->path);
    return 0;
}

/* A duration at map[key] of at least min (or 0 when zero_ok), what
 * the message says was expected otherwise. */
static int
read_at_least(const struct ynode *map, const char *path, const char *key,
              int64_t min, bool zero_ok, const char *what, int64_t *out,
              struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];
    const struct ynode *v = yamltree__get(map, key);

    if (v == NULL)
        return 0;
    yamltree__path_key(kpath, path, key);
    if (yamltree__duration(v, kpath, out, err) < 0)
        return -1;
    if (*out >= min || (zero_ok && *out == 0))
        return 0;
    return yamltree__fail(v, kpath, err, "expected %s, got %s", what, v->str);
}

int
composition__read_interval(const struct ynode *map, const char *path,
                           const char *key, bool zero_ok, int64_t *out,
                           struct err *err)
{
    return read_at_least(map, path, key, MIN_INTERVAL_NS, zero_ok,
                         zero_ok ? "a duration of at least 10ms (or 0 or off "
                                   "for none)"
                                 : "a duration of at least 10ms",
                         out, err);
}

int
composition__read_positive(const struct ynode *map, const char *path,
                           const char *key, int64_t *out, struct err *err)
{
    return read_at_least(map, path, key, 1, false, "a duration above 0", out,
                         err);
}

/* run_config.pre_oom_snapshot: a fraction 0 < f < 1 of the memory limit,
 * a percentage, or 0 or off for none. */
static int
read_pre_oom(const struct ynode *map, const char *path, double *out,
             struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX], got[128];
    const struct ynode *v = yamltree__get(map, "pre_oom_snapshot");
    enum yscalar_type t;
    double f = -1;

    if (v == NULL)
        return 0;
    t = yamltree__scalar_type(v);
    if (t == YSCALAR_INT || t == YSCALAR_FLOAT)
        f = strtod(v->str, NULL);
    else if (t == YSCALAR_STRING && strcmp(v->str, "off") == 0)
        f = 0;
    else if (v->kind == YNODE_SCALAR && composition__percent_text(v->str, &f))
        f /= 100;
    if (f == 0 || (f > 0 && f < 1)) {
        *out = f;
        return 0;
    }
    yamltree__got(v, got, sizeof(got));
    return yamltree__fail(
        v, yamltree__path_key(kpath, path, "pre_oom_snapshot"), err,
        "expected a fraction of the memory limit above 0 and below 1 such as "
        "0.9, a percentage such as \"90%%\", or 0 or off for none, got %s%s",
        got,
        t == YSCALAR_STRING && !v->plain && strtod(v->str, NULL) > 0 &&
                !strchr(v->str, '%')
            ? "; remove the quotes"
            : "");
}

/* run_config.process_sample: an interval, or 0 or off for none. */
static int
read_process_sample(const struct ynode *map, const char *path, int64_t *out,
                    struct err *err)
{
    const struct ynode *v = yamltree__get(map, "process_sample");

    if (v != NULL && v->kind == YNODE_SCALAR && strcmp(v->str, "off") == 0) {
        *out = 0;
        return 0;
    }
    return composition__read_interval(map, path, "process_sample", true, out,
                                      err);
}

static int
parse_run_config(struct comp_load *l, struct err *err)
{
    char path[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX];
    struct composition *c = l->c;
    const struct ynode *v;
    bool bad;
    const struct ynode *rc = section(l->global, "global", "run_config",
                                     run_config_keys, path, err, &bad);
    int i;

    if (bad)
        return -1;
    l->stages = yamltree__get(rc, "stages");
    if (composition__read_positive(rc, path, "timeout", &c->timeout_ns, err) <
        0)
        return -1;
    if ((v = yamltree__get(rc, "keep_containers")) != NULL &&
        yamltree__bool(v, yamltree__path_key(kpath, path, "keep_containers"),
                       &c->keep_containers, err) < 0)
        return -1;
    if ((v = yamltree__get(rc, "network")) != NULL) {
        i = yamltree__enum(v, yamltree__path_key(kpath, path, "network"),
                           networks, err);
        if (i < 0)
            return -1;
        free(c->network);
        c->network = xstrdup(networks[i]);
    }
    if (composition__read_interval(rc, path, "memory_sample_interval", false,
                                   &c->memory_sample_ns, err) < 0 ||
        read_pre_oom(rc, path, &c->pre_oom, err) < 0 ||
        read_process_sample(rc, path, &c->process_sample_ns, err) < 0 ||
        composition__read_interval(rc, path, "disk_sample", false,
                                   &c->disk_sample_ns, err) < 0)
        return -1;
    return composition__read_interval(rc, path, "diagnostics_interval", false,
                                      &c->diagnostics_ns, err);
}

/* profiles.heap_peak: a size, 0 or off (no peak snapshots). */
static int
read_heap_peak(const struct ynode *p, const char *path, uint64_t *out,
               struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX], why[256], got[128];
    const struct ynode *v = yamltree__get(p, "heap_peak");

    if (v == NULL)
        return 0;
    yamltree__path_key(kpath, path, "heap_peak");
    if (v->kind == YNODE_SCALAR && strcmp(v->str, "off") == 0) {
        *out = 0;
        return 0;
    }
    if (v->kind == YNODE_SCALAR &&
        ty__parse_size(v->str, out, why, sizeof(why)) == 0)
        return 0;
    yamltree__got(v, got, sizeof(got));
    return yamltree__fail(v, kpath, err,
                          "expected a size like 32Mi (the growth of heap in "
                          "use between two peak snapshots), or off, got %s",
                          got);
}

/* global.run.profiles.heap: the interval of periodic heap profiles, 0 or
 * off for none, or preload: the LD_PRELOAD profiler in every group that
 * runs its own program, without periodic profiles. */
static int
read_heap(struct comp_load *l, const struct ynode *p, const char *path,
          struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX], got[128];
    const struct ynode *v = yamltree__get(p, "heap");
    int64_t ns = 0;

    if (v == NULL)
        return 0;
    if (v->kind == YNODE_SCALAR && strcmp(v->str, "preload") == 0) {
        l->global_prog.heap = v;
        return 0;
    }
    if (v->kind == YNODE_SCALAR && strcmp(v->str, "off") == 0)
        return 0;
    yamltree__path_key(kpath, path, "heap");
    if (yamltree__duration(v, kpath, &ns, NULL) == 0 &&
        (ns == 0 || ns >= MIN_INTERVAL_NS)) {
        l->c->heap_profile_ns = ns;
        return 0;
    }
    yamltree__got(v, got, sizeof(got));
    return yamltree__fail(v, kpath, err,
                          "expected a duration of at least 10ms (the "
                          "interval of periodic heap profiles), 0 or off for "
                          "none, or preload, got %s",
                          got);
}

static int
parse_profiles(struct comp_load *l, const struct ynode *run,
               const char *run_path, struct err *err)
{
    char path[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX];
    struct composition *c = l->c;
    const struct ynode *v;
    bool bad;
    const struct ynode *p =
        section(run, run_path, "profiles", profile_keys, path, err, &bad);

    if (bad || read_heap(l, p, path, err) < 0 ||
        read_heap_peak(p, path, &c->heap_peak, err) < 0)
        return -1;
    if ((v = yamltree__get(p, "heap_rate")) == NULL)
        return 0;
    yamltree__path_key(kpath, path, "heap_rate");
    if (yamltree__size(v, kpath, &c->heap_rate, err) < 0)
        return -1;
    if (c->heap_rate == 0)
        return yamltree__fail(v, kpath, err,
                              "expected a size of at least 1 byte, got %s",
                              v->str);
    return 0;
}

static int
parse_global_run(struct comp_load *l, struct err *err)
{
    char path[YAMLTREE_PATH_MAX], kpath[YAMLTREE_PATH_MAX];
    const struct ynode *art;
    bool bad;
    const struct ynode *run =
        section(l->global, "global", "run", run_keys, path, err, &bad);

    if (bad || composition__read_root(yamltree__get(run, "root"), path,
                                      &l->root_default, err) < 0)
        return -1;
    l->global_root = yamltree__get(run, "root");
    l->global_params = yamltree__get(run, "test_params");
    if (l->global_params != NULL &&
        yamltree__want_map(l->global_params,
                           yamltree__path_key(kpath, path, "test_params"),
                           err) < 0)
        return -1;
    if ((art = yamltree__get(run, "artifact")) != NULL) {
        char got[128];

        yamltree__got(art, got, sizeof(got));
        if (art->kind != YNODE_SCALAR || art->len == 0 ||
            yamltree__scalar_type(art) == YSCALAR_NULL)
            return yamltree__fail(
                art, yamltree__path_key(kpath, path, "artifact"), err,
                "expected an image name or a path, got %s", got);
        l->global_artifact = art->str;
    }
    l->global_log_limit = COMPOSITION_LOG_LIMIT;
    l->global_output_quota = COMPOSITION_OUTPUT_QUOTA;
    if (composition__run_outputs(run, path, &l->global_log_limit,
                                 &l->global_output_quota, err) < 0 ||
        composition__read_program(run, path, true, &l->global_prog, err) < 0 ||
        composition__read_disk(run, path, &l->global_disk, err) < 0 ||
        composition__read_ready(run, path, &l->global_ready, err) < 0)
        return -1;
    return parse_profiles(l, run, path, err);
}

/* global.plan, and global.case (required with a plan). Without a plan,
 * check_plan_needed() says whether the groups can do without. */
static int
parse_plan_case(struct comp_load *l, struct err *err)
{
    struct composition *c = l->c;
    char got[128];

    l->plan = yamltree__get(l->global, "plan");
    l->tcase = yamltree__get(l->global, "case");
    if (l->plan == NULL)
        return l->tcase == NULL ? 0
                                : yamltree__string(l->tcase, "global.case",
                                                   &c->case_name, err);
    if (l->tcase == NULL)
        return yamltree__fail(l->global, "global", err,
                              "missing required key \"case\"");
    if (yamltree__string(l->plan, "global.plan", &c->plan, err) < 0)
        return -1;
    if (!manifest_valid_id(c->plan, true)) {
        yamltree__got(l->plan, got, sizeof(got));
        return yamltree__fail(l->plan, "global.plan", err,
                              "expected a plan name (lowercase letters, "
                              "digits, '_', '-', '.'), got %s",
                              got);
    }
    return yamltree__string(l->tcase, "global.case", &c->case_name, err);
}

/* global.runner, checked against the runners there are, or the runner
 * that replaces it: into c->runner and l->runner. */
static int
parse_runner(struct comp_load *l, struct err *err)
{
    const struct composition_runner *const *rs = l->opts->runners;
    const char *names[MAX_RUNNERS + 1];
    const struct ynode *v;
    const char *want;
    size_t n = 0;
    int i;

    for (; n < MAX_RUNNERS && rs[n] != NULL; n++)
        names[n] = rs[n]->name;
    names[n] = NULL;
    if ((v = yamltree__require(l->global, "global", "runner", err)) == NULL ||
        (i = yamltree__enum(v, "global.runner", names, err)) < 0)
        return -1;
    want = l->opts->runner ? l->opts->runner : names[i];
    for (i = 0; names[i] != NULL && strcmp(names[i], want) != 0; i++)
        ;
    if (names[i] == NULL) {
        err_set(err, EINVAL, "runner \"%s\": no such runner", want);
        return err_status(err, EXIT_USAGE);
    }
    l->runner = rs[i];
    l->c->runner = xstrdup(want);
    return 0;
}

static int
parse_global(struct comp_load *l, struct err *err)
{
    struct composition *c = l->c;

    l->global = yamltree__require(l->root, "", "global", err);
    if (l->global == NULL || yamltree__want_map(l->global, "global", err) < 0 ||
        composition__check_keys(l->global, "global", global_keys, err) < 0 ||
        parse_plan_case(l, err) < 0 || parse_runner(l, err) < 0)
        return -1;
    l->total = yamltree__get(l->global, "total_instances");
    if (l->total != NULL &&
        yamltree__int(l->total, "global.total_instances", 1,
                      MAX_TOTAL_INSTANCES, &c->total_instances, err) < 0)
        return -1;
    if (parse_global_run(l, err) < 0 || parse_run_config(l, err) < 0)
        return -1;
    /* A per-run bridge keeps a run's containers off the host's network
     * and away from other runs, where the runner can make one. */
    if (c->network == NULL)
        c->network = xstrdup(l->runner->no_bridge ? "host" : "bridge");
    if (l->runner->no_bridge && strcmp(c->network, "bridge") == 0)
        return yamltree__fail(
            yamltree__get(yamltree__get(l->global, "run_config"), "network"),
            "global.run_config.network", err,
            "expected host with runner %s (%s), got \"bridge\"", c->runner,
            l->runner->no_bridge);
    return 0;
}

int
composition__read_root(const struct ynode *v, const char *run_path, bool *out,
                       struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];

    if (v == NULL)
        return 0;
    return yamltree__bool(v, yamltree__path_key(kpath, run_path, "root"), out,
                          err);
}

/* run.root asks the runner for uid 0 in the container; some runners
 * (local:exec: the coordinator's own processes) cannot change user. */
static int
check_root(const struct comp_load *l, struct err *err)
{
    char gpath[YAMLTREE_PATH_MAX], path[YAMLTREE_PATH_MAX];

    if (l->runner->no_root == NULL)
        return 0;
    for (size_t i = 0; i < l->c->ngroups; i++) {
        const struct ynode *v =
            l->src[i].root ? l->src[i].root : l->global_root;

        if (!l->c->groups[i].root)
            continue;
        if (v == l->global_root)
            snprintf(path, sizeof(path), "global.run.root");
        else
            yamltree__path_key(path, yamltree__path_index(gpath, "groups", i),
                               "run.root");
        return yamltree__fail(v, path, err,
                              "expected false with runner %s (%s), got true",
                              l->c->runner, l->runner->no_root);
    }
    return 0;
}

/* Without global.plan every group must run its own program. */
static int
check_plan_needed(const struct comp_load *l, struct err *err)
{
    const struct composition *c = l->c;
    size_t i = 0, nblack = 0;

    if (l->plan != NULL || !composition_needs_plan(c))
        return 0;
    for (size_t j = 0; j < c->ngroups; j++)
        nblack += composition_group_blackbox(&c->groups[j]);
    if (nblack == 0)
        return yamltree__fail(l->global, "global", err,
                              "missing required key \"plan\"");
    while (composition_group_blackbox(&c->groups[i]))
        i++;
    return yamltree__fail(l->global, "global", err,
                          "missing required key \"plan\"; group \"%s\" runs "
                          "the plan (it has no run.command or run.image)",
                          c->groups[i].id);
}

/* The plan's folder and manifest, and the case in it. */
static int
load_plan(struct comp_load *l, struct err *err)
{
    struct composition *c = l->c;
    cleanup_free char *from = composition_base_dir(c, l->opts);
    cleanup_free char *mf = NULL;
    char msg[ERR_MSG_MAX];

    c->plan_dir = manifest_locate(c->plan, l->opts->plans_dir, from, err);
    if (c->plan_dir == NULL) {
        snprintf(msg, sizeof(msg), "%s", err->msg);
        return yamltree__fail(l->plan, "global.plan", err, "%s", msg);
    }
    mf = path_join(c->plan_dir, MANIFEST_FILE);
    c->manifest = manifest_load(mf, c->plan, err);
    if (c->manifest == NULL)
        return err_status(err, EXIT_DATAERR);
    return 0;
}

static int
find_case(struct comp_load *l, struct err *err)
{
    const struct manifest *m = l->c->manifest;
    const char *names[64];
    size_t n = 0;
    struct strbuf sb;
    const char *hint;
    int rc;

    l->c->tcase = manifest_case(m, l->c->case_name);
    if (l->c->tcase != NULL)
        return 0;
    strbuf_init(&sb);
    for (size_t i = 0; i < m->ncases; i++) {
        strbuf_addf(&sb, "%s%s", i ? ", " : "", m->cases[i].name);
        if (n < ARRAY_LEN(names))
            names[n++] = m->cases[i].name;
    }
    hint = suggest__closest(l->c->case_name, names, n);
    rc = yamltree__fail(l->tcase, "global.case", err,
                        "expected a case of plan \"%s\" (%s), got \"%s\"%s%s%s",
                        m->name, sb.buf, l->c->case_name,
                        hint ? "; did you mean \"" : "", hint ? hint : "",
                        hint ? "\"?" : "");
    strbuf_release(&sb);
    return rc;
}

static void
set_defaults(struct composition *c, const char *path)
{
    c->path = xstrdup(path);
    c->timeout_ns = COMPOSITION_TIMEOUT_NS;
    c->memory_sample_ns = COMPOSITION_MEMORY_SAMPLE_NS;
    c->diagnostics_ns = COMPOSITION_DIAGNOSTICS_NS;
    c->process_sample_ns = COMPOSITION_PROCESS_SAMPLE_NS;
    c->disk_sample_ns = COMPOSITION_DISK_SAMPLE_NS;
    c->pre_oom = COMPOSITION_PRE_OOM;
    c->heap_rate = COMPOSITION_HEAP_RATE;
    c->heap_peak = COMPOSITION_HEAP_PEAK;
}

static int
load(const struct yamltree *t, void *arg, struct err *err)
{
    struct comp_load *l = arg;

    l->root = t->root;
    if (yamltree__want_root_map(t, "a composition (global and groups)", err) <
            0 ||
        composition__check_keys(l->root, "", top_keys, err) < 0 ||
        parse_metadata(l, err) < 0 || parse_global(l, err) < 0 ||
        composition__parse_groups(l, err) < 0 ||
        composition__parse_stages(l, err) < 0 || check_root(l, err) < 0 ||
        composition__resolve_programs(l, err) < 0 ||
        check_plan_needed(l, err) < 0 ||
        composition__resolve_instances(l, err) < 0)
        return -1;
    if (l->plan != NULL && (load_plan(l, err) < 0 || find_case(l, err) < 0))
        return -1;
    return composition__check_case(l, err);
}

char *
composition_base_dir(const struct composition *c,
                     const struct composition_opts *opts)
{
    if (opts != NULL && opts->base_dir != NULL)
        return xstrdup(opts->base_dir);
    return path_dirname(c->path);
}

struct composition *
composition_load(const char *path, const struct composition_opts *opts,
                 struct err *err)
{
    struct composition *c = xcalloc(1, sizeof(*c));
    struct comp_load l = {.c = c, .opts = opts};
    int rc;

    assert(opts != NULL && opts->runners != NULL);
    set_defaults(c, path);
    rc = yamltree__load_with(path, load, &l, err);
    free(l.src);
    strv_free(l.global_disk);
    strv_free(l.global_ready.command);
    if (rc < 0)
        composition_destroy(&c);
    return c;
}

void
composition_destroy(struct composition **cp)
{
    struct composition *c = cp ? *cp : NULL;

    if (c == NULL)
        return;
    for (size_t i = 0; i < c->ngroups; i++) {
        free(c->groups[i].id);
        cJSON_Delete(c->groups[i].params);
        free(c->groups[i].artifact);
        strv_free(c->groups[i].command);
        free(c->groups[i].image);
        free(c->groups[i].program_at);
        strv_free(c->groups[i].args);
        strv_free(c->groups[i].env);
        free(c->groups[i].workdir);
        strv_free(c->groups[i].disk);
        strv_free(c->groups[i].ready.command);
    }
    free(c->groups);
    for (size_t i = 0; i < c->nstages; i++) {
        free(c->stages[i].name);
        free(c->stages[i].at);
    }
    free(c->stages);
    manifest_destroy(&c->manifest);
    free(c->path);
    free(c->name);
    free(c->author);
    free(c->description);
    free(c->plan);
    free(c->case_name);
    free(c->runner);
    free(c->network);
    free(c->plan_dir);
    free(c);
    *cp = NULL;
}

bool
composition_group_blackbox(const struct composition_group *g)
{
    return g->command != NULL || g->image != NULL;
}

bool
composition_needs_plan(const struct composition *c)
{
    for (size_t i = 0; i < c->ngroups; i++)
        if (!composition_group_blackbox(&c->groups[i]))
            return true;
    return false;
}

/*
 * composition_stages.c — a run as a list of stages with actions between
 * them (global.run_config.stages), and how the runner tells that an
 * instance is ready (run.ready); see config/config.h, docs/long-runs.md.
 *
 * The stages are read once the groups are, so that each action's group
 * is resolved to its index, and are walked in order with each group's
 * state (running, paused, stopped for good): an action that could not be
 * done when its turn comes is refused here, where the file says it, not
 * hours into a run. The durations of the stages must fit in
 * run_config.timeout; a stage that counts rounds has no duration to add.
 *
 * run.ready is global.run's or a group's, the group's replacing it whole:
 * one probe, a TCP port or a command, with its interval and timeout.
 */
#include "config/composition_int.h"

#include "base/strbuf.h"
#include "base/strvec.h"
#include "base/util.h"
#include "config/suggest_int.h"
#include "ty_units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ready_keys[] = {"tcp", "command", "interval",
                                         "timeout", NULL};
static const char *const stage_keys[] = {"name",    "duration", "rounds",
                                         "restart", "pause",    "unpause",
                                         "stop",    "grace",    NULL};
/* The action keys, in the order of enum composition_stage_kind. */
static const char *const action_keys[] = {"restart", "pause", "unpause",
                                          "stop"};

#define MAX_ROUNDS 1000000000

static const char entry_what[] = "a stage {name, duration or rounds} or an "
                                 "action {restart, pause, unpause or stop: "
                                 "GROUP}";

/* What a group is at a point of the list. */
enum group_state { GROUP_RUNNING = 0, GROUP_PAUSED, GROUP_STOPPED };

struct stages_load {
    struct comp_load *l;
    const struct ynode *list;
    enum group_state *state; /* one per group */
    size_t *since;           /* the entry that set it */
    int64_t total_ns;        /* the durations so far */
    size_t nrun;             /* STAGE_RUN entries so far */
};

/* run.ready.command: [probe, arg...] into *out. */
static int
read_probe(const struct ynode *v, const char *path, char ***out,
           struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX];
    struct strvec sv = {0};

    if (v->kind != YNODE_SEQ || yamltree__len(v) == 0)
        return composition__fail_got(v, path,
                                     "a non-empty list of strings (the probe "
                                     "and its arguments, such as "
                                     "[pg_isready, -q])",
                                     err);
    for (size_t i = 0; i < yamltree__len(v); i++)
        if (!composition__is_text(yamltree__val_at(v, i)))
            return composition__fail_got(
                yamltree__val_at(v, i), yamltree__path_index(ipath, path, i),
                "a non-empty string (one word of the probe; no shell "
                "splits it)",
                err);
    for (size_t i = 0; i < yamltree__len(v); i++)
        strvec_push(&sv, yamltree__val_at(v, i)->str);
    *out = strvec_detach(&sv);
    return 0;
}

/* The ready mapping r (at path) into *rd, which starts with defaults. */
static int
read_ready_map(const struct ynode *r, const char *path,
               struct composition_ready *rd, struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];
    const struct ynode *tcp = yamltree__get(r, "tcp");
    const struct ynode *cmd = yamltree__get(r, "command");
    int64_t port;

    if (composition__check_keys(r, path, ready_keys, err) < 0)
        return -1;
    if ((tcp == NULL) == (cmd == NULL))
        return yamltree__fail(r, path, err,
                              "expected exactly one of tcp or command, "
                              "got %s",
                              tcp ? "both" : "neither");
    if (tcp != NULL) {
        if (yamltree__int(tcp, yamltree__path_key(kpath, path, "tcp"), 1, 65535,
                          &port, err) < 0)
            return -1;
        rd->tcp = (int)port;
    }
    if (cmd != NULL &&
        read_probe(cmd, yamltree__path_key(kpath, path, "command"),
                   &rd->command, err) < 0)
        return -1;
    if (composition__read_interval(r, path, "interval", false, &rd->interval_ns,
                                   err) < 0)
        return -1;
    return composition__read_positive(r, path, "timeout", &rd->timeout_ns, err);
}

int
composition__read_ready(const struct ynode *run, const char *run_path,
                        struct composition_ready *out, struct err *err)
{
    char path[YAMLTREE_PATH_MAX];
    const struct ynode *r = yamltree__get(run, "ready");
    struct composition_ready rd = {
        .interval_ns = COMPOSITION_READY_INTERVAL_NS,
        .timeout_ns = COMPOSITION_READY_TIMEOUT_NS,
    };

    if (r == NULL)
        return 0;
    yamltree__path_key(path, run_path, "ready");
    if (r->kind == YNODE_SCALAR && strcmp(r->str, "off") == 0)
        rd = (struct composition_ready){0};
    else if (r->kind != YNODE_MAP)
        return composition__fail_got(r, path,
                                     "a mapping ({tcp: PORT} or {command: "
                                     "[probe, arg...]}, with interval and "
                                     "timeout), or off",
                                     err);
    else if (read_ready_map(r, path, &rd, err) < 0) {
        strv_free(rd.command);
        return -1;
    }
    strv_free(out->command);
    *out = rd;
    return 0;
}

struct composition_ready
composition__ready_copy(const struct composition_ready *src)
{
    struct composition_ready rd = *src;
    struct strvec sv = {0};

    if (src->command == NULL)
        return rd;
    for (size_t i = 0; src->command[i] != NULL; i++)
        strvec_push(&sv, src->command[i]);
    rd.command = strvec_detach(&sv);
    return rd;
}

/* The key node of key in map (present). */
static const struct ynode *
key_node(const struct ynode *map, const char *key)
{
    for (size_t i = 0; i < yamltree__len(map); i++)
        if (strcmp(yamltree__key_at(map, i)->str, key) == 0)
            return yamltree__key_at(map, i);
    return map;
}

/* what (a stage, pause, unpause) has a grace it cannot have. */
static int
fail_grace(const struct ynode *e, const char *ipath, const char *what,
           struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX];

    return yamltree__fail(key_node(e, "grace"),
                          yamltree__path_key(kpath, ipath, "grace"), err,
                          "%s has no grace; only restart and stop have one "
                          "(from SIGTERM to SIGKILL)",
                          what);
}

/* {name, duration | rounds} at entry e into st. */
static int
parse_run_stage(struct stages_load *sl, const struct ynode *e,
                const char *ipath, size_t i, struct composition_stage *st,
                struct err *err)
{
    char kpath[YAMLTREE_PATH_MAX], got[128];
    const struct composition *c = sl->l->c;
    const struct ynode *name = yamltree__require(e, ipath, "name", err);
    const struct ynode *rounds = yamltree__get(e, "rounds");
    bool has_duration = yamltree__get(e, "duration") != NULL;

    if (name == NULL)
        return -1;
    yamltree__path_key(kpath, ipath, "name");
    if (name->kind != YNODE_SCALAR || !manifest_valid_id(name->str, true)) {
        yamltree__got(name, got, sizeof(got));
        return yamltree__fail(name, kpath, err,
                              "expected a stage name of lowercase letters, "
                              "digits, '_', '.' and '-' (starting with a "
                              "letter or digit, at most 64), got %s",
                              got);
    }
    for (size_t j = 0; j < i; j++)
        if (c->stages[j].name && strcmp(c->stages[j].name, name->str) == 0)
            return yamltree__fail(
                name, kpath, err,
                "duplicate stage name \"%s\" (first at line %d)", name->str,
                yamltree__get(yamltree__val_at(sl->list, j), "name")->line);
    st->name = xstrdup(name->str);
    if (yamltree__get(e, "grace") != NULL)
        return fail_grace(e, ipath, "a stage", err);
    if (has_duration == (rounds != NULL))
        return yamltree__fail(e, ipath, err,
                              "expected exactly one of duration or rounds, "
                              "got %s",
                              rounds ? "both" : "neither");
    if (rounds != NULL)
        return yamltree__int(rounds, yamltree__path_key(kpath, ipath, "rounds"),
                             1, MAX_ROUNDS, &st->rounds, err);
    if (composition__read_positive(e, ipath, "duration", &st->duration_ns,
                                   err) < 0)
        return -1;
    sl->total_ns = st->duration_ns > INT64_MAX - sl->total_ns
                       ? INT64_MAX
                       : sl->total_ns + st->duration_ns;
    return 0;
}

/* The group an action names, resolved to its index into *out. */
static int
find_group(const struct comp_load *l, const struct ynode *v, const char *path,
           size_t *out, struct err *err)
{
    const struct composition *c = l->c;
    const char *ids[64];
    size_t n = 0;
    struct strbuf sb;
    const char *hint = NULL;
    char got[128];
    int rc;

    for (size_t i = 0; v->kind == YNODE_SCALAR && i < c->ngroups; i++)
        if (strcmp(c->groups[i].id, v->str) == 0) {
            *out = i;
            return 0;
        }
    strbuf_init(&sb);
    for (size_t i = 0; i < c->ngroups; i++) {
        strbuf_addf(&sb, "%s%s", i ? ", " : "", c->groups[i].id);
        if (n < ARRAY_LEN(ids))
            ids[n++] = c->groups[i].id;
    }
    if (composition__is_text(v))
        hint = suggest__closest(v->str, ids, n);
    yamltree__got(v, got, sizeof(got));
    rc = yamltree__fail(v, path, err,
                        "expected the id of a group (%s), got %s%s%s%s", sb.buf,
                        got, hint ? "; did you mean \"" : "", hint ? hint : "",
                        hint ? "\"?" : "");
    strbuf_release(&sb);
    return rc;
}

/* The action k may be done to group g at this point of the list. */
static int
check_state(const struct stages_load *sl, enum composition_stage_kind k,
            size_t g, const struct ynode *v, const char *path, struct err *err)
{
    const char *id = sl->l->c->groups[g].id;
    const struct ynode *at = yamltree__val_at(sl->list, sl->since[g]);
    enum group_state s = sl->state[g];

    if (s == GROUP_STOPPED)
        return yamltree__fail(v, path, err,
                              "expected a group that still runs; \"%s\" was "
                              "stopped for good at "
                              "global.run_config.stages[%zu] (line %d)",
                              id, sl->since[g], at->line);
    if (k == STAGE_UNPAUSE && s != GROUP_PAUSED)
        return yamltree__fail(v, path, err,
                              "expected a paused group; \"%s\" is not paused "
                              "(pause it first)",
                              id);
    if (k != STAGE_UNPAUSE && s == GROUP_PAUSED)
        return yamltree__fail(v, path, err,
                              "expected a running group; \"%s\" is paused "
                              "since global.run_config.stages[%zu] (line %d); "
                              "unpause it first",
                              id, sl->since[g], at->line);
    return 0;
}

/* {restart | pause | unpause | stop: GROUP, grace} at entry e into st. */
static int
parse_action(struct stages_load *sl, const struct ynode *e, const char *ipath,
             size_t i, struct composition_stage *st, struct err *err)
{
    static const char *const stage_only[] = {"name", "duration", "rounds"};
    char kpath[YAMLTREE_PATH_MAX];
    const char *key = action_keys[st->kind - 1];
    const struct ynode *v = yamltree__get(e, key);

    for (size_t k = 0; k < ARRAY_LEN(stage_only); k++)
        if (yamltree__get(e, stage_only[k]) != NULL)
            return yamltree__fail(
                key_node(e, stage_only[k]),
                yamltree__path_key(kpath, ipath, stage_only[k]), err,
                "%s has no %s; a stage ({name, duration or rounds}) is an "
                "entry of its own",
                key, stage_only[k]);
    yamltree__path_key(kpath, ipath, key);
    if (find_group(sl->l, v, kpath, &st->group, err) < 0 ||
        check_state(sl, st->kind, st->group, v, kpath, err) < 0)
        return -1;
    if (st->kind == STAGE_PAUSE || st->kind == STAGE_UNPAUSE) {
        if (yamltree__get(e, "grace") != NULL)
            return fail_grace(e, ipath, key, err);
    } else {
        st->grace_ns = COMPOSITION_STAGE_GRACE_NS;
        if (yamltree__get(e, "grace") != NULL &&
            yamltree__duration(yamltree__get(e, "grace"),
                               yamltree__path_key(kpath, ipath, "grace"),
                               &st->grace_ns, err) < 0)
            return -1;
    }
    sl->since[st->group] = i;
    sl->state[st->group] = st->kind == STAGE_PAUSE  ? GROUP_PAUSED
                           : st->kind == STAGE_STOP ? GROUP_STOPPED
                                                    : GROUP_RUNNING;
    return 0;
}

/* Which of restart, pause, unpause, stop entry e is (STAGE_RUN: none). */
static int
entry_kind(const struct ynode *e, const char *ipath,
           enum composition_stage_kind *kind, struct err *err)
{
    const char *first = NULL;

    *kind = STAGE_RUN;
    for (size_t k = 0; k < ARRAY_LEN(action_keys); k++) {
        if (yamltree__get(e, action_keys[k]) == NULL)
            continue;
        if (first != NULL)
            return yamltree__fail(e, ipath, err,
                                  "expected one action (restart, pause, "
                                  "unpause or stop), got both %s and %s",
                                  first, action_keys[k]);
        first = action_keys[k];
        *kind = (enum composition_stage_kind)(k + 1);
    }
    return 0;
}

static int
parse_entry(struct stages_load *sl, size_t i, struct err *err)
{
    char ipath[YAMLTREE_PATH_MAX];
    struct composition *c = sl->l->c;
    const struct ynode *e = yamltree__val_at(sl->list, i);
    struct composition_stage *st = &c->stages[i];

    yamltree__path_index(ipath, "global.run_config.stages", i);
    c->nstages = i + 1;
    st->at = xasprintf("%s:%d:%d: %s", e->file, e->line, e->col, ipath);
    if (e->kind != YNODE_MAP)
        return composition__fail_got(e, ipath, entry_what, err);
    if (yamltree__len(e) == 0)
        return yamltree__fail(e, ipath, err,
                              "expected %s, got an empty mapping", entry_what);
    if (composition__check_keys(e, ipath, stage_keys, err) < 0 ||
        entry_kind(e, ipath, &st->kind, err) < 0)
        return -1;
    if (st->kind != STAGE_RUN)
        return parse_action(sl, e, ipath, i, st, err);
    sl->nrun++;
    return parse_run_stage(sl, e, ipath, i, st, err);
}

/* The stages' durations fit in run_config.timeout. */
static int
check_total(const struct stages_load *sl, struct err *err)
{
    const struct composition *c = sl->l->c;
    const struct ynode *rc = yamltree__get(sl->l->global, "run_config");
    char total[32], timeout[32];

    if (sl->total_ns <= c->timeout_ns)
        return 0;
    ty__format_duration(sl->total_ns, total, sizeof(total));
    ty__format_duration(c->timeout_ns, timeout, sizeof(timeout));
    return yamltree__fail(
        sl->list, "global.run_config.stages", err,
        "expected durations that add up to at most "
        "global.run_config.timeout (%s%s), got %s",
        timeout, yamltree__get(rc, "timeout") ? "" : ", the default", total);
}

static int
parse_list(struct stages_load *sl, struct err *err)
{
    const char *path = "global.run_config.stages";
    size_t n = yamltree__len(sl->list);
    struct composition *c = sl->l->c;

    if (yamltree__want_seq(sl->list, path, err) < 0)
        return -1;
    if (n == 0)
        return yamltree__fail(sl->list, path, err,
                              "expected at least one stage, got an empty "
                              "list");
    if (n > COMPOSITION_MAX_STAGES)
        return yamltree__fail(sl->list, path, err,
                              "expected at most %d stages and actions, got "
                              "%zu",
                              COMPOSITION_MAX_STAGES, n);
    c->stages = xcalloc(n, sizeof(*c->stages));
    for (size_t i = 0; i < n; i++)
        if (parse_entry(sl, i, err) < 0)
            return -1;
    if (sl->nrun == 0)
        return yamltree__fail(sl->list, path, err,
                              "expected at least one stage ({name, duration "
                              "or rounds}), got only actions");
    return check_total(sl, err);
}

int
composition__parse_stages(struct comp_load *l, struct err *err)
{
    struct stages_load sl = {.l = l, .list = l->stages};
    int rc;

    if (l->stages == NULL)
        return 0;
    sl.state = xcalloc(l->c->ngroups, sizeof(*sl.state));
    sl.since = xcalloc(l->c->ngroups, sizeof(*sl.since));
    rc = parse_list(&sl, err);
    free(sl.state);
    free(sl.since);
    return rc;
}

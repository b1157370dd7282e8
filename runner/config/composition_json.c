/*
 * composition_json.c — the resolved composition as JSON, which is what
 * `testyard validate` prints and what a run folder keeps as a record of
 * what ran (see config/config.h).
 *
 * Keys come in a fixed order and every key is always present (null when
 * unset), so the output can be compared byte for byte; a group that runs
 * its own program has the keys of that program too (command, image, args,
 * env, workdir, profiles), which a group that runs the plan has not,
 * "stages" is there when run_config.stages is, a group's "ready" when it
 * has run.ready, and "notes" when there is something to say. Sizes are in
 * bytes, durations in nanoseconds, cpu in millicpus and cpus; 0 memory or cpu
 * means no limit.
 */
#include "config/config.h"

#include "base/strbuf.h"
#include "base/util.h"
#include "ty_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers as written digits: cJSON would print 15 significant digits
 * and turn a long timeout in nanoseconds into 1.08e+15. */
static void
add_int(cJSON *o, const char *key, long long v)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%lld", v);
    cJSON_AddRawToObject(o, key, buf);
}

static cJSON *
run_config_json(const struct composition *c)
{
    cJSON *o = cJSON_CreateObject();

    add_int(o, "timeout_ns", (long long)c->timeout_ns);
    cJSON_AddBoolToObject(o, "keep_containers", c->keep_containers);
    cJSON_AddStringToObject(o, "network", c->network);
    add_int(o, "memory_sample_interval_ns", (long long)c->memory_sample_ns);
    add_int(o, "diagnostics_interval_ns", (long long)c->diagnostics_ns);
    add_int(o, "process_sample_ns", (long long)c->process_sample_ns);
    add_int(o, "disk_sample_ns", (long long)c->disk_sample_ns);
    cJSON_AddNumberToObject(o, "pre_oom_snapshot", c->pre_oom);
    return o;
}

static cJSON *
profiles_json(const struct composition *c)
{
    cJSON *o = cJSON_CreateObject();

    add_int(o, "heap_interval_ns", (long long)c->heap_profile_ns);
    add_int(o, "heap_rate_bytes", (long long)c->heap_rate);
    add_int(o, "heap_peak_bytes", (long long)c->heap_peak);
    return o;
}

static cJSON *
strings_json(char *const *v)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    return a;
}

/* "KEY=value" pairs as an object. */
static cJSON *
env_json(char *const *env)
{
    cJSON *o = cJSON_CreateObject();

    for (size_t i = 0; env[i] != NULL; i++) {
        const char *eq = strchr(env[i], '=');
        char key[256];

        snprintf(key, sizeof(key), "%.*s", (int)(eq - env[i]), env[i]);
        cJSON_AddStringToObject(o, key, eq + 1);
    }
    return o;
}

static void
program_json(cJSON *o, const struct composition_group *g)
{
    cJSON *p = cJSON_CreateObject();

    if (g->command != NULL)
        cJSON_AddItemToObject(o, "command", strings_json(g->command));
    else
        cJSON_AddNullToObject(o, "command");
    ty__json_string(o, "image", g->image);
    cJSON_AddItemToObject(o, "args", strings_json(g->args));
    cJSON_AddItemToObject(o, "env", env_json(g->env));
    ty__json_string(o, "workdir", g->workdir);
    ty__json_string(p, "heap", g->heap_preload ? "preload" : NULL);
    cJSON_AddItemToObject(o, "profiles", p);
}

/* run.ready, when the group has one. */
static void
ready_json(cJSON *o, const struct composition_group *g)
{
    const struct composition_ready *rd = &g->ready;
    cJSON *r;

    if (rd->tcp == 0 && rd->command == NULL)
        return;
    r = cJSON_CreateObject();
    if (rd->tcp != 0)
        add_int(r, "tcp", rd->tcp);
    else
        cJSON_AddNullToObject(r, "tcp");
    if (rd->command != NULL)
        cJSON_AddItemToObject(r, "command", strings_json(rd->command));
    else
        cJSON_AddNullToObject(r, "command");
    add_int(r, "interval_ns", (long long)rd->interval_ns);
    add_int(r, "timeout_ns", (long long)rd->timeout_ns);
    cJSON_AddItemToObject(o, "ready", r);
}

static cJSON *
group_json(const struct composition_group *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *r = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "id", g->id);
    add_int(o, "instances", (long long)g->instances);
    add_int(r, "memory_bytes", (long long)g->memory_bytes);
    add_int(r, "millicpus", (long long)g->millicpu);
    cJSON_AddNumberToObject(r, "cpus", (double)g->millicpu / 1000.0);
    cJSON_AddItemToObject(o, "resources", r);
    add_int(o, "log_limit_bytes", (long long)g->log_limit);
    add_int(o, "output_quota_bytes", (long long)g->output_quota);
    ty__json_string(o, "artifact", g->artifact);
    cJSON_AddBoolToObject(o, "root", g->root);
    cJSON_AddItemToObject(o, "disk", strings_json(g->disk));
    ready_json(o, g);
    if (composition_group_blackbox(g))
        program_json(o, g);
    cJSON_AddItemToObject(o, "params", cJSON_Duplicate(g->params, 1));
    return o;
}

/* A stage {stage, duration_ns, rounds} or an action {action, group,
 * grace_ns}; 0 duration, rounds or grace (pause, unpause) as null. */
static cJSON *
stage_json(const struct composition *c, const struct composition_stage *st)
{
    static const char *const actions[] = {
        [STAGE_RESTART] = "restart",
        [STAGE_PAUSE] = "pause",
        [STAGE_UNPAUSE] = "unpause",
        [STAGE_STOP] = "stop",
    };
    cJSON *o = cJSON_CreateObject();
    bool graced = st->kind == STAGE_RESTART || st->kind == STAGE_STOP;

    if (st->kind == STAGE_RUN) {
        cJSON_AddStringToObject(o, "stage", st->name);
        if (st->rounds == 0)
            add_int(o, "duration_ns", (long long)st->duration_ns);
        else
            cJSON_AddNullToObject(o, "duration_ns");
        if (st->rounds != 0)
            add_int(o, "rounds", (long long)st->rounds);
        else
            cJSON_AddNullToObject(o, "rounds");
        return o;
    }
    cJSON_AddStringToObject(o, "action", actions[st->kind]);
    cJSON_AddStringToObject(o, "group", c->groups[st->group].id);
    if (graced)
        add_int(o, "grace_ns", (long long)st->grace_ns);
    else
        cJSON_AddNullToObject(o, "grace_ns");
    return o;
}

static cJSON *
stages_json(const struct composition *c)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; i < c->nstages; i++)
        cJSON_AddItemToArray(a, stage_json(c, &c->stages[i]));
    return a;
}

/* The ids of the groups that run their own program with test_params. */
static void
unchecked_ids(const struct composition *c, struct strbuf *sb)
{
    for (size_t i = 0; i < c->ngroups; i++)
        if (composition_group_blackbox(&c->groups[i]) &&
            cJSON_GetArraySize(c->groups[i].params) > 0)
            strbuf_addf(sb, "%s\"%s\"", sb->len ? ", " : "", c->groups[i].id);
}

static cJSON *
notes_json(const struct composition *c)
{
    cJSON *a = cJSON_CreateArray();
    struct strbuf sb;

    if (c->plan == NULL)
        cJSON_AddItemToArray(
            a, cJSON_CreateString("no plan: test_params are passed to the "
                                  "instances as written, unchecked (no "
                                  "manifest)"));
    strbuf_init(&sb);
    if (c->plan != NULL)
        unchecked_ids(c, &sb);
    if (sb.len > 0) {
        char *s = xasprintf("groups that run their own program (%s): "
                            "test_params are passed as written, unchecked "
                            "(the manifest checks only the groups that run "
                            "the plan)",
                            sb.buf);

        cJSON_AddItemToArray(a, cJSON_CreateString(s));
        free(s);
    }
    strbuf_release(&sb);
    return a;
}

cJSON *
composition_to_json(const struct composition *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *groups = cJSON_CreateArray();
    cJSON *notes;

    cJSON_AddStringToObject(o, "composition", c->path);
    cJSON_AddStringToObject(o, "name", c->name);
    ty__json_string(o, "author", c->author);
    ty__json_string(o, "description", c->description);
    ty__json_string(o, "plan", c->plan);
    ty__json_string(o, "plan_dir", c->plan_dir);
    ty__json_string(o, "manifest", c->manifest ? c->manifest->path : NULL);
    ty__json_string(o, "case", c->case_name);
    cJSON_AddStringToObject(o, "runner", c->runner);
    add_int(o, "total_instances", (long long)c->total_instances);
    cJSON_AddItemToObject(o, "run_config", run_config_json(c));
    cJSON_AddItemToObject(o, "profiles", profiles_json(c));
    if (c->nstages > 0)
        cJSON_AddItemToObject(o, "stages", stages_json(c));
    for (size_t i = 0; i < c->ngroups; i++)
        cJSON_AddItemToArray(groups, group_json(&c->groups[i]));
    cJSON_AddItemToObject(o, "groups", groups);
    notes = notes_json(c);
    if (cJSON_GetArraySize(notes) > 0)
        cJSON_AddItemToObject(o, "notes", notes);
    else
        cJSON_Delete(notes);
    return o;
}

/*
 * composition_json.c — the resolved composition as JSON, which is what
 * `testyard validate` prints and what a run folder keeps as a record of
 * what ran (see config/config.h).
 *
 * Keys come in a fixed order and every key is always present (null when
 * unset), so the output can be compared byte for byte. Sizes are in bytes,
 * durations in nanoseconds, cpu in millicpus and cpus; 0 memory or cpu
 * means no limit.
 */
#include "config/config.h"

#include "ty_json.h"

#include <cjson/cJSON.h>
#include <stdio.h>

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
    cJSON_AddItemToObject(o, "params", cJSON_Duplicate(g->params, 1));
    return o;
}

cJSON *
composition_to_json(const struct composition *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *groups = cJSON_CreateArray();

    cJSON_AddStringToObject(o, "composition", c->path);
    cJSON_AddStringToObject(o, "name", c->name);
    ty__json_string(o, "author", c->author);
    ty__json_string(o, "description", c->description);
    cJSON_AddStringToObject(o, "plan", c->plan);
    cJSON_AddStringToObject(o, "plan_dir", c->plan_dir);
    cJSON_AddStringToObject(o, "manifest", c->manifest->path);
    cJSON_AddStringToObject(o, "case", c->case_name);
    cJSON_AddStringToObject(o, "runner", c->runner);
    add_int(o, "total_instances", (long long)c->total_instances);
    cJSON_AddItemToObject(o, "run_config", run_config_json(c));
    cJSON_AddItemToObject(o, "profiles", profiles_json(c));
    for (size_t i = 0; i < c->ngroups; i++)
        cJSON_AddItemToArray(groups, group_json(&c->groups[i]));
    cJSON_AddItemToObject(o, "groups", groups);
    return o;
}

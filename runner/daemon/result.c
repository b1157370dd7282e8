/*
 * result.c — what a task's run ended with, from its result.json: the
 * run's outcome and, per group, the outcome counts and the highest
 * memory peak of its instances (the figures `testyard tasks` shows).
 */
#include "daemon/daemon_int.h"

#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESULT_MAX ((size_t)64 << 20)

static double
group_peak(const cJSON *insts, const char *group)
{
    const cJSON *in;
    double peak = -1;

    cJSON_ArrayForEach (in, insts) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(in, "group");
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(in, "memory");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(m, "peak_bytes");

        if (cJSON_IsString(g) && strcmp(g->valuestring, group) == 0 &&
            cJSON_IsNumber(p) && p->valuedouble > peak)
            peak = p->valuedouble;
    }
    return peak;
}

static cJSON *
groups_of(const cJSON *res)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(res, "groups");
    const cJSON *insts = cJSON_GetObjectItemCaseSensitive(res, "instances");
    cJSON *out = cJSON_CreateArray();
    const cJSON *g;

    cJSON_ArrayForEach (g, groups) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(g, "id");
        const cJSON *oc = cJSON_GetObjectItemCaseSensitive(g, "outcomes");
        cJSON *o;
        double peak;

        if (!cJSON_IsString(id))
            continue;
        o = cJSON_CreateObject();
        peak = group_peak(insts, id->valuestring);
        cJSON_AddStringToObject(o, "id", id->valuestring);
        if (peak >= 0)
            cJSON_AddNumberToObject(o, "peak_bytes", peak);
        else
            cJSON_AddNullToObject(o, "peak_bytes");
        cJSON_AddItemToObject(
            o, "outcomes", oc ? cJSON_Duplicate(oc, 1) : cJSON_CreateObject());
        cJSON_AddItemToArray(out, o);
    }
    return out;
}

void
daemon__read_result(struct daemon *d, struct daemon_task *t)
{
    cleanup_free char *path =
        xasprintf("%s/runs/task-%lld/result.json", d->data, (long long)t->id);
    cleanup_free char *text = file_read(path, RESULT_MAX, NULL, NULL);
    cJSON *res = text ? cJSON_Parse(text) : NULL;
    const cJSON *oc = cJSON_GetObjectItemCaseSensitive(res, "outcome");
    cJSON *groups;

    if (res == NULL)
        return;
    if (cJSON_IsString(oc)) {
        free(t->outcome);
        t->outcome = xstrdup(oc->valuestring);
    }
    groups = groups_of(res);
    free(t->groups);
    t->groups = cJSON_PrintUnformatted(groups);
    cJSON_Delete(groups);
    cJSON_Delete(res);
}

/*
 * comp_fixture.c — compositions written by a test and loaded as testyard
 * loads them (see comp_fixture.h).
 */
#include "comp_fixture.h"

#include "backend/backend.h"
#include "base/util.h"
#include "th.h"
#include "th_files.h"

#include <stdio.h>
#include <stdlib.h>

struct composition *
comp_fixture_load(const char *manifest, const char *name, const char *text,
                  struct composition_opts o, struct err *err)
{
    char rel[128];
    char *path;
    struct composition *c;

    if (o.runners == NULL)
        o.runners = backend_runners();
    free(th_write_tmp("plans/ms/manifest.yaml", manifest));
    snprintf(rel, sizeof(rel), "comps/%s", name);
    path = th_write_tmp(rel, text);
    err_clear(err);
    c = composition_load(path, &o, err);
    free(path);
    return c;
}

char *
comp_fixture_json(const char *manifest, const char *name, const char *text)
{
    struct err err;
    struct composition *c = comp_fixture_load(
        manifest, name, text, (struct composition_opts){0}, &err);
    cJSON *j;
    char *s;

    CHECK_MSG(c != NULL, "%s: %s", name, err.msg);
    if (c == NULL)
        return xstrdup("");
    j = composition_to_json(c);
    cJSON_DeleteItemFromObject(j, "composition");
    s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    composition_destroy(&c);
    return s;
}

/*
 * backend_docker_image.c — the image each group's containers run, settled
 * by prepare() before the run creates anything on the engine:
 *
 *   a plan's group        the plan's image, built from its binary
 *                         (builder/builder.h), only when some group runs
 *                         the plan;
 *   run.artifact          that image, as it is;
 *   run.image             the named image, which must be in the engine:
 *                         it is pulled once, bounded, when it is not, and
 *                         a run whose image cannot be had fails (exit 69)
 *                         with nothing started and nothing left behind;
 *   run.command alone     the host program packed with its libraries as a
 *                         plan is (testyard/cmd-<name>:<content hash>, so
 *                         an unchanged program is not packed again), one
 *                         image per distinct program.
 *
 * Groups with profiles.heap: preload also get the heap profiler's files
 * to mount (builder/heaplib.c), found here so that a missing profiler
 * stops the run before it starts.
 */
#include "backend/backend_docker_int.h"

#include "base/log.h"
#include "base/strvec.h"
#include "base/util.h"
#include "builder/builder.h"
#include "config/config.h"
#include "docker/docker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Some group runs the plan's own image. */
static bool
needs_plan_image(const struct composition *c)
{
    for (size_t g = 0; g < c->ngroups; g++)
        if (!composition_group_blackbox(&c->groups[g]) &&
            c->groups[g].artifact == NULL)
            return true;
    return false;
}

static int
build_plan_image(struct dk_backend *k, struct err *err)
{
    struct imagebuild_opts o = {
        .plan = k->cfg.plan_name,
        .binary = k->cfg.binary,
    };
    struct imagebuild_result res = {0};

    if (k->cfg.binary == NULL || k->cfg.plan_name == NULL)
        return err_set(err, EINVAL, "no plan binary to build an image of");
    if (imagebuild_build(k->d, &o, &res, err) < 0)
        return err_prefix(err, "building the image of plan %s",
                          k->cfg.plan_name);
    log_debug("image %s%s", res.tag, res.built ? "" : " (already built)");
    k->image = res.tag;
    res.tag = NULL;
    snprintf(k->base.image, sizeof(k->base.image), "%s", k->image);
    imagebuild_result_release(&res);
    return 0;
}

/* The engine's own words in a client error ("Docker engine: POST
 * /images/create: HTTP 404: <its message>"). */
static const char *
engine_reason(const char *msg)
{
    const char *h = strstr(msg, ": HTTP ");
    const char *colon = h ? strstr(h + 7, ": ") : NULL;

    return colon ? colon + 2 : msg;
}

/* LD_PRELOAD in an image's Config.Env, which the container's own
 * LD_PRELOAD would otherwise hide (the profiler is put in front of it). */
static char *
image_preload(const cJSON *image)
{
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(image, "Config");
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(cfg, "Env");
    const cJSON *e;

    cJSON_ArrayForEach (e, env)
        if (cJSON_IsString(e) &&
            strncmp(e->valuestring, "LD_PRELOAD=", 11) == 0 &&
            e->valuestring[11] != '\0')
            return xstrdup(e->valuestring + 11);
    return NULL;
}

/* The image of a run.image group, pulled once when the engine does not
 * have it. */
static int
check_image(struct dk_backend *k, const struct composition_group *g,
            struct dk_group *dg, struct err *err)
{
    struct err e = {0};
    cJSON *j = docker_image_inspect(k->d, g->image, &e);
    char reason[ERR_MSG_MAX];

    if (j == NULL && e.code == ENOENT) {
        log_info("image %s is not in the engine: pulling it", g->image);
        if (docker_image_pull(k->d, g->image, DK_PULL_MS, NULL, &e) == 0)
            j = docker_image_inspect(k->d, g->image, &e);
        if (j == NULL && !dk__is_gone(k)) {
            snprintf(reason, sizeof(reason), "%s", engine_reason(e.msg));
            err_set(err, ENOENT,
                    "%s: image \"%s\" is not in the engine and could not "
                    "be pulled (%s); build or load it first",
                    g->program_at ? g->program_at : g->id, g->image, reason);
            return err_status(err, EXIT_UNAVAILABLE);
        }
    }
    if (j == NULL) {
        *err = e;
        return err_prefix(err, "image %s", g->image);
    }
    dg->image = xstrdup(g->image);
    dg->preload = image_preload(j);
    cJSON_Delete(j);
    return 0;
}

/* testyard/cmd-<file name>, whose /plan/<file name> is the program. A
 * program that preloads the profiler gets it as an extra file, so that
 * the glibc libraries it needs besides the program's (libm) are in the
 * image. */
static int
pack_program(struct dk_backend *k, const struct composition_group *g,
             char **tag, struct err *err)
{
    const char *path = g->command[0];
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    cleanup_free char *plan = xasprintf("cmd-%s", name);
    const char *extra[] = {k->heap_files ? k->heap_files[0] : NULL, NULL};
    struct imagebuild_opts o = {.plan = plan,
                                .binary = path,
                                .program = name,
                                .extra = g->heap_preload ? extra : NULL};
    struct imagebuild_result res = {0};

    if (imagebuild_build(k->d, &o, &res, err) < 0)
        return err_prefix(err, "packing %s into an image", path);
    log_debug("image %s for %s%s", res.tag, path,
              res.built ? "" : " (already built)");
    *tag = res.tag;
    res.tag = NULL;
    imagebuild_result_release(&res);
    return 0;
}

/* Each distinct host program of the run.command groups without an image
 * (and whether it preloads the profiler), packed once. */
static int
pack_programs(struct dk_backend *k, struct err *err)
{
    const struct composition *c = k->cfg.comp;

    for (size_t i = 0; i < c->ngroups; i++) {
        const struct composition_group *g = &c->groups[i];

        if (g->image != NULL || g->command == NULL)
            continue;
        k->groups[i].packed = true;
        for (size_t j = 0; j < i && k->groups[i].image == NULL; j++)
            if (k->groups[j].packed &&
                c->groups[j].heap_preload == g->heap_preload &&
                strcmp(c->groups[j].command[0], g->command[0]) == 0)
                k->groups[i].image = xstrdup(k->groups[j].image);
        if (k->groups[i].image == NULL &&
            pack_program(k, g, &k->groups[i].image, err) < 0)
            return -1;
    }
    return 0;
}

static int
find_heap_files(struct dk_backend *k, struct err *err)
{
    const struct composition *c = k->cfg.comp;
    cleanup_free char *lib = NULL;
    bool any = false;

    for (size_t i = 0; i < c->ngroups; i++)
        any = any || c->groups[i].heap_preload;
    if (!any)
        return 0;
    if ((lib = planbuild_heap_library(err)) == NULL ||
        (k->heap_files = heaplib_files(lib, err)) == NULL)
        return err_prefix(err, "profiles.heap: preload");
    return 0;
}

int
dk__images_prepare(struct dk_backend *k, struct err *err)
{
    const struct composition *c = k->cfg.comp;

    k->groups = xcalloc(c->ngroups ? c->ngroups : 1, sizeof(*k->groups));
    for (size_t i = 0; i < c->ngroups; i++)
        if (c->groups[i].image != NULL &&
            check_image(k, &c->groups[i], &k->groups[i], err) < 0)
            return -1;
    if (find_heap_files(k, err) < 0 || pack_programs(k, err) < 0)
        return -1;
    return needs_plan_image(c) ? build_plan_image(k, err) : 0;
}

void
dk__images_release(struct dk_backend *k)
{
    for (size_t i = 0; k->groups && i < k->cfg.comp->ngroups; i++) {
        free(k->groups[i].image);
        free(k->groups[i].preload);
    }
    free(k->groups);
    k->groups = NULL;
    strv_free(k->heap_files);
    k->heap_files = NULL;
}

const struct composition_group *
dk__group(const struct dk_backend *k, const struct backend_instance *in,
          const struct dk_group **dg)
{
    const struct composition *c = k->cfg.comp;

    for (size_t i = 0; i < c->ngroups; i++)
        if (strcmp(c->groups[i].id, in->group) == 0) {
            if (dg != NULL)
                *dg = k->groups ? &k->groups[i] : NULL;
            return &c->groups[i];
        }
    if (dg != NULL)
        *dg = NULL;
    return NULL;
}

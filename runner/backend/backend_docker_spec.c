/*
 * backend_docker_spec.c — what local:docker asks the engine for each
 * container: its environment (the instance's, with the paths it sees inside
 * the container), its labels (the run and the coordinator's identity, so
 * `testyard clean` can tell whose it is), its bind mounts, and the
 * HostConfig that makes the group's limits real and the container as
 * small a threat as it can be (its own user, no capabilities, a read-only
 * root, a bounded engine log). A black-box group's program gets the same
 * container; only its image, entrypoint, arguments, working folder and
 * (with profiles.heap: preload) the profiler's mounts differ.
 */
#include "backend/backend_docker_int.h"

#include "backend/backend_ids_int.h"
#include "base/strvec.h"
#include "config/config.h"
#include "backend/dklog_int.h"
#include "docker/docker.h"
#include "base/instlog.h"
#include "base/log.h"
#include "base/run_lock.h"
#include "base/util.h"
#include "builder/builder.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The release board's folder on the host (TESTYARD_SYNC_BOARD in the
 * instance's environment), or NULL. */
static const char *
board_dir(const struct backend_instance *in)
{
    return strv_getenv(in->env, "TESTYARD_SYNC_BOARD");
}

/* Whether the group's run.env sets key: then its value, merged into the
 * instance's environment, is the one the container gets. */
static bool
user_sets(const struct composition_group *g, const char *key)
{
    return g != NULL && composition_group_blackbox(g) &&
           strv_getenv(g->env, key) != NULL;
}

static bool
is_key(const char *kv, const char *key)
{
    size_t n = strlen(key);

    return strncmp(kv, key, n) == 0 && kv[n] == '=';
}

/* Whether the instance's variable kv goes to the container as it is: not
 * when the container has its own value for it (its paths, the profiler's
 * LD_PRELOAD), unless run.env set it (HOME, PATH). */
static bool
pass_on(const struct composition_group *g, const char *kv, bool preload)
{
    static const char *const paths[] = {"TEST_OUTPUTS_PATH", "TEST_TEMP_PATH",
                                        "TESTYARD_SYNC_BOARD"};
    static const char *const users[] = {"HOME", "PATH"};

    for (size_t i = 0; i < ARRAY_LEN(paths); i++)
        if (is_key(kv, paths[i]))
            return false;
    for (size_t i = 0; i < ARRAY_LEN(users); i++)
        if (is_key(kv, users[i]))
            return user_sets(g, users[i]);
    return !(preload && is_key(kv, "LD_PRELOAD"));
}

/* LD_PRELOAD with the profiler first, then what the environment (run.env
 * or the coordinator's) or else the image preloaded. */
static void
push_preload(struct strvec *env, const struct backend_instance *in,
             const struct dk_group *dg)
{
    const char *more = strv_getenv(in->env, "LD_PRELOAD");

    if (more == NULL || more[0] == '\0')
        more = dg ? dg->preload : NULL;
    strvec_pushf(env, "LD_PRELOAD=" HEAPLIB_MOUNT_DIR "/" HEAPLIB_NAME "%s%s",
                 more ? ":" : "", more ? more : "");
}

/* The host environment with container paths for outputs, scratch and the
 * release board. A plan's (and a packed program's) PATH is the image's
 * folders; an image testyard did not make keeps its own ENV (PATH
 * included) for everything testyard does not set. run.env wins over both,
 * HOME and PATH too. */
char **
dk__container_env(const struct dk_backend *k, const struct backend_instance *in)
{
    const struct dk_group *dg = NULL;
    const struct composition_group *g = dk__group(k, in, &dg);
    bool foreign = g != NULL && g->image != NULL;
    bool preload = in->heap_preload && k->heap_files != NULL;
    struct strvec env = {0};

    for (char *const *e = in->env; *e != NULL; e++)
        if (pass_on(g, *e, preload))
            strvec_push(&env, *e);
    if (board_dir(in) != NULL)
        strvec_push(&env, "TESTYARD_SYNC_BOARD=" DK_BOARD_PATH);
    strvec_push(&env, "TEST_OUTPUTS_PATH=/outputs");
    strvec_push(&env, "TEST_TEMP_PATH=/temp");
    if (!user_sets(g, "HOME"))
        strvec_push(&env, "HOME=/temp");
    if (!foreign && !user_sets(g, "PATH"))
        strvec_push(&env, "PATH=/plan:/usr/bin:/bin");
    if (preload)
        push_preload(&env, in, dg);
    return strvec_detach(&env);
}

/* The engine's own log of the container (HostConfig.LogConfig): json-file
 * in two files of half the log limit each (at least DK_ENGINE_LOG_MIN),
 * so it stays bounded however much the instance writes. Returns cfg. */
static cJSON *
log_config(cJSON *cfg, uint64_t limit)
{
    cJSON *hc = cJSON_GetObjectItemCaseSensitive(cfg, "HostConfig");
    cJSON *lc = cJSON_AddObjectToObject(hc, "LogConfig");
    cJSON *opts;
    uint64_t half = (limit ? limit : INSTLOG_DEFAULT_LIMIT) / 2;
    char size[32];

    if (half < DK_ENGINE_LOG_MIN)
        half = DK_ENGINE_LOG_MIN;
    snprintf(size, sizeof(size), "%llu", (unsigned long long)half);
    cJSON_AddStringToObject(lc, "Type", "json-file");
    opts = cJSON_AddObjectToObject(lc, "Config");
    cJSON_AddStringToObject(opts, "max-size", size);
    cJSON_AddStringToObject(opts, "max-file", "2");
    return cfg;
}

/* The program of a black-box group: the image (run.image, or the packed
 * program's), its Entrypoint and Cmd (NULL: the image's), its folder. */
static void
blackbox_spec(const struct composition_group *g, const struct dk_group *dg,
              struct docker_container_spec *s, struct strvec *cmd)
{
    s->image = dg->image;
    s->working_dir = g->workdir;
    if (dg->packed) {
        /* the image's entrypoint is the program: argv[1..] + args */
        for (size_t i = 1; g->command[i] != NULL; i++)
            strvec_push(cmd, g->command[i]);
        if (s->working_dir == NULL)
            s->working_dir = DK_PACKED_WORKDIR;
    } else {
        s->entrypoint = (const char *const *)g->command;
    }
    for (size_t i = 0; g->args != NULL && g->args[i] != NULL; i++)
        strvec_push(cmd, g->args[i]);
    if (strvec_len(cmd) > 0)
        s->cmd = (const char *const *)cmd->v;
}

cJSON *
dk__container_config(const struct dk_backend *k,
                     const struct backend_instance *in, char **env,
                     char **labels, char **binds)
{
    const struct composition *c = k->cfg.comp;
    const struct dk_group *dg = NULL;
    const struct composition_group *g = dk__group(k, in, &dg);
    struct strvec cmd = {0};
    char user[32];
    int uid;
    struct docker_container_spec s = {
        .image = in->artifact ? in->artifact : k->image,
        .env = (const char *const *)env,
        .labels = (const char *const *)labels,
        .binds = (const char *const *)binds,
        .network_mode = k->network ? k->network : "host",
        .memory = (int64_t)in->memory,
        .memory_swap = in->memory ? (int64_t)in->memory : 0,
        .nano_cpus = in->millicpu * 1000000,
        .pids_limit = DK_PIDS_LIMIT,
        .no_new_privileges = true,
        .cap_drop_all = true,
        .init = true,
        .user = backend__ids_user(&k->base, c, in, &uid, user, sizeof(user)),
        .readonly_rootfs = true,
        .tmpfs = (const char *const[]){DK_TMPFS, NULL},
    };
    cJSON *cfg;

    if (g != NULL && dg != NULL && dg->image != NULL)
        blackbox_spec(g, dg, &s, &cmd);
    cfg = log_config(docker_container_config(&s), in->log_limit);
    strvec_release(&cmd);
    return cfg;
}

/* The run, the instance and the coordinator's identity, which `clean`
 * reads to tell a live run from an orphan. */
char **
dk__make_labels(const struct dk_backend *k, const struct backend_instance *in)
{
    char **v = xcalloc(6 + RUN_LABELS_N, sizeof(char *));

    v[0] = xasprintf("testyard.run=%s", k->cfg.run_id);
    v[1] =
        xasprintf("testyard.plan=%s", k->cfg.plan_name ? k->cfg.plan_name : "");
    v[2] = xasprintf("testyard.group=%s", in->group);
    v[3] = xasprintf("testyard.index=%d", in->group_index);
    v[4] = xasprintf("testyard.instance=%d", in->index);
    (void)run_identity_labels(&v[5], NULL);
    return v;
}

/* The instance's folders, the release board and, for a group that
 * preloads the heap profiler, each of the profiler's files read-only
 * under HEAPLIB_MOUNT_DIR (the image's own files are never replaced). */
char **
dk__make_binds(const struct dk_backend *k, const struct backend_instance *in)
{
    struct strvec v = {0};

    strvec_pushf(&v, "%s:/outputs", in->outdir);
    strvec_pushf(&v, "%s:/temp", in->tempdir);
    if (board_dir(in) != NULL)
        strvec_pushf(&v, "%s:" DK_BOARD_PATH ":ro", board_dir(in));
    for (size_t i = 0;
         in->heap_preload && k->heap_files && k->heap_files[i] != NULL; i++) {
        const char *base = strrchr(k->heap_files[i], '/');

        strvec_pushf(&v, "%s:" HEAPLIB_MOUNT_DIR "/%s:ro", k->heap_files[i],
                     base ? base + 1 : k->heap_files[i]);
    }
    return strvec_detach(&v);
}

/*
 * backend_docker_spec.c — what local:docker asks the engine for each
 * container: its environment (the instance's, with the paths it sees inside
 * the container), its labels (the run and the coordinator's identity, so
 * `testyard clean` can tell whose it is), its bind mounts, and the
 * HostConfig that makes the group's limits real and the container as
 * small a threat as it can be (its own user, no capabilities, a read-only
 * root, a bounded engine log).
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

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *
env_override(const char *kv)
{
    static const char *const keys[] = {
        "TEST_OUTPUTS_PATH=", "TEST_TEMP_PATH=", "HOME=", "PATH=",
        "TESTYARD_SYNC_BOARD="};

    for (size_t i = 0; i < ARRAY_LEN(keys); i++)
        if (strncmp(kv, keys[i], strlen(keys[i])) == 0)
            return keys[i];
    return NULL;
}

/* The release board's folder on the host (TESTYARD_SYNC_BOARD in the
 * instance's environment), or NULL. */
static const char *
board_dir(const struct backend_instance *in)
{
    static const char key[] = "TESTYARD_SYNC_BOARD=";

    for (char *const *e = in->env; *e != NULL; e++)
        if (strncmp(*e, key, sizeof(key) - 1) == 0)
            return *e + sizeof(key) - 1;
    return NULL;
}

/* The host environment with container paths for outputs, scratch and the
 * release board. */
char **
dk__container_env(const struct backend_instance *in)
{
    struct strvec env = {0};

    for (char *const *e = in->env; *e != NULL; e++)
        if (env_override(*e) == NULL)
            strvec_push(&env, *e);
    if (board_dir(in) != NULL)
        strvec_push(&env, "TESTYARD_SYNC_BOARD=" DK_BOARD_PATH);
    strvec_push(&env, "TEST_OUTPUTS_PATH=/outputs");
    strvec_push(&env, "TEST_TEMP_PATH=/temp");
    strvec_push(&env, "HOME=/temp");
    strvec_push(&env, "PATH=/plan:/usr/bin:/bin");
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

cJSON *
dk__container_config(const struct dk_backend *k,
                     const struct backend_instance *in, char **env,
                     char **labels, char **binds)
{
    const struct composition *c = k->cfg.comp;
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

    return log_config(docker_container_config(&s), in->log_limit);
}

/* The run, the instance and the coordinator's identity, which `clean`
 * reads to tell a live run from an orphan. */
char **
dk__make_labels(const struct dk_backend *k, const struct backend_instance *in)
{
    char **v = xcalloc(6 + RUN_LABELS_N, sizeof(char *));

    v[0] = xasprintf("testyard.run=%s", k->cfg.run_id);
    v[1] = xasprintf("testyard.plan=%s", k->cfg.plan_name);
    v[2] = xasprintf("testyard.group=%s", in->group);
    v[3] = xasprintf("testyard.index=%d", in->group_index);
    v[4] = xasprintf("testyard.instance=%d", in->index);
    (void)run_identity_labels(&v[5], NULL);
    return v;
}

char **
dk__make_binds(const struct backend_instance *in)
{
    char **v = xcalloc(4, sizeof(char *));

    v[0] = xasprintf("%s:/outputs", in->outdir);
    v[1] = xasprintf("%s:/temp", in->tempdir);
    if (board_dir(in) != NULL)
        v[2] = xasprintf("%s:" DK_BOARD_PATH ":ro", board_dir(in));
    return v;
}

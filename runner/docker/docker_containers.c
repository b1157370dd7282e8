/*
 * docker_containers.c — container endpoints of the Docker client: the
 * create body from a struct docker_container_spec, create, start, wait,
 * inspect (raw and as a struct docker_state), kill, pause, remove and list.
 * Logs are in docker_logs.c.
 */
#include "docker/docker_int.h"

#include "base/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
add_strings(cJSON *obj, const char *key, const char *const *list)
{
    cJSON *arr;

    if (list == NULL)
        return;
    arr = cJSON_AddArrayToObject(obj, key);
    for (size_t i = 0; list[i]; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(list[i]));
}

static void
add_string(cJSON *obj, const char *key, const char *s)
{
    if (s != NULL)
        cJSON_AddStringToObject(obj, key, s);
}

static void
add_int(cJSON *obj, const char *key, int64_t v)
{
    if (v != 0)
        cJSON_AddNumberToObject(obj, key, (double)v);
}

/* {"/tmp": "size=64m,..."} from "/tmp:size=64m,..." entries. */
static void
add_tmpfs(cJSON *obj, const char *const *list)
{
    cJSON *m;

    if (list == NULL)
        return;
    m = cJSON_AddObjectToObject(obj, "Tmpfs");
    for (size_t i = 0; list[i]; i++) {
        const char *colon = strchr(list[i], ':');
        cleanup_free char *path =
            colon ? xstrndup(list[i], (size_t)(colon - list[i]))
                  : xstrdup(list[i]);

        cJSON_AddStringToObject(m, path, colon ? colon + 1 : "");
    }
}

static cJSON *
host_config(const struct docker_container_spec *s)
{
    static const char *const nnp[] = {"no-new-privileges", NULL};
    static const char *const all[] = {"ALL", NULL};
    cJSON *hc = cJSON_CreateObject();

    add_strings(hc, "Binds", s->binds);
    add_string(hc, "NetworkMode", s->network_mode);
    add_int(hc, "Memory", s->memory);
    add_int(hc, "MemorySwap", s->memory_swap);
    add_int(hc, "NanoCpus", s->nano_cpus);
    add_int(hc, "PidsLimit", s->pids_limit);
    if (s->no_new_privileges)
        add_strings(hc, "SecurityOpt", nnp);
    if (s->cap_drop_all)
        add_strings(hc, "CapDrop", all);
    add_strings(hc, "CapAdd", s->cap_add);
    add_tmpfs(hc, s->tmpfs);
    if (s->readonly_rootfs)
        cJSON_AddBoolToObject(hc, "ReadonlyRootfs", 1);
    if (s->init)
        cJSON_AddBoolToObject(hc, "Init", 1);
    return hc;
}

cJSON *
docker_container_config(const struct docker_container_spec *s)
{
    cJSON *c = cJSON_CreateObject();

    add_string(c, "Image", s->image);
    add_strings(c, "Entrypoint", s->entrypoint);
    add_strings(c, "Cmd", s->cmd);
    add_strings(c, "Env", s->env);
    if (s->labels)
        cJSON_AddItemToObject(c, "Labels", docker__labels_object(s->labels));
    add_string(c, "User", s->user);
    add_string(c, "WorkingDir", s->working_dir);
    cJSON_AddItemToObject(c, "HostConfig", host_config(s));
    return c;
}

int
docker_container_create(struct docker *d, const char *name, const cJSON *config,
                        char **id_out, struct err *err)
{
    cleanup_free char *ename = name ? docker__esc_query(name) : NULL;
    cleanup_free char *path =
        name ? xasprintf("/containers/create?name=%s", ename)
             : xstrdup("/containers/create");
    cJSON *j = docker__call_json(d, "POST", path, config, err);
    const cJSON *warn, *warnings;
    const char *id;

    if (j == NULL)
        return -1;
    if ((id = docker__str(j, "Id")) == NULL) {
        cJSON_Delete(j);
        return err_set(err, EPROTO, "Docker engine: create gave no Id");
    }
    warnings = cJSON_GetObjectItemCaseSensitive(j, "Warnings");
    cJSON_ArrayForEach (warn, warnings) {
        if (cJSON_IsString(warn))
            log_debug("docker: create %s: %s", name ? name : id,
                      warn->valuestring);
    }
    if (id_out)
        *id_out = xstrdup(id);
    cJSON_Delete(j);
    return 0;
}

int
docker_container_start(struct docker *d, const char *id, struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path = xasprintf("/containers/%s/start", eid);

    return docker__call_simple(d, "POST", path, NULL, err);
}

static const char *const wait_conditions[] = {
    [DOCKER_WAIT_NOT_RUNNING] = "not-running",
    [DOCKER_WAIT_NEXT_EXIT] = "next-exit",
    [DOCKER_WAIT_REMOVED] = "removed",
};

/* The answer of /wait: {"StatusCode": n, "Error": {"Message": "..."}}. */
static int
wait_result(const cJSON *j, const char *id, int *status_out, struct err *err)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(j, "StatusCode");
    const char *msg =
        docker__str(cJSON_GetObjectItemCaseSensitive(j, "Error"), "Message");

    if (msg && msg[0])
        return err_set(err, EIO, "waiting for container %s: %s", id, msg);
    if (!cJSON_IsNumber(code))
        return err_set(err, EPROTO,
                       "waiting for container %s: no "
                       "StatusCode in the answer",
                       id);
    if (status_out)
        *status_out = code->valueint;
    return 0;
}

int
docker_container_wait(struct docker *d, const char *id, enum docker_wait cond,
                      struct docker_cancel *c, int *status_out, struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path = xasprintf("/containers/%s/wait?condition=%s", eid,
                                        wait_conditions[cond]);
    struct docker_req r = {.method = "POST",
                           .path = path,
                           .body_fd = -1,
                           .stream = true,
                           .cancel = c};
    struct docker_resp resp;
    cJSON *j = NULL;
    int rc = docker__call(d, &r, &resp, err);

    if (rc == 0) {
        j = cJSON_ParseWithLength(resp.body.buf ? resp.body.buf : "",
                                  resp.body.len);
        rc = wait_result(j, id, status_out, err);
    }
    cJSON_Delete(j);
    docker__resp_release(&resp);
    return rc;
}

cJSON *
docker_container_inspect(struct docker *d, const char *id, struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path = xasprintf("/containers/%s/json", eid);

    return docker__call_json(d, "GET", path, NULL, err);
}

static void
fill_state(const cJSON *state, struct docker_state *st)
{
    const cJSON *v;

    memset(st, 0, sizeof(*st));
    snprintf(st->status, sizeof(st->status), "%s",
             docker__str(state, "Status") ? docker__str(state, "Status") : "");
    snprintf(st->error, sizeof(st->error), "%s",
             docker__str(state, "Error") ? docker__str(state, "Error") : "");
    st->running =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(state, "Running"));
    st->oom_killed =
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(state, "OOMKilled"));
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(state, "ExitCode")))
        st->exit_code = v->valueint;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(state, "Pid")))
        st->pid = v->valueint;
    st->started_ns = time_parse_rfc3339(docker__str(state, "StartedAt"));
    st->finished_ns = time_parse_rfc3339(docker__str(state, "FinishedAt"));
}

int
docker_container_state(struct docker *d, const char *id,
                       struct docker_state *st, struct err *err)
{
    cJSON *j = docker_container_inspect(d, id, err);
    const cJSON *state;

    if (j == NULL)
        return -1;
    state = cJSON_GetObjectItemCaseSensitive(j, "State");
    if (!cJSON_IsObject(state)) {
        cJSON_Delete(j);
        return err_set(err, EPROTO, "inspect of %s has no State", id);
    }
    fill_state(state, st);
    cJSON_Delete(j);
    return 0;
}

int
docker_container_kill(struct docker *d, const char *id, const char *signal,
                      struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *esig = docker__esc_query(signal ? signal : "SIGKILL");
    cleanup_free char *path =
        xasprintf("/containers/%s/kill?signal=%s", eid, esig);
    /* The orchestrator kills from its loop: a hung engine may hold it
     * only briefly. */
    struct docker_req r = {.method = "POST",
                           .path = path,
                           .body_fd = -1,
                           .timeout_ms = DOCKER_KILL_TIMEOUT_MS};
    struct docker_resp resp;
    int rc = docker__call(d, &r, &resp, err);

    docker__resp_release(&resp);
    return rc;
}

int
docker_container_pause(struct docker *d, const char *id, bool pause,
                       struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path =
        xasprintf("/containers/%s/%s", eid, pause ? "pause" : "unpause");

    return docker__call_simple(d, "POST", path, NULL, err);
}

int
docker_container_remove(struct docker *d, const char *id, bool force,
                        struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path =
        xasprintf("/containers/%s?v=1%s", eid, force ? "&force=1" : "");

    return docker__call_simple(d, "DELETE", path, NULL, err);
}

cJSON *
docker_container_list(struct docker *d, const char *const *labels, bool all,
                      struct err *err)
{
    cleanup_free char *f = docker__filters(labels, NULL, NULL);
    cleanup_free char *path =
        xasprintf("/containers/json?all=%d&filters=%s", all ? 1 : 0, f);
    cJSON *j = docker__call_json(d, "GET", path, NULL, err);

    if (j != NULL && !cJSON_IsArray(j)) {
        cJSON_Delete(j);
        err_set(err, EPROTO, "Docker engine: container list is not an array");
        return NULL;
    }
    return j;
}

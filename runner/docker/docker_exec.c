/*
 * docker_exec.c — exec endpoints of the Docker client: a command run in a
 * running container (a readiness probe), started detached and then
 * inspected until it ends, so no stream is held open while it runs.
 */
#include "docker/docker_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
docker_exec_create(struct docker *d, const char *id, const char *const *argv,
                   const char *user, char **exec_id, struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path = xasprintf("/containers/%s/exec", eid);
    cJSON *body = cJSON_CreateObject(), *cmd, *j;
    const char *xid;

    cJSON_AddBoolToObject(body, "AttachStdin", 0);
    cJSON_AddBoolToObject(body, "AttachStdout", 0);
    cJSON_AddBoolToObject(body, "AttachStderr", 0);
    cmd = cJSON_AddArrayToObject(body, "Cmd");
    for (size_t i = 0; argv[i] != NULL; i++)
        cJSON_AddItemToArray(cmd, cJSON_CreateString(argv[i]));
    if (user != NULL)
        cJSON_AddStringToObject(body, "User", user);
    j = docker__call_json(d, "POST", path, body, err);
    cJSON_Delete(body);
    if (j == NULL)
        return -1;
    if ((xid = docker__str(j, "Id")) == NULL) {
        cJSON_Delete(j);
        return err_set(err, EPROTO, "Docker engine: exec gave no Id");
    }
    *exec_id = xstrdup(xid);
    cJSON_Delete(j);
    return 0;
}

int
docker_exec_start(struct docker *d, const char *exec_id, struct err *err)
{
    cleanup_free char *eid = docker__esc_path(exec_id);
    cleanup_free char *path = xasprintf("/exec/%s/start", eid);
    cJSON *body = cJSON_CreateObject();
    int rc;

    cJSON_AddBoolToObject(body, "Detach", 1);
    cJSON_AddBoolToObject(body, "Tty", 0);
    rc = docker__call_simple(d, "POST", path, body, err);
    cJSON_Delete(body);
    return rc;
}

int
docker_exec_inspect(struct docker *d, const char *exec_id,
                    struct docker_exec_state *st, struct err *err)
{
    cleanup_free char *eid = docker__esc_path(exec_id);
    cleanup_free char *path = xasprintf("/exec/%s/json", eid);
    cJSON *j = docker__call_json(d, "GET", path, NULL, err);
    const cJSON *v;

    if (j == NULL)
        return -1;
    memset(st, 0, sizeof(*st));
    /* ExitCode is null until it has run. */
    v = cJSON_GetObjectItemCaseSensitive(j, "ExitCode");
    st->ended = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "Running")) &&
                cJSON_IsNumber(v);
    if (cJSON_IsNumber(v))
        st->exit_code = v->valueint;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "Pid")))
        st->pid = v->valueint;
    cJSON_Delete(j);
    return 0;
}

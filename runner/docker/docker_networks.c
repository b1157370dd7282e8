/*
 * docker_networks.c — network endpoints of the Docker client: the per-run
 * bridge network (an option of local runs) is created, listed by label
 * and removed here.
 */
#include "docker/docker_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int
docker_network_create(struct docker *d, const char *name,
                      const char *const *labels, char **id_out, struct err *err)
{
    cJSON *body = cJSON_CreateObject();
    const char *id;
    cJSON *j;

    cJSON_AddStringToObject(body, "Name", name);
    cJSON_AddStringToObject(body, "Driver", "bridge");
    cJSON_AddBoolToObject(body, "CheckDuplicate", 1);
    cJSON_AddItemToObject(body, "Labels", docker__labels_object(labels));
    j = docker__call_json(d, "POST", "/networks/create", body, err);
    cJSON_Delete(body);
    if (j == NULL)
        return -1;
    if ((id = docker__str(j, "Id")) == NULL) {
        cJSON_Delete(j);
        return err_set(err, EPROTO, "network create of %s gave no Id", name);
    }
    if (id_out)
        *id_out = xstrdup(id);
    cJSON_Delete(j);
    return 0;
}

cJSON *
docker_network_inspect(struct docker *d, const char *id, struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path = xasprintf("/networks/%s", eid);

    return docker__call_json(d, "GET", path, NULL, err);
}

int
docker_network_remove(struct docker *d, const char *id, struct err *err)
{
    cleanup_free char *eid = docker__esc_path(id);
    cleanup_free char *path = xasprintf("/networks/%s", eid);

    return docker__call_simple(d, "DELETE", path, NULL, err);
}

cJSON *
docker_network_list(struct docker *d, const char *const *labels,
                    struct err *err)
{
    cleanup_free char *f = docker__filters(labels, NULL, NULL);
    cleanup_free char *path = xasprintf("/networks?filters=%s", f);
    cJSON *j = docker__call_json(d, "GET", path, NULL, err);

    if (j != NULL && !cJSON_IsArray(j)) {
        cJSON_Delete(j);
        err_set(err, EPROTO, "Docker engine: network list is not an array");
        return NULL;
    }
    return j;
}

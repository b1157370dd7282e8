/*
 * backend_docker.c — local:docker (being written).
 */
#include "backend.h"

#include <errno.h>

struct backend *
backend_docker_new(const struct backend_config *cfg, struct err *err)
{
    (void)cfg;
    err_status(err, EXIT_UNAVAILABLE);
    return err_set(err, ENOSYS, "local:docker is not in this build yet"),
           NULL;
}

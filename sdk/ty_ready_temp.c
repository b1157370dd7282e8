/*
 * ty_ready_temp.c — temporary stand-ins for ty_ready and ty_stopping, so
 * that plans calling them link before the SDK's own definitions land:
 * ty_ready sends the event "ready" once per process, ty_stopping is always
 * false (a SIGTERM ends the process as it did before). To be replaced by
 * the real ones, and this file removed.
 */
#include "ty_int.h"

#include <stdatomic.h>

static atomic_bool ready_sent;

void
ty_ready(struct ty *ty)
{
    cJSON *ev;

    if (atomic_exchange(&ready_sent, true))
        return;
    ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "type", "ready");
    ty__event(ty, ev);
}

bool
ty_stopping(struct ty *ty)
{
    (void)ty;
    return false;
}

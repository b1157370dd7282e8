/* temporary: replaced by the sync service's restarts */
#include "sync/sync.h"
void
syncsvc_instance_restarting(struct syncsvc *svc, int instance)
{
    (void)svc;
    (void)instance;
}

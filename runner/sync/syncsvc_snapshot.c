/*
 * syncsvc_snapshot.c — snapshot waits: how the coordinator asks an
 * instance for a heap snapshot before it is OOM-killed.
 *
 * The SDK keeps one snapshot_wait pending while it is connected; the
 * service holds it (one per instance: a second is busy) until the
 * orchestrator's memory monitor sees the instance near its limit and calls
 * syncsvc_snapshot_request, which answers it ok there and then. A wait also
 * ends with timeout at its timeout_ms, and with canceled when its instance
 * ends or the run does (syncsvc_cancel_all); from then on new ones are
 * answered canceled at once, so a client that asks again after canceled
 * learns at once that nothing will come. The monitor and the service run on
 * the orchestrator's thread, one after the other: nothing here locks.
 */
#include "sync/syncsvc_int.h"

#include "base/log.h"

#include <errno.h>
#include <string.h>

static void
snapshot_end(struct syncsvc *svc, struct svc_waiter *w)
{
    svc->inst[w->inst].snapshot = NULL;
    svc__waiter_free(svc, w);
}

void
svc__op_snapshot_wait(struct syncsvc *svc, const struct svc_ctx *c,
                      const struct ty_wire_req *req)
{
    struct svc_inst *in = &svc->inst[c->inst];
    char name[300];
    struct svc_waiter *w;

    svc__inst_name(svc, c->inst, name, sizeof(name));
    if (svc->snapshots_closed || !in->alive) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_CANCELED,
                          "%s: the run is ending: no snapshot will be asked",
                          name);
        return;
    }
    if (in->snapshot != NULL) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_BUSY,
                          "%s already has a snapshot_wait pending", name);
        return;
    }
    if (req->timeout_ms == 0) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_TIMEOUT,
                          "no snapshot asked of %s", name);
        return;
    }
    w = svc__waiter_new(svc, c, req->id, req->timeout_ms, SVC_T_SNAPSHOT);
    if (w != NULL)
        in->snapshot = w;
}

void
svc__snapshot_timeout(struct syncsvc *svc, struct svc_waiter *w)
{
    char name[300];

    svc__reply_status(svc, &w->peer, w->id, TY_WIRE_TIMEOUT,
                      "no snapshot asked of %s before the deadline",
                      svc__inst_name(svc, w->inst, name, sizeof(name)));
    snapshot_end(svc, w);
}

void
svc__snapshot_cancel(struct syncsvc *svc, int inst, const char *why)
{
    struct svc_waiter *w = svc->inst[inst].snapshot;

    if (w == NULL)
        return;
    svc__reply_status(svc, &w->peer, w->id, TY_WIRE_CANCELED, "%s", why);
    snapshot_end(svc, w);
}

void
svc__snapshot_drop(struct syncsvc *svc, int inst)
{
    if (svc->inst[inst].snapshot != NULL)
        snapshot_end(svc, svc->inst[inst].snapshot);
}

void
svc__snapshot_conn_closed(struct syncsvc *svc, int inst,
                          const unsigned char *id, size_t len)
{
    struct svc_waiter *w = svc->inst[inst].snapshot;

    if (w != NULL && w->peer.len == len && memcmp(w->peer.id, id, len) == 0)
        snapshot_end(svc, w);
}

bool
syncsvc_snapshot_request(struct syncsvc *svc, int instance)
{
    struct svc_waiter *w;
    struct ty_wire_resp r;
    char json[128];
    size_t len;
    bool sent;

    if (instance < 0 || (size_t)instance >= svc->ninst ||
        (w = svc->inst[instance].snapshot) == NULL)
        return false;
    /* Not svc__send: a peer that is gone means the instance was not
     * asked, and the caller may then try a signal. */
    ty__wire_resp_init(&r, w->id);
    len = ty__wire_resp_print(&r, json, sizeof(json));
    sent = ty__wire_send(svc->sock, w->peer.id, w->peer.len, json, len, NULL, 0,
                         false, ZMQ_DONTWAIT) == 0;
    if (!sent)
        log_debug("sync service: snapshot request %lld: %s", (long long)w->id,
                  zmq_strerror(errno));
    snapshot_end(svc, w);
    return sent;
}

void
svc__snapshot_close_all(struct syncsvc *svc, const char *why)
{
    svc->snapshots_closed = true;
    for (size_t i = 0; i < svc->ninst; i++)
        svc__snapshot_cancel(svc, (int)i, why);
}

/*
 * syncsvc_conn.c — the connections that said a valid hello, and the
 * slots they hold.
 *
 * An instance may hold SVC_MAX_PEERS connections. A connection takes a
 * slot with its first valid hello and gives it back when it closes, so
 * connections that came and went never keep an instance out. libzmq's
 * ROUTER says nothing when a peer goes (ZMQ_ROUTER_NOTIFY is a draft API
 * that Debian's libzmq 4.3.4 leaves out), so the service watches its
 * socket's monitor: ZMQ_EVENT_DISCONNECTED names the descriptor of the
 * connection that closed, and every message says which descriptor it came
 * in on (ZMQ_SRCFD). A descriptor is only reused after its connection's
 * DISCONNECTED was queued, so before a new connection takes a descriptor
 * an older one still holds, the queued events are read first.
 *
 * The monitor's pipe has no high-water mark: libzmq's I/O thread blocks
 * when it cannot queue an event, which would stall every connection.
 * syncsvc_handle reads it on every call (the orchestrator's loop calls it
 * at least every tick), so it holds at most a tick's disconnections.
 */
#include "sync/syncsvc_int.h"

#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MONITOR_EP "inproc://syncsvc-monitor"

int
svc__conn_open(struct syncsvc *svc, struct err *err)
{
    int hwm = 0, linger = 0;

    if (zmq_socket_monitor(svc->sock, MONITOR_EP, ZMQ_EVENT_DISCONNECTED) < 0)
        return err_set(err, errno, "sync service: socket monitor: %s",
                       zmq_strerror(errno));
    svc->monitor = zmq_socket(svc->ctx, ZMQ_PAIR);
    if (svc->monitor == NULL ||
        zmq_setsockopt(svc->monitor, ZMQ_RCVHWM, &hwm, sizeof(hwm)) < 0 ||
        zmq_setsockopt(svc->monitor, ZMQ_LINGER, &linger, sizeof(linger)) < 0 ||
        zmq_connect(svc->monitor, MONITOR_EP) < 0)
        return err_set(err, errno, "sync service: socket monitor: %s",
                       zmq_strerror(errno));
    return 0;
}

static void
conn_free(void *value)
{
    free(value);
}

void
svc__conn_close(struct syncsvc *svc)
{
    if (svc->monitor != NULL)
        zmq_close(svc->monitor);
    svc->monitor = NULL;
    svc__map_release(&svc->peers, conn_free);
    free(svc->by_fd);
    svc->by_fd = NULL;
    svc->nfd = 0;
}

struct svc_conn *
svc__conn_find(const struct syncsvc *svc, const struct svc_peer *peer)
{
    return svc__map_get(&svc->peers, peer->id, peer->len);
}

static void
conn_drop(struct syncsvc *svc, struct svc_conn *cn)
{
    if (cn->fd >= 0 && (size_t)cn->fd < svc->nfd && svc->by_fd[cn->fd] == cn)
        svc->by_fd[cn->fd] = NULL;
    if (!cn->stale) {
        svc->inst[cn->inst].npeers--;
        svc__snapshot_conn_closed(svc, cn->inst, cn->id, cn->len);
    }
    svc__map_del(&svc->peers, cn->id, cn->len);
    free(cn);
}

struct restart_walk {
    struct syncsvc *svc;
    int inst;
};

static void
conn_restarting(void *value, void *arg)
{
    struct restart_walk *rw = arg;
    struct svc_conn *cn = value;

    if (cn->inst != rw->inst || cn->stale)
        return;
    cn->stale = true;
    rw->svc->inst[cn->inst].npeers--;
}

/* The connections stay on record, by routing id and descriptor, until
 * their DISCONNECTED (or a new connection on their descriptor or with
 * their routing id): what they still send is refused, not taken for a
 * new process's hello. */
void
svc__conn_restarting(struct syncsvc *svc, int inst)
{
    struct restart_walk rw = {svc, inst};

    svc__map_each(&svc->peers, conn_restarting, &rw);
}

/* Read one monitor event; false when none is queued. */
static bool
read_event(struct syncsvc *svc, uint16_t *event, uint32_t *value)
{
    zmq_msg_t m;
    bool ok;

    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, svc->monitor, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return false;
    }
    ok = zmq_msg_size(&m) == 6;
    if (ok) {
        memcpy(event, zmq_msg_data(&m), 2);
        memcpy(value, (char *)zmq_msg_data(&m) + 2, 4);
    }
    while (zmq_msg_more(&m)) { /* the endpoint frame */
        zmq_msg_close(&m);
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, svc->monitor, ZMQ_DONTWAIT) < 0)
            break;
    }
    zmq_msg_close(&m);
    if (!ok)
        *event = 0;
    return true;
}

void
svc__conn_poll(struct syncsvc *svc)
{
    uint16_t event = 0;
    uint32_t fd = 0;

    if (svc->monitor == NULL)
        return;
    while (read_event(svc, &event, &fd)) {
        if (event == ZMQ_EVENT_DISCONNECTED && fd < svc->nfd &&
            svc->by_fd[fd] != NULL)
            conn_drop(svc, svc->by_fd[fd]);
    }
}

struct svc_conn *
svc__conn_of(struct syncsvc *svc, const struct svc_ctx *c)
{
    struct svc_conn *cn = svc__conn_find(svc, &c->peer);
    int fd;

    if (cn == NULL || cn->fd < 0 || c->frame == NULL ||
        (fd = zmq_msg_get(c->frame, ZMQ_SRCFD)) < 0 || fd == cn->fd)
        return cn;
    /* The routing id's connection closed and a new one took the id: the
     * new one has not said hello. */
    conn_drop(svc, cn);
    return NULL;
}

/* Note that cn came in on descriptor fd (-1: unknown). A connection
 * still on record there has closed: its DISCONNECTED is read first, and
 * it is dropped even if that event was lost. */
static void
conn_bind_fd(struct syncsvc *svc, struct svc_conn *cn, int fd)
{
    cn->fd = fd;
    if (fd < 0)
        return;
    if ((size_t)fd < svc->nfd && svc->by_fd[fd] != NULL &&
        svc->by_fd[fd] != cn) {
        svc__conn_poll(svc);
        if (svc->by_fd[fd] != NULL && svc->by_fd[fd] != cn)
            conn_drop(svc, svc->by_fd[fd]);
    }
    if ((size_t)fd >= svc->nfd) {
        size_t old = svc->nfd;

        xgrow(&svc->by_fd, &svc->nfd, (size_t)fd + 1, sizeof(*svc->by_fd));
        memset(svc->by_fd + old, 0, (svc->nfd - old) * sizeof(*svc->by_fd));
    }
    svc->by_fd[fd] = cn;
}

int
svc__conn_claim(struct syncsvc *svc, const struct svc_ctx *c, int inst)
{
    struct svc_inst *in = &svc->inst[inst];
    int fd = c->frame != NULL ? zmq_msg_get(c->frame, ZMQ_SRCFD) : -1;
    struct svc_conn *cn;

    if (in->npeers >= SVC_MAX_PEERS)
        svc__conn_poll(svc);
    if (in->npeers >= SVC_MAX_PEERS)
        return -1;
    cn = xcalloc(1, sizeof(*cn) + c->peer.len);
    cn->inst = inst;
    cn->len = c->peer.len;
    memcpy(cn->id, c->peer.id, c->peer.len);
    in->npeers++;
    svc__map_put(&svc->peers, cn->id, cn->len, cn);
    conn_bind_fd(svc, cn, fd);
    return 0;
}

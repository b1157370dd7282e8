/*
 * syncsvc.c — the sync service's socket and message loop (see sync/sync.h).
 *
 * One ROUTER socket receives every instance's requests as [routing id]
 * [JSON] [payload]. Each is checked by ty_wire, then handed to the handler
 * for its op through a table; handlers answer at once or park a waiter
 * (barriers, long-poll fetches) that is answered later — by a signal, a
 * publish, a deadline in syncsvc_tick, an instance's exit or a cancel. A
 * routing id becomes an instance's by saying hello with the run's secret,
 * the run id and the instance's place in the run; anything else from an
 * unknown routing id is refused with an answer that says nothing about the
 * run (syncsvc_auth.c). Replies never block: a peer that stopped reading loses
 * replies rather than stalling every other instance.
 *
 * The states, topics and uploads live in syncsvc_barrier.c,
 * syncsvc_topic.c and syncsvc_upload.c.
 */
#include "sync/syncsvc_int.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HANDLE_BATCH 4096

/* ---- replies and waiters ---------------------------------------------- */

void
svc__send(struct syncsvc *svc, const struct svc_peer *peer, const char *json,
          size_t len, int64_t id)
{
    if (ty__wire_send(svc->sock, peer->id, peer->len, json, len, NULL, 0, false,
                      ZMQ_DONTWAIT) == 0)
        return;
    if (errno == EAGAIN)
        log_warnx("sync service: a peer is not reading; reply to "
                  "request %lld dropped",
                  (long long)id);
    else
        log_debug("sync service: reply to request %lld: %s", (long long)id,
                  zmq_strerror(errno));
}

void
svc__reply(struct syncsvc *svc, const struct svc_peer *peer,
           const struct ty_wire_resp *resp)
{
    char buf[SVC_REPLY_MAX];
    size_t len = ty__wire_resp_print(resp, buf, sizeof(buf));
    char *json;

    if (len > 0) {
        svc__send(svc, peer, buf, len, resp->id);
        return;
    }
    json = ty__wire_resp_encode(resp, &len);
    if (json == NULL)
        fatalx("sync service: cannot encode a response");
    svc__send(svc, peer, json, len, resp->id);
    free(json);
}

void
svc__reply_status(struct syncsvc *svc, const struct svc_peer *peer, int64_t id,
                  enum ty_wire_status st, const char *fmt, ...)
{
    struct ty_wire_resp r;
    char msg[1024];
    va_list ap;

    ty__wire_resp_init(&r, id);
    r.status = st;
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        r.error = msg;
    }
    svc__reply(svc, peer, &r);
}

int64_t
svc__now_ms(void)
{
    return now_mono_ns() / 1000000;
}

int64_t
svc__deadline(int64_t timeout_ms)
{
    if (timeout_ms >= SVC_FOREVER_MS)
        return SVC_FOREVER_MS;
    return svc__now_ms() + timeout_ms;
}

/* A waiter from the spares, or a new one; zeroed. A barrier round parks
 * one waiter per instance and frees them all at once, so keeping up to one
 * spare per instance saves an allocation per wait. */
static struct svc_waiter *
waiter_alloc(struct syncsvc *svc)
{
    struct svc_waiter *w = svc->spare;

    if (w == NULL)
        return xcalloc(1, sizeof(*w));
    svc->spare = w->next;
    svc->nspare--;
    memset(w, 0, sizeof(*w));
    return w;
}

struct svc_waiter *
svc__waiter_new(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
                int64_t timeout_ms, enum svc_timer_kind kind)
{
    struct svc_inst *in = &svc->inst[c->inst];
    struct svc_waiter *w;

    if (in->waits >= SVC_MAX_WAITS) {
        svc__reply_status(svc, &c->peer, id, TY_WIRE_BUSY,
                          "too many pending waits (%d) for %s/%d",
                          SVC_MAX_WAITS, in->group, in->group_index);
        return NULL;
    }
    w = waiter_alloc(svc);
    w->inst = c->inst;
    w->id = id;
    w->seq = -1;
    w->peer.id =
        c->peer.len <= sizeof(w->peer_buf) ? w->peer_buf : xmalloc(c->peer.len);
    memcpy(w->peer.id, c->peer.id, c->peer.len);
    w->peer.len = c->peer.len;
    w->timer.kind = kind;
    w->timer.at = svc__deadline(timeout_ms);
    svc__heap_push(&svc->timers, &w->timer);
    in->waits++;
    return w;
}

void
svc__waiter_drop(struct svc_waiter *w)
{
    if (w->peer.id != w->peer_buf)
        free(w->peer.id);
    free(w);
}

void
svc__waiter_free(struct syncsvc *svc, struct svc_waiter *w)
{
    svc__heap_remove(&svc->timers, &w->timer);
    svc->inst[w->inst].waits--;
    if (w->peer.id == w->peer_buf && svc->nspare < svc->ninst) {
        w->next = svc->spare;
        svc->spare = w;
        svc->nspare++;
        return;
    }
    svc__waiter_drop(w);
}

void
svc__list_add(struct svc_waiter **head, struct svc_waiter *w)
{
    w->prev = NULL;
    w->next = *head;
    if (*head != NULL)
        (*head)->prev = w;
    *head = w;
}

void
svc__list_del(struct svc_waiter **head, struct svc_waiter *w)
{
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        *head = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    w->prev = w->next = NULL;
}

int
svc__list_drop_inst(struct syncsvc *svc, struct svc_waiter **head, int inst)
{
    struct svc_waiter *w = *head, *next;
    int n = 0;

    for (; w != NULL; w = next) {
        next = w->next;
        if (w->inst != inst)
            continue;
        svc__list_del(head, w);
        svc__waiter_free(svc, w);
        n++;
    }
    return n;
}

const char *
svc__inst_name(const struct syncsvc *svc, int i, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%d", svc->inst[i].group, svc->inst[i].group_index);
    return buf;
}

/* ---- hello and events --------------------------------------------------- */

static int
hello_check(struct syncsvc *svc, const struct svc_ctx *c,
            const struct ty_wire_req *req)
{
    const struct svc_inst *in;
    char name[300];

    if (strcmp(req->run, svc->run_id) != 0)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_DENIED,
                                 "unknown run \"%s\": this coordinator "
                                 "serves run \"%s\"",
                                 req->run, svc->run_id),
               -1;
    if (req->global_index >= (int64_t)svc->ninst)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_DENIED,
                                 "instance %lld is not in the run (it has "
                                 "%zu instances)",
                                 (long long)req->global_index, svc->ninst),
               -1;
    in = &svc->inst[req->global_index];
    svc__inst_name(svc, (int)req->global_index, name, sizeof(name));
    if (strcmp(in->group, req->group) != 0 ||
        in->group_index != req->group_index)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_DENIED,
                                 "instance %lld is %s, not %s/%lld",
                                 (long long)req->global_index, name, req->group,
                                 (long long)req->group_index),
               -1;
    if (!in->alive)
        return svc__reply_status(svc, &c->peer, req->id, TY_WIRE_DENIED,
                                 "%s already ended", name),
               -1;
    return 0;
}

static void
peer_lookup(struct syncsvc *svc, struct svc_ctx *c)
{
    const struct svc_conn *cn = svc__conn_of(svc, c);

    c->inst = cn != NULL ? cn->inst : -1;
    c->board = cn != NULL ? cn->board : 0;
    c->stale = cn != NULL && cn->stale;
}

/* The secret comes first: until it is right, every answer is the same
 * `denied`, whatever else the hello says. Only then is a slot taken. */
static void
op_hello(struct syncsvc *svc, const struct svc_ctx *c,
         const struct ty_wire_req *req)
{
    int gi = (int)req->global_index;
    struct svc_inst *in;
    struct svc_conn *cn;
    struct ty_wire_resp r;

    if (!svc__auth_ok(svc, req->secret)) {
        svc__auth_refuse(svc, c, req->id,
                         req->secret ? "hello with a wrong secret"
                                     : "hello without the run's secret");
        return;
    }
    if (hello_check(svc, c, req) < 0)
        return;
    in = &svc->inst[gi];
    if (c->inst >= 0 && c->inst != gi) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_DENIED,
                          "this connection already belongs to instance %d",
                          c->inst);
        return;
    }
    if (c->inst < 0 && svc__conn_claim(svc, c, gi) < 0) {
        svc__reply_status(svc, &c->peer, req->id, TY_WIRE_BUSY,
                          "too many connections for %s/%d", in->group,
                          in->group_index);
        return;
    }
    cn = svc__conn_find(svc, &c->peer);
    if (req->board == 1 && cn->board == 0)
        cn->board = svc__board_area(svc);
    in->hello = true;
    ty__wire_resp_init(&r, req->id);
    if (req->board == 1 && cn->board > 0)
        r.board = cn->board;
    /* The observer first: whoever reads the reply may count on it. */
    if (svc->obs.on_hello != NULL)
        svc->obs.on_hello(svc->obs_arg, gi);
    svc__reply(svc, &c->peer, &r);
}

static void
op_event(struct syncsvc *svc, const struct svc_ctx *c,
         const struct ty_wire_req *req)
{
    svc__reply_status(svc, &c->peer, req->id, TY_WIRE_OK, NULL);
    if (svc->obs.on_event != NULL)
        svc->obs.on_event(svc->obs_arg, c->inst, req->event);
}

/* ---- the message loop ---------------------------------------------------- */

/* A connection of a process that ended in a restart: whatever it still
 * sent (a hello too) changes nothing. It had the secret, so the answer
 * may say why; no one is likely to read it. */
static void
refuse_stale(struct syncsvc *svc, const struct svc_ctx *c,
             const struct ty_wire_req *req)
{
    char name[300];

    svc__inst_name(svc, c->inst, name, sizeof(name));
    log_debug("sync service: %s request %lld from a process that was "
              "restarted, refused",
              name, (long long)req->id);
    svc__reply_status(svc, &c->peer, req->id, TY_WIRE_DENIED,
                      "%s was restarted: this connection was its earlier "
                      "process's",
                      name);
}

typedef void (*svc_handler)(struct syncsvc *svc, const struct svc_ctx *c,
                            const struct ty_wire_req *req);

static const svc_handler handlers[TY_WIRE_NOPS] = {
    [TY_WIRE_HELLO] = op_hello,
    [TY_WIRE_SIGNAL] = svc__op_signal,
    [TY_WIRE_BARRIER] = svc__op_barrier,
    [TY_WIRE_SIGNAL_WAIT] = svc__op_signal_wait,
    [TY_WIRE_PUBLISH] = svc__op_publish,
    [TY_WIRE_FETCH] = svc__op_fetch,
    [TY_WIRE_EVENT] = op_event,
    [TY_WIRE_UPLOAD_BEGIN] = svc__op_upload_begin,
    [TY_WIRE_UPLOAD_CHUNK] = svc__op_upload_chunk,
    [TY_WIRE_UPLOAD_END] = svc__op_upload_end,
    [TY_WIRE_UPLOAD_ABORT] = svc__op_upload_abort,
    [TY_WIRE_APPEND] = svc__op_append,
    [TY_WIRE_SNAPSHOT_WAIT] = svc__op_snapshot_wait,
};

static void
handle_message(struct syncsvc *svc, struct ty_wire_msg *m)
{
    struct svc_ctx c;
    struct ty_wire_req req;
    char why[512];

    if (m->nparts < 2)
        return;
    c.peer.id = zmq_msg_data(&m->part[0]);
    c.peer.len = zmq_msg_size(&m->part[0]);
    c.frame = &m->part[1];
    peer_lookup(svc, &c);
    if (m->more_parts || m->nparts > 3) {
        svc__reply_status(svc, &c.peer, 0, TY_WIRE_INVALID,
                          "expected a JSON frame and at most one payload "
                          "frame");
        return;
    }
    if (ty__wire_req_decode(zmq_msg_data(&m->part[1]),
                            zmq_msg_size(&m->part[1]),
                            m->nparts == 3 ? zmq_msg_data(&m->part[2]) : NULL,
                            m->nparts == 3 ? zmq_msg_size(&m->part[2]) : 0,
                            m->nparts == 3, &req, why, sizeof(why)) < 0)
        svc__reply_status(svc, &c.peer, req.id, TY_WIRE_INVALID, "%s", why);
    else if (c.stale)
        refuse_stale(svc, &c, &req);
    else if (req.op != TY_WIRE_HELLO && c.inst < 0)
        svc__auth_refuse(svc, &c, req.id, "a request before hello");
    else if (handlers[req.op] == NULL)
        svc__reply_status(svc, &c.peer, req.id, TY_WIRE_INVALID,
                          "op \"%s\" is not served by this coordinator",
                          ty__wire_op_name(req.op));
    else
        handlers[req.op](svc, &c, &req);
    ty__wire_req_release(&req);
}

int
syncsvc_handle(struct syncsvc *svc, struct err *err)
{
    svc__conn_poll(svc);
    for (int n = 0; n < HANDLE_BATCH; n++) {
        struct ty_wire_msg m;

        if (ty__wire_recv(svc->sock, &m, ZMQ_DONTWAIT) < 0) {
            if (errno == EAGAIN)
                return 0;
            return err_set(err, errno, "sync service: receive: %s",
                           zmq_strerror(errno));
        }
        handle_message(svc, &m);
        ty__wire_msg_close(&m);
    }
    return 0;
}

int64_t
syncsvc_next_deadline_ms(const struct syncsvc *svc)
{
    const struct svc_timer *t = svc__heap_top(&svc->timers);

    return t != NULL ? t->at : -1;
}

void
syncsvc_tick(struct syncsvc *svc)
{
    int64_t now = svc__now_ms();
    struct svc_timer *t;

    while ((t = svc__heap_top(&svc->timers)) != NULL && t->at <= now) {
        svc__heap_remove(&svc->timers, t);
        if (t->kind == SVC_T_BARRIER)
            svc__barrier_timeout(
                svc, svc__container_of(t, struct svc_waiter, timer));
        else if (t->kind == SVC_T_FETCH)
            svc__fetch_timeout(svc,
                               svc__container_of(t, struct svc_waiter, timer));
        else if (t->kind == SVC_T_SNAPSHOT)
            svc__snapshot_timeout(
                svc, svc__container_of(t, struct svc_waiter, timer));
        else
            svc__upload_timeout(svc,
                                svc__container_of(t, struct svc_upload, timer));
    }
}

/* Instance i when it is one of the run's and alive, else NULL. */
static struct svc_inst *
live_inst(struct syncsvc *svc, int i)
{
    if (i < 0 || (size_t)i >= svc->ninst || !svc->inst[i].alive)
        return NULL;
    return &svc->inst[i];
}

void
syncsvc_instance_exited(struct syncsvc *svc, int instance, const char *how)
{
    struct svc_inst *in = live_inst(svc, instance);

    if (in == NULL)
        return;
    in->alive = false;
    in->how = xstrdup(how ? how : "exited");
    svc->alive[instance / 64] &= ~(1ULL << (instance % 64));
    svc__upload_drop_all(svc, instance);
    svc__snapshot_cancel(svc, instance, in->how);
    svc__barrier_exited(svc, instance);
}

/* Nothing fails and nothing is answered: the waits' process is gone, and
 * the instance is still one that will signal. Its new process says hello
 * on new connections; the old ones are refused until they close. */
void
syncsvc_instance_restarting(struct syncsvc *svc, int instance)
{
    struct svc_inst *in = live_inst(svc, instance);

    if (in == NULL)
        return;
    in->incarnation++;
    svc__conn_restarting(svc, instance);
    svc__barrier_restarting(svc, instance);
    svc__topic_restarting(svc, instance);
    svc__snapshot_drop(svc, instance);
    svc__upload_drop_all(svc, instance);
}

void
syncsvc_cancel_all(struct syncsvc *svc, const char *why)
{
    svc__barrier_cancel_all(svc, why ? why : "the run was canceled");
    svc__topic_cancel_all(svc, why ? why : "the run was canceled");
    svc__snapshot_close_all(svc, why ? why : "the run was canceled");
}

/* ---- set-up ------------------------------------------------------------- */

static int
setopt_int(void *sock, int opt, int v, const char *name, struct err *err)
{
    if (zmq_setsockopt(sock, opt, &v, sizeof(v)) < 0)
        return err_set(err, errno, "sync service: zmq option %s: %s", name,
                       zmq_strerror(errno));
    return 0;
}

/* Most of the service's CPU time is libzmq's I/O thread moving bytes
 * through the kernel for every connection, while the thread that handles
 * requests waits. A second I/O thread takes half the connections, so a
 * release's thousand sends run on two cores: on a 2-core machine that cut
 * the time to release 1000 instances by a fifth to a third (a third, a
 * fourth I/O thread gained nothing more). One core gains nothing. */
static int
io_threads(void)
{
    return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
}

static int
open_socket(struct syncsvc *svc, const char *bind, struct err *err)
{
    int64_t maxmsg = 4 << 20;
    char ep[256];
    size_t eplen = sizeof(ep);
    const char *colon;

    svc->ctx = zmq_ctx_new();
    if (svc->ctx == NULL)
        return err_set(err, errno, "sync service: zmq context: %s",
                       zmq_strerror(errno));
    if (zmq_ctx_set(svc->ctx, ZMQ_IO_THREADS, io_threads()) < 0)
        return err_set(err, errno, "sync service: zmq I/O threads: %s",
                       zmq_strerror(errno));
    svc->sock = zmq_socket(svc->ctx, ZMQ_ROUTER);
    if (svc->sock == NULL)
        return err_set(err, errno, "sync service: zmq socket: %s",
                       zmq_strerror(errno));
    if (setopt_int(svc->sock, ZMQ_ROUTER_MANDATORY, 1, "ROUTER_MANDATORY",
                   err) < 0 ||
        setopt_int(svc->sock, ZMQ_BACKLOG, 4096, "BACKLOG", err) < 0 ||
        setopt_int(svc->sock, ZMQ_SNDHWM, 10000, "SNDHWM", err) < 0 ||
        setopt_int(svc->sock, ZMQ_RCVHWM, 10000, "RCVHWM", err) < 0 ||
        setopt_int(svc->sock, ZMQ_LINGER, 0, "LINGER", err) < 0)
        return -1;
    if (zmq_setsockopt(svc->sock, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) < 0)
        return err_set(err, errno, "sync service: zmq option MAXMSGSIZE");
    if (zmq_bind(svc->sock, bind) < 0)
        return err_set(err, errno, "sync service: bind %s: %s", bind,
                       zmq_strerror(errno));
    if (zmq_getsockopt(svc->sock, ZMQ_LAST_ENDPOINT, ep, &eplen) < 0)
        return err_set(err, errno, "sync service: endpoint: %s",
                       zmq_strerror(errno));
    svc->endpoint = xstrdup(ep);
    colon = strrchr(ep, ':');
    svc->port = colon && strncmp(ep, "tcp://", 6) == 0 ? atoi(colon + 1) : 0;
    return 0;
}

static int
open_log(struct syncsvc *svc, const char *run_dir, struct err *err)
{
    cleanup_free char *path = NULL;

    svc->log_fd = -1;
    if (run_dir == NULL)
        return 0;
    if (mkdir_p(run_dir, err) < 0)
        return err_prefix(err, "sync service");
    path = path_join(run_dir, "barriers.jsonl");
    svc->log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (svc->log_fd < 0) {
        int e = errno;

        err_sys(err, e, "cannot create %s", path);
        return err_status(err, err_io_status(e));
    }
    svc->log_path = xstrdup(path);
    return 0;
}

int
syncsvc_log_status(const struct syncsvc *svc, struct err *err)
{
    if (svc == NULL || svc->log_errno == 0)
        return 0;
    return err_sys(err, svc->log_errno, "cannot write %s", svc->log_path);
}

/* The index of group id in svc->groups, added when new. */
static int
group_index_of(struct syncsvc *svc, const char *group)
{
    size_t cap = svc->ngroups;

    for (size_t g = 0; g < svc->ngroups; g++)
        if (strcmp(svc->groups[g], group) == 0)
            return (int)g;
    xgrow(&svc->groups, &cap, svc->ngroups + 1, sizeof(*svc->groups));
    svc->groups[svc->ngroups] = xstrdup(group);
    return (int)svc->ngroups++;
}

int
svc__group_find(const struct syncsvc *svc, const char *group)
{
    for (size_t g = 0; g < svc->ngroups; g++)
        if (strcmp(svc->groups[g], group) == 0)
            return (int)g;
    return -1;
}

static int
copy_instances(struct syncsvc *svc, const struct syncsvc_config *cfg,
               struct err *err)
{
    svc->ninst = cfg->ninstances;
    svc->inst = xcalloc(cfg->ninstances, sizeof(*svc->inst));
    svc->words = (cfg->ninstances + 63) / 64;
    svc->alive = xcalloc(svc->words, sizeof(uint64_t));
    for (size_t i = 0; i < cfg->ninstances; i++) {
        const struct syncsvc_instance *ci = &cfg->instances[i];

        if (ci->group == NULL || ci->outdir == NULL)
            return err_set(err, EINVAL,
                           "sync service: instance %zu has no group or "
                           "output folder",
                           i);
        svc->inst[i].group = xstrdup(ci->group);
        svc->inst[i].gidx = group_index_of(svc, ci->group);
        svc->inst[i].group_index = ci->group_index;
        svc->inst[i].outdir = xstrdup(ci->outdir);
        svc->inst[i].quota =
            ci->output_quota ? ci->output_quota : SVC_OUTPUT_QUOTA;
        svc->inst[i].alive = true;
        svc->alive[i / 64] |= 1ULL << (i % 64);
    }
    return 0;
}

static size_t
or_default(size_t v, size_t dflt)
{
    return v != 0 ? v : dflt;
}

static void
set_bounds(struct syncsvc *svc, const struct syncsvc_bounds *b)
{
    svc->bounds.topics = or_default(b->topics, SYNCSVC_MAX_TOPICS);
    svc->bounds.topic_bytes =
        or_default(b->topic_bytes, SYNCSVC_MAX_TOPIC_BYTES);
    svc->bounds.states = or_default(b->states, SYNCSVC_MAX_STATES);
    svc->bounds.state_bytes =
        or_default(b->state_bytes, SYNCSVC_MAX_STATE_BYTES);
}

struct syncsvc *
syncsvc_new(const struct syncsvc_config *cfg, struct err *err)
{
    struct syncsvc *svc;

    if (cfg->run_id == NULL || cfg->run_id[0] == '\0' || cfg->bind == NULL)
        return err_set(err, EINVAL,
                       "sync service: no run id or bind "
                       "address"),
               NULL;
    svc = xcalloc(1, sizeof(*svc));
    svc->log_fd = -1;
    svc->run_id = xstrdup(cfg->run_id);
    svc->topic_max_entries =
        cfg->topic_max_entries ? cfg->topic_max_entries : 100000;
    svc->topic_max_bytes =
        cfg->topic_max_bytes ? cfg->topic_max_bytes : 64u << 20;
    set_bounds(svc, &cfg->bounds);
    if (cfg->observer != NULL)
        svc->obs = *cfg->observer;
    svc->obs_arg = cfg->observer_arg;
    svc__map_init(&svc->states);
    svc__map_init(&svc->topics);
    svc__map_init(&svc->peers);
    (void)fd_limit_raise(); /* a thousand connections, in tests and benches */
    svc->wake_fd = -1;
    if (svc__auth_init(svc, cfg->secret, err) < 0 ||
        copy_instances(svc, cfg, err) < 0 ||
        open_log(svc, cfg->run_dir, err) < 0 ||
        open_socket(svc, cfg->bind, err) < 0 || svc__conn_open(svc, err) < 0) {
        syncsvc_destroy(&svc);
        return NULL;
    }
    if (cfg->board_dir != NULL &&
        svc__board_open(svc, cfg->board_dir, cfg->board_gid, err) < 0) {
        if (!cfg->board_optional) {
            syncsvc_destroy(&svc);
            return NULL;
        }
        log_debug("%s; releases go as messages", err->msg);
        err_clear(err);
        svc__board_close(svc);
    }
    return svc;
}

void
syncsvc_destroy(struct syncsvc **psvc)
{
    struct syncsvc *svc = *psvc;

    if (svc == NULL)
        return;
    for (size_t i = 0; i < svc->ninst; i++)
        svc__upload_drop_all(svc, (int)i);
    svc__conn_close(svc);
    if (svc->sock != NULL)
        zmq_close(svc->sock);
    if (svc->ctx != NULL)
        zmq_ctx_term(svc->ctx);
    svc__map_release(&svc->states, svc__state_free);
    svc__map_release(&svc->topics, svc__topic_free);
    while (svc->spare != NULL) {
        struct svc_waiter *w = svc->spare;

        svc->spare = w->next;
        free(w);
    }
    for (size_t i = 0; i < svc->ninst; i++) {
        if (svc->inst[i].snapshot != NULL)
            svc__waiter_drop(svc->inst[i].snapshot);
        free(svc->inst[i].group);
        free(svc->inst[i].outdir);
        free(svc->inst[i].how);
    }
    for (size_t g = 0; g < svc->ngroups; g++)
        free(svc->groups[g]);
    free(svc->groups);
    if (svc->log_fd >= 0)
        close(svc->log_fd);
    free(svc->log_path);
    svc__board_close(svc);
    strbuf_release(&svc->items);
    strbuf_release(&svc->answer);
    free(svc->timers.v);
    free(svc->inst);
    free(svc->alive);
    free(svc->endpoint);
    free(svc->run_id);
    explicit_bzero(svc->secret, sizeof(svc->secret));
    free(svc);
    *psvc = NULL;
}

const char *
syncsvc_endpoint(const struct syncsvc *svc)
{
    return svc->endpoint;
}

int
syncsvc_port(const struct syncsvc *svc)
{
    return svc->port;
}

const char *
syncsvc_secret(const struct syncsvc *svc)
{
    return svc->secret;
}

const char *
syncsvc_board_dir(const struct syncsvc *svc)
{
    return svc->board != NULL ? svc->board_dir : NULL;
}

void *
syncsvc_socket(struct syncsvc *svc)
{
    return svc->sock;
}

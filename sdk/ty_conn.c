/*
 * ty_conn.c — the SDK's connection to the coordinator (see ty_conn.h).
 *
 * The connection is a ZMTP DEALER spoken directly over one TCP socket
 * (ty_zmtp.c). A caller builds a request, takes an id and writes it into
 * the socket itself, under the connection's lock (what the socket does not
 * take at once is buffered, and a private I/O thread writes it when the
 * socket drains). The I/O thread reads answers and hands each to the
 * request with its id, waking the callers on a condition variable; it
 * also drives connecting and the handshake, and watches the release board
 * (ty_board.c). Callers wait with their own deadline, so a coordinator that
 * never answers costs a timeout, not a hang.
 *
 * fork(): handlers registered with pthread_atfork hold every connection's
 * mutex across the fork, so the child never inherits one locked; the child
 * then sees a pid that is not the owner's and refuses to touch the socket.
 */
#include "ty_conn.h"
#include "ty_int.h"

#include "ty_board.h"
#include "ty_zmtp.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define ASYNC_MAX 1024 /* events in flight before senders wait */
#define ASYNC_WAIT_MS (60 * 1000)
/* While a release is expected on the board, look at it this often even
 * without a wake-up (a process on the host that read the wake FIFO would
 * otherwise make the wait last until its deadline). */
#define BOARD_LOOK_MS 1000

struct ty__creq {
    struct ty__creq *prev, *next; /* pending list */
    int64_t id;
    bool async, done;
    bool stoppable; /* a barrier: given up when the process is asked to end */
    int rc;
    int notify_fd; /* written a byte when answered or broken; -1: none */
    struct ty_wire_resp resp;
};

struct ty__conn {
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct ty__zmtp *z;
    int wake_fd;
    pthread_t io;
    bool io_started;
    pid_t pid;
    int64_t next_id;
    struct ty__creq *pending;
    int nasync;
    bool stopping, broken;
    char *url;
    struct ty__conn *reg_next;
    struct ty__board *board; /* NULL, or the release board (ty_board.h) */
};

/* ---- fork safety ------------------------------------------------------- */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ty__conn *reg_head;
static pthread_once_t reg_once = PTHREAD_ONCE_INIT;

static void
atfork_prepare(void)
{
    pthread_mutex_lock(&reg_mu);
    for (struct ty__conn *c = reg_head; c != NULL; c = c->reg_next)
        pthread_mutex_lock(&c->mu);
}

static void
atfork_release(void)
{
    for (struct ty__conn *c = reg_head; c != NULL; c = c->reg_next)
        pthread_mutex_unlock(&c->mu);
    pthread_mutex_unlock(&reg_mu);
}

static void
reg_install(void)
{
    pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}

static void
reg_add(struct ty__conn *c)
{
    pthread_once(&reg_once, reg_install);
    pthread_mutex_lock(&reg_mu);
    c->reg_next = reg_head;
    reg_head = c;
    pthread_mutex_unlock(&reg_mu);
}

static void
reg_del(struct ty__conn *c)
{
    pthread_mutex_lock(&reg_mu);
    for (struct ty__conn **pp = &reg_head; *pp; pp = &(*pp)->reg_next) {
        if (*pp == c) {
            *pp = c->reg_next;
            break;
        }
    }
    pthread_mutex_unlock(&reg_mu);
}

/* ---- lists (under mu) -------------------------------------------------- */

static void
pending_del(struct ty__conn *c, struct ty__creq *r)
{
    if (r->prev != NULL)
        r->prev->next = r->next;
    else if (c->pending == r)
        c->pending = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static void
creq_free(struct ty__creq *r)
{
    ty__wire_resp_release(&r->resp);
    free(r);
}

/* ---- the I/O thread ---------------------------------------------------- */

/* Under mu: tell the request's notify descriptor that it is settled. */
static void
notify(const struct ty__creq *r)
{
    if (r->notify_fd >= 0 && write(r->notify_fd, "a", 1) < 0) {
        /* full: the reader has a wake-up pending already */
    }
}

static struct ty__creq *
pending_find(struct ty__conn *c, int64_t id)
{
    for (struct ty__creq *r = c->pending; r != NULL; r = r->next)
        if (r->id == id)
            return r;
    return NULL;
}

/* An answer for the request with its id (under mu). */
static void
deliver(struct ty__conn *c, struct ty_wire_resp *resp)
{
    struct ty__creq *r;

    ty__board_forget(c->board, resp->id);
    r = pending_find(c, resp->id);
    if (r != NULL) {
        pending_del(c, r);
        r->resp = *resp;
        resp->root = NULL;
        r->done = true;
        notify(r);
        if (r->async) {
            c->nasync--;
            creq_free(r);
        }
        pthread_cond_broadcast(&c->cond);
    }
    ty__wire_resp_release(resp);
}

/* Releases answered on the board, completed as if they had come as
 * messages: status ok and the seq. */
static void
board_collect(struct ty__conn *c)
{
    int64_t ids[TY_BOARD_AREA], seqs[TY_BOARD_AREA];
    size_t n;

    pthread_mutex_lock(&c->mu);
    n = ty__board_collect(c->board, ids, seqs);
    for (size_t i = 0; i < n; i++) {
        struct ty__creq *r = pending_find(c, ids[i]);

        if (r == NULL)
            continue;
        pending_del(c, r);
        ty__wire_resp_init(&r->resp, ids[i]);
        r->resp.seq = seqs[i];
        r->done = true;
    }
    if (n > 0)
        pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->mu);
}

/* A message from the coordinator (ty_zmtp.c calls this under mu). */
static void
on_message(void *arg, const char *data, size_t len)
{
    struct ty__conn *c = arg;
    struct ty_wire_resp resp;
    char why[256];

    if (ty__wire_resp_decode(data, len, &resp, why, sizeof(why)) == 0)
        deliver(c, &resp);
    else
        ty__wire_resp_release(&resp);
}

/* Under mu: the connection is gone; every waiter hears so. */
static void
set_broken(struct ty__conn *c)
{
    c->broken = true;
    for (struct ty__creq *r = c->pending; r != NULL; r = r->next)
        notify(r);
    pthread_cond_broadcast(&c->cond);
}

/* What to poll: the socket, the wake-up eventfd, and the release board
 * when there is one; the timeout is the next connection attempt or, while
 * a release is expected on the board, a look at it now and then. */
static int
io_prepare(struct ty__conn *c, struct pollfd p[3], int *nfds)
{
    int64_t retry = ty__zmtp_retry_ms(c->z);
    int timeout = -1;

    p[0] = (struct pollfd){ty__zmtp_fd(c->z), ty__zmtp_events(c->z), 0};
    p[1] = (struct pollfd){c->wake_fd, POLLIN, 0};
    *nfds = 2;
    if (ty__board_enabled(c->board)) {
        p[(*nfds)++] = (struct pollfd){ty__board_fd(c->board), POLLIN, 0};
        if (ty__board_waiting(c->board) > 0)
            timeout = BOARD_LOOK_MS;
    }
    if (retry >= 0 && (timeout < 0 || retry < timeout))
        timeout = (int)retry;
    return timeout;
}

static void *
io_main(void *arg)
{
    struct ty__conn *c = arg;
    uint64_t n;

    for (;;) {
        struct pollfd p[3];
        int nfds, timeout, rc;

        pthread_mutex_lock(&c->mu);
        if (c->stopping || c->broken) {
            pthread_mutex_unlock(&c->mu);
            break;
        }
        timeout = io_prepare(c, p, &nfds);
        pthread_mutex_unlock(&c->mu);
        rc = poll(p, (nfds_t)nfds, timeout);
        if (rc < 0 && errno == EINTR)
            continue;
        if (p[1].revents & POLLIN)
            while (read(c->wake_fd, &n, sizeof(n)) < 0 && errno == EINTR)
                ;
        pthread_mutex_lock(&c->mu);
        if (rc < 0 || ty__zmtp_io(c->z, p[0].revents, on_message, c) < 0)
            set_broken(c);
        pthread_mutex_unlock(&c->mu);
        if (nfds == 3 && (rc == 0 || (p[2].revents & POLLIN)))
            board_collect(c);
    }
    return NULL;
}

static void
wake(struct ty__conn *c)
{
    uint64_t one = 1;

    while (write(c->wake_fd, &one, sizeof(one)) < 0 && errno == EINTR)
        ;
}

/* ---- opening and closing ----------------------------------------------- */

/* The DEALER's routing id: unique per process and stable while it runs,
 * and not guessable: the service refuses a connection whose id an open
 * one holds, so a stranger who could guess it could keep us out. */
static void
routing_id(char *rid, size_t size, int global_index)
{
    struct timespec ts;
    uint64_t nonce = 0;

    if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) !=
        (ssize_t)sizeof(nonce)) {
        clock_gettime(CLOCK_REALTIME, &ts);
        nonce = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec;
    }
    snprintf(rid, size, "ty-%d-%x-%llx", global_index, (unsigned)getpid(),
             (unsigned long long)nonce);
}

/* Start the I/O thread with every signal blocked: the plan's handlers run
 * on the plan's threads. */
static int
start_io(struct ty__conn *c)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&c->io, NULL, io_main, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    c->io_started = rc == 0;
    return rc;
}

static struct ty__conn *
conn_alloc(const char *url)
{
    struct ty__conn *c = calloc(1, sizeof(*c));
    pthread_condattr_t ca;

    if (c == NULL)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &ca);
    pthread_condattr_destroy(&ca);
    c->pid = getpid();
    c->wake_fd = -1;
    c->url = strdup(url);
    return c;
}

static void
conn_free(struct ty__conn *c)
{
    struct ty__creq *r;

    while ((r = c->pending) != NULL) {
        pending_del(c, r);
        if (r->async)
            creq_free(r);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cond);
    free(c->url);
    free(c);
}

struct ty__conn *
ty__conn_open(const char *url, int global_index, char *why, size_t whylen)
{
    struct ty__conn *c = conn_alloc(url);
    char rid[64], zwhy[400];

    if (c == NULL || c->url == NULL) {
        snprintf(why, whylen, "out of memory");
        return c ? (conn_free(c), NULL) : NULL;
    }
    c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->wake_fd < 0) {
        snprintf(why, whylen, "eventfd: %s", strerror(errno));
        ty__conn_close(&c, 0);
        return NULL;
    }
    routing_id(rid, sizeof(rid), global_index);
    c->z = ty__zmtp_new(url, rid, zwhy, sizeof(zwhy));
    if (c->z == NULL) {
        snprintf(why, whylen, "cannot connect to %s", zwhy);
        ty__conn_close(&c, 0);
        return NULL;
    }
    if (start_io(c) != 0) {
        snprintf(why, whylen, "cannot start the sync I/O thread");
        ty__conn_close(&c, 0);
        return NULL;
    }
    reg_add(c);
    return c;
}

void
ty__conn_close(struct ty__conn **pc, int64_t flush_ms)
{
    struct ty__conn *c = *pc;

    if (c == NULL)
        return;
    *pc = NULL;
    if (c->pid != getpid())
        return; /* a forked child: the parent's socket stays untouched, and
                   the connection stays on the registry */
    reg_del(c);
    if (c->io_started) {
        ty__conn_flush(c, ty__now_ms() + flush_ms);
        pthread_mutex_lock(&c->mu);
        c->stopping = true;
        pthread_mutex_unlock(&c->mu);
        wake(c);
        pthread_join(c->io, NULL);
    }
    ty__zmtp_free(&c->z);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    ty__board_close(&c->board);
    conn_free(c);
}

bool
ty__conn_usable(const struct ty__conn *c)
{
    return c != NULL && c->pid == getpid() && c->io_started;
}

const char *
ty__conn_url(const struct ty__conn *c)
{
    return c ? c->url : "";
}

const char *
ty__conn_error(struct ty__conn *c)
{
    const char *e = "";

    if (c == NULL || c->pid != getpid())
        return e;
    pthread_mutex_lock(&c->mu);
    if (c->broken && c->z != NULL)
        e = ty__zmtp_error(c->z);
    pthread_mutex_unlock(&c->mu);
    return e;
}

/* ---- the release board ------------------------------------------------- */

bool
ty__conn_board_open(struct ty__conn *c, const char *dir)
{
    struct ty__board *b = ty__board_open(dir);

    if (b == NULL)
        return false;
    pthread_mutex_lock(&c->mu);
    ty__board_close(&c->board);
    c->board = b;
    pthread_mutex_unlock(&c->mu);
    return true;
}

bool
ty__conn_board_enable(struct ty__conn *c, int64_t first)
{
    bool ok;

    pthread_mutex_lock(&c->mu);
    ok = c->board != NULL && first > 0 && ty__board_enable(c->board, first);
    if (!ok)
        ty__board_close(&c->board);
    pthread_mutex_unlock(&c->mu);
    if (ok)
        wake(c); /* the I/O thread starts watching it */
    return ok;
}

/* ---- requests ---------------------------------------------------------- */

/* How often a barrier's wait looks whether the process was asked to end. */
#define STOP_LOOK_MS 50

/* Wait on the condition until deadline_ms; false once it has passed. */
static bool
cond_wait_until(struct ty__conn *c, int64_t deadline_ms)
{
    struct timespec ts;
    int64_t now = ty__now_ms();

    if (deadline_ms <= now)
        return false;
    if (deadline_ms - now > 365LL * 24 * 3600 * 1000) {
        pthread_cond_wait(&c->cond, &c->mu);
        return true;
    }
    ts.tv_sec = (time_t)(deadline_ms / 1000);
    ts.tv_nsec = (long)(deadline_ms % 1000) * 1000000;
    pthread_cond_timedwait(&c->cond, &c->mu, &ts);
    return true;
}

static struct ty__creq *
creq_build(struct ty__conn *c, struct ty_wire_req *req, bool async, int *rc)
{
    struct ty__creq *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return *rc = -ENOMEM, NULL;
    pthread_mutex_lock(&c->mu);
    req->id = ++c->next_id;
    if (!async &&
        (req->op == TY_WIRE_BARRIER || req->op == TY_WIRE_SIGNAL_WAIT))
        req->board = ty__board_reserve(c->board, req->id);
    pthread_mutex_unlock(&c->mu);
    r->id = req->id;
    r->async = async;
    r->stoppable = req->op == TY_WIRE_BARRIER || req->op == TY_WIRE_SIGNAL_WAIT;
    r->notify_fd = -1;
    ty__wire_resp_init(&r->resp, r->id);
    return r;
}

/* Room for one more async request, waiting a while if there is none. */
static bool
async_room(struct ty__conn *c)
{
    int64_t deadline = ty__now_ms() + ASYNC_WAIT_MS;

    while (c->nasync >= ASYNC_MAX && !c->broken)
        if (!cond_wait_until(c, deadline))
            return false;
    return !c->broken;
}

struct ty__creq *
ty__conn_submit(struct ty__conn *c, struct ty_wire_req *req, bool async,
                int *rc)
{
    struct ty__creq *r;
    char *json;
    size_t jlen;
    bool more;

    *rc = 0;
    if (!ty__conn_usable(c))
        return *rc = -ENOTCONN, NULL;
    r = creq_build(c, req, async, rc);
    if (r == NULL)
        return NULL;
    json = ty__wire_req_encode(req, &jlen);
    pthread_mutex_lock(&c->mu);
    if (json == NULL || c->broken || c->stopping || (async && !async_room(c))) {
        ty__board_forget(c->board, r->id);
        pthread_mutex_unlock(&c->mu);
        creq_free(r);
        free(json);
        *rc = json == NULL ? -EINVAL : async ? -ETIMEDOUT : -ENOTCONN;
        return NULL;
    }
    r->next = c->pending;
    if (c->pending != NULL)
        c->pending->prev = r;
    c->pending = r;
    c->nasync += async;
    if (ty__zmtp_send(c->z, json, jlen, req->data, req->len,
                      ty__wire_op_has_payload(req->op)) < 0) {
        ty__board_forget(c->board, r->id);
        pending_del(c, r);
        c->nasync -= async;
        set_broken(c);
        pthread_mutex_unlock(&c->mu);
        creq_free(r);
        free(json);
        return *rc = -ENOTCONN, NULL;
    }
    /* output the socket did not take: the I/O thread writes it */
    more = ty__zmtp_pending(c->z);
    pthread_mutex_unlock(&c->mu);
    free(json);
    if (more)
        wake(c);
    return async ? NULL : r;
}

int
ty__conn_wait(struct ty__conn *c, struct ty__creq *r, int64_t deadline_ms,
              struct ty_wire_resp *resp)
{
    int rc;

    pthread_mutex_lock(&c->mu);
    /* A barrier is waited for in slices, to see a SIGTERM taken as a
     * request to end (ty_stop.c): the plan then hears -ECANCELED at
     * once instead of being killed at the end of its grace. */
    while (!r->done && !c->broken && !(r->stoppable && ty__stop_asked())) {
        int64_t until = deadline_ms;

        if (r->stoppable && until > ty__now_ms() + STOP_LOOK_MS)
            until = ty__now_ms() + STOP_LOOK_MS;
        if (!cond_wait_until(c, until) && until == deadline_ms)
            break;
    }
    if (!r->done && !c->broken && r->stoppable && ty__stop_asked()) {
        rc = -ECANCELED;
        pending_del(c, r);
    } else if (r->done) {
        rc = r->rc;
        if (rc == 0) {
            *resp = r->resp;
            r->resp.root = NULL;
        }
    } else {
        rc = c->broken ? -ENOTCONN : -ETIMEDOUT;
        pending_del(c, r);
    }
    pthread_mutex_unlock(&c->mu);
    creq_free(r);
    return rc;
}

void
ty__conn_notify(struct ty__conn *c, struct ty__creq *r, int fd)
{
    pthread_mutex_lock(&c->mu);
    r->notify_fd = fd;
    if (r->done || c->broken)
        notify(r);
    pthread_mutex_unlock(&c->mu);
}

bool
ty__conn_answered(struct ty__conn *c, const struct ty__creq *r)
{
    bool done;

    pthread_mutex_lock(&c->mu);
    done = r->done || c->broken;
    pthread_mutex_unlock(&c->mu);
    return done;
}

void
ty__conn_forget(struct ty__conn *c, struct ty__creq *r)
{
    pthread_mutex_lock(&c->mu);
    if (!r->done)
        pending_del(c, r);
    pthread_mutex_unlock(&c->mu);
    creq_free(r);
}

int
ty__conn_flush(struct ty__conn *c, int64_t deadline_ms)
{
    int rc = 0;

    if (!ty__conn_usable(c))
        return -ENOTCONN;
    pthread_mutex_lock(&c->mu);
    while (c->nasync > 0 && !c->broken)
        if (!cond_wait_until(c, deadline_ms)) {
            rc = -ETIMEDOUT;
            break;
        }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

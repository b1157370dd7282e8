/*
 * barrier_redis.c — the barrier benchmark's Redis clients (see barrier.h):
 * the barrier Testground's Redis-based sync service built (INCR the
 * state's counter; the client whose INCR returns N PUBLISHes the release
 * on a channel every client SUBSCRIBEd to beforehand, two connections per
 * client) and the one its Go SDK ran (INCR, then GET the counter every
 * poll_ms until it reaches N).
 */
#include "barrier.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* ---- redis: INCR, PUBLISH, SUBSCRIBE ----------------------------------- */

static void
rflush(struct resp_conn *c)
{
    int rc;

    while ((rc = resp_flush(c)) == 1) {
        struct pollfd p = {.fd = resp_fd(c), .events = POLLOUT};

        poll(&p, 1, 1000);
    }
    if (rc < 0)
        bench_die("redis: write: %s", strerror(errno));
}

struct rctx {
    struct bar *b;
    size_t i;
    bool sub;
};

static bool
str_is(const struct resp_reply *r, const char *s)
{
    return r->type == RESP_BULK && r->str.len == strlen(s) &&
           memcmp(r->str.p, s, r->str.len) == 0;
}

static void
release_channel(const struct bar *b, char *buf, size_t size)
{
    snprintf(buf, size, "%s:release", b->nonce);
}

static void
released(struct bar *b, struct bar_client *c, size_t i)
{
    if (c->round == b->round)
        bench_die("client %zu: two releases in round %d", i, b->round);
    c->round = b->round;
    c->rel_ns = bench_now_ns();
    c->due_ns = 0;
    b->released++;
}

static void
publish_release(struct bar *b, struct bar_client *c)
{
    char chan[64];
    const char *argv[3] = {"PUBLISH", chan, b->state};

    release_channel(b, chan, sizeof(chan));
    c->wait = RW_PUBLISH;
    resp_cmd(c->cmd, 3, argv);
    rflush(c->cmd);
}

/* The counter as INCR (an integer) or GET (a bulk string) answers it. */
static int64_t
counter_of(const struct resp_reply *r)
{
    char buf[32];

    if (r->type == RESP_INT)
        return r->integer;
    if (r->type != RESP_BULK || r->str.p == NULL || r->str.len >= sizeof(buf))
        return 0;
    memcpy(buf, r->str.p, r->str.len);
    buf[r->str.len] = '\0';
    return strtoll(buf, NULL, 10);
}

/* A reply on client i's command connection. */
static void
on_cmd_reply(struct bar *b, size_t i, const struct resp_reply *r)
{
    struct bar_client *c = &b->c[i];
    enum bar_rwait was = c->wait;
    bool reached = counter_of(r) >= (int64_t)b->n;

    if (r->type == RESP_ERROR)
        bench_die("redis: %.*s", (int)r->str.len, r->str.p);
    c->wait = RW_NONE;
    if (was == RW_PUBLISH)
        return; /* PUBLISH's count of receivers */
    if (!b->redis_poll) {
        if (was == RW_INCR && counter_of(r) == (int64_t)b->n)
            publish_release(b, c);
        return;
    }
    /* redis-poll: released once a look sees N, else look again later */
    if (reached)
        released(b, c, i);
    else
        c->due_ns = (was == RW_INCR ? bench_now_ns() : c->due_ns) +
                    (int64_t)b->poll_ms * 1000000;
}

/* redis-poll: send the GETs that are due; returns ms to the next one. */
static int
poll_due(struct bar *b)
{
    int64_t now = bench_now_ns(), next = INT64_MAX;
    char key[96];
    const char *argv[2] = {"GET", key};

    snprintf(key, sizeof(key), "%s:%s", b->nonce, b->state);
    for (size_t i = 0; i < b->n; i++) {
        struct bar_client *c = &b->c[i];

        if (c->due_ns == 0 || c->wait != RW_NONE)
            continue;
        if (c->due_ns <= now) {
            c->wait = RW_GET;
            resp_cmd(c->cmd, 2, argv);
            rflush(c->cmd);
        } else if (c->due_ns < next) {
            next = c->due_ns;
        }
    }
    if (next == INT64_MAX)
        return BAR_WAIT_MS;
    return (int)((next - now) / 1000000) + 1;
}

/* A message on client i's subscriber connection. */
static void
on_sub_reply(struct bar *b, size_t i, const struct resp_reply *r)
{
    if (r->type != RESP_ARRAY || r->nelem < 3)
        bench_die("redis: unexpected reply on a subscriber connection");
    if (str_is(r->elem[0], "subscribe")) {
        b->released++;
        return;
    }
    if (str_is(r->elem[0], "message") && str_is(r->elem[2], b->state))
        released(b, &b->c[i], i);
}

static void
on_resp(void *arg, const struct resp_reply *r)
{
    struct rctx *x = arg;

    if (x->sub)
        on_sub_reply(x->b, x->i, r);
    else
        on_cmd_reply(x->b, x->i, r);
}

static void
rwait_all(struct bar *b)
{
    struct epoll_event ev[1024];

    while (b->released < b->n) {
        int timeout = b->redis_poll ? poll_due(b) : BAR_WAIT_MS;
        int k = epoll_wait(b->ep, ev, 1024, timeout);

        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0 && timeout < BAR_WAIT_MS)
            continue;
        if (k <= 0)
            bar_stuck(b);
        for (int j = 0; j < k; j++) {
            struct rctx x = {b, ev[j].data.u32 / 2, ev[j].data.u32 % 2};
            struct bar_client *c = &b->c[x.i];

            if (resp_read(x.sub ? c->sub : c->cmd, on_resp, &x) < 0)
                bench_die("redis closed a connection");
        }
    }
}

static void
rconnect(struct bar *b)
{
    char chan[64];
    const char *argv[2] = {"SUBSCRIBE", chan};

    snprintf(b->nonce, sizeof(b->nonce), "bench-%x", (unsigned)getpid());
    release_channel(b, chan, sizeof(chan));
    b->ep = epoll_create1(EPOLL_CLOEXEC);
    for (size_t i = 0; i < b->n; i++) {
        struct bar_client *c = &b->c[i];

        c->cmd = resp_open(b->redis_port);
        bar_epoll_add(b, resp_fd(c->cmd), (uint32_t)(i * 2));
        if (b->redis_poll)
            continue;
        c->sub = resp_open(b->redis_port);
        bar_epoll_add(b, resp_fd(c->sub), (uint32_t)(i * 2 + 1));
        resp_cmd(c->sub, 2, argv);
        rflush(c->sub);
    }
    if (!b->redis_poll)
        rwait_all(b); /* every subscription confirmed */
}

static void
rround(struct bar *b)
{
    char key[96];
    const char *argv[2] = {"INCR", key};

    snprintf(key, sizeof(key), "%s:%s", b->nonce, b->state);
    for (size_t i = 0; i < b->n; i++) {
        b->c[i].sent_ns = bench_now_ns();
        b->c[i].wait = RW_INCR;
        resp_cmd(b->c[i].cmd, 2, argv);
        rflush(b->c[i].cmd);
    }
    rwait_all(b);
}

static void
rclose(struct bar *b)
{
    for (size_t i = 0; i < b->n; i++) {
        resp_close(&b->c[i].cmd);
        resp_close(&b->c[i].sub);
    }
    close(b->ep);
}

const struct bar_ops bar_redis_ops = {rconnect, rround, rclose};

/*
 * barrier.c — N instances meet at a barrier, round after round, against
 * one of three servers:
 *
 *   testyard  the coordinator's sync service (runner/syncsvc.c) in a child
 *             process; each instance is a DEALER that says hello, then
 *             sends signal_and_wait("round-<r>", N) every round
 *   redis     a Redis barrier as Testground's Redis-based sync service
 *             built it: INCR the state's counter; the instance whose INCR
 *             returns N PUBLISHes the release on a channel every instance
 *             SUBSCRIBEd to beforehand (two connections per instance)
 *   redis-poll  the barrier Testground's Go SDK actually ran on Redis: INCR,
 *             then GET the counter every --poll-ms (1 s in the SDK) until it
 *             reaches N; the INCR's answer counts as the first look
 *   floor     a ROUTER that echoes each message: one ZeroMQ round trip per
 *             instance with no barrier logic, the least any ZeroMQ barrier
 *             can cost
 *
 * All N clients live in this process on one thread, waited on with one
 * epoll. Each round every client signals (in turn, as fast as the thread
 * can send), then the thread waits until every client is released. Per
 * round: release = last release − last signal, round = last release −
 * first signal. The first rounds are warm-up; the medians over the others
 * are printed, with the server's resident memory per connected instance
 * and the server's and this process's CPU time per signal.
 *
 *   barrier --system testyard|redis|redis-poll|floor -n N [--rounds R]
 *           [--warmup W] [--redis-port P --redis-pid PID] [--poll-ms MS]
 */
#include "lib/bench.h"
#include "lib/resp.h"
#include "lib/svcproc.h"

#include "ty_wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <zmq.h>

#define RUN_ID "bench"
#define WAIT_MS 60000

enum system { SYS_TESTYARD, SYS_REDIS, SYS_REDIS_POLL, SYS_FLOOR };

/* What a redis client's command connection waits for. */
enum rwait { RW_NONE, RW_INCR, RW_PUBLISH, RW_GET };

struct client {
    void *sock;                  /* testyard, floor */
    struct resp_conn *cmd, *sub; /* redis */
    int64_t sent_ns, rel_ns;
    int round;       /* last round this client was released, -1 = none */
    enum rwait wait; /* redis: the answer expected next */
    int64_t due_ns;  /* redis-poll: next GET, 0 = none */
};

struct bench {
    enum system sys;
    size_t n;
    int rounds, warmup;
    int redis_port;
    int poll_ms;
    pid_t server_pid;
    struct svcproc sp;
    void *ctx;
    struct bench_zpoll *zp; /* testyard, floor */
    int ep;                 /* redis */
    struct client *c;
    int round;       /* current round, from 1 */
    size_t released; /* clients released this round */
    char state[32];  /* "round-<r>" */
    char nonce[32];  /* redis key prefix */
};

static bool
is_redis(const struct bench *b)
{
    return b->sys == SYS_REDIS || b->sys == SYS_REDIS_POLL;
}

static void
usage(void)
{
    fprintf(stderr, "usage: barrier --system testyard|redis|redis-poll|floor "
                    "-n N [--rounds R] [--warmup W] [--redis-port P "
                    "--redis-pid PID] [--poll-ms MS]\n");
    exit(64);
}

static void
parse_args(struct bench *b, int argc, char **argv)
{
    b->rounds = 50;
    b->warmup = 3;
    b->poll_ms = 1000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--system") == 0 && i + 1 < argc) {
            const char *s = argv[++i];

            if (strcmp(s, "testyard") == 0)
                b->sys = SYS_TESTYARD;
            else if (strcmp(s, "redis") == 0)
                b->sys = SYS_REDIS;
            else if (strcmp(s, "redis-poll") == 0)
                b->sys = SYS_REDIS_POLL;
            else if (strcmp(s, "floor") == 0)
                b->sys = SYS_FLOOR;
            else
                usage();
        } else if (strcmp(argv[i], "-n") == 0) {
            b->n = (size_t)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "--rounds") == 0) {
            b->rounds = (int)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "--warmup") == 0) {
            b->warmup = (int)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "--redis-port") == 0) {
            b->redis_port = (int)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "--poll-ms") == 0) {
            b->poll_ms = (int)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "--redis-pid") == 0) {
            b->server_pid = (pid_t)bench_arg_long(argc, argv, &i);
        } else {
            usage();
        }
    }
    if (b->n == 0 || b->rounds < 1 || b->poll_ms < 1 ||
        (is_redis(b) && (b->redis_port == 0 || b->server_pid == 0)))
        usage();
}

/* ---- testyard and floor: DEALER sockets -------------------------------- */

static void
zsend(void *sock, const char *data, size_t len)
{
    while (zmq_send(sock, data, len, ZMQ_DONTWAIT) < 0) {
        if (errno != EINTR)
            bench_die("send: %s", zmq_strerror(errno));
    }
}

/* A reply for client i (testyard or floor). */
static void
on_zreply(struct bench *b, size_t i, const char *data, size_t len)
{
    struct client *c = &b->c[i];

    if (b->sys == SYS_TESTYARD &&
        memmem(data, len, "\"status\":\"ok\"", 13) == NULL)
        bench_die("client %zu: %.*s", i, (int)len, data);
    if (c->round == b->round)
        bench_die("client %zu: two answers in round %d", i, b->round);
    c->round = b->round;
    c->rel_ns = bench_now_ns();
    b->released++;
}

static void
zdrain(struct bench *b, size_t i)
{
    char buf[4096];
    int n;

    while ((n = zmq_recv(b->c[i].sock, buf, sizeof(buf), ZMQ_DONTWAIT)) >= 0)
        on_zreply(b, i, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf));
    if (errno != EAGAIN && errno != EINTR)
        bench_die("recv: %s", zmq_strerror(errno));
}

static void
zwait_all(struct bench *b)
{
    uint32_t idx[1024];

    /* A send may have swallowed a socket's wake-up: look at each once. */
    for (size_t i = 0; i < b->n; i++)
        zdrain(b, i);
    while (b->released < b->n) {
        int k = bench_zpoll_wait(b->zp, idx, 1024, WAIT_MS);

        if (k == 0)
            bench_die("round %d: %zu of %zu released after %d ms", b->round,
                      b->released, b->n, WAIT_MS);
        for (int j = 0; j < k; j++)
            zdrain(b, idx[j]);
    }
}

static void
zconnect(struct bench *b)
{
    int zero = 0, backlog = 4096;

    b->ctx = zmq_ctx_new();
    zmq_ctx_set(b->ctx, ZMQ_MAX_SOCKETS, (int)b->n + 64);
    zmq_ctx_set(b->ctx, ZMQ_IO_THREADS, 1);
    b->zp = bench_zpoll_new(b->n);
    for (size_t i = 0; i < b->n; i++) {
        char rid[64];
        void *s = zmq_socket(b->ctx, ZMQ_DEALER);

        if (s == NULL)
            bench_die("socket %zu: %s", i, zmq_strerror(errno));
        snprintf(rid, sizeof(rid), "ty-%zu-%x-bench", i, (unsigned)getpid());
        zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, strlen(rid));
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
        zmq_setsockopt(s, ZMQ_BACKLOG, &backlog, sizeof(backlog));
        if (zmq_connect(s, b->sp.endpoint) < 0)
            bench_die("connect: %s", zmq_strerror(errno));
        b->c[i].sock = s;
        bench_zpoll_add(b->zp, s, (uint32_t)i);
    }
}

/* Every client says hello (testyard) or sends one message (floor). */
static void
zhello(struct bench *b)
{
    for (size_t i = 0; i < b->n; i++) {
        struct ty_wire_req req = {.id = 1, .op = TY_WIRE_HELLO};
        size_t len;
        char *json;

        req.run = RUN_ID;
        req.group = "g";
        req.group_index = (int64_t)i;
        req.global_index = (int64_t)i;
        json = ty__wire_req_encode(&req, &len);
        zsend(b->c[i].sock, json, len);
        free(json);
    }
    zwait_all(b);
}

static void
zround(struct bench *b)
{
    struct ty_wire_req req = {.op = TY_WIRE_SIGNAL_WAIT};
    size_t len;
    char *json;

    req.id = b->round + 1;
    req.state = b->state;
    req.target = (int64_t)b->n;
    req.timeout_ms = WAIT_MS;
    json = ty__wire_req_encode(&req, &len);
    for (size_t i = 0; i < b->n; i++) {
        b->c[i].sent_ns = bench_now_ns();
        zsend(b->c[i].sock, json, len);
    }
    free(json);
    zwait_all(b);
}

static void
zclose(struct bench *b)
{
    for (size_t i = 0; i < b->n; i++)
        zmq_close(b->c[i].sock);
    bench_zpoll_destroy(&b->zp);
    zmq_ctx_term(b->ctx);
}

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

static void
repoll_add(struct bench *b, int fd, uint32_t tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};

    if (epoll_ctl(b->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        bench_die("epoll_ctl: %s", strerror(errno));
}

struct rctx {
    struct bench *b;
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
release_channel(const struct bench *b, char *buf, size_t size)
{
    snprintf(buf, size, "%s:release", b->nonce);
}

static void
released(struct bench *b, struct client *c, size_t i)
{
    if (c->round == b->round)
        bench_die("client %zu: two releases in round %d", i, b->round);
    c->round = b->round;
    c->rel_ns = bench_now_ns();
    c->due_ns = 0;
    b->released++;
}

static void
publish_release(struct bench *b, struct client *c)
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
on_cmd_reply(struct bench *b, size_t i, const struct resp_reply *r)
{
    struct client *c = &b->c[i];
    enum rwait was = c->wait;
    bool reached = counter_of(r) >= (int64_t)b->n;

    if (r->type == RESP_ERROR)
        bench_die("redis: %.*s", (int)r->str.len, r->str.p);
    c->wait = RW_NONE;
    if (was == RW_PUBLISH)
        return; /* PUBLISH's count of receivers */
    if (b->sys == SYS_REDIS) {
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
poll_due(struct bench *b)
{
    int64_t now = bench_now_ns(), next = INT64_MAX;
    char key[96];
    const char *argv[2] = {"GET", key};

    snprintf(key, sizeof(key), "%s:%s", b->nonce, b->state);
    for (size_t i = 0; i < b->n; i++) {
        struct client *c = &b->c[i];

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
        return WAIT_MS;
    return (int)((next - now) / 1000000) + 1;
}

/* A message on client i's subscriber connection. */
static void
on_sub_reply(struct bench *b, size_t i, const struct resp_reply *r)
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
rwait_all(struct bench *b)
{
    struct epoll_event ev[1024];

    while (b->released < b->n) {
        int timeout = b->sys == SYS_REDIS_POLL ? poll_due(b) : WAIT_MS;
        int k = epoll_wait(b->ep, ev, 1024, timeout);

        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0 && timeout < WAIT_MS)
            continue;
        if (k <= 0)
            bench_die("round %d: %zu of %zu released after %d ms", b->round,
                      b->released, b->n, WAIT_MS);
        for (int j = 0; j < k; j++) {
            struct rctx x = {b, ev[j].data.u32 / 2, ev[j].data.u32 % 2};
            struct client *c = &b->c[x.i];

            if (resp_read(x.sub ? c->sub : c->cmd, on_resp, &x) < 0)
                bench_die("redis closed a connection");
        }
    }
}

static void
rconnect(struct bench *b)
{
    char chan[64];
    const char *argv[2] = {"SUBSCRIBE", chan};

    snprintf(b->nonce, sizeof(b->nonce), "bench-%x", (unsigned)getpid());
    release_channel(b, chan, sizeof(chan));
    b->ep = epoll_create1(EPOLL_CLOEXEC);
    for (size_t i = 0; i < b->n; i++) {
        struct client *c = &b->c[i];

        c->cmd = resp_open(b->redis_port);
        repoll_add(b, resp_fd(c->cmd), (uint32_t)(i * 2));
        if (b->sys == SYS_REDIS_POLL)
            continue;
        c->sub = resp_open(b->redis_port);
        repoll_add(b, resp_fd(c->sub), (uint32_t)(i * 2 + 1));
        resp_cmd(c->sub, 2, argv);
        rflush(c->sub);
    }
    if (b->sys == SYS_REDIS)
        rwait_all(b); /* every subscription confirmed */
}

static void
rround(struct bench *b)
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
rclose(struct bench *b)
{
    for (size_t i = 0; i < b->n; i++) {
        resp_close(&b->c[i].cmd);
        resp_close(&b->c[i].sub);
    }
    close(b->ep);
}

/* ---- the rounds ------------------------------------------------------- */

static void
measure_round(const struct bench *b, double *release_ms, double *round_ms)
{
    int64_t first = INT64_MAX, last_sent = 0, last_rel = 0;

    for (size_t i = 0; i < b->n; i++) {
        const struct client *c = &b->c[i];

        if (c->sent_ns < first)
            first = c->sent_ns;
        if (c->sent_ns > last_sent)
            last_sent = c->sent_ns;
        if (c->rel_ns > last_rel)
            last_rel = c->rel_ns;
    }
    *release_ms = (double)(last_rel - last_sent) / 1e6;
    *round_ms = (double)(last_rel - first) / 1e6;
}

static void
connect_all(struct bench *b)
{
    if (is_redis(b)) {
        rconnect(b);
        return;
    }
    zconnect(b);
    zhello(b);
}

int
main(int argc, char **argv)
{
    struct bench b = {0};
    int total;
    double *rel, *rnd, cpu0, cpu1, ccpu0, ccpu1;
    long rss0, rss1, rss2;
    int64_t t0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    parse_args(&b, argc, argv);
    total = b.warmup + b.rounds;
    rel = bench_xcalloc((size_t)b.rounds, sizeof(double));
    rnd = bench_xcalloc((size_t)b.rounds, sizeof(double));
    b.c = bench_xcalloc(b.n, sizeof(*b.c));
    for (size_t i = 0; i < b.n; i++)
        b.c[i].round = -1;
    if (!is_redis(&b)) {
        svcproc_start(&b.sp,
                      b.sys == SYS_TESTYARD ? SVCPROC_SYNC : SVCPROC_ECHO,
                      RUN_ID, b.n);
        b.server_pid = b.sp.pid;
    }
    rss0 = bench_rss_kib(b.server_pid);
    t0 = bench_now_ns();
    connect_all(&b);
    bench_result("connect_ms", (double)(bench_now_ns() - t0) / 1e6);
    rss1 = bench_rss_kib(b.server_pid);
    cpu0 = bench_cpu_ms(b.server_pid);
    ccpu0 = bench_cpu_ms(getpid());
    for (b.round = 1; b.round <= total; b.round++) {
        snprintf(b.state, sizeof(b.state), "round-%d", b.round);
        b.released = 0;
        if (is_redis(&b))
            rround(&b);
        else
            zround(&b);
        if (b.round > b.warmup)
            measure_round(&b, &rel[b.round - b.warmup - 1],
                          &rnd[b.round - b.warmup - 1]);
    }
    cpu1 = bench_cpu_ms(b.server_pid);
    ccpu1 = bench_cpu_ms(getpid());
    rss2 = bench_rss_kib(b.server_pid);
    bench_result("release_ms", bench_percentile(rel, (size_t)b.rounds, 50));
    bench_result("release_p90_ms", bench_percentile(rel, (size_t)b.rounds, 90));
    bench_result("round_ms", bench_percentile(rnd, (size_t)b.rounds, 50));
    bench_result("server_cpu_us_per_signal",
                 (cpu1 - cpu0) * 1000.0 / ((double)total * (double)b.n));
    bench_result("client_cpu_us_per_signal",
                 (ccpu1 - ccpu0) * 1000.0 / ((double)total * (double)b.n));
    bench_result("server_rss_per_instance_bytes",
                 (double)(rss2 - rss0) * 1024.0 / (double)b.n);
    bench_result("server_rss_connected_per_instance_bytes",
                 (double)(rss1 - rss0) * 1024.0 / (double)b.n);
    if (is_redis(&b))
        rclose(&b);
    else
        zclose(&b);
    svcproc_stop(&b.sp);
    free(rel);
    free(rnd);
    free(b.c);
    return 0;
}

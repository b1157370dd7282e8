/*
 * pubsub.c — one publisher, N subscribers, M messages, against one of:
 *
 *   testyard  the coordinator's sync service in a child process: the
 *             publisher sends `publish` requests; each subscriber keeps
 *             one `fetch` parked on the topic from its cursor and asks
 *             again from `next` as each answer arrives (what ty_sub_next
 *             does). Every client speaks ZMTP itself over a plain socket
 *             (lib/zmtp.c), as lean as the Redis clients
 *   testyard-zmq  the same with a libzmq DEALER per client, as a plan
 *             using a ZeroMQ binding would (the C SDK speaks ZMTP itself)
 *   redis     Redis pub/sub: N connections SUBSCRIBE a channel, the
 *             publisher PUBLISHes on its own connection
 *
 * Every client lives in this process on one thread with one epoll. The
 * publisher keeps up to --window requests in flight. Each value carries
 * the monotonic time it was sent ({"t":<ns>,"p":"xxx…"}, --size bytes in
 * all); a delivery's latency is the time it reached a subscriber minus
 * that. Printed: latency percentiles over all N×M deliveries and the
 * throughput, deliveries per second from the first publish to the last
 * delivery. Clients parse no more than they need (find "t", find "next")
 * on both sides, so the numbers are the servers'.
 *
 *   pubsub --system testyard|testyard-zmq|redis -n N -m M [--size B]
 *          [--window W] [--redis-port P]
 */
#include "lib/bench.h"
#include "lib/resp.h"
#include "lib/svcproc.h"
#include "lib/zmtp.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <zmq.h>

#define RUN_ID "bench"
#define TOPIC "bench-topic"
#define WAIT_MS 60000

struct sub {
    void *sock;          /* testyard-zmq */
    struct zmtp_conn *z; /* testyard */
    struct resp_conn *rc;
    int64_t next; /* testyard: cursor */
    size_t got;
};

struct bench {
    bool redis;
    bool zmq; /* testyard with libzmq clients */
    size_t n, m, size, window;
    int redis_port;
    struct svcproc sp;
    void *ctx;
    struct bench_zpoll *zp;
    int ep;
    struct sub *subs;
    void *pub;             /* testyard-zmq publisher socket */
    struct zmtp_conn *pz;  /* testyard publisher connection */
    struct resp_conn *prc; /* redis publisher connection */
    size_t sent, acked;    /* publishes */
    size_t done;           /* subscribers that got all M */
    double *lat;           /* N×M latencies, ms */
    size_t nlat;
    char *pad;
    char *val, *req; /* scratch: a value, a request */
    int64_t first_ns, last_ns;
};

static void
usage(void)
{
    fprintf(stderr, "usage: pubsub --system testyard|testyard-zmq|redis -n N "
                    "-m M [--size B] [--window W] [--redis-port P]\n");
    exit(64);
}

static void
parse_args(struct bench *b, int argc, char **argv)
{
    b->size = 128;
    b->window = 32;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--system") == 0 && i + 1 < argc) {
            i++;
            if (strcmp(argv[i], "redis") == 0)
                b->redis = true;
            else if (strcmp(argv[i], "testyard-zmq") == 0)
                b->zmq = true;
            else if (strcmp(argv[i], "testyard") != 0)
                usage();
        } else if (strcmp(argv[i], "-n") == 0) {
            b->n = (size_t)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "-m") == 0) {
            b->m = (size_t)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "--size") == 0) {
            b->size = (size_t)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "--window") == 0) {
            b->window = (size_t)bench_arg_long(argc, argv, &i);
        } else if (strcmp(argv[i], "--redis-port") == 0) {
            b->redis_port = (int)bench_arg_long(argc, argv, &i);
        } else {
            usage();
        }
    }
    if (b->n == 0 || b->m == 0 || b->window == 0 || b->size < 32 ||
        (b->redis && b->redis_port == 0))
        usage();
}

/* The value of message k: {"t":<now ns>,"p":"xxx"} padded to b->size. */
static int
make_value(const struct bench *b, char *buf, size_t size)
{
    char head[48];
    int h = snprintf(head, sizeof(head), "{\"t\":%lld,\"p\":\"",
                     (long long)bench_now_ns());
    size_t padlen = b->size > (size_t)h + 2 ? b->size - (size_t)h - 2 : 0;

    return snprintf(buf, size, "%s%.*s\"}", head, (int)padlen, b->pad);
}

/* Record the latency of every "t":<ns> in data; returns how many. */
static size_t
record(struct bench *b, const char *data, size_t len)
{
    const char *p = data, *end = data + len;
    int64_t now = bench_now_ns();
    size_t k = 0;

    while ((p = memmem(p, (size_t)(end - p), "\"t\":", 4)) != NULL) {
        long long t = strtoll(p + 4, NULL, 10);

        if (b->nlat < b->n * b->m)
            b->lat[b->nlat++] = (double)(now - t) / 1e6;
        p += 4;
        k++;
    }
    b->last_ns = now;
    return k;
}

static void
delivered(struct bench *b, struct sub *s, size_t k)
{
    bool was_done = s->got >= b->m;

    s->got += k;
    if (!was_done && s->got >= b->m)
        b->done++;
}

/* ---- testyard -------------------------------------------------------- */

static void
zsend(void *sock, const char *data, size_t len)
{
    while (zmq_send(sock, data, len, ZMQ_DONTWAIT) < 0)
        if (errno != EINTR)
            bench_die("send: %s", zmq_strerror(errno));
}

/* Send on client i's connection (i == n: the publisher's). */
static void
tsend(struct bench *b, size_t i, const char *data, size_t len)
{
    struct zmtp_conn *z;

    if (b->zmq) {
        zsend(i == b->n ? b->pub : b->subs[i].sock, data, len);
        return;
    }
    z = i == b->n ? b->pz : b->subs[i].z;
    zmtp_send(z, data, len);
}

/* Connect client i (i == n: the publisher) and say hello. */
static void
topen(struct bench *b, size_t i)
{
    char rid[64], hello[512];
    int zero = 0, n;

    snprintf(rid, sizeof(rid), "ty-%zu-%x-bench", i, (unsigned)getpid());
    if (b->zmq) {
        void *s = zmq_socket(b->ctx, ZMQ_DEALER);

        if (s == NULL)
            bench_die("socket: %s", zmq_strerror(errno));
        zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, strlen(rid));
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
        if (zmq_connect(s, b->sp.endpoint) < 0)
            bench_die("connect: %s", zmq_strerror(errno));
        bench_zpoll_add(b->zp, s, (uint32_t)i);
        *(i == b->n ? &b->pub : &b->subs[i].sock) = s;
    } else {
        struct zmtp_conn *z = zmtp_open(b->sp.endpoint, rid);
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};

        if (epoll_ctl(b->ep, EPOLL_CTL_ADD, zmtp_fd(z), &ev) < 0)
            bench_die("epoll_ctl: %s", strerror(errno));
        *(i == b->n ? &b->pz : &b->subs[i].z) = z;
    }
    n = snprintf(hello, sizeof(hello),
                 "{\"id\":1,\"op\":\"hello\",\"run\":\"%s\",\"group\":\"g\","
                 "\"group_index\":%zu,\"global_index\":%zu,"
                 "\"secret\":\"%s\"}",
                 RUN_ID, i, i, SVCPROC_SECRET);
    tsend(b, i, hello, (size_t)n);
}

static void
zfetch(struct bench *b, size_t i)
{
    char req[256];
    struct sub *s = &b->subs[i];
    int n = snprintf(req, sizeof(req),
                     "{\"id\":%lld,\"op\":\"fetch\",\"topic\":\"" TOPIC
                     "\",\"from\":%lld,\"max\":1000,\"timeout_ms\":%d}",
                     (long long)s->next + 1, (long long)s->next, WAIT_MS);

    tsend(b, i, req, (size_t)n);
}

static void
zpublish_more(struct bench *b)
{
    while (b->sent < b->m && b->sent - b->acked < b->window) {
        int n;

        make_value(b, b->val, b->size + 64);
        n = snprintf(b->req, b->size + 256,
                     "{\"id\":%zu,\"op\":\"publish\",\"topic\":\"" TOPIC
                     "\",\"value\":%s}",
                     b->sent + 2, b->val);
        if (b->sent == 0)
            b->first_ns = bench_now_ns();
        tsend(b, b->n, b->req, (size_t)n);
        b->sent++;
    }
}

static int64_t
json_int(const char *data, size_t len, const char *key)
{
    const char *p = memmem(data, len, key, strlen(key));

    return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

/* One reply on connection i (i == n: the publisher). */
static void
zreply(struct bench *b, size_t i, const char *data, size_t len, bool started)
{
    struct sub *s;

    if (memmem(data, len, "\"status\":\"ok\"", 13) == NULL)
        bench_die("socket %zu: %.*s", i, (int)(len < 300 ? len : 300), data);
    if (!started) /* hello answered */
        return;
    if (i == b->n) {
        b->acked++;
        zpublish_more(b);
        return;
    }
    s = &b->subs[i];
    delivered(b, s, record(b, data, len));
    s->next = json_int(data, len, "\"next\":");
    if (s->next < 1)
        bench_die("subscriber %zu: no cursor in the answer", i);
    if (s->got < b->m)
        zfetch(b, i);
}

static size_t
zdrain(struct bench *b, size_t i, bool started)
{
    void *sock = i == b->n ? b->pub : b->subs[i].sock;
    size_t k = 0;
    zmq_msg_t msg;

    for (;;) {
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&msg);
            if (errno == EAGAIN || errno == EINTR)
                return k;
            bench_die("recv: %s", zmq_strerror(errno));
        }
        zreply(b, i, zmq_msg_data(&msg), zmq_msg_size(&msg), started);
        zmq_msg_close(&msg);
        k++;
    }
}

struct mctx {
    struct bench *b;
    size_t i, k;
    bool started;
};

static void
on_frame(void *arg, const char *data, size_t len, bool more)
{
    struct mctx *x = arg;

    if (more)
        bench_die("connection %zu: an answer of more than one frame", x->i);
    zreply(x->b, x->i, data, len, x->started);
    x->k++;
}

/* Read what connection i has; returns how many answers. */
static size_t
tdrain(struct bench *b, size_t i, bool started)
{
    struct mctx x = {b, i, 0, started};

    if (b->zmq)
        return zdrain(b, i, started);
    if (zmtp_read(i == b->n ? b->pz : b->subs[i].z, on_frame, &x) < 0)
        bench_die("connection %zu: the service closed it", i);
    return x.k;
}

/* Wait for ready connections; their indexes go in idx. */
static int
twait(struct bench *b, uint32_t *idx, int max)
{
    struct epoll_event ev[1024];
    int k;

    if (b->zmq)
        return bench_zpoll_wait(b->zp, idx, max, WAIT_MS);
    if (max > 1024)
        max = 1024;
    do
        k = epoll_wait(b->ep, ev, max, WAIT_MS);
    while (k < 0 && errno == EINTR);
    for (int j = 0; j < k; j++)
        idx[j] = ev[j].data.u32;
    return k < 0 ? 0 : k;
}

static void
zrun(struct bench *b)
{
    uint32_t idx[1024];
    size_t hellos = 0;

    svcproc_start(&b->sp, SVCPROC_SYNC, RUN_ID, b->n + 1);
    if (b->zmq) {
        b->ctx = zmq_ctx_new();
        zmq_ctx_set(b->ctx, ZMQ_MAX_SOCKETS, (int)b->n + 64);
        zmq_ctx_set(b->ctx, ZMQ_IO_THREADS, 1);
        b->zp = bench_zpoll_new(b->n + 1);
    } else {
        b->ep = epoll_create1(EPOLL_CLOEXEC);
    }
    for (size_t i = 0; i <= b->n; i++)
        topen(b, i);
    /* A send may have swallowed a socket's wake-up: look at each once. */
    for (size_t i = 0; b->zmq && i <= b->n; i++)
        hellos += tdrain(b, i, false);
    while (hellos < b->n + 1) {
        int k = twait(b, idx, 1024);

        if (k == 0)
            bench_die("hello: %zu of %zu answered", hellos, b->n + 1);
        for (int j = 0; j < k; j++)
            hellos += tdrain(b, idx[j], false);
    }
    for (size_t i = 0; i < b->n; i++) {
        b->subs[i].next = 1;
        zfetch(b, i);
    }
    zpublish_more(b);
    for (size_t i = 0; b->zmq && i <= b->n; i++)
        tdrain(b, i, true);
    while (b->done < b->n) {
        int k = twait(b, idx, 1024);

        if (k == 0)
            bench_die("%zu of %zu subscribers done after %d ms", b->done, b->n,
                      WAIT_MS);
        for (int j = 0; j < k; j++)
            tdrain(b, idx[j], true);
    }
    for (size_t i = 0; i < b->n; i++) {
        if (b->zmq)
            zmq_close(b->subs[i].sock);
        else
            zmtp_close(&b->subs[i].z);
    }
    if (b->zmq) {
        zmq_close(b->pub);
        bench_zpoll_destroy(&b->zp);
        zmq_ctx_term(b->ctx);
    } else {
        zmtp_close(&b->pz);
        close(b->ep);
    }
    svcproc_stop(&b->sp);
}

/* ---- redis ------------------------------------------------------------ */

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
rpublish_more(struct bench *b)
{
    const char *argv[3] = {"PUBLISH", TOPIC, b->val};

    if (b->sent < b->m && b->sent - b->acked < b->window) {
        while (b->sent < b->m && b->sent - b->acked < b->window) {
            make_value(b, b->val, b->size + 64);
            if (b->sent == 0)
                b->first_ns = bench_now_ns();
            resp_cmd(b->prc, 3, argv);
            b->sent++;
        }
        rflush(b->prc);
    }
}

struct rctx {
    struct bench *b;
    size_t i;
    size_t subscribed;
};

static void
on_resp(void *arg, const struct resp_reply *r)
{
    struct rctx *x = arg;
    struct bench *b = x->b;

    if (r->type == RESP_ERROR)
        bench_die("redis: %.*s", (int)r->str.len, r->str.p);
    if (x->i == b->n) {
        b->acked++;
        return;
    }
    if (r->type != RESP_ARRAY || r->nelem < 3)
        bench_die("redis: unexpected reply on a subscriber connection");
    if (r->elem[0]->str.len == 9 &&
        memcmp(r->elem[0]->str.p, "subscribe", 9) == 0) {
        x->subscribed++;
        return;
    }
    delivered(b, &b->subs[x->i],
              record(b, r->elem[2]->str.p, r->elem[2]->str.len));
}

static void
radd(int ep, int fd, uint32_t i)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = i};

    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        bench_die("epoll_ctl: %s", strerror(errno));
}

/* Wait until cond(b, subscribed) holds, reading every connection. */
static void
rloop(struct bench *b, size_t want_subscribed)
{
    struct epoll_event ev[1024];
    struct rctx x = {b, 0, 0};

    for (;;) {
        int k;

        if (want_subscribed ? x.subscribed >= want_subscribed : b->done >= b->n)
            return;
        k = epoll_wait(b->ep, ev, 1024, WAIT_MS);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            bench_die("redis: nothing for %d ms", WAIT_MS);
        for (int j = 0; j < k; j++) {
            x.i = ev[j].data.u32;
            if (resp_read(x.i == b->n ? b->prc : b->subs[x.i].rc, on_resp, &x) <
                0)
                bench_die("redis closed a connection");
            if (x.i == b->n)
                rpublish_more(b);
        }
    }
}

static void
rrun(struct bench *b)
{
    const char *argv[2] = {"SUBSCRIBE", TOPIC};

    b->ep = epoll_create1(EPOLL_CLOEXEC);
    for (size_t i = 0; i < b->n; i++) {
        b->subs[i].rc = resp_open(b->redis_port);
        radd(b->ep, resp_fd(b->subs[i].rc), (uint32_t)i);
        resp_cmd(b->subs[i].rc, 2, argv);
        rflush(b->subs[i].rc);
    }
    b->prc = resp_open(b->redis_port);
    radd(b->ep, resp_fd(b->prc), (uint32_t)b->n);
    rloop(b, b->n);
    rpublish_more(b);
    rloop(b, 0);
    for (size_t i = 0; i < b->n; i++)
        resp_close(&b->subs[i].rc);
    resp_close(&b->prc);
    close(b->ep);
}

int
main(int argc, char **argv)
{
    struct bench b = {0};
    double secs;

    setvbuf(stdout, NULL, _IOLBF, 0);
    parse_args(&b, argc, argv);
    b.subs = bench_xcalloc(b.n, sizeof(*b.subs));
    b.lat = bench_xcalloc(b.n * b.m, sizeof(double));
    b.pad = bench_xcalloc(1, b.size + 1);
    memset(b.pad, 'x', b.size);
    b.val = bench_xcalloc(1, b.size + 64);
    b.req = bench_xcalloc(1, b.size + 256);
    if (b.redis)
        rrun(&b);
    else
        zrun(&b);
    secs = (double)(b.last_ns - b.first_ns) / 1e9;
    bench_result("deliveries", (double)b.nlat);
    bench_result("throughput_per_s", (double)b.nlat / secs);
    bench_result("latency_p50_ms", bench_percentile(b.lat, b.nlat, 50));
    bench_result("latency_p99_ms", bench_percentile(b.lat, b.nlat, 99));
    bench_result("latency_max_ms", bench_percentile(b.lat, b.nlat, 100));
    free(b.lat);
    free(b.subs);
    free(b.pad);
    free(b.val);
    free(b.req);
    return 0;
}

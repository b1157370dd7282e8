/*
 * barrier_clients.c — the barrier benchmark's clients that are not Redis
 * (see barrier.h): libzmq DEALER sockets, the same protocol spoken over
 * plain sockets with lib/zmtp.c, and lines over plain sockets for the TCP
 * floor; and what every kind shares: the requests, and the check of each
 * testyard answer (status ok, this round's id, a seq from 1 to N that no
 * other client got this round).
 */
#include "barrier.h"

#include "ty_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zmq.h>

/* ---- answers ------------------------------------------------------------ */

/* A testyard answer must be ok, for this round's request (id round + 1;
 * hello is id 1 in round 0), with a seq no one else got this round. */
static void
check_release(struct bar *b, size_t i, int64_t id, int64_t seq)
{
    if (id != b->round + 1)
        bench_die("client %zu, round %d: the answer to request %lld", i,
                  b->round, (long long)id);
    if (b->round > 0) {
        if (seq < 1 || seq > (int64_t)b->n || b->seen[seq - 1])
            bench_die("client %zu, round %d: seq %lld twice or out of range", i,
                      b->round, (long long)seq);
        b->seen[seq - 1] = 1;
    }
}

static void
released(struct bar *b, size_t i)
{
    struct bar_client *c = &b->c[i];

    if (c->round == b->round)
        bench_die("client %zu: two answers in round %d", i, b->round);
    c->round = b->round;
    c->rel_ns = bench_now_ns();
    b->released++;
}

void
bar_on_answer(struct bar *b, size_t i, const char *data, size_t len)
{
    struct ty_wire_resp r;
    char why[256];

    if (b->check) {
        if (ty__wire_resp_decode(data, len, &r, why, sizeof(why)) < 0)
            bench_die("client %zu: bad answer (%s): %.*s", i, why, (int)len,
                      data);
        if (r.status != TY_WIRE_OK)
            bench_die("client %zu, round %d: %.*s", i, b->round, (int)len,
                      data);
        check_release(b, i, r.id, r.seq);
        if (b->round == 0 && b->board) {
            if (r.board < 1)
                bench_die("client %zu: no release board slots: %.*s", i,
                          (int)len, data);
            b->c[i].slot = r.board;
        }
        ty__wire_resp_release(&r);
    }
    released(b, i);
}

/* The slot holds this round's answer once the id in it is this round's
 * request's (stored after the seq). A wake-up for a slot not yet written,
 * or one already read, is not an answer. */
void
bar_on_board(struct bar *b, size_t i)
{
    const struct ty_board_slot *s = &b->slots[b->c[i].slot - 1];
    uint64_t id = __atomic_load_n(&s->id, __ATOMIC_ACQUIRE);

    if (b->round == 0 || id != (uint64_t)b->round + 1 ||
        b->c[i].round == b->round)
        return;
    check_release(b, i, (int64_t)id,
                  __atomic_load_n(&s->seq, __ATOMIC_RELAXED));
    released(b, i);
}

char *
bar_round_request(const struct bar *b, size_t *len)
{
    struct ty_wire_req req = {.op = TY_WIRE_SIGNAL_WAIT};
    char *json;

    req.id = b->round + 1;
    req.state = b->state;
    req.target = (int64_t)b->n;
    req.timeout_ms = BAR_WAIT_MS;
    json = ty__wire_req_encode(&req, len);
    if (json == NULL || *len < 2 || json[*len - 1] != '}')
        bench_die("cannot encode a request");
    json[--*len] = '\0';
    return json;
}

size_t
bar_request_end(const struct bar_client *c, char *buf, size_t size)
{
    int n = c->slot > 0
                ? snprintf(buf, size, ",\"board\":%lld}", (long long)c->slot)
                : snprintf(buf, size, "}");

    return (size_t)n;
}

char *
bar_hello_request(const struct bar *b, size_t i, size_t *len)
{
    struct ty_wire_req req = {.id = 1, .op = TY_WIRE_HELLO};

    req.run = BAR_RUN_ID;
    req.group = "g";
    req.group_index = (int64_t)i;
    req.global_index = (int64_t)i;
    req.secret = SVCPROC_SECRET;
    req.board = b->board ? 1 : 0;
    return ty__wire_req_encode(&req, len);
}

void
bar_board_map(struct bar *b)
{
    char path[128];
    struct ty_board_header h;
    int fd;

    snprintf(path, sizeof(path), "%s/.sync/board", b->sp.run_dir);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
        bench_die("%s: %s", path, strerror(errno));
    b->maplen = sizeof(h) + h.nslots * sizeof(struct ty_board_slot);
    b->map = mmap(NULL, b->maplen, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (b->map == MAP_FAILED)
        bench_die("mmap %s: %s", path, strerror(errno));
    b->slots = (const struct ty_board_slot *)(const void *)((char *)b->map +
                                                            sizeof(h));
}

void
bar_board_watch(struct bar *b, size_t i, int ep)
{
    char path[128];
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET,
                             .data.u32 = (uint32_t)i | BAR_BOARD_TAG};

    snprintf(path, sizeof(path), "%s/.sync/wake", b->sp.run_dir);
    b->c[i].wake = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (b->c[i].wake < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, b->c[i].wake, &ev) < 0)
        bench_die("%s: %s", path, strerror(errno));
}

void
bar_epoll_add(struct bar *b, int fd, uint32_t tag)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};

    if (epoll_ctl(b->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        bench_die("epoll_ctl: %s", strerror(errno));
}

void
bar_wait_writable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};

    poll(&p, 1, 1000);
}

void
bar_stuck(const struct bar *b)
{
    bench_die("round %d: %zu of %zu released after %d ms", b->round,
              b->released, b->n, BAR_WAIT_MS);
}

/* ---- libzmq DEALER sockets ---------------------------------------------- */

static void
zsend(void *sock, const char *data, size_t len)
{
    while (zmq_send(sock, data, len, ZMQ_DONTWAIT) < 0) {
        if (errno != EINTR)
            bench_die("send: %s", zmq_strerror(errno));
    }
}

static void
zdrain(struct bar *b, size_t i)
{
    char buf[4096];
    int n;

    while ((n = zmq_recv(b->c[i].sock, buf, sizeof(buf), ZMQ_DONTWAIT)) >= 0)
        bar_on_answer(b, i, buf,
                      (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf));
    if (errno != EAGAIN && errno != EINTR)
        bench_die("recv: %s", zmq_strerror(errno));
}

static void
zwait_all(struct bar *b)
{
    uint32_t idx[1024];

    /* A send may have swallowed a socket's wake-up: look at each once. */
    for (size_t i = 0; i < b->n; i++)
        zdrain(b, i);
    while (b->released < b->n) {
        int k = bench_zpoll_wait(b->zp, idx, 1024, BAR_WAIT_MS);

        if (k == 0)
            bar_stuck(b);
        for (int j = 0; j < k; j++) {
            if (idx[j] & BAR_BOARD_TAG)
                bar_on_board(b, idx[j] & ~BAR_BOARD_TAG);
            else
                zdrain(b, idx[j]);
        }
    }
}

/* After hello: map the board and watch every client's wake FIFO. */
static void
board_start(struct bar *b, int ep)
{
    if (!b->board)
        return;
    bar_board_map(b);
    for (size_t i = 0; i < b->n; i++)
        bar_board_watch(b, i, ep);
}

static void
board_stop(struct bar *b)
{
    if (!b->board)
        return;
    for (size_t i = 0; i < b->n; i++)
        close(b->c[i].wake);
    munmap(b->map, b->maplen);
}

/* Every client connects and says hello (the echo floor sends it back). */
static void
zconnect(struct bar *b)
{
    int zero = 0, backlog = 4096;

    b->ctx = zmq_ctx_new();
    zmq_ctx_set(b->ctx, ZMQ_MAX_SOCKETS, (int)b->n + 64);
    zmq_ctx_set(b->ctx, ZMQ_IO_THREADS, 1);
    b->zp = bench_zpoll_new(b->n);
    for (size_t i = 0; i < b->n; i++) {
        char rid[64];
        void *s = zmq_socket(b->ctx, ZMQ_DEALER);
        size_t len;
        char *json;

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
        json = bar_hello_request(b, i, &len);
        zsend(s, json, len);
        free(json);
    }
    zwait_all(b);
    board_start(b, bench_zpoll_fd(b->zp));
}

/* Every client sends this round's request (with its board slot, when it
 * has one) through send. */
static void
send_round(struct bar *b,
           void (*send)(struct bar *b, size_t i, const char *msg, size_t len))
{
    size_t len;
    char *json = bar_round_request(b, &len);
    char msg[512];

    if (len + 64 > sizeof(msg))
        bench_die("a request of %zu bytes", len);
    memcpy(msg, json, len);
    free(json);
    for (size_t i = 0; i < b->n; i++) {
        size_t n =
            len + bar_request_end(&b->c[i], msg + len, sizeof(msg) - len);

        b->c[i].sent_ns = bench_now_ns();
        send(b, i, msg, n);
    }
}

static void
zsend_one(struct bar *b, size_t i, const char *msg, size_t len)
{
    zsend(b->c[i].sock, msg, len);
}

static void
zround(struct bar *b)
{
    send_round(b, zsend_one);
    zwait_all(b);
}

static void
zclose(struct bar *b)
{
    board_stop(b);
    for (size_t i = 0; i < b->n; i++)
        zmq_close(b->c[i].sock);
    bench_zpoll_destroy(&b->zp);
    zmq_ctx_term(b->ctx);
}

/* ---- ZMTP over plain sockets (m for minimal) ---------------------------- */

struct lctx {
    struct bar *b;
    size_t i;
};

static void
on_frame(void *arg, const char *data, size_t len, bool more)
{
    struct lctx *x = arg;

    if (more)
        bench_die("client %zu: an answer of more than one frame", x->i);
    bar_on_answer(x->b, x->i, data, len);
}

/* Wait until every client was answered this round, handing each ready
 * epoll tag (the client index) to ready(). */
static void
epoll_wait_all(struct bar *b, void (*ready)(struct bar *b, uint32_t tag))
{
    struct epoll_event ev[1024];

    while (b->released < b->n) {
        int k = epoll_wait(b->ep, ev, 1024, BAR_WAIT_MS);

        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            bar_stuck(b);
        for (int j = 0; j < k; j++)
            ready(b, ev[j].data.u32);
    }
}

static void
mready(struct bar *b, uint32_t tag)
{
    struct lctx x = {b, tag};

    if (tag & BAR_BOARD_TAG) {
        bar_on_board(b, tag & ~BAR_BOARD_TAG);
        return;
    }
    if (zmtp_read(b->c[x.i].z, on_frame, &x) < 0)
        bench_die("client %zu: the server closed the connection", x.i);
}

static void
mwait_all(struct bar *b)
{
    epoll_wait_all(b, mready);
}

/* Each client connects (zmtp_open waits for the handshake) and says
 * hello; then the answers are read together. */
static void
mconnect(struct bar *b)
{
    b->ep = epoll_create1(EPOLL_CLOEXEC);
    for (size_t i = 0; i < b->n; i++) {
        char rid[64];
        size_t len;
        char *json = bar_hello_request(b, i, &len);

        snprintf(rid, sizeof(rid), "ty-%zu-%x-bench", i, (unsigned)getpid());
        b->c[i].z = zmtp_open(b->sp.endpoint, rid);
        bar_epoll_add(b, zmtp_fd(b->c[i].z), (uint32_t)i);
        zmtp_send(b->c[i].z, json, len);
        free(json);
    }
    mwait_all(b);
    for (size_t i = 0; i < b->n; i++)
        if (!zmtp_ready(b->c[i].z))
            bench_die("client %zu: answered before the handshake", i);
    board_start(b, b->ep);
}

static void
msend_one(struct bar *b, size_t i, const char *msg, size_t len)
{
    zmtp_send(b->c[i].z, msg, len);
}

static void
mround(struct bar *b)
{
    send_round(b, msend_one);
    mwait_all(b);
}

static void
mclose(struct bar *b)
{
    board_stop(b);
    for (size_t i = 0; i < b->n; i++)
        zmtp_close(&b->c[i].z);
    close(b->ep);
}

/* ---- the TCP barrier: lines over plain sockets --------------------------- */

static void
twrite(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);

        if (n < 0 && errno == EAGAIN)
            bar_wait_writable(fd);
        else if (n < 0 && errno != EINTR)
            bench_die("write: %s", strerror(errno));
        else if (n > 0)
            data += n, len -= (size_t)n;
    }
}

/* Each line read is a release. */
static void
tread(struct bar *b, size_t i)
{
    char buf[4096];
    ssize_t n;

    while ((n = read(b->c[i].fd, buf, sizeof(buf))) > 0) {
        for (ssize_t j = 0; j < n; j++)
            if (buf[j] == '\n')
                bar_on_answer(b, i, NULL, 0);
        if ((size_t)n < sizeof(buf))
            return;
    }
    if (n == 0 || errno != EAGAIN)
        bench_die("client %zu: the server closed the connection", i);
}

static void
tready(struct bar *b, uint32_t tag)
{
    tread(b, tag);
}

static void
twait_all(struct bar *b)
{
    epoll_wait_all(b, tready);
}

static void
tconnect(struct bar *b)
{
    b->ep = epoll_create1(EPOLL_CLOEXEC);
    for (size_t i = 0; i < b->n; i++) {
        b->c[i].fd = bench_tcp_connect(b->sp.endpoint);
        bar_epoll_add(b, b->c[i].fd, (uint32_t)i);
    }
}

/* The same bytes as testyard's request, plus the newline that ends it. */
static void
tround(struct bar *b)
{
    size_t len;
    char *json = bar_round_request(b, &len), *line = realloc(json, len + 2);

    if (line == NULL)
        bench_die("out of memory");
    line[len] = '}';
    line[len + 1] = '\n';
    for (size_t i = 0; i < b->n; i++) {
        b->c[i].sent_ns = bench_now_ns();
        twrite(b->c[i].fd, line, len + 2);
    }
    free(line);
    twait_all(b);
}

static void
tclose(struct bar *b)
{
    for (size_t i = 0; i < b->n; i++)
        close(b->c[i].fd);
    close(b->ep);
}

const struct bar_ops bar_zmq_ops = {zconnect, zround, zclose};
const struct bar_ops bar_zmtp_ops = {mconnect, mround, mclose};
const struct bar_ops bar_lines_ops = {tconnect, tround, tclose};

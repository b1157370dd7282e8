/*
 * ping — instances find each other over a topic and exchange messages over
 * TCP each round, between a start and an end barrier, recording round trip
 * times. Each instance pings every instance of the other groups (every
 * other instance when there is a single group), on one connection per peer
 * kept for the whole run, and checks that what comes back is what it sent
 * and that it came back within latency_budget.
 *
 * Messages are framed as a 4-byte big-endian length and the payload; each
 * instance runs an echo server thread per accepted connection. Both ends
 * set TCP_NODELAY: a frame is two writes, and under Nagle's algorithm the
 * second would wait for the peer's delayed ACK of the first (~40 ms), so
 * an unshaped round trip would read 40 ms instead of well under one.
 */
#include <testyard.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

struct peer {
    char group[64];
    int index;
    char host[64];
    int port;
    int fd;
};

static int
io_full(int fd, void *buf, size_t len, int writing)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void *
echo_conn(void *arg)
{
    int fd = (int)(intptr_t)arg;
    char *buf = NULL;

    for (;;) {
        uint32_t be, len;
        char *nb;

        if (io_full(fd, &be, 4, 0) < 0)
            break;
        len = ntohl(be);
        if (len > (64u << 20))
            break;
        nb = realloc(buf, len ? len : 1);
        if (nb == NULL)
            break;
        buf = nb;
        if (io_full(fd, buf, len, 0) < 0 || io_full(fd, &be, 4, 1) < 0 ||
            io_full(fd, buf, len, 1) < 0)
            break;
    }
    free(buf);
    close(fd);
    return NULL;
}

static void *
echo_server(void *arg)
{
    int lfd = (int)(intptr_t)arg, one = 1;

    for (;;) {
        pthread_t t;
        int fd = accept(lfd, NULL, NULL);

        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL;
        }
        /* The reply goes out as a length and a body: with Nagle's
         * algorithm the body would wait for the ACK of the length, which
         * the peer delays (~40 ms), and the round trip would measure that. */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (pthread_create(&t, NULL, echo_conn, (void *)(intptr_t)fd) != 0)
            close(fd);
        else
            pthread_detach(t);
    }
}

/* The address other instances reach us at: the local side of a route to
 * the sync service (127.0.0.1 on host networking). */
static void
advertised_host(char *buf, size_t size)
{
    const char *sync = getenv("SYNC_SERVICE_HOST");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    snprintf(buf, size, "127.0.0.1");
    if (fd < 0 || sync == NULL || inet_pton(AF_INET, sync, &sa.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0 ||
        inet_ntop(AF_INET, &sa.sin_addr, buf, (socklen_t)size) == NULL)
        snprintf(buf, size, "127.0.0.1");
    if (fd >= 0)
        close(fd);
}

static int
listen_any(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

static int
announce(struct ty *ty, const char *host, int port)
{
    char json[256];

    snprintf(json, sizeof(json),
             "{\"group\":\"%s\",\"index\":%d,\"host\":\"%s\",\"port\":%d}",
             ty_group_id(ty), ty_global_index(ty), host, port);
    return ty_publish(ty, "peers", json) < 0 ? -1 : 0;
}

static int
parse_peer(const char *json, struct peer *p)
{
    cJSON *o = cJSON_Parse(json);
    const cJSON *g = cJSON_GetObjectItem(o, "group");
    const cJSON *i = cJSON_GetObjectItem(o, "index");
    const cJSON *h = cJSON_GetObjectItem(o, "host");
    const cJSON *pt = cJSON_GetObjectItem(o, "port");
    int ok = cJSON_IsString(g) && cJSON_IsNumber(i) && cJSON_IsString(h) &&
             cJSON_IsNumber(pt);

    if (ok) {
        snprintf(p->group, sizeof(p->group), "%s", g->valuestring);
        snprintf(p->host, sizeof(p->host), "%s", h->valuestring);
        p->index = i->valueint;
        p->port = pt->valueint;
        p->fd = -1;
    }
    cJSON_Delete(o);
    return ok ? 0 : -1;
}

static int
collect_peers(struct ty *ty, struct peer *peers, int n)
{
    struct ty_sub *sub = ty_subscribe(ty, "peers", 1);
    int got = 0;

    if (sub == NULL)
        return -1;
    while (got < n) {
        char *json = NULL;
        int64_t seq;

        if (ty_sub_next(sub, &json, &seq, -1) < 0)
            break;
        if (parse_peer(json, &peers[got]) == 0)
            got++;
        free(json);
    }
    ty_sub_close(&sub);
    return got == n ? 0 : -1;
}

static int
should_ping(struct ty *ty, const struct peer *p, int single_group)
{
    if (p->index == ty_global_index(ty))
        return 0;
    return single_group || strcmp(p->group, ty_group_id(ty)) != 0;
}

static int
connect_peer(struct peer *p)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int one = 1;

    sa.sin_port = htons((uint16_t)p->port);
    if (inet_pton(AF_INET, p->host, &sa.sin_addr) != 1)
        return -1;
    p->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->fd < 0)
        return -1;
    setsockopt(p->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return connect(p->fd, (struct sockaddr *)&sa, sizeof(sa));
}

/* One round trip; returns seconds or -1. */
static double
ping_once(struct peer *p, char *out, char *in, uint32_t size)
{
    uint32_t be = htonl(size), back;
    struct timespec t0, t1;

    if (p->fd < 0 && connect_peer(p) < 0)
        return -1;
    for (uint32_t i = 0; i < size; i++)
        out[i] = (char)(rand() & 0xff);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (io_full(p->fd, &be, 4, 1) < 0 || io_full(p->fd, out, size, 1) < 0 ||
        io_full(p->fd, &back, 4, 0) < 0 || ntohl(back) != size ||
        io_full(p->fd, in, size, 0) < 0)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) +
           (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

static int
ping_round(struct ty *ty, struct peer *peers, int n, int single_group,
           int64_t round, uint64_t size, int64_t budget_ns)
{
    char *out = malloc(size ? size : 1), *in = malloc(size ? size : 1);
    int rc = 0;

    for (int i = 0; i < n && rc == 0 && out && in; i++) {
        char name[96];
        double rtt;

        if (!should_ping(ty, &peers[i], single_group))
            continue;
        rtt = ping_once(&peers[i], out, in, (uint32_t)size);
        if (rtt < 0)
            rc = ty_fail(ty, "round %lld: ping %s/%d at %s:%d failed",
                         (long long)round, peers[i].group, peers[i].index,
                         peers[i].host, peers[i].port);
        else if (memcmp(out, in, size) != 0)
            rc = ty_fail(ty, "round %lld: echo from %s differs",
                         (long long)round, peers[i].group);
        else if (budget_ns > 0 && rtt * 1e9 > (double)budget_ns)
            rc = ty_fail(ty,
                         "round %lld: round trip to %s/%d took %.1f ms, "
                         "over the latency_budget of %.1f ms",
                         (long long)round, peers[i].group, peers[i].index,
                         rtt * 1e3, (double)budget_ns / 1e6);
        else {
            snprintf(name, sizeof(name), "rtt_seconds,round=%lld,peer=%s",
                     (long long)round, peers[i].group);
            ty_histogram_observe(ty, name, rtt);
        }
    }
    if (out == NULL || in == NULL)
        rc = ty_fail(ty, "out of memory for %llu-byte messages",
                     (unsigned long long)size);
    free(out);
    free(in);
    return rc;
}

static int
single_group_run(struct peer *peers, int n)
{
    for (int i = 1; i < n; i++)
        if (strcmp(peers[i].group, peers[0].group) != 0)
            return 0;
    return 1;
}

static int
run_rounds(struct ty *ty, struct peer *peers, int n)
{
    int64_t rounds = 5, budget = 0;
    uint64_t size = 1024;
    int single = single_group_run(peers, n);

    if (ty_param_has(ty, "rounds"))
        ty_param_int(ty, "rounds", &rounds);
    if (ty_param_has(ty, "latency_budget"))
        ty_param_duration(ty, "latency_budget", &budget);
    if (ty_param_has(ty, "message_size"))
        ty_param_size(ty, "message_size", &size);
    if (size > (16u << 20))
        return ty_fail(ty, "message_size is larger than 16 MiB");
    for (int64_t r = 1; r <= rounds; r++) {
        char state[32];

        snprintf(state, sizeof(state), "start-%lld", (long long)r);
        if (ty_signal_and_wait(ty, state, n, -1) < 0)
            return ty_fail(ty, "%s: %s", state, ty_errmsg(ty));
        if (ping_round(ty, peers, n, single, r, size, budget) < 0)
            return -1;
        snprintf(state, sizeof(state), "end-%lld", (long long)r);
        if (ty_signal_and_wait(ty, state, n, -1) < 0)
            return ty_fail(ty, "%s: %s", state, ty_errmsg(ty));
    }
    ty_message(ty, "%lld rounds of pings done", (long long)rounds);
    return 0;
}

static int
run_ping(struct ty *ty)
{
    int n = ty_instance_count(ty), port, lfd, rc;
    struct peer *peers = calloc((size_t)n, sizeof(*peers));
    char host[64];
    pthread_t srv;

    if (peers == NULL)
        return ty_fail(ty, "out of memory");
    for (int i = 0; i < n; i++)
        peers[i].fd = -1;
    lfd = listen_any(&port);
    if (lfd < 0) {
        free(peers);
        return ty_fail(ty, "listen: %s", strerror(errno));
    }
    pthread_create(&srv, NULL, echo_server, (void *)(intptr_t)lfd);
    pthread_detach(srv);
    advertised_host(host, sizeof(host));
    if (announce(ty, host, port) < 0 || collect_peers(ty, peers, n) < 0)
        rc = ty_fail(ty, "peer discovery: %s", ty_errmsg(ty));
    else
        rc = run_rounds(ty, peers, n);
    for (int i = 0; i < n; i++)
        if (peers[i].fd >= 0)
            close(peers[i].fd);
    free(peers);
    return rc;
}

static const struct ty_case cases[] = {
    {"ping", run_ping},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}

/*
 * test_zmtp.c — the SDK's ZMTP DEALER (sdk/ty_zmtp.c) against a peer
 * written here that plays the ROUTER byte by byte: the handshake, messages
 * of one and two frames in order even when the peer reads slowly and most
 * of them wait in the output buffer, long and short frames, commands and
 * extra frames skipped on the way in, a peer that goes away, one that is
 * not ZMTP, and connecting before anyone listens.
 */
#include "th.h"
#include "ty_zmtp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NMSG 80 /* half sent before the handshake, half after */

/* ---- the peer ------------------------------------------------------------ */

struct peer {
    int lfd, port;
    bool slow;     /* read in small pieces with pauses */
    bool not_zmtp; /* answer with something else */
    char rid[64];  /* the Identity the client sent */
    int got;       /* messages read and checked */
    bool bad;      /* something was not as sent */
    char why[256];
    int answers; /* messages to send back once all are read */
};

static int
listen_loopback(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (*port > 0)
        sa.sin_port = htons((uint16_t)*port);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(fd, 1) < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        return -1;
    *port = ntohs(sa.sin_port);
    return fd;
}

static bool
read_full(int fd, void *buf, size_t len, bool slow)
{
    size_t off = 0;

    while (off < len) {
        size_t want = slow && len - off > 4096 ? 4096 : len - off;
        ssize_t n = read(fd, (char *)buf + off, want);

        if (n <= 0)
            return false;
        off += (size_t)n;
        if (slow)
            usleep(200);
    }
    return true;
}

/* One frame: flags and body (caller frees). */
static unsigned char *
read_frame(int fd, bool slow, unsigned *flags, size_t *len)
{
    unsigned char h[9];
    unsigned char *body;
    uint64_t n = 0;

    if (!read_full(fd, h, 2, slow))
        return NULL;
    *flags = h[0];
    if (h[0] & 2) {
        if (!read_full(fd, h + 2, 7, slow))
            return NULL;
        for (int i = 0; i < 8; i++)
            n = n << 8 | h[1 + i];
    } else {
        n = h[1];
    }
    body = malloc(n + 1);
    if (body == NULL || !read_full(fd, body, n, slow)) {
        free(body);
        return NULL;
    }
    *len = n;
    return body;
}

static void
write_frame(int fd, unsigned flags, const void *data, size_t len)
{
    unsigned char h[9];
    size_t hl = 2;

    if (len > 255) {
        h[0] = (unsigned char)(flags | 2);
        for (int i = 0; i < 8; i++)
            h[1 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
        hl = 9;
    } else {
        h[0] = (unsigned char)flags;
        h[1] = (unsigned char)len;
    }
    if (send(fd, h, hl, MSG_NOSIGNAL) != (ssize_t)hl ||
        send(fd, data, len, MSG_NOSIGNAL) != (ssize_t)len)
        (void)0;
}

static void
greet(int fd)
{
    static const unsigned char ready[] = {
        5,   'R', 'E', 'A', 'D', 'Y', 11, 'S', 'o', 'c', 'k', 'e', 't', '-',
        'T', 'y', 'p', 'e', 0,   0,   0,  6,   'R', 'O', 'U', 'T', 'E', 'R'};
    unsigned char g[64] = {0xff, 0,    0, 0, 0,   0,   0,   0,
                           0,    0x7f, 3, 0, 'N', 'U', 'L', 'L'};

    g[32] = 1; /* as-server */
    if (send(fd, g, sizeof(g), MSG_NOSIGNAL) != (ssize_t)sizeof(g))
        return;
    write_frame(fd, 4, ready, sizeof(ready));
}

/* Message k: JSON of k*97+1 bytes of a pattern, and for odd k a payload
 * of k * 11 KiB. */
static size_t
json_len(int k)
{
    return (size_t)k * 97 + 1;
}

static size_t
payload_len(int k)
{
    return k % 2 ? (size_t)k * 11 * 1024 : 0;
}

static unsigned char
pattern(int k, size_t i)
{
    return (unsigned char)('a' + (k * 7 + (int)(i % 23)) % 26);
}

static bool
check_body(const unsigned char *b, size_t len, int k, size_t want)
{
    if (len != want)
        return false;
    for (size_t i = 0; i < len; i++)
        if (b[i] != pattern(k, i))
            return false;
    return true;
}

static int
fail_peer(struct peer *p, const char *what, int k)
{
    p->bad = true;
    snprintf(p->why, sizeof(p->why), "message %d: %s", k, what);
    return -1;
}

/* Read the client's greeting, READY (noting its Identity) and messages. */
static int
serve(struct peer *p, int fd)
{
    unsigned char g[64];
    unsigned flags;
    size_t len;
    unsigned char *b;

    if (!read_full(fd, g, sizeof(g), false) || g[0] != 0xff || g[10] != 3)
        return fail_peer(p, "no greeting", -1);
    b = read_frame(fd, false, &flags, &len);
    if (b == NULL || !(flags & 4) || len < 6 || memcmp(b + 1, "READY", 5))
        return free(b), fail_peer(p, "no READY", -1);
    if (memmem(b, len, "DEALER", 6) == NULL)
        return free(b), fail_peer(p, "not a DEALER", -1);
    for (size_t i = 6; i + 13 < len; i++)
        if (memcmp(b + i, "\x08Identity", 9) == 0)
            snprintf(p->rid, sizeof(p->rid), "%.*s", (int)b[i + 12],
                     (const char *)b + i + 13);
    free(b);
    for (int k = 0; k < NMSG; k++) {
        b = read_frame(fd, p->slow, &flags, &len);
        if (b == NULL || !check_body(b, len, k, json_len(k)))
            return free(b), fail_peer(p, "first frame differs", k);
        free(b);
        if (!(flags & 1) != !payload_len(k))
            return fail_peer(p, "MORE flag wrong", k);
        if (payload_len(k)) {
            b = read_frame(fd, p->slow, &flags, &len);
            if (b == NULL || (flags & 1) ||
                !check_body(b, len, k + 1000, payload_len(k)))
                return free(b), fail_peer(p, "payload differs", k);
            free(b);
        }
        p->got++;
    }
    return 0;
}

/* The answers: short, long (a 600-byte frame), one of two frames, and a
 * command in between that the client must skip. */
static void
answer(struct peer *p, int fd)
{
    char big[600];

    memset(big, 'L', sizeof(big));
    for (int k = 0; k < p->answers; k++) {
        char msg[32];
        int n = snprintf(msg, sizeof(msg), "answer-%d", k);

        if (k == 1)
            write_frame(fd, 4, "\x04PING\0\0", 7); /* a command */
        if (k == 2)
            write_frame(fd, 0, big, sizeof(big));
        else if (k == 3) {
            write_frame(fd, 1, msg, (size_t)n);
            write_frame(fd, 0, "extra", 5);
        } else
            write_frame(fd, 0, msg, (size_t)n);
    }
}

static void *
peer_main(void *arg)
{
    struct peer *p = arg;
    int fd = accept(p->lfd, NULL, NULL);

    if (fd < 0)
        return NULL;
    if (p->not_zmtp) {
        if (send(fd,
                 "SSH-2.0-OpenSSH\r\n                                  "
                 "                              ",
                 80, MSG_NOSIGNAL) < 0)
            (void)0;
        usleep(300 * 1000);
    } else {
        greet(fd);
        if (serve(p, fd) == 0)
            answer(p, fd);
        usleep(100 * 1000);
    }
    close(fd);
    return NULL;
}

/* ---- the client side ---------------------------------------------------- */

struct got {
    char msg[8][700];
    int n;
};

static void
on_msg(void *arg, const char *data, size_t len)
{
    struct got *g = arg;

    if (g->n < 8)
        snprintf(g->msg[g->n], sizeof(g->msg[0]), "%.*s", (int)len, data);
    g->n++;
}

/* Poll and drive z until done(arg) or ms pass; the last ty__zmtp_io. */
static int
drive(struct ty__zmtp *z, struct got *g,
      bool (*done)(struct ty__zmtp *, struct got *), int ms)
{
    int rc = 0;

    for (int i = 0; i < ms && !done(z, g); i++) {
        struct pollfd p = {ty__zmtp_fd(z), ty__zmtp_events(z), 0};

        poll(&p, 1, 1);
        rc = ty__zmtp_io(z, p.revents, on_msg, g);
        if (rc < 0)
            break;
    }
    return rc;
}

static bool
all_sent(struct ty__zmtp *z, struct got *g)
{
    (void)g;
    return ty__zmtp_open(z) && !ty__zmtp_pending(z);
}

static bool
four_answers(struct ty__zmtp *z, struct got *g)
{
    (void)z;
    return g->n >= 4;
}

static bool
never(struct ty__zmtp *z, struct got *g)
{
    (void)z;
    (void)g;
    return false;
}

static bool
is_open(struct ty__zmtp *z, struct got *g)
{
    (void)g;
    return ty__zmtp_open(z);
}

/* Messages from..to-1. */
static void
send_range(struct ty__zmtp *z, int from, int to)
{
    for (int k = from; k < to; k++) {
        size_t jl = json_len(k), pl = payload_len(k);
        unsigned char *j = malloc(jl), *d = malloc(pl + 1);

        for (size_t i = 0; i < jl; i++)
            j[i] = pattern(k, i);
        for (size_t i = 0; i < pl; i++)
            d[i] = pattern(k + 1000, i);
        CHECK_EQ_INT(ty__zmtp_send(z, j, jl, d, pl, pl > 0), 0);
        free(j);
        free(d);
    }
}

/* Listen on p->port (0: any free one) and serve one connection on th. */
static void
peer_start(struct peer *p, pthread_t *th)
{
    p->lfd = listen_loopback(&p->port);
    if (p->lfd < 0)
        th_skip("no loopback listener");
    pthread_create(th, NULL, peer_main, p);
}

/* A connection to the loopback port, as routing id rid. */
static struct ty__zmtp *
dial(int port, const char *rid)
{
    char url[64], why[256];
    struct ty__zmtp *z;

    snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
    z = ty__zmtp_new(url, rid, why, sizeof(why));
    CHECK_MSG(z != NULL, "%s", why);
    if (z == NULL)
        th_skip("no connection");
    return z;
}

static void
run_exchange(bool slow)
{
    struct peer p = {.slow = slow, .answers = 4};
    struct got g = {0};
    struct ty__zmtp *z;
    pthread_t th;

    peer_start(&p, &th);
    z = dial(p.port, "ty-7-test");
    send_range(z, 0, NMSG / 2); /* before the handshake: held back */
    CHECK(!ty__zmtp_open(z));
    CHECK_EQ_INT(drive(z, &g, is_open, 5000), 0);
    /* after it: straight into the socket while there is room, then
     * buffered behind what did not fit */
    send_range(z, NMSG / 2, NMSG);
    if (slow)
        CHECK(ty__zmtp_pending(z));
    CHECK_EQ_INT(drive(z, &g, all_sent, 30000), 0);
    CHECK_EQ_INT(drive(z, &g, four_answers, 5000), 0);
    /* then the peer hangs up */
    CHECK_EQ_INT(drive(z, &g, never, 3000), -1);
    CHECK_CONTAINS(ty__zmtp_error(z), "closed the connection");
    CHECK_EQ_INT(ty__zmtp_send(z, "x", 1, NULL, 0, false), -1);
    pthread_join(th, NULL);
    CHECK_MSG(!p.bad, "%s", p.why);
    CHECK_EQ_INT(p.got, NMSG);
    CHECK_EQ_STR(p.rid, "ty-7-test");
    CHECK_EQ_INT(g.n, 4);
    CHECK_EQ_STR(g.msg[0], "answer-0");
    CHECK_EQ_STR(g.msg[1], "answer-1");
    CHECK_EQ_INT(strlen(g.msg[2]), 600);
    CHECK_EQ_STR(g.msg[3], "answer-3"); /* its second frame dropped */
    ty__zmtp_free(&z);
    close(p.lfd);
}

static void
t_exchange(void)
{
    run_exchange(false);
}

/* A peer that reads slowly: megabytes wait in the output buffer and still
 * arrive whole and in order. */
static void
t_slow_reader(void)
{
    run_exchange(true);
}

static void
t_not_zmtp(void)
{
    struct peer p = {.not_zmtp = true};
    struct got g = {0};
    struct ty__zmtp *z;
    pthread_t th;

    peer_start(&p, &th);
    z = dial(p.port, "r");
    CHECK_EQ_INT(drive(z, &g, never, 3000), -1);
    CHECK_CONTAINS(ty__zmtp_error(z), "not a ZeroMQ peer");
    pthread_join(th, NULL);
    ty__zmtp_free(&z);
    close(p.lfd);
}

/* Connecting before anyone listens: refused attempts every 100 ms until
 * the peer is there. */
static void
t_listen_late(void)
{
    struct peer p = {.answers = 4};
    struct got g = {0};
    struct ty__zmtp *z;
    pthread_t th;
    int port = 0, fd = listen_loopback(&port);

    close(fd); /* a free port, for now */
    z = dial(port, "late");
    send_range(z, 0, NMSG);
    CHECK_EQ_INT(drive(z, &g, never, 350), 0); /* refused, still trying */
    CHECK(!ty__zmtp_open(z));
    CHECK(ty__zmtp_retry_ms(z) >= 0 || ty__zmtp_fd(z) >= 0);
    p.port = port;
    peer_start(&p, &th);
    CHECK_EQ_INT(drive(z, &g, four_answers, 10000), 0);
    CHECK_EQ_INT(g.n, 4);
    ty__zmtp_free(&z);
    pthread_join(th, NULL);
    CHECK_MSG(!p.bad, "%s", p.why);
    CHECK_EQ_INT(p.got, NMSG);
    close(p.lfd);
}

static void
t_bad_urls(void)
{
    char why[256];

    CHECK(ty__zmtp_new("ipc:///tmp/x", "r", why, sizeof(why)) == NULL);
    CHECK_CONTAINS(why, "expected tcp://host:port");
    CHECK(ty__zmtp_new("tcp://127.0.0.1", "r", why, sizeof(why)) == NULL);
    CHECK(ty__zmtp_new("tcp://:5050", "r", why, sizeof(why)) == NULL);
    CHECK(ty__zmtp_new("tcp://no-such-host.invalid:5050", "r", why,
                       sizeof(why)) == NULL);
    CHECK_CONTAINS(why, "no-such-host.invalid");
}

static const struct th_case cases[] = {
    {"exchange", t_exchange}, {"slow_reader", t_slow_reader},
    {"not_zmtp", t_not_zmtp}, {"listen_late", t_listen_late},
    {"bad_urls", t_bad_urls}, {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

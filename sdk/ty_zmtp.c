/*
 * ty_zmtp.c — ZMTP 3.0 as a DEALER over a plain socket (see ty_zmtp.h).
 *
 * A connection opens with a 64-byte greeting each way: a signature (0xFF,
 * eight padding bytes, 0x7F), the version (3.0), the security mechanism
 * ("NULL", zero-padded to 20 bytes), an as-server flag and zero filler.
 * With the NULL mechanism each side then sends one READY command with its
 * properties — ours are Socket-Type "DEALER" and Identity, the routing id
 * the ROUTER will know us by. After that everything is frames: a flags
 * byte (bit 0 more frames follow, bit 1 an 8-byte size instead of a
 * 1-byte one, bit 2 a command), the size in network order, the body. A
 * DEALER's message to a ROUTER is its frames as they are.
 *
 * Messages queued before the peer's READY are held back: libzmq reads what
 * reaches it before it has sent its own READY as handshake commands and
 * drops a connection whose next "command" is a message. Writes use
 * MSG_NOSIGNAL, so a coordinator that went away is an error, not SIGPIPE.
 */
#include "ty_zmtp.h"

#include "ty_buf.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define GREETING_LEN 64
#define FRAME_MAX (8u << 20) /* larger answers mean a confused peer */
#define RETRY_MS 100
#define F_MORE 0x01
#define F_LONG 0x02
#define F_COMMAND 0x04

enum zstate { Z_WAIT, Z_CONNECTING, Z_GREETING, Z_READY, Z_OPEN, Z_BROKEN };

/* The shared buffer (ty_buf.h) and how much of it was consumed. */
struct zbuf {
    struct ty__buf b;
    size_t off;
};

struct ty__zmtp {
    int fd;
    enum zstate state;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int64_t retry_at; /* monotonic ms, in Z_WAIT */
    char rid[256];
    struct zbuf in, out, held;
    bool in_more; /* the frames being read are not a message's first */
    char err[256];
};

/* ---- buffers ------------------------------------------------------------ */

static int
zb_add(struct zbuf *z, const void *data, size_t len)
{
    struct ty__buf *b = &z->b;

    if (z->off > 0 && z->off == b->len)
        z->off = b->len = 0;
    if (z->off > 0 && b->len + len + 1 > b->cap) { /* compact first */
        memmove(b->buf, b->buf + z->off, b->len - z->off);
        b->len -= z->off;
        z->off = 0;
    }
    return ty__buf_add(b, data, len) < 0 ? -1 : 0;
}

static size_t
zb_used(const struct zbuf *z)
{
    return z->b.len - z->off;
}

/* The bytes not consumed yet. */
static const char *
zb_data(const struct zbuf *z)
{
    return z->b.buf + z->off;
}

static void
zb_free(struct zbuf *z)
{
    ty__buf_release(&z->b);
    z->off = 0;
}

/* ---- encoding ----------------------------------------------------------- */

static size_t
header(unsigned char h[9], unsigned flags, size_t len)
{
    if (len <= 255) {
        h[0] = (unsigned char)flags;
        h[1] = (unsigned char)len;
        return 2;
    }
    h[0] = (unsigned char)(flags | F_LONG);
    for (int i = 0; i < 8; i++)
        h[1 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
    return 9;
}

static void
put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static size_t
put_prop(unsigned char *p, const char *name, const void *value, size_t vlen)
{
    size_t nlen = strlen(name);

    p[0] = (unsigned char)nlen;
    memcpy(p + 1, name, nlen);
    put_be32(p + 1 + nlen, (uint32_t)vlen);
    memcpy(p + 5 + nlen, value, vlen);
    return 5 + nlen + vlen;
}

/* Our greeting and READY, into out. */
static int
put_handshake(struct ty__zmtp *z)
{
    unsigned char g[GREETING_LEN] = {0}, body[320], h[9];
    size_t n = 0, hl;

    g[0] = 0xff;
    g[9] = 0x7f;
    g[10] = 3;
    memcpy(g + 12, "NULL", 4);
    body[n++] = 5;
    memcpy(body + n, "READY", 5);
    n += 5;
    n += put_prop(body + n, "Socket-Type", "DEALER", 6);
    n += put_prop(body + n, "Identity", z->rid, strlen(z->rid));
    hl = header(h, F_COMMAND, n);
    return zb_add(&z->out, g, sizeof(g)) < 0 || zb_add(&z->out, h, hl) < 0 ||
                   zb_add(&z->out, body, n) < 0
               ? -1
               : 0;
}

/* ---- state -------------------------------------------------------------- */

static int64_t
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The connection is done for. The socket stays open (shut down) until
 * ty__zmtp_free, so a thread polling it never polls a reused number. */
static int
broken(struct ty__zmtp *z, const char *fmt, const char *arg)
{
    if (z->state != Z_BROKEN)
        snprintf(z->err, sizeof(z->err), fmt, arg);
    z->state = Z_BROKEN;
    if (z->fd >= 0)
        shutdown(z->fd, SHUT_RDWR);
    return -1;
}

/* Start a non-blocking connect; a refusal means trying again later. */
static void
start_connect(struct ty__zmtp *z)
{
    int one = 1;

    z->fd = socket(z->addr.ss_family,
                   SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (z->fd < 0) {
        z->fd = -1;
        broken(z, "socket: %s", strerror(errno));
        return;
    }
    setsockopt(z->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    zb_free(&z->out); /* a new connection starts afresh */
    zb_free(&z->in);
    if (put_handshake(z) < 0) {
        broken(z, "%s", "out of memory");
        return;
    }
    if (connect(z->fd, (struct sockaddr *)&z->addr, z->addrlen) == 0 ||
        errno == EINPROGRESS) {
        z->state = Z_CONNECTING;
        return;
    }
    close(z->fd);
    z->fd = -1;
    z->state = Z_WAIT;
    z->retry_at = now_ms() + RETRY_MS;
}

static int
resolve(struct ty__zmtp *z, const char *url, char *why, size_t whylen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    char host[256];
    const char *h, *colon;
    size_t hlen;
    int rc;

    if (strncmp(url, "tcp://", 6) != 0)
        return snprintf(why, whylen, "%s: expected tcp://host:port", url), -1;
    h = url + 6;
    colon = strrchr(h, ':');
    if (colon == NULL || colon == h || colon[1] == '\0')
        return snprintf(why, whylen, "%s: expected tcp://host:port", url), -1;
    if (*h == '[' && colon[-1] == ']') /* [v6 address] */
        h++, hlen = (size_t)(colon - 1 - h);
    else
        hlen = (size_t)(colon - h);
    if (hlen >= sizeof(host))
        return snprintf(why, whylen, "%s: host name too long", url), -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    rc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (rc != 0 || ai == NULL)
        return snprintf(why, whylen, "%s: %s", url, gai_strerror(rc)), -1;
    memcpy(&z->addr, ai->ai_addr, ai->ai_addrlen);
    z->addrlen = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

struct ty__zmtp *
ty__zmtp_new(const char *url, const char *rid, char *why, size_t whylen)
{
    struct ty__zmtp *z;

    if (strlen(rid) >= sizeof(z->rid)) {
        snprintf(why, whylen, "routing id too long");
        return NULL;
    }
    z = calloc(1, sizeof(*z));
    if (z == NULL) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    z->fd = -1;
    snprintf(z->rid, sizeof(z->rid), "%s", rid);
    if (resolve(z, url, why, whylen) < 0) {
        free(z);
        return NULL;
    }
    start_connect(z);
    if (z->state == Z_BROKEN) {
        snprintf(why, whylen, "%s", z->err);
        ty__zmtp_free(&z);
    }
    return z;
}

struct ty__zmtp *
ty__zmtp_new_unconnected(void)
{
    struct ty__zmtp *z = calloc(1, sizeof(*z));

    if (z != NULL) {
        z->fd = -1;
        z->state = Z_GREETING;
    }
    return z;
}

void
ty__zmtp_free(struct ty__zmtp **pz)
{
    struct ty__zmtp *z = *pz;

    if (z == NULL)
        return;
    if (z->fd >= 0)
        close(z->fd);
    zb_free(&z->in);
    zb_free(&z->out);
    zb_free(&z->held);
    free(z);
    *pz = NULL;
}

int
ty__zmtp_fd(const struct ty__zmtp *z)
{
    return z->fd;
}

short
ty__zmtp_events(const struct ty__zmtp *z)
{
    if (z->state == Z_BROKEN || z->state == Z_WAIT)
        return 0;
    if (z->state == Z_CONNECTING)
        return POLLOUT;
    return (short)(POLLIN | (zb_used(&z->out) > 0 ? POLLOUT : 0));
}

int64_t
ty__zmtp_retry_ms(const struct ty__zmtp *z)
{
    int64_t left;

    if (z->state != Z_WAIT)
        return -1;
    left = z->retry_at - now_ms();
    return left > 0 ? left : 0;
}

bool
ty__zmtp_open(const struct ty__zmtp *z)
{
    return z->state == Z_OPEN;
}

bool
ty__zmtp_pending(const struct ty__zmtp *z)
{
    return zb_used(&z->out) > 0;
}

const char *
ty__zmtp_error(const struct ty__zmtp *z)
{
    return z->state == Z_BROKEN ? z->err : "";
}

/* ---- writing ------------------------------------------------------------ */

/* After a send or recv that returned -1: 1 to try again (EINTR), 0 when
 * the socket would block, -1 once the connection is broken. */
static int
io_failed(struct ty__zmtp *z)
{
    if (errno == EINTR)
        return 1;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
        return 0;
    return broken(z, "the coordinator's connection: %s", strerror(errno));
}

/* Write out what the socket takes; -1 once broken. */
static int
flush(struct ty__zmtp *z)
{
    while (zb_used(&z->out) > 0) {
        ssize_t n =
            send(z->fd, zb_data(&z->out), zb_used(&z->out), MSG_NOSIGNAL);
        int rc;

        if (n < 0 && (rc = io_failed(z)) <= 0)
            return rc;
        if (n > 0)
            z->out.off += (size_t)n;
    }
    z->out.off = z->out.b.len = 0;
    return 0;
}

int
ty__zmtp_send(struct ty__zmtp *z, const void *json, size_t jlen,
              const void *data, size_t len, bool has_payload)
{
    unsigned char h1[9], h2[9];
    size_t l1 = header(h1, has_payload ? F_MORE : 0, jlen);
    size_t l2 = has_payload ? header(h2, 0, len) : 0;
    struct zbuf *b = z->state == Z_OPEN ? &z->out : &z->held;

    if (z->state == Z_BROKEN)
        return -1;
    if (b == &z->out && zb_used(b) == 0) {
        /* nothing waiting: straight into the socket */
        struct iovec iov[4] = {{h1, l1},
                               {(void *)(uintptr_t)json, jlen},
                               {h2, l2},
                               {(void *)(uintptr_t)(data ? data : ""), len}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = has_payload ? 4 : 2};
        size_t total = l1 + jlen + l2 + (has_payload ? len : 0), skip;
        ssize_t n;

        do
            n = sendmsg(z->fd, &mh, MSG_NOSIGNAL);
        while (n < 0 && io_failed(z) > 0);
        if (z->state == Z_BROKEN)
            return -1;
        if (n == (ssize_t)total)
            return 0;
        skip = n > 0 ? (size_t)n : 0; /* keep the rest, in order */
        for (int i = 0; i < (int)mh.msg_iovlen; i++) {
            size_t take = skip < iov[i].iov_len ? skip : iov[i].iov_len;

            if (zb_add(b, (char *)iov[i].iov_base + take,
                       iov[i].iov_len - take) < 0)
                return broken(z, "%s", "out of memory");
            skip -= take;
        }
        return 0;
    }
    if (zb_add(b, h1, l1) < 0 || zb_add(b, json, jlen) < 0 ||
        (has_payload &&
         (zb_add(b, h2, l2) < 0 || zb_add(b, data ? data : "", len) < 0)))
        return broken(z, "%s", "out of memory");
    return b == &z->out ? flush(z) : 0;
}

/* ---- reading ------------------------------------------------------------ */

static int
check_greeting(struct ty__zmtp *z, const unsigned char *g)
{
    static const unsigned char null_mech[20] = "NULL";

    if (g[0] != 0xff || !(g[9] & 1))
        return broken(z, "%s: not a ZeroMQ peer (no ZMTP greeting)",
                      "the coordinator's endpoint");
    if (g[10] < 3)
        return broken(z, "%s: speaks a ZMTP older than 3.0",
                      "the coordinator's endpoint");
    if (memcmp(g + 12, null_mech, sizeof(null_mech)) != 0)
        return broken(z, "%s: wants a security mechanism other than NULL",
                      "the coordinator's endpoint");
    return 0;
}

static uint32_t
get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

/* The peer's READY: it must say it is a ROUTER. */
static int
check_ready(struct ty__zmtp *z, const unsigned char *p, size_t len)
{
    bool router = false;

    if (len < 6 || p[0] != 5 || memcmp(p + 1, "READY", 5) != 0)
        return broken(z, "%s: expected READY", "the coordinator's endpoint");
    for (size_t i = 6; i < len;) {
        size_t nlen = p[i], vlen;

        if (i + 5 + nlen > len)
            return broken(z, "%s: truncated READY", "the coordinator");
        vlen = get_be32(p + i + 1 + nlen);
        if (vlen > len - (i + 5 + nlen))
            return broken(z, "%s: truncated READY", "the coordinator");
        if (nlen == 11 &&
            strncasecmp((const char *)p + i + 1, "Socket-Type", 11) == 0)
            router = vlen == 6 && memcmp(p + i + 5 + nlen, "ROUTER", 6) == 0;
        i += 5 + nlen + vlen;
    }
    if (!router)
        return broken(z, "%s: not a ROUTER socket", "the coordinator");
    return 0;
}

/* The handshake is done: what was held goes out. */
static int
opened(struct ty__zmtp *z)
{
    z->state = Z_OPEN;
    if (zb_used(&z->held) > 0) {
        if (zb_add(&z->out, zb_data(&z->held), zb_used(&z->held)) < 0)
            return broken(z, "%s", "out of memory");
        zb_free(&z->held);
    }
    return flush(z);
}

/* Size of the frame at p (n bytes there), header included, or 0 when not
 * all of it has arrived; -1 when it cannot be a frame. */
static int64_t
frame_at(const unsigned char *p, size_t n, size_t *hdr)
{
    uint64_t len = 0;

    if (n < 2)
        return 0;
    if (p[0] & ~(F_MORE | F_LONG | F_COMMAND))
        return -1;
    *hdr = p[0] & F_LONG ? 9 : 2;
    if (n < *hdr)
        return 0;
    if (*hdr == 2)
        len = p[1];
    else
        for (int i = 0; i < 8; i++)
            len = len << 8 | p[1 + i];
    if (len > FRAME_MAX)
        return -1;
    return n < *hdr + len ? 0 : (int64_t)(*hdr + len);
}

/* One whole frame at p: the handshake, or a message's frame for fn. */
static int
take_frame(struct ty__zmtp *z, const unsigned char *p, size_t hdr, size_t size,
           void (*fn)(void *, const char *, size_t), void *arg)
{
    bool command = p[0] & F_COMMAND, more = p[0] & F_MORE;

    if (z->state == Z_READY) {
        if (!command)
            return broken(z, "%s: a message before READY", "the coordinator");
        return check_ready(z, p + hdr, size - hdr) < 0 ? -1 : opened(z);
    }
    if (command)
        return 0; /* heartbeats and the like carry nothing we need */
    if (!z->in_more)
        fn(arg, (const char *)p + hdr, size - hdr);
    z->in_more = more; /* further frames of a message are dropped */
    return 0;
}

static int
parse(struct ty__zmtp *z, void (*fn)(void *, const char *, size_t), void *arg)
{
    struct zbuf *b = &z->in;

    while (z->state != Z_BROKEN) {
        const unsigned char *p = (const unsigned char *)zb_data(b);
        size_t n = zb_used(b), hdr = 0;
        int64_t size;

        if (z->state == Z_GREETING) {
            if (n < GREETING_LEN)
                break;
            if (check_greeting(z, p) < 0)
                return -1;
            b->off += GREETING_LEN;
            z->state = Z_READY;
            continue;
        }
        size = frame_at(p, n, &hdr);
        if (size < 0)
            return broken(z, "%s: a malformed frame", "the coordinator");
        if (size == 0)
            break;
        b->off += (size_t)size;
        if (take_frame(z, p, hdr, (size_t)size, fn, arg) < 0)
            return -1;
    }
    if (b->off == b->b.len)
        b->off = b->b.len = 0;
    return z->state == Z_BROKEN ? -1 : 0;
}

int
ty__zmtp_input(struct ty__zmtp *z, const void *data, size_t len,
               void (*fn)(void *, const char *, size_t), void *arg)
{
    if (z->state == Z_BROKEN)
        return -1;
    if (zb_add(&z->in, data, len) < 0)
        return broken(z, "%s", "out of memory");
    return parse(z, fn, arg);
}

static int
read_all(struct ty__zmtp *z, void (*fn)(void *, const char *, size_t),
         void *arg)
{
    for (;;) {
        unsigned char tmp[65536];
        ssize_t n = recv(z->fd, tmp, sizeof(tmp), 0);
        int rc;

        if (n < 0 && (rc = io_failed(z)) <= 0)
            return rc;
        if (n < 0)
            continue;
        if (n == 0)
            return broken(z, "%s closed the connection", "the coordinator");
        if (ty__zmtp_input(z, tmp, (size_t)n, fn, arg) < 0)
            return -1;
        if ((size_t)n < sizeof(tmp))
            return 0;
    }
}

/* A connect in progress finished (the socket polled writable). */
static int
connected(struct ty__zmtp *z)
{
    int e = 0;
    socklen_t len = sizeof(e);

    if (getsockopt(z->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
        e = errno;
    if (e != 0) {
        close(z->fd);
        z->fd = -1;
        z->state = Z_WAIT;
        z->retry_at = now_ms() + RETRY_MS;
        return 0;
    }
    z->state = Z_GREETING;
    return flush(z);
}

int
ty__zmtp_io(struct ty__zmtp *z, short revents,
            void (*fn)(void *arg, const char *data, size_t len), void *arg)
{
    if (z->state == Z_BROKEN)
        return -1;
    if (z->state == Z_WAIT) {
        if (now_ms() >= z->retry_at)
            start_connect(z);
        return z->state == Z_BROKEN ? -1 : 0;
    }
    if (z->state == Z_CONNECTING) {
        if (revents & (POLLOUT | POLLERR | POLLHUP))
            return connected(z);
        return 0;
    }
    if ((revents & POLLOUT) && flush(z) < 0)
        return -1;
    if (revents & (POLLIN | POLLERR | POLLHUP))
        return read_all(z, fn, arg);
    return 0;
}

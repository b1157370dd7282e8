/*
 * zmtp.c — a minimal ZMTP 3.0 DEALER for the benchmarks (see zmtp.h).
 *
 * A connection opens with a 64-byte greeting each way: a signature (0xFF,
 * eight padding bytes, 0x7F), the version (3.0), the security mechanism
 * ("NULL", zero-padded to 20 bytes), an as-server flag and zero filler.
 * With the NULL mechanism each side then sends one READY command carrying
 * its properties — ours are Socket-Type "DEALER" and Identity, the routing
 * id the server's ROUTER will know us by. After that everything is frames:
 * a flags byte (bit 0 more frames follow, bit 1 an 8-byte size instead of
 * a 1-byte one, bit 2 a command), the size in network order, the body. A
 * DEALER's message to a ROUTER is its frames as they are: no delimiter.
 *
 * The greeting and READY go out in one write. Messages sent before the
 * server's READY has arrived are held back until it does, as libzmq holds
 * them: libzmq reads every frame that reaches it before it has sent its
 * own READY as a handshake command, and drops a connection whose next
 * "command" is a message. Input is parsed from a growable buffer, so a
 * frame split across reads waits for the rest.
 */
#include "zmtp.h"

#include "iobuf.h"

#include "bench.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define GREETING_LEN 64
#define FRAME_MAX (4u << 20) /* what the service's ROUTER accepts */
#define F_MORE 0x01
#define F_LONG 0x02
#define F_COMMAND 0x04

enum zstate { Z_GREETING, Z_READY, Z_OPEN };

struct zmtp_conn {
    int fd;
    enum zstate state;
    struct iobuf in, out;
    struct iobuf held; /* messages sent before the handshake completed */
};

static void
put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t
get_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           p[3];
}

/* A frame header: flags, then the size in one byte or eight. */
static void
put_header(struct iobuf *b, unsigned flags, size_t len)
{
    unsigned char h[9];

    if (len <= 255) {
        h[0] = (unsigned char)flags;
        h[1] = (unsigned char)len;
        iobuf_add(b, h, 2);
        return;
    }
    h[0] = (unsigned char)(flags | F_LONG);
    for (int i = 0; i < 8; i++)
        h[1 + i] = (unsigned char)((uint64_t)len >> (56 - 8 * i));
    iobuf_add(b, h, 9);
}

static void
put_greeting(struct iobuf *b)
{
    unsigned char g[GREETING_LEN] = {0};

    g[0] = 0xff;
    g[9] = 0x7f;
    g[10] = 3; /* version 3.0 */
    g[11] = 0;
    memcpy(g + 12, "NULL", 4);
    iobuf_add(b, g, sizeof(g)); /* as-server 0, filler zero */
}

/* A property of a READY command: name (1-byte length), value (4-byte). */
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

static void
put_ready(struct iobuf *b, const char *rid)
{
    unsigned char body[512];
    size_t n = 0, rlen = strlen(rid);

    if (rlen > 255)
        bench_die("zmtp: routing id of %zu bytes is too long", rlen);
    body[n++] = 5;
    memcpy(body + n, "READY", 5);
    n += 5;
    n += put_prop(body + n, "Socket-Type", "DEALER", 6);
    n += put_prop(body + n, "Identity", rid, rlen);
    put_header(b, F_COMMAND, n);
    iobuf_add(b, body, n);
}

struct zmtp_conn *
zmtp_open(const char *endpoint, const char *rid)
{
    struct zmtp_conn *c = bench_xcalloc(1, sizeof(*c));

    c->fd = bench_tcp_connect(endpoint);
    put_greeting(&c->out);
    put_ready(&c->out, rid);
    return c;
}

void
zmtp_close(struct zmtp_conn **pc)
{
    struct zmtp_conn *c = *pc;

    if (c == NULL)
        return;
    close(c->fd);
    iobuf_free(&c->in);
    iobuf_free(&c->out);
    iobuf_free(&c->held);
    free(c);
    *pc = NULL;
}

int
zmtp_fd(const struct zmtp_conn *c)
{
    return c->fd;
}

bool
zmtp_ready(const struct zmtp_conn *c)
{
    return c->state == Z_OPEN;
}

void
zmtp_send(struct zmtp_conn *c, const void *data, size_t len)
{
    struct iobuf *b = c->state == Z_OPEN ? &c->out : &c->held;

    put_header(b, 0, len);
    iobuf_add(b, data, len);
}

int
zmtp_flush(struct zmtp_conn *c)
{
    return iobuf_flush(&c->out, c->fd);
}

/* ---- reading ------------------------------------------------------------ */

static void
check_greeting(const unsigned char *g)
{
    static const unsigned char null_mech[20] = "NULL";

    if (g[0] != 0xff || !(g[9] & 1))
        bench_die("zmtp: the server's greeting has no ZMTP signature");
    if (g[10] < 3)
        bench_die("zmtp: the server speaks ZMTP %d.%d, not 3.x", g[10], g[11]);
    if (memcmp(g + 12, null_mech, sizeof(null_mech)) != 0)
        bench_die("zmtp: the server wants a mechanism other than NULL");
}

/* The server's READY: its Socket-Type must be ROUTER. */
static void
check_ready(const unsigned char *p, size_t len)
{
    size_t i;
    bool router = false;

    if (len < 6 || p[0] != 5 || memcmp(p + 1, "READY", 5) != 0)
        bench_die("zmtp: expected READY from the server");
    for (i = 6; i < len;) {
        size_t nlen = p[i], vlen;

        if (i + 1 + nlen + 4 > len)
            bench_die("zmtp: truncated READY property");
        vlen = get_be32(p + i + 1 + nlen);
        if (i + 5 + nlen + vlen > len)
            bench_die("zmtp: truncated READY property value");
        if (nlen == 11 &&
            strncasecmp((const char *)p + i + 1, "Socket-Type", 11) == 0)
            router = vlen == 6 && memcmp(p + i + 5 + nlen, "ROUTER", 6) == 0;
        i += 5 + nlen + vlen;
    }
    if (!router)
        bench_die("zmtp: the server is not a ROUTER");
}

/* Size of the frame at p (n bytes available), header included, or 0 when
 * it has not all arrived; *hdr gets the header's size. */
static size_t
frame_at(const unsigned char *p, size_t n, size_t *hdr)
{
    uint64_t len = 0;

    if (n < 2)
        return 0;
    if (p[0] & ~(F_MORE | F_LONG | F_COMMAND))
        bench_die("zmtp: frame with reserved flags 0x%02x", p[0]);
    *hdr = p[0] & F_LONG ? 9 : 2;
    if (n < *hdr)
        return 0;
    if (*hdr == 2)
        len = p[1];
    else
        for (int i = 0; i < 8; i++)
            len = len << 8 | p[1 + i];
    if (len > FRAME_MAX)
        bench_die("zmtp: frame of %llu bytes", (unsigned long long)len);
    return n < *hdr + len ? 0 : *hdr + (size_t)len;
}

/* The handshake is complete: write what was held back. */
static void
release_held(struct zmtp_conn *c)
{
    int rc;

    if (c->held.len == c->held.off)
        return;
    iobuf_add(&c->out, c->held.p + c->held.off, c->held.len - c->held.off);
    c->held.off = c->held.len = 0;
    while ((rc = zmtp_flush(c)) == 1) {
        struct pollfd p = {.fd = c->fd, .events = POLLOUT};

        poll(&p, 1, 1000);
    }
    if (rc < 0)
        bench_die("zmtp: write: %s", strerror(errno));
}

/* Parse what the buffer holds; returns the frames handed to fn. */
static int
parse(struct zmtp_conn *c,
      void (*fn)(void *arg, const char *data, size_t len, bool more), void *arg)
{
    struct iobuf *b = &c->in;
    int count = 0;

    for (;;) {
        const unsigned char *p = b->p + b->off;
        size_t n = b->len - b->off, hdr = 0, size;

        if (c->state == Z_GREETING) {
            if (n < GREETING_LEN)
                break;
            check_greeting(p);
            b->off += GREETING_LEN;
            c->state = Z_READY;
            continue;
        }
        size = frame_at(p, n, &hdr);
        if (size == 0)
            break;
        b->off += size;
        if (c->state == Z_READY) {
            if (!(p[0] & F_COMMAND))
                bench_die("zmtp: a message before the server's READY");
            check_ready(p + hdr, size - hdr);
            c->state = Z_OPEN;
            release_held(c);
        } else if (!(p[0] & F_COMMAND)) {
            fn(arg, (const char *)p + hdr, size - hdr, p[0] & F_MORE);
            count++;
        } /* other commands (heartbeats) carry nothing we need */
    }
    if (b->off == b->len)
        b->off = b->len = 0;
    return count;
}

int
zmtp_read(struct zmtp_conn *c,
          void (*fn)(void *arg, const char *data, size_t len, bool more),
          void *arg)
{
    struct iobuf *b = &c->in;
    int count = 0;

    for (;;) {
        size_t room;
        ssize_t n = iobuf_read(b, c->fd, 4096, &room);

        if (n < 0)
            return -1;
        if (n == 0)
            break;
        count += parse(c, fn, arg);
        if ((size_t)n < room)
            break; /* drained: save the read that would say EAGAIN */
    }
    return count;
}

/*
 * resp.c — a small Redis protocol client for the benchmarks (see resp.h).
 *
 * Commands are written as arrays of bulk strings, the form every Redis
 * accepts. Input is parsed from a growable buffer: a reply that has not
 * fully arrived is left for the next read, so the parser never blocks and
 * one connection can carry many pipelined replies. A read that returns
 * less than it asked for ends the drain (epoll says when more comes), as
 * in the ZMTP client, so both spend the same system calls per reply.
 */
#include "resp.h"

#include "iobuf.h"

#include "bench.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct resp_conn {
    int fd;
    struct iobuf in, out;
};

struct resp_conn *
resp_open(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port)};
    struct resp_conn *c = bench_xcalloc(1, sizeof(*c));
    int one = 1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0)
        bench_die("socket: %s", strerror(errno));
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        bench_die("connect to redis on port %d: %s", port, strerror(errno));
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    return c;
}

void
resp_close(struct resp_conn **pc)
{
    struct resp_conn *c = *pc;

    if (c == NULL)
        return;
    close(c->fd);
    iobuf_free(&c->in);
    iobuf_free(&c->out);
    free(c);
    *pc = NULL;
}

int
resp_fd(const struct resp_conn *c)
{
    return c->fd;
}

void
resp_cmd(struct resp_conn *c, int argc, const char *const *argv)
{
    char head[32];
    int n = snprintf(head, sizeof(head), "*%d\r\n", argc);

    iobuf_add(&c->out, head, (size_t)n);
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]);

        n = snprintf(head, sizeof(head), "$%zu\r\n", len);
        iobuf_add(&c->out, head, (size_t)n);
        iobuf_add(&c->out, argv[i], len);
        iobuf_add(&c->out, "\r\n", 2);
    }
}

int
resp_flush(struct resp_conn *c)
{
    return iobuf_flush(&c->out, c->fd);
}

/* ---- parsing ------------------------------------------------------------ */

/* One line "<type><text>\r\n" at *pos; returns its text length or -1 when
 * the line is not complete. */
static long
line_at(const struct iobuf *b, size_t pos, const char **text)
{
    const char *s = (const char *)b->p + pos;
    const char *end = (const char *)b->p + b->len;
    const char *cr = memchr(s, '\r', (size_t)(end - s));

    if (cr == NULL || cr + 1 >= end)
        return -1;
    *text = s + 1;
    return (long)(cr - s - 1);
}

/* Parse a scalar reply at *pos into r; advances *pos. Returns 1 when
 * parsed, 0 when incomplete. */
static int
parse_scalar(const struct iobuf *b, size_t *pos, struct resp_reply *r)
{
    const char *text;
    long len = line_at(b, *pos, &text);
    size_t after;

    if (len < 0)
        return 0;
    after = *pos + (size_t)len + 3;
    memset(r, 0, sizeof(*r));
    switch (b->p[*pos]) {
    case ':':
        r->type = RESP_INT;
        r->integer = strtoll(text, NULL, 10);
        break;
    case '+':
    case '-':
        r->type = b->p[*pos] == '+' ? RESP_STATUS : RESP_ERROR;
        r->str.p = text;
        r->str.len = (size_t)len;
        break;
    case '$': {
        long blen = strtol(text, NULL, 10);

        r->type = RESP_BULK;
        if (blen < 0)
            break;
        if (after + (size_t)blen + 2 > b->len)
            return 0;
        r->str.p = (const char *)b->p + after;
        r->str.len = (size_t)blen;
        after += (size_t)blen + 2;
        break;
    }
    default:
        bench_die("redis: unexpected reply byte 0x%02x",
                  (unsigned char)b->p[*pos]);
    }
    *pos = after;
    return 1;
}

static int
parse_reply(const struct iobuf *b, size_t *pos, struct resp_reply *r,
            struct resp_reply *elems)
{
    const char *text;
    size_t p = *pos;
    long len, n;

    if (b->p[p] != '*')
        return parse_scalar(b, pos, r);
    len = line_at(b, p, &text);
    if (len < 0)
        return 0;
    n = strtol(text, NULL, 10);
    if (n > RESP_MAX_ELEMS)
        bench_die("redis: array of %ld elements is more than expected", n);
    p += (size_t)len + 3;
    memset(r, 0, sizeof(*r));
    r->type = RESP_ARRAY;
    for (long i = 0; i < n; i++) {
        if (p >= b->len || !parse_scalar(b, &p, &elems[i]))
            return 0;
        r->elem[i] = &elems[i];
    }
    r->nelem = n > 0 ? (int)n : 0;
    *pos = p;
    return 1;
}

int
resp_read(struct resp_conn *c,
          void (*fn)(void *arg, const struct resp_reply *r), void *arg)
{
    struct iobuf *b = &c->in;
    int count = 0;

    for (;;) {
        size_t room;
        ssize_t n = iobuf_read(b, c->fd, 65536, &room);

        if (n < 0)
            return -1;
        if (n == 0)
            break;
        for (;;) {
            struct resp_reply r, elems[RESP_MAX_ELEMS];
            size_t pos = b->off;

            if (pos >= b->len || !parse_reply(b, &pos, &r, elems))
                break;
            b->off = pos;
            fn(arg, &r);
            count++;
        }
        if (b->off == b->len)
            b->off = b->len = 0;
        if ((size_t)n < room)
            break; /* drained: save the read that would say EAGAIN */
    }
    return count;
}

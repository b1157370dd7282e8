/*
 * zmtp.c — the benchmarks' ZMTP DEALER (see zmtp.h): the SDK's own
 * (sdk/ty_zmtp.c) driven from the benchmark's epoll loop, so the
 * benchmarks measure the wire code every plan uses.
 *
 * zmtp_open connects and waits for the handshake, so afterwards the
 * descriptor stays the same and a message goes straight into the socket.
 * Anything a peer gets wrong ends the benchmark with the SDK's reason.
 */
#include "zmtp.h"

#include "bench.h"
#include "ty_zmtp.h"

#include <poll.h>
#include <stdlib.h>

#define OPEN_WAIT_MS 10000

struct zmtp_conn {
    struct ty__zmtp *z;
};

static void
unexpected(void *arg, const char *data, size_t len)
{
    (void)arg;
    bench_die("zmtp: a message before any request: %.*s", (int)len, data);
}

struct zmtp_conn *
zmtp_open(const char *endpoint, const char *rid)
{
    struct zmtp_conn *c = bench_xcalloc(1, sizeof(*c));
    int64_t until = bench_now_ns() + (int64_t)OPEN_WAIT_MS * 1000000;
    char why[512];

    c->z = ty__zmtp_new(endpoint, rid, why, sizeof(why));
    if (c->z == NULL)
        bench_die("zmtp: %s", why);
    while (!ty__zmtp_open(c->z)) {
        struct pollfd p = {ty__zmtp_fd(c->z), ty__zmtp_events(c->z), 0};
        int64_t retry = ty__zmtp_retry_ms(c->z);

        if (bench_now_ns() > until)
            bench_die("zmtp: no handshake with %s in %d ms", endpoint,
                      OPEN_WAIT_MS);
        poll(&p, 1, retry >= 0 && retry < 100 ? (int)retry : 100);
        if (ty__zmtp_io(c->z, p.revents, unexpected, NULL) < 0)
            bench_die("zmtp: %s", ty__zmtp_error(c->z));
    }
    return c;
}

void
zmtp_close(struct zmtp_conn **pc)
{
    struct zmtp_conn *c = *pc;

    if (c == NULL)
        return;
    ty__zmtp_free(&c->z);
    free(c);
    *pc = NULL;
}

int
zmtp_fd(const struct zmtp_conn *c)
{
    return ty__zmtp_fd(c->z);
}

bool
zmtp_ready(const struct zmtp_conn *c)
{
    return ty__zmtp_open(c->z);
}

void
zmtp_send(struct zmtp_conn *c, const void *data, size_t len)
{
    if (ty__zmtp_send(c->z, data, len, NULL, 0, false) < 0)
        bench_die("zmtp: %s", ty__zmtp_error(c->z));
    /* what the socket did not take: wait for room, a rare case */
    while (ty__zmtp_pending(c->z)) {
        struct pollfd p = {ty__zmtp_fd(c->z), POLLOUT, 0};

        poll(&p, 1, 1000);
        if (ty__zmtp_io(c->z, POLLOUT, unexpected, NULL) < 0)
            bench_die("zmtp: %s", ty__zmtp_error(c->z));
    }
}

struct reader {
    void (*fn)(void *arg, const char *data, size_t len, bool more);
    void *arg;
    int frames;
};

static void
on_message(void *arg, const char *data, size_t len)
{
    struct reader *r = arg;

    r->fn(r->arg, data, len, false);
    r->frames++;
}

int
zmtp_read(struct zmtp_conn *c,
          void (*fn)(void *arg, const char *data, size_t len, bool more),
          void *arg)
{
    struct reader r = {fn, arg, 0};

    if (ty__zmtp_io(c->z, POLLIN, on_message, &r) < 0)
        return -1;
    return r.frames;
}

/*
 * resp.h — just enough of the Redis protocol (RESP2) for the benchmarks:
 * commands out, replies in, on non-blocking TCP connections that the caller
 * waits on with its own epoll.
 *
 * A reply is an integer, a status, an error, a bulk string or an array of
 * those (one level deep, which covers INCR, PUBLISH, SUBSCRIBE and pub/sub
 * messages). Parsed replies point into the connection's input buffer and
 * are valid only inside the callback.
 *
 * Ownership: resp_open returns a connection the caller closes
 * (resp_close); arguments are borrowed.
 */
#ifndef TY_BENCH_RESP_H
#define TY_BENCH_RESP_H

#include <stddef.h>
#include <stdint.h>

#define RESP_MAX_ELEMS 4

enum resp_type { RESP_INT, RESP_STATUS, RESP_ERROR, RESP_BULK, RESP_ARRAY };

struct resp_str {
    const char *p;
    size_t len;
};

struct resp_reply {
    enum resp_type type;
    int64_t integer;     /* RESP_INT */
    struct resp_str str; /* RESP_STATUS, RESP_ERROR, RESP_BULK */
    /* RESP_ARRAY: up to RESP_MAX_ELEMS scalar elements */
    int nelem;
    struct resp_reply *elem[RESP_MAX_ELEMS];
};

struct resp_conn;

/* Connect to 127.0.0.1:port (blocking connect, then non-blocking). */
struct resp_conn *resp_open(int port);
void resp_close(struct resp_conn **c);
int resp_fd(const struct resp_conn *c);

/* Queue a command; nothing is written until resp_flush. */
void resp_cmd(struct resp_conn *c, int argc, const char *const *argv);
/* Write what is queued; returns 0 when all of it went out, 1 when some is
 * left (wait for EPOLLOUT), -1 on error. */
int resp_flush(struct resp_conn *c);
/* Read what the socket has and call fn for each complete reply. Returns
 * the number of replies, or -1 when the peer closed or failed. */
int resp_read(struct resp_conn *c,
              void (*fn)(void *arg, const struct resp_reply *r), void *arg);

#endif

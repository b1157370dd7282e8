/*
 * zmtp.h — a ZMTP 3.0 DEALER for the benchmarks' clients, without libzmq:
 * the SDK's own (sdk/ty_zmtp.c) over a plain socket that the caller waits
 * on with its own epoll. On the wire it is what a libzmq DEALER sends, so
 * the server cannot tell the difference; what it saves is libzmq's
 * per-socket machinery on the client side (an I/O thread hand-off and a
 * mailbox per socket), which in the barrier benchmark is paid a thousand
 * times per round by one process.
 *
 * Everything a peer can get wrong ends the benchmark with a message: a
 * benchmark has no one to return an error to.
 *
 * Ownership: zmtp_open returns a connection the caller closes (zmtp_close);
 * messages handed to the callback point into the connection's buffer and
 * are valid only inside the callback.
 */
#ifndef TY_BENCH_ZMTP_H
#define TY_BENCH_ZMTP_H

#include <stdbool.h>
#include <stddef.h>

struct zmtp_conn;

/* Connect to endpoint ("tcp://127.0.0.1:<port>") as a DEALER with routing
 * id rid and wait for the handshake. */
struct zmtp_conn *zmtp_open(const char *endpoint, const char *rid);
void zmtp_close(struct zmtp_conn **c);
int zmtp_fd(const struct zmtp_conn *c);
/* Whether the server's greeting and READY have arrived (and were right). */
bool zmtp_ready(const struct zmtp_conn *c);

/* Send a message of one frame, waiting for room when the socket is full. */
void zmtp_send(struct zmtp_conn *c, const void *data, size_t len);
/* Read what the socket has and call fn for the first frame of each
 * message (more is always false: further frames are dropped). Returns the
 * number of messages, or -1 when the peer closed or failed. */
int zmtp_read(struct zmtp_conn *c,
              void (*fn)(void *arg, const char *data, size_t len, bool more),
              void *arg);

#endif

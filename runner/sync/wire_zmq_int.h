/*
 * sync/wire_zmq_int.h — sync protocol messages as frames on a libzmq socket:
 * the coordinator's side (runner/sync/syncsvc.c) and the tests that play a raw
 * client. The SDK speaks the same frames itself (sdk/ty_zmtp.c) and does
 * not link libzmq.
 */
#ifndef TY_WIRE_ZMQ_H
#define TY_WIRE_ZMQ_H

#include <stdbool.h>
#include <stddef.h>
#include <zmq.h>

/* ---- frames on a ZeroMQ socket (libzmq wrapped once: EINTR retried,
 * -1 and errno on failure) ---- */

/* Frames kept per message: routing id, JSON, payload, one to spot extras. */
#define TY_WIRE_PARTS 4

/* One received message: up to TY_WIRE_PARTS frames; more_parts is set when
 * the message had more (they were read and dropped). */
struct ty_wire_msg {
    zmq_msg_t part[TY_WIRE_PARTS];
    int nparts;
    bool more_parts;
};

/* Receive every frame of one message (flags: 0 or ZMQ_DONTWAIT). */
int ty__wire_recv(void *sock, struct ty_wire_msg *m, int flags);
void ty__wire_msg_close(struct ty_wire_msg *m);
/* Send [peer] json [data]: peer only when peer != NULL (a ROUTER), data
 * only when has_payload. flags: 0 or ZMQ_DONTWAIT. */
int ty__wire_send(void *sock, const void *peer, size_t peerlen,
                  const char *json, size_t jlen, const void *data, size_t len,
                  bool has_payload, int flags);

#endif

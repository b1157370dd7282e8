/*
 * wire_zmq.c — receiving and sending sync protocol messages on a libzmq
 * socket (see sync/wire_zmq_int.h).
 */
#include "sync/wire_zmq_int.h"

#include <errno.h>

static int
recv_part(void *sock, zmq_msg_t *part, int flags)
{
    int rc;

    zmq_msg_init(part);
    do
        rc = zmq_msg_recv(part, sock, flags);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        int e = errno;

        zmq_msg_close(part);
        errno = e;
        return -1;
    }
    return 0;
}

int
ty__wire_recv(void *sock, struct ty_wire_msg *m, int flags)
{
    zmq_msg_t extra;

    m->nparts = 0;
    m->more_parts = false;
    if (recv_part(sock, &m->part[0], flags) < 0)
        return -1;
    m->nparts = 1;
    /* The rest of a multipart message is already here: never blocks. */
    while (zmq_msg_more(&m->part[m->nparts - 1]) && m->nparts < TY_WIRE_PARTS) {
        if (recv_part(sock, &m->part[m->nparts], 0) < 0)
            return ty__wire_msg_close(m), -1;
        m->nparts++;
    }
    if (!zmq_msg_more(&m->part[m->nparts - 1]))
        return 0;
    m->more_parts = true;
    for (bool more = true; more;) {
        if (recv_part(sock, &extra, 0) < 0)
            return ty__wire_msg_close(m), -1;
        more = zmq_msg_more(&extra);
        zmq_msg_close(&extra);
    }
    return 0;
}

void
ty__wire_msg_close(struct ty_wire_msg *m)
{
    for (int i = 0; i < m->nparts; i++)
        zmq_msg_close(&m->part[i]);
    m->nparts = 0;
}

static int
send_part(void *sock, const void *buf, size_t len, int flags)
{
    int rc;

    do
        rc = zmq_send(sock, buf, len, flags);
    while (rc < 0 && errno == EINTR);
    return rc < 0 ? -1 : 0;
}

int
ty__wire_send(void *sock, const void *peer, size_t peerlen, const char *json,
              size_t jlen, const void *data, size_t len, bool has_payload,
              int flags)
{
    int more = flags | ZMQ_SNDMORE;

    if (peer != NULL && send_part(sock, peer, peerlen, more) < 0)
        return -1;
    if (send_part(sock, json, jlen, has_payload ? more : flags) < 0)
        return -1;
    if (has_payload && send_part(sock, data ? data : "", len, flags) < 0)
        return -1;
    return 0;
}

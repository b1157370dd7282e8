/*
 * ty_zmtp.h — the SDK's side of a ZeroMQ connection, spoken directly:
 * ZMTP 3.0 as a DEALER over one plain TCP socket (sdk/ty_zmtp.c). Internal
 * to the SDK.
 *
 * On the wire it is what a libzmq DEALER sends — the coordinator's ROUTER
 * cannot tell the difference — but a plan's thread can write a request
 * straight into the socket, and the connection's I/O thread reads answers
 * from it, with no libzmq I/O thread and mailbox in between: two fewer
 * thread hand-offs per message on each side.
 *
 * Like a libzmq DEALER it connects in the background and keeps trying
 * every 100 ms until the coordinator answers; messages sent meanwhile are
 * held and go out once the handshake is done. Unlike one, it does not
 * reconnect after a connection that was up is lost: the connection is then
 * broken and says why (the coordinator keeps nothing for a new one).
 *
 * Not thread-safe: the caller (sdk/ty_conn.c) serializes every call with
 * its lock. Ownership: ty__zmtp_new returns a connection the caller frees.
 */
#ifndef TY_ZMTP_H
#define TY_ZMTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ty__zmtp;

/* Resolve url ("tcp://host:port") and start connecting as a DEALER with
 * routing id rid (at most 255 bytes). NULL with a phrase in why. */
struct ty__zmtp *ty__zmtp_new(const char *url, const char *rid, char *why,
                              size_t whylen);
void ty__zmtp_free(struct ty__zmtp **z);

/* What to poll: the socket (-1 while waiting to try again) and the events
 * it waits for, and how long until the next attempt (-1: none due). */
int ty__zmtp_fd(const struct ty__zmtp *z);
short ty__zmtp_events(const struct ty__zmtp *z);
int64_t ty__zmtp_retry_ms(const struct ty__zmtp *z);
/* Whether the handshake is done, and whether output waits for the socket. */
bool ty__zmtp_open(const struct ty__zmtp *z);
bool ty__zmtp_pending(const struct ty__zmtp *z);

/* Queue a message of one frame, or two when has_payload, and write what
 * the socket takes now. The bytes are copied: nothing stays borrowed.
 * 0, or -1 when the connection is broken (ty__zmtp_error says why). */
int ty__zmtp_send(struct ty__zmtp *z, const void *json, size_t jlen,
                  const void *data, size_t len, bool has_payload);

/* After poll said revents for the socket (or a retry is due): go on
 * connecting, write, read; fn gets the first frame of each message that
 * arrived. 0, or -1 once the connection is broken. */
int ty__zmtp_io(struct ty__zmtp *z, short revents,
                void (*fn)(void *arg, const char *data, size_t len), void *arg);
const char *ty__zmtp_error(const struct ty__zmtp *z);

/* For tests and fuzzing: a connection without a socket, waiting for the
 * peer's greeting, whose input comes only from ty__zmtp_input (NULL when
 * out of memory); and the reading half of ty__zmtp_io: len bytes that
 * arrived, the peer's greeting, READY and frames in any pieces. fn gets
 * the first frame of each message completed. 0, or -1 once broken. */
struct ty__zmtp *ty__zmtp_new_unconnected(void);
int ty__zmtp_input(struct ty__zmtp *z, const void *data, size_t len,
                   void (*fn)(void *arg, const char *data, size_t len),
                   void *arg);

#endif

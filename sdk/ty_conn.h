/*
 * ty_conn.h — the SDK's connection to the sync service (sdk/ty_conn.c), and
 * what ty_main.c and ty_sync.c share about it. Internal to the SDK.
 *
 * The connection is a ZMTP DEALER over one TCP socket (ty_zmtp.h).
 * Callers on any thread submit a request, which goes into the socket at
 * once under the connection's lock; an I/O thread reads the responses,
 * matches them to requests by id and wakes the caller that waits for one. A
 * request is either waited for (ty__conn_wait, exactly once, or
 * ty__conn_forget) or async (events: nobody waits; ty__conn_flush waits for all
 * of them before the connection closes).
 *
 * After fork() the child has no I/O thread: ty__conn_usable() is false there
 * and every call fails with -ENOTCONN, while the parent's connection goes on
 * untouched.
 */
#ifndef TY_CONN_H
#define TY_CONN_H

#include "ty_int.h"
#include "ty_wire.h"

#include <stdbool.h>
#include <stdint.h>

struct ty__creq;

/* Connect a DEALER to url with a routing id naming instance global_index.
 * Returns NULL with a phrase in why. The caller owns the connection. */
struct ty__conn *ty__conn_open(const char *url, int global_index, char *why,
                               size_t whylen);
/* Wait up to flush_ms for async requests, stop the I/O thread, close. In a
 * forked child nothing is touched: the handle forgets the connection. */
void ty__conn_close(struct ty__conn **conn, int64_t flush_ms);
/* Whether this process may use the connection (false in a forked child or
 * once the I/O thread failed). */
bool ty__conn_usable(const struct ty__conn *conn);
const char *ty__conn_url(const struct ty__conn *conn);
/* Why the connection is down ("" while it is up, or unknown). */
const char *ty__conn_error(struct ty__conn *conn);

/* The release board (ty_board.h) in dir, for a connection on the
 * coordinator's host: open it before hello (which then asks for an area
 * with "board": 1) and enable it with the area the answer gives. Until
 * then, and whenever either fails, releases come as messages. Barriers and
 * signal_and_wait take a free slot of the area when there is one. */
bool ty__conn_board_open(struct ty__conn *conn, const char *dir);
bool ty__conn_board_enable(struct ty__conn *conn, int64_t first);

/* Send a request (req->id is assigned here; the payload, req->data, is
 * copied or written before this returns). Returns NULL for async requests
 * and when the request cannot be encoded (then *rc is -EINVAL) or the
 * connection is down (-ENOTCONN). */
struct ty__creq *ty__conn_submit(struct ty__conn *conn, struct ty_wire_req *req,
                                 bool async, int *rc);
/* Wait for the answer until deadline_ms (monotonic). Returns 0 with resp
 * filled (caller releases it), -ETIMEDOUT, or -ENOTCONN. Frees creq. */
int ty__conn_wait(struct ty__conn *conn, struct ty__creq *creq,
                  int64_t deadline_ms, struct ty_wire_resp *resp);
/* Write a byte to fd (a non-blocking pipe that outlives the request) once
 * creq is answered or the connection breaks, from the I/O thread: a
 * thread that polls fd can then collect the answer with ty__conn_wait
 * without blocking. At once when that has already happened. */
void ty__conn_notify(struct ty__conn *conn, struct ty__creq *creq, int fd);
/* Whether ty__conn_wait on creq would return without waiting. */
bool ty__conn_answered(struct ty__conn *conn, const struct ty__creq *creq);
/* Give up on a request that was not waited for. Frees creq. */
void ty__conn_forget(struct ty__conn *conn, struct ty__creq *creq);
/* Wait until every async request is answered; 0 or -ETIMEDOUT. */
int ty__conn_flush(struct ty__conn *conn, int64_t deadline_ms);

/* ty_sync.c: send an event (async) when connected. */
void ty__sync_event(struct ty *ty, const cJSON *event);

/* ty_sync.c: ask the coordinator to answer when it wants a pre-OOM
 * snapshot, within timeout_ms; the answer (or the connection's end)
 * writes a byte to fd (ty__conn_notify). NULL with *rc = -ENOTCONN when
 * not connected. The caller collects the request with
 * ty__sync_snapshot_answer or gives it up with ty__conn_forget. */
struct ty__creq *ty__sync_snapshot_wait(struct ty *ty, int64_t timeout_ms,
                                        int fd, int *rc);
/* The answer to a snapshot_wait that ty__conn_answered says is there: 0
 * ("ok": take the snapshot), -ETIMEDOUT, -EINVAL (a coordinator that does
 * not serve the op), -ECANCELED, -EBUSY, -ENOTCONN... Frees creq. */
int ty__sync_snapshot_answer(struct ty *ty, struct ty__creq *creq);

/* ty_main.c: the wall clock as RFC 3339 UTC with milliseconds. */
void ty__rfc3339_now(char *buf, size_t size);

#endif

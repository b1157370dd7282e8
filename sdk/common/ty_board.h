/*
 * ty_board.h — the release board as an instance reads it
 * (sdk/common/ty_board.c) and its layout, which the coordinator writes
 * (runner/sync/syncsvc_board.c). Internal to testyard.
 *
 * A file of a header and 16-byte slots, and a FIFO next to it that the
 * coordinator writes one byte into after each release. A connection that
 * was given an area of slots at hello names a free one in a barrier or
 * signal_and_wait; when the barrier is released the coordinator stores the
 * seq, then the request's id, in that slot instead of sending a message.
 * The protocol is in docs/sync-protocol.md ("Same-host release").
 *
 * Ownership: the connection owns its board; every call but
 * ty__board_open/close runs under the connection's lock.
 */
#ifndef TY_BOARD_H
#define TY_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TY_BOARD_MAGIC "TYBOARD"
#define TY_BOARD_VERSION 1
#define TY_BOARD_AREA 4 /* slots per connection */

struct ty_board_header {
    char magic[8]; /* TY_BOARD_MAGIC with its NUL */
    uint32_t version;
    uint32_t slot_bytes; /* sizeof(struct ty_board_slot) */
    uint64_t nslots;
    uint64_t area_slots; /* TY_BOARD_AREA */
    char pad[32];
};

struct ty_board_slot {
    uint64_t id; /* the request answered; stored after seq */
    int64_t seq; /* its seq, -1 for a barrier */
};

_Static_assert(sizeof(struct ty_board_header) == 64, "one cache line");
_Static_assert(sizeof(struct ty_board_slot) == 16, "four slots a line");

struct ty__board;

/* Map <dir>/board read-only and watch <dir>/wake; NULL when either is
 * missing or not a board. */
struct ty__board *ty__board_open(const char *dir);
void ty__board_close(struct ty__board **board);
/* Use the area from slot first (the hello answer); false when it does not
 * fit the board. */
bool ty__board_enable(struct ty__board *board, int64_t first);
bool ty__board_enabled(const struct ty__board *board);
/* A descriptor that polls readable after a release (an epoll set). */
int ty__board_fd(const struct ty__board *board);
/* A free slot of the area for request id, or 0 when all are taken. */
int64_t ty__board_reserve(struct ty__board *board, int64_t id);
/* The request was answered some other way: free its slot, if any. */
void ty__board_forget(struct ty__board *board, int64_t id);
/* How many slots wait for an answer. */
int ty__board_waiting(const struct ty__board *board);
/* Consume the wake-up, then free every slot answered since the last look,
 * putting its request id and seq in ids/seqs; returns how many. */
size_t ty__board_collect(struct ty__board *board, int64_t ids[TY_BOARD_AREA],
                         int64_t seqs[TY_BOARD_AREA]);

#endif

/*
 * net.h — what the provider and its requestors say to each other over TCP,
 * and the provider's flow control.
 *
 * One connection carries one transfer: the requestor sends GET, the
 * provider answers with every block of the DAG under the root in
 * depth-first pre-order (a node before its children, children left to
 * right), then END, and the requestor closes. A frame is a u32 big-endian
 * length (of what follows), a type byte and a body:
 *
 *   GET    u32 round | u32 requestor's global index | u32 root index |
 *          32-byte root hash
 *   BLOCK  32-byte hash | the block's bytes
 *   END    u32 status (0 = ok) | u64 blocks sent | text (why, when not ok)
 *
 * Deadlines are CLOCK_MONOTONIC nanoseconds; MS_NO_DEADLINE waits forever.
 * Socket calls return 0 or a negative errno; -ENOTCONN means the other
 * side closed the connection.
 */
#ifndef MS_NET_H
#define MS_NET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MS_NO_DEADLINE INT64_MAX

enum ms_frame_type { MS_GET = 1, MS_BLOCK = 2, MS_END = 3 };

#define MS_FRAME_HDR 5 /* u32 length, type */
#define MS_GET_BODY (12 + 32)
#define MS_END_BODY 12 /* and up to MS_END_TEXT of text */
#define MS_END_TEXT 200

int64_t ms_now_ns(void);
/* The run's deadline (TESTYARD_DEADLINE_MS) on the monotonic clock. */
int64_t ms_run_deadline(void);
/* Milliseconds left until deadline for an SDK wait: -1 (the run's own
 * deadline) when there is none, else at least 0. */
int64_t ms_timeout_ms(int64_t deadline);
/* Sleep until the monotonic time `at`, in slices, giving up early when
 * *stop becomes true (stop may be NULL). */
void ms_sleep_until(int64_t at, const atomic_bool *stop);

/* Listen on every address, any port; the socket or -errno. */
int ms_listen(int *port);
/* The address peers reach this instance at (see net.c). */
void ms_advertised_host(char *buf, size_t size);
/* A connected socket or -errno. */
int ms_connect(const char *host, int port, int64_t deadline);
int ms_read_full(int fd, void *buf, size_t len, int64_t deadline);
int ms_write_full(int fd, const void *buf, size_t len, int64_t deadline);
/* What a code from the calls above means, in words. */
const char *ms_io_strerror(int rc);

/*
 * The responder's memory budget: bytes of response frames built but not
 * yet written, per requestor and in total. A producer that would go over a
 * limit waits until a sender has written enough; a frame larger than a
 * limit still goes when nothing else is queued, so nothing deadlocks. A
 * limit of 0 means none.
 */
struct ms_budget {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t per_peer, total;
    uint64_t used, peak;
    uint64_t *peer_used;
    int npeers;
    uint64_t waits; /* times a producer had to wait */
};

int ms_budget_init(struct ms_budget *b, uint64_t per_peer, uint64_t total,
                   int npeers);
void ms_budget_release_all(struct ms_budget *b);
/* Take n bytes for peer: 0, -ETIMEDOUT at deadline, -ECANCELED once
 * *abort is true (wake waiters with ms_budget_wake after setting it). */
int ms_budget_acquire(struct ms_budget *b, int peer, uint64_t n,
                      const atomic_bool *abort, int64_t deadline);
void ms_budget_release(struct ms_budget *b, int peer, uint64_t n);
void ms_budget_wake(struct ms_budget *b);
/* The highest use since the last call, and the waits since then; both
 * restart from the current use. */
void ms_budget_round_stats(struct ms_budget *b, uint64_t *peak,
                           uint64_t *waits);

/*
 * The provider's egress bandwidth: a token bucket shared by every
 * connection, kept as a virtual clock. A frame of n bytes may start at the
 * returned time; it moves the clock on by n / rate. Idle time is credited
 * up to MS_PACER_BURST_NS, the bucket's depth. rate 0 = unlimited.
 */
#define MS_PACER_BURST_NS 10000000LL

struct ms_pacer {
    pthread_mutex_t mu;
    uint64_t rate; /* bytes per second */
    int64_t next;
};

void ms_pacer_init(struct ms_pacer *p);
void ms_pacer_set(struct ms_pacer *p, uint64_t rate);
int64_t ms_pacer_slot(struct ms_pacer *p, uint64_t n);
void ms_pacer_release(struct ms_pacer *p);

#endif

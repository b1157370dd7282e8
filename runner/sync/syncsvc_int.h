/*
 * sync/syncsvc_int.h — what the sync service's files share
 * (runner/sync/syncsvc*.c).
 *
 *   syncsvc.c         socket, message loop, hello, events, deadlines
 *   syncsvc_auth.c    the run's secret, refusals
 *   syncsvc_conn.c    connections that said hello, their slots, closes
 *   syncsvc_barrier.c states, signals, barriers, membership, barriers.jsonl
 *   syncsvc_replay.c  restarted instances: their signals' order, replays
 *   syncsvc_topic.c   bounded topics and cursor fetches
 *   syncsvc_upload.c  output uploads and appends
 *   syncsvc_snapshot.c snapshot waits: pre-OOM snapshot requests
 *   syncsvc_map.c     the string map and the deadline heap they use
 *
 * Everything runs on the orchestrator's thread; nothing here locks.
 * Ownership: the service owns every struct below; a waiter belongs to the
 * barrier or topic whose list holds it, an upload to its instance.
 */
#ifndef TY_SYNCSVC_INT_H
#define TY_SYNCSVC_INT_H

#include "base/strbuf.h"
#include "sync/sync.h"
#include "ty_board.h"
#include "base/util.h"
#include "ty_wire.h"
#include "sync/wire_zmq_int.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SVC_MAX_WAITS 256  /* pending waits per instance */
#define SVC_MAX_UPLOADS 16 /* uploads in progress per instance */
#define SVC_MAX_PEERS 8    /* connections (routing ids) per instance */
#define SVC_OUTPUT_QUOTA ((uint64_t)1 << 30) /* when the config gives none */
#define SVC_SECRET_BYTES 32 /* the run's secret: 256 random bits */
/* The one answer a client without the secret ever gets. */
#define SVC_DENIED "denied: say hello with the run's secret first"
/* What the allocator and the map add to each object the run-wide bounds
 * count (syncsvc_topic.c, syncsvc_barrier.c). */
#define SVC_OBJ_OVERHEAD 64
#define SVC_UPLOAD_IDLE_MS (300 * 1000)
#define SVC_FOREVER_MS (INT64_MAX / 4)
/* An answer printed on the stack: an error message of 1024 bytes fits even
 * when every byte needs a six-byte escape. Larger ones go through cJSON. */
#define SVC_REPLY_MAX 8192
/* Routing ids up to this long are kept inside the waiter (the SDK's are
 * about 30 bytes, libzmq's own 5). */
#define SVC_PEER_INLINE 48

/* ---- a map from byte strings to pointers (syncsvc_map.c) ---- */

struct svc_map_entry {
    struct svc_map_entry *next;
    uint64_t hash;
    void *value;
    size_t klen;
    char key[];
};

struct svc_map {
    struct svc_map_entry **buckets;
    size_t nbuckets;
    size_t count;
};

void svc__map_init(struct svc_map *m);
/* Free the entries, calling free_value (may be NULL) on each value. */
void svc__map_release(struct svc_map *m, void (*free_value)(void *));
void *svc__map_get(const struct svc_map *m, const void *key, size_t klen);
/* Insert or replace; the key is copied. */
void svc__map_put(struct svc_map *m, const void *key, size_t klen, void *value);
/* Remove; returns the value or NULL. */
void *svc__map_del(struct svc_map *m, const void *key, size_t klen);
void svc__map_each(struct svc_map *m, void (*fn)(void *value, void *arg),
                   void *arg);

/* ---- deadlines (syncsvc_map.c): a binary min-heap of timers ---- */

enum svc_timer_kind {
    SVC_T_BARRIER,
    SVC_T_FETCH,
    SVC_T_UPLOAD,
    SVC_T_SNAPSHOT
};

struct svc_timer {
    int64_t at;  /* monotonic ms */
    size_t slot; /* index in the heap, SIZE_MAX when not queued */
    enum svc_timer_kind kind;
};

struct svc_heap {
    struct svc_timer **v;
    size_t n;
    size_t cap;
};

void svc__heap_push(struct svc_heap *h, struct svc_timer *t);
void svc__heap_remove(struct svc_heap *h, struct svc_timer *t);
struct svc_timer *svc__heap_top(const struct svc_heap *h);

#define svc__container_of(p, type, member)                                     \
    ((type *)(void *)((char *)(p)-offsetof(type, member)))

/* ---- the service ---- */

/* A ZeroMQ routing id, as received (up to 255 bytes). */
struct svc_peer {
    unsigned char *id;
    size_t len;
};

struct svc_upload;

/* A connection that said a valid hello: the peers map's value, keyed by
 * its routing id. */
struct svc_conn {
    int inst;
    /* Of a process of inst that ended in a restart: it holds no slot and
     * is refused until it closes (syncsvc_instance_restarting). */
    bool stale;
    int fd;        /* the descriptor it came in on, -1 when unknown */
    int64_t board; /* its first release board slot, 0 = none */
    size_t len;
    unsigned char id[]; /* routing id */
};

struct svc_inst {
    char *group;
    int gidx; /* index of group in svc->groups */
    int group_index;
    char *outdir;
    bool alive;
    bool hello;
    int incarnation;   /* restarts so far (syncsvc_instance_restarting) */
    char *how;         /* how it ended, once it has */
    int waits;         /* pending barrier and fetch waits */
    int barrier_waits; /* of which barriers, for on_waiting */
    int npeers;
    int nuploads;
    struct svc_upload *uploads;
    struct svc_waiter *snapshot; /* its pending snapshot_wait, or NULL */
    uint64_t quota;              /* bytes it may upload and append */
    uint64_t charged; /* bytes of uploads begun (until dropped) and appends */
};

struct svc_waiter {
    struct svc_timer timer;
    struct svc_waiter *prev, *next;
    int inst;
    int64_t id;           /* request id to answer */
    int64_t seq;          /* signal_and_wait: the sequence number, else -1 */
    int64_t board;        /* release board slot to answer in, 0 = none */
    struct svc_peer peer; /* id points to peer_buf when it fits */
    unsigned char peer_buf[SVC_PEER_INLINE];
    struct svc_barrier *barrier; /* barrier waits */
    struct svc_topic *topic;     /* fetch waits */
    int64_t from, max;
};

struct svc_barrier {
    struct svc_state *state;
    int64_t target;
    int scope; /* the group whose instances take part, -1 = every one */
    struct svc_waiter *waiters;
    struct svc_barrier *next;
};

/* Where a restarted instance's current incarnation is in a state's
 * order: the next earlier signal of it to replay is at or after pos;
 * SIZE_MAX when there is none left (it counts again). */
struct svc_replay {
    int inst;
    int incarnation;
    size_t pos;
};

struct svc_state {
    char *name;
    int64_t count;
    int32_t *order; /* order[seq - 1]: the instance that got seq */
    size_t capa;    /* of order, which holds count entries */
    struct svc_replay *replays;
    size_t nreplays, capreplays;
    uint64_t *signalled; /* bitmap over instances */
    int64_t pending;     /* live instances that have not signalled */
    int64_t *gpending;   /* the same per group (svc->groups) */
    struct svc_barrier *barriers;
    int64_t *released; /* targets already logged as released */
    size_t nreleased, capreleased;
};

/* An entry of a topic, printed once as it goes into answers. */
struct svc_entry {
    char *item;  /* {"seq":<n>,"value":<value printed compactly>} */
    size_t len;  /* of item */
    size_t vlen; /* of the value alone: what the bounds count */
};

struct svc_topic {
    char *name;
    struct svc_entry *entries; /* seq = index + 1 */
    size_t n, cap;
    size_t bytes;
    struct svc_waiter *waiters;
};

struct svc_upload {
    struct svc_timer timer;
    struct svc_upload *next;
    int64_t uid;
    int inst;
    int fd;
    int dirfd;  /* the folder the file goes into, opened link-free */
    char *path; /* name as the instance gave it, for messages */
    char *base; /* last component of path */
    char *tmp;  /* base + ".tmp", in dirfd */
    int64_t size, received;
    bool done; /* put in place: its bytes stay charged */
};

struct syncsvc {
    char *run_id;
    struct svc_inst *inst;
    size_t ninst;
    char **groups; /* the run's group ids, in order of first instance */
    size_t ngroups;
    uint64_t *alive; /* bitmap over instances */
    size_t words;    /* uint64 words in each bitmap */
    size_t topic_max_entries;
    size_t topic_max_bytes;
    struct syncsvc_bounds bounds;  /* per run: topics and states */
    size_t topic_held, state_held; /* bytes counted against them */
    struct syncsvc_observer obs;
    void *obs_arg;
    void *ctx, *sock;
    char *endpoint;
    int port;
    int log_fd; /* barriers.jsonl, -1 when none */
    char *log_path;
    int log_errno; /* why barriers.jsonl stopped, 0 while it is whole */
    struct svc_map states, topics;
    struct svc_map peers; /* routing id -> struct svc_conn */
    /* syncsvc_auth.c */
    char secret[2 * SVC_SECRET_BYTES + 1];
    int64_t refusal_next_ms;
    uint64_t refusals_unlogged;
    /* syncsvc_conn.c: the socket monitor and connections by descriptor */
    void *monitor;
    struct svc_conn **by_fd;
    size_t nfd;
    struct svc_heap timers;
    int64_t next_upload;
    struct svc_waiter *spare; /* freed waiters kept for reuse (via next) */
    size_t nspare;
    /* the release board (syncsvc_board.c); board == NULL when off */
    void *board;
    size_t board_bytes;
    uint64_t board_slots, board_next;
    int wake_fd;
    char *board_dir;
    /* syncsvc_snapshot.c: the run is ending, snapshot waits are over */
    bool snapshots_closed;
    /* fetch answers are built here (syncsvc_topic.c) */
    struct strbuf items, answer;
};

/* What a handler knows about the message it serves. */
struct svc_ctx {
    struct svc_peer peer;   /* borrowed from the received frame */
    const zmq_msg_t *frame; /* the JSON frame (peer address, descriptor) */
    int inst;               /* -1 before hello */
    int64_t board;          /* the connection's first board slot, 0 = none */
    bool stale;             /* a connection of a process that was restarted */
};

/* syncsvc.c */
/* Send one printed answer without blocking; a peer that is not reading
 * loses it (logged with the request id). */
void svc__send(struct syncsvc *svc, const struct svc_peer *peer,
               const char *json, size_t len, int64_t id);
/* Print (without cJSON when it can) and send an answer. */
void svc__reply(struct syncsvc *svc, const struct svc_peer *peer,
                const struct ty_wire_resp *resp);
void svc__reply_status(struct syncsvc *svc, const struct svc_peer *peer,
                       int64_t id, enum ty_wire_status st, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int64_t svc__now_ms(void);
/* Deadline for a wait of timeout_ms from now (saturating). */
int64_t svc__deadline(int64_t timeout_ms);
/* A pending wait for the current request; NULL (and an answer sent) when
 * the instance already has too many. */
struct svc_waiter *svc__waiter_new(struct syncsvc *svc, const struct svc_ctx *c,
                                   int64_t id, int64_t timeout_ms,
                                   enum svc_timer_kind kind);
/* Unqueue and free a waiter (already unlinked from its owner's list). */
void svc__waiter_free(struct syncsvc *svc, struct svc_waiter *w);
/* Free a waiter's memory only (the service is being destroyed). */
void svc__waiter_drop(struct svc_waiter *w);
void svc__list_add(struct svc_waiter **head, struct svc_waiter *w);
void svc__list_del(struct svc_waiter **head, struct svc_waiter *w);
/* Unlink and free, unanswered, the waiters of instance inst in a list;
 * how many there were. */
int svc__list_drop_inst(struct syncsvc *svc, struct svc_waiter **head,
                        int inst);
/* The index of a group id in svc->groups, or -1. */
int svc__group_find(const struct syncsvc *svc, const char *group);
/* "<group>/<index>" in buf. */
const char *svc__inst_name(const struct syncsvc *svc, int i, char *buf,
                           size_t size);

/* syncsvc_auth.c */
/* Take the run's secret (given, when not NULL) or make one (getrandom). */
int svc__auth_init(struct syncsvc *svc, const char *given, struct err *err);
/* Whether given (may be NULL) is the run's secret; constant time. */
bool svc__auth_ok(const struct syncsvc *svc, const char *given);
/* Answer SVC_DENIED and log why with the peer's address (rate-limited). */
void svc__auth_refuse(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
                      const char *why);

/* syncsvc_conn.c */
int svc__conn_open(struct syncsvc *svc, struct err *err);
void svc__conn_close(struct syncsvc *svc);
/* The connection of a routing id, NULL before a valid hello. */
struct svc_conn *svc__conn_find(const struct syncsvc *svc,
                                const struct svc_peer *peer);
/* The connection a message came on, NULL before a valid hello: also
 * when its routing id belonged to a connection that has closed since. */
struct svc_conn *svc__conn_of(struct syncsvc *svc, const struct svc_ctx *c);
/* Give the message's connection one of instance inst's slots; -1 when
 * all are held by connections still open. */
int svc__conn_claim(struct syncsvc *svc, const struct svc_ctx *c, int inst);
/* Give back the slots of connections that closed. */
void svc__conn_poll(struct syncsvc *svc);
/* Instance inst is restarting: its connections give back their slots now
 * and are refused until they close. */
void svc__conn_restarting(struct syncsvc *svc, int inst);

/* syncsvc_barrier.c */
void svc__op_signal(struct syncsvc *svc, const struct svc_ctx *c,
                    const struct ty_wire_req *req);
void svc__op_barrier(struct syncsvc *svc, const struct svc_ctx *c,
                     const struct ty_wire_req *req);
void svc__op_signal_wait(struct syncsvc *svc, const struct svc_ctx *c,
                         const struct ty_wire_req *req);
void svc__barrier_timeout(struct syncsvc *svc, struct svc_waiter *w);
void svc__barrier_exited(struct syncsvc *svc, int inst);
/* Drop instance inst's barrier waits without an answer (it restarts). */
void svc__barrier_restarting(struct syncsvc *svc, int inst);
void svc__barrier_cancel_all(struct syncsvc *svc, const char *why);
void svc__state_free(void *state);

/* syncsvc_replay.c */
/* Whether the signal of c's instance to st repeats one an earlier
 * incarnation of it sent: 1 with *seq the number that signal got (nothing
 * counts), 0 when it counts, -1 (answer sent) when the run's states have
 * no room to remember it. On 0, call svc__replay_note once it is counted. */
int svc__replay_check(struct syncsvc *svc, const struct svc_ctx *c, int64_t id,
                      struct svc_state *st, int64_t *seq);
/* Remember that inst got st->count (room was made by svc__replay_check). */
void svc__replay_note(struct svc_state *st, int inst);

/* syncsvc_board.c */
/* Make the board in dir (a new folder) for the coordinator's user and
 * group gid (> 0; else no one else). */
int svc__board_open(struct syncsvc *svc, const char *dir, int gid,
                    struct err *err);
void svc__board_close(struct syncsvc *svc);
/* The first slot (from 1) of a new connection's area; 0 when off or full. */
int64_t svc__board_area(struct syncsvc *svc);
/* Answer request id with seq in slot (from 1). */
void svc__board_post(struct syncsvc *svc, int64_t slot, int64_t id,
                     int64_t seq);
/* Wake every instance watching the board: after a release's posts. */
void svc__board_wake(struct syncsvc *svc);

/* syncsvc_topic.c */
void svc__op_publish(struct syncsvc *svc, const struct svc_ctx *c,
                     const struct ty_wire_req *req);
void svc__op_fetch(struct syncsvc *svc, const struct svc_ctx *c,
                   const struct ty_wire_req *req);
void svc__fetch_timeout(struct syncsvc *svc, struct svc_waiter *w);
void svc__topic_cancel_all(struct syncsvc *svc, const char *why);
/* Drop instance inst's fetch waits without an answer (it restarts). */
void svc__topic_restarting(struct syncsvc *svc, int inst);
void svc__topic_free(void *topic);

/* syncsvc_upload.c */
void svc__op_upload_begin(struct syncsvc *svc, const struct svc_ctx *c,
                          const struct ty_wire_req *req);
void svc__op_upload_chunk(struct syncsvc *svc, const struct svc_ctx *c,
                          const struct ty_wire_req *req);
void svc__op_upload_end(struct syncsvc *svc, const struct svc_ctx *c,
                        const struct ty_wire_req *req);
void svc__op_upload_abort(struct syncsvc *svc, const struct svc_ctx *c,
                          const struct ty_wire_req *req);
void svc__op_append(struct syncsvc *svc, const struct svc_ctx *c,
                    const struct ty_wire_req *req);
void svc__upload_timeout(struct syncsvc *svc, struct svc_upload *u);
/* Drop every upload of an instance (it ended): partial files vanish. */
void svc__upload_drop_all(struct syncsvc *svc, int inst);

/* syncsvc_snapshot.c */
void svc__op_snapshot_wait(struct syncsvc *svc, const struct svc_ctx *c,
                           const struct ty_wire_req *req);
void svc__snapshot_timeout(struct syncsvc *svc, struct svc_waiter *w);
/* Answer instance inst's snapshot wait, if any, with canceled. */
void svc__snapshot_cancel(struct syncsvc *svc, int inst, const char *why);
/* The run is ending: cancel every snapshot wait, and new ones at once. */
void svc__snapshot_close_all(struct syncsvc *svc, const char *why);
/* Forget instance inst's snapshot wait, if any, with no answer. */
void svc__snapshot_drop(struct syncsvc *svc, int inst);
/* Forget the snapshot wait of a connection that closed (no answer). */
void svc__snapshot_conn_closed(struct syncsvc *svc, int inst,
                               const unsigned char *id, size_t len);

#endif

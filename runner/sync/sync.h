/*
 * sync/sync.h — the sync service that lives inside the coordinator.
 *
 * A ZeroMQ ROUTER socket that every instance's SDK connects to with a
 * DEALER. It serves signal entry, barriers, signal-and-wait, ordered
 * topics with cursors, instance events, output uploads (files and
 * appended lines written into each instance's folder), and snapshot waits
 * through which the orchestrator asks an instance for a heap snapshot
 * (syncsvc_snapshot_request). The wire protocol is
 * in docs/sync-protocol.md and its encoding in sdk/common/ty_wire.c.
 *
 * The orchestrator owns the loop: it polls syncsvc_socket() together with
 * its other sources and calls syncsvc_handle() when the socket is readable
 * and syncsvc_tick() when syncsvc_next_deadline_ms() passes. Membership comes
 * from the backend: syncsvc_instance_exited() is called when an instance
 * ends, and every barrier that can no longer reach its target fails at once
 * for all its waiters with a message naming the instance;
 * syncsvc_instance_restarting() when it ends to be started again.
 *
 * Only a client that knows the run's secret (syncsvc_secret) is served;
 * anyone else gets the same `denied`, which says nothing about the run.
 *
 * Ownership: syncsvc_new copies everything it is given; the returned
 * service is the caller's (syncsvc_destroy).
 */
#ifndef TY_SYNCSVC_H
#define TY_SYNCSVC_H

#include "base/err.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct syncsvc;

/* One expected instance of the run. */
struct syncsvc_instance {
    const char *group;  /* group id */
    int group_index;    /* 0-based within the group */
    const char *outdir; /* its folder: <runs>/<run-id>/<group>/<index> */
    /* Bytes it may upload and append (run.output_quota); 0 = default. */
    uint64_t output_quota;
};

/* What the orchestrator hears about, for outcomes and progress lines. All
 * callbacks are optional and run on the orchestrator's thread inside
 * syncsvc_handle / syncsvc_tick / syncsvc_instance_exited. */
struct syncsvc_observer {
    /* An instance event (type "message", "start", "ready", "success",
     * "failure", "crash", "stage_start", "stage_end"); event is borrowed. */
    void (*on_event)(void *arg, int instance, const cJSON *event);
    /* An instance said hello (it is connected). */
    void (*on_hello)(void *arg, int instance);
    /* A barrier's waiters were released (ok=true) or failed (ok=false). */
    void (*on_barrier)(void *arg, const char *state, int64_t target, bool ok);
    /* Number of instances currently blocked in a barrier changed. */
    void (*on_waiting)(void *arg, int instance, bool waiting);
};

/* Bounds on what instances may make the service hold, per run; 0 = the
 * default. Bytes count what the service keeps: values and names as
 * printed plus a fixed cost per entry, topic and state
 * (docs/sync-protocol.md, "Bounds"). */
struct syncsvc_bounds {
    size_t topics;      /* topics in the run */
    size_t topic_bytes; /* held by every topic together */
    size_t states;      /* states in the run */
    size_t state_bytes; /* held by every state together */
};

#define SYNCSVC_MAX_TOPICS 100000
#define SYNCSVC_MAX_TOPIC_BYTES (256u << 20)
#define SYNCSVC_MAX_STATES 100000
#define SYNCSVC_MAX_STATE_BYTES (64u << 20)

struct syncsvc_config {
    const char *run_id;
    /* The run's secret, 64 hex digits; NULL (always, but in tests): made
     * from getrandom. */
    const char *secret;
    const char *run_dir; /* barrier log goes to <run_dir>/barriers.jsonl */
    const char *bind;    /* e.g. "tcp://127.0.0.1:0" (0 = any port) */
    const struct syncsvc_instance *instances;
    size_t ninstances;
    size_t topic_max_entries; /* per topic; 0 = default */
    size_t topic_max_bytes;   /* per topic; 0 = default */
    struct syncsvc_bounds bounds;
    const struct syncsvc_observer *observer;
    void *observer_arg;
    /* Where to make the release board for instances on this host (a
     * folder the service creates and removes), NULL for none. When it
     * cannot be made: an error, or with board_optional releases simply
     * go as messages. */
    const char *board_dir;
    bool board_optional;
    /* The group, besides the coordinator's user, that may read the
     * board (local:docker's containers); 0 or less: no one else. */
    int board_gid;
};

struct syncsvc *syncsvc_new(const struct syncsvc_config *cfg, struct err *err);
void syncsvc_destroy(struct syncsvc **svc);

/* The endpoint instances connect to, after binding (port resolved),
 * e.g. "tcp://127.0.0.1:40123". Borrowed. */
const char *syncsvc_endpoint(const struct syncsvc *svc);
int syncsvc_port(const struct syncsvc *svc);

/* The run's secret (for TESTYARD_SYNC_SECRET): 64 hex digits that every
 * hello must carry. Made by syncsvc_new from getrandom. Borrowed. */
const char *syncsvc_secret(const struct syncsvc *svc);

/* The release board's folder (for TESTYARD_SYNC_BOARD), NULL when there
 * is none. Borrowed. */
const char *syncsvc_board_dir(const struct syncsvc *svc);

/* The ROUTER socket, for zmq_poll (ZMQ_POLLIN). */
void *syncsvc_socket(struct syncsvc *svc);
/* Process every message waiting on the socket without blocking. */
int syncsvc_handle(struct syncsvc *svc, struct err *err);
/* Monotonic ms of the earliest pending wait deadline, or -1 when none. */
int64_t syncsvc_next_deadline_ms(const struct syncsvc *svc);
/* Fail the waits whose deadline has passed. */
void syncsvc_tick(struct syncsvc *svc);

/* The backend says instance `instance` (0-based index in the run) ended;
 * `how` describes it ("exited with status 137 (oom)"). Barriers that can no
 * longer be met fail for all waiters: "<group>/<index> <how>". */
void syncsvc_instance_exited(struct syncsvc *svc, int instance,
                             const char *how);
/* Instance `instance` is being restarted (a stage action): it is not
 * dead to barriers — nothing fails for it and what it signalled stays
 * counted — and its next process may say hello again. Each restart
 * starts a new incarnation: a signal the new process sends to a state an
 * earlier incarnation already signalled is not counted again and is
 * answered with the sequence number that signal got, so a plan that runs
 * from its start again passes the barriers it had passed, with the same
 * numbers, and only then is counted. Its pending waits (of the process
 * that ended) are dropped. */
void syncsvc_instance_restarting(struct syncsvc *svc, int instance);
/* Fail every pending wait (the run is being canceled); snapshot waits
 * asked for from then on are answered canceled at once. */
void syncsvc_cancel_all(struct syncsvc *svc, const char *why);
/* Ask instance `instance` (0-based in the run) for a heap snapshot now:
 * answer its pending snapshot_wait ok. True when it had one and the answer
 * went out; false when it has none (it cannot be asked this way now). */
bool syncsvc_snapshot_request(struct syncsvc *svc, int instance);
/* -1 with err naming barriers.jsonl when a line could not be written (the
 * log then ends at its last whole line), else 0. */
int syncsvc_log_status(const struct syncsvc *svc, struct err *err);

#endif

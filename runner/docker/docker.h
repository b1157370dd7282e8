/*
 * docker/docker.h — a client for the Docker Engine API, through libcurl over
 * the engine's unix socket (or TCP), one function per endpoint testyard uses.
 *
 * Connecting: docker_new() reads the host (argument, else $DOCKER_HOST, else
 * unix:///var/run/docker.sock; unix:// and tcp:// are understood), pings the
 * engine and negotiates the API version: the newest version we know
 * (DOCKER_API_NEWEST), lowered to what the engine speaks, never below the
 * engine's MinAPIVersion. Every later request goes to /v<version>/....
 *
 * Errors: a failure fills err. A transport failure (no engine, refused,
 * permission denied on the socket) has err->status EXIT_UNAVAILABLE and a
 * hint how to fix it. An HTTP status >= 400 carries the daemon's
 * {"message": ...} in the text, and err->code is derived from the status:
 * 404 ENOENT (no such object), 409 EBUSY (conflict: name in use, container
 * not running), 400 EINVAL, 401/403 EACCES, 5xx EIO. A canceled call has
 * err->code ECANCELED.
 *
 * Threads: the handle is immutable after docker_new(); every call makes its
 * own curl handles, so any function may be called from any number of
 * threads at once with the same struct docker. Long calls (build, wait,
 * logs, events) take an optional struct docker_cancel: firing it from any
 * thread makes every call using it return promptly. docker_cancel_fire() is
 * not async-signal-safe; a signal handler should wake a thread that fires.
 *
 * Time: every call is bounded. A connect takes at most 10 s, a short call
 * at most TESTYARD_DOCKER_TIMEOUT (a duration, 60 s by default; a call
 * may ask for less), and a stream (events, build, wait, logs that follow)
 * must get its answer's headers within that time, after which it lasts
 * until it ends, its token fires or docker_abort(). A call that runs out
 * of time fails with err->code ETIMEDOUT and err->status EXIT_UNAVAILABLE.
 *
 * Ownership: every `char *` and `cJSON *` returned is the caller's (free(),
 * cJSON_Delete()); every `const char *` and `const cJSON *` argument is
 * borrowed for the duration of the call. Lists of strings are
 * NULL-terminated arrays; labels are written "key=value".
 */
#ifndef TY_DOCKER_H
#define TY_DOCKER_H

#include "base/err.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DOCKER_API_NEWEST "1.45"
#define DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"

struct docker;
struct docker_cancel;

/* Connect and negotiate (see above). host NULL = $DOCKER_HOST or the
 * default socket. */
struct docker *docker_new(const char *host, struct err *err);
/* The same with every call bounded by at most max_call_ms (0 = the
 * usual bound), the handshake included. */
struct docker *docker_new_within(const char *host, int64_t max_call_ms,
                                 struct err *err);
void docker_destroy(struct docker **d);
/* The host as used ("unix:///var/run/docker.sock", "tcp://h:2375"). */
const char *docker_host(const struct docker *d);
/* The negotiated API version ("1.41"). */
const char *docker_api_version(const struct docker *d);
/* What the engine said of itself in /version: its release ("20.10.24"),
 * its newest and oldest API versions. */
const char *docker_engine_version(const struct docker *d);
const char *docker_engine_api(const struct docker *d);
const char *docker_engine_min_api(const struct docker *d);

/* Give up on the engine: every call in progress returns at once, and every
 * later one fails at once, with err->code ECANCELED. Thread-safe; for
 * good (a new handle talks to the engine again). */
void docker_abort(struct docker *d);
bool docker_aborted(struct docker *d);
/* The bound of a short call (TESTYARD_DOCKER_TIMEOUT, default 60 s). */
int64_t docker_call_timeout_ms(const struct docker *d);

/* A cancellation token for long calls; fire it once from any thread. */
struct docker_cancel *docker_cancel_new(void);
void docker_cancel_fire(struct docker_cancel *c);
bool docker_cancel_fired(struct docker_cancel *c);
void docker_cancel_destroy(struct docker_cancel **c);

/* --- system ------------------------------------------------------------ */

/* GET /_ping. */
int docker_ping(struct docker *d, struct err *err);
/* GET /version and GET /info, parsed. */
cJSON *docker_version(struct docker *d, struct err *err);
cJSON *docker_info(struct docker *d, struct err *err);

/* --- images ------------------------------------------------------------ */

struct docker_build_opts {
    const char *tag;           /* "name:tag", or NULL */
    const char *const *labels; /* labels on the image, or NULL */
    const char *dockerfile;    /* in the context; NULL = Dockerfile */
    bool nocache;
    /* Each line of build output ("Step 1/3 : FROM scratch"), or NULL. */
    void (*progress)(void *arg, const char *line);
    void *arg;
    struct docker_cancel *cancel; /* or NULL */
};

/* POST /build with the tar (or gzipped tar) context read from fd, from its
 * current offset to its end. The JSON progress stream is read as it
 * comes; an errorDetail in it fails the call with the builder's message.
 * *image_id_out (when not NULL) gets the new image's id ("sha256:..."). */
int docker_build(struct docker *d, int context_fd,
                 const struct docker_build_opts *o, char **image_id_out,
                 struct err *err);
/* GET /images/{ref}/json; NULL with err->code ENOENT when there is none. */
cJSON *docker_image_inspect(struct docker *d, const char *ref, struct err *err);
/* 1 when the image exists, 0 when not, -1 on error. */
int docker_image_exists(struct docker *d, const char *ref, struct err *err);
/* POST /images/create: pull ref ("name[:tag]", "name@digest"; no tag
 * means :latest) from its registry, within timeout_ms (at most the call
 * bound; 0 = that bound) or until cancel fires. A refusal midway (the
 * stream's error line) fails with err->code EIO and the registry's
 * message as the whole text. */
int docker_image_pull(struct docker *d, const char *ref, int64_t timeout_ms,
                      struct docker_cancel *cancel, struct err *err);
/* DELETE /images/{ref}. */
int docker_image_remove(struct docker *d, const char *ref, bool force,
                        struct err *err);

/* --- containers -------------------------------------------------------- */

/* What a container is made of; docker_container_config() turns it into
 * the body of POST /containers/create, which the caller may adjust. Zero
 * and NULL fields are left out (the engine's defaults apply). */
struct docker_container_spec {
    const char *image;
    const char *const *cmd;        /* arguments after the entrypoint */
    const char *const *entrypoint; /* NULL = the image's */
    const char *const *env;        /* "KEY=value" */
    const char *const *labels;     /* "key=value" */
    const char *const *binds;      /* "/host/path:/in/container[:ro]" */
    const char *const *cap_add;    /* added back after cap_drop_all */
    const char *const *tmpfs;      /* "/in/container:mount options" */
    const char *network_mode;      /* "host", "bridge", a network name */
    const char *user;              /* "uid[:gid]" */
    const char *working_dir;
    int64_t memory;       /* bytes; 0 = unlimited */
    int64_t memory_swap;  /* memory + swap in bytes; set = memory for no
                           * swap; -1 = unlimited swap; 0 = engine default */
    int64_t nano_cpus;    /* 1e9 = one CPU; 0 = unlimited */
    int64_t pids_limit;   /* 0 = unlimited */
    bool readonly_rootfs; /* only binds and tmpfs mounts are writable */
    bool no_new_privileges;
    bool cap_drop_all;
    bool init; /* run docker-init as pid 1 to reap and forward signals */
};

/* The create body for spec (never NULL; caller owns). */
cJSON *docker_container_config(const struct docker_container_spec *spec);
/* POST /containers/create?name=NAME (name may be NULL). *id_out gets the
 * container's id. */
int docker_container_create(struct docker *d, const char *name,
                            const cJSON *config, char **id_out,
                            struct err *err);
/* POST /containers/{id}/start; starting a running container is not an
 * error. */
int docker_container_start(struct docker *d, const char *id, struct err *err);

enum docker_wait {
    DOCKER_WAIT_NOT_RUNNING, /* returns at once if it is not running */
    DOCKER_WAIT_NEXT_EXIT,   /* the next exit, even if not yet started */
    DOCKER_WAIT_REMOVED,
};

/* POST /containers/{id}/wait; *status_out gets the exit code (128 + n
 * after signal n). Blocks until the condition holds or c fires. */
int docker_container_wait(struct docker *d, const char *id,
                          enum docker_wait cond, struct docker_cancel *c,
                          int *status_out, struct err *err);
/* GET /containers/{id}/json. */
cJSON *docker_container_inspect(struct docker *d, const char *id,
                                struct err *err);

/* The parts of a container's state an outcome is made of. */
struct docker_state {
    char status[16]; /* created, running, exited, dead, ... */
    bool running;
    bool oom_killed;
    int exit_code;
    int pid;
    int64_t started_ns;  /* wall clock, 0 when unknown */
    int64_t finished_ns; /* wall clock, 0 when not finished */
    char error[256];     /* the engine's error starting it, or "" */
};

/* Inspect and fill st. */
int docker_container_state(struct docker *d, const char *id,
                           struct docker_state *st, struct err *err);

struct docker_logs_opts {
    bool follow;     /* keep streaming until the container stops */
    bool no_stdout;  /* leave stdout out */
    bool no_stderr;  /* leave stderr out */
    bool timestamps; /* RFC 3339 timestamp at the start of each line */
    int64_t since;   /* unix seconds; 0 = from the start */
    struct docker_cancel *cancel;
};

/* GET /containers/{id}/logs, demultiplexed: out() gets each piece with
 * stream 1 (stdout) or 2 (stderr) and returns 0 to go on, -1 (after
 * filling err) to fail. A container created with a TTY has one raw
 * stream, delivered as stdout. o may be NULL. */
int docker_container_logs(struct docker *d, const char *id,
                          const struct docker_logs_opts *o,
                          int (*out)(void *arg, int stream, const char *data,
                                     size_t len, struct err *err),
                          void *arg, struct err *err);
/* POST /containers/{id}/attach?stream=1&stdout=1&stderr=1: the container's
 * output as it writes it, demultiplexed as docker_container_logs delivers
 * it, until it stops or cancel fires. Attached before the start, it misses
 * nothing and is not limited by the engine's log; the engine holds the
 * container's writes while out() is slow. ready(ready_arg) is called once
 * the engine has attached (then start the container). */
int docker_container_attach(struct docker *d, const char *id,
                            struct docker_cancel *cancel,
                            void (*ready)(void *ready_arg), void *ready_arg,
                            int (*out)(void *arg, int stream, const char *data,
                                       size_t len, struct err *err),
                            void *arg, struct err *err);
/* The same into two file descriptors (which stay the caller's). */
int docker_container_logs_to_fds(struct docker *d, const char *id,
                                 const struct docker_logs_opts *o, int out_fd,
                                 int err_fd, struct err *err);
/* POST /containers/{id}/kill?signal=SIG (NULL = SIGKILL). A container that
 * is not running fails with err->code EBUSY. */
int docker_container_kill(struct docker *d, const char *id, const char *signal,
                          struct err *err);
/* POST /containers/{id}/pause (pause) or /unpause (!pause): freeze or
 * thaw every process of the container. */
int docker_container_pause(struct docker *d, const char *id, bool pause,
                           struct err *err);
/* DELETE /containers/{id}?v=1[&force=1] (force kills a running one). */
int docker_container_remove(struct docker *d, const char *id, bool force,
                            struct err *err);
/* GET /containers/json with a label filter (every label must match;
 * "key" matches any value); all includes stopped containers. Returns the
 * engine's array. */
cJSON *docker_container_list(struct docker *d, const char *const *labels,
                             bool all, struct err *err);

/* --- exec ------------------------------------------------------------- */

/* POST /containers/{id}/exec: a command (argv, NULL-terminated) to run in
 * the running container as user ("uid[:gid]", NULL = the container's),
 * its output not attached; *exec_id gets its id. */
int docker_exec_create(struct docker *d, const char *id,
                       const char *const *argv, const char *user,
                       char **exec_id, struct err *err);
/* POST /exec/{id}/start, detached: it runs on its own. */
int docker_exec_start(struct docker *d, const char *exec_id, struct err *err);
/* GET /exec/{id}/json: whether it ended (it ran and its ExitCode is
 * known), its exit code then, and its pid as the host sees it (0 when
 * unknown). */
struct docker_exec_state {
    bool ended;
    int exit_code;
    int pid;
};
int docker_exec_inspect(struct docker *d, const char *exec_id,
                        struct docker_exec_state *st, struct err *err);

/* --- networks ---------------------------------------------------------- */

/* POST /networks/create: a bridge network with these labels. */
int docker_network_create(struct docker *d, const char *name,
                          const char *const *labels, char **id_out,
                          struct err *err);
/* GET /networks/{id}: the network as the engine describes it (IPAM.Config
 * holds its subnet and gateway). */
cJSON *docker_network_inspect(struct docker *d, const char *id,
                              struct err *err);
/* DELETE /networks/{id}. */
int docker_network_remove(struct docker *d, const char *id, struct err *err);
/* GET /networks with a label filter. */
cJSON *docker_network_list(struct docker *d, const char *const *labels,
                           struct err *err);

/* --- events ------------------------------------------------------------ */

/* One event. Pointers are valid during the callback only. */
struct docker_event {
    const char *type;        /* "container", "network", "image", ... */
    const char *action;      /* "create", "start", "die", "oom", ... */
    const char *id;          /* Actor.ID */
    const cJSON *attributes; /* Actor.Attributes: labels, name, exitCode */
    int64_t time_ns;         /* timeNano */
    const cJSON *raw;        /* the whole message */
};

struct docker_events_opts {
    const char *const *labels; /* filter: every label must match */
    const char *const *types;  /* filter: "container", "network", ... */
    const char *const *events; /* filter: "die", "oom", ... */
    int64_t since;             /* unix seconds; replay from then; 0 = now */
    /* Called once the engine has accepted the subscription, or NULL. */
    void (*ready)(void *arg);
    struct docker_cancel *cancel; /* fire to stop the stream */
};

/* GET /events: deliver each event to cb until cb returns non-zero, the
 * cancel token fires (both return 0) or the stream fails (-1). Meant to
 * run in its own thread. */
int docker_events(struct docker *d, const struct docker_events_opts *o,
                  int (*cb)(void *arg, const struct docker_event *ev),
                  void *arg, struct err *err);

/* --- is the engine there -------------------------------------------- */

#define DOCKER_WATCH_GRACE_MS 30000

struct docker_watch;

/* The grace period: $TESTYARD_ENGINE_GRACE (a duration, at least 1s) or
 * DOCKER_WATCH_GRACE_MS. */
int docker_watch_grace_ms(int64_t *ms, struct err *err);
/* Ping d every second from a thread of its own; when it has not answered
 * (a transport failure or no answer in time; any HTTP answer counts) for
 * grace_ms, call lost() once from that thread with a sentence naming the
 * engine and since when ("the Docker engine at unix:///... has not
 * answered since 2026-...Z, 30s ago"). Says once (log) when the engine
 * stops answering and when it answers again. d must outlive the watch. */
struct docker_watch *docker_watch_new(struct docker *d, int64_t grace_ms,
                                      void (*lost)(void *arg, const char *msg),
                                      void *arg, struct err *err);
/* Stops and joins the thread; NULL-safe. */
void docker_watch_destroy(struct docker_watch **w);
/* When the engine last answered (wall clock ns) if it does not answer
 * now, else 0. */
int64_t docker_watch_down_since(struct docker_watch *w);
/* A new handle to host as soon as the engine answers, trying for at most
 * within_ms (every call of the new handle is bounded by what was left);
 * NULL when it did not answer in time. */
struct docker *docker_reconnect(const char *host, int64_t within_ms);

#endif

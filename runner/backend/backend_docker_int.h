/*
 * backend/backend_docker_int.h — what the local:docker backend's files share
 * (runner/backend/backend_docker*.c): its state, and the few functions one file
 * gives the others.
 *
 *   backend_docker.c       events, starting, the interface
 *   backend_docker_image.c the image each group runs (built, checked,
 *                          pulled or packed) and the heap profiler's files
 *   backend_docker_spec.c  each container's environment, labels, binds
 *                          and HostConfig
 *   backend_docker_end.c   stopping, removing, an engine that went away
 *   backend_docker_run.c   restart, pause, address and probe of a
 *                          container that was started
 *
 * struct dk_backend owns every pointer in it; `lock` guards what its
 * comment says.
 */
#ifndef TY_BACKEND_DOCKER_INT_H
#define TY_BACKEND_DOCKER_INT_H

#include "backend/backend.h"
#include "backend/backend_queue_int.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct docker;
struct docker_cancel;
struct docker_watch;
struct dklog;

#define DK_START_WORKERS 4
#define DK_PIDS_LIMIT 4096
#define DK_BOARD_PATH "/testyard-sync" /* the release board, read-only */
#define DK_LOGS_WAIT_MS 30000
/* The only writable place besides the binds; its pages count against the
 * container's memory limit, so it is small. */
#define DK_TMPFS "/tmp:rw,nosuid,nodev,noexec,size=64m,mode=1777"
#define DK_COMEBACK_MS 5000    /* a lost engine's last chance at shutdown */
#define DK_EVENTS_RETRY_MS 200 /* first reconnect delay, doubled up to */
#define DK_EVENTS_RETRY_MAX_MS 5000
#define DK_EVENTS_LOG_EVERY_NS (60 * 1000000000LL)
/* How long a run.image that is not in the engine may take to pull. */
#define DK_PULL_MS 30000
/* A packed host program's working folder when run.workdir is not set:
 * its scratch folder, as on local:exec (the image's /plan is read-only). */
#define DK_PACKED_WORKDIR "/temp"
/* Each of the engine's two json-file log files holds half the log limit,
 * at least this much. */
#define DK_ENGINE_LOG_MIN ((uint64_t)8 << 20)

struct dk_inst {
    const struct backend_instance *in;
    char *id;
    char *name;
    int pid;
    bool started;    /* running as far as we know */
    bool stop_asked; /* stop() before it started: don't start it */
    bool dead;       /* `die` seen and reported */
    bool oom;        /* `oom` seen */
    bool logs_done;
    struct dklog *log; /* its run.out and run.err */
    bool exit_held;    /* `die` came before the start was reported */
    bool dirs_made;    /* its folders were given to its user */
    struct backend_event exit_ev;
    bool removed;
    char *cgdir;          /* memory cgroup, from the pid at start */
    bool ended_read;      /* its BACKEND_EXITED was handed out */
    bool paused;          /* pause() froze it */
    bool restarting;      /* a restart's thread has it */
    int64_t run_since_ns; /* wall clock before its last restart's start:
                           * a `die` from before is the last run's */
    enum ty__cgver cgver;
    int64_t peak; /* highest usage read by this backend, -1 */
};

/* What a group's containers run when it is a black-box group. */
struct dk_group {
    char *image;   /* run.image, or the packed program's tag; else NULL */
    bool packed;   /* run.command without run.image: packed by testyard */
    char *preload; /* the image's own LD_PRELOAD, or NULL */
};

struct dk_backend {
    struct backend base;
    struct backend_config cfg;
    struct docker *d;
    char *image;             /* the plan's image tag */
    struct dk_group *groups; /* per composition group, from prepare() */
    /* profiles.heap: preload: the profiler and its libraries on the host,
     * mounted under HEAPLIB_MOUNT_DIR (NULL when no group preloads). */
    char **heap_files;
    char *network; /* network name when bridge, else NULL */
    char *network_id;
    struct backend_instance *bis; /* copy of the array given to start_all */
    struct dk_inst *insts;
    size_t n;

    pthread_mutex_t lock; /* guards everything below and insts[] */
    pthread_cond_t cond;
    struct backend_queue queue;
    int notify[2];
    size_t next_start;
    size_t next_remove;
    bool stopping; /* destroy(): no more starts */
    bool gone;     /* engine lost or abort(): no more waits on it */
    bool aborted;  /* abort(): no waiting for the engine to come back */
    bool shut;     /* shutdown() done */
    size_t logs_pending;
    size_t restarts_running; /* restart threads not yet done */
    struct docker_watch *watch;
    int64_t logs_deadline; /* monotonic ns: followers are cut after it */

    pthread_t workers[DK_START_WORKERS];
    int nworkers;
    pthread_t events_thread;
    bool events_running;
    bool events_ready;
    struct docker_cancel *events_cancel;
};

/* backend_docker.c */
bool dk__is_gone(struct dk_backend *k);
bool dk__is_aborted(struct dk_backend *k);
/* The engine has been away for the grace period (msg NULL: shutdown()
 * gives up on its own): every call ends now, the orchestrator hears. */
void dk__engine_lost(void *arg, const char *msg);

/* After a (re)start of instance i: its pid and cgroup from inspect, and
 * BACKEND_STARTED, then an exit heard meanwhile. */
void dk__report_started(struct dk_backend *k, size_t i);
/* A pushed event, and notify_fd woken. */
void dk__push_event(struct dk_backend *k, const struct backend_event *ev);

/* backend_docker_run.c: the interface's optional ops. */
int dk__restart(struct backend *b, int index, struct err *err);
int dk__pause(struct backend *b, int index, bool pause, struct err *err);
int dk__address(struct backend *b, int index, char *buf, size_t size);
int dk__probe(struct backend *b, int index, const char *const *argv,
              int64_t timeout_ms, struct err *err);
/* shutdown(): wait for the restart threads to be done. */
void dk__restarts_wait(struct dk_backend *k);

/* backend_docker_image.c: every group's image and the profiler's files,
 * before anything is created (fails with EXIT_UNAVAILABLE
 * for a run.image the engine cannot provide); release frees them. */
int dk__images_prepare(struct dk_backend *k, struct err *err);
void dk__images_release(struct dk_backend *k);
/* The composition group of an instance, and (when dg is not NULL) what
 * prepare() settled for it (NULL before prepare). Borrowed. */
const struct composition_group *dk__group(const struct dk_backend *k,
                                          const struct backend_instance *in,
                                          const struct dk_group **dg);

/* backend_docker.c: whether the memory cgroup dir is the container id's
 * own (its last component names the container, as both of the engine's
 * cgroup drivers do). */
bool dk__cgroup_is_container(const char *dir, const char *id);

/* backend_docker_spec.c: each returns what the caller frees (a string
 * array with strv_free, cJSON with cJSON_Delete). */
char **dk__container_env(const struct dk_backend *k,
                         const struct backend_instance *in);
cJSON *dk__container_config(const struct dk_backend *k,
                            const struct backend_instance *in, char **env,
                            char **labels, char **binds);
char **dk__make_labels(const struct dk_backend *k,
                       const struct backend_instance *in);
char **dk__make_binds(const struct dk_backend *k,
                      const struct backend_instance *in);

/* backend_docker_end.c: the interface's shutdown() and abort(). */
void dk__shutdown(struct backend *b);
void dk__abort(struct backend *b);

#endif

/*
 * backend/backend.h — the one small interface between the run orchestrator and
 * the places instances run (local:exec processes, local:docker containers).
 *
 * The orchestrator hands the backend every instance at once (start_all);
 * the backend may start them in the background and reports, through
 * events read with next_event() whenever notify_fd() is readable, when each
 * instance started, failed to start, or ended. It never blocks the
 * orchestrator's loop for long. stop() asks an instance to end (SIGTERM)
 * or forces it (SIGKILL); destroy() removes everything the backend
 * created (processes, cgroups, containers, networks) unless asked to keep
 * containers.
 *
 * Ownership: everything passed in is copied or outlives the backend (the
 * composition and the instance table belong to the orchestrator).
 */
#ifndef TY_BACKEND_H
#define TY_BACKEND_H

#include "base/err.h"
#include "config/config.h"
#include "ty_cgroup.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What an instance needs to start. */
struct backend_instance {
    int index; /* 0-based in the run */
    const char *group;
    int group_index;
    const char *outdir;   /* host folder for its outputs */
    const char *tempdir;  /* host scratch folder */
    char **env;           /* NULL-terminated "K=V", as seen on the host */
    uint64_t memory;      /* bytes, 0 = no limit */
    int64_t millicpu;     /* 0 = no limit */
    const char *artifact; /* group's ready artifact or NULL */
    uint64_t log_limit;   /* bytes kept of each of stdout and stderr */
    /* What a black-box group runs (composition_group_blackbox): its
     * run.command followed by its run.args, NULL-terminated; NULL = the
     * plan. local:exec execs argv[0] (an absolute host path). A run.image
     * group's argv is its command + args too (args alone without a
     * command); local:docker keeps Entrypoint and Cmd apart from the
     * group's own fields. env already holds the group's run.env merged
     * over the instance environment. */
    const char *const *argv;
    /* run.workdir, or NULL: local:exec the temp folder, local:docker the
     * image's. */
    const char *workdir;
    /* profiles.heap: preload: load the LD_PRELOAD heap profiler into the
     * program (env does not hold it yet: each backend knows the
     * profiler's path as the instance sees it). */
    bool heap_preload;
};

enum backend_event_type {
    BACKEND_STARTED,      /* the instance is running */
    BACKEND_START_FAILED, /* it never ran; message says why */
    BACKEND_EXITED,       /* it ended; status/signal/oom say how */
    /* The place instances run went away for longer than its grace
     * period (the Docker engine stopped answering): index is -1, message
     * says which and since when. Nothing more comes; the instances that
     * had not ended are lost. */
    BACKEND_LOST,
};

struct backend_event {
    enum backend_event_type type;
    int index;
    int status;         /* exit code when it exited, else -1 */
    int signal;         /* terminating signal, else 0 */
    bool oom;           /* killed by the OOM killer */
    int64_t peak_bytes; /* peak memory the backend saw last, -1 */
    int64_t wall_ns;    /* when it happened */
    char message[512];  /* START_FAILED reason */
};

struct backend;

struct backend_ops {
    /* Build or check what every instance needs (image, binary, cgroups).
     * Warnings the user should see go to *warning (static or NULL). */
    int (*prepare)(struct backend *b, struct err *err);
    int (*start_all)(struct backend *b, const struct backend_instance *insts,
                     size_t n, struct err *err);
    int (*notify_fd)(struct backend *b);
    /* 1 with *ev filled, 0 when none is pending, -1 on error. */
    int (*next_event)(struct backend *b, struct backend_event *ev);
    /* Ask (force=false: SIGTERM) or force (SIGKILL) an instance to end. */
    void (*stop)(struct backend *b, int index, bool force);
    /* The instance's memory cgroup directory, for the monitor; NULL when
     * unknown. Caller frees. */
    char *(*memory_cgroup)(struct backend *b, int index, enum ty__cgver *ver);
    /* The instance's main process as seen from the host (local:docker:
     * the container's State.Pid), 0 when unknown: where there is no
     * cgroup, the monitor samples it instead; a pre-OOM signal goes to
     * it (run/run_preoom.c). */
    pid_t (*host_pid)(struct backend *b, int index);
    /* Optional (NULL: instances cannot be restarted). Start instance
     * index again after its BACKEND_EXITED was read, keeping its identity
     * and everything it wrote: local:exec runs the same argv with the same
     * environment and working folder in the same cgroup, appending to its
     * run.out and run.err; local:docker starts the same container again
     * (POST /containers/{id}/start: its file system, binds, name, labels
     * and limits kept) and follows its logs on. A BACKEND_STARTED or
     * BACKEND_START_FAILED event follows, then in time BACKEND_EXITED, as
     * for the first start; memory_cgroup() and host_pid() then answer for
     * the new process. */
    int (*restart)(struct backend *b, int index, struct err *err);
    /* Optional: freeze (pause) or thaw (!pause) every process of a
     * running instance (local:docker: POST /containers/{id}/pause and
     * /unpause; local:exec: its freezer cgroup where there is one, else
     * SIGSTOP / SIGCONT to each of its processes). */
    int (*pause)(struct backend *b, int index, bool pause, struct err *err);
    /* Optional: the address (numeric, "127.0.0.1", a container's address
     * on the run's network) at which this host reaches a TCP port the
     * running instance listens on, into buf; -1 when unknown. */
    int (*address)(struct backend *b, int index, char *buf, size_t size);
    /* Optional: run argv (NULL-terminated) where the running instance
     * runs — local:exec: on the host, with the instance's environment and
     * working folder; local:docker: inside its container (exec) — and wait
     * at most timeout_ms for it: its exit status (0..255), or -1 with err
     * (it could not run, it was killed, it timed out: killed then).
     * Blocking: called from the runner's probe thread, never the
     * orchestrator's, and safe alongside every other op. */
    int (*probe)(struct backend *b, int index, const char *const *argv,
                 int64_t timeout_ms, struct err *err);
    /* Optional. Everything destroy() does but freeing: stop what runs,
     * gather its logs, remove what was created. abort() may be called
     * from another thread while it runs to make it end soon, leaving what
     * is left (labelled) for `testyard clean`. */
    void (*shutdown)(struct backend *b);
    void (*abort)(struct backend *b);
    void (*destroy)(struct backend *b);
};

struct backend {
    const struct backend_ops *ops;
    const char *warning; /* one-time warning for the user, or NULL */
    /* The address the sync service listens on and instances connect to,
     * set by prepare(): 127.0.0.1, or a bridge network's gateway. */
    char sync_host[64];
    /* The image the plan's containers run ("" when none), for result.json. */
    char image[256];
    /* The user and group instances run as, when not the coordinator's own
     * (-1 = the coordinator's): the sync service gives this group, and no
     * one else, access to the release board. Set by new() or prepare().
     * local:docker: the first uid of the run's block (instance i runs as
     * instance_uid + i, or as 0 when its group asks for root), and the
     * gid every instance of the run has as its only group. */
    int instance_uid;
    int instance_gid;
    /* Instances run under an init process (local:docker's docker-init):
     * host_pid() is the init's, and the plan is its child. */
    bool init_parent;
};

/* Settings every backend gets from the orchestrator. */
struct backend_config {
    const struct composition *comp;
    const char *run_id;
    const char *run_dir;
    const char *binary; /* the plan's compiled binary (host path) */
    const char *plan_name;
    int run_fd; /* the run folder (base/fsat.h), borrowed */
};

struct backend *backend_exec_new(const struct backend_config *cfg,
                                 struct err *err);
struct backend *backend_docker_new(const struct backend_config *cfg,
                                   struct err *err);

/* NULL-safe; sets *b to NULL. */
void backend_destroy(struct backend **b);

/*
 * The registry (backend/backend.c): one entry per backend, in the order
 * messages name them. Entries are static; pointers to them never go stale.
 */
struct backend_kind {
    /* Its name and what it cannot do, as the composition loader checks. */
    struct composition_runner runner;
    /* Its constructor: backend_exec_new, backend_docker_new... */
    struct backend *(*create)(const struct backend_config *cfg,
                              struct err *err);
};

/* The backend called name ("local:exec"), or NULL when there is none. */
const struct backend_kind *backend_find(const char *name);
/* Every backend's runner, NULL-terminated: composition_opts.runners. */
const struct composition_runner *const *backend_runners(void);
/* The names for a message, "local:exec or local:docker", into buf
 * (truncated to size); returns buf. */
const char *backend_names(char *buf, size_t size);

/* The cgroups local:exec makes (backend/cgroup.c), as far as `testyard
 * clean` needs them. */
/* Directory under each hierarchy's root that holds testyard's cgroups. */
#define CGROUP_BASE "testyard"
struct cgroup_sys;
/* Detect from /proc/self/mountinfo what this machine allows. Never fails:
 * see cgroup_sys_usable() and cgroup__sys_warning(). */
struct cgroup_sys *cgroup_sys_new(void);
void cgroup_sys_destroy(struct cgroup_sys **sys);
/* True when cgroups with a memory controller can be created. */
bool cgroup_sys_usable(const struct cgroup_sys *sys);
/* The names of the cgroups right below <base>/<relpath> ("" for <base>)
 * in the memory hierarchy, as a NULL-terminated array the caller frees
 * with strv_free (base/strvec.h); NULL when there are none or no
 * cgroups. */
char **cgroup_list(const struct cgroup_sys *sys, const char *relpath);

/*
 * Leftovers: what a run whose coordinator died leaves on this host,
 * found and removed by `testyard clean`: its cgroups (local:exec) and the
 * runner's scratch in its run folder (.sync/, .tmp/, half-written files
 * at the folder's top level).
 *
 * Nothing here decides whether a coordinator is gone (base/run_lock.h does)
 * and nothing prints; the caller says what was done.
 */

/* Kill what runs in the cgroups of run_id and remove them (with dry, only
 * count them); *n gets how many instance cgroups there were. */
int leftovers_cgroups(const struct cgroup_sys *sys, const char *run_id,
                      bool dry, int *n, struct err *err);

/* What the run folder held. */
struct leftovers_scratch {
    bool sync, tmp; /* .sync/, .tmp/ */
    int partial;    /* top-level *.partial and *.tmp.<pid> files */
};

/* Remove the scratch of the run folder named id in runs (no link is
 * followed, no mount point crossed; with dry, only look). */
int leftovers_scratch(const char *runs, const char *id, bool dry,
                      struct leftovers_scratch *out, struct err *err);

#endif

/*
 * run/run_int.h — what the orchestrator's files share (runner/run/run*.c).
 *
 *   run.c          lifecycle and the main loop
 *   run_dir.c      the run folder and its id
 *   run_inst.c     instance table, environment, outcomes
 *   run_result.c   result.json and the terminal summary
 *   run_progress.c progress lines while the run goes
 *   run_preoom.c   asking instances for a snapshot before an OOM kill
 *   run_series.c   the series files, the per-process and disk series
 *   run_stages.c   the composition's stages and their actions (restarts)
 *   run_ready.c    readiness probes (run.ready), on their own thread
 *
 * Everything runs on the orchestrator's thread. struct run owns every
 * pointer in it.
 */
#ifndef TY_RUN_INT_H
#define TY_RUN_INT_H

#include "backend/backend.h"
#include "config/config.h"
#include "run/monitor_int.h"
#include "run/run.h"
#include "run/series_int.h"
#include "sync/sync.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum stop_reason {
    STOP_NONE = 0,
    STOP_DEADLINE,
    STOP_CANCEL,
    STOP_STAGES, /* the stages ended, or a stage action stopped it */
};

/* How an instance was found ready. */
enum ready_by {
    READY_NONE = 0,
    READY_SDK,     /* it called ty_ready */
    READY_TCP,     /* run.ready.tcp accepted a connection */
    READY_COMMAND, /* run.ready.command exited 0 */
    READY_STARTED, /* a black-box program without a probe: started */
};

/* One restart of an instance by a stage action. Times are ms since the
 * run started (monotonic, the clock of memory.csv's t_ms), -1 until
 * known; *_unix_ms the same instants on the wall clock. */
struct run_restart {
    size_t action; /* index into comp->stages */
    int64_t stop_ms, stop_unix_ms;
    int64_t exit_ms;
    int64_t start_ms;
    int64_t ready_ms, ready_unix_ms;
    enum ready_by by;
    bool killed; /* it did not end within the grace: SIGKILL */
};

/* An entry of the stages that ran (or runs), for stages.jsonl and
 * result.json. */
struct run_stage_rec {
    size_t entry;     /* index into comp->stages */
    int64_t start_ms; /* since the run started */
    int64_t end_ms;   /* -1 while it runs */
    int64_t start_unix_ms, end_unix_ms;
    const char *ended_by; /* static: "duration", "rounds", ... or NULL */
};

struct run_inst {
    int index; /* in the run */
    int group; /* index into comp->groups */
    int group_index;
    char *label; /* "<group>/<index>" */
    char *outdir;
    char *tempdir;
    char **env; /* NULL-terminated */

    bool started;
    bool ended;
    bool waiting; /* blocked in a barrier */
    bool hello;   /* connected to the sync service */
    bool success_event;
    bool failure_event;
    bool crash_event;
    bool stopped_event; /* its case ended because it was asked to */
    bool lost;          /* the backend lost it (engine gone) */
    char *error;        /* failure message (event or start) */
    int status;         /* exit code, -1 when none */
    int signal;
    bool oom;
    enum stop_reason stopped;
    int64_t start_wall_ns;
    int64_t end_wall_ns;
    enum outcome outcome;
    struct monitor_inst *mon;
    struct series_inst *series; /* processes.csv, disk.csv; NULL */
    pid_t pid;      /* its main process (the host's view), 0 when unknown */
    int procfd;     /* that process's /proc/<pid>, for a pre-OOM signal; -1 */
    char *cgdir;    /* its memory cgroup, for pre-OOM signals; NULL */
    char *mon_lost; /* why memory figures are missing or incomplete */
    struct monitor_stats mstats; /* copied when the instance ended */
    bool has_mstats;

    /* Stages (run_stages.c). */
    uint64_t gen;       /* its incarnation: 0, then one more a restart */
    bool restarting;    /* a restart stopped it; not running again yet */
    bool await_ready;   /* started, not found ready yet */
    bool paused;        /* a pause action froze it */
    bool runner_failed; /* the runner failed it (error says why) */
    int64_t ready_ms;   /* its first start's readiness, -1 */
    int64_t ready_unix_ms;
    enum ready_by ready_by;
    int64_t ready_due_ms; /* give up waiting for ready (monotonic), 0 */
    int64_t kill_at_ms;   /* an action's SIGKILL (monotonic), 0 */
    struct run_restart *restarts;
    size_t nrestarts, caprestarts;
};

/* Where the stages are (run_stages.c). */
struct run_stages {
    bool begun;         /* every instance has started: the first stage began */
    bool done;          /* no more entries run */
    size_t next;        /* the next entry of comp->stages */
    long cur;           /* the entry running, -1 */
    int64_t cur_end_ms; /* a duration stage's end (monotonic) */
    int64_t rounds;     /* round ends seen in a rounds stage */
    int64_t last_round; /* the latest round that ended, in the whole run */
    bool rounds_reached;
    int64_t cancel_at_ms; /* fail the waits then (monotonic), 0 */
    struct run_stage_rec *rec;
    size_t nrec, caprec;
    struct run_ready *ready;
};

struct run {
    struct composition *comp;
    struct run_opts opts;
    char *run_id;
    char *run_dir;
    int run_fd;      /* the run folder, to open what is in it link-free */
    bool made_dir;   /* run_dir was created by this run: ours to remove */
    char *binary;    /* the plan's, NULL when no group runs it */
    char ***argv;    /* per group: what a black-box group runs, or NULL */
    char image[256]; /* the plan's image on local:docker */
    struct syncsvc *svc;
    struct backend *be;
    struct monitor *mon;
    struct series *series; /* NULL before the monitor */
    struct run_inst *insts;
    size_t n;
    size_t nended;
    size_t nstarted;

    int sigfd;     /* SIGINT, SIGTERM, SIGHUP, SIGPIPE */
    bool out_lost; /* stdout's reader went away */
    int64_t start_mono_ms;
    int64_t start_wall_ns;
    int64_t end_wall_ns;
    int64_t deadline_ms; /* monotonic */
    int64_t kill_at_ms;  /* force-stop time after a stop, 0 = none */
    int64_t give_up_ms;  /* stop waiting for ends then, 0 = none */
    bool deadline_hit;
    bool canceled;        /* by a signal (SIGINT, SIGTERM, ...) */
    struct err failed;    /* the loop's own failure (code != 0): stopped */
    bool lost;            /* the backend went away (BACKEND_LOST) */
    char lost_msg[512];   /* its message */
    struct err out_err;   /* the first runner-owned output not written */
    int progress_lines;   /* lines drawn last time */
    bool announced_start; /* "all started" said (no tty) */
    int64_t progress_at_ms;
    struct run_stages st;
};

/* run_dir.c: make <runs>/<id> (validating a given id, drawing one
 * otherwise) and write composition.json into it; r->made_dir says it is
 * ours to remove. */
int run__make_dir(struct run *r, struct err *err);

/* run_inst.c */
/* TEST_PLAN and TEST_CASE as instances see them: the plan (the
 * composition's name when it names none) and the case ("default" when
 * none). Borrowed from c. */
const char *run__test_plan(const struct composition *c);
const char *run__test_case(const struct composition *c);
void run__insts_init(struct run *r);
void run__insts_release(struct run *r);
/* The environment of instance i (as seen from the host), its group's
 * run.env merged over it; the caller frees it with strv_free. */
char **run__inst_env(const struct run *r, const struct run_inst *in);
/* Decide and store the outcome of an instance that ended. */
void run__inst_decide(struct run_inst *in);
/* "exited with status 137 (oom)", for barrier errors. */
void run__inst_how(const struct run_inst *in, char *buf, size_t size);

/* run_result.c */
int run__write_result(const struct run *r, struct err *err);
void run__print_summary(const struct run *r);
bool run__succeeded(const struct run *r);
/* 0, 1, 69 (engine lost), 70 (the loop failed) or 130 (canceled). */
int run__exit_status(const struct run *r);

/* run_preoom.c */
/* The monitor's ask() (struct monitor_pre_oom_cfg): arg is the run, id
 * the instance's index. */
enum monitor_via run__preoom_ask(void *arg, int id);
/* Hold the instance's process pid (its main process as seen from here)
 * and its memory cgroup folder cgdir (NULL when none) for pre-OOM
 * signals, when they may be asked for: pre-OOM snapshots on and a memory
 * limit. */
void run__preoom_watch(struct run *r, struct run_inst *in, pid_t pid,
                       const char *cgdir);
void run__preoom_unwatch(struct run_inst *in);
/* 1 after sending the pre-OOM signal to the process of the /proc/<pid>
 * folder procfd; 0 when it did not ask for one (why says so); -errno.
 * given: the profiler's signal in the environment the instance was
 * started with (0: none), for a process whose environment block no
 * longer says (overwritten by its process title) but that has the
 * profiler mapped. */
int run__preoom_signal(int procfd, int given, char *why, size_t whylen);
/* Whether a /proc/<pid>/maps text maps a file named libtestyard-heap*. */
bool run__preoom_maps_heap(const char *maps);
/* Whether a /proc/<pid>/cgroup text puts the process in the memory
 * cgroup whose folder is cgdir (its memory hierarchy's path ends
 * cgdir). */
bool run__preoom_in_cgroup(const char *text, const char *cgdir);
/* Send the pre-OOM signal to each of the n pids that is in the memory
 * cgroup cgdir and asked for it (run__preoom_signal), skipping skip (an
 * init): how many were signalled, else 0 (why says why the last one was
 * not) or the last -errno. */
int run__preoom_signal_pids(const pid_t *pids, size_t n, const char *cgdir,
                            pid_t skip, int given, char *why, size_t whylen);
/* The only child of the process of the /proc/<pid> folder procfd (an
 * init), held by its own /proc folder (the caller closes it) once its
 * PPid says it is pid's child; -1 when there is none. */
int run__preoom_child(int procfd, pid_t pid);
/* The profiler's signal an environment block (NUL-separated, as
 * /proc/<pid>/environ) asks for: 0 without LD_PRELOAD naming
 * libtestyard-heap or with TESTYARD_HEAP_SIGNAL=none. */
int run__preoom_env_signal(const char *env, size_t len);
/* Whether sig is in the SigCgt mask of a /proc/<pid>/status text. */
bool run__preoom_caught(const char *status, int sig);

/* run_series.c */
/* A series file of an instance: f names partial (in the runner's folder,
 * made here) and final (in the instance's), beneath r->run_fd. */
struct run_file {
    struct monitor_file f;
    char *partial, *final;
};
/* name ("memory.csv") of instance in; run__inst_file_release frees. */
int run__inst_file(struct run *r, const struct run_inst *in, const char *name,
                   struct run_file *out, struct err *err);
void run__inst_file_release(struct run_file *f);
/* Start the instance's process and disk series: its cgroup folder cgdir
 * (NULL: its main process pid and descendants); a warning when they
 * cannot be written. */
void run__series_start(struct run *r, struct run_inst *in, const char *cgdir,
                       pid_t pid);
/* Its last sample, its files put in place (a warning when not). */
void run__series_end(struct run *r, struct run_inst *in);

/* run.c: ask (SIGTERM) or force (SIGKILL) every instance that has not
 * ended to end, thawing a paused one first; why is kept as the reason of
 * those that had none. */
void run__stop_all(struct run *r, enum stop_reason why, bool force);

/* run_stages.c */
/* Set up (the readiness thread) once the backend is there. */
int run__stages_init(struct run *r, struct err *err);
void run__stages_release(struct run *r);
/* The readiness probes' descriptor, to poll (-1 when none). */
int run__stages_fd(const struct run *r);
/* Each turn of the loop: begin, end and advance stages, run actions,
 * kill after a grace, give up waiting for ready, read probe answers. */
void run__stages_tick(struct run *r);
/* When run__stages_tick next has something to do (monotonic ms), or
 * INT64_MAX. */
int64_t run__stages_next_ms(const struct run *r);
/* A barrier was released (the sync service's observer). */
void run__stages_barrier(struct run *r, const char *state);
/* Freeze (pause) or thaw an instance through the backend; a failure is
 * a warning (a thaw that failed still counts it as thawed, so that a
 * stop goes on). */
void run__inst_pause(struct run *r, struct run_inst *in, bool pause);
/* The instance said it is ready (ty_ready). */
void run__stages_ready(struct run *r, struct run_inst *in, enum ready_by by);
/* It started (its first start: after inst_started). */
void run__stages_started(struct run *r, struct run_inst *in);
/* Its process ended or failed to start: true when a restart takes it
 * from here (the instance has not ended), false when it ended. */
bool run__stages_exited(struct run *r, struct run_inst *in,
                        const struct backend_event *ev);
/* The run is ending (a cancel, the deadline, an internal error, or every
 * instance ended): the stage that runs ends, and nothing more starts. */
void run__stages_close(struct run *r, const char *why);
/* "sdk", "tcp", ... for result.json; NULL for READY_NONE. */
const char *run__ready_by_name(enum ready_by by);

/* run_ready.c: readiness probes on their own thread. */
struct run_ready;
struct run_ready_answer {
    int index;
    uint64_t gen;
    enum ready_by by;
    int64_t mono_ms;
    int64_t wall_ns;
};
struct run_ready *run__ready_new(struct backend *be, size_t n, struct err *err);
void run__ready_destroy(struct run_ready **rr);
/* Readable when answers wait. */
int run__ready_fd(const struct run_ready *rr);
/* Probe instance index (incarnation gen) as ready says — at addr for a
 * TCP port — until it succeeds or run__ready_forget. */
int run__ready_watch(struct run_ready *rr, int index, uint64_t gen,
                     const struct composition_ready *ready, const char *addr,
                     struct err *err);
/* Stop probing it; the last failure goes to why (may be NULL). */
void run__ready_forget(struct run_ready *rr, int index, char *why, size_t size);
/* 1 with an answer, 0 when none waits. */
int run__ready_next(struct run_ready *rr, struct run_ready_answer *out);

/* run_progress.c */
void run__progress_draw(struct run *r, bool final);
void run__progress_note(struct run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* stdout when it is a pipe still read (to poll for its reader going
 * away), else -1. */
int run__progress_pipe_fd(const struct run *r);
/* stdout is gone (SIGPIPE): print nothing more on it. */
void run__progress_lost(struct run *r);

#endif

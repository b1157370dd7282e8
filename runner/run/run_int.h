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
    bool lost;   /* the backend lost it (engine gone) */
    char *error; /* failure message (event or start) */
    int status;  /* exit code, -1 when none */
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

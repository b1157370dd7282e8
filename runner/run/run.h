/*
 * run/run.h — the run orchestrator: from a loaded composition to a run folder
 * with every instance's outputs, result.json and a summary.
 *
 * run_execute() builds the plan, creates the run folder, starts the sync
 * service and the memory monitor, asks the backend to start every instance,
 * and then owns one loop until every instance has ended: sync messages,
 * backend events (started, failed to start, exited), memory samples, the
 * run deadline, progress lines, and SIGINT / SIGTERM / SIGHUP / SIGPIPE
 * (cancel). The runner,
 * not the instance, decides each instance's outcome: exit status, signal,
 * OOM kill, deadline, cancel and the instance's own events together.
 *
 * The internal pieces (struct run and its instances) are in run/run_int.h; this
 * header is what cmd_run and the tests use.
 */
#ifndef TY_RUN_H
#define TY_RUN_H

#include "base/err.h"

#include <stdbool.h>
#include <stdint.h>

struct composition;

struct run_opts {
    const char *runs_dir; /* parent of run folders; default "runs" */
    const char *run_id;   /* NULL = generate one */
    bool progress;        /* redraw progress lines (stdout is a tty) */
    bool quiet;           /* no progress and no summary */
    int64_t grace_ms;     /* SIGTERM → SIGKILL delay on stop; 0 = 5 s */
};

/* Outcome of one instance, from worst to best for the summary's order. */
enum outcome {
    OUTCOME_PENDING = 0,
    OUTCOME_SUCCESS,
    OUTCOME_FAILURE,
    OUTCOME_CRASH,
    OUTCOME_OOM,
    OUTCOME_TIMEOUT,
    OUTCOME_CANCELED,
    OUTCOME_LOST, /* its engine went away while it ran: end unknown */
    OUTCOME_COUNT,
};

const char *outcome_name(enum outcome o);

/* What run_execute tells its caller. */
struct run_summary {
    char run_id[128];
    char run_dir[4096];
    bool canceled;
    bool success;
    /* 0, 1 (plan failed), 69 (engine lost), 70 (an internal error stopped
     * the run: message says which), 130 (canceled), or 73 / 74
     * when an output of the run's own was not written: error names it
     * ("" when none). */
    int exit_status;
    char message[512]; /* why the run ended early (engine lost, internal
                        * error), or "" */
    char error[ERR_MSG_MAX];
};

/* Run the composition. Returns 0 when the run happened (whatever its
 * outcome, see sum->exit_status) and -1 when it could not start (nothing
 * is left behind then: no container, no process, no cgroup). */
int run_execute(struct composition *comp, const struct run_opts *opts,
                struct run_summary *sum, struct err *err);

/* The longest run id (it names a folder, cgroups and containers). */
#define RUN_ID_MAX 64

/* A run id is a plain name: letters, digits, '-', '_' and '.', not '.'
 * first, at most RUN_ID_MAX characters; so it names one new folder right
 * under the runs folder and nothing else. -1 with err (which says what
 * was expected) otherwise. */
int run_id_check(const char *id, struct err *err);

/* Block SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGCHLD in the calling thread
 * (and so in every thread created after); call first thing in cmd_run. */
void run_block_signals(void);

#endif

/*
 * base/proc.h — running a helper program (the compiler, pkg-config, the dynamic
 * loader in list mode) without a shell, and collecting what it printed.
 */
#ifndef TY_PROC_H
#define TY_PROC_H

#include "base/err.h"
#include "base/strbuf.h"
#include "base/util.h"

#include <stdatomic.h>

/* What proc_run_opts changes; all zero is proc_run. Borrowed. */
struct proc_opts {
    char *const *env; /* run argv[0] as a path (no PATH search) with this
                       * NULL-terminated environment; NULL: ours */
    size_t max_out;   /* keep at most this many bytes in out (the rest is
                       * read and dropped); 0: all */
    int timeout_ms;   /* kill it (SIGKILL) when it has not closed its
                       * output, or not ended, by then: -1, ETIMEDOUT;
                       * 0: no deadline */
    const char *cwd;  /* run it in this folder (a chdir that fails is an
                       * exec that fails); NULL: ours */
    bool group;       /* in a process group of its own, which the deadline
                       * kills whole (what a shell started too) */
    int out_fd;       /* > 0: its output is written to this descriptor (at
                       * most max_out bytes) instead of `out`; a write that
                       * fails is -1 with its errno after the program
                       * ended, and status 73/74 */
    const atomic_bool *stop; /* when it becomes true (looked at every
                              * 100 ms), it is killed as at the deadline:
                              * -1, ECANCELED; NULL: never */
};

/* Run argv[0] (searched in PATH) with argv. Its stdout and stderr are
 * appended to `out` when not NULL (both into the same buffer) and otherwise
 * discarded; stdin is /dev/null. Returns the exit status (0..255, or
 * 128+signal), or -1 when it could not be started: when exec fails, err
 * has the exec's errno as code ("X: could not be run: Permission
 * denied", EACCES, for a file without the x bit). */
int proc_run(char *const argv[], struct strbuf *out, struct err *err);
/* proc_run with options (o may be NULL). */
int proc_run_opts(char *const argv[], const struct proc_opts *o,
                  struct strbuf *out, struct err *err);

/* How a forked child tells its parent that its exec failed, and why, for
 * any code that forks and execs (proc_run, local:exec): the parent makes
 * the pipe (close-on-exec, so a successful exec closes it) before fork;
 * the child calls proc_exec_failed() after the exec returned (it writes
 * errno and _exits 127: async-signal-safe); the parent closes the write
 * end, then proc_exec_result() reads the errno the exec failed with, or 0
 * when the program runs, and closes the read end. */
int proc_exec_pipe(int fds[2], struct err *err);
void proc_exec_failed(int wfd) __attribute__((noreturn));
int proc_exec_result(int rfd);

#endif

/*
 * proc.c — fork/exec a helper program and collect its output (see base/proc.h).
 *
 * A failed exec is told to the parent over a close-on-exec pipe (the
 * child writes its errno there), not by an exit status: the dynamic loader
 * exits 127 when a library is missing, and that is an answer to read, not
 * a program that could not be run. A deadline, when given, kills the
 * program (its whole process group when it was given one of its own: a
 * shell's children too) and stops reading its output.
 */
#include "base/proc.h"

#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void
child(char *const argv[], const struct proc_opts *o, int outfd, int execfd)
{
    sigset_t none;
    int devnull = open("/dev/null", O_RDWR);

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (o->group)
        setpgid(0, 0);
    if (o->cwd != NULL && chdir(o->cwd) < 0)
        proc_exec_failed(execfd);
    if (devnull >= 0)
        dup2(devnull, 0);
    dup2(outfd, 1);
    dup2(outfd, 2);
    if (o->env != NULL)
        execve(argv[0], argv, o->env);
    else
        execvp(argv[0], argv);
    proc_exec_failed(execfd);
}

#define STOP_POLL_MS 100

enum wait { READABLE, LATE, STOPPED };

/* Wait until fd is readable, the deadline (monotonic ns, 0: none) passes
 * or *stop (NULL: never) becomes true. */
static enum wait
wait_readable(int fd, int64_t deadline, const atomic_bool *stop)
{
    struct pollfd p = {fd, POLLIN, 0};
    int64_t left;
    int n, ms;

    if (deadline == 0 && stop == NULL)
        return READABLE;
    do {
        if (stop != NULL && atomic_load(stop))
            return STOPPED;
        ms = -1;
        if (deadline != 0) {
            left = deadline - now_mono_ns();
            if (left <= 0)
                return LATE;
            ms = (int)(left / 1000000 + 1);
        }
        if (stop != NULL && (ms < 0 || ms > STOP_POLL_MS))
            ms = STOP_POLL_MS;
        n = poll(&p, 1, ms);
    } while ((n < 0 && errno == EINTR) || n == 0);
    return READABLE;
}

/* Where the output goes and how the program is killed at the deadline. */
struct sink {
    struct strbuf *out;
    const struct proc_opts *o;
    size_t kept;
    int write_err; /* errno of the first failed write to o->out_fd */
};

static void
sink_add(struct sink *s, const char *buf, size_t n)
{
    size_t max = s->o->max_out;
    size_t keep = max == 0 || max - s->kept >= n ? n : max - s->kept;

    if (keep > 0 && s->o->out_fd > 0 && s->write_err == 0) {
        if (fd_write_all(s->o->out_fd, buf, keep) < 0)
            s->write_err = errno;
    } else if (keep > 0 && s->o->out_fd <= 0 && s->out != NULL) {
        strbuf_add(s->out, buf, keep);
    }
    s->kept += keep;
}

/* Read fd to its end into the sink. When the deadline passes or a stop
 * comes first, kill pid (its group when it has one: what it started may
 * hold the pipe open) and stop reading; returns which (READABLE: it
 * closed its output). */
static enum wait
drain(int fd, struct sink *s, int64_t deadline, pid_t pid)
{
    char buf[4096];

    for (;;) {
        enum wait w = wait_readable(fd, deadline, s->o->stop);
        ssize_t n;

        if (w != READABLE) {
            kill(s->o->group ? -pid : pid, SIGKILL);
            return w;
        }
        n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return READABLE;
        sink_add(s, buf, (size_t)n);
    }
}

int
proc_exec_pipe(int fds[2], struct err *err)
{
    if (pipe2(fds, O_CLOEXEC) < 0)
        return err_sys(err, errno, "pipe");
    return 0;
}

void
proc_exec_failed(int wfd)
{
    int e = errno;

    if (write(wfd, &e, sizeof(e)) < 0)
        (void)0; /* the parent then sees a plain exit 127 */
    _exit(127);
}

int
proc_exec_result(int rfd)
{
    int e = 0;
    ssize_t n;

    do
        n = read(rfd, &e, sizeof(e));
    while (n < 0 && errno == EINTR);
    close(rfd);
    return n == (ssize_t)sizeof(e) && e != 0 ? e : 0;
}

/* A program that closed its output may still run: with a deadline it is
 * waited for until then (in short naps), and killed as at the deadline
 * when it has not ended by then. */
static enum wait
wait_end(pid_t pid, const struct proc_opts *o, int64_t deadline)
{
    int64_t nap_us = 1000;
    siginfo_t si;

    if (deadline == 0)
        return READABLE;
    for (;;) {
        si.si_pid = 0;
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 &&
            errno != EINTR)
            return READABLE; /* reap() says why */
        if (si.si_pid == pid)
            return READABLE;
        if (now_mono_ns() >= deadline) {
            kill(o->group ? -pid : pid, SIGKILL);
            return LATE;
        }
        usleep((useconds_t)nap_us);
        nap_us = nap_us * 2 > 20000 ? 20000 : nap_us * 2;
    }
}

/* Wait for pid; its exit status (or 128+signal), or -1 (exec_err: the
 * errno its exec failed with, 0 when it ran; how: LATE, killed after
 * timeout_ms; STOPPED, killed for a stop). */
static int
reap(pid_t pid, const char *name, int exec_err, enum wait how, int timeout_ms,
     struct err *err)
{
    int status;

    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return err_sys(err, errno, "waitpid %s", name);
    }
    if (exec_err != 0)
        return err_sys(err, exec_err, "%s: could not be run", name);
    if (how == LATE)
        return err_set(err, ETIMEDOUT, "%s: killed after %d ms", name,
                       timeout_ms);
    if (how == STOPPED)
        return err_set(err, ECANCELED, "%s: killed: asked to stop", name);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

/* The output pipe and the exec-error pipe, both close-on-exec. */
static int
open_pipes(int out[2], int ex[2], struct err *err)
{
    if (pipe2(out, O_CLOEXEC) < 0)
        return err_sys(err, errno, "pipe");
    if (proc_exec_pipe(ex, err) == 0)
        return 0;
    close(out[0]);
    close(out[1]);
    return -1;
}

int
proc_run_opts(char *const argv[], const struct proc_opts *o, struct strbuf *out,
              struct err *err)
{
    static const struct proc_opts none = {0};
    struct sink sink = {out, o ? o : &none, 0, 0};
    int fds[2], ex[2], e, exec_err = 0, rc;
    int64_t deadline = 0;
    enum wait how = READABLE;
    pid_t pid;

    o = o ? o : &none;
    if (o->timeout_ms > 0)
        deadline = now_mono_ns() + (int64_t)o->timeout_ms * 1000000;
    if (open_pipes(fds, ex, err) < 0)
        return -1;
    pid = fork();
    if (pid == 0)
        child(argv, o, fds[1], ex[1]);
    e = errno;
    close(fds[1]);
    close(ex[1]);
    if (pid > 0 && o->group)
        setpgid(pid, pid); /* as the child does: whichever runs first */
    if (pid > 0)
        how = drain(fds[0], &sink, deadline, pid);
    if (pid > 0 && how == READABLE)
        how = wait_end(pid, o, deadline);
    close(fds[0]);
    if (pid > 0)
        exec_err = proc_exec_result(ex[0]);
    else
        close(ex[0]);
    if (pid < 0)
        return err_sys(err, e, "fork");
    rc = reap(pid, argv[0], exec_err, how, o->timeout_ms, err);
    if (rc >= 0 && sink.write_err != 0) {
        err_sys(err, sink.write_err, "%s: writing its output", argv[0]);
        return err_status(err, err_io_status(sink.write_err));
    }
    return rc;
}

int
proc_run(char *const argv[], struct strbuf *out, struct err *err)
{
    return proc_run_opts(argv, NULL, out, err);
}

/*
 * proc.c — fork/exec a helper program and collect its output (see base/proc.h).
 *
 * A failed exec is told to the parent over a close-on-exec pipe (the
 * child writes its errno there), not by an exit status: the dynamic loader
 * exits 127 when a library is missing, and that is an answer to read, not
 * a program that could not be run.
 */
#include "base/proc.h"

#include "base/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void
child(char *const argv[], const struct proc_opts *o, int outfd, int execfd)
{
    sigset_t none;
    int devnull = open("/dev/null", O_RDWR);
    int e;

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (devnull >= 0)
        dup2(devnull, 0);
    dup2(outfd, 1);
    dup2(outfd, 2);
    if (o->env != NULL)
        execve(argv[0], argv, o->env);
    else
        execvp(argv[0], argv);
    e = errno;
    if (write(execfd, &e, sizeof(e)) < 0)
        (void)0; /* the parent then sees a plain exit 127 */
    _exit(127);
}

static void
drain(int fd, struct strbuf *out, size_t max)
{
    size_t kept = 0;
    char buf[4096];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        size_t keep;

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        keep = max == 0 || max - kept >= (size_t)n ? (size_t)n : max - kept;
        if (out != NULL && keep > 0)
            strbuf_add(out, buf, keep);
        kept += keep;
    }
}

/* Whether the child's exec failed: it wrote errno before exiting. */
static bool
exec_failed(int execfd)
{
    int e;
    ssize_t n;

    do
        n = read(execfd, &e, sizeof(e));
    while (n < 0 && errno == EINTR);
    return n == (ssize_t)sizeof(e);
}

/* Wait for pid; its exit status (or 128+signal), or -1. */
static int
reap(pid_t pid, const char *name, bool failed, struct err *err)
{
    int status;

    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return err_sys(err, errno, "waitpid %s", name);
    }
    if (failed)
        return err_set(err, ENOENT, "%s: could not be run", name);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

/* The output pipe and the exec-error pipe, both close-on-exec. */
static int
open_pipes(int out[2], int ex[2], struct err *err)
{
    int e;

    if (pipe2(out, O_CLOEXEC) < 0)
        return err_sys(err, errno, "pipe");
    if (pipe2(ex, O_CLOEXEC) == 0)
        return 0;
    e = errno;
    close(out[0]);
    close(out[1]);
    return err_sys(err, e, "pipe");
}

int
proc_run_opts(char *const argv[], const struct proc_opts *o, struct strbuf *out,
              struct err *err)
{
    static const struct proc_opts none = {NULL, 0};
    int fds[2], ex[2], e;
    bool failed;
    pid_t pid;

    o = o ? o : &none;
    if (open_pipes(fds, ex, err) < 0)
        return -1;
    pid = fork();
    if (pid == 0)
        child(argv, o, fds[1], ex[1]);
    e = errno;
    close(fds[1]);
    close(ex[1]);
    if (pid > 0)
        drain(fds[0], out, o->max_out);
    close(fds[0]);
    failed = pid > 0 && exec_failed(ex[0]);
    close(ex[0]);
    if (pid < 0)
        return err_sys(err, e, "fork");
    return reap(pid, argv[0], failed, err);
}

int
proc_run(char *const argv[], struct strbuf *out, struct err *err)
{
    return proc_run_opts(argv, NULL, out, err);
}

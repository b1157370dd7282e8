/*
 * proc.c — fork/exec a helper program and collect its output (see proc.h).
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void
child(char *const argv[], int outfd)
{
    sigset_t none;
    int devnull = open("/dev/null", O_RDWR);

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (devnull >= 0)
        dup2(devnull, 0);
    if (outfd < 0)
        outfd = devnull;
    dup2(outfd, 1);
    dup2(outfd, 2);
    execvp(argv[0], argv);
    _exit(127);
}

static void
drain(int fd, struct strbuf *out)
{
    char buf[4096];

    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        if (out != NULL)
            strbuf_add(out, buf, (size_t)n);
    }
}

int
proc_run(char *const argv[], struct strbuf *out, struct err *err)
{
    int fds[2], status;
    pid_t pid;

    if (pipe2(fds, O_CLOEXEC) < 0)
        return err_sys(err, errno, "pipe");
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return err_sys(err, errno, "fork");
    }
    if (pid == 0)
        child(argv, fds[1]);
    close(fds[1]);
    drain(fds[0], out);
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return err_sys(err, errno, "waitpid %s", argv[0]);
    }
    if (WIFEXITED(status)) {
        if (WEXITSTATUS(status) == 127)
            return err_set(err, ENOENT, "%s: could not be run", argv[0]);
        return WEXITSTATUS(status);
    }
    return 128 + WTERMSIG(status);
}

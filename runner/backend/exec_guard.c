/*
 * exec_guard.c — the guard process of local:exec (see
 * backend/exec_guard_int.h).
 *
 * The guard is forked from a process that may have threads, so after fork
 * it only makes async-signal-safe calls (read, kill, open, dup2, close,
 * sigaction, _exit) on memory allocated before the fork. The two talk over
 * a stream socket pair (a dead guard is an error on send, never SIGPIPE).
 * Messages are two int32s (index, pgid) sent whole; index -1 says "done":
 * the coordinator ended normally and killed what it started itself.
 */
#include "backend/exec_guard_int.h"

#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct exec_guard {
    pid_t pid;
    int fd; /* write end */
    size_t n;
    pid_t *pgids; /* the guard's copy is filled from the socket */
};

struct guard_msg {
    int32_t index;
    int32_t pgid;
};

/* Read one whole message; 0 at end-of-file. */
static int
read_msg(int fd, struct guard_msg *m)
{
    size_t got = 0;

    while (got < sizeof(*m)) {
        ssize_t r = read(fd, (char *)m + got, sizeof(*m) - got);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        got += (size_t)r;
    }
    return 1;
}

static void __attribute__((noreturn))
guard_main(const struct exec_guard *g, int rd)
{
    static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
    struct sigaction sa = {.sa_handler = SIG_IGN};
    sigset_t none;
    struct guard_msg m;
    int null;

    /* Out of the terminal's process group: Ctrl-C is the coordinator's. */
    setpgid(0, 0);
    for (size_t i = 0; i < ARRAY_LEN(ignored); i++)
        sigaction(ignored[i], &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (dup2(rd, 3) < 0)
        _exit(1);
    close_range(4, ~0U, 0);
    /* Hold no terminal or pipe of the coordinator's open. */
    if ((null = open("/dev/null", O_RDWR)) >= 0)
        for (int fd = 0; fd < 3; fd++)
            dup2(null, fd);
    while (read_msg(3, &m)) {
        if (m.index == -1)
            _exit(0);
        if (m.index >= 0 && (size_t)m.index < g->n)
            g->pgids[m.index] = (pid_t)m.pgid;
    }
    for (size_t i = 0; i < g->n; i++)
        if (g->pgids[i] > 0)
            kill(-g->pgids[i], SIGKILL);
    _exit(0);
}

struct exec_guard *
exec_guard__new(size_t n, struct err *err)
{
    struct exec_guard *g = xcalloc(1, sizeof(*g));
    int p[2];

    g->fd = -1;
    g->n = n;
    g->pgids = xcalloc(n ? n : 1, sizeof(*g->pgids));
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0) {
        err_sys(err, errno, "socketpair");
        exec_guard__destroy(&g);
        return NULL;
    }
    g->pid = fork();
    if (g->pid == 0)
        guard_main(g, p[0]);
    close(p[0]);
    g->fd = p[1];
    if (g->pid < 0) {
        err_sys(err, errno, "fork");
        exec_guard__destroy(&g);
    }
    return g;
}

static void
send_msg(struct exec_guard *g, int32_t index, int32_t pgid)
{
    struct guard_msg m = {index, pgid};
    ssize_t r;

    if (g == NULL || g->fd < 0)
        return;
    /* A guard that died is an error here, not SIGPIPE. */
    do
        r = send(g->fd, &m, sizeof(m), MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
}

void
exec_guard__set(struct exec_guard *g, size_t index, pid_t pgid)
{
    send_msg(g, (int32_t)index, (int32_t)pgid);
}

pid_t
exec_guard__pid(const struct exec_guard *g)
{
    return g != NULL ? g->pid : 0;
}

void
exec_guard__destroy(struct exec_guard **gp)
{
    struct exec_guard *g = gp ? *gp : NULL;

    if (g == NULL)
        return;
    send_msg(g, -1, 0);
    if (g->fd >= 0)
        close(g->fd);
    if (g->pid > 0)
        while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    free(g->pgids);
    free(g);
    *gp = NULL;
}

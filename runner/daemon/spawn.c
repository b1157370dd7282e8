/*
 * spawn.c — a task's run is this program itself, `testyard run` on the
 * task's snapshot, in a process of its own: its output goes through a
 * pipe the daemon copies into the task's log, and it gets SIGINT (a
 * cancel, as Ctrl-C) when the daemon dies, so a daemon killed with -9
 * leaves runs that stop themselves, their containers removed.
 */
#include "daemon/daemon_int.h"

#include "base/proc.h"
#include "base/run_lock.h"
#include "base/strvec.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define CLEAN_TIMEOUT_MS 120000

/* In the child, before exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
child(char *const argv[], int out, int errpipe, pid_t parent)
{
    sigset_t none;
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

    setpgid(0, 0); /* a Ctrl-C at the daemon's terminal is the daemon's */
    prctl(PR_SET_PDEATHSIG, SIGINT);
    if (getppid() != parent)
        _exit(130); /* the daemon died before the line above */
    sigemptyset(&none);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
        proc_exec_failed(errpipe);
    execv("/proc/self/exe", argv);
    proc_exec_failed(errpipe);
}

static char **
run_argv(struct daemon *d, const struct daemon_task *t)
{
    char **argv = xcalloc(14, sizeof(char *));
    int i = 0;

    argv[i++] = xstrdup("testyard");
    argv[i++] = xstrdup("run");
    argv[i++] = xstrdup("--no-progress");
    argv[i++] = xstrdup("--plans");
    argv[i++] = xasprintf("%s/tasks/%lld/plans", d->data, (long long)t->id);
    argv[i++] = xstrdup("--runs");
    argv[i++] = xasprintf("%s/runs", d->data);
    argv[i++] = xstrdup("--run-id");
    argv[i++] = xasprintf("task-%lld", (long long)t->id);
    argv[i++] = xstrdup("--origin");
    argv[i++] = xstrdup(t->origin);
    argv[i++] =
        xasprintf("%s/tasks/%lld/%s", d->data, (long long)t->id, t->file);
    return argv;
}

static int
open_log(struct daemon *d, int64_t id, bool append, struct err *err)
{
    cleanup_free char *path =
        xasprintf("%s/tasks/%lld/log", d->data, (long long)id);
    int fd = open(path,
                  O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
                      (append ? O_APPEND : O_TRUNC),
                  0644);

    if (fd < 0)
        return err_sys(err, errno, "%s", path);
    return fd;
}

/* Fork and exec argv with its output into a new pipe; the read end in
 * r->outfd. */
static int
start_child(char **argv, struct daemon_run *r, struct err *err)
{
    int p[2], ep[2], e;
    pid_t self = getpid();

    if (pipe2(p, O_CLOEXEC) < 0)
        return err_sys(err, errno, "pipe");
    if (proc_exec_pipe(ep, err) < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    r->pid = fork();
    if (r->pid == 0)
        child(argv, p[1], ep[1], self);
    e = errno;
    close(p[1]);
    close(ep[1]);
    if (r->pid < 0) {
        close(ep[0]);
        close(p[0]);
        return err_sys(err, e, "fork");
    }
    if ((e = proc_exec_result(ep[0])) != 0) {
        close(p[0]);
        return err_sys(err, e, "/proc/self/exe: could not be run");
    }
    r->outfd = p[0];
    fcntl(r->outfd, F_SETFL, O_NONBLOCK);
    return 0;
}

int
daemon__spawn(struct daemon *d, const struct daemon_task *t,
              struct daemon_run *r, struct err *err)
{
    char **argv = run_argv(d, t);
    int rc = -1;

    memset(r, 0, sizeof(*r));
    r->id = t->id;
    r->need = t->need;
    r->outfd = -1;
    r->pid = -1;
    if ((r->logfd = open_log(d, t->id, false, err)) >= 0 &&
        (rc = start_child(argv, r, err)) < 0) {
        close(r->logfd);
        r->logfd = -1;
    }
    strv_free(argv);
    return rc;
}

bool
daemon__pid_alive(long pid, unsigned long long start)
{
    struct run_identity id;

    if (pid <= 0 || run_identity_of((pid_t)pid, &id, NULL) < 0)
        return false;
    return start == 0 || id.start == start;
}

void
daemon__clean_run(struct daemon *d, int64_t id)
{
    cleanup_free char *runs = path_join(d->data, "runs");
    char run_id[40];
    char *argv[] = {"/proc/self/exe", "clean", "--run", run_id,
                    "--runs",         runs,    NULL};
    struct proc_opts o = {.max_out = 64 << 10, .timeout_ms = CLEAN_TIMEOUT_MS};
    struct strbuf out;
    struct err e = {0};
    int rc, fd;

    snprintf(run_id, sizeof(run_id), "task-%lld", (long long)id);
    strbuf_init(&out);
    rc = proc_run_opts(argv, &o, &out, &e);
    if ((fd = open_log(d, id, true, &e)) >= 0) {
        dprintf(fd, "testyard daemon: clean --run %s (exit %d)\n%s", run_id, rc,
                out.buf);
        close(fd);
    }
    strbuf_release(&out);
}

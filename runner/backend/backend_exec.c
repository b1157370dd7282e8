/*
 * backend_exec.c — local:exec: every instance is a child process of the
 * coordinator.
 *
 * Each child gets its own process group, SIGKILL as its parent-death
 * signal, a guard process that kills that group if the coordinator is
 * killed (exec_guard.c), its own working directory (the instance's
 * scratch folder, or a black-box group's run.workdir), stdout and stderr
 * through pipes that the log pump (logpump.c) copies into capped run.out and
 * run.err (instlog.c: kept in the runner's folder, moved into the instance's
 * when its pipes end), and — where the machine allows (root, a memory
 * controller on cgroup v1 or v2) — its own cgroup with the group's memory limit
 * (no swap), CPU quota and a pids limit. Where it does not, the run goes on
 * without limits and the backend's warning says so once.
 *
 * Ends are noticed through a signalfd for SIGCHLD, which the orchestrator
 * blocks in every thread before any is created. An instance whose cgroup's
 * OOM kill count went up while it ran is reported as an OOM kill, as
 * local:docker reports a container the kernel OOM-killed a process of:
 * the process killed may be a child (a program under a shell wrapper)
 * that the instance's main process outlived.
 *
 * A black-box instance execs its group's program (in->argv: run.command
 * and run.args) instead of the plan, with the environment it is given
 * (run.env already merged); with profiles.heap: preload, the heap
 * profiler's absolute path goes first in LD_PRELOAD, before whatever
 * LD_PRELOAD that environment has.
 *
 * restart() runs an ended instance again as it first ran (the same argv,
 * environment, folder, cgroup — kept until destroy — and the same steps
 * between fork and exec), its output appended to the same logs, which
 * the pump keeps between runs for the groups a stage restarts. pause()
 * freezes the instance's cgroup where the kernel has cgroup.freeze (v2),
 * else stops each of its processes (its cgroup's and its process
 * group's) with SIGSTOP. probe() runs a command on the host as the
 * instance would see it (proc_run_opts). The orchestrator reaps only the
 * instances' own pids, so a probe's child is its caller's to wait for.
 * Events pushed outside SIGCHLD (a restart's start) wake notify_fd through
 * a pipe next to the signalfd, both under one epoll descriptor.
 */
#include "backend/backend.h"

#include "backend/backend_queue_int.h"
#include "builder/builder.h"
#include "backend/cgroup_int.h"
#include "config/config.h"
#include "backend/exec_guard_int.h"
#include "base/fsat.h"
#include "base/instlog.h"
#include "base/log.h"
#include "backend/logpump_int.h"
#include "base/proc.h"
#include "base/strvec.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXEC_PIDS_MAX 4096

struct exec_inst {
    pid_t pid;          /* 0 before start, -1 after reaped */
    struct cgroup *cg;  /* NULL without cgroups */
    int64_t oom_before; /* the cgroup's OOM count at start */
    int slot;           /* its logs in the pump, -1 before */
    bool ended_read;    /* its BACKEND_EXITED was handed out */
    bool paused;
};

struct exec_backend {
    struct backend base;
    struct backend_config cfg;
    struct cgroup_sys *cgs;
    int sigfd;
    int wake[2];                  /* events pushed outside SIGCHLD */
    int epfd;                     /* notify_fd: sigfd and wake[0] */
    struct backend_instance *bis; /* copy of the array given to start_all */
    struct exec_inst *insts;
    size_t n;
    struct exec_guard *guard;   /* kills the groups if the coordinator dies */
    struct backend_queue queue; /* events not yet handed out */
    struct logpump *pump;
    char *heap_lib; /* the profiler, when a group preloads it */
};

#define EXEC_LOG_DRAIN_MS 2000 /* for pipes still open after the kill */

static void
push_simple(struct exec_backend *x, enum backend_event_type type, int index,
            const char *msg)
{
    struct backend_event ev;

    backend__event_init(&ev, type, index, msg);
    backend__queue_push(&x->queue, &ev);
}

/* Make notify_fd readable for an event pushed outside SIGCHLD. */
static void
wake_up(struct exec_backend *x)
{
    char one = 1;

    if (write(x->wake[1], &one, 1) < 0 && errno != EAGAIN)
        log_warn("exec backend: notify");
}

/* Whether a stage restarts the instance's group: its logs are then kept
 * between its runs. */
static bool
group_restarts(const struct composition *c, const char *group)
{
    for (size_t i = 0; c != NULL && i < c->nstages; i++)
        if (c->stages[i].kind == STAGE_RESTART &&
            c->stages[i].group < c->ngroups &&
            strcmp(c->groups[c->stages[i].group].id, group) == 0)
            return true;
    return false;
}

static bool
some_preload(const struct composition *c)
{
    for (size_t i = 0; c != NULL && i < c->ngroups; i++)
        if (c->groups[i].heap_preload)
            return true;
    return false;
}

static int
make_notify(struct exec_backend *x, struct err *err)
{
    struct epoll_event ev = {.events = EPOLLIN};

    if (pipe2(x->wake, O_NONBLOCK | O_CLOEXEC) < 0)
        return err_sys(err, errno, "pipe");
    x->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (x->epfd < 0)
        return err_sys(err, errno, "epoll_create1");
    if (epoll_ctl(x->epfd, EPOLL_CTL_ADD, x->sigfd, &ev) < 0 ||
        epoll_ctl(x->epfd, EPOLL_CTL_ADD, x->wake[0], &ev) < 0)
        return err_sys(err, errno, "epoll_ctl");
    return 0;
}

static int
exec_prepare(struct backend *b, struct err *err)
{
    struct exec_backend *x = (struct exec_backend *)b;
    sigset_t set;

    if (some_preload(x->cfg.comp) &&
        (x->heap_lib = planbuild_heap_library(err)) == NULL)
        return err_status(err, EXIT_UNAVAILABLE);
    x->cgs = cgroup_sys_new();
    if (!cgroup_sys_usable(x->cgs) || cgroup__sys_warning(x->cgs) != NULL)
        b->warning = cgroup__sys_warning(x->cgs);
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    x->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (x->sigfd < 0)
        return err_sys(err, errno, "signalfd");
    if (make_notify(x, err) < 0)
        return -1;
    x->pump = logpump__new(err);
    return x->pump ? 0 : -1;
}

static int
make_pipes(int out[2], int errp[2], struct err *err)
{
    if (pipe2(out, O_CLOEXEC) < 0)
        return err_sys(err, errno, "pipe");
    if (pipe2(errp, O_CLOEXEC) < 0) {
        close(out[0]);
        close(out[1]);
        return err_sys(err, errno, "pipe");
    }
    return 0;
}

/* The instance's folder, made beneath the run folder without following a
 * link, and its capped logs with a pipe for each stream: out[0] and
 * err[0] are read by the pump, the write ends go to the child. On a
 * restart the pump's entry gets the new pipes and appends. */
static int
open_outputs(struct exec_backend *x, const struct backend_instance *in,
             int out[2], int errp[2], struct err *err)
{
    struct exec_inst *ei = &x->insts[in->index];
    cleanup_free char *rel = xasprintf("%s/%d", in->group, in->group_index);
    struct instlog *log;
    int d;

    if (ei->slot >= 0) {
        if (make_pipes(out, errp, err) < 0)
            return -1;
        if (logpump__restart(x->pump, ei->slot, out[0], errp[0], err) == 0)
            return 0;
        close(out[1]);
        close(errp[1]);
        return -1;
    }
    if ((d = fsat_dir(x->cfg.run_fd, rel, true, 0755, err)) < 0)
        return -1;
    close(d);
    log = instlog_open(x->cfg.run_fd, in->group, in->group_index, in->log_limit,
                       err);
    if (log == NULL)
        return -1;
    if (make_pipes(out, errp, err) < 0) {
        instlog_destroy(&log);
        return -1;
    }
    ei->slot = logpump__add(x->pump, out[0], errp[0], log, rel,
                            group_restarts(x->cfg.comp, in->group), err);
    if (ei->slot < 0) {
        close(out[0]);
        close(out[1]);
        close(errp[0]);
        close(errp[1]);
        instlog_destroy(&log);
        return -1;
    }
    return 0;
}

/* Between fork and exec: only async-signal-safe calls. The parent-death
 * signal fires when the thread that forked ends; that is the run's main
 * thread (start_all runs there), so it fires when the coordinator dies,
 * even by SIGKILL. A parent already gone before prctl shows as getppid()
 * changed. A failed exec sends its errno up execfd (base/proc.h). */
/* What the instance execs: a black-box group's program, else the
 * group's artifact or the plan. */
static const char *
program(const struct exec_backend *x, const struct backend_instance *in)
{
    if (in->argv != NULL && in->argv[0] != NULL)
        return in->argv[0];
    return in->artifact ? in->artifact : x->cfg.binary;
}

/* The instance's environment with the heap profiler first in LD_PRELOAD,
 * or NULL when it needs none. Caller frees (strv_free). */
static char **
preload_env(const struct exec_backend *x, const struct backend_instance *in)
{
    struct strvec e = {0};
    const char *old;
    cleanup_free char *kv = NULL;

    if (!in->heap_preload || x->heap_lib == NULL)
        return NULL;
    for (char **p = in->env; p && *p; p++)
        strvec_push(&e, *p);
    old = strv_getenv(in->env, "LD_PRELOAD");
    if (old != NULL && *old != '\0')
        kv = xasprintf("LD_PRELOAD=%s:%s", x->heap_lib, old);
    else
        kv = xasprintf("LD_PRELOAD=%s", x->heap_lib);
    strvec_setenv(&e, kv);
    return strvec_detach(&e);
}

static void __attribute__((noreturn))
child(const struct exec_backend *x, const struct backend_instance *in,
      char **env, const struct cgroup *cg, int outfd, int errfd, int execfd,
      pid_t parent)
{
    const char *bin = program(x, in);
    char *plan_argv[2] = {(char *)bin, NULL};
    char *const *argv = in->argv ? (char *const *)in->argv : plan_argv;
    sigset_t none;
    int devnull = open("/dev/null", O_RDONLY);

    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
        _exit(126);
    if (cg != NULL && cgroup__attach_self_prepared(cg) < 0)
        _exit(126);
    if (devnull >= 0)
        dup2(devnull, 0);
    dup2(outfd, 1);
    dup2(errfd, 2);
    if (chdir(in->workdir ? in->workdir : in->tempdir) < 0)
        _exit(126);
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(bin, argv, env);
    proc_exec_failed(execfd);
}

static struct cgroup *
make_cgroup(struct exec_backend *x, const struct backend_instance *in,
            struct err *err)
{
    cleanup_free char *rel = NULL;

    if (!cgroup_sys_usable(x->cgs))
        return NULL;
    rel = xasprintf("%s/%s-%d", x->cfg.run_id, in->group, in->group_index);
    return cgroup__create(x->cgs, rel, in->memory, in->millicpu, EXEC_PIDS_MAX,
                          err);
}

/* Fork and exec the instance (its cgroup made already), for its first
 * run and each restart. */
static int
spawn(struct exec_backend *x, const struct backend_instance *in,
      struct err *err)
{
    struct exec_inst *ei = &x->insts[in->index];
    const char *bin = program(x, in);
    char **penv = NULL;
    int out[2] = {-1, -1}, errp[2] = {-1, -1}, ex[2];
    pid_t pid, parent;
    int e;

    ei->oom_before = ei->cg ? cgroup__oom_kills(ei->cg) : -1;
    if (open_outputs(x, in, out, errp, err) < 0)
        return -1;
    if (proc_exec_pipe(ex, err) < 0) {
        close(out[1]);
        close(errp[1]);
        return -1;
    }
    penv = preload_env(x, in);
    parent = getpid();
    pid = fork();
    if (pid == 0)
        child(x, in, penv ? penv : in->env, ei->cg, out[1], errp[1], ex[1],
              parent);
    e = errno;
    strv_free(penv);
    close(out[1]);
    close(errp[1]);
    close(ex[1]);
    if (pid < 0) {
        close(ex[0]);
        return err_sys(err, e, "fork");
    }
    /* Also from the parent, so a stop() right after start hits the group. */
    setpgid(pid, pid);
    if ((e = proc_exec_result(ex[0])) != 0) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        return err_sys(err, e, "%s: could not be run", bin);
    }
    ei->pid = pid;
    exec_guard__set(x->guard, (size_t)in->index, pid);
    return 0;
}

static int
start_one(struct exec_backend *x, const struct backend_instance *in,
          struct err *err)
{
    struct exec_inst *ei = &x->insts[in->index];

    if (mkdir_p(in->tempdir, err) < 0)
        return -1;
    ei->cg = make_cgroup(x, in, err);
    if (ei->cg == NULL && cgroup_sys_usable(x->cgs))
        return -1;
    return spawn(x, in, err);
}

static int
exec_start_all(struct backend *b, const struct backend_instance *insts,
               size_t n, struct err *err)
{
    struct exec_backend *x = (struct exec_backend *)b;
    struct err ge = {0};

    x->bis = xcalloc(n, sizeof(*x->bis));
    memcpy(x->bis, insts, n * sizeof(*insts));
    x->insts = xcalloc(n, sizeof(*x->insts));
    x->n = n;
    for (size_t i = 0; i < n; i++)
        x->insts[i].slot = -1;
    x->guard = exec_guard__new(n, &ge);
    if (x->guard == NULL)
        log_warnx("instances may outlive a killed coordinator: %s", ge.msg);
    for (size_t i = 0; i < n; i++) {
        struct err e = {0};

        if (start_one(x, &insts[i], &e) < 0)
            push_simple(x, BACKEND_START_FAILED, insts[i].index, e.msg);
        else
            push_simple(x, BACKEND_STARTED, insts[i].index, NULL);
    }
    (void)err;
    return 0;
}

static int
exec_notify_fd(struct backend *b)
{
    return ((struct exec_backend *)b)->epfd;
}

static void
reaped(struct exec_backend *x, int index, int status)
{
    struct exec_inst *ei = &x->insts[index];
    struct backend_event ev;

    backend__event_init(&ev, BACKEND_EXITED, index, NULL);
    ev.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    ev.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (ei->cg != NULL)
        ev.oom = cgroup__oom_kills(ei->cg) > ei->oom_before;
    ei->pid = -1;
    ei->paused = false;
    exec_guard__set(x->guard, (size_t)index, 0);
    backend__queue_push(&x->queue, &ev);
}

/* Only the instances' own pids: a probe's child is its caller's to wait
 * for (waitpid(-1) here would take it from under probe()). */
static void
reap_children(struct exec_backend *x)
{
    struct signalfd_siginfo si;
    char buf[64];
    int status;

    while (read(x->sigfd, &si, sizeof(si)) > 0)
        ;
    while (read(x->wake[0], buf, sizeof(buf)) > 0)
        ;
    for (size_t i = 0; i < x->n; i++)
        if (x->insts[i].pid > 0 &&
            waitpid(x->insts[i].pid, &status, WNOHANG) == x->insts[i].pid)
            reaped(x, (int)i, status);
}

static int
exec_next_event(struct backend *b, struct backend_event *ev)
{
    struct exec_backend *x = (struct exec_backend *)b;

    if (backend__queue_empty(&x->queue))
        reap_children(x);
    if (!backend__queue_pop(&x->queue, ev))
        return 0;
    if (ev->type == BACKEND_EXITED && ev->index >= 0 &&
        (size_t)ev->index < x->n)
        x->insts[ev->index].ended_read = true;
    return 1;
}

/* Each process of the instance: its cgroup's (what left the process group
 * too) and its process group's (where there is no cgroup). */
static void
signal_all(const struct exec_inst *ei, int sig)
{
    if (ei->cg != NULL)
        (void)cgroup__signal_all(ei->cg, sig);
    kill(-ei->pid, sig);
}

static int
exec_pause(struct backend *b, int index, bool pause, struct err *err)
{
    struct exec_backend *x = (struct exec_backend *)b;
    struct exec_inst *ei;
    struct err fe = {0};

    if (index < 0 || (size_t)index >= x->n)
        return err_set(err, EINVAL, "no instance %d", index);
    ei = &x->insts[index];
    if (ei->pid <= 0)
        return err_set(err, EBUSY, "instance %d is not running", index);
    if (ei->cg == NULL || cgroup__freeze(ei->cg, pause, &fe) < 0) {
        /* Twice: a process forked while the first pass went is caught by
         * the second. */
        signal_all(ei, pause ? SIGSTOP : SIGCONT);
        signal_all(ei, pause ? SIGSTOP : SIGCONT);
    }
    ei->paused = pause;
    return 0;
}

static void
exec_stop(struct backend *b, int index, bool force)
{
    struct exec_backend *x = (struct exec_backend *)b;
    struct exec_inst *ei;

    if (index < 0 || (size_t)index >= x->n)
        return;
    ei = &x->insts[index];
    if (ei->pid <= 0)
        return;
    kill(-ei->pid, force ? SIGKILL : SIGTERM);
    if (force && ei->cg != NULL)
        cgroup__kill_all(ei->cg, NULL);
    if (ei->paused) /* a stopped process would not act on SIGTERM */
        (void)exec_pause(b, index, false, NULL);
}

static char *
exec_memory_cgroup(struct backend *b, int index, enum ty__cgver *ver)
{
    struct exec_backend *x = (struct exec_backend *)b;

    if (index < 0 || (size_t)index >= x->n || x->insts[index].cg == NULL)
        return NULL;
    *ver = cgroup__version(x->insts[index].cg);
    return xstrdup(cgroup__memory_dir(x->insts[index].cg));
}

static pid_t
exec_host_pid(struct backend *b, int index)
{
    struct exec_backend *x = (struct exec_backend *)b;

    if (index < 0 || (size_t)index >= x->n || x->insts[index].pid <= 0)
        return 0;
    return x->insts[index].pid;
}

static int
exec_restart(struct backend *b, int index, struct err *err)
{
    struct exec_backend *x = (struct exec_backend *)b;
    struct exec_inst *ei;
    struct err e = {0};

    if (index < 0 || (size_t)index >= x->n)
        return err_set(err, EINVAL, "no instance %d", index);
    ei = &x->insts[index];
    if (ei->pid >= 0 || !ei->ended_read)
        return err_set(err, EBUSY, "instance %d has not ended", index);
    ei->ended_read = false;
    if (spawn(x, &x->bis[index], &e) < 0) {
        push_simple(x, BACKEND_START_FAILED, index, e.msg);
        ei->ended_read = true; /* it may be tried again */
    } else {
        push_simple(x, BACKEND_STARTED, index, NULL);
    }
    wake_up(x);
    return 0;
}

static int
exec_address(struct backend *b, int index, char *buf, size_t size)
{
    struct exec_backend *x = (struct exec_backend *)b;

    if (index < 0 || (size_t)index >= x->n)
        return -1;
    snprintf(buf, size, "127.0.0.1");
    return 0;
}

/* prog as execve takes it: itself when it names a path, else the first
 * executable of that name in the instance's PATH (the usual one when it
 * has none). Caller frees. */
static char *
find_program(const char *prog, char *const *env)
{
    const char *path = strv_getenv(env, "PATH");

    if (strchr(prog, '/') != NULL)
        return xstrdup(prog);
    if (path == NULL || *path == '\0')
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p != '\0';) {
        size_t len = strcspn(p, ":");
        char *cand = xasprintf("%.*s/%s", (int)len, len ? p : ".", prog);

        if (access(cand, X_OK) == 0)
            return cand;
        free(cand);
        p += len;
        if (*p == ':')
            p++;
    }
    return xstrdup(prog);
}

/* On the calling thread (the runner's probe thread): proc_run_opts waits
 * for its own child's pid, and kills its process group at the deadline. */
static int
exec_probe(struct backend *b, int index, const char *const *argv,
           int64_t timeout_ms, struct err *err)
{
    struct exec_backend *x = (struct exec_backend *)b;
    const struct backend_instance *in;
    struct strvec av = {0};
    struct proc_opts o = {.group = true};
    int rc;

    if (index < 0 || (size_t)index >= x->n || argv == NULL || argv[0] == NULL)
        return err_set(err, EINVAL, "no instance %d or no command", index);
    in = &x->bis[index];
    o.env = in->env;
    o.cwd = in->workdir ? in->workdir : in->tempdir;
    o.timeout_ms = timeout_ms > INT32_MAX ? INT32_MAX : (int)timeout_ms;
    if (o.timeout_ms <= 0)
        o.timeout_ms = 1;
    strvec_push_owned(&av, find_program(argv[0], in->env));
    for (size_t i = 1; argv[i] != NULL; i++)
        strvec_push(&av, argv[i]);
    rc = proc_run_opts(av.v, &o, NULL, err);
    strvec_release(&av);
    return rc;
}

/* Kill what is still running, wait for it, and remove the cgroups. */
static void
exec_destroy(struct backend *b)
{
    struct exec_backend *x = (struct exec_backend *)b;

    for (size_t i = 0; i < x->n; i++) {
        struct exec_inst *ei = &x->insts[i];

        if (ei->pid > 0) {
            kill(-ei->pid, SIGKILL);
            while (waitpid(ei->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
    }
    logpump__destroy(&x->pump, EXEC_LOG_DRAIN_MS);
    for (size_t i = 0; i < x->n; i++)
        cgroup__destroy(&x->insts[i].cg);
    exec_guard__destroy(&x->guard);
    cgroup_sys_destroy(&x->cgs);
    free(x->heap_lib);
    if (x->sigfd >= 0)
        close(x->sigfd);
    if (x->epfd >= 0)
        close(x->epfd);
    for (int i = 0; i < 2; i++)
        if (x->wake[i] >= 0)
            close(x->wake[i]);
    free(x->insts);
    free(x->bis);
    backend__queue_release(&x->queue);
    free(x);
}

static const struct backend_ops exec_ops = {
    .prepare = exec_prepare,
    .start_all = exec_start_all,
    .notify_fd = exec_notify_fd,
    .next_event = exec_next_event,
    .stop = exec_stop,
    .memory_cgroup = exec_memory_cgroup,
    .host_pid = exec_host_pid,
    .restart = exec_restart,
    .pause = exec_pause,
    .address = exec_address,
    .probe = exec_probe,
    .destroy = exec_destroy,
};

struct backend *
backend_exec_new(const struct backend_config *cfg, struct err *err)
{
    struct exec_backend *x = xcalloc(1, sizeof(*x));

    (void)err;
    x->base.ops = &exec_ops;
    x->base.instance_uid = -1;
    x->base.instance_gid = -1;
    snprintf(x->base.sync_host, sizeof(x->base.sync_host), "127.0.0.1");
    x->cfg = *cfg;
    x->sigfd = -1;
    x->epfd = -1;
    x->wake[0] = x->wake[1] = -1;
    backend__queue_init(&x->queue);
    return &x->base;
}

/*
 * run_preoom.c — asking an instance for a heap snapshot before it is
 * OOM-killed, once the memory monitor saw it cross the threshold
 * (run_config.pre_oom_snapshot; run/monitor_int.h decides when).
 *
 * Two ways, in this order: an instance whose SDK keeps a snapshot_wait
 * pending is answered over its sync connection (syncsvc_snapshot_request);
 * otherwise a program profiled with LD_PRELOAD=libtestyard-heap.so is sent
 * its profiler's signal with TY_WIRE_PREOOM_SIGVAL queued (sigqueue), which
 * the profiler takes for a pre-OOM request. Instances are hostile and a
 * stray signal kills most programs, so the signal goes only to a process
 * that asked for it: its environment (/proc/<pid>/environ, read bounded)
 * has LD_PRELOAD naming libtestyard-heap, and the signal its profiler
 * claims (TESTYARD_HEAP_SIGNAL there, SIGUSR2 by default, as
 * sdk/heap/ty_heap_env.c reads it) is caught (SigCgt of /proc/<pid>/status).
 * A server that writes its process title over its environment block
 * (redis, nginx, postgres) leaves nothing to read there; then a process
 * of an instance started with the profiler preloaded asks when
 * libtestyard-heap is mapped in it (/proc/<pid>/maps), for the signal of
 * the environment testyard started it with.
 *
 * Every process of the instance that asked is signalled: where the
 * backend knows the instance's memory cgroup, those listed in its
 * cgroup.procs (at most PREOOM_PROCS_MAX), so that a program started by a
 * shell wrapper, or a server's worker processes, each take their own
 * snapshot; otherwise its main process. A pid read from cgroup.procs is
 * held by its /proc/<pid> folder and only used once its own cgroup file,
 * read through that folder, names the instance's cgroup: a pid reused by
 * a process elsewhere is never signalled.
 *
 * A process is held by a descriptor of its /proc/<pid> folder: the files
 * are read through it and the signal is sent through it
 * (pidfd_send_signal), so a pid that was reused after the process ended
 * is never read nor signalled. The main process's folder is opened when
 * the instance started. Under an init (local:docker's docker-init, which
 * would pass the signal on without its value) the init itself is never
 * asked: without a cgroup the process asked is the init's child, found
 * in the init's task/<pid>/children and held the same way once its PPid
 * says it is that child.
 */
#include "run/run_int.h"

#include "base/log.h"
#include "base/strvec.h"
#include "base/util.h"
#include "ty_units.h"
#include "ty_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What is read of an instance's environment and status. */
#define PREOOM_ENVIRON_MAX (256u << 10)
#define PREOOM_STATUS_MAX (16u << 10)
#define PREOOM_MAPS_MAX (1u << 20) /* >= PREOOM_ENVIRON_MAX */
/* Processes of one instance asked at most, and what is read of its
 * cgroup.procs (room for that many pids). */
#define PREOOM_PROCS_MAX 64
#define PREOOM_PROCS_BYTES (PREOOM_PROCS_MAX * 12)

/* Whether the LD_PRELOAD value (paths separated by spaces or colons, as
 * ld.so reads them) names libtestyard-heap. */
static bool
preloads_heap(const char *v, size_t len)
{
    static const char lib[] = "libtestyard-heap";
    size_t i = 0;

    while (i < len) {
        size_t j = i, base;

        while (j < len && v[j] != ' ' && v[j] != ':')
            j++;
        base = i;
        for (size_t k = i; k < j; k++)
            if (v[k] == '/')
                base = k + 1;
        if (j - base >= sizeof(lib) - 1 &&
            memcmp(v + base, lib, sizeof(lib) - 1) == 0)
            return true;
        i = j + 1;
    }
    return false;
}

int
run__preoom_env_signal(const char *env, size_t len)
{
    bool preload = false;
    int sig = SIGUSR2;

    for (size_t i = 0; i < len;) {
        const char *e = env + i;
        size_t n = strnlen(e, len - i);

        if (n > 11 && memcmp(e, "LD_PRELOAD=", 11) == 0)
            preload = preloads_heap(e + 11, n - 11);
        else if (n > 21 && memcmp(e, "TESTYARD_HEAP_SIGNAL=", 21) == 0) {
            char v[64];

            snprintf(v, sizeof(v), "%.*s", (int)(n - 21), e + 21);
            /* the profiler's own reading: a bad value means SIGUSR2 */
            sig = ty__parse_signal(v);
            if (sig < 0)
                sig = SIGUSR2;
        }
        i += n + 1;
    }
    return preload ? sig : 0;
}

bool
run__preoom_caught(const char *status, int sig)
{
    const char *p = strstr(status, "\nSigCgt:");
    unsigned long long mask;
    char *end;

    if (p == NULL || sig <= 0 || sig > 64)
        return false;
    mask = strtoull(p + 8, &end, 16);
    return end != p + 8 && (mask >> (sig - 1) & 1) != 0;
}

/* pidfd_send_signal with the value the profiler takes for a pre-OOM
 * request, as sigqueue would queue it. Where the kernel (before 5.1) or
 * valgrind does not have it, sigqueue itself to pid, the process whose
 * files were just read through procfd. */
static int
send_preoom(int procfd, pid_t pid, int sig)
{
    siginfo_t si;

    memset(&si, 0, sizeof(si));
    si.si_signo = sig;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_int = TY_WIRE_PREOOM_SIGVAL;
    if (syscall(SYS_pidfd_send_signal, procfd, sig, &si, 0) == 0)
        return 0;
    if (errno != ENOSYS || pid <= 0)
        return -errno;
    return sigqueue(pid, sig, si.si_value) < 0 ? -errno : 0;
}

bool
run__preoom_maps_heap(const char *maps)
{
    static const char lib[] = "/libtestyard-heap";

    for (const char *p = maps; (p = strstr(p, lib)) != NULL; p++) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);

        /* a path that ends in a file named libtestyard-heap* */
        if (memchr(p + 1, '/', n - 1) == NULL)
            return true;
    }
    return false;
}

int
run__preoom_signal(int procfd, int given, char *why, size_t whylen)
{
    cleanup_free char *buf = xmalloc(PREOOM_MAPS_MAX);
    ssize_t n = series__read_at(procfd, "environ", buf, PREOOM_ENVIRON_MAX);
    int sig;

    if (n < 0)
        return (int)n;
    sig = run__preoom_env_signal(buf, (size_t)n);
    /* A server that writes its process title over its environment (redis,
     * nginx, postgres) leaves nothing to read there: the profiler mapped
     * in it, with the signal of the environment it was started with. */
    if (sig == 0 && given > 0 &&
        (n = series__read_at(procfd, "maps", buf, PREOOM_MAPS_MAX)) > 0 &&
        run__preoom_maps_heap(buf))
        sig = given;
    if (sig == 0) {
        snprintf(why, whylen, "%s", "no LD_PRELOAD of libtestyard-heap");
        return 0;
    }
    n = series__read_at(procfd, "status", buf, PREOOM_STATUS_MAX);
    if (n < 0)
        return (int)n;
    if (!run__preoom_caught(buf, sig)) {
        snprintf(why, whylen, "its profiler's signal %d is not caught", sig);
        return 0;
    }
    n = send_preoom(procfd, (pid_t)monitor__status_value(buf, "Pid"), sig);
    return n < 0 ? (int)n : 1;
}

int
run__preoom_child(int procfd, pid_t pid)
{
    char path[64], buf[PREOOM_STATUS_MAX], *end;
    long child;
    int fd;

    snprintf(path, sizeof(path), "task/%d/children", (int)pid);
    if (series__read_at(procfd, path, buf, sizeof(buf)) <= 0)
        return -1;
    child = strtol(buf, &end, 10);
    if (end == buf || child <= 0 || child > INT32_MAX)
        return -1;
    snprintf(path, sizeof(path), "/proc/%ld", child);
    fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (series__read_at(fd, "status", buf, sizeof(buf)) < 0 ||
        monitor__status_value(buf, "PPid") != (int64_t)pid) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether the cgroup path p (as /proc/<pid>/cgroup gives it, len bytes)
 * is the end of cgdir, on a '/' boundary. */
static bool
path_ends(const char *cgdir, const char *p, size_t len)
{
    size_t n = strlen(cgdir);

    while (n > 1 && cgdir[n - 1] == '/')
        n--;
    /* p starts with '/': a match is on a boundary; "/" is every cgroup */
    return len > 1 && p[0] == '/' && len <= n &&
           memcmp(cgdir + n - len, p, len) == 0;
}

/* Whether the controllers field of a /proc/<pid>/cgroup line (len bytes)
 * holds the memory controller's hierarchy: "memory" in its comma list
 * (v1), or empty (v2's one hierarchy). */
static bool
memory_controller(const char *c, size_t len)
{
    size_t i = 0;

    if (len == 0)
        return true;
    while (i < len) {
        size_t j = i;

        while (j < len && c[j] != ',')
            j++;
        if (j - i == 6 && memcmp(c + i, "memory", 6) == 0)
            return true;
        i = j + 1;
    }
    return false;
}

bool
run__preoom_in_cgroup(const char *text, const char *cgdir)
{
    const char *line = text;

    while (line != NULL && *line != '\0') {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *c1 = memchr(line, ':', len);
        const char *c2 =
            c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

        if (c2 != NULL && memory_controller(c1 + 1, (size_t)(c2 - c1 - 1)) &&
            path_ends(cgdir, c2 + 1, len - (size_t)(c2 + 1 - line)))
            return true;
        line = end ? end + 1 : NULL;
    }
    return false;
}

/* Ask one pid of the cgroup cgdir: 1 when it was signalled, 0 when it is
 * not the cgroup's (any more) or did not ask (why says so), -errno. */
static int
signal_member(pid_t pid, const char *cgdir, int given, char *why, size_t whylen)
{
    char path[32], buf[PREOOM_STATUS_MAX];
    cleanup_close int fd = -1;

    snprintf(path, sizeof(path), "/proc/%d", (int)pid);
    fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    if (series__read_at(fd, "cgroup", buf, sizeof(buf)) < 0 ||
        !run__preoom_in_cgroup(buf, cgdir))
        return 0;
    return run__preoom_signal(fd, given, why, whylen);
}

int
run__preoom_signal_pids(const pid_t *pids, size_t n, const char *cgdir,
                        pid_t skip, int given, char *why, size_t whylen)
{
    int sent = 0, last = 0;

    for (size_t i = 0; i < n; i++) {
        int rc;

        if (pids[i] <= 0 || pids[i] == skip)
            continue;
        rc = signal_member(pids[i], cgdir, given, why, whylen);
        if (rc > 0)
            sent++;
        else if (rc < 0)
            last = rc;
    }
    return sent > 0 ? sent : last;
}

/* The pids of cgdir's cgroup.procs, at most PREOOM_PROCS_MAX of them;
 * how many, or -errno. */
static int
cgroup_pids(const char *cgdir, pid_t *pids)
{
    char buf[PREOOM_PROCS_BYTES + 1], *p = buf, *end;
    cleanup_close int dfd = open(cgdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ssize_t len;
    int n = 0;

    if (dfd < 0)
        return -errno;
    len = series__read_at(dfd, "cgroup.procs", buf, sizeof(buf));
    if (len < 0)
        return (int)len;
    if ((size_t)len == sizeof(buf) - 1 && (end = strrchr(buf, '\n')) != NULL)
        end[1] = '\0'; /* the pid the bound cut short */
    while (n < PREOOM_PROCS_MAX) {
        long v = strtol(p, &end, 10);

        if (end == p || (*end != '\n' && *end != '\0'))
            break;
        if (v > 0 && v <= INT32_MAX)
            pids[n++] = (pid_t)v;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return n;
}

/* The profiler's signal in the environment the instance was started
 * with (its group preloads the profiler, or its LD_PRELOAD names it);
 * 0 when none. */
static int
given_signal(const struct run *r, const struct run_inst *in)
{
    const char *ld = strv_getenv(in->env, "LD_PRELOAD");
    const char *v = strv_getenv(in->env, "TESTYARD_HEAP_SIGNAL");
    int sig;

    if (!r->comp->groups[in->group].heap_preload &&
        (ld == NULL || !preloads_heap(ld, strlen(ld))))
        return 0;
    if (v == NULL || *v == '\0')
        return SIGUSR2;
    sig = ty__parse_signal(v);
    return sig < 0 ? SIGUSR2 : sig; /* as the profiler reads it */
}

/* Ask every process of the instance's memory cgroup. */
static int
signal_cgroup(const struct run *r, const struct run_inst *in, char *why,
              size_t whylen)
{
    pid_t pids[PREOOM_PROCS_MAX];
    int n = cgroup_pids(in->cgdir, pids);

    if (n < 0)
        return n;
    snprintf(why, whylen, "%s", "no process in its cgroup");
    return run__preoom_signal_pids(pids, (size_t)n, in->cgdir,
                                   r->be->init_parent ? in->pid : 0,
                                   given_signal(r, in), why, whylen);
}

enum monitor_via
run__preoom_ask(void *arg, int id)
{
    struct run *r = arg;
    struct run_inst *in;
    char why[128] = "no process under the instance's init";
    cleanup_close int child = -1;
    int rc = 0;

    if (id < 0 || (size_t)id >= r->n || (in = &r->insts[id])->ended)
        return MONITOR_VIA_NONE;
    if (syncsvc_snapshot_request(r->svc, id))
        return MONITOR_VIA_SYNC;
    if (in->cgdir != NULL)
        rc = signal_cgroup(r, in, why, sizeof(why));
    else if (in->procfd < 0)
        return MONITOR_VIA_NONE;
    else if (!r->be->init_parent)
        rc = run__preoom_signal(in->procfd, given_signal(r, in), why,
                                sizeof(why));
    else if ((child = run__preoom_child(in->procfd, in->pid)) >= 0)
        rc = run__preoom_signal(child, given_signal(r, in), why, sizeof(why));
    if (rc > 0)
        return MONITOR_VIA_SIGNAL;
    if (rc < 0)
        snprintf(why, sizeof(why), "%s", strerror(-rc));
    log_debug("%s: near its memory limit, not asked for a snapshot: %s",
              in->label, why);
    return MONITOR_VIA_NONE;
}

void
run__preoom_watch(struct run *r, struct run_inst *in, pid_t pid,
                  const char *cgdir)
{
    char path[32];

    if (r->comp->pre_oom <= 0 || pid <= 0 ||
        r->comp->groups[in->group].memory_bytes == 0)
        return;
    if (cgdir != NULL)
        in->cgdir = xstrdup(cgdir);
    snprintf(path, sizeof(path), "/proc/%d", (int)pid);
    in->pid = pid;
    in->procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (in->procfd < 0)
        log_debug("%s: %s: %s: no pre-OOM signal", in->label, path,
                  strerror(errno));
}

void
run__preoom_unwatch(struct run_inst *in)
{
    if (in->procfd >= 0)
        close(in->procfd);
    in->procfd = -1;
    free(in->cgdir);
    in->cgdir = NULL;
}

/*
 * preload.c — the heap profiler for programs that do not use the SDK:
 *
 *     LD_PRELOAD=/usr/local/lib/libtestyard-heap.so ./server
 *
 * The library carries the same interposer and sampler as the SDK. It takes
 * a snapshot when the process exits normally (exit() or a return from main,
 * not _exit() or a fatal signal) having sampled something, whenever it receives
 * SIGUSR2, when the heap in use reaches a new high by TESTYARD_HEAP_PEAK_STEP
 * (ty_heap_peak.c) and, if asked, every TESTYARD_HEAP_PROFILE_INTERVAL. Files
 * are named heap-<program>-<pid>-<what>.pb.gz and .json (what: exit,
 * signal-<k>, periodic-<k>, peak, pre-oom) so that the processes of a pipeline
 * or a forking server do not overwrite each other, and are written whole or not
 * at all into TESTYARD_HEAP_DIR, else TEST_OUTPUTS_PATH, else the working
 * directory; peak and pre-oom replace their previous file.
 *
 * A signal handler may not build a profile (that allocates), so the handler
 * writes a byte to a pipe and a thread of the library's own, with every
 * signal blocked, takes the snapshot; the sampler wakes the same thread
 * through the same pipe for a peak. A delivery queued by the coordinator
 * (sigqueue, si_value TY_WIRE_PREOOM_SIGVAL: its instance nears its memory
 * limit) is a pre-oom snapshot; any other is signal-<k>. SIGUSR2 is only
 * claimed when the program has not set a handler for it by the time the
 * library starts; TESTYARD_HEAP_SIGNAL picks another (USR1, RTMIN+3, a
 * number) or none. After fork the child gets a thread and a pipe of its
 * own.
 */
#include "ty_heap.h"
#include "ty_io.h"
#include "ty_time.h"
#include "ty_wire.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NAME_MAX_PROG 40

static struct {
    int sig; /* 0: none */
    bool at_exit;
    int64_t interval_ns; /* 0: no periodic snapshots */
    uint64_t peak_step;  /* 0: no peak snapshots */
    int64_t peak_interval_ns;
    /* A copy: the environment's memory is the program's (servers such as
     * redis write their process title over it), and an absolute one, as
     * the program may change folder. */
    char dir[PATH_MAX];
    char prog[NAME_MAX_PROG + 1];
    int pipe[2];
    pthread_t thread;
    bool running;
    int signals, periodic;
} P = {.pipe = {-1, -1}};

/* ------------------------------------------------------------------------
 * Files
 */

static int
write_whole(const char *name, const void *data, size_t len)
{
    char path[PATH_MAX + 256];
    int n = snprintf(path, sizeof(path), "%s/%s", P.dir, name);

    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    return ty__write_atomic(path, data, len, 0644);
}

static void
snapshot(const char *what, enum ty__heap_trigger trigger)
{
    struct ty__heap_files f;
    char label[128], name[160];
    int r;

    snprintf(label, sizeof(label), "%s-%ld-%s", P.prog, (long)getpid(), what);
    r = ty__heap_files_build(label, -1, trigger, &f);
    if (r == 0) {
        snprintf(name, sizeof(name), "heap-%s.pb.gz", label);
        r = write_whole(name, f.pb, f.pb_len);
    }
    if (r == 0) {
        snprintf(name, sizeof(name), "heap-%s.json", label);
        r = write_whole(name, f.json, f.json_len);
    }
    if (r < 0)
        fprintf(stderr, "testyard-heap: snapshot %s in %s: %s\n", label, P.dir,
                strerror(-r));
    ty__heap_files_release(&f);
}

/* ------------------------------------------------------------------------
 * The snapshot thread
 */

/* 'o' for the coordinator's pre-OOM request, 's' for any other. */
static void
on_signal(int sig, siginfo_t *si, void *uc)
{
    int e = errno;
    char c = si != NULL && si->si_code == SI_QUEUE &&
                     si->si_value.sival_int == TY_WIRE_PREOOM_SIGVAL
                 ? 'o'
                 : 's';

    (void)sig;
    (void)uc;
    if (write(P.pipe[1], &c, 1) < 0) {
        /* pipe full: snapshots already pending */
    }
    errno = e;
}

/* Until the next periodic snapshot or the peak the interval holds back,
 * in ms rounded up; -1: nothing due. */
static int
poll_timeout(const struct timespec *next)
{
    struct timespec now;
    int64_t ms = -1, peak = ty__heap_peak_wait(ty__now_ns());

    if (P.interval_ns > 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        ms = (next->tv_sec - now.tv_sec) * 1000 +
             (next->tv_nsec - now.tv_nsec) / 1000000;
        if (ms < 0)
            ms = 0;
    }
    if (peak >= 0 && (ms < 0 || (peak + 999999) / 1000000 < ms))
        ms = (peak + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void
peak_due(void)
{
    int64_t now = ty__now_ns();

    if (ty__heap_peak_wait(now) != 0)
        return;
    ty__heap_peak_taken(now);
    snapshot("peak", TY_HEAP_TRIGGER_PEAK);
}

static void
advance(struct timespec *t, int64_t ns)
{
    ns += t->tv_nsec;
    t->tv_sec += (time_t)(ns / 1000000000);
    t->tv_nsec = (long)(ns % 1000000000);
}

/* Returns false when asked to stop. */
static bool
drain(void)
{
    char buf[64], what[32];
    ssize_t n = read(P.pipe[0], buf, sizeof(buf));

    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == 'q')
            return false;
        if (buf[i] == 'o') {
            snapshot("pre-oom", TY_HEAP_TRIGGER_PREOOM);
        } else if (buf[i] == 's') {
            snprintf(what, sizeof(what), "signal-%d", ++P.signals);
            snapshot(what, TY_HEAP_TRIGGER_SIGNAL);
        }
    }
    return true;
}

static void *
worker(void *arg)
{
    struct pollfd pfd = {.fd = P.pipe[0], .events = POLLIN};
    struct timespec next;
    char what[32];

    (void)arg;
    clock_gettime(CLOCK_MONOTONIC, &next);
    advance(&next, P.interval_ns);
    for (;;) {
        int r = poll(&pfd, 1, poll_timeout(&next));

        if (r > 0 && !drain())
            return NULL;
        peak_due();
        if (P.interval_ns > 0 && poll_timeout(&next) == 0) {
            snprintf(what, sizeof(what), "periodic-%d", ++P.periodic);
            snapshot(what, TY_HEAP_TRIGGER_PERIODIC);
            advance(&next, P.interval_ns);
        }
    }
}

static void
start_worker(void)
{
    sigset_t all, old;

    if (P.sig == 0 && P.interval_ns <= 0 && P.peak_step == 0)
        return;
    if (pipe2(P.pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return;
    /* The sampler writes 'p' into the same pipe; it stays open for the
     * process's life (or until the child's handler replaces it, when only
     * the forking thread runs). */
    ty__heap_peak_arm(P.pipe[1], P.peak_step, P.peak_interval_ns);
    /* Created with every signal blocked, so the program's threads get them. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    P.running = pthread_create(&P.thread, NULL, worker, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void
after_fork_child(void)
{
    if (P.pipe[0] >= 0) {
        close(P.pipe[0]);
        close(P.pipe[1]);
        P.pipe[0] = P.pipe[1] = -1;
    }
    P.running = false;
    P.signals = P.periodic = 0;
    start_worker();
}

/* ------------------------------------------------------------------------
 * Configuration
 */

/* The program's name as a label part: [A-Za-z0-9_-], at most 40. */
static void
program_name(void)
{
    extern char *program_invocation_short_name;
    const char *s = program_invocation_short_name;
    size_t n = 0;

    for (; s != NULL && s[n] != '\0' && n < NAME_MAX_PROG; n++)
        P.prog[n] = isalnum((unsigned char)s[n]) || s[n] == '-' ? s[n] : '_';
    P.prog[n] = '\0';
    if (n == 0)
        snprintf(P.prog, sizeof(P.prog), "prog");
}

/* P.dir from dir, made absolute against the working folder now. */
static void
set_dir(const char *dir)
{
    char cwd[PATH_MAX];
    int n;

    if (dir[0] != '/' && getcwd(cwd, sizeof(cwd)) != NULL)
        n = snprintf(P.dir, sizeof(P.dir), "%s%s%s", cwd,
                     strcmp(cwd, "/") == 0 ? "" : "/",
                     strcmp(dir, ".") == 0 ? "" : dir);
    else
        n = snprintf(P.dir, sizeof(P.dir), "%s", dir);
    if (n < 0 || (size_t)n >= sizeof(P.dir))
        fprintf(stderr, "testyard-heap: %.60s...: folder name too long\n", dir);
    else if (P.dir[0] != '\0' && P.dir[1] != '\0' && P.dir[n - 1] == '/')
        P.dir[n - 1] = '\0';
}

static void
configure(void)
{
    struct ty__heap_env e;

    ty__heap_env_read(&e);
    for (int i = 0; i < TY_HEAP_VAR_N; i++)
        if (e.bad[i][0] != '\0')
            fprintf(stderr, "testyard-heap: %s\n", e.bad[i]);
    set_dir(e.dir);
    P.at_exit = e.at_exit;
    P.sig = e.sig;
    P.interval_ns = e.interval_ns;
    P.peak_step = e.peak_step;
    P.peak_interval_ns = e.peak_interval_ns;
    program_name();
}

static void
claim_signal(void)
{
    struct sigaction sa, old;

    if (P.sig == 0 || sigaction(P.sig, NULL, &old) < 0 ||
        old.sa_handler != SIG_DFL) {
        P.sig = 0;
        return;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(P.sig, &sa, NULL);
}

__attribute__((constructor)) static void
preload_start(void)
{
    int was;

    ty__heap_start();
    was = ty__heap_quiet_begin();
    configure();
    claim_signal();
    start_worker();
    pthread_atfork(NULL, NULL, after_fork_child);
    ty__heap_quiet_end(was);
}

/* Whether the sampler ever took a sample in this process: a shell, a
 * wrapper or a helper that a program runs under the same environment
 * allocates too little to be sampled, and an exit profile of nothing
 * from each of them would bury the program's own. */
static bool
sampled_any(void)
{
    struct ty__heap_snap s = {0};
    bool any;

    if (ty__heap_collect(&s) < 0)
        return true;
    any = s.n > 0;
    ty__heap_snap_release(&s);
    return any;
}

__attribute__((destructor)) static void
preload_stop(void)
{
    char q = 'q';

    if (P.running && write(P.pipe[1], &q, 1) == 1)
        pthread_join(P.thread, NULL);
    P.running = false;
    /* With sampling off the sidecar's figures are all there is. */
    if (P.at_exit && (ty__heap_get_rate() == 0 || P.signals > 0 ||
                      P.periodic > 0 || sampled_any()))
        snapshot("exit", TY_HEAP_TRIGGER_EXIT);
}

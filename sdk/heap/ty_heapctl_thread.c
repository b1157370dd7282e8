/*
 * ty_heapctl_thread.c — the SDK's snapshot thread: one thread per handle
 * (from ty__heapctl_init to ty__heapctl_fini) that takes every snapshot
 * the plan did not ask for itself:
 *
 *  - periodic-<k>, every TESTYARD_HEAP_PROFILE_INTERVAL (profiles.heap);
 *  - peak, when the estimate of heap in use passes the last peak
 *    snapshot's by TESTYARD_HEAP_PEAK_STEP, at most once per
 *    TESTYARD_HEAP_PEAK_INTERVAL (ty_heap_peak.c decides);
 *  - pre-oom, at once when the coordinator answers the snapshot_wait
 *    request the thread keeps pending while the handle is connected (the
 *    coordinator answers when the instance's cgroup nears its limit).
 *
 * The thread sleeps in poll() on two pipes. The process's peak pipe gets a
 * byte from the sampler, inside malloc; it is made once per process and
 * never closed, since a thread in malloc may be about to write to it. The
 * handle's own pipe gets 'q' to stop, and a byte from the connection's I/O
 * thread when the snapshot_wait is answered or the connection breaks.
 * Only one handle at a time serves peak snapshots (in practice there is
 * one, ty_main's). A forked child has no thread: fini there only frees.
 */
#include "ty_conn.h"
#include "ty_heap.h"
#include "ty_time.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A snapshot_wait asks for this long; the coordinator then answers
 * "timeout" and the thread asks again. Past it by WAIT_GRACE_MS without an
 * answer, the request is given up and asked again. */
#define WAIT_MS 60000
#define WAIT_GRACE_MS 5000

struct ty__heapctl {
    struct ty *ty;
    pthread_t thread;
    bool running;
    pid_t pid;
    int pipe[2];
    int64_t interval_ns, next_ns; /* periodic snapshots; 0: none */
    int periodic;
    bool peak; /* this handle serves peak snapshots */
    uint64_t peak_step;
    int64_t peak_interval_ns;
    struct ty__creq *wait; /* the pending snapshot_wait, or NULL */
    int64_t wait_until_ms;
    bool asking; /* keep one snapshot_wait pending */
};

static struct {
    pthread_mutex_t mu;
    int fd[2];
    pid_t pid;
    struct ty__heapctl *owner;
} peak = {PTHREAD_MUTEX_INITIALIZER, {-1, -1}, 0, NULL};

/* ------------------------------------------------------------------------
 * Taking snapshots
 */

static void
take(struct ty__heapctl *h, const char *label, enum ty__heap_trigger t)
{
    if (ty__heap_send(h->ty, label, -1, t) < 0)
        ty_message(h->ty, "heap: %s snapshot %s failed: %s",
                   ty__heap_trigger_name(t), label, ty_errmsg(h->ty));
}

/* Keep one snapshot_wait pending while asking. */
static void
ask(struct ty__heapctl *h)
{
    int rc;

    if (!h->asking || h->wait != NULL)
        return;
    h->wait = ty__sync_snapshot_wait(h->ty, WAIT_MS, h->pipe[1], &rc);
    if (h->wait == NULL)
        h->asking = false;
    else
        h->wait_until_ms = ty__now_ms() + WAIT_MS + WAIT_GRACE_MS;
}

/* "ok": the coordinator wants a snapshot now. A timeout (the
 * coordinator's, or ours past the grace) asks again; anything else — a
 * coordinator that does not know the op ("invalid"), the run's end
 * ("canceled"), a lost connection — stops asking. */
static void
answered(struct ty__heapctl *h)
{
    struct ty__conn *conn = h->ty->conn;
    int rc;

    if (!ty__conn_answered(conn, h->wait)) {
        if (ty__now_ms() < h->wait_until_ms)
            return;
        ty__conn_forget(conn, h->wait);
        h->wait = NULL;
        return;
    }
    rc = ty__sync_snapshot_answer(h->ty, h->wait);
    h->wait = NULL;
    if (rc == 0)
        take(h, "pre-oom", TY_HEAP_TRIGGER_PREOOM);
    else if (rc != -ETIMEDOUT)
        h->asking = false;
}

static void
periodic(struct ty__heapctl *h, int64_t now)
{
    char label[64];

    if (h->interval_ns <= 0 || now < h->next_ns)
        return;
    snprintf(label, sizeof(label), "periodic-%d", ++h->periodic);
    take(h, label, TY_HEAP_TRIGGER_PERIODIC);
    h->next_ns += h->interval_ns;
    now = ty__now_ns();
    if (h->next_ns < now) /* the snapshot took longer than the interval */
        h->next_ns = now + h->interval_ns;
}

/* Whatever is due now, pre-OOM first (the kill may be near). */
static void
serve(struct ty__heapctl *h)
{
    int64_t now;

    if (h->wait != NULL)
        answered(h);
    now = ty__now_ns();
    if (h->peak && ty__heap_peak_wait(now) == 0) {
        ty__heap_peak_taken(now);
        take(h, "peak", TY_HEAP_TRIGGER_PEAK);
    }
    periodic(h, ty__now_ns());
    ask(h);
}

/* ------------------------------------------------------------------------
 * The loop
 */

static int64_t
sooner(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* Milliseconds until something is due, rounded up; -1: nothing. */
static int
poll_ms(const struct ty__heapctl *h)
{
    int64_t now = ty__now_ns(), ns = -1;

    if (h->interval_ns > 0)
        ns = h->next_ns > now ? h->next_ns - now : 0;
    if (h->peak)
        ns = sooner(ns, ty__heap_peak_wait(now));
    if (h->wait != NULL) {
        int64_t left = h->wait_until_ms - ty__now_ms();

        ns = sooner(ns, left > 0 ? left * 1000000 : 0);
    }
    if (ns < 0)
        return -1;
    ns = (ns + 999999) / 1000000;
    return ns > INT_MAX ? INT_MAX : (int)ns;
}

/* Read what is there; false when 'q' was among it. */
static bool
drain(int fd)
{
    char buf[64];
    ssize_t n;
    bool go = true;

    while ((n = read(fd, buf, sizeof(buf))) > 0)
        go = go && memchr(buf, 'q', (size_t)n) == NULL;
    return go;
}

static void *
thread_main(void *arg)
{
    struct ty__heapctl *h = arg;
    int was = ty__heap_quiet_begin();

    h->next_ns = ty__now_ns() + h->interval_ns;
    ask(h);
    for (;;) {
        struct pollfd p[2] = {{h->pipe[0], POLLIN, 0},
                              {h->peak ? peak.fd[0] : -1, POLLIN, 0}};

        if (poll(p, 2, poll_ms(h)) < 0 && errno != EINTR)
            break;
        if ((p[0].revents & POLLIN) && !drain(h->pipe[0]))
            break;
        if (p[1].revents & POLLIN)
            drain(peak.fd[0]);
        serve(h);
    }
    if (h->wait != NULL)
        ty__conn_forget(h->ty->conn, h->wait);
    h->wait = NULL;
    ty__heap_quiet_end(was);
    return NULL;
}

/* ------------------------------------------------------------------------
 * Start and stop
 */

/* The process's peak pipe (a forked child makes its own), and whether h
 * now serves peak snapshots. */
static bool
peak_claim(struct ty__heapctl *h)
{
    bool mine = false;

    pthread_mutex_lock(&peak.mu);
    if (peak.pid != getpid()) {
        if (peak.fd[0] >= 0) { /* the parent's: disarmed at fork */
            close(peak.fd[0]);
            close(peak.fd[1]);
        }
        peak.owner = NULL;
        peak.pid = getpid();
        if (pipe2(peak.fd, O_CLOEXEC | O_NONBLOCK) < 0)
            peak.fd[0] = peak.fd[1] = -1;
    }
    if (peak.owner == NULL && peak.fd[1] >= 0 && h->peak_step != 0) {
        peak.owner = h;
        mine = true;
        ty__heap_peak_arm(peak.fd[1], h->peak_step, h->peak_interval_ns);
    }
    pthread_mutex_unlock(&peak.mu);
    return mine;
}

static void
peak_release(struct ty__heapctl *h)
{
    pthread_mutex_lock(&peak.mu);
    if (peak.owner == h && peak.pid == getpid()) {
        ty__heap_peak_disarm(peak.fd[1]);
        peak.owner = NULL;
    }
    pthread_mutex_unlock(&peak.mu);
}

/* What the SDK does with the settings: the values refused are said once,
 * as the LD_PRELOAD library says them (TESTYARD_HEAP_SIGNAL is its own). */
static void
report_bad_env(struct ty *ty, const struct ty__heap_env *e)
{
    for (int i = 0; i < TY_HEAP_VAR_N; i++)
        if (i != TY_HEAP_VAR_SIGNAL && e->bad[i][0] != '\0')
            ty_message(ty, "heap: %s", e->bad[i]);
}

/* With every signal blocked: the plan's handlers run on the plan's
 * threads. */
static void
start(struct ty__heapctl *h)
{
    sigset_t all, old;

    if (pipe2(h->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        h->pipe[0] = h->pipe[1] = -1;
        ty_message(h->ty, "heap: no snapshot thread: pipe: %s",
                   strerror(errno));
        return;
    }
    h->peak = peak_claim(h);
    h->asking = ty__conn_usable(h->ty->conn);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    h->running = pthread_create(&h->thread, NULL, thread_main, h) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!h->running)
        ty_message(h->ty, "heap: cannot start the snapshot thread");
}

void
ty__heapctl_init(struct ty *ty)
{
    struct ty__heapctl *h = calloc(1, sizeof(*h));
    struct ty__heap_env env;

    ty__heap_start();
    ty__heap_env_read(&env);
    report_bad_env(ty, &env);
    if (h == NULL)
        return;
    h->ty = ty;
    h->pid = getpid();
    h->pipe[0] = h->pipe[1] = -1;
    h->interval_ns = env.interval_ns;
    h->peak_step = env.peak_step;
    h->peak_interval_ns = env.peak_interval_ns;
    ty->heapctl = h;
    start(h);
}

void
ty__heapctl_fini(struct ty *ty)
{
    struct ty__heapctl *h = ty->heapctl;

    if (h == NULL)
        return;
    if (h->pid == getpid()) {
        peak_release(h);
        while (h->running && write(h->pipe[1], "q", 1) < 0 && errno == EINTR)
            ;
        if (h->running)
            pthread_join(h->thread, NULL);
    }
    if (h->pipe[0] >= 0) {
        close(h->pipe[0]);
        close(h->pipe[1]);
    }
    free(h);
    ty->heapctl = NULL;
}

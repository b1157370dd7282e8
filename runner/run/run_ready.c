/*
 * run_ready.c — readiness probes (a group's run.ready) on their own
 * thread, so that a slow command or an unanswered connect never holds up
 * the orchestrator's loop.
 *
 * Each instance has one slot. run__ready_watch arms it for one
 * incarnation of the instance (gen); the thread probes every armed slot
 * at its interval — a TCP connect to the instance's address, or the
 * backend's probe() running the group's command where the instance runs
 * — and on the first success leaves the answer in the slot, disarms it
 * and makes the eventfd readable. The orchestrator keeps the deadline
 * (a probe that never succeeds is disarmed by run__ready_forget) and
 * drops an answer for an older incarnation.
 */
#include "run/run_int.h"

#include "base/log.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The longest a connect or a command may take before it counts as a
 * failed probe (the interval is shorter when it is). */
#define READY_CONNECT_MAX_MS 1000
#define READY_COMMAND_MAX_MS 10000

struct ready_slot {
    bool armed;
    uint64_t gen;
    int port;
    char addr[64];
    const char *const *argv; /* the composition's, borrowed */
    int64_t interval_ms;
    int64_t next_ms;
    bool busy; /* the thread is probing it now */
    bool answered;
    struct run_ready_answer answer;
    char why[256]; /* the last failure, for a warning at the deadline */
};

struct run_ready {
    struct backend *be;
    size_t n;
    struct ready_slot *slot;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t thread;
    bool running, quit;
    int efd;
};

static int64_t
mono_ms(void)
{
    return now_mono_ns() / 1000000;
}

/* 0 when something accepts a connection at addr:port within timeout_ms;
 * -1 with why. */
static int
probe_tcp(const char *addr, int port, int64_t timeout_ms, char *why,
          size_t size)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    socklen_t len;
    int fd, rc = -1, soerr = 0;
    socklen_t elen = sizeof(soerr);
    struct pollfd p;

    if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons((uint16_t)port);
        len = sizeof(*in4);
    } else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        len = sizeof(*in6);
    } else {
        snprintf(why, size, "%s is not a numeric address", addr);
        return -1;
    }
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(why, size, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&ss, len) == 0)
        rc = 0;
    else if (errno == EINPROGRESS) {
        p = (struct pollfd){fd, POLLOUT, 0};
        if (poll(&p, 1, (int)timeout_ms) == 1 &&
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &elen) == 0 &&
            soerr == 0)
            rc = 0;
        else
            errno = soerr != 0 ? soerr : ETIMEDOUT;
    }
    if (rc < 0)
        snprintf(why, size, "connect to %s:%d: %s", addr, port,
                 strerror(errno));
    close(fd);
    return rc;
}

/* One probe of slot s (a copy, taken under the lock): 0 when ready. */
static int
probe_once(struct run_ready *rr, int index, const struct ready_slot *s,
           char *why, size_t size)
{
    int64_t t = s->interval_ms;
    struct err e = {0};
    int status;

    if (s->port > 0)
        return probe_tcp(s->addr, s->port,
                         t < READY_CONNECT_MAX_MS ? READY_CONNECT_MAX_MS : t,
                         why, size);
    if (rr->be->ops->probe == NULL) {
        snprintf(why, size, "this runner cannot run a probe command");
        return -1;
    }
    status = rr->be->ops->probe(
        rr->be, index, s->argv,
        t > READY_COMMAND_MAX_MS ? t : READY_COMMAND_MAX_MS, &e);
    if (status == 0)
        return 0;
    if (status < 0)
        snprintf(why, size, "%.100s: %.150s", s->argv[0], e.msg);
    else
        snprintf(why, size, "%s exited with status %d", s->argv[0], status);
    return -1;
}

/* The armed slot due first, or -1; *due gets when. */
static int
next_slot(const struct run_ready *rr, int64_t *due)
{
    int best = -1;

    for (size_t i = 0; i < rr->n; i++) {
        const struct ready_slot *s = &rr->slot[i];

        if (!s->armed || s->busy)
            continue;
        if (best < 0 || s->next_ms < *due) {
            best = (int)i;
            *due = s->next_ms;
        }
    }
    return best;
}

static void
wait_until(struct run_ready *rr, int64_t at_ms)
{
    struct timespec ts;

    ts.tv_sec = at_ms / 1000;
    ts.tv_nsec = (at_ms % 1000) * 1000000;
    pthread_cond_timedwait(&rr->cond, &rr->lock, &ts);
}

static void *
ready_main(void *arg)
{
    struct run_ready *rr = arg;

    pthread_mutex_lock(&rr->lock);
    while (!rr->quit) {
        int64_t due = 0, now = mono_ms();
        int i = next_slot(rr, &due);
        struct ready_slot copy;
        char why[256] = "";
        int rc;

        if (i < 0) {
            pthread_cond_wait(&rr->cond, &rr->lock);
            continue;
        }
        if (due > now) {
            wait_until(rr, due);
            continue;
        }
        copy = rr->slot[i];
        rr->slot[i].busy = true;
        pthread_mutex_unlock(&rr->lock);
        rc = probe_once(rr, i, &copy, why, sizeof(why));
        pthread_mutex_lock(&rr->lock);
        struct ready_slot *s = &rr->slot[i];

        s->busy = false;
        if (!s->armed || s->gen != copy.gen)
            continue;
        if (rc < 0) {
            snprintf(s->why, sizeof(s->why), "%s", why);
            s->next_ms = mono_ms() + s->interval_ms;
            continue;
        }
        s->armed = false;
        s->answered = true;
        s->answer = (struct run_ready_answer){
            .index = i,
            .gen = copy.gen,
            .by = copy.port > 0 ? READY_TCP : READY_COMMAND,
            .mono_ms = mono_ms(),
            .wall_ns = now_wall_ns(),
        };
        if (eventfd_write(rr->efd, 1) < 0)
            log_warn("readiness probes: eventfd");
    }
    pthread_mutex_unlock(&rr->lock);
    return NULL;
}

struct run_ready *
run__ready_new(struct backend *be, size_t n, struct err *err)
{
    struct run_ready *rr = xcalloc(1, sizeof(*rr));
    pthread_condattr_t ca;

    rr->be = be;
    rr->n = n;
    rr->slot = xcalloc(n ? n : 1, sizeof(*rr->slot));
    rr->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (rr->efd < 0) {
        err_sys(err, errno, "readiness probes: eventfd");
        free(rr->slot);
        free(rr);
        return NULL;
    }
    pthread_mutex_init(&rr->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&rr->cond, &ca);
    pthread_condattr_destroy(&ca);
    return rr;
}

void
run__ready_destroy(struct run_ready **rrp)
{
    struct run_ready *rr = rrp ? *rrp : NULL;

    if (rr == NULL)
        return;
    if (rr->running) {
        pthread_mutex_lock(&rr->lock);
        rr->quit = true;
        pthread_cond_broadcast(&rr->cond);
        pthread_mutex_unlock(&rr->lock);
        pthread_join(rr->thread, NULL);
    }
    pthread_cond_destroy(&rr->cond);
    pthread_mutex_destroy(&rr->lock);
    close(rr->efd);
    free(rr->slot);
    free(rr);
    *rrp = NULL;
}

int
run__ready_fd(const struct run_ready *rr)
{
    return rr != NULL ? rr->efd : -1;
}

int
run__ready_watch(struct run_ready *rr, int index, uint64_t gen,
                 const struct composition_ready *ready, const char *addr,
                 struct err *err)
{
    struct ready_slot *s;

    if (index < 0 || (size_t)index >= rr->n)
        return err_set(err, EINVAL, "instance %d is not in the run", index);
    if (!rr->running) {
        if (pthread_create(&rr->thread, NULL, ready_main, rr) != 0)
            return err_set(err, EAGAIN, "readiness probes: no thread");
        rr->running = true;
    }
    pthread_mutex_lock(&rr->lock);
    s = &rr->slot[index];
    s->armed = true;
    s->answered = false;
    s->gen = gen;
    s->port = ready->command == NULL ? ready->tcp : 0;
    snprintf(s->addr, sizeof(s->addr), "%s", addr ? addr : "127.0.0.1");
    s->argv = (const char *const *)ready->command;
    s->interval_ms = ready->interval_ns / 1000000;
    if (s->interval_ms <= 0)
        s->interval_ms = COMPOSITION_READY_INTERVAL_NS / 1000000;
    s->next_ms = mono_ms();
    s->why[0] = '\0';
    pthread_cond_broadcast(&rr->cond);
    pthread_mutex_unlock(&rr->lock);
    return 0;
}

void
run__ready_forget(struct run_ready *rr, int index, char *why, size_t size)
{
    if (why != NULL && size > 0)
        why[0] = '\0';
    if (rr == NULL || index < 0 || (size_t)index >= rr->n)
        return;
    pthread_mutex_lock(&rr->lock);
    if (why != NULL && size > 0)
        snprintf(why, size, "%s", rr->slot[index].why);
    rr->slot[index].armed = false;
    rr->slot[index].answered = false;
    pthread_mutex_unlock(&rr->lock);
}

int
run__ready_next(struct run_ready *rr, struct run_ready_answer *out)
{
    eventfd_t v;
    int found = 0;

    if (rr == NULL)
        return 0;
    (void)eventfd_read(rr->efd, &v);
    pthread_mutex_lock(&rr->lock);
    for (size_t i = 0; i < rr->n && !found; i++) {
        if (!rr->slot[i].answered)
            continue;
        rr->slot[i].answered = false;
        *out = rr->slot[i].answer;
        found = 1;
    }
    pthread_mutex_unlock(&rr->lock);
    return found;
}

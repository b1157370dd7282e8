/*
 * logpump.c — the local:exec log thread (see backend/logpump_int.h).
 *
 * The set of pipes only grows while instances start (logpump__add, under
 * the lock, then a byte on the wake pipe); the thread rebuilds its poll
 * set each turn, reads what is ready in pieces of PUMP_CHUNK and hands
 * them to the instance's instlog, which keeps the head and the tail. It
 * never blocks on anything but poll: the pipes are non-blocking.
 */
#include "backend/logpump_int.h"

#include "base/instlog.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define PUMP_CHUNK (64 * 1024)
#define PUMP_PIPE_SIZE (1 << 20)

struct pump_ent {
    int fd[2]; /* stdout, stderr; -1 at end of file */
    struct instlog *log;
    char *label;
    bool warned; /* a write failed and was said */
    bool keep;   /* the log stays for a restart after the pipes end */
};

struct logpump {
    pthread_t thread;
    pthread_mutex_t mu; /* guards everything below */
    int wake[2];
    struct pump_ent *ents;
    size_t n, cap;
    bool stop;
    int64_t stop_by_ns; /* monotonic deadline once stop is set */
    char *buf;          /* the thread's */
};

static void
ent_finish(struct pump_ent *e)
{
    struct err err = {0};

    for (int s = 0; s < 2; s++) {
        if (e->fd[s] >= 0)
            close(e->fd[s]);
        e->fd[s] = -1;
    }
    /* The run exits 73/74 with this at its end (err_output_take). */
    if (e->log != NULL && instlog_finish(e->log, &err) < 0) {
        err_prefix(&err, "cannot write the logs of %s", e->label);
        log_warnx("%s", err.msg);
        err_output_note(&err);
    }
    if (!e->keep)
        instlog_destroy(&e->log);
}

/* Read what fd has; end of file or an error closes it. */
static void
drain(struct logpump *p, struct pump_ent *e, int s)
{
    for (int turns = 0; turns < 16; turns++) {
        ssize_t n = read(e->fd[s], p->buf, PUMP_CHUNK);
        struct err err = {0};

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) {
            close(e->fd[s]);
            e->fd[s] = -1;
            break;
        }
        if (instlog_write(e->log, s + 1, p->buf, (size_t)n, &err) < 0 &&
            !e->warned) {
            e->warned = true;
            log_warnx("%s: logs: %s", e->label, err.msg);
        }
    }
    if (e->fd[0] < 0 && e->fd[1] < 0)
        ent_finish(e);
}

/* One poll over every open pipe (and the wake pipe); false once the
 * thread should end. Called and returns with the lock held. */
static bool
turn(struct logpump *p, struct pollfd *pf, size_t *map, size_t cap)
{
    size_t k = 1, open = 0;
    int timeout = p->stop ? 50 : -1;

    pf[0] = (struct pollfd){.fd = p->wake[0], .events = POLLIN};
    for (size_t i = 0; i < p->n && k < cap; i++)
        for (int s = 0; s < 2; s++)
            if (p->ents[i].fd[s] >= 0) {
                map[k] = i * 2 + (size_t)s;
                pf[k++] =
                    (struct pollfd){.fd = p->ents[i].fd[s], .events = POLLIN};
                open++;
            }
    if (p->stop && (open == 0 || now_mono_ns() >= p->stop_by_ns))
        return false;
    pthread_mutex_unlock(&p->mu);
    (void)poll(pf, k, timeout);
    pthread_mutex_lock(&p->mu);
    if (pf[0].revents)
        while (read(p->wake[0], p->buf, 256) > 0)
            ;
    for (size_t j = 1; j < k; j++) {
        struct pump_ent *e = &p->ents[map[j] / 2];
        int s = (int)(map[j] % 2);

        if (pf[j].revents && e->fd[s] >= 0)
            drain(p, e, s);
    }
    return true;
}

static void *
pump_main(void *arg)
{
    struct logpump *p = arg;
    struct pollfd *pf = NULL;
    size_t *map = NULL, cap = 0;

    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (cap < p->n * 2 + 1) {
            cap = p->n * 2 + 16;
            pf = xrealloc(pf, cap * sizeof(*pf));
            map = xrealloc(map, cap * sizeof(*map));
        }
        if (!turn(p, pf, map, cap))
            break;
    }
    for (size_t i = 0; i < p->n; i++)
        ent_finish(&p->ents[i]);
    pthread_mutex_unlock(&p->mu);
    free(pf);
    free(map);
    return NULL;
}

struct logpump *
logpump__new(struct err *err)
{
    struct logpump *p = xcalloc(1, sizeof(*p));
    int rc;

    if (pipe2(p->wake, O_NONBLOCK | O_CLOEXEC) < 0) {
        free(p);
        return err_sys(err, errno, "log pump: pipe"), NULL;
    }
    p->buf = xmalloc(PUMP_CHUNK);
    pthread_mutex_init(&p->mu, NULL);
    rc = pthread_create(&p->thread, NULL, pump_main, p);
    if (rc != 0) {
        close(p->wake[0]);
        close(p->wake[1]);
        pthread_mutex_destroy(&p->mu);
        free(p->buf);
        free(p);
        return err_sys(err, rc, "log pump: thread"), NULL;
    }
    return p;
}

static int
set_pipes(const int fds[2], const char *label, struct err *err)
{
    for (int s = 0; s < 2; s++) {
        (void)fcntl(fds[s], F_SETPIPE_SZ, PUMP_PIPE_SIZE);
        if (fcntl(fds[s], F_SETFL, O_NONBLOCK) < 0)
            return err_sys(err, errno, "%s: log pipe", label);
    }
    return 0;
}

static void
wake(struct logpump *p)
{
    char one = 1;

    if (write(p->wake[1], &one, 1) < 0 && errno != EAGAIN)
        log_warn("log pump: wake");
}

int
logpump__add(struct logpump *p, int out_fd, int err_fd, struct instlog *log,
             const char *label, bool keep, struct err *err)
{
    int fds[2] = {out_fd, err_fd};
    int slot;

    if (set_pipes(fds, label, err) < 0)
        return -1;
    pthread_mutex_lock(&p->mu);
    xgrow(&p->ents, &p->cap, p->n + 1, sizeof(*p->ents));
    slot = (int)p->n;
    p->ents[p->n++] = (struct pump_ent){.fd = {out_fd, err_fd},
                                        .log = log,
                                        .label = xstrdup(label),
                                        .keep = keep};
    pthread_mutex_unlock(&p->mu);
    wake(p);
    return slot;
}

int
logpump__restart(struct logpump *p, int slot, int out_fd, int err_fd,
                 struct err *err)
{
    struct pump_ent *e;
    int fds[2] = {out_fd, err_fd};
    int rc = -1;

    pthread_mutex_lock(&p->mu);
    e = &p->ents[slot];
    for (int s = 0; s < 2; s++)
        if (e->fd[s] >= 0) {
            drain(p, e, s);
            if (e->fd[s] >= 0)
                close(e->fd[s]);
            e->fd[s] = -1;
        }
    if (!e->keep || e->log == NULL)
        err_set(err, EINVAL, "%s: its logs were not kept", e->label);
    else if (set_pipes(fds, e->label, err) == 0 &&
             instlog_resume(e->log, err) == 0)
        rc = 0;
    if (rc == 0) {
        e->fd[0] = out_fd;
        e->fd[1] = err_fd;
        e->warned = false;
    } else {
        close(out_fd);
        close(err_fd);
    }
    pthread_mutex_unlock(&p->mu);
    wake(p);
    return rc;
}

void
logpump__destroy(struct logpump **pp, int drain_ms)
{
    struct logpump *p = pp ? *pp : NULL;

    if (p == NULL)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    p->stop_by_ns = now_mono_ns() + (int64_t)drain_ms * 1000000;
    pthread_mutex_unlock(&p->mu);
    wake(p);
    pthread_join(p->thread, NULL);
    for (size_t i = 0; i < p->n; i++) {
        free(p->ents[i].label);
        instlog_destroy(&p->ents[i].log);
    }
    free(p->ents);
    close(p->wake[0]);
    close(p->wake[1]);
    pthread_mutex_destroy(&p->mu);
    free(p->buf);
    free(p);
    *pp = NULL;
}

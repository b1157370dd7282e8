/*
 * dklog.c — a container's output into run.out and run.err (see
 * backend/dklog_int.h).
 *
 * The follower runs docker_container_attach, which calls back once the
 * engine has attached (attached = 1) and returns when the container's
 * streams end; a call that returns before attaching marks the follower
 * failed (attached = -1) and leaves the logs to be copied from the
 * engine. `claimed` says someone has the logs (the follower, or the
 * thread copying them); `done` that they are in place.
 */
#include "backend/dklog_int.h"

#include "docker/docker.h"
#include "base/instlog.h"
#include "base/log.h"
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DKLOG_STACK (256 * 1024)
#define DKLOG_ATTACH_WAIT_S 10

struct dklog {
    struct docker *d;
    struct instlog *log;
    char *label;
    char *id; /* the container, once attached or copied */
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int attached; /* 0 not yet, 1 attached, -1 failed */
    bool claimed;
    bool done;
    bool following; /* thread to join */
    pthread_t thread;
    struct docker_cancel *cancel;
};

/* A piece of the output into the capped files; a write error is kept by
 * the instlog and said when it finishes, so the stream goes on. */
static int
piece(void *arg, int stream, const char *data, size_t len, struct err *err)
{
    (void)instlog_write(arg, stream, data, len, err);
    return 0;
}

static void
put_in_place(struct dklog *l)
{
    struct err e = {0};

    /* The run exits 73/74 with this at its end (err_output_take). */
    if (instlog_finish(l->log, &e) < 0) {
        err_prefix(&e, "cannot write the logs of %s", l->label);
        log_warnx("%s", e.msg);
        err_output_note(&e);
    }
    pthread_mutex_lock(&l->mu);
    l->done = true;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->mu);
}

static void
set_attached(struct dklog *l, int v)
{
    pthread_mutex_lock(&l->mu);
    if (l->attached == 0 || v == 1)
        l->attached = v;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->mu);
}

static void
on_attached(void *arg)
{
    set_attached(arg, 1);
}

static void *
follow_main(void *arg)
{
    struct dklog *l = arg;
    struct err e = {0};
    int rc = docker_container_attach(l->d, l->id, l->cancel, on_attached, l,
                                     piece, l->log, &e);
    bool attached;

    set_attached(l, -1); /* only when it never attached */
    pthread_mutex_lock(&l->mu);
    attached = l->attached == 1;
    pthread_mutex_unlock(&l->mu);
    if (!attached)
        return NULL; /* the engine's logs are copied at the end */
    if (rc < 0 && !docker_cancel_fired(l->cancel))
        log_warnx("%s: logs: %s", l->label, e.msg);
    put_in_place(l);
    return NULL;
}

struct dklog *
dklog__new(struct docker *d, int run_fd, const char *group, int index,
           uint64_t limit, const char *label, struct err *err)
{
    struct instlog *log = instlog_open(run_fd, group, index, limit, err);
    struct dklog *l;

    if (log == NULL)
        return NULL;
    l = xcalloc(1, sizeof(*l));
    l->d = d;
    l->log = log;
    l->label = xstrdup(label);
    l->cancel = docker_cancel_new();
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->cond, NULL);
    return l;
}

/* Wait (bounded) until the follower attached or failed. */
static bool
wait_attached(struct dklog *l)
{
    struct timespec until;
    bool ok;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += DKLOG_ATTACH_WAIT_S;
    pthread_mutex_lock(&l->mu);
    while (l->attached == 0 &&
           pthread_cond_timedwait(&l->cond, &l->mu, &until) == 0)
        ;
    ok = l->attached == 1;
    pthread_mutex_unlock(&l->mu);
    return ok;
}

/* End the follower and wait for it. */
static void
join_follower(struct dklog *l)
{
    docker_cancel_fire(l->cancel);
    pthread_join(l->thread, NULL);
    pthread_mutex_lock(&l->mu);
    l->following = false;
    l->claimed = l->done; /* never attached: the logs are still to copy */
    pthread_mutex_unlock(&l->mu);
}

bool
dklog__attach(struct dklog *l, const char *id)
{
    pthread_attr_t attr;
    int rc;

    if (l == NULL)
        return false;
    l->id = xstrdup(id);
    l->claimed = l->following = true;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, DKLOG_STACK);
    rc = pthread_create(&l->thread, &attr, follow_main, l);
    pthread_attr_destroy(&attr);
    if (rc == 0 && wait_attached(l))
        return true;
    log_warnx("%s: could not attach to its output (%s); its logs are "
              "copied from the engine at its end",
              l->label, rc ? strerror(rc) : "no answer");
    if (rc == 0)
        join_follower(l);
    else
        l->claimed = l->following = false;
    return false;
}

void
dklog__cut(struct dklog *l)
{
    if (l != NULL && l->following)
        join_follower(l);
}

/* Claim the copy: true for the one caller that should make it. */
static bool
claim(struct dklog *l)
{
    bool mine;

    pthread_mutex_lock(&l->mu);
    mine = !l->claimed;
    l->claimed = true;
    pthread_mutex_unlock(&l->mu);
    return mine;
}

static void
copy(struct dklog *l, const char *id)
{
    struct docker_logs_opts o = {0};
    struct err e = {0};

    if (id != NULL &&
        docker_container_logs(l->d, id, &o, piece, l->log, &e) < 0)
        log_warnx("%s: logs: %s", l->label, e.msg);
    put_in_place(l);
}

void
dklog__exited(struct dklog *l, const char *id)
{
    if (l != NULL && claim(l))
        copy(l, id);
}

void
dklog__finish(struct dklog *l, const char *id, int64_t deadline_ns)
{
    if (l == NULL)
        return;
    if (l->following) {
        pthread_mutex_lock(&l->mu);
        while (!l->done && now_mono_ns() < deadline_ns) {
            pthread_mutex_unlock(&l->mu);
            usleep(10000);
            pthread_mutex_lock(&l->mu);
        }
        pthread_mutex_unlock(&l->mu);
        join_follower(l);
    }
    if (claim(l))
        copy(l, id);
    pthread_mutex_lock(&l->mu);
    while (!l->done) /* a copy on the events thread, bounded by its call */
        pthread_cond_wait(&l->cond, &l->mu);
    pthread_mutex_unlock(&l->mu);
}

int
dklog__restart(struct dklog *l, const char *id, struct err *err)
{
    int64_t until = now_mono_ns() + (int64_t)DKLOG_ATTACH_WAIT_S * 1000000000;

    if (l == NULL)
        return 0;
    pthread_mutex_lock(&l->mu);
    while (l->claimed && !l->done && now_mono_ns() < until) {
        pthread_mutex_unlock(&l->mu);
        usleep(10000);
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    if (l->following)
        join_follower(l);
    if (instlog_resume(l->log, err) < 0)
        return -1;
    pthread_mutex_lock(&l->mu);
    l->attached = 0;
    l->claimed = l->done = false;
    pthread_mutex_unlock(&l->mu);
    free(l->id);
    l->id = NULL;
    docker_cancel_destroy(&l->cancel);
    l->cancel = docker_cancel_new();
    (void)dklog__attach(l, id);
    return 0;
}

void
dklog__destroy(struct dklog **lp)
{
    struct dklog *l = lp ? *lp : NULL;

    if (l == NULL)
        return;
    if (l->following)
        join_follower(l);
    instlog_destroy(&l->log);
    docker_cancel_destroy(&l->cancel);
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cond);
    free(l->label);
    free(l->id);
    free(l);
    *lp = NULL;
}

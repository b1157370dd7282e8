/*
 * docker_watch.c — is the engine still there? A run on local:docker must
 * not wait for good on an engine that went away (stopped, restarted,
 * its socket gone) or that stopped answering: the events stream then
 * just stays silent, and a container's end is never heard of.
 *
 * A thread pings the engine every second, each ping bounded, and keeps
 * the last time it answered. It says so once when the engine stops
 * answering and once when it answers again, and when it has not answered
 * for the grace period it calls lost() once, from its thread. Any answer
 * counts, even an HTTP error: only a transport failure or a timeout is
 * "not answering".
 */
#include "docker/docker_int.h"

#include "base/log.h"
#include "ty_units.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DW_INTERVAL_MS 1000
#define DW_PING_MS 5000
#define DW_RECONNECT_STEP_MS 250

struct docker_watch {
    struct docker *d;
    int64_t grace_ms;
    void (*lost)(void *arg, const char *msg);
    void *arg;

    pthread_mutex_t mu; /* guards what follows */
    pthread_cond_t cond;
    bool stop;
    bool up;
    bool lost_said;
    int64_t last_ok_mono_ns;
    int64_t last_ok_wall_ns;
    pthread_t thread;
};

int
docker_watch_grace_ms(int64_t *ms, struct err *err)
{
    const char *v = getenv("TESTYARD_ENGINE_GRACE");
    char why[128];
    int64_t ns;

    *ms = DOCKER_WATCH_GRACE_MS;
    if (v == NULL || v[0] == '\0')
        return 0;
    if (ty__parse_duration(v, &ns, why, sizeof(why)) < 0 || ns < 1000000000)
        return err_set(err, EINVAL,
                       "TESTYARD_ENGINE_GRACE \"%s\": expected a duration of "
                       "at least 1s, like 30s",
                       v);
    *ms = ns / 1000000;
    return 0;
}

/* 0 when the engine answered (whatever it said), -1 when not. */
static int
ping(struct docker_watch *w, struct err *err)
{
    int64_t call_ms = docker_call_timeout_ms(w->d);
    struct docker_req r = {.method = "GET",
                           .path = "/_ping",
                           .unversioned = true,
                           .body_fd = -1,
                           .timeout_ms =
                               call_ms < DW_PING_MS ? call_ms : DW_PING_MS};
    struct docker_resp resp;
    int rc = docker__call(w->d, &r, &resp, err);

    docker__resp_release(&resp);
    if (rc < 0 && err->code != ECANCELED && err->status != EXIT_UNAVAILABLE)
        rc = 0; /* it answered, with an error */
    return rc;
}

static void
since_text(const struct docker_watch *w, char *buf, size_t size)
{
    char when[40], dur[32];

    time_rfc3339(w->last_ok_wall_ns, when, sizeof(when));
    ty__format_duration(now_mono_ns() - w->last_ok_mono_ns, dur, sizeof(dur));
    snprintf(buf, size, "%s, %s ago", when, dur);
}

/* Called with mu held; may drop it to call lost(). */
static void
note(struct docker_watch *w, bool ok, const struct err *e)
{
    char since[80], grace[32], msg[512];

    if (ok && !w->up)
        log_warnx("the Docker engine at %s answers again", docker_host(w->d));
    if (ok) {
        w->up = true;
        w->last_ok_mono_ns = now_mono_ns();
        w->last_ok_wall_ns = now_wall_ns();
        return;
    }
    if (w->up) {
        ty__format_duration(w->grace_ms * 1000000, grace, sizeof(grace));
        log_warnx("%s; waiting %s for the engine to come back", e->msg, grace);
        w->up = false;
    }
    if (w->lost_said ||
        now_mono_ns() - w->last_ok_mono_ns < w->grace_ms * 1000000)
        return;
    w->lost_said = true;
    since_text(w, since, sizeof(since));
    snprintf(msg, sizeof(msg),
             "the Docker engine at %s has not answered since %s",
             docker_host(w->d), since);
    pthread_mutex_unlock(&w->mu);
    w->lost(w->arg, msg);
    pthread_mutex_lock(&w->mu);
}

static void
sleep_interval(struct docker_watch *w)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += DW_INTERVAL_MS / 1000;
    ts.tv_nsec += (DW_INTERVAL_MS % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (!w->stop &&
           pthread_cond_timedwait(&w->cond, &w->mu, &ts) != ETIMEDOUT)
        ;
}

static void *
watch_main(void *arg)
{
    struct docker_watch *w = arg;

    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        struct err e = {0};
        bool ok;

        pthread_mutex_unlock(&w->mu);
        ok = ping(w, &e) == 0;
        pthread_mutex_lock(&w->mu);
        if (w->stop)
            break;
        note(w, ok, &e);
        sleep_interval(w);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct docker_watch *
docker_watch_new(struct docker *d, int64_t grace_ms,
                 void (*lost)(void *arg, const char *msg), void *arg,
                 struct err *err)
{
    struct docker_watch *w = xcalloc(1, sizeof(*w));
    pthread_condattr_t ca;
    int rc;

    w->d = d;
    w->grace_ms = grace_ms;
    w->lost = lost;
    w->arg = arg;
    w->up = true;
    w->last_ok_mono_ns = now_mono_ns();
    w->last_ok_wall_ns = now_wall_ns();
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    rc = pthread_create(&w->thread, NULL, watch_main, w);
    if (rc != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return err_sys(err, rc, "engine watch thread"), NULL;
    }
    return w;
}

void
docker_watch_destroy(struct docker_watch **wp)
{
    struct docker_watch *w = *wp;

    if (w == NULL)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = true;
    pthread_cond_broadcast(&w->cond);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mu);
    free(w);
    *wp = NULL;
}

int64_t
docker_watch_down_since(struct docker_watch *w)
{
    int64_t since;

    pthread_mutex_lock(&w->mu);
    since = w->up ? 0 : w->last_ok_wall_ns;
    pthread_mutex_unlock(&w->mu);
    return since;
}

struct docker *
docker_reconnect(const char *host, int64_t within_ms)
{
    int64_t until = now_mono_ns() + within_ms * 1000000;

    for (;;) {
        int64_t left = (until - now_mono_ns()) / 1000000;
        struct err e = {0};
        struct docker *d;

        if (left <= 0)
            return NULL;
        if ((d = docker_new_within(host, left, &e)) != NULL)
            return d;
        usleep(DW_RECONNECT_STEP_MS * 1000);
    }
}

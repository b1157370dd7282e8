/*
 * test_docker_watch.c — giving up on an engine that went away: the watch
 * calls lost() once the fake engine has stopped answering pings for the
 * grace period (and not while it answers, even with errors), and sees it
 * come back;
 * docker_abort() ends a stream in progress and fails every later call at
 * once; docker_reconnect() is bounded; TESTYARD_ENGINE_GRACE is read.
 */
#include "docker/docker.h"
#include "fakedocker.h"
#include "fakedocker_client.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lost {
    pthread_mutex_t mu;
    int calls;
    int64_t at_ns;
    char msg[512];
};

static void
on_lost(void *arg, const char *msg)
{
    struct lost *l = arg;

    pthread_mutex_lock(&l->mu);
    l->calls++;
    l->at_ns = now_mono_ns();
    snprintf(l->msg, sizeof(l->msg), "%s", msg);
    pthread_mutex_unlock(&l->mu);
}

static int
lost_calls(struct lost *l)
{
    int n;

    pthread_mutex_lock(&l->mu);
    n = l->calls;
    pthread_mutex_unlock(&l->mu);
    return n;
}

static struct docker *
quick_client(struct fakedocker *f)
{
    setenv("TESTYARD_DOCKER_TIMEOUT", "1s", 1);
    return fakedocker_client(f);
}

static void
t_watch_lost(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = quick_client(f);
    struct lost l = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct err err = {0};
    struct docker_watch *w = docker_watch_new(d, 2000, on_lost, &l, &err);
    int64_t t0;

    CHECK_MSG(w != NULL, "%s", err.msg);
    usleep(2500 * 1000); /* longer than the grace: it answers */
    CHECK_EQ_INT(lost_calls(&l), 0);
    CHECK_EQ_INT(docker_watch_down_since(w), 0);
    fakedocker_set_silent(f, true);
    t0 = now_mono_ns();
    for (int i = 0; i < 100 && lost_calls(&l) == 0; i++)
        usleep(100 * 1000);
    CHECK_EQ_INT(lost_calls(&l), 1);
    CHECK_CONTAINS(l.msg, fakedocker_host(f));
    CHECK_CONTAINS(l.msg, "has not answered since");
    CHECK_MSG(l.at_ns - t0 >= 1000000000LL && l.at_ns - t0 < 6000000000LL,
              "lost %lld ms after the engine went silent",
              (long long)((l.at_ns - t0) / 1000000));
    CHECK(docker_watch_down_since(w) > 0);
    usleep(1500 * 1000);
    CHECK_EQ_INT(lost_calls(&l), 1); /* once */
    fakedocker_set_silent(f, false); /* back: it says so */
    for (int i = 0; i < 50 && docker_watch_down_since(w) > 0; i++)
        usleep(100 * 1000);
    CHECK_EQ_INT(docker_watch_down_since(w), 0);
    docker_watch_destroy(&w);
    CHECK(w == NULL);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

/* An engine that answers with an error is there. */
static void
t_watch_http_error_is_an_answer(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = quick_client(f);
    struct lost l = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct err err = {0};
    struct docker_watch *w;

    fakedocker_answer(f, "GET", "/_ping", 500, "{\"message\":\"busy\"}");
    w = docker_watch_new(d, 1000, on_lost, &l, &err);
    usleep(2500 * 1000);
    CHECK_EQ_INT(lost_calls(&l), 0);
    CHECK_EQ_INT(docker_watch_down_since(w), 0);
    docker_watch_destroy(&w);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

struct stream {
    struct docker *d;
    int rc;
    struct err err;
};

static int
ignore(void *arg, const struct docker_event *ev)
{
    (void)arg;
    (void)ev;
    return 0;
}

static void *
events_thread(void *arg)
{
    struct stream *s = arg;
    struct docker_events_opts o = {0};

    s->rc = docker_events(s->d, &o, ignore, NULL, &s->err);
    return NULL;
}

static void
t_abort(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct stream s = {.d = fakedocker_client(f), .rc = 99};
    struct err err = {0};
    pthread_t th;
    int64_t t0;

    fakedocker_route(f, &(struct fakedocker_route){.method = "GET",
                                                   .path = "/v1.41/events",
                                                   .status = 200,
                                                   .hold = true});
    pthread_create(&th, NULL, events_thread, &s);
    CHECK(fakedocker_wait_count(f, 3, 5000));
    usleep(100 * 1000);
    CHECK(!docker_aborted(s.d));
    t0 = now_mono_ns();
    docker_abort(s.d);
    pthread_join(th, NULL);
    CHECK_EQ_INT(s.rc, 0); /* a canceled stream ends cleanly */
    CHECK(now_mono_ns() - t0 < 2000000000LL);
    CHECK(docker_aborted(s.d));
    t0 = now_mono_ns();
    CHECK_EQ_INT(docker_ping(s.d, &err), -1);
    CHECK_EQ_INT(err.code, ECANCELED);
    CHECK(now_mono_ns() - t0 < 500000000LL);
    docker_destroy(&s.d);
    fakedocker_destroy(&f);
}

static void
t_reconnect_bounded(void)
{
    struct fakedocker *f = fakedocker_new(false);
    int64_t t0 = now_mono_ns();
    struct docker *d = docker_reconnect("unix:///nonexistent/x.sock", 1000);

    CHECK(d == NULL);
    CHECK(now_mono_ns() - t0 < 3000000000LL);
    d = docker_reconnect(fakedocker_host(f), 1000);
    CHECK(d != NULL);
    docker_destroy(&d);
    /* an engine that accepts and never answers: bounded too */
    fakedocker_set_silent(f, true);
    t0 = now_mono_ns();
    d = docker_reconnect(fakedocker_host(f), 1000);
    CHECK(d == NULL);
    CHECK_MSG(now_mono_ns() - t0 < 3000000000LL, "took %lld ms",
              (long long)((now_mono_ns() - t0) / 1000000));
    fakedocker_destroy(&f);
}

static void
t_grace_env(void)
{
    struct err err = {0};
    int64_t ms = 0;

    unsetenv("TESTYARD_ENGINE_GRACE");
    CHECK_EQ_INT(docker_watch_grace_ms(&ms, &err), 0);
    CHECK_EQ_INT(ms, DOCKER_WATCH_GRACE_MS);
    setenv("TESTYARD_ENGINE_GRACE", "1m30s", 1);
    CHECK_EQ_INT(docker_watch_grace_ms(&ms, &err), 0);
    CHECK_EQ_INT(ms, 90000);
    setenv("TESTYARD_ENGINE_GRACE", "100ms", 1);
    CHECK_EQ_INT(docker_watch_grace_ms(&ms, &err), -1);
    CHECK_CONTAINS(err.msg, "TESTYARD_ENGINE_GRACE \"100ms\"");
    setenv("TESTYARD_ENGINE_GRACE", "forever", 1);
    CHECK_EQ_INT(docker_watch_grace_ms(&ms, &err), -1);
    unsetenv("TESTYARD_ENGINE_GRACE");
}

static const struct th_case cases[] = {
    {"watch_lost", t_watch_lost},
    {"watch_http_error_is_an_answer", t_watch_http_error_is_an_answer},
    {"abort", t_abort},
    {"reconnect_bounded", t_reconnect_bounded},
    {"grace_env", t_grace_env},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

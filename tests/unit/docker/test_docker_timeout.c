/*
 * test_docker_timeout.c — no call of the Docker client waits for good on
 * an engine that accepted the connection and never answers: a short call
 * (inspect, kill, remove) fails with ETIMEDOUT once TESTYARD_DOCKER_TIMEOUT
 * has passed, and so does a stream (events, wait) whose answer's headers
 * never come. Each case bounds itself well below the harness's deadline.
 */
#include "docker/docker.h"
#include "fakedocker.h"
#include "fakedocker_client.h"
#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NEVER_MS 600000 /* the fake engine's "never": ten minutes */

/* A client of f whose calls are bounded by 1 s. */
static struct docker *
quick_client(struct fakedocker *f)
{
    setenv("TESTYARD_DOCKER_TIMEOUT", "1s", 1);
    return fakedocker_client(f);
}

static void
silent(struct fakedocker *f, const char *method, const char *path)
{
    fakedocker_route(f, &(struct fakedocker_route){.method = method,
                                                   .path = path,
                                                   .status = 200,
                                                   .delay_ms = NEVER_MS});
}

static int64_t
elapsed_ms(int64_t since_ns)
{
    return (now_mono_ns() - since_ns) / 1000000;
}

static void
t_inspect_no_answer(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = quick_client(f);
    struct err err = {0};
    int64_t t0 = now_mono_ns();
    cJSON *j;

    silent(f, "GET", "/v1.41/containers/*/json");
    j = docker_container_inspect(d, "c1", &err);
    CHECK(j == NULL);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK_EQ_INT(err.status, EXIT_UNAVAILABLE);
    CHECK_CONTAINS(err.msg, fakedocker_host(f));
    CHECK_MSG(elapsed_ms(t0) < 5000, "took %lld ms", (long long)elapsed_ms(t0));
    cJSON_Delete(j);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
t_kill_and_remove_no_answer(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = quick_client(f);
    struct err err = {0};
    int64_t t0 = now_mono_ns();

    silent(f, "POST", "/v1.41/containers/*/kill");
    silent(f, "DELETE", "/v1.41/containers/*");
    CHECK_EQ_INT(docker_container_kill(d, "c1", "SIGTERM", &err), -1);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK_EQ_INT(docker_container_remove(d, "c1", true, &err), -1);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK_MSG(elapsed_ms(t0) < 8000, "took %lld ms", (long long)elapsed_ms(t0));
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static int
count_event(void *arg, const struct docker_event *ev)
{
    (void)ev;
    (*(int *)arg)++;
    return 0;
}

static void
t_events_no_headers(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = quick_client(f);
    struct docker_events_opts o = {0};
    struct err err = {0};
    int64_t t0 = now_mono_ns();
    int n = 0;

    silent(f, "GET", "/v1.41/events");
    CHECK_EQ_INT(docker_events(d, &o, count_event, &n, &err), -1);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK_EQ_INT(n, 0);
    CHECK_MSG(elapsed_ms(t0) < 5000, "took %lld ms", (long long)elapsed_ms(t0));
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

static void
t_wait_no_headers(void)
{
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = quick_client(f);
    struct err err = {0};
    int64_t t0 = now_mono_ns();
    int code = -1;

    silent(f, "POST", "/v1.41/containers/*/wait");
    CHECK_EQ_INT(docker_container_wait(d, "c1", DOCKER_WAIT_NOT_RUNNING, NULL,
                                       &code, &err),
                 -1);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK_MSG(elapsed_ms(t0) < 5000, "took %lld ms", (long long)elapsed_ms(t0));
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

struct canceler {
    struct docker_cancel *c;
    int after_ms;
};

static void *
cancel_later(void *arg)
{
    struct canceler *k = arg;

    usleep((useconds_t)k->after_ms * 1000);
    docker_cancel_fire(k->c);
    return NULL;
}

/* A stream that did answer is not cut by the call timeout: it lasts
 * until its token fires. */
static void
t_stream_outlives_timeout(void)
{
    static const char ev[] =
        "{\"Type\":\"container\",\"Action\":\"die\",\"Actor\":"
        "{\"ID\":\"c1\"},\"time\":1}\n";
    struct fakedocker *f = fakedocker_new(false);
    struct docker *d = quick_client(f);
    struct canceler k = {.c = docker_cancel_new(), .after_ms = 2500};
    struct docker_events_opts o = {.cancel = k.c};
    struct err err = {0};
    int64_t t0 = now_mono_ns();
    pthread_t th;
    int n = 0;

    fakedocker_route(f, &(struct fakedocker_route){.method = "GET",
                                                   .path = "/v1.41/events",
                                                   .status = 200,
                                                   .body = ev,
                                                   .hold = true});
    pthread_create(&th, NULL, cancel_later, &k);
    CHECK_EQ_INT(docker_events(d, &o, count_event, &n, &err), 0);
    pthread_join(th, NULL);
    CHECK_EQ_INT(n, 1);
    CHECK_MSG(elapsed_ms(t0) >= 2400, "ended after %lld ms",
              (long long)elapsed_ms(t0));
    docker_cancel_destroy(&k.c);
    docker_destroy(&d);
    fakedocker_destroy(&f);
}

/* A malformed bound is one clear error, not a silent default. */
static void
t_bad_timeout(void)
{
    struct err err = {0};
    struct docker *d;

    setenv("TESTYARD_DOCKER_TIMEOUT", "soon", 1);
    d = docker_new("unix:///nonexistent/docker.sock", &err);
    CHECK(d == NULL);
    CHECK_CONTAINS(err.msg, "TESTYARD_DOCKER_TIMEOUT \"soon\"");
    unsetenv("TESTYARD_DOCKER_TIMEOUT");
}

static const struct th_case cases[] = {
    {"inspect_no_answer", t_inspect_no_answer},
    {"kill_and_remove_no_answer", t_kill_and_remove_no_answer},
    {"events_no_headers", t_events_no_headers},
    {"wait_no_headers", t_wait_no_headers},
    {"stream_outlives_timeout", t_stream_outlives_timeout},
    {"bad_timeout", t_bad_timeout},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

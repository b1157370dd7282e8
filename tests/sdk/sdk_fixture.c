/*
 * sdk_fixture.c — a sync service on a thread of the test process and SDK
 * handles connected to it, for the SDK's unit tests (see sdk_fixture.h).
 */
#include "sdk_fixture.h"

#include "th.h"
#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

struct sdk_fixture S;
struct syncsvc_bounds svc_bounds;

/* ---- the service on its own thread ------------------------------------- */

static void
on_event(void *arg, int inst, const cJSON *ev)
{
    const cJSON *err = cJSON_GetObjectItem(ev, "error");
    size_t n = strlen(S.types);

    (void)arg;
    (void)inst;
    snprintf(S.types + n, sizeof(S.types) - n, "%s,",
             cJSON_GetObjectItem(ev, "type")->valuestring);
    if (cJSON_IsString(err))
        snprintf(S.error, sizeof(S.error), "%s", err->valuestring);
}

static void
on_hello(void *arg, int inst)
{
    (void)arg;
    (void)inst;
    S.hellos++;
}

static const struct syncsvc_observer observer = {.on_event = on_event,
                                                 .on_hello = on_hello};

static void *
svc_loop(void *arg)
{
    struct err err;

    (void)arg;
    for (;;) {
        zmq_pollitem_t it = {syncsvc_socket(S.svc), 0, ZMQ_POLLIN, 0};
        int64_t next = syncsvc_next_deadline_ms(S.svc);

        zmq_poll(&it, 1, 5);
        pthread_mutex_lock(&S.mu);
        if (S.stop) {
            pthread_mutex_unlock(&S.mu);
            return NULL;
        }
        syncsvc_handle(S.svc, &err);
        if (next >= 0 && next <= now_mono_ns() / 1000000)
            syncsvc_tick(S.svc);
        if (S.exit_how != NULL) {
            syncsvc_instance_exited(S.svc, S.exit_inst, S.exit_how);
            free(S.exit_how);
            S.exit_how = NULL;
        }
        pthread_mutex_unlock(&S.mu);
    }
}

void
svc_start_at(int n, const char *bind)
{
    struct syncsvc_instance *inst = xcalloc((size_t)n, sizeof(*inst));
    char **dirs = xcalloc((size_t)n, sizeof(char *));
    struct syncsvc_config cfg = {0};
    struct err err = {0};

    memset(&S, 0, sizeof(S));
    pthread_mutex_init(&S.mu, NULL);
    snprintf(S.dir, sizeof(S.dir), "%s", th_tmpdir());
    snprintf(S.board, sizeof(S.board), "%s/.sync", S.dir);
    for (int i = 0; i < n; i++) {
        dirs[i] = xasprintf("%s/g/%d", S.dir, i);
        inst[i] = (struct syncsvc_instance){"g", i, dirs[i], 0};
    }
    cfg.board_dir = S.board;
    cfg.run_id = RUN;
    cfg.secret = SDK_SECRET;
    cfg.bounds = svc_bounds;
    cfg.run_dir = S.dir;
    cfg.bind = bind;
    cfg.instances = inst;
    cfg.ninstances = (size_t)n;
    cfg.observer = &observer;
    S.svc = syncsvc_new(&cfg, &err);
    for (int i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
    free(inst);
    if (S.svc == NULL)
        th_fail(__FILE__, __LINE__, "syncsvc_new: %s", err.msg);
    if (S.svc == NULL)
        th_skip("no service");
    pthread_create(&S.th, NULL, svc_loop, NULL);
}

void
svc_start(int n)
{
    svc_start_at(n, "tcp://127.0.0.1:0");
}

void
svc_stop(void)
{
    pthread_mutex_lock(&S.mu);
    S.stop = true;
    pthread_mutex_unlock(&S.mu);
    pthread_join(S.th, NULL);
    syncsvc_destroy(&S.svc);
    free(S.exit_how);
    svc_bounds = (struct syncsvc_bounds){0}; /* the next case starts afresh */
}

/* The waiters answered on the release board, summed over barriers.jsonl. */
int64_t
on_board(void)
{
    cleanup_free char *path = path_join(S.dir, "barriers.jsonl");
    cleanup_free char *log = file_read(path, 1u << 20, NULL, &(struct err){0});
    int64_t sum = 0;

    for (char *p = log; p != NULL && (p = strstr(p, "\"on_board\":")); p++)
        sum += strtoll(p + 11, NULL, 10);
    return sum;
}

void
svc_exit_instance(int i, const char *how)
{
    pthread_mutex_lock(&S.mu);
    S.exit_inst = i;
    S.exit_how = xstrdup(how);
    pthread_mutex_unlock(&S.mu);
}

void
set_env(int i, int n)
{
    char buf[64];

    setenv("TEST_RUN", RUN, 1);
    setenv("TEST_PLAN", "sdkplan", 1);
    setenv("TEST_GROUP_ID", "g", 1);
    snprintf(buf, sizeof(buf), "%d", i);
    setenv("TESTYARD_GROUP_INDEX", buf, 1);
    setenv("TESTYARD_GLOBAL_INDEX", buf, 1);
    snprintf(buf, sizeof(buf), "%d", n);
    setenv("TEST_INSTANCE_COUNT", buf, 1);
    setenv("TESTYARD_SYNC_URL", syncsvc_endpoint(S.svc), 1);
    setenv("TESTYARD_SYNC_SECRET", SDK_SECRET, 1);
    setenv("TESTYARD_SYNC_BOARD", S.board[0] ? S.board : "/nonexistent", 1);
    setenv("TEST_OUTPUTS_PATH", S.dir, 1);
    unsetenv("TESTYARD_DEADLINE_MS");
    unsetenv("TESTYARD_PARAMS");
    unsetenv("TEST_INSTANCE_PARAMS");
    unsetenv("SYNC_SERVICE_HOST");
}

/* A connected handle for instance i of n. */
struct ty *
handle(int i, int n)
{
    char why[256];
    struct ty *ty;
    int rc;

    set_env(i, n);
    ty = ty__new_from_env(why, sizeof(why));
    CHECK_MSG(ty != NULL, "%s", why);
    if (ty == NULL)
        th_skip("no handle");
    rc = ty__sync_connect(ty);
    CHECK_MSG(rc == 0, "connect: %d %s", rc, ty_errmsg(ty));
    return ty;
}

void *
wait_thread(void *p)
{
    struct wait_arg *a = p;
    int64_t t0 = ty__now_ms();

    a->rc = a->group
                ? ty_signal_and_wait_in(a->ty, a->state, a->group, a->target,
                                        a->timeout_ms)
                : ty_signal_and_wait(a->ty, a->state, a->target, a->timeout_ms);
    a->elapsed_ms = ty__now_ms() - t0;
    snprintf(a->msg, sizeof(a->msg), "%s", ty_errmsg(a->ty));
    return NULL;
}

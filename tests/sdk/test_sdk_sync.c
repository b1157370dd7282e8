/*
 * test_sdk_sync.c — the SDK against a real sync service running on a thread
 * of the test process: barriers across handles and threads, timeouts, a
 * barrier failing when an instance ends, cursors, one handle used by
 * several threads at once, uploads and appends, fork() in a plan, and
 * ty_main end to end (this program re-runs itself as a plan with
 * "--plan": ok, fail, unknown case, crash).
 */
#include "sdk_fixture.h"
#include "th.h"
#include "th_proc.h"
#include "ty_board.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

/* ---- barriers ---------------------------------------------------------- */

static void
t_barrier_threads(void)
{
    enum { N = 8 };
    struct ty *ty[N];
    struct wait_arg a[N];
    pthread_t th[N];
    bool seen[N + 1] = {false};

    svc_start(N);
    for (int i = 0; i < N; i++)
        ty[i] = handle(i, N);
    for (int i = 0; i < N; i++) {
        a[i] = (struct wait_arg){ty[i], "ready", N, 10000, 0, 0, "", NULL};
        pthread_create(&th[i], NULL, wait_thread, &a[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(a[i].rc >= 1 && a[i].rc <= N, "rc %lld: %s",
                  (long long)a[i].rc, a[i].msg);
        if (a[i].rc >= 1 && a[i].rc <= N) {
            CHECK(!seen[a[i].rc]);
            seen[a[i].rc] = true;
        }
    }
    CHECK_EQ_INT(ty_barrier(ty[0], "ready", N, 1000), 0);
    CHECK_EQ_INT(ty_signal_entry(ty[1], "ready"), N + 1);
    CHECK_EQ_INT(ty_barrier(ty[0], "ready", 0, 1000), -EINVAL);
    for (int i = 0; i < N; i++)
        ty__destroy(&ty[i]);
    svc_stop();
    /* all but the last to signal were answered on the release board */
    CHECK_EQ_INT(on_board(), N - 1);
}

/* ty_signal_and_wait_in / ty_barrier_in: the group travels with the
 * request; an unknown or missing group is refused. */
static void
t_barrier_in_group(void)
{
    struct ty *ty[2];
    struct wait_arg a;
    pthread_t th;
    int64_t seq;

    svc_start(3);
    ty[0] = handle(0, 3);
    ty[1] = handle(1, 3);
    a = (struct wait_arg){ty[0], "go", 3, 30000, 0, 0, "", "g"};
    pthread_create(&th, NULL, wait_thread, &a);
    seq = ty_signal_and_wait_in(ty[1], "two", "g", 1, 5000);
    CHECK_EQ_INT(seq, 1);
    CHECK_EQ_INT(ty_barrier_in(ty[1], "two", "g", 1, 5000), 0);
    CHECK_EQ_INT(ty_barrier_in(ty[1], "two", "nope", 1, 5000), -EINVAL);
    CHECK_CONTAINS(ty_errmsg(ty[1]), "the run has no group \"nope\"");
    CHECK_EQ_INT(ty_signal_and_wait_in(ty[1], "two", NULL, 1, 5000), -EINVAL);
    usleep(100 * 1000);
    svc_exit_instance(2, "exited with status 1");
    pthread_join(th, NULL);
    CHECK_EQ_INT(a.rc, -EPIPE);
    CHECK_CONTAINS(a.msg, "barrier \"go\" in group g can no longer reach 3");
    for (int i = 0; i < 2; i++)
        ty__destroy(&ty[i]);
    svc_stop();
}

static void
t_barrier_timeout(void)
{
    struct ty *ty;
    int64_t t0;

    svc_start(2);
    ty = handle(0, 2);
    t0 = ty__now_ms();
    CHECK_EQ_INT(ty_barrier(ty, "never", 2, 200), -ETIMEDOUT);
    CHECK(ty__now_ms() - t0 >= 190);
    CHECK_CONTAINS(ty_errmsg(ty), "timed out at 0 of 2");
    ty__destroy(&ty);
    svc_stop();
}

static void
t_barrier_fails_on_exit(void)
{
    struct ty *ty[2];
    struct wait_arg a[2];
    pthread_t th[2];

    svc_start(3);
    for (int i = 0; i < 2; i++) {
        ty[i] = handle(i, 3);
        a[i] = (struct wait_arg){ty[i], "go", 3, 30000, 0, 0, "", NULL};
        pthread_create(&th[i], NULL, wait_thread, &a[i]);
    }
    usleep(200 * 1000);
    svc_exit_instance(2, "exited with status 137 (oom)");
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(a[i].rc, -EPIPE);
        CHECK_CONTAINS(a[i].msg, "g/2 exited with status 137 (oom)");
        CHECK_MSG(a[i].elapsed_ms < 1500, "took %lld ms",
                  (long long)a[i].elapsed_ms);
    }
    for (int i = 0; i < 2; i++)
        ty__destroy(&ty[i]);
    svc_stop();
}

/* ---- topics ------------------------------------------------------------ */

struct pub_arg {
    struct ty *ty;
    const char *topic;
    int count;
    int delay_ms;
};

static void *
pub_thread(void *p)
{
    struct pub_arg *a = p;
    char json[64];

    usleep((useconds_t)a->delay_ms * 1000);
    for (int i = 0; i < a->count; i++) {
        snprintf(json, sizeof(json), "{\"i\":%d}", i);
        if (ty_publish(a->ty, a->topic, json) < 1)
            break;
    }
    return NULL;
}

static void
t_pubsub(void)
{
    struct ty *a, *b;
    struct ty_sub *sub;
    struct pub_arg pa;
    pthread_t th;
    char *json = NULL;
    int64_t seq = 0;

    svc_start(2);
    a = handle(0, 2);
    b = handle(1, 2);
    CHECK_EQ_INT(ty_publish(a, "addrs", "\"10.0.0.1:4001\""), 1);
    CHECK_EQ_INT(ty_publish(a, "addrs", "{\"port\":4002}"), 2);
    CHECK_EQ_INT(ty_publish(a, "addrs", "not json"), -EINVAL);
    sub = ty_subscribe(b, "addrs", 1);
    CHECK(sub != NULL);
    CHECK_EQ_INT(ty_sub_next(sub, &json, &seq, 1000), 0);
    CHECK_EQ_STR(json, "\"10.0.0.1:4001\"");
    CHECK_EQ_INT(seq, 1);
    free(json);
    CHECK_EQ_INT(ty_sub_next(sub, &json, &seq, 1000), 0);
    CHECK_EQ_STR(json, "{\"port\":4002}");
    free(json);
    CHECK_EQ_INT(ty_sub_next(sub, &json, &seq, 100), -ETIMEDOUT);
    /* Blocked in next, woken by a publish from another thread. */
    pa = (struct pub_arg){a, "addrs", 1, 200};
    pthread_create(&th, NULL, pub_thread, &pa);
    CHECK_EQ_INT(ty_sub_next(sub, &json, &seq, 5000), 0);
    CHECK_EQ_STR(json, "{\"i\":0}");
    CHECK_EQ_INT(seq, 3);
    free(json);
    pthread_join(th, NULL);
    ty_sub_close(&sub);
    CHECK(sub == NULL);
    /* A late subscriber from the middle. */
    sub = ty_subscribe(a, "addrs", 2);
    CHECK_EQ_INT(ty_sub_next(sub, &json, &seq, 1000), 0);
    CHECK_EQ_INT(seq, 2);
    free(json);
    ty_sub_close(&sub);
    ty__destroy(&a);
    ty__destroy(&b);
    svc_stop();
}

/* ---- one handle, several threads --------------------------------------- */

struct sub_arg {
    struct ty *ty;
    int rc;
    char *json;
};

static void *
sub_thread(void *p)
{
    struct sub_arg *a = p;
    struct ty_sub *sub = ty_subscribe(a->ty, "wake", 1);

    a->rc = sub ? ty_sub_next(sub, &a->json, NULL, 10000) : -1;
    ty_sub_close(&sub);
    return NULL;
}

struct up_arg {
    struct ty *ty;
    char *data;
    size_t len;
    int rc;
};

static void *
upload_thread(void *p)
{
    struct up_arg *a = p;

    a->rc = ty__output_file(a->ty, "big.bin", a->data, a->len);
    return NULL;
}

static void
t_one_handle_many_threads(void)
{
    struct ty *ty, *other;
    struct sub_arg sa = {0};
    struct up_arg ua = {0};
    struct pub_arg pa;
    struct wait_arg wa;
    pthread_t ts, tu, tp, tw;
    char *path, *got;
    size_t len;

    svc_start(2);
    ty = handle(0, 2);
    other = handle(1, 2);
    sa.ty = ty;
    pthread_create(&ts, NULL, sub_thread, &sa);
    wa = (struct wait_arg){ty, "both", 2, 10000, 0, 0, "", NULL};
    pthread_create(&tw, NULL, wait_thread, &wa);
    ua = (struct up_arg){ty, xmalloc(3u << 20), 3u << 20, 0};
    for (size_t i = 0; i < ua.len; i++)
        ua.data[i] = (char)(i % 251);
    pthread_create(&tu, NULL, upload_thread, &ua);
    pa = (struct pub_arg){ty, "noise", 200, 0};
    pthread_create(&tp, NULL, pub_thread, &pa);
    pthread_join(tp, NULL);
    pthread_join(tu, NULL);
    CHECK_MSG(ua.rc == 0, "upload: %d", ua.rc);
    CHECK_EQ_INT(ty_signal_entry(other, "both"), 2);
    pthread_join(tw, NULL);
    CHECK_EQ_INT(wa.rc, 1);
    CHECK_EQ_INT(ty_publish(other, "wake", "true"), 1);
    pthread_join(ts, NULL);
    CHECK_EQ_INT(sa.rc, 0);
    CHECK_EQ_STR(sa.json, "true");
    free(sa.json);
    path = xasprintf("%s/g/0/big.bin", S.dir);
    got = file_read(path, 8u << 20, &len, &(struct err){0});
    CHECK_EQ_INT(len, ua.len);
    CHECK(got != NULL && memcmp(got, ua.data, ua.len) == 0);
    free(got);
    free(path);
    free(ua.data);
    ty__destroy(&ty);
    ty__destroy(&other);
    svc_stop();
}

/* ---- outputs ----------------------------------------------------------- */

static void
t_outputs(void)
{
    struct ty *ty;
    char *path, *got;
    size_t len;

    svc_start(1);
    ty = handle(0, 1);
    CHECK_EQ_INT(ty__output_file(ty, "sub/x.json", "{}", 2), 0);
    CHECK_EQ_INT(ty__output_file(ty, "empty.bin", "", 0), 0);
    CHECK_EQ_INT(ty__output_file(ty, "../escape", "x", 1), -EINVAL);
    CHECK_EQ_INT(ty__output_append(ty, "results.out", "{\"a\":1}\n", 8), 0);
    CHECK_EQ_INT(ty__output_append(ty, "results.out", "{\"b\":2}", 7), 0);
    path = xasprintf("%s/g/0/results.out", S.dir);
    got = file_read(path, 1 << 20, &len, &(struct err){0});
    CHECK_EQ_STR(got, "{\"a\":1}\n{\"b\":2}\n");
    free(got);
    free(path);
    path = xasprintf("%s/g/0/sub/x.json", S.dir);
    CHECK(path_exists(path));
    free(path);
    path = xasprintf("%s/g/0/empty.bin", S.dir);
    CHECK(path_exists(path));
    free(path);
    ty__destroy(&ty);
    svc_stop();
}

/* ---- fork -------------------------------------------------------------- */

static void
t_fork_in_plan(void)
{
    struct ty *ty;
    int status = -1;
    pid_t pid;

    svc_start(2);
    ty = handle(0, 2);
    CHECK_EQ_INT(ty_signal_entry(ty, "before"), 1);
    pid = fork();
    if (pid == 0) {
        int ok = ty_publish(ty, "t", "1") == -ENOTCONN &&
                 strstr(ty_errmsg(ty), "forked child") != NULL &&
                 ty_subscribe(ty, "t", 1) == NULL;

        ty__destroy(&ty);
        /* Exec, as plans usually do after fork: under valgrind an _exit
         * here would report the other threads' allocations as lost. */
        execl(ok ? "/bin/true" : "/bin/false", "child", (char *)NULL);
        _exit(2);
    }
    CHECK(pid > 0);
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d",
              status);
    CHECK_EQ_INT(ty_signal_entry(ty, "before"), 2);
    CHECK_EQ_INT(ty_publish(ty, "t", "2"), 1);
    CHECK_EQ_INT(ty_barrier(ty, "before", 2, 1000), 0);
    ty__destroy(&ty);
    svc_stop();
}

/* ---- ty_main end to end ------------------------------------------------- */

static int
plan_ok(struct ty *ty)
{
    ty_message(ty, "hello %d", 1);
    ty_stage_start(ty, "warmup");
    ty_stage_end(ty, "warmup");
    if (ty_signal_and_wait(ty, "p", 1, 5000) != 1)
        return ty_fail(ty, "signal_and_wait: %s", ty_errmsg(ty));
    if (ty__output_file(ty, "out.bin", "abc", 3) != 0)
        return ty_fail(ty, "output: %s", ty_errmsg(ty));
    return 0;
}

static int
plan_fail(struct ty *ty)
{
    return ty_fail(ty, "boom %d", 42);
}

static int
plan_crash(struct ty *ty)
{
    (void)ty;
    raise(SIGSEGV);
    return 0;
}

static const struct ty_case plan_cases[] = {
    {"ok", plan_ok},
    {"fail", plan_fail},
    {"crash", plan_crash},
    {NULL, NULL},
};

/* Run this program as a plan with TEST_CASE=name; returns its wait status
 * and its stdout in *out (caller frees). */
static int
run_plan(const char *name, char **out)
{
    char *path = xasprintf("%s/stdout", S.dir);
    int status = -1;
    pid_t pid;

    set_env(0, 1);
    setenv("TEST_CASE", name, 1);
    pid = fork();
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        char *err = xasprintf("%s/stderr", S.dir);
        int efd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        dup2(fd, STDOUT_FILENO);
        dup2(efd, STDERR_FILENO);
        execl(th_self_exe(), "plan", "--plan", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    *out = file_read(path, 1 << 20, NULL, &(struct err){0});
    free(path);
    return status;
}

/* Every line of out is a JSON event line; returns how many. */
static int
check_lines(const char *out)
{
    int n = 0;

    for (const char *p = out; p && *p;) {
        const char *nl = strchr(p, '\n');
        cJSON *line =
            cJSON_ParseWithLength(p, nl ? (size_t)(nl - p) : strlen(p));

        CHECK_MSG(line != NULL, "not JSON: %.80s", p);
        CHECK(cJSON_IsString(cJSON_GetObjectItem(line, "ts")));
        CHECK(cJSON_IsObject(cJSON_GetObjectItem(line, "event")));
        cJSON_Delete(line);
        n++;
        p = nl ? nl + 1 : p + strlen(p);
    }
    return n;
}

static void
t_main_ok(void)
{
    char *out, *path;
    int st;

    svc_start(1);
    st = run_plan("ok", &out);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    CHECK_EQ_INT(check_lines(out), 5);
    CHECK_CONTAINS(out, "\"type\":\"start\"");
    CHECK_CONTAINS(out, "\"message\":\"hello 1\"");
    CHECK_CONTAINS(out, "\"type\":\"success\"");
    pthread_mutex_lock(&S.mu);
    CHECK_EQ_STR(S.types, "start,message,stage_start,stage_end,success,");
    CHECK_EQ_INT(S.hellos, 1);
    pthread_mutex_unlock(&S.mu);
    path = xasprintf("%s/g/0/out.bin", S.dir);
    CHECK(path_exists(path));
    free(path);
    free(out);
    svc_stop();
}

static void
t_main_fail_and_unknown(void)
{
    char *out;
    int st;

    svc_start(1);
    st = run_plan("fail", &out);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    CHECK_CONTAINS(out, "\"type\":\"failure\"");
    CHECK_CONTAINS(out, "\"error\":\"boom 42\"");
    free(out);
    pthread_mutex_lock(&S.mu);
    CHECK_EQ_STR(S.error, "boom 42");
    pthread_mutex_unlock(&S.mu);
    svc_stop();
    svc_start(1);
    st = run_plan("nope", &out);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    CHECK_CONTAINS(out, "unknown test case \\\"nope\\\"; known cases: ok, "
                        "fail, crash");
    free(out);
    svc_stop();
}

static void
t_main_crash(void)
{
    char *out;
    int st;

    svc_start(1);
    st = run_plan("crash", &out);
    CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV, "status %d", st);
    CHECK_EQ_INT(check_lines(out), 2);
    CHECK_CONTAINS(out, "\"type\":\"crash\"");
    CHECK_CONTAINS(out, "\"error\":\"signal 11 (SIGSEGV)\"");
    CHECK_CONTAINS(out, "\"group_id\":\"g\",\"run_id\":\"" RUN "\"");
    free(out);
    svc_stop();
}

/* Past the run's bounds on topics and states a call returns -ENOSPC
 * and says which bound. */
static void
t_run_bounds(void)
{
    struct ty *a;

    svc_bounds = (struct syncsvc_bounds){.topics = 2, .states = 1};
    svc_start(1);
    a = handle(0, 1);
    CHECK_EQ_INT(ty_publish(a, "t1", "1"), 1);
    CHECK_EQ_INT(ty_publish(a, "t2", "1"), 1);
    CHECK_EQ_INT(ty_publish(a, "t3", "1"), -ENOSPC);
    CHECK_CONTAINS(ty_errmsg(a), "no new topic: the run has 2 topics");
    CHECK_EQ_INT(ty_publish(a, "t1", "2"), 2);
    CHECK_EQ_INT(ty_signal_entry(a, "s1"), 1);
    CHECK_EQ_INT(ty_signal_entry(a, "s2"), -ENOSPC);
    CHECK_CONTAINS(ty_errmsg(a), "no new state: the run has 1 states");
    ty__destroy(&a);
    svc_stop();
}

static const struct th_case cases[] = {
    {"run_bounds", t_run_bounds},
    {"barrier_threads", t_barrier_threads},
    {"barrier_in_group", t_barrier_in_group},
    {"barrier_timeout", t_barrier_timeout},
    {"barrier_fails_on_exit", t_barrier_fails_on_exit},
    {"pubsub", t_pubsub},
    {"one_handle_many_threads", t_one_handle_many_threads},
    {"outputs", t_outputs},
    {"fork_in_plan", t_fork_in_plan},
    {"main_ok", t_main_ok},
    {"main_fail_and_unknown", t_main_fail_and_unknown},
    {"main_crash", t_main_crash},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--plan") == 0)
        return ty_main(argc, argv, plan_cases);
    return th_main(argc, argv, cases);
}

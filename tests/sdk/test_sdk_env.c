/*
 * test_sdk_env.c — the SDK without a coordinator, linked as plans link it
 * (libtestyard.a): the run environment, typed parameters from both forms,
 * sync calls refused with a clear message, outputs written whole under
 * TEST_OUTPUTS_PATH, per-thread error messages, and ty_main's dispatch
 * (this program re-runs itself as a plan with "--plan").
 */
#include "th.h"
#include "th_proc.h"
#include "ty_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const vars[] = {
    "TEST_PLAN",
    "TEST_CASE",
    "TEST_RUN",
    "TEST_GROUP_ID",
    "TEST_INSTANCE_COUNT",
    "TEST_GROUP_INSTANCE_COUNT",
    "TEST_INSTANCE_PARAMS",
    "TEST_OUTPUTS_PATH",
    "TEST_TEMP_PATH",
    "SYNC_SERVICE_HOST",
    "SYNC_SERVICE_PORT",
    "TESTYARD_SYNC_URL",
    "TESTYARD_GROUP_INDEX",
    "TESTYARD_GLOBAL_INDEX",
    "TESTYARD_PLAN_INSTANCES",
    "TESTYARD_PARAMS",
    "TESTYARD_DEADLINE_MS",
};

static void
clear_env(void)
{
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
}

static struct ty *
make(void)
{
    char why[256] = "";
    struct ty *ty = ty__new_from_env(why, sizeof(why));

    CHECK_MSG(ty != NULL, "ty__new_from_env: %s", why);
    if (ty == NULL)
        th_skip("no handle");
    return ty;
}

static char *
slurp(const char *path)
{
    static char buf[1 << 16];
    int fd = open(path, O_RDONLY);
    ssize_t n;

    if (fd < 0)
        return NULL;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

/* ---- environment ------------------------------------------------------- */

static void
t_env_full(void)
{
    struct ty *ty;

    clear_env();
    setenv("TEST_PLAN", "bitswap", 1);
    setenv("TEST_CASE", "transfer", 1);
    setenv("TEST_RUN", "r-42", 1);
    setenv("TEST_GROUP_ID", "providers", 1);
    setenv("TEST_INSTANCE_COUNT", "10", 1);
    setenv("TEST_GROUP_INSTANCE_COUNT", "4", 1);
    setenv("TESTYARD_GROUP_INDEX", "3", 1);
    setenv("TESTYARD_GLOBAL_INDEX", "7", 1);
    setenv("TESTYARD_PLAN_INSTANCES", "6", 1);
    setenv("TEST_OUTPUTS_PATH", "/out", 1);
    setenv("TEST_TEMP_PATH", "/scratch", 1);
    ty = make();
    CHECK_EQ_STR(ty_plan(ty), "bitswap");
    CHECK_EQ_STR(ty_case_name(ty), "transfer");
    CHECK_EQ_STR(ty_run_id(ty), "r-42");
    CHECK_EQ_STR(ty_group_id(ty), "providers");
    CHECK_EQ_INT(ty_instance_count(ty), 10);
    CHECK_EQ_INT(ty_plan_instance_count(ty), 6);
    CHECK_EQ_INT(ty_group_instance_count(ty), 4);
    CHECK_EQ_INT(ty_group_index(ty), 3);
    CHECK_EQ_INT(ty_global_index(ty), 7);
    CHECK_EQ_STR(ty_outputs_path(ty), "/out");
    CHECK_EQ_STR(ty_temp_path(ty), "/scratch");
    CHECK_EQ_STR(ty_errmsg(ty), "");
    ty__destroy(&ty);
    CHECK(ty == NULL);
}

static void
t_env_defaults_and_errors(void)
{
    char why[256];
    struct ty *ty;

    clear_env();
    setenv("TMPDIR", "/tmp", 1);
    ty = make();
    CHECK_EQ_STR(ty_plan(ty), "");
    CHECK_EQ_INT(ty_instance_count(ty), 1);
    CHECK_EQ_INT(ty_plan_instance_count(ty), 1);
    CHECK_EQ_INT(ty_group_instance_count(ty), 1);
    CHECK_EQ_INT(ty_global_index(ty), 0);
    CHECK_EQ_STR(ty_outputs_path(ty), ".");
    CHECK_EQ_STR(ty_temp_path(ty), "/tmp");
    CHECK_EQ_INT(ty->deadline_ms, 0);
    ty__destroy(&ty);
    setenv("TEST_INSTANCE_COUNT", "ten", 1);
    CHECK(ty__new_from_env(why, sizeof(why)) == NULL);
    CHECK_CONTAINS(why, "TEST_INSTANCE_COUNT: expected a whole number");
    clear_env();
    setenv("TESTYARD_PARAMS", "[1,2]", 1);
    CHECK(ty__new_from_env(why, sizeof(why)) == NULL);
    CHECK_CONTAINS(why, "TESTYARD_PARAMS: expected a JSON object");
    clear_env();
    setenv("TEST_INSTANCE_PARAMS", "a=1|novalue", 1);
    CHECK(ty__new_from_env(why, sizeof(why)) == NULL);
    CHECK_CONTAINS(why, "expected key=value");
    clear_env();
    setenv("TESTYARD_DEADLINE_MS", "soon", 1);
    CHECK(ty__new_from_env(why, sizeof(why)) == NULL);
    CHECK_CONTAINS(why, "TESTYARD_DEADLINE_MS");
}

static void
t_deadline(void)
{
    struct timespec now;
    char buf[64];
    struct ty *ty;
    int64_t left;

    clear_env();
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(buf, sizeof(buf), "%lld",
             (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 + 5000);
    setenv("TESTYARD_DEADLINE_MS", buf, 1);
    ty = make();
    left = ty->deadline_ms - ty__now_ms();
    CHECK_MSG(left > 4800 && left <= 5000, "left %lld", (long long)left);
    ty__destroy(&ty);
}

/* ---- parameters -------------------------------------------------------- */

static void
t_params_testground_form(void)
{
    struct ty *ty;
    const char *s;
    int64_t i, d;
    uint64_t sz;
    double f;
    bool b;
    size_t n;

    clear_env();
    setenv("TEST_INSTANCE_PARAMS",
           "file_size=512MB|latency=250ms|rounds=42|ratio=1.5|verbose=true|"
           "mode=fast|sizes=[\"1MB\",\"64Ki\"]|expr=a=b|flag=F",
           1);
    ty = make();
    CHECK_EQ_INT(ty_param_size(ty, "file_size", &sz), 0);
    CHECK_EQ_INT(sz, 512000000);
    CHECK_EQ_INT(ty_param_duration(ty, "latency", &d), 0);
    CHECK_EQ_INT(d, 250000000);
    CHECK_EQ_INT(ty_param_int(ty, "rounds", &i), 0);
    CHECK_EQ_INT(i, 42);
    CHECK_EQ_INT(ty_param_float(ty, "ratio", &f), 0);
    CHECK(f == 1.5);
    CHECK_EQ_INT(ty_param_bool(ty, "verbose", &b), 0);
    CHECK(b);
    CHECK_EQ_INT(ty_param_bool(ty, "flag", &b), 0);
    CHECK(!b);
    CHECK_EQ_INT(ty_param_enum(ty, "mode", &s), 0);
    CHECK_EQ_STR(s, "fast");
    CHECK_EQ_INT(ty_param_string(ty, "expr", &s), 0);
    CHECK_EQ_STR(s, "a=b");
    CHECK_EQ_INT(ty_param_array_len(ty, "sizes", &n), 0);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(ty_param_array_size(ty, "sizes", 1, &sz), 0);
    CHECK_EQ_INT(sz, 65536);
    CHECK(ty_param_has(ty, "mode"));
    CHECK(!ty_param_has(ty, "missing"));
    ty__destroy(&ty);
}

static void
t_params_json_form(void)
{
    struct ty *ty;
    const char *s;
    int64_t i, d;
    uint64_t sz;
    double f;
    bool b;
    size_t n;

    clear_env();
    setenv("TEST_INSTANCE_PARAMS", "rounds=1", 1);
    setenv("TESTYARD_PARAMS",
           "{\"rounds\":3,\"ratio\":0.25,\"on\":false,\"name\":\"x|y=z\","
           "\"mem\":\"2Gi\",\"bytes\":4096,\"wait\":\"1m30s\",\"ns\":1000,"
           "\"ints\":[1,2,3],\"names\":[\"a\",\"b\"],\"waits\":[\"1s\","
           "\"2ms\"],\"flags\":[true,false],\"floats\":[0.5]}",
           1);
    ty = make();
    CHECK_EQ_INT(ty_param_int(ty, "rounds", &i), 0);
    CHECK_EQ_INT(i, 3); /* TESTYARD_PARAMS wins */
    CHECK_EQ_INT(ty_param_float(ty, "ratio", &f), 0);
    CHECK(f == 0.25);
    CHECK_EQ_INT(ty_param_bool(ty, "on", &b), 0);
    CHECK(!b);
    CHECK_EQ_INT(ty_param_string(ty, "name", &s), 0);
    CHECK_EQ_STR(s, "x|y=z");
    CHECK_EQ_INT(ty_param_size(ty, "mem", &sz), 0);
    CHECK_EQ_INT(sz, 2ULL << 30);
    CHECK_EQ_INT(ty_param_size(ty, "bytes", &sz), 0);
    CHECK_EQ_INT(sz, 4096);
    CHECK_EQ_INT(ty_param_duration(ty, "wait", &d), 0);
    CHECK_EQ_INT(d, 90000000000LL);
    CHECK_EQ_INT(ty_param_duration(ty, "ns", &d), 0);
    CHECK_EQ_INT(d, 1000);
    CHECK_EQ_INT(ty_param_array_len(ty, "ints", &n), 0);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(ty_param_array_int(ty, "ints", 2, &i), 0);
    CHECK_EQ_INT(i, 3);
    CHECK_EQ_INT(ty_param_array_string(ty, "names", 1, &s), 0);
    CHECK_EQ_STR(s, "b");
    CHECK_EQ_INT(ty_param_array_duration(ty, "waits", 1, &d), 0);
    CHECK_EQ_INT(d, 2000000);
    CHECK_EQ_INT(ty_param_array_bool(ty, "flags", 0, &b), 0);
    CHECK(b);
    CHECK_EQ_INT(ty_param_array_float(ty, "floats", 0, &f), 0);
    CHECK(f == 0.5);
    ty__destroy(&ty);
}

static void
t_params_wrong_types(void)
{
    struct ty *ty;
    const char *s;
    int64_t i;
    uint64_t sz;
    bool b;
    size_t n;

    clear_env();
    setenv("TESTYARD_PARAMS",
           "{\"n\":1.5,\"s\":7,\"mem\":\"lots\",\"b\":\"maybe\","
           "\"arr\":[1,\"x\"],\"neg\":-5}",
           1);
    ty = make();
    CHECK_EQ_INT(ty_param_int(ty, "n", &i), -EINVAL);
    CHECK_CONTAINS(ty_errmsg(ty), "parameter \"n\": expected an integer, "
                                  "got 1.5");
    CHECK_EQ_INT(ty_param_string(ty, "s", &s), -EINVAL);
    CHECK_EQ_INT(ty_param_size(ty, "mem", &sz), -EINVAL);
    CHECK_CONTAINS(ty_errmsg(ty), "expected a size like 512MB");
    CHECK_EQ_INT(ty_param_size(ty, "neg", &sz), -EINVAL);
    CHECK_EQ_INT(ty_param_bool(ty, "b", &b), -EINVAL);
    CHECK_EQ_INT(ty_param_int(ty, "absent", &i), -ENOENT);
    CHECK_CONTAINS(ty_errmsg(ty), "parameter \"absent\" is not set");
    CHECK_EQ_INT(ty_param_array_int(ty, "arr", 1, &i), -EINVAL);
    CHECK_CONTAINS(ty_errmsg(ty), "parameter \"arr\"[1]: expected an "
                                  "integer, got \"x\"");
    CHECK_EQ_INT(ty_param_array_int(ty, "arr", 2, &i), -ENOENT);
    CHECK_EQ_INT(ty_param_array_len(ty, "n", &n), -EINVAL);
    CHECK_EQ_INT(ty_param_array_int(ty, "n", 0, &i), -EINVAL);
    ty__destroy(&ty);
}

/* ---- standalone sync and outputs --------------------------------------- */

static void
t_standalone_sync(void)
{
    struct ty *ty;
    char *json = NULL;

    clear_env();
    ty = make();
    CHECK_EQ_INT(ty__sync_connect(ty), 0);
    CHECK(ty->conn == NULL);
    CHECK_EQ_INT(ty_signal_entry(ty, "s"), -ENOTCONN);
    CHECK_CONTAINS(ty_errmsg(ty), "running standalone");
    CHECK_EQ_INT(ty_barrier(ty, "s", 1, 10), -ENOTCONN);
    CHECK_EQ_INT(ty_signal_and_wait(ty, "s", 1, 10), -ENOTCONN);
    CHECK_EQ_INT(ty_publish(ty, "t", "1"), -ENOTCONN);
    CHECK(ty_subscribe(ty, "t", 1) == NULL);
    CHECK_CONTAINS(ty_errmsg(ty), "subscribe");
    (void)json;
    ty__destroy(&ty);
}

static void
t_standalone_outputs(void)
{
    struct ty *ty;
    char path[600];
    struct stat st;

    clear_env();
    setenv("TEST_OUTPUTS_PATH", th_tmpdir(), 1);
    ty = make();
    CHECK_EQ_INT(ty__output_file(ty, "heap/h.bin", "abcdef", 6), 0);
    snprintf(path, sizeof(path), "%s/heap/h.bin", th_tmpdir());
    CHECK_EQ_STR(slurp(path), "abcdef");
    snprintf(path, sizeof(path), "%s/heap/h.bin.tmp", th_tmpdir());
    CHECK(stat(path, &st) < 0);
    CHECK_EQ_INT(ty__output_append(ty, "results.out", "a", 1), 0);
    CHECK_EQ_INT(ty__output_append(ty, "results.out", "b\nc\n", 4), 0);
    snprintf(path, sizeof(path), "%s/results.out", th_tmpdir());
    CHECK_EQ_STR(slurp(path), "a\nb\nc\n");
    CHECK_EQ_INT(ty__output_file(ty, "/abs", "x", 1), -EINVAL);
    CHECK_EQ_INT(ty__output_append(ty, "a/../../b", "x", 1), -EINVAL);
    ty__destroy(&ty);
}

/* ---- errors per thread ------------------------------------------------- */

struct err_arg {
    struct ty *ty;
    const char *param;
    bool ok;
};

static void *
err_thread(void *p)
{
    struct err_arg *a = p;
    int64_t v;

    a->ok = true;
    for (int i = 0; i < 2000; i++) {
        ty_param_int(a->ty, a->param, &v);
        if (strstr(ty_errmsg(a->ty), a->param) == NULL)
            a->ok = false;
    }
    return NULL;
}

static void
t_errmsg_per_thread(void)
{
    struct err_arg a = {0}, b = {0};
    pthread_t ta, tb;
    struct ty *ty;

    clear_env();
    ty = make();
    a = (struct err_arg){ty, "alpha_missing", false};
    b = (struct err_arg){ty, "beta_missing", false};
    pthread_create(&ta, NULL, err_thread, &a);
    pthread_create(&tb, NULL, err_thread, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(a.ok);
    CHECK(b.ok);
    CHECK_EQ_INT(ty_fail(ty, "why %s", "not"), -1);
    CHECK_EQ_STR(ty->fail_reason, "why not");
    /* the internal error shape (ty_int.h): a negative errno, always */
    CHECK_EQ_INT(ty__seterr(ty, -EIO, "io %d", 1), -EIO);
    CHECK_EQ_STR(ty_errmsg(ty), "io 1");
    CHECK_EQ_INT(ty__seterr(ty, EACCES, "positive"), -EACCES);
    CHECK_EQ_STR(ty_errmsg(ty), "positive");
    ty__destroy(&ty);
}

/* ---- ty_main ------------------------------------------------------------ */

static int
plan_ok(struct ty *ty)
{
    int64_t n;

    if (ty_param_int(ty, "n", &n) != 0 || n != 5)
        return ty_fail(ty, "param n: %s", ty_errmsg(ty));
    ty_message(ty, "quote \" and newline\n");
    return ty__output_file(ty, "done.txt", "yes", 3);
}

static int
plan_fail(struct ty *ty)
{
    return ty_fail(ty, "boom %d", 42);
}

static int
plan_plain_fail(struct ty *ty)
{
    (void)ty;
    return 3;
}

static int
plan_abort(struct ty *ty)
{
    (void)ty;
    abort();
}

static const struct ty_case plan_cases[] = {
    {"ok", plan_ok},       {"fail", plan_fail}, {"plain_fail", plan_plain_fail},
    {"abort", plan_abort}, {NULL, NULL},
};

static int
run_plan(const char *name, char **out)
{
    char path[600], errpath[600];
    int status = -1;
    pid_t pid;

    clear_env();
    setenv("TEST_CASE", name, 1);
    setenv("TEST_RUN", "r1", 1);
    setenv("TEST_GROUP_ID", "single", 1);
    setenv("TEST_INSTANCE_PARAMS", "n=5", 1);
    setenv("TEST_OUTPUTS_PATH", th_tmpdir(), 1);
    snprintf(path, sizeof(path), "%s/stdout", th_tmpdir());
    snprintf(errpath, sizeof(errpath), "%s/stderr", th_tmpdir());
    pid = fork();
    if (pid == 0) {
        dup2(open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), STDOUT_FILENO);
        dup2(open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
        execl(th_self_exe(), "plan", "--plan", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    *out = strdup(slurp(path) ? slurp(path) : "");
    return status;
}

/* The first line's "ts" is RFC 3339 UTC with ms and close to now. */
static void
check_ts(const char *out)
{
    cJSON *line = cJSON_ParseWithLength(out, strcspn(out, "\n"));
    const cJSON *ts = cJSON_GetObjectItem(line, "ts");
    char want[32];
    time_t now = time(NULL);
    struct tm tm;

    CHECK(cJSON_IsString(ts));
    gmtime_r(&now, &tm);
    strftime(want, sizeof(want), "%Y-%m-%dT%H:", &tm);
    if (cJSON_IsString(ts)) {
        CHECK_EQ_INT(strlen(ts->valuestring), 24);
        CHECK_MSG(strncmp(ts->valuestring, want, strlen(want)) == 0,
                  "ts %s, now %s", ts->valuestring, want);
        CHECK(ts->valuestring[23] == 'Z' && ts->valuestring[19] == '.');
    }
    cJSON_Delete(line);
}

static void
t_main_dispatch(void)
{
    char *out, path[600];
    int st;

    st = run_plan("ok", &out);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
    CHECK_CONTAINS(out, "\"event\":{\"type\":\"start\",\"runenv\":");
    CHECK_CONTAINS(out, "\"message\":\"quote \\\" and newline\\n\"");
    CHECK_CONTAINS(out, "{\"type\":\"success\",\"group\":\"single\"}");
    check_ts(out);
    snprintf(path, sizeof(path), "%s/done.txt", th_tmpdir());
    CHECK_EQ_STR(slurp(path), "yes");
    free(out);
    st = run_plan("fail", &out);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    CHECK_CONTAINS(out, "{\"type\":\"failure\",\"group\":\"single\","
                        "\"error\":\"boom 42\"}");
    free(out);
    st = run_plan("plain_fail", &out);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    CHECK_CONTAINS(out, "test case returned 3");
    free(out);
    st = run_plan("missing", &out);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 1, "status %d", st);
    CHECK_CONTAINS(out, "unknown test case \\\"missing\\\"; known cases: "
                        "ok, fail, plain_fail, abort");
    free(out);
}

static void
t_main_abort_is_crash(void)
{
    char *out;
    int st = run_plan("abort", &out);

    CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "status %d", st);
    CHECK_CONTAINS(out, "\"type\":\"crash\",\"group\":\"single\","
                        "\"error\":\"signal 6 (SIGABRT)\"");
    check_ts(strstr(out, "\n") ? strstr(out, "\n") + 1 : out);
    free(out);
}

static const struct th_case cases[] = {
    {"env_full", t_env_full},
    {"env_defaults_and_errors", t_env_defaults_and_errors},
    {"deadline", t_deadline},
    {"params_testground_form", t_params_testground_form},
    {"params_json_form", t_params_json_form},
    {"params_wrong_types", t_params_wrong_types},
    {"standalone_sync", t_standalone_sync},
    {"standalone_outputs", t_standalone_outputs},
    {"errmsg_per_thread", t_errmsg_per_thread},
    {"main_dispatch", t_main_dispatch},
    {"main_abort_is_crash", t_main_abort_is_crash},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--plan") == 0)
        return ty_main(argc, argv, plan_cases);
    return th_main(argc, argv, cases);
}

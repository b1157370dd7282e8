/*
 * test_stop.c — SIGTERM and the SDK (sdk/ty_stop.c), and ty_ready: a
 * plan under ty_load_run with no duration ends its load on SIGTERM and
 * returns normally, its cycles counted in results.out and work.csv; a
 * plan that never opted in dies by SIGTERM as it always did; one that
 * opted in with ty_stopping sees it, and a second SIGTERM ends it at
 * once; ty_ready's event goes out once, on stdout and to the service.
 *
 * Each plan is ty_main in a forked child, connected to the fixture's
 * service (sdk_fixture.h) in the parent, its stdout in <dir>/run.out. The
 * child says on a pipe when it is where the parent should signal it.
 */
#include "sdk_fixture.h"
#include "th.h"
#include "base/util.h"
#include "testyard.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int tell_fd = -1; /* the child's end of the pipe */

static void
tell(char c)
{
    if (write(tell_fd, &c, 1) != 1)
        _exit(90);
}

static void
nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

static int
task(struct ty *ty, void *arg, int64_t cycle)
{
    (void)ty;
    (void)arg;
    if (cycle == 20)
        tell('L');
    nap_ms(1);
    return 0;
}

/* A load with no duration, cycles or stop: only the SIGTERM ends it. */
static int
case_load(struct ty *ty)
{
    struct ty_load o = {.name = "w"};
    struct ty_load_result r;

    ty_ready(ty);
    ty_ready(ty);
    if (ty_load_run(ty, &o, task, NULL, &r) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    if (!ty_stopping(ty))
        return ty_fail(ty, "the load ended, but not stopping");
    ty_message(ty, "cycles=%lld", (long long)r.cycles);
    return 0;
}

static int case_plain(struct ty *ty) __attribute__((noreturn));
static int case_opted(struct ty *ty) __attribute__((noreturn));

static int
case_plain(struct ty *ty)
{
    (void)ty;
    tell('P');
    for (;;)
        nap_ms(10);
}

static int
case_opted(struct ty *ty)
{
    (void)ty_stopping(ty);
    tell('O');
    while (!ty_stopping(ty))
        nap_ms(5);
    tell('S');
    for (;;) /* as a plan slow to wind down */
        nap_ms(10);
}

static const struct ty_case plan_cases[] = {
    {"load", case_load},
    {"plain", case_plain},
    {"opted", case_opted},
    {NULL, NULL},
};

/* Start case name in a child; its pid, and the parent's end of the pipe
 * in *rfd. */
static pid_t
start_plan(const char *name, int *rfd)
{
    int p[2];
    pid_t pid;

    CHECK(pipe(p) == 0);
    set_env(0, 1);
    setenv("TEST_CASE", name, 1);
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        char *out = path_join(S.dir, "run.out");
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

        free(out); /* _exit below: nothing may stay for valgrind */
        close(p[0]);
        tell_fd = p[1];
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
            _exit(91);
        _exit(ty_main(0, NULL, plan_cases));
    }
    close(p[1]);
    *rfd = p[0];
    return pid;
}

/* Wait (up to 30 s) for the child to say c. */
static void
await(int fd, char c)
{
    char got = 0;
    fd_set set;
    struct timeval tv = {30, 0};

    FD_ZERO(&set);
    FD_SET(fd, &set);
    CHECK(select(fd + 1, &set, NULL, NULL, &tv) == 1 && read(fd, &got, 1) == 1);
    CHECK_MSG(got == c, "the child said '%c', not '%c'", got, c);
}

static int
wait_status(pid_t pid)
{
    int st = 0;

    CHECK(waitpid(pid, &st, 0) == pid);
    return st;
}

static char *
instance_file(const char *name)
{
    cleanup_free char *dir = path_join(S.dir, "g/0");
    cleanup_free char *path = path_join(dir, name);

    return file_read(path, 16u << 20, NULL, &(struct err){0});
}

static size_t
count_of(const char *hay, const char *needle)
{
    size_t n = 0;

    for (const char *p = hay; p != NULL && (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* The load ends on SIGTERM; the case returns and every output is whole. */
static void
t_load_stops(void)
{
    cleanup_free char *results = NULL, *work = NULL, *out = NULL;
    cleanup_free char *run_out = NULL;
    const char *msg;
    long long cycles = -1;
    int fd, st;
    pid_t pid;

    svc_start(1);
    pid = start_plan("load", &fd);
    await(fd, 'L');
    nap_ms(100);
    CHECK(kill(pid, SIGTERM) == 0);
    st = wait_status(pid);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
    close(fd);
    svc_stop();
    run_out = path_join(S.dir, "run.out");
    out = file_read(run_out, 1u << 20, NULL, &(struct err){0});
    CHECK_EQ_INT(count_of(out, "\"event\":{\"type\":\"ready\"}"), 1);
    CHECK_CONTAINS(out, "\"type\":\"success\"");
    CHECK_EQ_INT(count_of(S.types, "ready,"), 1);
    CHECK_CONTAINS(S.types, "success,");
    msg = out ? strstr(out, "cycles=") : NULL;
    if (msg != NULL)
        cycles = strtoll(msg + 7, NULL, 10);
    CHECK_MSG(cycles > 20, "%lld cycles", cycles);
    results = instance_file("results.out");
    CHECK_CONTAINS(results, "\"name\":\"w.cycles\"");
    if (results != NULL && cycles > 0) {
        char want[64];

        snprintf(want, sizeof(want), "\"count\":%lld", cycles);
        CHECK_CONTAINS(results, want);
    }
    work = instance_file("work.csv");
    CHECK_MSG(work && work[0] && work[strlen(work) - 1] == '\n', "%s",
              work ? work : "(no work.csv)");
    if (work != NULL && cycles > 0) {
        char want[64];

        snprintf(want, sizeof(want), ",w.cycles,%lld\n", cycles);
        CHECK_CONTAINS(work, want);
    }
}

/* A plan that never opted in ends by SIGTERM, as it always did. */
static void
t_plain_dies(void)
{
    int fd, st;
    pid_t pid;

    svc_start(1);
    pid = start_plan("plain", &fd);
    await(fd, 'P');
    CHECK(kill(pid, SIGTERM) == 0);
    st = wait_status(pid);
    CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %#x", st);
    close(fd);
    svc_stop();
    CHECK(strstr(S.types, "success") == NULL);
}

/* ty_stopping opts in: the first SIGTERM is seen, the second ends it. */
static void
t_second_sigterm(void)
{
    int fd, st;
    pid_t pid;

    svc_start(1);
    pid = start_plan("opted", &fd);
    await(fd, 'O');
    CHECK(kill(pid, SIGTERM) == 0);
    await(fd, 'S');
    CHECK(kill(pid, SIGTERM) == 0);
    st = wait_status(pid);
    CHECK_MSG(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %#x", st);
    close(fd);
    svc_stop();
}

static const struct th_case cases[] = {
    {"load_stops", t_load_stops},
    {"plain_dies", t_plain_dies},
    {"second_sigterm", t_second_sigterm},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

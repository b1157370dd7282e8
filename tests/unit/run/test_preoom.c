/*
 * test_preoom.c — pre-OOM snapshot requests: when the memory monitor asks
 * (crossing fraction × limit on a fake v2 cgroup, re-armed only below
 * fraction - 0.1, at most once a second, tried again after an ask that
 * reached no one, never when off or without a limit), and whom the
 * coordinator signals (run/run_preoom.c): only a process whose environment
 * has LD_PRELOAD naming libtestyard-heap and which catches its profiler's
 * signal, checked on environment blocks and status texts and on child
 * processes started with and without that environment and handler, and
 * under an init, the init's child; with a memory cgroup, every process
 * in it that asked.
 */
#include "base/fsat.h"
#include "run/monitor_int.h"
#include "run/run_int.h"
#include "th.h"
#include "th_files.h"
#include "th_proc.h"
#include "base/util.h"
#include "ty_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIMIT 1000000

/* ---- the monitor's threshold ------------------------------------------ */

static struct {
    int calls;
    int last_id;
    enum monitor_via answer;
} ask;

static enum monitor_via
ask_stub(void *arg, int id)
{
    (void)arg;
    ask.calls++;
    ask.last_id = id;
    return ask.answer;
}

static char *
fake_cgroup(const char *max)
{
    char *dir = path_join(th_tmpdir(), "cg");

    mkdir_p(dir, NULL);
    th_write(dir, "memory.current", "1000\n");
    th_write(dir, "memory.peak", "1000\n");
    th_write(dir, "memory.max", max);
    th_write(dir, "memory.stat", "anon 600\nfile 300\n");
    th_write(dir, "memory.events", "oom 0\noom_kill 0\n");
    return dir;
}

/* A monitor (run started at 0) watching the fake cgroup as instance id 3,
 * asking at fraction f. */
static struct monitor_file csv = {
    .dirfd = -1, .partial = "memory.csv.partial", .final = "memory.csv"};

static struct monitor *
watch(double f, const char *max, char **dir, struct monitor_inst **in)
{
    struct monitor *mon = monitor__new(250, 0);
    struct err err = {0};

    csv.dirfd = fsat_root(th_tmpdir(), NULL);

    memset(&ask, 0, sizeof(ask));
    ask.answer = MONITOR_VIA_SYNC;
    ask.last_id = -1;
    monitor__set_pre_oom(mon, &(struct monitor_pre_oom_cfg){f, ask_stub, NULL});
    *dir = fake_cgroup(max);
    *in = monitor__add(mon, "g/0", *dir, TY_CG_V2, &csv, 0, &err);
    CHECK_MSG(*in != NULL, "%s", err.msg);
    if (*in != NULL)
        monitor__set_id(*in, 3);
    return mon;
}

static void
unwatch(struct monitor **mon, char *dir)
{
    monitor__destroy(mon);
    close(csv.dirfd);
    csv.dirfd = -1;
    free(dir);
}

/* Usage becomes `usage`, then a sample at t. */
static void
sample_at(struct monitor *mon, const char *dir, long usage, int64_t t)
{
    char v[32];

    snprintf(v, sizeof(v), "%ld\n", usage);
    th_write(dir, "memory.current", v);
    monitor__sample(mon, t);
}

static struct monitor_pre_oom
pre_oom_of(const struct monitor_inst *in)
{
    struct monitor_stats st;

    monitor__stats(in, &st);
    return st.pre_oom;
}

static void
t_crossing_asks_once(void)
{
    struct monitor_inst *in;
    char *dir;
    struct monitor *mon = watch(0.9, "1000000\n", &dir, &in);
    struct monitor_pre_oom p = pre_oom_of(in);

    CHECK_EQ_INT(p.requests, 0);
    CHECK_EQ_INT(p.first_ms, -1);
    sample_at(mon, dir, 800000, 250);
    sample_at(mon, dir, 899999, 500);
    CHECK_EQ_INT(ask.calls, 0);
    sample_at(mon, dir, 900000, 750);
    CHECK_EQ_INT(ask.calls, 1);
    CHECK_EQ_INT(ask.last_id, 3);
    p = pre_oom_of(in);
    CHECK_EQ_INT(p.requests, 1);
    CHECK_EQ_INT(p.first_ms, 750);
    CHECK_EQ_INT(p.last_ms, 750);
    CHECK_EQ_INT(p.usage, 900000);
    CHECK_EQ_INT(p.limit, LIMIT);
    CHECK_EQ_INT(p.via, MONITOR_VIA_SYNC);
    /* Above the threshold for seconds: asked once. */
    for (int64_t t = 1000; t <= 5000; t += 250)
        sample_at(mon, dir, 990000, t);
    CHECK_EQ_INT(ask.calls, 1);
    unwatch(&mon, dir);
}

static void
t_rearmed_below(void)
{
    struct monitor_inst *in;
    char *dir;
    struct monitor *mon = watch(0.9, "1000000\n", &dir, &in);
    struct monitor_pre_oom p;

    sample_at(mon, dir, 950000, 250);
    CHECK_EQ_INT(ask.calls, 1);
    /* Down, but not below 0.8 × limit: not re-armed. */
    sample_at(mon, dir, 850000, 2000);
    sample_at(mon, dir, 950000, 3000);
    CHECK_EQ_INT(ask.calls, 1);
    sample_at(mon, dir, 800000, 4000); /* not below: still not */
    sample_at(mon, dir, 960000, 5000);
    CHECK_EQ_INT(ask.calls, 1);
    sample_at(mon, dir, 790000, 6000);
    sample_at(mon, dir, 899000, 6250);
    CHECK_EQ_INT(ask.calls, 1);
    ask.answer = MONITOR_VIA_SIGNAL;
    sample_at(mon, dir, 920000, 6500);
    CHECK_EQ_INT(ask.calls, 2);
    p = pre_oom_of(in);
    CHECK_EQ_INT(p.requests, 2);
    CHECK_EQ_INT(p.first_ms, 250);
    CHECK_EQ_INT(p.last_ms, 6500);
    CHECK_EQ_INT(p.usage, 920000);
    CHECK_EQ_INT(p.via, MONITOR_VIA_SIGNAL);
    unwatch(&mon, dir);
}

/* Re-armed at once, yet not asked again within a second. */
static void
t_rate_limited(void)
{
    struct monitor_inst *in;
    char *dir;
    struct monitor *mon = watch(0.9, "1000000\n", &dir, &in);

    sample_at(mon, dir, 950000, 250);
    sample_at(mon, dir, 100000, 500);
    sample_at(mon, dir, 950000, 750);
    sample_at(mon, dir, 950000, 1249);
    CHECK_EQ_INT(ask.calls, 1);
    sample_at(mon, dir, 950000, 1250);
    CHECK_EQ_INT(ask.calls, 2);
    CHECK_EQ_INT(pre_oom_of(in).requests, 2);
    CHECK_EQ_INT(pre_oom_of(in).last_ms, 1250);
    unwatch(&mon, dir);
}

/* An ask that reached no one counts for nothing and is tried again a
 * second later, not at every sample. */
static void
t_unanswered_tried_again(void)
{
    struct monitor_inst *in;
    char *dir;
    struct monitor *mon = watch(0.9, "1000000\n", &dir, &in);

    ask.answer = MONITOR_VIA_NONE;
    sample_at(mon, dir, 950000, 250);
    sample_at(mon, dir, 950000, 500);
    sample_at(mon, dir, 950000, 1000);
    CHECK_EQ_INT(ask.calls, 1);
    CHECK_EQ_INT(pre_oom_of(in).requests, 0);
    ask.answer = MONITOR_VIA_SIGNAL;
    sample_at(mon, dir, 950000, 1250);
    CHECK_EQ_INT(ask.calls, 2);
    CHECK_EQ_INT(pre_oom_of(in).requests, 1);
    CHECK_EQ_INT(pre_oom_of(in).first_ms, 1250);
    CHECK_EQ_INT(pre_oom_of(in).via, MONITOR_VIA_SIGNAL);
    unwatch(&mon, dir);
}

static void
t_off_and_no_limit(void)
{
    struct monitor_inst *in;
    struct err err = {0};
    char *dir;
    struct monitor *mon = watch(0, "1000000\n", &dir, &in);

    sample_at(mon, dir, 999000, 250);
    CHECK_EQ_INT(ask.calls, 0);
    unwatch(&mon, dir);
    mon = watch(0.9, "max\n", &dir, &in);
    sample_at(mon, dir, 999000, 250);
    sample_at(mon, dir, 99900000, 1500);
    CHECK_EQ_INT(ask.calls, 0);
    CHECK_EQ_INT(pre_oom_of(in).requests, 0);
    /* Ended instances are not sampled, so not asked. */
    th_write(dir, "memory.max", "1000000\n");
    CHECK_EQ_INT(monitor__instance_ended(mon, in, 1600, &err), 0);
    sample_at(mon, dir, 999000, 3000);
    CHECK_EQ_INT(ask.calls, 0);
    unwatch(&mon, dir);
}

/* ---- whom a signal may go to ------------------------------------------ */

static int
env_sig(const char *const *vars)
{
    char buf[4096];
    size_t len = 0;

    for (size_t i = 0; vars[i] != NULL; i++) {
        size_t n = strlen(vars[i]) + 1;

        memcpy(buf + len, vars[i], n);
        len += n;
    }
    return run__preoom_env_signal(buf, len);
}

static void
t_environ_names_the_profiler(void)
{
    CHECK_EQ_INT(env_sig((const char *[]){"PATH=/bin", "HOME=/", NULL}), 0);
    CHECK_EQ_INT(env_sig((const char *[]){
                     "LD_PRELOAD=/usr/lib/libtestyard-heap.so", NULL}),
                 SIGUSR2);
    CHECK_EQ_INT(
        env_sig((const char *[]){"LD_PRELOAD=libtestyard-heap.so", NULL}),
        SIGUSR2);
    CHECK_EQ_INT(env_sig((const char *[]){"A=1",
                                          "LD_PRELOAD=/x/libjemalloc.so.2 "
                                          "/usr/local/lib/libtestyard-heap.so",
                                          NULL}),
                 SIGUSR2);
    CHECK_EQ_INT(env_sig((const char *[]){"LD_PRELOAD=/a/libfoo.so:"
                                          "libtestyard-heap.so.0",
                                          NULL}),
                 SIGUSR2);
    /* Not the library: a folder of that name, another library, a name
     * that only contains it, another variable. */
    CHECK_EQ_INT(env_sig((const char *[]){"LD_PRELOAD=/libtestyard-heap/"
                                          "libfoo.so",
                                          NULL}),
                 0);
    CHECK_EQ_INT(
        env_sig((const char *[]){"LD_PRELOAD=/x/my-libtestyard-heap.so", NULL}),
        0);
    CHECK_EQ_INT(
        env_sig((const char *[]){"LD_PRELOAD=/x/libtestyard.so", NULL}), 0);
    CHECK_EQ_INT(
        env_sig((const char *[]){"XLD_PRELOAD=libtestyard-heap.so", NULL}), 0);
    CHECK_EQ_INT(
        env_sig((const char *[]){"X=LD_PRELOAD=libtestyard-heap.so", NULL}), 0);
    CHECK_EQ_INT(env_sig((const char *[]){"LD_PRELOAD=", NULL}), 0);
    /* The signal, as the profiler reads TESTYARD_HEAP_SIGNAL. */
    CHECK_EQ_INT(
        env_sig((const char *[]){"TESTYARD_HEAP_SIGNAL=USR1",
                                 "LD_PRELOAD=libtestyard-heap.so", NULL}),
        SIGUSR1);
    CHECK_EQ_INT(
        env_sig((const char *[]){"LD_PRELOAD=libtestyard-heap.so",
                                 "TESTYARD_HEAP_SIGNAL=RTMIN+2", NULL}),
        SIGRTMIN + 2);
    CHECK_EQ_INT(env_sig((const char *[]){"LD_PRELOAD=libtestyard-heap.so",
                                          "TESTYARD_HEAP_SIGNAL=10", NULL}),
                 10);
    CHECK_EQ_INT(env_sig((const char *[]){"LD_PRELOAD=libtestyard-heap.so",
                                          "TESTYARD_HEAP_SIGNAL=none", NULL}),
                 0);
    CHECK_EQ_INT(env_sig((const char *[]){"LD_PRELOAD=libtestyard-heap.so",
                                          "TESTYARD_HEAP_SIGNAL=lots", NULL}),
                 SIGUSR2);
    /* A block cut short (no final NUL) is read as far as it goes. */
    CHECK_EQ_INT(run__preoom_env_signal("LD_PRELOAD=libtestyard-heap.so", 30),
                 SIGUSR2);
    CHECK_EQ_INT(run__preoom_env_signal("LD_PRELOAD=libtestyard-he", 25), 0);
}

static void
t_sigcgt(void)
{
    static const char status[] = "Name:\tx\nSigBlk:\t0000000000000000\n"
                                 "SigIgn:\t0000000000001000\n"
                                 "SigCgt:\t0000000000000800\n";
    static const char rt[] = "Name:\tx\nSigCgt:\t0000000400000000\n";

    CHECK(run__preoom_caught(status, SIGUSR2));
    CHECK(!run__preoom_caught(status, SIGUSR1));
    CHECK(!run__preoom_caught(status, SIGPIPE)); /* ignored, not caught */
    CHECK(!run__preoom_caught(status, 0));
    CHECK(!run__preoom_caught("Name:\tx\n", SIGUSR2));
    CHECK(!run__preoom_caught("Name:\tx\nSigCgt:\tzz\n", SIGUSR2));
    CHECK(run__preoom_caught(rt, 35));
    CHECK(!run__preoom_caught(rt, 34));
}

/* ---- child processes --------------------------------------------------- */

static int child_out = -1;

static void
on_usr(int sig, siginfo_t *si, void *ctx)
{
    char msg[64];
    int n = snprintf(msg, sizeof(msg), "got %d %d %d\n", sig,
                     si->si_value.sival_int, si->si_code);

    (void)ctx;
    if (write(child_out, msg, (size_t)n) < 0)
        _exit(3);
    _exit(0);
}

/* The child: --preoom-child FD SIG [FILE] (SIG 0: no handler; FILE
 * mapped, as a preloaded library is). Says "ready" on FD, then waits to
 * be signalled (or killed). */
static int
child_main(char **argv)
{
    struct sigaction sa;
    int sig = atoi(argv[3]);

    child_out = atoi(argv[2]);
    if (argv[4] != NULL) {
        int fd = open(argv[4], O_RDONLY);

        if (fd < 0 ||
            mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) == MAP_FAILED)
            return 3;
        close(fd);
    }
    if (sig > 0) {
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_usr;
        sa.sa_flags = SA_SIGINFO;
        sigaction(sig, &sa, NULL);
    }
    if (write(child_out, "ready\n", 6) != 6)
        return 2;
    for (int i = 0; i < 600; i++)
        usleep(100000);
    return 1;
}

struct child {
    pid_t pid;
    int out; /* what it writes */
    int procfd;
};

static struct child child_start_mapping(char *const *env, int sig,
                                        const char *map);

/* Start this program as the child with environment env, catching sig. */
static struct child
child_start(char *const *env, int sig)
{
    return child_start_mapping(env, sig, NULL);
}

/* The same, with the file map mapped in it (NULL: none). */
static struct child
child_start_mapping(char *const *env, int sig, const char *map)
{
    struct child c = {.pid = -1, .out = -1, .procfd = -1};
    char fdarg[16], sigarg[16], buf[16];
    int p[2];
    char path[32];

    CHECK(pipe(p) == 0);
    snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
    snprintf(sigarg, sizeof(sigarg), "%d", sig);
    c.pid = fork();
    if (c.pid == 0) {
        char *argv[] = {(char *)th_self_exe(),
                        "--preoom-child",
                        fdarg,
                        sigarg,
                        (char *)map,
                        NULL};
        int null = open("/dev/null", O_WRONLY);

        close(p[0]);
        dup2(null, 2); /* ld.so says it cannot preload the library */
        execve(argv[0], argv, env);
        _exit(127);
    }
    close(p[1]);
    c.out = p[0];
    CHECK(read(c.out, buf, 6) == 6 && memcmp(buf, "ready\n", 6) == 0);
    snprintf(path, sizeof(path), "/proc/%d", (int)c.pid);
    c.procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(c.procfd >= 0);
    return c;
}

/* What the child wrote within ms ("" when nothing). */
static const char *
child_said(const struct child *c, int ms)
{
    static char buf[128];
    struct pollfd pf = {c->out, POLLIN, 0};
    ssize_t n = 0;

    buf[0] = '\0';
    if (poll(&pf, 1, ms) == 1 && (n = read(c->out, buf, sizeof(buf) - 1)) > 0)
        buf[n] = '\0';
    return buf;
}

/* Kill and reap it; its wait status. */
static int
child_end(struct child *c)
{
    int status = 0;

    kill(c->pid, SIGKILL);
    waitpid(c->pid, &status, 0);
    close(c->out);
    if (c->procfd >= 0)
        close(c->procfd);
    return status;
}

static char *env_preload[] = {"LD_PRELOAD=/nonexistent/libtestyard-heap.so",
                              "PATH=/bin", NULL};

static void
t_signal_to_a_profiler_that_asked(void)
{
    struct child c = child_start(env_preload, SIGUSR2);
    char why[128] = "", want[64];
    int status;

    CHECK_EQ_INT(run__preoom_signal(c.procfd, 0, why, sizeof(why)), 1);
    snprintf(want, sizeof(want), "got %d %d %d\n", SIGUSR2,
             TY_WIRE_PREOOM_SIGVAL, SI_QUEUE);
    CHECK_EQ_STR(child_said(&c, 5000), want);
    waitpid(c.pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(c.out);
    /* Its /proc folder now stands for no process: nothing is sent. */
    CHECK_EQ_INT(run__preoom_signal(c.procfd, 0, why, sizeof(why)), -ESRCH);
    close(c.procfd);
}

static void
t_no_signal_without_handler(void)
{
    struct child c = child_start(env_preload, 0);
    char why[128] = "";

    CHECK_EQ_INT(run__preoom_signal(c.procfd, 0, why, sizeof(why)), 0);
    CHECK_CONTAINS(why, "signal 12 is not caught");
    CHECK_EQ_STR(child_said(&c, 200), "");
    /* Still alive: SIGUSR2 would have killed it. */
    CHECK_EQ_INT(waitpid(c.pid, NULL, WNOHANG), 0);
    CHECK_EQ_INT(WTERMSIG(child_end(&c)), SIGKILL);
}

static void
t_no_signal_without_environment(void)
{
    char *env[] = {"PATH=/bin", "TESTYARD_HEAP_SIGNAL=USR2", NULL};
    struct child c = child_start(env, SIGUSR2);
    char why[128] = "";

    CHECK_EQ_INT(run__preoom_signal(c.procfd, 0, why, sizeof(why)), 0);
    CHECK_CONTAINS(why, "no LD_PRELOAD of libtestyard-heap");
    CHECK_EQ_STR(child_said(&c, 200), "");
    CHECK_EQ_INT(waitpid(c.pid, NULL, WNOHANG), 0);
    child_end(&c);
}

/* TESTYARD_HEAP_SIGNAL names the signal: USR1 when it says so, and a
 * handler of SIGUSR2 alone is then not enough. */
static void
t_signal_named_by_environment(void)
{
    char *env[] = {"LD_PRELOAD=/nonexistent/libtestyard-heap.so",
                   "TESTYARD_HEAP_SIGNAL=USR1", NULL};
    struct child c = child_start(env, SIGUSR2);
    char why[128] = "", want[64];

    CHECK_EQ_INT(run__preoom_signal(c.procfd, 0, why, sizeof(why)), 0);
    CHECK_CONTAINS(why, "signal 10 is not caught");
    CHECK_EQ_INT(waitpid(c.pid, NULL, WNOHANG), 0);
    child_end(&c);
    c = child_start(env, SIGUSR1);
    CHECK_EQ_INT(run__preoom_signal(c.procfd, 0, why, sizeof(why)), 1);
    snprintf(want, sizeof(want), "got %d %d %d\n", SIGUSR1,
             TY_WIRE_PREOOM_SIGVAL, SI_QUEUE);
    CHECK_EQ_STR(child_said(&c, 5000), want);
    child_end(&c);
}

/* Under an init (as docker-init runs the plan): its child is found,
 * checked and signalled; a process without children has none. */
static void
t_child_of_an_init(void)
{
    struct child c = child_start(env_preload, SIGUSR2);
    char path[32], why[128] = "", want[64];
    int self, fd;

    snprintf(path, sizeof(path), "/proc/%d", (int)getpid());
    self = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    CHECK(self >= 0);
    fd = run__preoom_child(self, getpid());
    CHECK(fd >= 0);
    CHECK_EQ_INT(run__preoom_child(c.procfd, c.pid), -1);
    /* The pid must be the folder's own process. */
    CHECK_EQ_INT(run__preoom_child(self, c.pid), -1);
    CHECK_EQ_INT(run__preoom_signal(fd, 0, why, sizeof(why)), 1);
    snprintf(want, sizeof(want), "got %d %d %d\n", SIGUSR2,
             TY_WIRE_PREOOM_SIGVAL, SI_QUEUE);
    CHECK_EQ_STR(child_said(&c, 5000), want);
    close(fd);
    close(self);
    child_end(&c);
}

/* /proc/<pid>/cgroup texts against a memory cgroup's folder: v2's one
 * line, v1's memory line (not another controller's), whole path parts
 * only, never the root. */
static void
t_in_cgroup(void)
{
    const char *dir = "/sys/fs/cgroup/testyard/r1/g-0";
    const char *v1dir = "/sys/fs/cgroup/memory/testyard/r1/g-0";

    CHECK(run__preoom_in_cgroup("0::/testyard/r1/g-0\n", dir));
    CHECK(
        run__preoom_in_cgroup("0::/testyard/r1/g-0\n", "/x/testyard/r1/g-0/"));
    CHECK(!run__preoom_in_cgroup("0::/testyard/r1/g-1\n", dir));
    CHECK(!run__preoom_in_cgroup("0::/r1/xg-0\n", "/sys/fs/cgroup/r1/g-0"));
    CHECK(!run__preoom_in_cgroup("0::/\n", dir));
    CHECK(!run__preoom_in_cgroup("", dir));
    CHECK(run__preoom_in_cgroup("5:devices:/\n4:cpu,memory:/testyard/r1/g-0\n"
                                "0::/\n",
                                v1dir));
    CHECK(
        !run__preoom_in_cgroup("4:cpu:/testyard/r1/g-0\n4:memory:/\n", v1dir));
}

/* This process's memory cgroup as a folder path that ends with it (the
 * check reads only the path's end); NULL when it is the root. */
static char *
own_cgroup(void)
{
    char text[4096];
    FILE *f = fopen("/proc/self/cgroup", "r");
    char *line, *save = NULL;
    size_t n;

    if (f == NULL)
        return NULL;
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    for (line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

        if (c2 == NULL || strcmp(c2 + 1, "/") == 0)
            continue;
        if (c2 == c1 + 1 || strstr(c1, "memory") != NULL)
            return xasprintf("/sys/fs/cgroup/any%s", c2 + 1);
    }
    return NULL;
}

/* Every process of the cgroup that asked is signalled, one that did not
 * ask (no handler) and the skipped init are not, nor a pid outside the
 * cgroup. */
static void
t_signal_every_process_of_the_cgroup(void)
{
    cleanup_free char *dir = own_cgroup();
    struct child a, b, c;
    pid_t pids[4];
    char why[128] = "", want[64];

    if (dir == NULL)
        th_skip("this process is in the root memory cgroup");
    a = child_start(env_preload, SIGUSR2);
    b = child_start(env_preload, SIGUSR2);
    c = child_start(env_preload, 0);
    pids[0] = a.pid;
    pids[1] = c.pid;
    pids[2] = b.pid;
    pids[3] = 1;
    CHECK_EQ_INT(
        run__preoom_signal_pids(pids, 4, dir, b.pid, 0, why, sizeof(why)), 1);
    snprintf(want, sizeof(want), "got %d %d %d\n", SIGUSR2,
             TY_WIRE_PREOOM_SIGVAL, SI_QUEUE);
    CHECK_EQ_STR(child_said(&a, 5000), want);
    CHECK_EQ_STR(child_said(&b, 200), "");
    CHECK_EQ_STR(child_said(&c, 200), "");
    CHECK_EQ_INT(waitpid(c.pid, NULL, WNOHANG), 0);
    CHECK_EQ_INT(
        run__preoom_signal_pids(pids + 2, 1, dir, 0, 0, why, sizeof(why)), 1);
    CHECK_EQ_STR(child_said(&b, 5000), want);
    /* Outside the cgroup named: no one. */
    CHECK_EQ_INT(run__preoom_signal_pids(pids, 1, "/sys/fs/cgroup/elsewhere", 0,
                                         0, why, sizeof(why)),
                 0);
    child_end(&a);
    child_end(&b);
    child_end(&c);
}

static void
t_maps_name_the_profiler(void)
{
    CHECK(run__preoom_maps_heap("7f00-7f10 r-xp 00000000 08:01 12 "
                                "/usr/local/lib/libtestyard-heap.so\n"));
    CHECK(run__preoom_maps_heap("55-56 r--p 0 0 0 /bin/x\n"
                                "7f-80 r--p 0 08:01 12 "
                                "/.testyard/heap/libtestyard-heap.so\n"));
    CHECK(!run__preoom_maps_heap("55-56 r--p 0 0 0 /bin/x\n"));
    /* a folder of that name is not the library */
    CHECK(!run__preoom_maps_heap(
        "7f-80 r--p 0 08:01 12 /tmp/libtestyard-heap/evil.so\n"));
    CHECK(!run__preoom_maps_heap(""));
}

/* A server that wrote its process title over its environment: no
 * LD_PRELOAD left to read, the profiler mapped. Asked only for the signal
 * of the environment it was started with. */
static void
t_signal_to_a_profiler_whose_environment_is_gone(void)
{
    char *env[] = {"PATH=/bin", NULL};
    char lib[256];
    int fd;
    char why[128] = "", want[64];
    struct child c;

    snprintf(lib, sizeof(lib), "%s/libtestyard-heap.so", th_tmpdir());
    fd = open(lib, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && ftruncate(fd, 4096) == 0);
    close(fd);
    c = child_start_mapping(env, SIGUSR2, lib);
    CHECK_EQ_INT(run__preoom_signal(c.procfd, 0, why, sizeof(why)), 0);
    CHECK_CONTAINS(why, "no LD_PRELOAD of libtestyard-heap");
    CHECK_EQ_STR(child_said(&c, 200), "");
    /* started with SIGUSR1: not caught, not sent */
    CHECK_EQ_INT(run__preoom_signal(c.procfd, SIGUSR1, why, sizeof(why)), 0);
    CHECK_EQ_STR(child_said(&c, 200), "");
    CHECK_EQ_INT(run__preoom_signal(c.procfd, SIGUSR2, why, sizeof(why)), 1);
    snprintf(want, sizeof(want), "got %d %d %d\n", SIGUSR2,
             TY_WIRE_PREOOM_SIGVAL, SI_QUEUE);
    CHECK_EQ_STR(child_said(&c, 5000), want);
    child_end(&c);
    /* without the library mapped, the given signal is not enough */
    c = child_start(env, SIGUSR2);
    CHECK_EQ_INT(run__preoom_signal(c.procfd, SIGUSR2, why, sizeof(why)), 0);
    CHECK_EQ_STR(child_said(&c, 200), "");
    child_end(&c);
}

static const struct th_case cases[] = {
    {"in_cgroup", t_in_cgroup},
    {"signal_every_process_of_the_cgroup",
     t_signal_every_process_of_the_cgroup},
    {"crossing_asks_once", t_crossing_asks_once},
    {"rearmed_below", t_rearmed_below},
    {"rate_limited", t_rate_limited},
    {"unanswered_tried_again", t_unanswered_tried_again},
    {"off_and_no_limit", t_off_and_no_limit},
    {"environ_names_the_profiler", t_environ_names_the_profiler},
    {"sigcgt", t_sigcgt},
    {"signal_to_a_profiler_that_asked", t_signal_to_a_profiler_that_asked},
    {"no_signal_without_handler", t_no_signal_without_handler},
    {"no_signal_without_environment", t_no_signal_without_environment},
    {"signal_named_by_environment", t_signal_named_by_environment},
    {"child_of_an_init", t_child_of_an_init},
    {"maps_name_the_profiler", t_maps_name_the_profiler},
    {"signal_to_a_profiler_whose_environment_is_gone",
     t_signal_to_a_profiler_whose_environment_is_gone},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "--preoom-child") == 0)
        return child_main(argv);
    return th_main(argc, argv, cases);
}

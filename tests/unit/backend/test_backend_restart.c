/*
 * test_backend_restart.c — the backends' restart, pause, address and probe,
 * through the backend interface itself on local:exec and (when an engine
 * answers; else each case skips saying why) local:docker, with a small
 * program compiled here (statically, so the plan image FROM scratch runs
 * it too):
 *   - a restart runs the same program with the same environment, folder
 *     and cgroup (local:docker: the same container, whose memory cgroup
 *     holds its id), another pid, and appends to run.out and run.err;
 *     BACKEND_STARTED and BACKEND_EXITED come again; a restart before the
 *     end was read is EBUSY;
 *   - pause stops a ticking counter file from growing, unpause lets it
 *     grow again, and a paused instance still ends on stop(SIGTERM);
 *   - a probe returns its exit status, sees the instance's environment
 *     (and on local:exec its folder), and is killed at its timeout;
 *   - address is 127.0.0.1 on local:exec and the container's address on
 *     the run's network on local:docker.
 */
#include "backend/backend.h"
#include "base/fsat.h"
#include "base/util.h"
#include "config/config.h"
#include "docker/docker.h"
#include "th.h"
#include "th_proc.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PLAN "tyrestart"

static const char prog_src[] =
    "#include <fcntl.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "#include <string.h>\n#include <unistd.h>\n"
    "static void cgline(char *buf, size_t n) {\n"
    "  FILE *f = fopen(\"/proc/self/cgroup\", \"r\"); char l[512];\n"
    "  buf[0] = 0;\n"
    "  while (f && fgets(l, sizeof(l), f))\n"
    "    if (strstr(l, \":memory:\")) { l[strcspn(l, \"\\n\")] = 0;\n"
    "      snprintf(buf, n, \"%s\", strchr(strchr(l, ':') + 1, ':') + 1); }\n"
    "  if (f) fclose(f);\n"
    "}\n"
    "int main(int argc, char **argv) {\n"
    "  const char *out = getenv(\"TEST_OUTPUTS_PATH\");\n"
    "  const char *mode = getenv(\"TICK_MODE\");\n"
    "  char p[512], cwd[512], cg[512]; FILE *f;\n"
    "  if (argc > 2 && !strcmp(argv[1], \"code\"))\n"
    "    return strcmp(getenv(\"TICK_X\") ? getenv(\"TICK_X\") : \"\", "
    "\"42\")\n"
    "      ? 99 : atoi(argv[2]);\n"
    "  if (argc > 1 && !strcmp(argv[1], \"sleep\")) { sleep(30); return 0; }\n"
    "  cgline(cg, sizeof(cg));\n"
    "  snprintf(p, sizeof(p), \"%s/runs\", out);\n"
    "  if ((f = fopen(p, \"a\")) != NULL) {\n"
    "    fprintf(f, \"%d %s %s %s\\n\", (int)getpid(), getenv(\"TICK_X\"),\n"
    "            getcwd(cwd, sizeof(cwd)), cg); fclose(f); }\n"
    "  printf(\"out %s\\n\", getenv(\"TICK_X\")); fflush(stdout);\n"
    "  fprintf(stderr, \"err line\\n\");\n"
    "  if (mode && !strcmp(mode, \"tick\")) {\n"
    "    snprintf(p, sizeof(p), \"%s/ticks\", out);\n"
    "    for (;;) { int fd = open(p, O_WRONLY | O_APPEND | O_CREAT, 0644);\n"
    "      if (fd >= 0) { if (write(fd, \"x\\n\", 2) < 0) return 4;\n"
    "                     close(fd); }\n"
    "      usleep(20000); }\n"
    "  }\n"
    "  return 3;\n"
    "}\n";

/* One instance of group "g" (which a stage restarts) on a backend. */
struct drv {
    struct backend *be;
    struct composition_stage stages[2];
    struct composition_group group;
    struct composition comp;
    struct backend_instance in;
    char *env[5];
    char run_id[64];
    char *run_dir, *outdir, *tempdir, *bin;
    int run_fd;
    bool docker;
};

static char *no_args[] = {NULL};
static char *no_env[] = {NULL};

static char *
compile_prog(void)
{
    char *src = path_join(th_tmpdir(), "prog.c");
    char *bin = path_join(th_tmpdir(), PLAN);
    struct err err = {0};

    CHECK(file_write_atomic(src, prog_src, strlen(prog_src), &err) == 0);
    CHECK_EQ_INT(
        th_run((char *const[]){"cc", "-static", "-O1", "-o", bin, src, NULL}),
        0);
    free(src);
    return bin;
}

static void
drv_init(struct drv *x, bool docker, const char *mode)
{
    struct err err = {0};

    memset(x, 0, sizeof(*x));
    x->docker = docker;
    snprintf(x->run_id, sizeof(x->run_id), "trs%d", (int)getpid());
    x->bin = compile_prog();
    x->run_dir = path_join(th_tmpdir(), "run");
    x->outdir = path_join(x->run_dir, "g/0");
    x->tempdir = path_join(th_tmpdir(), "temp");
    CHECK(mkdir_p(x->run_dir, &err) == 0);
    x->run_fd = fsat_root(x->run_dir, &err);
    x->group = (struct composition_group){
        .id = "g", .instances = 1, .args = no_args, .env = no_env};
    x->stages[0] = (struct composition_stage){.kind = STAGE_RUN, .name = "a"};
    x->stages[1] = (struct composition_stage){.kind = STAGE_RESTART};
    x->comp =
        (struct composition){.runner = docker ? "local:docker" : "local:exec",
                             .network = docker ? "bridge" : NULL,
                             .total_instances = 1,
                             .stages = x->stages,
                             .nstages = 2,
                             .groups = &x->group,
                             .ngroups = 1};
    x->env[0] = xasprintf("TEST_OUTPUTS_PATH=%s", x->outdir);
    x->env[1] = xasprintf("TICK_MODE=%s", mode);
    x->env[2] = xstrdup("TICK_X=42");
    x->env[3] = xstrdup("PATH=/usr/bin:/bin");
    x->in = (struct backend_instance){.group = "g",
                                      .outdir = x->outdir,
                                      .tempdir = x->tempdir,
                                      .env = x->env};
}

/* The backend made and started, or the case skipped (no engine). */
static void
drv_start(struct drv *x)
{
    static char why[ERR_MSG_MAX + 64];
    struct backend_config cfg = {.comp = &x->comp,
                                 .run_id = x->run_id,
                                 .run_dir = x->run_dir,
                                 .binary = x->bin,
                                 .plan_name = PLAN,
                                 .run_fd = x->run_fd};
    struct err err = {0};

    if (x->docker) {
        struct docker *d = docker_new(NULL, &err);

        if (d == NULL) {
            snprintf(why, sizeof(why), "no Docker engine answers: %s", err.msg);
            th_skip(why);
        }
        docker_destroy(&d);
    }
    x->be = x->docker ? backend_docker_new(&cfg, &err)
                      : backend_exec_new(&cfg, &err);
    CHECK(x->be != NULL);
    CHECK_MSG(x->be->ops->prepare(x->be, &err) == 0, "%s", err.msg);
    CHECK_MSG(x->be->ops->start_all(x->be, &x->in, 1, &err) == 0, "%s",
              err.msg);
}

static void
drv_release(struct drv *x)
{
    cleanup_free char *image = NULL;
    struct docker *d;

    if (x->be != NULL && x->be->image[0] != '\0')
        image = xstrdup(x->be->image);
    backend_destroy(&x->be);
    if (image != NULL && (d = docker_new(NULL, NULL)) != NULL) {
        docker_image_remove(d, image, true, NULL);
        docker_destroy(&d);
    }
    for (int i = 0; x->env[i] != NULL; i++)
        free(x->env[i]);
    close(x->run_fd);
    free(x->run_dir);
    free(x->outdir);
    free(x->tempdir);
    free(x->bin);
}

/* The next event of type for the instance, within ms; false when none. */
static bool
wait_event(struct drv *x, enum backend_event_type type, int ms,
           struct backend_event *ev)
{
    int64_t until = now_mono_ns() + (int64_t)ms * 1000000;

    while (now_mono_ns() < until) {
        struct pollfd p = {x->be->ops->notify_fd(x->be), POLLIN, 0};

        while (x->be->ops->next_event(x->be, ev) > 0)
            if (ev->type == type)
                return true;
        (void)poll(&p, 1, 50);
    }
    return false;
}

static char *
read_out(const struct drv *x, const char *name)
{
    cleanup_free char *p = path_join(x->outdir, name);

    return file_read(p, 1 << 20, NULL, NULL);
}

/* name in the outputs folder as it is once it holds want (within 10 s). */
static char *
wait_file(const struct drv *x, const char *name, const char *want)
{
    char *s = NULL;

    for (int i = 0; i < 1000; i++) {
        free(s);
        s = read_out(x, name);
        if (s != NULL && strstr(s, want) != NULL)
            break;
        usleep(10000);
    }
    return s;
}

static size_t
count_lines(const char *s)
{
    size_t n = 0;

    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- restart ------------------------------------------------------------ */

static void
check_runs(const struct drv *x, const char *cgdir)
{
    cleanup_free char *runs = wait_file(x, "runs", "\n");
    char pid1[32] = "", pid2[32] = "", x1[32] = "", x2[32] = "";
    char cwd1[512] = "", cwd2[512] = "", cg1[512] = "", cg2[512] = "";

    CHECK_EQ_INT(count_lines(runs), 2);
    CHECK(runs != NULL &&
          sscanf(runs,
                 "%31s %31s %511s %511s\n%31s %31s "
                 "%511s %511s",
                 pid1, x1, cwd1, cg1, pid2, x2, cwd2, cg2) == 8);
    if (!x->docker) /* in a container, its pid namespace's pid 2 again */
        CHECK(strcmp(pid1, pid2) != 0);
    CHECK_EQ_STR(x1, "42");
    CHECK_EQ_STR(x2, "42");
    CHECK_EQ_STR(cwd1, cwd2);
    CHECK_EQ_STR(cg1, cg2);
    if (!x->docker)
        CHECK_EQ_STR(cwd1, x->tempdir);
    /* The process ran in the cgroup the monitor is told of (a container
     * that ended at once has none: pause_case looks at a running one). */
    if (x->docker && cgdir == NULL)
        return;
    CHECK_MSG(cgdir != NULL && strlen(cgdir) >= strlen(cg1) &&
                  strcmp(cgdir + strlen(cgdir) - strlen(cg1), cg1) == 0,
              "cgroup %s, the process's %s", cgdir ? cgdir : "(none)", cg1);
}

static void
restart_case(bool docker)
{
    struct drv x;
    struct backend_event ev;
    struct err err = {0};
    enum ty__cgver ver;
    cleanup_free char *cg1 = NULL;
    cleanup_free char *cg2 = NULL;
    cleanup_free char *out = NULL;
    cleanup_free char *errs = NULL;

    drv_init(&x, docker, "exit");
    drv_start(&x);
    CHECK(wait_event(&x, BACKEND_STARTED, 60000, &ev));
    CHECK(wait_event(&x, BACKEND_EXITED, 30000, &ev));
    CHECK_EQ_INT(ev.status, 3);
    cg1 = x.be->ops->memory_cgroup(x.be, 0, &ver);
    CHECK_EQ_INT(x.be->ops->restart(x.be, 0, &err), 0);
    err_clear(&err);
    /* Not again before this run's end was read. */
    CHECK_EQ_INT(x.be->ops->restart(x.be, 0, &err), -1);
    CHECK_EQ_INT(err.code, EBUSY);
    CHECK(wait_event(&x, BACKEND_STARTED, 30000, &ev));
    CHECK(wait_event(&x, BACKEND_EXITED, 30000, &ev));
    CHECK_EQ_INT(ev.status, 3);
    cg2 = x.be->ops->memory_cgroup(x.be, 0, &ver);
    if (!docker || cg1 != NULL)
        CHECK_EQ_STR(cg2, cg1);
    check_runs(&x, cg2);
    out = wait_file(&x, "run.out", "out 42\nout 42\n");
    CHECK_EQ_STR(out, "out 42\nout 42\n");
    errs = wait_file(&x, "run.err", "err line\nerr line\n");
    CHECK_EQ_STR(errs, "err line\nerr line\n");
    drv_release(&x);
}

static void
t_exec_restart(void)
{
    restart_case(false);
}

static void
t_docker_restart(void)
{
    restart_case(true);
}

/* ---- pause -------------------------------------------------------------- */

static size_t
ticks(const struct drv *x)
{
    cleanup_free char *s = read_out(x, "ticks");

    return s ? strlen(s) : 0;
}

/* Started again while it would run: the monitor's cgroup is the same
 * (local:docker: the container's), the pid another, and it ticks on. */
static void
restart_running(struct drv *x)
{
    struct backend_event ev;
    struct err err = {0};
    enum ty__cgver ver;
    cleanup_free char *cg1 = x->be->ops->memory_cgroup(x->be, 0, &ver);
    cleanup_free char *cg2 = NULL;
    pid_t pid1 = x->be->ops->host_pid(x->be, 0), pid2;
    size_t s1 = ticks(x), s2;

    CHECK_MSG(x->be->ops->restart(x->be, 0, &err) == 0, "%s", err.msg);
    CHECK(wait_event(x, BACKEND_STARTED, 30000, &ev));
    cg2 = x->be->ops->memory_cgroup(x->be, 0, &ver);
    pid2 = x->be->ops->host_pid(x->be, 0);
    CHECK(cg2 != NULL);
    if (cg1 != NULL)
        CHECK_EQ_STR(cg2, cg1);
    CHECK(pid2 > 0 && pid2 != pid1);
    CHECK(pid2 > 0 && kill(pid2, 0) == 0);
    for (int i = 0; i < 500 && ticks(x) <= s1; i++)
        usleep(10000);
    s2 = ticks(x);
    CHECK_MSG(s2 > s1, "after the restart: %zu bytes, then %zu", s1, s2);
    x->be->ops->stop(x->be, 0, true);
    CHECK(wait_event(x, BACKEND_EXITED, 10000, &ev));
}

static void
pause_case(bool docker)
{
    struct drv x;
    struct backend_event ev;
    struct err err = {0};
    size_t s1, s2, s3;
    int64_t t0;

    drv_init(&x, docker, "tick");
    drv_start(&x);
    CHECK(wait_event(&x, BACKEND_STARTED, 60000, &ev));
    for (int i = 0; i < 500 && ticks(&x) == 0; i++)
        usleep(10000);
    CHECK_MSG(x.be->ops->pause(x.be, 0, true, &err) == 0, "%s", err.msg);
    usleep(100000);
    s1 = ticks(&x);
    usleep(500000);
    s2 = ticks(&x);
    CHECK_MSG(s1 > 0 && s2 == s1, "paused: %zu bytes, then %zu", s1, s2);
    CHECK_MSG(x.be->ops->pause(x.be, 0, false, &err) == 0, "%s", err.msg);
    usleep(500000);
    s3 = ticks(&x);
    CHECK_MSG(s3 > s2, "unpaused: %zu bytes, then %zu", s2, s3);
    /* Paused, it still ends on SIGTERM. */
    CHECK(x.be->ops->pause(x.be, 0, true, &err) == 0);
    t0 = now_mono_ns();
    x.be->ops->stop(x.be, 0, false);
    CHECK(wait_event(&x, BACKEND_EXITED, 10000, &ev));
    CHECK(now_mono_ns() - t0 < 8000000000LL);
    if (!docker)
        CHECK_EQ_INT(ev.signal, SIGTERM);
    restart_running(&x);
    err_clear(&err);
    CHECK_EQ_INT(x.be->ops->pause(x.be, 0, true, &err), -1);
    CHECK_EQ_INT(err.code, EBUSY);
    drv_release(&x);
}

static void
t_exec_pause(void)
{
    pause_case(false);
}

static void
t_docker_pause(void)
{
    pause_case(true);
}

/* ---- probe and address -------------------------------------------------- */

static int
probe(struct drv *x, int64_t ms, const char *const *argv, struct err *err)
{
    err_clear(err);
    return x->be->ops->probe(x->be, 0, argv, ms, err);
}

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static void
probe_case(bool docker)
{
    struct drv x;
    struct backend_event ev;
    struct err err = {0};
    char addr[64] = "";
    cleanup_free char *prog = NULL;
    int64_t t0;

    drv_init(&x, docker, "tick");
    prog = docker ? xstrdup("/plan/" PLAN) : xstrdup(x.bin);
    drv_start(&x);
    CHECK(wait_event(&x, BACKEND_STARTED, 60000, &ev));
    CHECK_EQ_INT(probe(&x, 10000, ARGV(prog, "code", "7"), &err), 7);
    CHECK_EQ_INT(probe(&x, 10000, ARGV(prog, "code", "0"), &err), 0);
    if (!docker) {
        cleanup_free char *pwd = path_join(x.tempdir, "probe.pwd");
        cleanup_free char *got = NULL;

        /* a bare name, found in the instance's PATH, in its folder */
        CHECK_EQ_INT(
            probe(&x, 10000, ARGV("sh", "-c", "pwd > probe.pwd"), &err), 0);
        got = file_read(pwd, 4096, NULL, NULL);
        CHECK(got != NULL && strncmp(got, x.tempdir, strlen(x.tempdir)) == 0);
    }
    t0 = now_mono_ns();
    CHECK_EQ_INT(probe(&x, 300, ARGV(prog, "sleep"), &err), -1);
    CHECK_EQ_INT(err.code, ETIMEDOUT);
    CHECK_MSG(now_mono_ns() - t0 < 5000000000LL, "took %lld ms",
              (long long)((now_mono_ns() - t0) / 1000000));
    CHECK(probe(&x, 2000, ARGV("/no/such/probe"), &err) != 0);
    CHECK_EQ_INT(x.be->ops->address(x.be, 0, addr, sizeof(addr)), 0);
    if (docker)
        CHECK_MSG(strcmp(addr, "127.0.0.1") != 0 && strchr(addr, '.') != NULL,
                  "address %s", addr);
    else
        CHECK_EQ_STR(addr, "127.0.0.1");
    x.be->ops->stop(x.be, 0, true);
    CHECK(wait_event(&x, BACKEND_EXITED, 10000, &ev));
    drv_release(&x);
}

static void
t_exec_probe(void)
{
    probe_case(false);
}

static void
t_docker_probe(void)
{
    probe_case(true);
}

static const struct th_case cases[] = {
    {"exec_restart", t_exec_restart},
    {"exec_pause", t_exec_pause},
    {"exec_probe", t_exec_probe},
    {"docker_restart", t_docker_restart},
    {"docker_pause", t_docker_pause},
    {"docker_probe", t_docker_probe},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    sigset_t set;

    /* As the runner does before any thread: local:exec reads SIGCHLD
     * through a signalfd. */
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    return th_main(argc, argv, cases);
}

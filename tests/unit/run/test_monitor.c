/*
 * test_monitor.c — the memory monitor: a child allocating 200 MiB under a
 * 256 MiB limit shows the rise in memory.csv; an OOM kill is detected with
 * its time; a cgroup that vanishes keeps its figures; exact rows on a fake
 * v2 tree; the by-path fallback when file descriptors run out, and an
 * instance the monitor loses (it says so) rather than taking for ended.
 *
 * With MONITOR_BENCH=N in the environment it runs no test but measures
 * sampling N real cgroups through open file descriptors and by path.
 */
#include "backend/cgroup_int.h"
#include "base/fsat.h"
#include "base/strbuf.h"
#include "run/monitor_int.h"
#include "th.h"
#include "th_files.h"
#include "th_proc.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024ll * 1024)

static int64_t
now_ms(void)
{
    return now_mono_ns() / 1000000;
}

static struct cgroup *
real_cgroup(struct cgroup_sys **sys, const char *name, uint64_t limit)
{
    struct err err = {0};
    struct cgroup *cg;
    char rel[128];

    *sys = cgroup_sys_new();
    if (!cgroup_sys_usable(*sys)) {
        static char why[600];

        snprintf(why, sizeof(why), "%s", cgroup__sys_warning(*sys));
        cgroup_sys_destroy(sys);
        th_skip(why);
    }
    snprintf(rel, sizeof(rel), "test-%d/%s", (int)getpid(), name);
    cg = cgroup__create(*sys, rel, limit, 0, 0, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    return cg;
}

static int
enter(const void *cg)
{
    return cgroup__attach_self_prepared(cg);
}

static pid_t
spawn_alloc(const struct cgroup *cg, const char *mib, const char *step,
            const char *hold)
{
    return th_spawn_alloc(enter, cg, mib, step, hold);
}
/* Sample whenever due until pid exits; returns its wait status. */
static int
watch_until_exit(struct monitor *mon, pid_t pid)
{
    int status = 0;

    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);

        if (r == pid || (r < 0 && errno != EINTR))
            return status;
        if (now_ms() >= monitor__next_due_ms(mon))
            monitor__sample(mon, now_ms());
        usleep(5000);
    }
}

/* Column col (0-based) of each data row of a memory.csv, as numbers; empty
 * cells are -1. Returns the number of rows. */
static size_t
csv_column(const char *csv, int col, int64_t *out, size_t max)
{
    const char *p = strchr(csv, '\n');
    size_t n = 0;

    while (p != NULL && p[1] != '\0' && n < max) {
        const char *f = p + 1;

        for (int c = 0; c < col; c++)
            f = strchr(f, ',') + 1;
        out[n++] = (*f == ',' || *f == '\n') ? -1 : strtoll(f, NULL, 10);
        p = strchr(p + 1, '\n');
    }
    return n;
}

/* memory.csv and memory.csv.partial in the case's folder. */
static const struct monitor_file *
mf(void)
{
    static struct monitor_file f = {.dirfd = -1};
    static char dir[4096];

    /* again when the case's folder changed (cases share one process
     * under valgrind) */
    if (strcmp(dir, th_tmpdir()) != 0) {
        if (f.dirfd >= 0)
            close(f.dirfd);
        snprintf(dir, sizeof(dir), "%s", th_tmpdir());
        f.dirfd = fsat_root(th_tmpdir(), NULL);
        f.partial = "memory.csv.partial";
        f.final = "memory.csv";
    }
    return &f;
}

/* ---- real cgroups ------------------------------------------------------ */

static void
t_rise_in_csv(void)
{
    struct cgroup_sys *sys;
    struct cgroup *cg = real_cgroup(&sys, "rise-0", 256 * MiB);
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    char *partial = xasprintf("%s.partial", csv_path);
    struct monitor *mon = monitor__new(20, now_ms());
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};
    int64_t usage[4096], t[4096];
    size_t rows, i_max = 0, mid = 0;
    char *csv;
    int status;

    if (cg == NULL)
        goto out;
    in = monitor__add(mon, "g/0", cgroup__memory_dir(cg), cgroup__version(cg),
                      mf(), now_ms(), &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    if (in == NULL)
        goto out;
    status = watch_until_exit(mon, spawn_alloc(cg, "200", "10", "200"));
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x",
              status);
    CHECK_EQ_INT(monitor__instance_ended(mon, in, now_ms(), &err), 0);
    csv = th_read(csv_path, NULL);
    CHECK_MSG(csv != NULL, "no %s", csv_path);
    CHECK(!path_exists(partial));
    if (csv == NULL)
        goto out;
    CHECK(strncmp(csv,
                  "time,t_ms,usage_bytes,anon_bytes,file_bytes,"
                  "peak_bytes,limit_bytes,oom_kills\n",
                  70) == 0);
    rows = csv_column(csv, 2, usage, 4096);
    CHECK_EQ_INT(csv_column(csv, 1, t, 4096), rows);
    CHECK_MSG(rows >= 10, "%zu rows", rows);
    for (size_t i = 1; i < rows; i++) {
        CHECK(t[i] >= t[i - 1]);
        if (usage[i] > usage[i_max])
            i_max = i;
    }
    CHECK_MSG(usage[i_max] >= 190 * MiB, "max usage %lld",
              (long long)usage[i_max]);
    CHECK_MSG(usage[0] < 64 * MiB, "first usage %lld", (long long)usage[0]);
    /* The rise is gradual: some rows sit between the start and the top. */
    for (size_t i = 0; i < i_max; i++)
        mid += usage[i] > 60 * MiB && usage[i] < 150 * MiB;
    CHECK_MSG(mid >= 2, "%zu rows during the rise", mid);
    monitor__stats(in, &st);
    CHECK(st.peak >= 190 * MiB);
    CHECK(st.peak_t_ms > 0);
    CHECK_EQ_INT(st.limit, 256 * MiB);
    CHECK(!st.oom);
    CHECK_EQ_INT(st.oom_kills, 0);
    CHECK(st.ended);
    CHECK_EQ_INT(st.samples, rows);
    CHECK(st.final >= 0 && st.final < 64 * MiB);
    free(csv);
out:
    monitor__destroy(&mon);
    cgroup__destroy(&cg);
    cgroup_sys_destroy(&sys);
    free(partial);
    free(csv_path);
}

static void
t_oom_detected(void)
{
    struct cgroup_sys *sys;
    struct cgroup *cg = real_cgroup(&sys, "oom-0", 64 * MiB);
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    int64_t start = now_ms();
    struct monitor *mon = monitor__new(10, start);
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};
    int64_t ooms[4096];
    size_t rows;
    char *csv;
    int status;

    if (cg == NULL)
        goto out;
    in = monitor__add(mon, "g/1", cgroup__memory_dir(cg), cgroup__version(cg),
                      mf(), now_ms(), &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    if (in == NULL)
        goto out;
    status = watch_until_exit(mon, spawn_alloc(cg, "200", "20", "0"));
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK_EQ_INT(monitor__instance_ended(mon, in, now_ms(), &err), 0);
    monitor__stats(in, &st);
    CHECK(st.oom);
    CHECK(st.oom_kills >= 1);
    CHECK(st.oom_t_ms >= 0 && st.oom_t_ms <= now_ms() - start);
    CHECK_MSG(st.usage_before_oom > 0, "before %lld",
              (long long)st.usage_before_oom);
    CHECK(st.peak >= 60 * MiB && st.peak <= 64 * MiB);
    CHECK(st.peak_t_ms <= st.oom_t_ms);
    csv = th_read(csv_path, NULL);
    rows = csv ? csv_column(csv, 7, ooms, 4096) : 0;
    CHECK(rows >= 2);
    CHECK(rows > 0 && ooms[0] == 0 && ooms[rows - 1] >= 1);
    free(csv);
out:
    monitor__destroy(&mon);
    cgroup__destroy(&cg);
    cgroup_sys_destroy(&sys);
    free(csv_path);
}

static void
t_real_vanish(void)
{
    struct cgroup_sys *sys;
    struct cgroup *cg = real_cgroup(&sys, "gone-0", 0);
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    struct monitor *mon = monitor__new(10, 0);
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};
    int status;

    if (cg == NULL)
        goto out;
    in = monitor__add(mon, "g/2", cgroup__memory_dir(cg), cgroup__version(cg),
                      mf(), 10, &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    if (in == NULL)
        goto out;
    status = watch_until_exit(mon, spawn_alloc(cg, "16", "0", "300"));
    CHECK(WIFEXITED(status));
    monitor__sample(mon, now_ms());
    monitor__stats(in, &st);
    CHECK(!st.gone);
    CHECK(st.peak >= 16 * MiB);
    CHECK_EQ_INT(cgroup__remove(cg, &err), 0);
    monitor__sample(mon, now_ms() + 1);
    monitor__stats(in, &st);
    CHECK(st.gone);
    CHECK_EQ_INT(monitor__instance_ended(mon, in, now_ms() + 2, &err), 0);
    monitor__stats(in, &st);
    CHECK(st.peak >= 16 * MiB);
    CHECK_EQ_INT(st.final, st.last);
    CHECK(path_exists(csv_path));
out:
    monitor__destroy(&mon);
    cgroup__destroy(&cg);
    cgroup_sys_destroy(&sys);
    free(csv_path);
}

/* ---- fake trees -------------------------------------------------------- */

static char *
fake_v2_cgroup(void)
{
    char *dir = path_join(th_tmpdir(), "cg");

    mkdir_p(dir, NULL);
    th_write(dir, "memory.current", "1000\n");
    th_write(dir, "memory.peak", "5000\n");
    th_write(dir, "memory.max", "max\n");
    th_write(dir, "memory.stat",
             "anon 600\nfile 300\nkernel 100\n"
             "anon_thp 0\nfile_mapped 20\n");
    th_write(dir, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
    return dir;
}

static const char fake_rows[] = ",0,1000,600,300,5000,,0\n"
                                ",250,7000,6600,300,7000,1048576,0\n"
                                ",500,2000,1600,300,8000,1048576,1\n"
                                ",600,2500,2100,300,8000,1048576,1\n";

/* Data rows of csv without their first (wall clock) column. */
static char *
rows_without_time(const char *csv)
{
    struct strbuf sb;
    const char *p = strchr(csv, '\n');

    strbuf_init(&sb);
    while (p != NULL && p[1] != '\0') {
        const char *comma = strchr(p + 1, ',');
        const char *end = strchr(p + 1, '\n');

        if (comma == NULL || end == NULL || comma > end)
            break;
        strbuf_add(&sb, comma, (size_t)(end - comma + 1));
        p = end;
    }
    return strbuf_detach(&sb);
}

static void
t_v2_fake_rows(void)
{
    char *dir = fake_v2_cgroup();
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    char *partial = xasprintf("%s.partial", csv_path);
    struct monitor *mon = monitor__new(250, 1000);
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};
    char *csv, *rows;

    in = monitor__add(mon, "g/0", dir, TY_CG_V2, mf(), 1000, &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    CHECK(path_exists(partial) && !path_exists(csv_path));
    CHECK_EQ_INT(monitor__next_due_ms(mon), 1000);
    /* Due at once, but sampled this very millisecond: no second row. */
    monitor__sample(mon, 1000);
    CHECK_EQ_INT(monitor__next_due_ms(mon), 1250);
    th_write(dir, "memory.current", "7000\n");
    th_write(dir, "memory.peak", "7000\n");
    th_write(dir, "memory.max", "1048576\n");
    th_write(dir, "memory.stat", "anon 6600\nfile 300\n");
    monitor__sample(mon, 1250);
    CHECK_EQ_INT(monitor__next_due_ms(mon), 1500);
    th_write(dir, "memory.current", "2000\n");
    th_write(dir, "memory.peak", "8000\n");
    th_write(dir, "memory.stat", "anon 1600\nfile 300\n");
    th_write(dir, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
    monitor__sample(mon, 1500);
    th_write(dir, "memory.current", "2500\n");
    th_write(dir, "memory.stat", "anon 2100\nfile 300\n");
    CHECK_EQ_INT(monitor__instance_ended(mon, in, 1600, &err), 0);
    CHECK(!path_exists(partial));
    csv = th_read(csv_path, NULL);
    CHECK(csv != NULL);
    rows = csv ? rows_without_time(csv) : NULL;
    CHECK_EQ_STR(rows, fake_rows);
    CHECK(csv != NULL && strstr(csv, "\n20") != NULL &&
          strstr(csv, "Z,250,") != NULL);
    monitor__stats(in, &st);
    CHECK_EQ_INT(st.peak, 8000);
    CHECK_EQ_INT(st.peak_t_ms, 500);
    CHECK(st.oom);
    CHECK_EQ_INT(st.oom_t_ms, 500);
    CHECK_EQ_INT(st.usage_before_oom, 7000);
    CHECK_EQ_INT(st.final, 2500);
    CHECK_EQ_INT(st.last, 2500);
    CHECK_EQ_INT(st.limit, 1048576);
    CHECK_EQ_INT(st.samples, 4);
    /* Ended instances are not sampled again. */
    monitor__sample(mon, 1750);
    monitor__stats(in, &st);
    CHECK_EQ_INT(st.samples, 4);
    free(rows);
    free(csv);
    monitor__destroy(&mon);
    free(partial);
    free(csv_path);
    free(dir);
}

/* A restart: down while the cgroup is gone (nothing sampled, no row),
 * then up on the cgroup made again — rows go on in the same memory.csv
 * and the peak carries over the restart. */
static void
t_down_up(void)
{
    char *dir = fake_v2_cgroup();
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    struct monitor *mon = monitor__new(250, 0);
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};
    char *csv, *rows;

    in = monitor__add(mon, "g/0", dir, TY_CG_V2, mf(), 0, &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    th_write(dir, "memory.current", "9000\n");
    th_write(dir, "memory.peak", "9000\n");
    monitor__instance_down(mon, in, 100);
    CHECK_EQ_INT(rm_rf(dir, NULL), 0);
    monitor__sample(mon, 250);
    monitor__sample(mon, 500);
    monitor__stats(in, &st);
    CHECK(!st.gone && !st.ended);
    CHECK_EQ_INT(st.samples, 2);
    free(fake_v2_cgroup());
    th_write(dir, "memory.current", "3000\n");
    th_write(dir, "memory.peak", "3000\n");
    CHECK_EQ_INT(monitor__instance_up(mon, in, dir, TY_CG_V2, 0, 600, &err), 0);
    monitor__sample(mon, 750);
    CHECK_EQ_INT(monitor__instance_ended(mon, in, 800, &err), 0);
    monitor__stats(in, &st);
    CHECK_EQ_INT(st.samples, 5);
    CHECK_EQ_INT(st.peak, 9000);
    CHECK_EQ_INT(st.final, 3000);
    csv = th_read(csv_path, NULL);
    rows = csv ? rows_without_time(csv) : NULL;
    CHECK_EQ_STR(rows, ",0,1000,600,300,5000,,0\n"
                       ",100,9000,600,300,9000,,0\n"
                       ",600,3000,600,300,3000,,0\n"
                       ",750,3000,600,300,3000,,0\n"
                       ",800,3000,600,300,3000,,0\n");
    /* Up on a cgroup that is not there: gone, with a message. */
    in = monitor__add(mon, "g/1", dir, TY_CG_V2, mf(), 900, &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    monitor__instance_down(mon, in, 950);
    CHECK_EQ_INT(rm_rf(dir, NULL), 0);
    CHECK_EQ_INT(monitor__instance_up(mon, in, dir, TY_CG_V2, 0, 1000, &err),
                 -1);
    CHECK_CONTAINS(err.msg, "g/1: memory monitor");
    monitor__stats(in, &st);
    CHECK(st.gone);
    free(rows);
    free(csv);
    monitor__destroy(&mon);
    free(csv_path);
    free(dir);
}

static void
t_backend_reports_oom(void)
{
    char *dir = fake_v2_cgroup();
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    struct monitor *mon = monitor__new(250, 0);
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};

    in = monitor__add(mon, "g/0", dir, TY_CG_V2, mf(), 100, &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    th_write(dir, "memory.current", "4000\n");
    monitor__sample(mon, 300);
    monitor__oom_reported(mon, in, 420);
    monitor__stats(in, &st);
    CHECK(st.oom);
    CHECK_EQ_INT(st.oom_t_ms, 420);
    CHECK_EQ_INT(st.usage_before_oom, 4000);
    CHECK_EQ_INT(st.samples, 3);
    monitor__destroy(&mon);
    CHECK(path_exists(csv_path));
    free(csv_path);
    free(dir);
}

/* Out of file descriptors, an instance reads by path; and by path, a
 * removed cgroup directory shows as gone. */
static void
t_by_path_and_vanish(void)
{
    char *dir = fake_v2_cgroup();
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    struct monitor *mon = monitor__new(250, 0);
    struct rlimit old, low;
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};
    const struct monitor_file *f = mf();
    int fd = open("/dev/null", O_RDONLY);

    /* Leave two descriptors free: one cgroup file, then the CSV. */
    getrlimit(RLIMIT_NOFILE, &old);
    low = old;
    low.rlim_cur = (rlim_t)fd + 2;
    close(fd);
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
    in = monitor__add(mon, "g/0", dir, TY_CG_V2, f, 0, &err);
    setrlimit(RLIMIT_NOFILE, &old);
    CHECK_MSG(in != NULL, "%s", err.msg);
    if (in == NULL)
        goto out;
    th_write(dir, "memory.current", "9000\n");
    monitor__sample(mon, 250);
    CHECK(rm_rf(dir, &err) == 0);
    monitor__sample(mon, 500);
    CHECK_EQ_INT(monitor__instance_ended(mon, in, 600, &err), 0);
    monitor__stats(in, &st);
    CHECK(st.gone);
    CHECK_EQ_INT(st.lost_errno, 0); /* gone with its cgroup, not lost */
    CHECK_EQ_INT(st.samples, 2);
    CHECK_EQ_INT(st.last, 9000);
    CHECK_EQ_INT(st.final, 9000);
    CHECK_EQ_INT(st.peak, 9000);
    CHECK_EQ_INT(st.peak_t_ms, 250);
out:
    monitor__destroy(&mon);
    free(csv_path);
    free(dir);
}

/* The first descriptor number open() would return. */
static int
next_fd(void)
{
    int fd = open("/dev/null", O_RDONLY);

    close(fd);
    return fd;
}

/* A monitor reading by path that cannot open the cgroup's files any more
 * (EMFILE) has lost the instance, which may still run: it says so with
 * the reason and the time, and keeps the figures it had. */
static void
t_lost_instance(void)
{
    char *dir = fake_v2_cgroup();
    const struct monitor_file *f = mf();
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    struct monitor *mon = monitor__new(250, 0);
    struct rlimit old, low;
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};

    getrlimit(RLIMIT_NOFILE, &old);
    low = old;
    low.rlim_cur = (rlim_t)next_fd() + 2; /* by path, as in the test above */
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
    in = monitor__add(mon, "g/0", dir, TY_CG_V2, f, 0, &err);
    setrlimit(RLIMIT_NOFILE, &old);
    CHECK_MSG(in != NULL, "%s", err.msg);
    if (in == NULL)
        goto out;
    th_write(dir, "memory.current", "9000\n");
    monitor__sample(mon, 250);
    low.rlim_cur = (rlim_t)next_fd(); /* no descriptor left at all */
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
    monitor__sample(mon, 500);
    setrlimit(RLIMIT_NOFILE, &old);
    monitor__sample(mon, 750); /* a lost instance is not read again */
    CHECK_EQ_INT(monitor__instance_ended(mon, in, 800, &err), 0);
    monitor__stats(in, &st);
    CHECK_EQ_INT(st.lost_errno, EMFILE);
    CHECK_EQ_INT(st.lost_t_ms, 500);
    CHECK(st.gone);
    CHECK_EQ_INT(st.samples, 2);
    CHECK_EQ_INT(st.last, 9000);
    CHECK_EQ_INT(st.peak, 9000);
out:
    monitor__destroy(&mon);
    CHECK(path_exists(csv_path)); /* the rows it had are kept */
    free(csv_path);
    free(dir);
}

/* By path, a usage file that cannot be read (here: a folder in its place)
 * is a lost instance too, not an ended one. */
static void
t_lost_unreadable(void)
{
    char *dir = fake_v2_cgroup();
    const struct monitor_file *f = mf();
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    char *usage = path_join(dir, "memory.current");
    struct monitor *mon = monitor__new(250, 0);
    struct rlimit old, low;
    struct monitor_stats st;
    struct monitor_inst *in;
    struct err err = {0};

    getrlimit(RLIMIT_NOFILE, &old);
    low = old;
    low.rlim_cur = (rlim_t)next_fd() + 2;
    CHECK_EQ_INT(setrlimit(RLIMIT_NOFILE, &low), 0);
    in = monitor__add(mon, "g/0", dir, TY_CG_V2, f, 0, &err);
    setrlimit(RLIMIT_NOFILE, &old);
    CHECK_MSG(in != NULL, "%s", err.msg);
    if (in == NULL)
        goto out;
    CHECK_EQ_INT(unlink(usage), 0);
    CHECK_EQ_INT(mkdir(usage, 0755), 0);
    monitor__sample(mon, 250);
    monitor__stats(in, &st);
    CHECK_EQ_INT(st.lost_errno, EISDIR);
    CHECK_EQ_INT(st.lost_t_ms, 250);
    CHECK_EQ_INT(st.samples, 1);
out:
    monitor__destroy(&mon);
    free(usage);
    free(csv_path);
    free(dir);
}

static void
t_add_errors(void)
{
    struct monitor *mon = monitor__new(0, 0);
    char *csv_path = path_join(th_tmpdir(), "memory.csv");
    char *dir = fake_v2_cgroup();
    struct err err = {0};

    CHECK(monitor__add(mon, "g/0", "/nonexistent/cg", TY_CG_V2, mf(), 0,
                       &err) == NULL);
    CHECK_CONTAINS(err.msg, "g/0: memory monitor");
    CHECK_CONTAINS(err.msg, "/nonexistent/cg");
    CHECK(monitor__add(mon, "g/0", dir, TY_CG_V2,
                       &(struct monitor_file){mf()->dirfd,
                                              "nonexistent/memory.csv.partial",
                                              "nonexistent/memory.csv"},
                       0, &err) == NULL);
    CHECK_CONTAINS(err.msg, "nonexistent/memory.csv.partial");
    CHECK(!path_exists(csv_path));
    monitor__destroy(&mon);
    CHECK(mon == NULL);
    free(dir);
    free(csv_path);
}

/* ---- measurement ------------------------------------------------------- */

static double
bench_fd(struct monitor *mon, int rounds)
{
    int64_t t0 = now_mono_ns();

    for (int r = 0; r < rounds; r++)
        monitor__sample(mon, now_ms());
    return (double)(now_mono_ns() - t0) / 1000.0 / rounds;
}

static double
bench_path(struct cgroup **cgs, int n, int rounds)
{
    int64_t t0 = now_mono_ns();
    struct ty__cgmem m;

    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < n; i++)
            ty__cgroup_read_memory(cgroup__memory_dir(cgs[i]),
                                   cgroup__version(cgs[i]), &m);
    return (double)(now_mono_ns() - t0) / 1000.0 / rounds;
}

static void
t_bench(void)
{
    const char *env = getenv("MONITOR_BENCH");
    int n = env ? atoi(env) : 0;
    struct cgroup_sys *sys = cgroup_sys_new();
    struct cgroup **cgs;
    struct monitor *mon = monitor__new(250, now_ms());
    double fd_us, path_us;

    if (n <= 0 || !cgroup_sys_usable(sys)) {
        cgroup_sys_destroy(&sys);
        monitor__destroy(&mon);
        th_skip("needs MONITOR_BENCH=N > 0 and cgroups");
    }
    cgs = xcalloc((size_t)n, sizeof(*cgs));
    for (int i = 0; i < n; i++) {
        struct err err = {0};
        char rel[64], *csv, *part;

        snprintf(rel, sizeof(rel), "bench-%d/i-%d", (int)getpid(), i);
        cgs[i] = cgroup__create(sys, rel, 64 * MiB, 0, 0, &err);
        csv = xasprintf("m%d.csv", i);
        part = xasprintf("m%d.csv.partial", i);
        CHECK(cgs[i] != NULL &&
              monitor__add(mon, rel, cgroup__memory_dir(cgs[i]),
                           cgroup__version(cgs[i]),
                           &(struct monitor_file){mf()->dirfd, part, csv},
                           now_ms(), &err) != NULL);
        free(csv);
        free(part);
    }
    fd_us = bench_fd(mon, 20);
    path_us = bench_path(cgs, n, 20);
    printf("# %d cgroups: one sample of all takes %.0f us with open fds "
           "(%.1f us each, CSV row included), %.0f us by path (%.1f us "
           "each)\n",
           n, fd_us, fd_us / n, path_us, path_us / n);
    CHECK(fd_us > 0 && path_us > 0);
    monitor__destroy(&mon);
    for (int i = 0; i < n; i++)
        cgroup__destroy(&cgs[i]);
    free(cgs);
    cgroup_sys_destroy(&sys);
}

static int
no_cgroup(const void *arg)
{
    (void)arg;
    return 0;
}

/* Without a cgroup, a process's resident memory is sampled from /proc: a
 * child touching 64 MiB shows the rise, and nothing is invented for the
 * figures /proc does not have (limit, OOM count). */
static void
t_process_rise(void)
{
    cleanup_free char *csv_path = path_join(th_tmpdir(), "memory.csv");
    struct monitor *mon = monitor__new(20, now_ms());
    struct monitor_inst *in;
    struct monitor_stats st;
    struct err err = {0};
    pid_t pid = th_spawn_alloc(no_cgroup, NULL, "64", "20", "300");
    int status;

    in = monitor__add_process(mon, "p/0", pid, mf(), now_ms(), &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    if (in == NULL) {
        th_wait(pid);
        monitor__destroy(&mon);
        return;
    }
    status = watch_until_exit(mon, pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_INT(monitor__instance_ended(mon, in, now_ms(), &err), 0);
    monitor__stats(in, &st);
    CHECK_MSG(st.peak >= 60 * MiB, "peak %lld", (long long)st.peak);
    CHECK_EQ_INT(st.limit, -1);
    CHECK(!st.oom);
    CHECK(st.samples >= 3);
    monitor__destroy(&mon);
    CHECK(path_exists(csv_path));
}

static const struct th_case cases[] = {
    {"rise_in_csv", t_rise_in_csv},
    {"process_rise", t_process_rise},
    {"oom_detected", t_oom_detected},
    {"real_vanish", t_real_vanish},
    {"v2_fake_rows", t_v2_fake_rows},
    {"backend_reports_oom", t_backend_reports_oom},
    {"down_up", t_down_up},
    {"by_path_and_vanish", t_by_path_and_vanish},
    {"lost_instance", t_lost_instance},
    {"lost_unreadable", t_lost_unreadable},
    {"add_errors", t_add_errors},
    {NULL, NULL},
};

/* Run instead of the tests when MONITOR_BENCH is set. */
static const struct th_case bench_cases[] = {
    {"bench", t_bench},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "--alloc") == 0)
        return th_alloc_main(argv);
    return th_main(argc, argv, getenv("MONITOR_BENCH") ? bench_cases : cases);
}

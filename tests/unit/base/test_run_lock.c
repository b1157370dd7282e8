/*
 * test_run_lock.c — the coordinator's identity and what `clean` removes:
 * a live identity is alive, a fake one (a live pid with another start
 * time, a missing pid, another boot, another host) is not; labels and
 * coordinator.json round-trip and reject what is not theirs; the scratch
 * of a dead run goes without following a link planted in it; the cgroups
 * of a dead run go with the processes still in them.
 */
#include "backend/backend.h"
#include "backend/cgroup_int.h"
#include "base/run_lock.h"
#include "th.h"
#include "th_files.h"
#include "base/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static enum run_liveness
check(const struct run_identity *id, char *why)
{
    return run_identity_check(id, why, 320);
}

static void
t_self_alive(void)
{
    struct run_identity id;
    struct err e = {0};
    char why[320];

    CHECK_EQ_INT(run_identity_of(0, &id, &e), 0);
    CHECK_EQ_INT(id.pid, getpid());
    CHECK(id.start > 0);
    CHECK(id.host[0] != '\0');
    CHECK_EQ_INT(check(&id, why), RUN_ALIVE);
    CHECK_CONTAINS(why, "on this host");
}

/* A live process's pid with another start time: the pid was reused. */
static void
t_fake_start_time(void)
{
    struct run_identity id;
    char why[320];

    CHECK_EQ_INT(run_identity_of(getppid(), &id, NULL), 0);
    CHECK_EQ_INT(check(&id, why), RUN_ALIVE);
    id.start += 12345;
    CHECK_EQ_INT(check(&id, why), RUN_DEAD);
    CHECK_CONTAINS(why, "another process");
}

static void
t_fake_others(void)
{
    struct run_identity id, me;
    char why[320];

    CHECK_EQ_INT(run_identity_of(0, &me, NULL), 0);
    id = me;
    id.pid = 999999999;
    CHECK_EQ_INT(check(&id, why), RUN_DEAD);
    CHECK_CONTAINS(why, "no process 999999999");
    id = me;
    snprintf(id.boot_id, sizeof(id.boot_id), "not-this-boot");
    CHECK_EQ_INT(check(&id, why), me.boot_id[0] ? RUN_DEAD : RUN_ALIVE);
    id = me;
    snprintf(id.host, sizeof(id.host), "elsewhere.example");
    CHECK_EQ_INT(check(&id, why), RUN_ELSEWHERE);
    CHECK_CONTAINS(why, "another host (elsewhere.example)");
}

static cJSON *
labels_object(char *v[RUN_LABELS_N])
{
    cJSON *o = cJSON_CreateObject();

    for (int i = 0; i < RUN_LABELS_N; i++) {
        char *eq = strchr(v[i], '=');

        *eq = '\0';
        cJSON_AddStringToObject(o, v[i], eq + 1);
        free(v[i]);
    }
    return o;
}

static void
t_labels(void)
{
    char *v[RUN_LABELS_N];
    struct run_identity id, me;
    cJSON *o;

    CHECK_EQ_INT(run_identity_labels(v, NULL), 0);
    o = labels_object(v);
    CHECK_EQ_INT(run_identity_from_labels(o, &id), 0);
    CHECK_EQ_INT(run_identity_of(0, &me, NULL), 0);
    CHECK_EQ_INT(id.pid, me.pid);
    CHECK(id.start == me.start);
    CHECK_EQ_STR(id.host, me.host);
    CHECK_EQ_STR(id.boot_id, me.boot_id);
    cJSON_ReplaceItemInObject(o, "testyard.coordinator.start",
                              cJSON_CreateString("12x"));
    CHECK_EQ_INT(run_identity_from_labels(o, &id), -1);
    cJSON_DeleteItemFromObject(o, "testyard.coordinator.start");
    CHECK_EQ_INT(run_identity_from_labels(o, &id), -1);
    CHECK_EQ_INT(run_identity_from_labels(NULL, &id), -1);
    cJSON_Delete(o);
}

static void
t_lock_file(void)
{
    const char *dir = th_tmpdir();
    struct run_lock lk;
    struct err e = {0};
    char why[320];

    CHECK_EQ_INT(run_lock_read(dir, &lk, &e), -1);
    CHECK_EQ_INT(e.code, ENOENT);
    CHECK_EQ_INT(run_lock_create(dir, &e), 0);
    CHECK_EQ_INT(run_lock_read(dir, &lk, &e), 0);
    CHECK_EQ_STR(lk.state, "running");
    CHECK_EQ_INT(lk.id.pid, getpid());
    CHECK(!run_lock_interrupted(&lk, why, sizeof(why)));
    CHECK_EQ_INT(run_lock_mark(dir, "finished", &e), 0);
    CHECK_EQ_INT(run_lock_read(dir, &lk, &e), 0);
    CHECK_EQ_STR(lk.state, "finished");
    CHECK(!run_lock_interrupted(&lk, why, sizeof(why)));
}

static char *
sub(const char *a, const char *b)
{
    return path_join(a, b);
}

static bool
exists_in(const char *dir, const char *rel)
{
    cleanup_free char *p = path_join(dir, rel);
    struct stat st;

    return lstat(p, &st) == 0;
}

static char *
read_in(const char *dir, const char *rel)
{
    static char buf[256];
    cleanup_free char *p = path_join(dir, rel);
    cleanup_free char *s = th_read(p, NULL);

    snprintf(buf, sizeof(buf), "%s", s ? s : "");
    return buf;
}

/* symlink(target, dir/name) */
static int
link_in(const char *target, const char *dir, const char *name)
{
    cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY);

    return symlinkat(target, fd, name);
}

static void
t_lock_dead_and_bad(void)
{
    const char *dir = th_tmpdir();
    cleanup_free char *other = path_join(dir, "other");
    cleanup_free char *lock = path_join(dir, RUN_LOCK_FILE);
    struct run_lock lk;
    struct err e = {0};
    char why[320], host[256] = "";
    char *text;

    gethostname(host, sizeof(host) - 1);
    text = xasprintf("{\"pid\": 999999999, \"start_ticks\": 5, \"host\": "
                     "\"%s\", \"state\": \"running\"}",
                     host);
    th_write(dir, RUN_LOCK_FILE, text);
    free(text);
    CHECK_EQ_INT(run_lock_read(dir, &lk, &e), 0);
    CHECK(run_lock_interrupted(&lk, why, sizeof(why)));
    CHECK_CONTAINS(why, "no process 999999999");
    th_write(dir, RUN_LOCK_FILE, "{\"pid\": \"1\"}");
    CHECK_EQ_INT(run_lock_read(dir, &lk, &e), -1);
    CHECK_EQ_INT(e.code, EINVAL);
    /* A link in its place is not followed. */
    th_write(other, RUN_LOCK_FILE, "{}");
    CHECK_EQ_INT(unlink(lock), 0);
    CHECK_EQ_INT(link_in("other/" RUN_LOCK_FILE, dir, RUN_LOCK_FILE), 0);
    CHECK_EQ_INT(run_lock_read(dir, &lk, &e), -1);
    CHECK_EQ_INT(e.code, ELOOP);
}

/* .tmp and .sync of a dead run go; links planted in them are removed as
 * links; what they point at, and the instance folders, stay. */
static void
t_scratch(void)
{
    const char *runs = th_tmpdir();
    cleanup_free char *run = sub(runs, "r1");
    cleanup_free char *outside = sub(runs, "outside");
    cleanup_free char *inst = sub(run, ".tmp/s/0");
    cleanup_free char *link = sub(inst, "escape");
    cleanup_free char *deep = sub(inst, "a/b/c");
    struct leftovers_scratch sc;
    struct err e = {0};

    th_write(outside, "keep.txt", "precious");
    th_write(run, ".sync/board", "x");
    th_write(run, "s/0/memory.csv.partial", "t_ms\n");
    th_write(run, "summary.json.tmp.123", "{");
    th_write(run, "notes.tmp.abc", "mine");
    th_write(deep, "f", "y");
    CHECK_EQ_INT(symlink(outside, link), 0);
    CHECK_EQ_INT(link_in(outside, deep, "up"), 0);
    CHECK_EQ_INT(leftovers_scratch(runs, "r1", true, &sc, &e), 0);
    CHECK(sc.sync && sc.tmp);
    CHECK_EQ_INT(sc.partial, 1);
    CHECK(path_exists(inst));
    CHECK_EQ_INT(leftovers_scratch(runs, "r1", false, &sc, &e), 0);
    CHECK(!exists_in(run, ".tmp") && !exists_in(run, ".sync"));
    CHECK(!exists_in(run, "summary.json.tmp.123"));
    CHECK(exists_in(run, "notes.tmp.abc"));
    CHECK(exists_in(run, "s/0/memory.csv.partial"));
    CHECK_EQ_STR(read_in(outside, "keep.txt"), "precious");
}

/* .tmp itself a link: not followed, removed as a link. */
static void
t_scratch_link_top(void)
{
    const char *runs = th_tmpdir();
    cleanup_free char *run = sub(runs, "r2");
    cleanup_free char *outside = sub(runs, "outside");
    struct leftovers_scratch sc;
    struct err e = {0};

    th_write(outside, "keep.txt", "precious");
    th_write(run, "composition.json", "{}");
    CHECK_EQ_INT(link_in(outside, run, ".tmp"), 0);
    CHECK_EQ_INT(leftovers_scratch(runs, "r2", false, &sc, &e), 0);
    CHECK(!sc.tmp);
    CHECK_EQ_STR(read_in(outside, "keep.txt"), "precious");
    CHECK_EQ_INT(link_in(outside, runs, "r3"), 0);
    CHECK_EQ_INT(leftovers_scratch(runs, "r3", false, &sc, &e), -1);
    CHECK_EQ_STR(read_in(outside, "keep.txt"), "precious");
}

/* A tree deeper than the bound is left, with an error. */
static void
t_scratch_deep(void)
{
    const char *runs = th_tmpdir();
    cleanup_free char *tmp = sub(runs, "r4/.tmp");
    struct leftovers_scratch sc;
    struct err e = {0};
    int fd;

    th_write(tmp, "x", "");
    fd = open(tmp, O_RDONLY | O_DIRECTORY);
    for (int i = 0; i < 140; i++) {
        int next;

        CHECK_EQ_INT(mkdirat(fd, "d", 0755), 0);
        next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        close(fd);
        fd = next;
    }
    close(fd);
    CHECK_EQ_INT(leftovers_scratch(runs, "r4", false, &sc, &e), -1);
    CHECK_EQ_INT(e.code, ELOOP);
    CHECK_CONTAINS(e.msg, "levels deep");
}

/* Real cgroups: one with a process still in it, of a run whose
 * coordinator is gone, goes with the process. */
static void
t_cgroups(void)
{
    struct cgroup_sys *sys = cgroup_sys_new();
    char run[64], rel[96];
    struct cgroup *cg;
    struct err e = {0};
    int n = -1, status = 0;
    pid_t pid;

    if (!cgroup_sys_usable(sys)) {
        cgroup_sys_destroy(&sys);
        th_skip("no usable cgroups here (root and a memory controller)");
    }
    snprintf(run, sizeof(run), "test-leftovers-%d", (int)getpid());
    snprintf(rel, sizeof(rel), "%s/g-0", run);
    cg = cgroup__create(sys, rel, 0, 0, 64, &e);
    CHECK(cg != NULL);
    pid = fork();
    if (pid == 0) {
        cgroup__attach_self_prepared(cg);
        execlp("sleep", "sleep", "60", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && cgroup__nprocs(cg) < 1; i++)
        usleep(5000);
    CHECK_EQ_INT(leftovers_cgroups(sys, run, true, &n, &e), 0);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(leftovers_cgroups(sys, run, false, &n, &e), 0);
    CHECK_EQ_INT(waitpid(pid, &status, 0), pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(!path_exists(cgroup__memory_dir(cg)));
    CHECK(cgroup_list(sys, run) == NULL);
    cgroup__destroy(&cg); /* already removed: frees the struct */
    cgroup_sys_destroy(&sys);
}

static const struct th_case cases[] = {
    {"self_alive", t_self_alive},
    {"fake_start_time", t_fake_start_time},
    {"fake_others", t_fake_others},
    {"labels", t_labels},
    {"lock_file", t_lock_file},
    {"lock_dead_and_bad", t_lock_dead_and_bad},
    {"scratch", t_scratch},
    {"scratch_link_top", t_scratch_link_top},
    {"scratch_deep", t_scratch_deep},
    {"cgroups", t_cgroups},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

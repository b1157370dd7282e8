/*
 * test_cgroup.c — per-instance cgroups: real ones on this machine's cgroup
 * v1 hierarchies (limits read back, an OOM kill under a 64 MiB limit, a
 * child within its limit, killing everything, no directory left behind)
 * and the files written on fake v1 and v2 trees in a temporary directory.
 *
 * Children allocate by re-executing this program with --alloc, so that under
 * valgrind (which does not follow exec here) they run natively.
 */
#include "backend/cgroup_int.h"
#include "th.h"
#include "th_files.h"
#include "th_proc.h"
#include "base/util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MiB (1024ull * 1024)

/* ---- helpers ----------------------------------------------------------- */

/* The first line of dir/name, in a static buffer ("" when unreadable). */
static const char *
get(const char *dir, const char *name)
{
    static char buf[4096];
    char *path = path_join(dir, name);
    char *s = th_read(path, NULL);

    snprintf(buf, sizeof(buf), "%s", s ? s : "");
    buf[strcspn(buf, "\n")] = '\0';
    free(s);
    free(path);
    return buf;
}

static int
enter(const void *cg)
{
    return cgroup__attach_self_prepared(cg);
}

/* Start this program with --alloc in the cgroup: mib MiB, held hold_ms
 * (touched 5 ms apart per 8 MiB when held). Returns the child's pid. */
static pid_t
spawn_alloc(const struct cgroup *cg, const char *mib, const char *hold_ms)
{
    return th_spawn_alloc(enter, cg, mib, strcmp(hold_ms, "0") ? "5" : "0",
                          hold_ms);
}

static struct cgroup_sys *
real_sys(void)
{
    struct cgroup_sys *sys = cgroup_sys_new();

    if (!cgroup_sys_usable(sys)) {
        static char why[600];

        snprintf(why, sizeof(why), "%s", cgroup__sys_warning(sys));
        cgroup_sys_destroy(&sys);
        th_skip(why);
    }
    return sys;
}

/* ---- real cgroups ------------------------------------------------------ */

static void
t_detect(void)
{
    struct cgroup_sys *sys = real_sys();

    CHECK(cgroup__sys_version(sys) == TY_CG_V1 ||
          cgroup__sys_version(sys) == TY_CG_V2);
    CHECK(cgroup__sys_controllers(sys) & CGROUP_MEMORY);
    if (cgroup__sys_warning(sys) != NULL)
        printf("# warning: %s\n", cgroup__sys_warning(sys));
    cgroup_sys_destroy(&sys);
    CHECK(sys == NULL);
}

static void
t_limits_read_back(void)
{
    struct cgroup_sys *sys = real_sys();
    char rel[64], top[600];
    struct err err = {0};
    struct cgroup *cg;
    const char *dir;

    snprintf(rel, sizeof(rel), "test-%d/limits-0", (int)getpid());
    cg = cgroup__create(sys, rel, 64 * MiB, 500, 64, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    if (cg == NULL)
        goto out;
    dir = cgroup__memory_dir(cg);
    CHECK_CONTAINS(dir, "/testyard/test-");
    if (cgroup__sys_version(sys) == TY_CG_V1) {
        const char *cpu = cgroup__controller_dir(cg, CGROUP_CPU);
        const char *pids = cgroup__controller_dir(cg, CGROUP_PIDS);
        char memsw[700];

        snprintf(memsw, sizeof(memsw), "%s/memory.memsw.limit_in_bytes", dir);

        CHECK_EQ_STR(get(dir, "memory.limit_in_bytes"), "67108864");
        if (path_exists(memsw))
            CHECK_EQ_STR(get(dir, "memory.memsw.limit_in_bytes"), "67108864");
        CHECK_EQ_INT(cpu != NULL,
                     (cgroup__sys_controllers(sys) & CGROUP_CPU) != 0);
        CHECK_EQ_INT(pids != NULL,
                     (cgroup__sys_controllers(sys) & CGROUP_PIDS) != 0);
        if (cpu != NULL) {
            CHECK_CONTAINS(cpu, "/testyard/test-");
            CHECK_EQ_STR(get(cpu, "cpu.cfs_quota_us"), "50000");
            CHECK_EQ_STR(get(cpu, "cpu.cfs_period_us"), "100000");
        }
        if (pids != NULL)
            CHECK_EQ_STR(get(pids, "pids.max"), "64");
    } else {
        CHECK_EQ_STR(get(dir, "memory.max"), "67108864");
        CHECK_EQ_STR(get(dir, "cpu.max"), "50000 100000");
    }
    snprintf(top, sizeof(top), "%s", dir);
    *strrchr(top, '/') = '\0';
    CHECK_EQ_INT(cgroup__remove(cg, &err), 0);
    CHECK(!path_exists(dir));
    CHECK(!path_exists(top));
    cgroup__destroy(&cg);
out:
    cgroup_sys_destroy(&sys);
}

static void
t_oom_kill(void)
{
    struct cgroup_sys *sys = real_sys();
    struct err err = {0};
    struct cgroup *cg;
    struct ty__cgmem m;
    char rel[64];
    int64_t before;
    int status;

    snprintf(rel, sizeof(rel), "test-%d/oom-0", (int)getpid());
    cg = cgroup__create(sys, rel, 64 * MiB, 0, 0, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    if (cg == NULL)
        goto out;
    before = cgroup__oom_kills(cg);
    CHECK_EQ_INT(before, 0);
    status = th_wait(spawn_alloc(cg, "200", "0"));
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
              "child status %#x, expected SIGKILL", status);
    CHECK_MSG(cgroup__oom_kills(cg) > before, "oom_kills %lld",
              (long long)cgroup__oom_kills(cg));
    CHECK_EQ_INT(cgroup__read(cg, &m, &err), 0);
    CHECK_EQ_INT(m.limit, (int64_t)(64 * MiB));
    CHECK(m.peak >= (int64_t)(60 * MiB));
    CHECK_EQ_INT(cgroup__remove(cg, &err), 0);
    CHECK(!path_exists(cgroup__memory_dir(cg)));
    cgroup__destroy(&cg);
out:
    cgroup_sys_destroy(&sys);
}

static void
t_within_limit(void)
{
    struct cgroup_sys *sys = real_sys();
    struct err err = {0};
    struct cgroup *cg;
    struct ty__cgmem m;
    char rel[64];
    int status;

    snprintf(rel, sizeof(rel), "test-%d/fits-0", (int)getpid());
    cg = cgroup__create(sys, rel, 64 * MiB, 1000, 100, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    if (cg == NULL)
        goto out;
    status = th_wait(spawn_alloc(cg, "24", "0"));
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x",
              status);
    CHECK_EQ_INT(cgroup__oom_kills(cg), 0);
    CHECK_EQ_INT(cgroup__read(cg, &m, &err), 0);
    CHECK_MSG(m.peak >= (int64_t)(24 * MiB), "peak %lld", (long long)m.peak);
    CHECK_EQ_INT(cgroup__nprocs(cg), 0);
    cgroup__destroy(&cg);
out:
    cgroup_sys_destroy(&sys);
}

static void
t_kill_all(void)
{
    struct cgroup_sys *sys = real_sys();
    struct err err = {0};
    struct cgroup *cg;
    char rel[64], dir[600];
    pid_t kids[3];

    snprintf(rel, sizeof(rel), "test-%d/kill-0", (int)getpid());
    cg = cgroup__create(sys, rel, 0, 0, 10, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    if (cg == NULL)
        goto out;
    for (int i = 0; i < 3; i++)
        kids[i] = spawn_alloc(cg, "1", "60000");
    for (int i = 0; i < 200 && cgroup__nprocs(cg) < 3; i++)
        usleep(5000);
    CHECK_EQ_INT(cgroup__nprocs(cg), 3);
    CHECK_EQ_INT(cgroup__kill_all(cg, &err), 0);
    for (int i = 0; i < 3; i++) {
        int status = th_wait(kids[i]);

        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    }
    CHECK_EQ_INT(cgroup__nprocs(cg), 0);
    snprintf(dir, sizeof(dir), "%s", cgroup__memory_dir(cg));
    cgroup__destroy(&cg);
    CHECK(!path_exists(dir));
out:
    cgroup_sys_destroy(&sys);
}

static void
t_open_existing(void)
{
    enum ty__cgver ver;
    char *dir = ty__cgroup_memory_dir(0, &ver);
    struct err err = {0};
    struct cgroup *cg;
    struct ty__cgmem m;

    if (dir == NULL)
        th_skip("no memory cgroup");
    cg = cgroup__open(dir, ver, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    if (cg != NULL) {
        CHECK_EQ_INT(cgroup__read(cg, &m, &err), 0);
        CHECK(m.usage > 0);
        CHECK(cgroup__oom_kills(cg) >= 0);
        CHECK(cgroup__nprocs(cg) >= 1);
        CHECK_EQ_INT(cgroup__remove(cg, &err), 0);
        cgroup__destroy(&cg);
    }
    CHECK(path_is_dir(dir));
    CHECK(cgroup__open("/nonexistent/cg", TY_CG_V1, &err) == NULL);
    CHECK_EQ_INT(err.code, ENOENT);
    free(dir);
}

/* ---- fake trees -------------------------------------------------------- */

static void
fake_v2_leaf(const char *root, const char *rel)
{
    const char *files[] = {"cgroup.subtree_control",
                           "memory.max",
                           "memory.swap.max",
                           "cpu.max",
                           "pids.max",
                           "cgroup.procs",
                           "cgroup.kill",
                           "memory.current"};
    char *dir = path_join(root, rel);

    mkdir_p(dir, NULL);
    for (size_t i = 0; i < ARRAY_LEN(files); i++)
        th_write(dir, files[i], "");
    free(dir);
}

static char *
fake_v2(const char *controllers)
{
    char *root = path_join(th_tmpdir(), "v2");

    mkdir_p(root, NULL);
    th_write(root, "cgroup.controllers", controllers);
    th_write(root, "cgroup.subtree_control", "");
    fake_v2_leaf(root, "testyard");
    fake_v2_leaf(root, "testyard/run-1");
    fake_v2_leaf(root, "testyard/run-1/g-0");
    return root;
}

static void
t_v2_fake_create(void)
{
    char *root = fake_v2("cpuset cpu io memory hugetlb pids rdma\n");
    struct cgroup_sys *sys = cgroup__sys_new_at(TY_CG_V2, root);
    char *leaf = path_join(root, "testyard/run-1/g-0");
    char *mid = path_join(root, "testyard/run-1");
    struct err err = {0};
    struct cgroup *cg;

    CHECK(cgroup_sys_usable(sys));
    CHECK_EQ_INT(cgroup__sys_controllers(sys),
                 CGROUP_MEMORY | CGROUP_CPU | CGROUP_PIDS);
    CHECK(cgroup__sys_warning(sys) == NULL);
    cg = cgroup__create(sys, "run-1/g-0", 2048 * MiB, 1500, 100, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    if (cg != NULL) {
        CHECK_EQ_STR(cgroup__memory_dir(cg), leaf);
        CHECK_EQ_STR(cgroup__controller_dir(cg, CGROUP_CPU), leaf);
        CHECK_EQ_STR(cgroup__controller_dir(cg, CGROUP_PIDS), leaf);
        CHECK_EQ_STR(get(root, "cgroup.subtree_control"), "+memory +cpu +pids");
        CHECK_EQ_STR(get(mid, "cgroup.subtree_control"), "+memory +cpu +pids");
        CHECK_EQ_STR(get(leaf, "memory.max"), "2147483648");
        CHECK_EQ_STR(get(leaf, "memory.swap.max"), "0");
        CHECK_EQ_STR(get(leaf, "cpu.max"), "150000 100000");
        CHECK_EQ_STR(get(leaf, "pids.max"), "100");
        CHECK_EQ_INT(cgroup__attach_self_prepared(cg), 0);
        CHECK_EQ_STR(get(leaf, "cgroup.procs"), "0");
        th_write(leaf, "cgroup.procs", "");
        CHECK_EQ_INT(cgroup__kill_all(cg, &err), 0);
        CHECK_EQ_STR(get(leaf, "cgroup.kill"), "1");
        th_write(leaf, "memory.events",
                 "low 0\nhigh 0\nmax 9\noom 2\n"
                 "oom_kill 2\noom_group_kill 0\n");
        CHECK_EQ_INT(cgroup__oom_kills(cg), 2);
        /* A fake tree's directories hold files, so rmdir must fail. */
        CHECK_EQ_INT(cgroup__remove(cg, &err), -1);
        cgroup__destroy(&cg);
    }
    cgroup_sys_destroy(&sys);
    free(mid);
    free(leaf);
    free(root);
}

static void
t_v2_fake_enabled_already(void)
{
    char *root = fake_v2("memory pids\n");
    struct cgroup_sys *sys = cgroup__sys_new_at(TY_CG_V2, root);
    char *leaf = path_join(root, "testyard/run-1/g-0");
    struct err err = {0};
    struct cgroup *cg;

    th_write(root, "cgroup.subtree_control", "memory pids\n");
    CHECK_EQ_INT(cgroup__sys_controllers(sys), CGROUP_MEMORY | CGROUP_PIDS);
    CHECK_CONTAINS(cgroup__sys_warning(sys), "without a CPU quota");
    cg = cgroup__create(sys, "run-1/g-0", 0, 500, 0, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    CHECK_EQ_STR(get(root, "cgroup.subtree_control"), "memory pids");
    CHECK_EQ_STR(get(root, "testyard/cgroup.subtree_control"), "+memory");
    CHECK_EQ_STR(get(leaf, "memory.max"), "");
    CHECK_EQ_STR(get(leaf, "cpu.max"), "");
    CHECK(cg != NULL && cgroup__controller_dir(cg, CGROUP_CPU) == NULL);
    cgroup__destroy(&cg);
    cgroup_sys_destroy(&sys);
    free(leaf);
    free(root);
}

static void
t_v2_fake_no_memory(void)
{
    char *root = fake_v2("cpu io pids\n");
    struct cgroup_sys *sys = cgroup__sys_new_at(TY_CG_V2, root);
    struct err err = {0};

    CHECK(!cgroup_sys_usable(sys));
    CHECK_EQ_INT(cgroup__sys_version(sys), TY_CG_NONE);
    CHECK_CONTAINS(cgroup__sys_warning(sys), "no memory cgroup controller");
    CHECK_CONTAINS(cgroup__sys_warning(sys), "without memory, CPU or pids");
    CHECK(cgroup__create(sys, "run-1/g-0", MiB, 0, 0, &err) == NULL);
    CHECK_EQ_INT(err.code, ENOTSUP);
    CHECK_CONTAINS(err.msg, "no memory cgroup controller");
    cgroup_sys_destroy(&sys);
    free(root);
}

static void
t_v1_fake(void)
{
    char *root = path_join(th_tmpdir(), "v1");
    char *mem = path_join(root, "memory");
    char *leaf = path_join(mem, "testyard/r/g-3");
    struct cgroup_sys *sys;
    struct err err = {0};
    struct cgroup *cg;

    mkdir_p(leaf, NULL);
    th_write(mem, "memory.memsw.limit_in_bytes", "");
    th_write(leaf, "memory.limit_in_bytes", "");
    th_write(leaf, "memory.memsw.limit_in_bytes", "");
    th_write(leaf, "cgroup.procs", "");
    sys = cgroup__sys_new_at(TY_CG_V1, root);
    CHECK(cgroup_sys_usable(sys));
    CHECK_EQ_INT(cgroup__sys_controllers(sys), CGROUP_MEMORY);
    CHECK_CONTAINS(cgroup__sys_warning(sys),
                   "no usable cpu or pids controller");
    cg = cgroup__create(sys, "r/g-3", 256 * MiB, 250, 10, &err);
    CHECK_MSG(cg != NULL, "%s", err.msg);
    CHECK_EQ_STR(get(leaf, "memory.limit_in_bytes"), "268435456");
    CHECK_EQ_STR(get(leaf, "memory.memsw.limit_in_bytes"), "268435456");
    CHECK_EQ_INT(cgroup__oom_kills(cg), -1);
    cgroup__destroy(&cg);
    cgroup_sys_destroy(&sys);
    free(leaf);
    free(mem);
    free(root);
}

static void
t_bad_paths(void)
{
    char *root = fake_v2("memory\n");
    struct cgroup_sys *sys = cgroup__sys_new_at(TY_CG_V2, root);
    const char *bad[] = {"", "/abs", "../up", "a/../b", "a//b", "a/", "."};
    struct err err = {0};

    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        CHECK_MSG(cgroup__create(sys, bad[i], 0, 0, 0, &err) == NULL,
                  "accepted \"%s\"", bad[i]);
        CHECK_EQ_INT(err.code, EINVAL);
    }
    cgroup_sys_destroy(&sys);
    free(root);
}

static void
t_create_error_cleans_up(void)
{
    char *root = fake_v2("memory\n");
    struct cgroup_sys *sys = cgroup__sys_new_at(TY_CG_V2, root);
    char *leaf = path_join(root, "testyard/new/g-0");
    struct err err = {0};

    /* testyard/new gets no cgroup.subtree_control: enabling must fail. */
    CHECK(cgroup__create(sys, "new/g-0", MiB, 0, 0, &err) == NULL);
    CHECK_CONTAINS(err.msg, "enable cgroup controllers");
    CHECK_CONTAINS(err.msg, "testyard/new/cgroup.subtree_control");
    CHECK(!path_exists(leaf));
    cgroup_sys_destroy(&sys);
    free(leaf);
    free(root);
}

static const struct th_case cases[] = {
    {"detect", t_detect},
    {"limits_read_back", t_limits_read_back},
    {"oom_kill", t_oom_kill},
    {"within_limit", t_within_limit},
    {"kill_all", t_kill_all},
    {"open_existing", t_open_existing},
    {"v2_fake_create", t_v2_fake_create},
    {"v2_fake_enabled_already", t_v2_fake_enabled_already},
    {"v2_fake_no_memory", t_v2_fake_no_memory},
    {"v1_fake", t_v1_fake},
    {"bad_paths", t_bad_paths},
    {"create_error_cleans_up", t_create_error_cleans_up},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "--alloc") == 0)
        return th_alloc_main(argv);
    return th_main(argc, argv, cases);
}

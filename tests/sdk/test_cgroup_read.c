/*
 * test_cgroup_read.c — finding a process's memory cgroup and reading it:
 * this process's own, and, in fake /proc and cgroup trees, the layouts a
 * host and containers show (cgroup v1 on a host and in Docker, whose
 * mount's root is already the container's cgroup; v2 with a cgroup
 * namespace and nested; a path the mounts do not show).
 */
#include "th.h"
#include "th_files.h"
#include "ty_cgroup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOCKER_ID "1956ab4898463d1939593efe95f44c7c821d4cace1b848fbf2d4fbb0"

static const char v1_memory_line[] =
    "35 31 0:32 %s /sys/fs/cgroup/memory rw,relatime - cgroup cgroup "
    "rw,memory\n";
static const char v2_line[] =
    "41 31 0:38 %s /sys/fs/cgroup rw,relatime - cgroup2 cgroup2 rw\n";

/* A fake root: mountinfo from lines (each a format with one %s, the mount
 * root, taken in turn from roots), and /proc/self/cgroup. */
static void
fake_proc(const char *const *lines, const char *const *roots,
          const char *cgroup)
{
    char info[4096] = "", line[512];

    snprintf(info, sizeof(info),
             "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
             "32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
    for (int i = 0; lines[i] != NULL; i++) {
        snprintf(line, sizeof(line), lines[i], roots[i]);
        strncat(info, line, sizeof(info) - strlen(info) - 1);
    }
    th_write(th_tmpdir(), "proc/self/mountinfo", info);
    th_write(th_tmpdir(), "proc/self/cgroup", cgroup);
}

/* A v1 memory cgroup at rel under the fake root with the given limit. */
static void
fake_v1(const char *rel, const char *limit)
{
    char f[512];

    snprintf(f, sizeof(f), "%s/memory.usage_in_bytes", rel);
    th_write(th_tmpdir(), f, "917504\n");
    snprintf(f, sizeof(f), "%s/memory.limit_in_bytes", rel);
    th_write(th_tmpdir(), f, limit);
}

static void
fake_v2(const char *rel, const char *max)
{
    char f[512];

    snprintf(f, sizeof(f), "%s/memory.current", rel);
    th_write(th_tmpdir(), f, "2097152\n");
    snprintf(f, sizeof(f), "%s/memory.max", rel);
    th_write(th_tmpdir(), f, max);
}

/* The directory found for pid under the fake root, without the root
 * ("(none)" when none), and its version. */
static char *
found(pid_t pid, enum ty__cgver *ver)
{
    char *dir = ty__cgroup_memory_dir_at(th_tmpdir(), pid, ver);
    size_t n = strlen(th_tmpdir());
    char *rel;

    if (dir == NULL)
        return strdup("(none)");
    CHECK(strncmp(dir, th_tmpdir(), n) == 0);
    rel = strdup(dir + n);
    free(dir);
    return rel;
}

/* The limit read from the directory found for this process. */
static int64_t
limit_found(void)
{
    enum ty__cgver ver;
    char *dir = ty__cgroup_memory_dir_at(th_tmpdir(), 0, &ver);
    struct ty__cgmem m = {0};
    int rc;

    if (dir == NULL)
        return -2;
    rc = ty__cgroup_read_memory(dir, ver, &m);
    free(dir);
    return rc < 0 ? -3 : m.limit;
}

static void
t_self(void)
{
    enum ty__cgver ver;
    struct ty__cgmem m;
    char *dir;

    if (ty__cgroup_memory_mount(&ver) == NULL)
        th_skip("no memory cgroup controller on this machine");
    dir = ty__cgroup_memory_dir(0, &ver);
    CHECK(dir != NULL);
    if (dir == NULL)
        return;
    CHECK_EQ_INT(ty__cgroup_read_memory(dir, ver, &m), 0);
    CHECK(m.usage > 0);
    CHECK(m.anon >= 0);
    CHECK(m.file >= 0);
    free(dir);
}

static void
t_missing(void)
{
    struct ty__cgmem m;

    CHECK(ty__cgroup_read_memory("/nonexistent/cg", TY_CG_V1, &m) < 0);
    CHECK(ty__cgroup_read_memory("/nonexistent/cg", TY_CG_V2, &m) < 0);
    CHECK_EQ_INT(m.usage, -1);
}

/* A host on cgroup v1: the mount's root is "/", the path is joined. */
static void
t_host_v1(void)
{
    static const char *const lines[] = {v1_memory_line, v2_line, NULL};
    static const char *const roots[] = {"/", "/"};
    enum ty__cgver ver;
    char *dir;

    fake_proc(lines, roots,
              "9:name=systemd:/\n4:memory:/process_api/f005\n0::/\n");
    fake_v1("sys/fs/cgroup/memory/process_api/f005", "268435456\n");
    th_write(th_tmpdir(), "sys/fs/cgroup/cgroup.controllers", "memory pids\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup/memory/process_api/f005");
    CHECK_EQ_INT(ver, TY_CG_V1); /* v1 wins over the unified mount */
    CHECK_EQ_INT(limit_found(), 268435456);
    free(dir);
}

/* Docker on cgroup v1 (no cgroup namespace): the mount's root is the
 * container's cgroup, which is the mount point itself. */
static void
t_docker_v1(void)
{
    static const char *const lines[] = {v1_memory_line, NULL};
    static const char *const roots[] = {"/docker/" DOCKER_ID};
    enum ty__cgver ver;
    char *dir;

    fake_proc(lines, roots,
              "4:memory:/docker/" DOCKER_ID "\n1:cpu:/docker/" DOCKER_ID
              "\n0::/docker/" DOCKER_ID "\n");
    fake_v1("sys/fs/cgroup/memory", "67108864\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup/memory");
    CHECK_EQ_INT(ver, TY_CG_V1);
    CHECK_EQ_INT(limit_found(), 67108864);
    free(dir);
    /* a process of a sub-cgroup of the container */
    th_write(th_tmpdir(), "proc/42/cgroup",
             "4:memory:/docker/" DOCKER_ID "/worker\n");
    dir = found(42, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup/memory/worker");
    free(dir);
}

/* cgroup v2 in a cgroup namespace: "0::/" and root "/" are the mount
 * point. */
static void
t_v2_cgroupns(void)
{
    static const char *const lines[] = {v2_line, NULL};
    static const char *const roots[] = {"/"};
    enum ty__cgver ver;
    char *dir;

    fake_proc(lines, roots, "0::/\n");
    th_write(th_tmpdir(), "sys/fs/cgroup/cgroup.controllers",
             "cpuset cpu io memory pids\n");
    fake_v2("sys/fs/cgroup", "134217728\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup");
    CHECK_EQ_INT(ver, TY_CG_V2);
    CHECK_EQ_INT(limit_found(), 134217728);
    free(dir);
}

/* cgroup v2 nested: in a namespace (root "/", path below it), and without
 * one (root a cgroup, the path below that). */
static void
t_v2_nested(void)
{
    static const char *const lines[] = {v2_line, NULL};
    static const char *const ns_roots[] = {"/"};
    static const char *const roots[] = {"/system.slice/docker-ab.scope"};
    enum ty__cgver ver;
    char *dir;

    th_write(th_tmpdir(), "sys/fs/cgroup/cgroup.controllers", "memory\n");
    fake_proc(lines, ns_roots, "0::/plan/worker\n");
    fake_v2("sys/fs/cgroup/plan/worker", "max\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup/plan/worker");
    CHECK_EQ_INT(limit_found(), -1);
    free(dir);
    fake_proc(lines, roots, "0::/system.slice/docker-ab.scope/plan\n");
    fake_v2("sys/fs/cgroup/plan", "1048576\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup/plan");
    CHECK_EQ_INT(limit_found(), 1048576);
    free(dir);
    fake_proc(lines, roots, "0::/system.slice/docker-ab.scope\n");
    fake_v2("sys/fs/cgroup", "2097152\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup");
    free(dir);
}

/* A path the mount does not show has no directory: not under the root
 * (nor under it by a name's prefix), outside the namespace, relative. */
static void
t_not_a_prefix(void)
{
    static const char *const lines[] = {v1_memory_line, NULL};
    static const char *const roots[] = {"/docker/abc"};
    static const char *const paths[] = {
        "4:memory:/docker/other\n",    "4:memory:/docker/abcdef\n",
        "4:memory:/docker/abc/../x\n", "4:memory:/\n",
        "4:memory:docker/abc\n",       "4:memory:/docker/abc//x\n",
        "1:cpu:/docker/abc\n"};
    enum ty__cgver ver;

    fake_v1("sys/fs/cgroup/memory", "67108864\n");
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        char *dir;

        fake_proc(lines, roots, paths[i]);
        dir = found(0, &ver);
        CHECK_MSG(strcmp(dir, "(none)") == 0, "%s: found %s", paths[i], dir);
        free(dir);
    }
}

/* Several mounts of the hierarchy: the one whose root holds the path. */
static void
t_two_mounts(void)
{
    static const char *const lines[] = {
        v1_memory_line,
        "50 31 0:32 %s /mnt/cg\\040two rw - cgroup cgroup rw,memory\n", NULL};
    static const char *const roots[] = {"/docker/abc", "/"};
    enum ty__cgver ver;
    char *dir;

    fake_proc(lines, roots, "4:memory:/kubepods/pod1\n");
    fake_v1("mnt/cg two/kubepods/pod1", "4096\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/mnt/cg two/kubepods/pod1");
    CHECK_EQ_INT(limit_found(), 4096);
    free(dir);
}

/* A directory the mount does not show: this process gets the nearest one
 * above it, another process no walk up (its cgroup may just be gone). */
static void
t_fallback(void)
{
    static const char *const lines[] = {v1_memory_line, NULL};
    static const char *const roots[] = {"/"};
    enum ty__cgver ver;
    char *dir;

    fake_proc(lines, roots, "4:memory:/docker/abc/leaf\n");
    th_write(th_tmpdir(), "proc/42/cgroup", "4:memory:/docker/abc/leaf\n");
    fake_v1("sys/fs/cgroup/memory/docker", "8192\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup/memory/docker");
    free(dir);
    dir = found(42, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup/memory/docker/abc/leaf");
    free(dir);
}

/* A mountinfo line longer than the reader's buffer is skipped whole: its
 * tail, which reads like a memory mount, is not taken for one. */
static void
t_long_line(void)
{
    static const char *const lines[] = {v1_memory_line, NULL};
    static const char *const roots[] = {"/"};
    char *info, *dir;
    size_t n = 0, size = 16384;
    enum ty__cgver ver;

    fake_proc(lines, roots, "4:memory:/real\n");
    info = malloc(size);
    if (info == NULL)
        return;
    n +=
        (size_t)snprintf(info, size, "77 52 0:40 / / rw - overlay overlay rw,");
    while (n < 6000)
        info[n++] = 'x';
    n += (size_t)snprintf(info + n, size - n,
                          " 1 0:9 / /fake rw - cgroup cgroup rw,memory\n");
    snprintf(info + n, size - n, v1_memory_line, "/");
    th_write(th_tmpdir(), "proc/self/mountinfo", info);
    fake_v1("sys/fs/cgroup/memory/real", "4096\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "/sys/fs/cgroup/memory/real");
    free(dir);
    free(info);
}

/* No memory controller: v2 without it listed, no v1 memory mount. */
static void
t_none(void)
{
    static const char *const lines[] = {v2_line, NULL};
    static const char *const roots[] = {"/"};
    enum ty__cgver ver = TY_CG_V1;
    char *dir;

    fake_proc(lines, roots, "0::/\n");
    th_write(th_tmpdir(), "sys/fs/cgroup/cgroup.controllers", "cpu pids\n");
    dir = found(0, &ver);
    CHECK_EQ_STR(dir, "(none)");
    CHECK_EQ_INT(ver, TY_CG_NONE);
    free(dir);
}

static const struct th_case cases[] = {
    {"self", t_self},
    {"missing", t_missing},
    {"host_v1", t_host_v1},
    {"docker_v1", t_docker_v1},
    {"v2_cgroupns", t_v2_cgroupns},
    {"v2_nested", t_v2_nested},
    {"not_a_prefix", t_not_a_prefix},
    {"two_mounts", t_two_mounts},
    {"fallback", t_fallback},
    {"long_line", t_long_line},
    {"none", t_none},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

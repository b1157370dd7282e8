/*
 * ty_cgroup.c — finding and reading memory cgroups (see ty_cgroup.h).
 *
 * The memory controller's mount point comes from /proc/self/mountinfo (a v1
 * "cgroup" mount whose options list "memory", else a "cgroup2" mount whose
 * cgroup.controllers lists "memory"); a process's place in it from
 * /proc/<pid>/cgroup. Every file read here is small, so each is read whole
 * with one read(2).
 */
#include "ty_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char mount_v1[512];
static char mount_v2[512];
static int mounts_scanned;

static int
read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0)
        return -errno;
    do
        n = read(fd, buf, size - 1);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        int e = errno;

        close(fd);
        return -e;
    }
    close(fd);
    buf[n] = '\0';
    return (int)n;
}

static int
has_word(const char *list, const char *word, char sep)
{
    size_t wl = strlen(word);
    const char *p = list;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, sep);
        size_t len = end ? (size_t)(end - p) : strlen(p);

        while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == ' '))
            len--;
        if (len == wl && strncmp(p, word, wl) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* mountinfo: id parent major:minor root mountpoint opts ... - fstype src
 * superopts */
static void
scan_mounts(void)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[4096];

    mounts_scanned = 1;
    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        char mnt[512], fstype[64], superopts[1024];
        char *dash = strstr(line, " - ");

        if (dash == NULL || sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 ||
            sscanf(dash + 3, "%63s %*s %1023s", fstype, superopts) != 2)
            continue;
        if (strcmp(fstype, "cgroup") == 0 && mount_v1[0] == '\0' &&
            has_word(superopts, "memory", ','))
            snprintf(mount_v1, sizeof(mount_v1), "%s", mnt);
        else if (strcmp(fstype, "cgroup2") == 0 && mount_v2[0] == '\0') {
            char path[600], ctl[1024];

            snprintf(path, sizeof(path), "%s/cgroup.controllers", mnt);
            if (read_small(path, ctl, sizeof(ctl)) >= 0 &&
                has_word(ctl, "memory", ' '))
                snprintf(mount_v2, sizeof(mount_v2), "%s", mnt);
        }
    }
    fclose(f);
}

const char *
ty__cgroup_memory_mount(enum ty__cgver *ver)
{
    if (!mounts_scanned)
        scan_mounts();
    if (mount_v1[0] != '\0') {
        *ver = TY_CG_V1;
        return mount_v1;
    }
    if (mount_v2[0] != '\0') {
        *ver = TY_CG_V2;
        return mount_v2;
    }
    *ver = TY_CG_NONE;
    return NULL;
}

/* /proc/<pid>/cgroup lines: "hier:controllers:path". */
char *
ty__cgroup_memory_dir(pid_t pid, enum ty__cgver *ver)
{
    const char *mount = ty__cgroup_memory_mount(ver);
    char path[64], line[4096];
    char *dir = NULL;
    FILE *f;

    if (mount == NULL)
        return NULL;
    if (pid == 0)
        snprintf(path, sizeof(path), "/proc/self/cgroup");
    else
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    f = fopen(path, "re");
    if (f == NULL)
        return NULL;
    while (dir == NULL && fgets(line, sizeof(line), f) != NULL) {
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        int match;

        if (c2 == NULL)
            continue;
        *c2 = '\0';
        line[strcspn(line, ":")] = '\0';
        if (*ver == TY_CG_V1)
            match = has_word(c1 + 1, "memory", ',');
        else
            match = strcmp(line, "0") == 0 && c1[1] == '\0';
        if (match) {
            char *p = c2 + 1;

            p[strcspn(p, "\n")] = '\0';
            if (asprintf(&dir, "%s%s", mount, strcmp(p, "/") ? p : "") < 0)
                dir = NULL;
        }
    }
    fclose(f);
    return dir;
}

static int64_t
read_int_file(const char *dir, const char *name)
{
    char path[1024], buf[64];
    char *end;
    long long v;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (read_small(path, buf, sizeof(buf)) < 0)
        return -1;
    if (strncmp(buf, "max", 3) == 0)
        return -1;
    v = strtoll(buf, &end, 10);
    if (end == buf)
        return -1;
    return v;
}

/* The value of "key N" in a flat keyed file (memory.stat, memory.events,
 * memory.oom_control). */
static int64_t
read_keyed(const char *dir, const char *name, const char *key)
{
    char path[1024], buf[8192];
    size_t kl = strlen(key);
    const char *p;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (read_small(path, buf, sizeof(buf)) < 0)
        return -1;
    for (p = buf; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
            return strtoll(p + kl + 1, NULL, 10);
    }
    return -1;
}

int
ty__cgroup_read_memory(const char *dir, enum ty__cgver ver,
                       struct ty__cgmem *out)
{
    out->usage = out->anon = out->file = out->peak = -1;
    out->limit = out->oom_kills = -1;
    if (ver == TY_CG_V1) {
        out->usage = read_int_file(dir, "memory.usage_in_bytes");
        if (out->usage < 0)
            return -ENOENT;
        out->peak = read_int_file(dir, "memory.max_usage_in_bytes");
        out->limit = read_int_file(dir, "memory.limit_in_bytes");
        /* v1 reports "unlimited" as a page-rounded LONG_MAX. */
        if (out->limit >= (int64_t)1 << 60)
            out->limit = -1;
        out->anon = read_keyed(dir, "memory.stat", "total_rss");
        out->file = read_keyed(dir, "memory.stat", "total_cache");
        out->oom_kills = read_keyed(dir, "memory.oom_control", "oom_kill");
        return 0;
    }
    if (ver == TY_CG_V2) {
        out->usage = read_int_file(dir, "memory.current");
        if (out->usage < 0)
            return -ENOENT;
        out->peak = read_int_file(dir, "memory.peak");
        out->limit = read_int_file(dir, "memory.max");
        out->anon = read_keyed(dir, "memory.stat", "anon");
        out->file = read_keyed(dir, "memory.stat", "file");
        out->oom_kills = read_keyed(dir, "memory.events", "oom_kill");
        return 0;
    }
    return -ENOTSUP;
}

/*
 * ty_cgroup.c — finding and reading memory cgroups (see ty_cgroup.h).
 *
 * The memory controller's mount point comes from /proc/self/mountinfo (a v1
 * "cgroup" mount whose options list "memory", else a "cgroup2" mount whose
 * cgroup.controllers lists "memory"); a process's place in it from
 * /proc/<pid>/cgroup. Every file read here is small, so each is read whole
 * with one read(2). A reading parses the same files whoever reads them:
 * by path here, through open descriptors in the runner's monitor
 * (ty__cgroup_read_from).
 */
#include "ty_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Big enough for memory.stat, the largest file read here. */
#define FILE_MAX 8192

static const char *const files[2][TY_CGF_COUNT] = {
    {"memory.usage_in_bytes", "memory.max_usage_in_bytes",
     "memory.limit_in_bytes", "memory.stat", "memory.oom_control"},
    {"memory.current", "memory.peak", "memory.max", "memory.stat",
     "memory.events"},
};
/* The keys of memory.stat for anonymous memory and page cache. */
static const char *const anon_key[2] = {"total_rss", "anon"};
static const char *const file_key[2] = {"total_cache", "file"};

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

int
ty__cgroup_read_file(const char *dir, const char *name, char *buf, size_t size)
{
    char path[1024];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return read_small(path, buf, size);
}

bool
ty__cgroup_has_word(const char *list, const char *word, char sep)
{
    size_t wl = strlen(word);
    const char *p = list;

    while (p != NULL && *p != '\0') {
        const char *end = strchr(p, sep);
        size_t len = end ? (size_t)(end - p) : strlen(p);

        while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == ' '))
            len--;
        if (len == wl && strncmp(p, word, wl) == 0)
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

/* mountinfo: id parent major:minor root mountpoint opts ... - fstype src
 * superopts */
void
ty__cgroup_each_mount(void (*fn)(const char *mnt, const char *fstype,
                                 const char *super, void *arg),
                      void *arg)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    char line[4096];

    if (f == NULL)
        return;
    while (fgets(line, sizeof(line), f) != NULL) {
        char mnt[1024], fstype[64], super[1024];
        char *dash = strstr(line, " - ");

        if (dash == NULL || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
            sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
            continue;
        fn(mnt, fstype, super, arg);
    }
    fclose(f);
}

/* A v1 "cgroup" mount whose options list memory, or the first "cgroup2"
 * mount whose cgroup.controllers lists memory. */
static void
memory_mount(const char *mnt, const char *fstype, const char *super, void *arg)
{
    char ctl[1024];

    (void)arg;
    if (strcmp(fstype, "cgroup") == 0 && mount_v1[0] == '\0' &&
        ty__cgroup_has_word(super, "memory", ','))
        snprintf(mount_v1, sizeof(mount_v1), "%s", mnt);
    else if (strcmp(fstype, "cgroup2") == 0 && mount_v2[0] == '\0' &&
             ty__cgroup_read_file(mnt, "cgroup.controllers", ctl,
                                  sizeof(ctl)) >= 0 &&
             ty__cgroup_has_word(ctl, "memory", ' '))
        snprintf(mount_v2, sizeof(mount_v2), "%s", mnt);
}

const char *
ty__cgroup_memory_mount(enum ty__cgver *ver)
{
    if (!mounts_scanned) {
        mounts_scanned = 1;
        ty__cgroup_each_mount(memory_mount, NULL);
    }
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
            match = ty__cgroup_has_word(c1 + 1, "memory", ',');
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

/* A number, or -1 for "max" and anything that is not one. */
static int64_t
parse_value(const char *buf)
{
    char *end;
    long long v;

    if (strncmp(buf, "max", 3) == 0)
        return -1;
    v = strtoll(buf, &end, 10);
    return end == buf ? -1 : v;
}

/* The value of "key N" in a flat keyed file's contents. */
static int64_t
parse_keyed(const char *buf, const char *key)
{
    size_t kl = strlen(key);

    for (const char *p = buf; p != NULL && *p != '\0';) {
        if (strncmp(p, key, kl) == 0 && p[kl] == ' ')
            return strtoll(p + kl + 1, NULL, 10);
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return -1;
}

int64_t
ty__cgroup_read_keyed(const char *dir, const char *name, const char *key)
{
    char buf[FILE_MAX];

    if (ty__cgroup_read_file(dir, name, buf, sizeof(buf)) < 0)
        return -1;
    return parse_keyed(buf, key);
}

const char *
ty__cgroup_file(enum ty__cgver ver, enum ty__cgfile f)
{
    return files[ver == TY_CG_V1 ? 0 : 1][f];
}

static int64_t
read_value(int (*reader)(const void *arg, enum ty__cgfile f, char *buf,
                         size_t size),
           const void *arg, enum ty__cgfile f)
{
    char buf[64];

    return reader(arg, f, buf, sizeof(buf)) < 0 ? -1 : parse_value(buf);
}

int
ty__cgroup_read_from(enum ty__cgver ver,
                     int (*reader)(const void *arg, enum ty__cgfile f,
                                   char *buf, size_t size),
                     const void *arg, struct ty__cgmem *out)
{
    int v = ver == TY_CG_V1 ? 0 : 1;
    char buf[FILE_MAX];
    int n;

    out->usage = out->anon = out->file = out->peak = -1;
    out->limit = out->oom_kills = -1;
    if (ver != TY_CG_V1 && ver != TY_CG_V2)
        return -ENOTSUP;
    if ((n = reader(arg, TY_CGF_USAGE, buf, sizeof(buf))) < 0)
        return n;
    out->usage = parse_value(buf);
    out->peak = read_value(reader, arg, TY_CGF_PEAK);
    out->limit = read_value(reader, arg, TY_CGF_LIMIT);
    /* v1 reports "unlimited" as a page-rounded LONG_MAX. */
    if (ver == TY_CG_V1 && out->limit >= (int64_t)1 << 60)
        out->limit = -1;
    if (reader(arg, TY_CGF_STAT, buf, sizeof(buf)) > 0) {
        out->anon = parse_keyed(buf, anon_key[v]);
        out->file = parse_keyed(buf, file_key[v]);
    }
    if (reader(arg, TY_CGF_EVENTS, buf, sizeof(buf)) > 0)
        out->oom_kills = parse_keyed(buf, "oom_kill");
    return 0;
}

/* A cgroup read by path: its directory and version. */
struct at {
    const char *dir;
    enum ty__cgver ver;
};

static int
read_at(const void *arg, enum ty__cgfile f, char *buf, size_t size)
{
    const struct at *a = arg;

    return ty__cgroup_read_file(a->dir, ty__cgroup_file(a->ver, f), buf, size);
}

int
ty__cgroup_read_memory(const char *dir, enum ty__cgver ver,
                       struct ty__cgmem *out)
{
    struct at a = {dir, ver};
    int rc = ty__cgroup_read_from(ver, read_at, &a, out);

    if (rc == -ENOTSUP)
        return rc;
    /* no usage, unreadable or not a number: the cgroup is gone */
    return rc < 0 || out->usage < 0 ? -ENOENT : 0;
}

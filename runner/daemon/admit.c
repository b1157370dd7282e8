/*
 * admit.c — a minimal admission (the contract of daemon/admit_int.h):
 * a task's need is the sum of its groups' limits, it fits when that and
 * what runs stay within the budget, and the plan's source is copied file
 * by file beneath descriptors, following no link.
 */
#include "daemon/admit_int.h"

#include "base/fsat.h"
#include "base/util.h"
#include "ty_units.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_MAX_BYTES ((uint64_t)64 << 20)
#define COPY_MAX_ENTRIES 10000

void
admit__need(const struct composition *c, struct admit_need *need)
{
    memset(need, 0, sizeof(*need));
    for (size_t i = 0; i < c->ngroups; i++) {
        const struct composition_group *g = &c->groups[i];

        if (g->memory_bytes == 0)
            need->unlimited_memory = true;
        need->memory_bytes += g->memory_bytes * (uint64_t)g->instances;
        need->millicpu += g->millicpu * g->instances;
    }
}

int
admit__parse_memory_budget(const char *s, uint64_t mem_available, uint64_t *out,
                           struct err *err)
{
    char why[128];
    char *end;
    double pct;

    if (s == NULL || s[0] == '\0')
        s = "75%";
    if (s[strlen(s) - 1] == '%') {
        pct = strtod(s, &end);
        if (end == s || *end != '%' || !(pct > 0 && pct <= 100))
            return err_set(err, EINVAL,
                           "expected a size like 12GiB or a percentage of "
                           "MemAvailable like 75%%, got \"%s\"",
                           s);
        *out = (uint64_t)((double)mem_available * pct / 100);
        return 0;
    }
    if (ty__parse_size(s, out, why, sizeof(why)) < 0 || *out == 0)
        return err_set(err, EINVAL,
                       "expected a size like 12GiB or a percentage of "
                       "MemAvailable like 75%%, got \"%s\"",
                       s);
    return 0;
}

int
admit__parse_cpu_budget(const char *s, int64_t online_cpus, int64_t *out,
                        struct err *err)
{
    char why[128];

    if (s == NULL || s[0] == '\0') {
        *out = online_cpus * 1000;
        return 0;
    }
    if (ty__parse_cpu(s, out, why, sizeof(why)) < 0 || *out <= 0)
        return err_set(err, EINVAL, "expected CPUs like 2 or 1500m, got \"%s\"",
                       s);
    return 0;
}

static uint64_t
charged(const struct admit_need *n, const struct admit_budget *b)
{
    return n->unlimited_memory ? b->memory_bytes : n->memory_bytes;
}

bool
admit__fits(const struct admit_need *need, const struct admit_need *used,
            const struct admit_budget *b, char *why, size_t whylen)
{
    uint64_t want = charged(need, b), have = charged(used, b);
    uint64_t free_b = have >= b->memory_bytes ? 0 : b->memory_bytes - have;
    int64_t free_c = b->millicpu - used->millicpu;
    char w[32], f[32], t[32];

    if (want > free_b || (want == 0 && used->unlimited_memory)) {
        ty__format_bytes(want, w, sizeof(w));
        ty__format_bytes(free_b, f, sizeof(f));
        ty__format_bytes(b->memory_bytes, t, sizeof(t));
        snprintf(why, whylen, "needs %s%s, %s free of the %s budget", w,
                 need->unlimited_memory ? " (a group has no memory limit)" : "",
                 f, t);
        return false;
    }
    if (need->millicpu > free_c) {
        snprintf(why, whylen,
                 "needs %lldm CPU, %lldm free of the %lldm CPU budget",
                 (long long)need->millicpu,
                 (long long)(free_c < 0 ? 0 : free_c), (long long)b->millicpu);
        return false;
    }
    return true;
}

bool
admit__too_large(const struct admit_need *need, const struct admit_budget *b,
                 char *why, size_t whylen)
{
    struct admit_need none = {0};

    if (need->unlimited_memory)
        return false;
    return !admit__fits(need, &none, b, why, whylen);
}

struct copy {
    uint64_t bytes;
    int entries;
};

static int copy_dir(int src, int dst, struct copy *cp, struct err *err);

static int
copy_file(int src, const char *name, int dst, struct copy *cp, struct err *err)
{
    cleanup_close int in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    cleanup_close int out = -1;
    struct stat st;
    char buf[65536];
    ssize_t n;

    if (in < 0 || fstat(in, &st) < 0)
        return err_sys(err, errno, "%s", name);
    out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                 st.st_mode & 0777);
    if (out < 0)
        return err_sys(err, errno, "%s", name);
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        cp->bytes += (uint64_t)n;
        if (cp->bytes > COPY_MAX_BYTES)
            return err_set(err, EFBIG,
                           "the plan's folder holds more than "
                           "64 MiB");
        if (fd_write_all(out, buf, (size_t)n) < 0)
            return err_sys(err, errno, "%s", name);
    }
    if (n < 0)
        return err_sys(err, errno, "%s", name);
    return 0;
}

static int
copy_entry(int src, const char *name, int dst, struct copy *cp, struct err *err)
{
    struct stat st;
    cleanup_close int s = -1, d = -1;

    if (++cp->entries > COPY_MAX_ENTRIES)
        return err_set(err, EFBIG,
                       "the plan's folder holds more than "
                       "10000 entries");
    if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return err_sys(err, errno, "%s", name);
    if (S_ISREG(st.st_mode))
        return copy_file(src, name, dst, cp, err);
    if (!S_ISDIR(st.st_mode))
        return 0; /* links, sockets, ...: not part of a plan's source */
    if (mkdirat(dst, name, 0755) < 0)
        return err_sys(err, errno, "%s", name);
    s = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    d = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (s < 0 || d < 0)
        return err_sys(err, errno, "%s", name);
    return copy_dir(s, d, cp, err) < 0 ? err_prefix(err, "%s", name) : 0;
}

static int
copy_dir(int src, int dst, struct copy *cp, struct err *err)
{
    int fd = dup(src);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    struct dirent *e;
    int rc = 0;

    if (dir == NULL) {
        if (fd >= 0)
            close(fd);
        return err_sys(err, errno, "reading a folder");
    }
    while (rc == 0 && (e = readdir(dir)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc = copy_entry(src, e->d_name, dst, cp, err);
    closedir(dir);
    return rc;
}

int
admit__copy_tree(const char *src_dir, int dst_dirfd, const char *rel,
                 struct err *err)
{
    cleanup_close int src = fsat_root(src_dir, err);
    cleanup_close int dst = -1;
    struct copy cp = {0};
    cleanup_free char *full = NULL;

    if (src < 0)
        return -1;
    dst = fsat_dir(dst_dirfd, rel, true, 0755, err);
    if (dst < 0)
        return -1;
    if (copy_dir(src, dst, &cp, err) == 0)
        return 0;
    err_prefix(err, "copying %s", src_dir);
    full = xasprintf("/proc/self/fd/%d/%s", dst_dirfd, rel);
    rm_rf(full, NULL);
    return -1;
}

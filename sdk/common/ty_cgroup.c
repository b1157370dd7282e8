/*
 * ty_cgroup.c — finding and reading memory cgroups (see ty_cgroup.h).
 *
 * The memory controller's mounts come from /proc/self/mountinfo (v1
 * "cgroup" mounts whose options list "memory", else "cgroup2" mounts whose
 * cgroup.controllers lists "memory"); a process's place in the hierarchy
 * from /proc/<pid>/cgroup. The two are joined as runc and systemd join
 * them: the mount's root (mountinfo's fourth field) is the cgroup mounted
 * there, so it is taken off the front of the process's path — "/" on a
 * host, the container's own cgroup in a container without a cgroup
 * namespace (Docker on cgroup v1), "/" again with one (cgroup v2) — and a
 * path outside every mount's root has no directory here. Only /proc and
 * the mounts this process sees are read: nothing a process under watch
 * can write decides which file is opened beyond its own cgroup's name.
 *
 * Every file read here is small, so each is read whole with one read(2). A
 * reading parses the same files whoever reads them: by path here, through
 * open descriptors in the runner's monitor (ty__cgroup_read_from).
 */
#include "ty_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Big enough for memory.stat, the largest file read here. */
#define FILE_MAX 8192
/* Mount points and cgroup paths longer than this are not looked at. */
#define PATH_MAX_CG 1024
/* Mounts of the memory hierarchy looked at (bind mounts of parts of it). */
#define MOUNTS_MAX 8

static const char *const files[2][TY_CGF_COUNT] = {
    {"memory.usage_in_bytes", "memory.max_usage_in_bytes",
     "memory.limit_in_bytes", "memory.stat", "memory.oom_control"},
    {"memory.current", "memory.peak", "memory.max", "memory.stat",
     "memory.events"},
};
/* The keys of memory.stat for anonymous memory and page cache. */
static const char *const anon_key[2] = {"total_rss", "anon"};
static const char *const file_key[2] = {"total_cache", "file"};

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

/* The next whole line of f into buf; a line longer than buf is skipped
 * (read to its end), so that its tail is never taken for a line of its
 * own. false at the end of the file. */
static bool
next_line(FILE *f, char *buf, int size)
{
    while (fgets(buf, size, f) != NULL) {
        int c;

        if (strchr(buf, '\n') != NULL || feof(f))
            return true;
        while ((c = getc(f)) != EOF && c != '\n')
            ;
    }
    return false;
}

/* ------------------------------------------------------------------------
 * Mounts
 */

/* One line of mountinfo, its fields pointing into the line:
 * "id parent major:minor root mountpoint opts [tags] - fstype src super". */
struct mountline {
    char *root, *mnt, *fstype, *super;
};

/* mountinfo writes space, tab, newline and backslash as \ooo. */
static void
unescape(char *s)
{
    char *out = s;

    for (; *s != '\0'; s++) {
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
            s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
            *out++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + s[3] - '0');
            s += 3;
        } else {
            *out++ = *s;
        }
    }
    *out = '\0';
}

static bool
parse_mountline(char *line, struct mountline *l)
{
    char *f[5] = {0}, *dash = strstr(line, " - "), *save = NULL, *w;
    int n = 0;

    if (dash == NULL)
        return false;
    *dash = '\0';
    for (w = strtok_r(line, " ", &save); w != NULL && n < 5;
         w = strtok_r(NULL, " ", &save))
        f[n++] = w;
    l->fstype = strtok_r(dash + 3, " \n", &save);
    if (n < 5 || l->fstype == NULL || strtok_r(NULL, " \n", &save) == NULL ||
        (l->super = strtok_r(NULL, " \n", &save)) == NULL)
        return false;
    l->root = f[3];
    l->mnt = f[4];
    unescape(l->root);
    unescape(l->mnt);
    return true;
}

/* Call fn with each mount of the mountinfo file at path. */
static void
each_mountline(const char *path,
               void (*fn)(const struct mountline *l, void *arg), void *arg)
{
    FILE *f = fopen(path, "re");
    char line[4096];
    struct mountline l;

    if (f == NULL)
        return;
    while (next_line(f, line, sizeof(line)))
        if (parse_mountline(line, &l))
            fn(&l, arg);
    fclose(f);
}

struct each_mount {
    void (*fn)(const char *mnt, const char *fstype, const char *super,
               void *arg);
    void *arg;
};

static void
each_mount_fn(const struct mountline *l, void *arg)
{
    const struct each_mount *e = arg;

    e->fn(l->mnt, l->fstype, l->super, e->arg);
}

void
ty__cgroup_each_mount(void (*fn)(const char *mnt, const char *fstype,
                                 const char *super, void *arg),
                      void *arg)
{
    struct each_mount e = {fn, arg};

    each_mountline("/proc/self/mountinfo", each_mount_fn, &e);
}

/* The mounts of the memory controller's hierarchy: each mount point and the
 * cgroup mounted there (mountinfo's root: "/" on a host, the container's
 * own cgroup in a container without a cgroup namespace). */
struct cgmounts {
    enum ty__cgver ver;
    int n;
    struct {
        char mnt[PATH_MAX_CG];
        char root[PATH_MAX_CG];
    } m[MOUNTS_MAX];
};

struct mount_scan {
    const char *prefix; /* "" for the system, a fake root in tests */
    enum ty__cgver want;
    struct cgmounts *out;
};

static void
add_cgmount(struct cgmounts *ms, enum ty__cgver ver, const struct mountline *l)
{
    if (ms->n == MOUNTS_MAX || strlen(l->mnt) >= sizeof(ms->m[0].mnt) ||
        strlen(l->root) >= sizeof(ms->m[0].root))
        return;
    ms->ver = ver;
    snprintf(ms->m[ms->n].mnt, sizeof(ms->m[0].mnt), "%s", l->mnt);
    snprintf(ms->m[ms->n].root, sizeof(ms->m[0].root), "%s", l->root);
    ms->n++;
}

/* A v1 "cgroup" mount whose options list memory, or a "cgroup2" mount
 * whose cgroup.controllers lists memory. */
static void
memory_mount(const struct mountline *l, void *arg)
{
    const struct mount_scan *sc = arg;
    char dir[PATH_MAX_CG * 2], ctl[1024];

    if (sc->want == TY_CG_V1) {
        if (strcmp(l->fstype, "cgroup") == 0 &&
            ty__cgroup_has_word(l->super, "memory", ','))
            add_cgmount(sc->out, TY_CG_V1, l);
        return;
    }
    if (strcmp(l->fstype, "cgroup2") != 0)
        return;
    snprintf(dir, sizeof(dir), "%s%s", sc->prefix, l->mnt);
    if (ty__cgroup_read_file(dir, "cgroup.controllers", ctl, sizeof(ctl)) >=
            0 &&
        ty__cgroup_has_word(ctl, "memory", ' '))
        add_cgmount(sc->out, TY_CG_V2, l);
}

/* The memory mounts under prefix; the v1 hierarchy wins when both are
 * there (cgroup v2 then holds no memory controller). */
static void
scan_mounts(const char *prefix, struct cgmounts *out)
{
    struct mount_scan sc = {prefix, TY_CG_V1, out};
    char path[PATH_MAX_CG];

    out->n = 0;
    out->ver = TY_CG_NONE;
    snprintf(path, sizeof(path), "%s/proc/self/mountinfo", prefix);
    each_mountline(path, memory_mount, &sc);
    if (out->n > 0)
        return;
    sc.want = TY_CG_V2;
    each_mountline(path, memory_mount, &sc);
}

static struct cgmounts sys_mounts;
static pthread_once_t sys_once = PTHREAD_ONCE_INIT;

static void
scan_sys_mounts(void)
{
    scan_mounts("", &sys_mounts);
}

const char *
ty__cgroup_memory_mount(enum ty__cgver *ver)
{
    pthread_once(&sys_once, scan_sys_mounts);
    *ver = sys_mounts.n > 0 ? sys_mounts.ver : TY_CG_NONE;
    return sys_mounts.n > 0 ? sys_mounts.m[0].mnt : NULL;
}

/* ------------------------------------------------------------------------
 * A process's memory cgroup
 */

/* The path of the memory line of a /proc/<pid>/cgroup file
 * ("hier:controllers:path"), in buf; false when there is none. */
static bool
cgroup_path(const char *file, enum ty__cgver ver, char *buf, size_t size)
{
    FILE *f = fopen(file, "re");
    char line[4096];
    bool found = false;

    while (!found && f != NULL && next_line(f, line, sizeof(line))) {
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

        if (c2 == NULL)
            continue;
        *c1 = *c2 = '\0';
        if (ver == TY_CG_V1 ? ty__cgroup_has_word(c1 + 1, "memory", ',')
                            : strcmp(line, "0") == 0 && c1[1] == '\0') {
            c2[1 + strcspn(c2 + 1, "\n")] = '\0';
            found = strlen(c2 + 1) < size;
            if (found)
                snprintf(buf, size, "%s", c2 + 1);
        }
    }
    if (f != NULL)
        fclose(f);
    return found;
}

/* An absolute path without "." or ".." parts (a cgroup outside the
 * reader's cgroup namespace reads "/../x"), nor empty parts. */
static bool
clean_path(const char *p)
{
    if (p[0] != '/')
        return false;
    if (p[1] == '\0')
        return true;
    for (p++;;) {
        size_t n = strcspn(p, "/");

        if (n == 0 || (n == 1 && p[0] == '.') ||
            (n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        if (p[n] == '\0')
            return true;
        p += n + 1;
    }
}

/* The part of path below root, "" for root itself; NULL when path is not
 * in the subtree mounted at root. */
static const char *
below(const char *root, const char *path)
{
    size_t n = strlen(root);

    if (strcmp(root, "/") == 0)
        return strcmp(path, "/") == 0 ? "" : path;
    if (strncmp(path, root, n) != 0)
        return NULL;
    return path[n] == '\0' ? "" : path[n] == '/' ? path + n : NULL;
}

/* dir holds the usage file of a memory cgroup of version ver (a regular
 * file: no link is followed). */
static bool
has_usage(const char *dir, enum ty__cgver ver)
{
    char path[PATH_MAX_CG * 3];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", dir,
             ty__cgroup_file(ver, TY_CGF_USAGE));
    return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISREG(st.st_mode);
}

/* For this process, whose cgroup exists while it runs: when the mount does
 * not show the directory (a mount whose root is not what mountinfo says),
 * the nearest directory above it, up to the mount point, that it does
 * show. Never for another process: one that has just exited must not be
 * given its parent's figures. */
static void
nearest_shown(char *dir, size_t mnt_len, enum ty__cgver ver)
{
    while (!has_usage(dir, ver)) {
        char *slash = strrchr(dir, '/');

        if (slash == NULL || (size_t)(slash - dir) < mnt_len)
            return;
        *slash = '\0';
    }
}

static char *
memory_dir(const char *prefix, const struct cgmounts *ms, pid_t pid,
           enum ty__cgver *ver)
{
    char file[PATH_MAX_CG], path[PATH_MAX_CG * 2];

    *ver = ms->n > 0 ? ms->ver : TY_CG_NONE;
    if (pid == 0)
        snprintf(file, sizeof(file), "%s/proc/self/cgroup", prefix);
    else
        snprintf(file, sizeof(file), "%s/proc/%d/cgroup", prefix, (int)pid);
    if (ms->n == 0 || !cgroup_path(file, ms->ver, path, sizeof(path)) ||
        !clean_path(path))
        return NULL;
    for (int i = 0; i < ms->n; i++) {
        const char *rel = below(ms->m[i].root, path);
        char *dir;

        if (rel == NULL)
            continue;
        if (asprintf(&dir, "%s%s%s", prefix, ms->m[i].mnt, rel) < 0)
            return NULL;
        if (pid == 0)
            nearest_shown(dir, strlen(prefix) + strlen(ms->m[i].mnt), ms->ver);
        return dir;
    }
    return NULL;
}

char *
ty__cgroup_memory_dir(pid_t pid, enum ty__cgver *ver)
{
    pthread_once(&sys_once, scan_sys_mounts);
    return memory_dir("", &sys_mounts, pid, ver);
}

char *
ty__cgroup_memory_dir_at(const char *root, pid_t pid, enum ty__cgver *ver)
{
    struct cgmounts *ms = calloc(1, sizeof(*ms));
    char *dir;

    if (ms == NULL) {
        *ver = TY_CG_NONE;
        return NULL;
    }
    scan_mounts(root, ms);
    dir = memory_dir(root, ms, pid, ver);
    free(ms);
    return dir;
}

/* ------------------------------------------------------------------------
 * Readings
 */

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

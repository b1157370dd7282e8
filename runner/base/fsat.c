/*
 * fsat.c — files and folders beneath a folder descriptor, following no
 * link (see base/fsat.h).
 *
 * The coordinator runs as root and writes into folders instances can
 * write (a container's /outputs is its folder on the host): a link planted
 * there must never take a write, a truncation or a read somewhere else.
 * openat2(2) resolves a whole path with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS in one call; where the kernel lacks it (ENOSYS),
 * the path is walked one component at a time, each opened relative to the
 * folder before it with O_NOFOLLOW, so no component is ever looked up by
 * a path that a link could redirect. Folders to create are always walked:
 * mkdirat, then open what is there with O_NOFOLLOW | O_DIRECTORY, so a
 * link raced in between fails instead of being entered.
 */
#include "base/fsat.h"

#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FSAT_MAX_DEPTH 64

static int have_openat2 = -1; /* -1 unknown, 0 no, 1 yes */
static bool force_walk;

void
fsat__force_walk(bool on)
{
    force_walk = on;
}

static int
fail(struct err *err, int code, const char *rel)
{
    if (code == ELOOP)
        return err_set(err, ELOOP,
                       "%s: a symbolic link on the way (links "
                       "are not followed here)",
                       rel);
    if (code == EXDEV)
        return err_set(err, EXDEV,
                       "%s: outside its folder (absolute or "
                       "with \"..\")",
                       rel);
    return err_sys(err, code, "%s", rel);
}

/* Split rel into components (in buf), refusing absolute paths and "..";
 * "." and empty components are skipped. Returns the count or -errno. */
static int
split(const char *rel, char *buf, size_t size, char **comp, int max)
{
    int n = 0;

    if (rel[0] == '/')
        return -EXDEV;
    if (strlen(rel) >= size)
        return -ENAMETOOLONG;
    strcpy(buf, rel);
    for (char *save = NULL, *c = strtok_r(buf, "/", &save); c != NULL;
         c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, "..") == 0)
            return -EXDEV;
        if (strcmp(c, ".") == 0)
            continue;
        if (n == max)
            return -ENAMETOOLONG;
        comp[n++] = c;
    }
    return n;
}

/* openat2 beneath dirfd with no links; -ENOSYS when the kernel lacks it. */
static int
open2(int dirfd, const char *rel, int flags, mode_t mode)
{
    struct open_how how = {
        .flags = (unsigned)flags | O_CLOEXEC | O_NOFOLLOW,
        .mode = (flags & O_CREAT) ? mode : 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
    };
    long fd;

    if (force_walk || have_openat2 == 0)
        return -ENOSYS;
    do
        fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
    while (fd < 0 && errno == EINTR);
    if (fd < 0 && errno == ENOSYS)
        have_openat2 = 0;
    else
        have_openat2 = 1;
    return fd < 0 ? -errno : (int)fd;
}

/* One component beneath fd, never through a link; a link where a folder
 * was wanted is ELOOP whatever the kernel says. */
static int
open_one(int fd, const char *name, int flags, mode_t mode)
{
    int r;

    do
        r = openat(fd, name, flags | O_CLOEXEC | O_NOFOLLOW, mode);
    while (r < 0 && errno == EINTR);
    if (r < 0 && errno == ENOTDIR) {
        struct stat st;

        if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISLNK(st.st_mode))
            errno = ELOOP;
    }
    return r < 0 ? -errno : r;
}

/* The folder after the first n components of comp, made when create. */
static int
walk_dirs(int dirfd, char **comp, int n, bool create, mode_t mode)
{
    int fd = open_one(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);

    for (int i = 0; i < n && fd >= 0; i++) {
        int next;

        if (create && mkdirat(fd, comp[i], mode) < 0 && errno != EEXIST) {
            next = -errno;
        } else {
            next = open_one(fd, comp[i], O_RDONLY | O_DIRECTORY, 0);
        }
        close(fd);
        fd = next;
    }
    return fd;
}

int
fsat_root(const char *path, struct err *err)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0)
        return err_sys(err, errno, "%s", path);
    return fd;
}

int
fsat_open(int dirfd, const char *rel, int flags, mode_t mode, struct err *err)
{
    char buf[PATH_MAX];
    char *comp[FSAT_MAX_DEPTH];
    int n = split(rel, buf, sizeof(buf), comp, FSAT_MAX_DEPTH);
    int dfd, fd;

    if (n < 0)
        return fail(err, -n, rel);
    if (n == 0)
        return fail(err, EISDIR, rel);
    fd = open2(dirfd, rel, flags, mode);
    if (fd != -ENOSYS)
        return fd < 0 ? fail(err, -fd, rel) : fd;
    dfd = walk_dirs(dirfd, comp, n - 1, false, 0);
    if (dfd < 0)
        return fail(err, -dfd, rel);
    fd = open_one(dfd, comp[n - 1], flags, mode);
    close(dfd);
    return fd < 0 ? fail(err, -fd, rel) : fd;
}

int
fsat_dir(int dirfd, const char *rel, bool create, mode_t mode, struct err *err)
{
    char buf[PATH_MAX];
    char *comp[FSAT_MAX_DEPTH];
    int n = split(rel, buf, sizeof(buf), comp, FSAT_MAX_DEPTH);
    int fd;

    if (n < 0)
        return fail(err, -n, rel);
    if (!create && n > 0) {
        fd = open2(dirfd, rel, O_RDONLY | O_DIRECTORY, 0);
        if (fd != -ENOSYS)
            return fd < 0 ? fail(err, -fd, rel) : fd;
    }
    fd = walk_dirs(dirfd, comp, n, create, mode);
    return fd < 0 ? fail(err, -fd, rel[0] ? rel : ".") : fd;
}

int
fsat_parent(int dirfd, const char *rel, bool create, mode_t mode,
            const char **base, struct err *err)
{
    const char *slash = strrchr(rel, '/');
    cleanup_free char *dir = NULL;

    *base = slash ? slash + 1 : rel;
    if (**base == '\0' || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0)
        return fail(err, strcmp(*base, "..") == 0 ? EXDEV : EINVAL, rel);
    if (rel[0] == '/')
        return fail(err, EXDEV, rel);
    dir = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup("");
    return fsat_dir(dirfd, dir, create, mode, err);
}

char *
fsat_read(int dirfd, const char *rel, size_t max_bytes, size_t *len,
          struct err *err)
{
    /* O_NONBLOCK: a planted FIFO must not hang the reader. */
    cleanup_close int fd = fsat_open(dirfd, rel, O_RDONLY | O_NONBLOCK, 0, err);
    struct stat st;

    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) < 0)
        return err_sys(err, errno, "%s", rel), NULL;
    if (!S_ISREG(st.st_mode))
        return err_set(err, EINVAL, "%s: not a regular file", rel), NULL;
    return fd_read_all(fd, rel, max_bytes, len, err);
}

int
fsat_move(int fromfd, const char *from, int tofd, const char *to,
          struct err *err)
{
    if (strchr(from, '/') != NULL || strchr(to, '/') != NULL)
        return err_set(err, EINVAL, "%s -> %s: names, not paths", from, to);
    if (renameat(fromfd, from, tofd, to) < 0)
        return err_sys(err, errno, "%s -> %s", from, to);
    return 0;
}

static void
prune_fd(int fd, int depth)
{
    DIR *d;
    struct dirent *e;
    int dup_fd = dup(fd);

    if (dup_fd < 0 || (d = fdopendir(dup_fd)) == NULL) {
        if (dup_fd >= 0)
            close(dup_fd);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        int sub;

        if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
            strcmp(e->d_name, "..") == 0 || depth >= FSAT_MAX_DEPTH)
            continue;
        sub = open_one(fd, e->d_name, O_RDONLY | O_DIRECTORY, 0);
        if (sub < 0)
            continue;
        prune_fd(sub, depth + 1);
        close(sub);
        (void)unlinkat(fd, e->d_name, AT_REMOVEDIR);
    }
    closedir(d);
}

void
fsat_prune(int dirfd, const char *rel)
{
    const char *base;
    cleanup_close int parent = fsat_parent(dirfd, rel, false, 0, &base, NULL);
    cleanup_close int fd = -1;

    if (parent < 0)
        return;
    fd = open_one(parent, base, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return;
    prune_fd(fd, 0);
    (void)unlinkat(parent, base, AT_REMOVEDIR);
}

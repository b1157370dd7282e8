/*
 * admit_copy.c — the snapshot of a plan's source taken at submit
 * (admit__copy_tree, see admit_int.h).
 *
 * A queued task runs what was submitted, not what the plan's folder holds
 * when its turn comes, so submit copies the folder into the task's own.
 * The daemon may run as another user than the one who submits, and the
 * folder is the user's to change while we read it, so the walk follows
 * nothing: every entry is looked at with fstatat(AT_SYMLINK_NOFOLLOW),
 * opened beneath its folder's descriptor with O_NOFOLLOW (O_NONBLOCK, so
 * a fifo swapped in cannot hang us) and checked again with fstat once
 * open. Only regular files and folders are copied. The copy is bounded
 * (bytes, entries, depth) so a submit of the wrong folder fails quickly
 * instead of filling the disk, and it is built under a temporary name
 * and renamed into place, so the task's plans/<plan> is whole or absent.
 */
#include "daemon/admit_int.h"

#include "base/util.h"
#include "ty_units.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COPY_BUF (64 * 1024)
#define TMP_TRIES 100
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

struct copy {
    const struct admit_copy_limits *lim;
    uint64_t bytes;
    uint64_t entries;
    char *buf;
    struct err *err;
};

/* What this call made in the destination, to remove on failure: the
 * outermost folder it created (a missing parent of rel, else the
 * temporary folder), as a name in the folder fd. */
struct made {
    int fd;
    char name[NAME_MAX + 1];
};

static int copy_dir(struct copy *cp, int sfd, int dfd, const char *path,
                    int depth);

static int
write_failed(struct copy *cp, int code, const char *path)
{
    err_sys(cp->err, code, "%s: copying into the task's snapshot", path);
    return err_status(cp->err, err_io_status(code));
}

static int
too_big(struct copy *cp, const char *path)
{
    char lim[32];

    ty__format_bytes(cp->lim->bytes, lim, sizeof(lim));
    err_set(cp->err, EFBIG,
            "%s: the plan's source holds more than %s of files (copied "
            "whole at submit); keep build outputs and data elsewhere",
            path, lim);
    return err_status(cp->err, EXIT_DATAERR);
}

/* Copy what is left of s into d, counting it against the bytes bound. */
static int
copy_data(struct copy *cp, int s, int d, const char *path)
{
    for (;;) {
        ssize_t n = read(s, cp->buf, COPY_BUF);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return err_sys(cp->err, errno, "%s: read", path);
        if (n == 0)
            return 0;
        cp->bytes += (uint64_t)n;
        if (cp->bytes > cp->lim->bytes)
            return too_big(cp, path);
        if (fd_write_all(d, cp->buf, (size_t)n) < 0)
            return write_failed(cp, errno, path);
    }
}

static int
copy_file(struct copy *cp, int sfd, int dfd, const char *name, const char *path)
{
    cleanup_close int s = openat(
        sfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    cleanup_close int d = -1;
    struct stat st;
    int rc;

    if (s < 0 && (errno == ELOOP || errno == ENOENT))
        return 0; /* replaced by a link, or gone, since we looked */
    if (s < 0 || fstat(s, &st) < 0)
        return err_sys(cp->err, errno, "%s", path);
    if (!S_ISREG(st.st_mode))
        return 0;
    if ((uint64_t)st.st_size > cp->lim->bytes - cp->bytes)
        return too_big(cp, path);
    d = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
               0600);
    if (d < 0)
        return write_failed(cp, errno, path);
    if (copy_data(cp, s, d, path) < 0)
        return -1;
    /* fchmod, not the mode of openat: the umask would take bits off */
    if (fchmod(d, st.st_mode & S_IRWXU) < 0)
        return write_failed(cp, errno, path);
    rc = close(d);
    d = -1;
    return rc < 0 ? write_failed(cp, errno, path) : 0;
}

static int
copy_subdir(struct copy *cp, int sfd, int dfd, const char *name,
            const char *path, int depth)
{
    cleanup_close int s = -1;
    cleanup_close int d = -1;

    if (depth > cp->lim->depth) {
        err_set(cp->err, ELOOP,
                "%s: folders nested more than %d deep in the plan's source",
                path, cp->lim->depth);
        return err_status(cp->err, EXIT_DATAERR);
    }
    s = openat(sfd, name, DIR_FLAGS | O_NONBLOCK);
    if (s < 0 && (errno == ELOOP || errno == ENOTDIR || errno == ENOENT))
        return 0;
    if (s < 0)
        return err_sys(cp->err, errno, "%s", path);
    if (mkdirat(dfd, name, 0700) < 0)
        return write_failed(cp, errno, path);
    d = openat(dfd, name, DIR_FLAGS);
    if (d < 0)
        return write_failed(cp, errno, path);
    return copy_dir(cp, s, d, path, depth);
}

/* One entry of the folder sfd: copied when it is a file or a folder. */
static int
copy_entry(struct copy *cp, int sfd, int dfd, const char *name,
           const char *dirpath, int depth)
{
    cleanup_free char *path = path_join(dirpath, name);
    struct stat st;

    if (++cp->entries > cp->lim->entries) {
        err_set(cp->err, E2BIG,
                "%s: the plan's source holds more than %llu files and "
                "folders (copied whole at submit)",
                path, (unsigned long long)cp->lim->entries);
        return err_status(cp->err, EXIT_DATAERR);
    }
    if (strcmp(name, ".git") == 0)
        return 0;
    if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : err_sys(cp->err, errno, "%s", path);
    if (S_ISDIR(st.st_mode))
        return copy_subdir(cp, sfd, dfd, name, path, depth + 1);
    if (S_ISREG(st.st_mode))
        return copy_file(cp, sfd, dfd, name, path);
    return 0; /* a link, a device, a socket or a fifo */
}

static int
copy_dir(struct copy *cp, int sfd, int dfd, const char *path, int depth)
{
    int fd = fcntl(sfd, F_DUPFD_CLOEXEC, 0);
    DIR *dir = fd < 0 ? NULL : fdopendir(fd);
    struct dirent *de;
    int rc = 0;

    if (dir == NULL) {
        err_sys(cp->err, errno, "%s", path);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    errno = 0;
    while (rc == 0 && (de = readdir(dir)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        rc = copy_entry(cp, sfd, dfd, de->d_name, path, depth);
        errno = 0;
    }
    if (rc == 0 && errno != 0)
        rc = err_sys(cp->err, errno, "%s", path);
    closedir(dir);
    return rc;
}

/* rel: components that are names, no ".", "..", empty or absolute. */
static int
check_rel(const char *rel, struct err *err)
{
    const char *p = rel;

    for (;;) {
        size_t n = strcspn(p, "/");

        if (n == 0 || n > NAME_MAX || (n == 1 && p[0] == '.') ||
            (n == 2 && p[0] == '.' && p[1] == '.'))
            return err_set(err, EINVAL,
                           "\"%s\": expected a relative path of names", rel);
        if (p[n] == '\0')
            return 0;
        p += n + 1;
    }
}

/* The folder name in fd, made when missing (noted in made when it is the
 * first this call made). */
static int
open_or_make(int fd, const char *name, struct made *made)
{
    int next = openat(fd, name, DIR_FLAGS);

    if (next >= 0 || errno != ENOENT || mkdirat(fd, name, 0700) < 0)
        return next;
    if (made->fd < 0) {
        made->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        snprintf(made->name, sizeof(made->name), "%s", name);
    }
    return openat(fd, name, DIR_FLAGS);
}

/* The folder holding rel's last component (made where missing) and that
 * component in *last. */
static int
open_parent(int dirfd, const char *rel, struct made *made, const char **last,
            struct err *err)
{
    int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    const char *p = rel;

    if (fd < 0)
        return err_sys(err, errno, "%s", rel);
    for (;;) {
        size_t n = strcspn(p, "/");
        char name[NAME_MAX + 1];
        int next, e;

        if (p[n] == '\0')
            break;
        memcpy(name, p, n); /* n <= NAME_MAX: check_rel */
        name[n] = '\0';
        next = open_or_make(fd, name, made);
        e = errno;
        close(fd);
        if (next < 0) {
            err_sys(err, e, "%.*s", (int)(p + n - rel), rel);
            return err_status(err, err_io_status(e));
        }
        fd = next;
        p += n + 1;
    }
    *last = p;
    return fd;
}

/* A fresh folder in fd for the copy, its name in tmp. */
static int
make_tmp(int fd, const char *rel, char *tmp, size_t size, struct err *err)
{
    static unsigned counter;

    for (int i = 0; i < TMP_TRIES; i++) {
        snprintf(tmp, size, ".copy-%ld-%u", (long)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        if (mkdirat(fd, tmp, 0700) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    err_sys(err, errno, "%s: a folder for the copy", rel);
    return err_status(err, err_io_status(errno));
}

/* tmp (a folder in fd) renamed to last, which must not exist. */
static int
put_in_place(int fd, const char *tmp, const char *last, const char *rel,
             struct err *err)
{
    if (renameat2(fd, tmp, fd, last, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno == EEXIST)
        return err_set(err, EEXIST, "%s: exists already", rel);
    err_sys(err, errno, "%s", rel);
    return err_status(err, err_io_status(errno));
}

static int
copy_into(int src, const char *src_dir, int pfd, const char *last,
          const char *rel, struct made *made,
          const struct admit_copy_limits *lim, struct err *err)
{
    struct copy cp = {.lim = lim, .err = err};
    char tmp[64];
    cleanup_close int tfd = -1;
    struct stat st;
    int rc;

    if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return err_set(err, EEXIST, "%s: exists already", rel);
    if (make_tmp(pfd, rel, tmp, sizeof(tmp), err) < 0)
        return -1;
    if (made->fd < 0) {
        made->fd = fcntl(pfd, F_DUPFD_CLOEXEC, 0);
        snprintf(made->name, sizeof(made->name), "%s", tmp);
    }
    tfd = openat(pfd, tmp, DIR_FLAGS);
    if (tfd < 0)
        return err_sys(err, errno, "%s: the folder for the copy", rel);
    cp.buf = xmalloc(COPY_BUF);
    rc = copy_dir(&cp, src, tfd, src_dir, 0);
    free(cp.buf);
    if (rc == 0)
        rc = put_in_place(pfd, tmp, last, rel, err);
    return rc;
}

int
admit__copy_tree_limits(const char *src_dir, int dst_dirfd, const char *rel,
                        const struct admit_copy_limits *lim, struct err *err)
{
    cleanup_close int src = -1;
    cleanup_close int pfd = -1;
    struct made made = {.fd = -1};
    const char *last = NULL;
    int rc;

    if (check_rel(rel, err) < 0)
        return -1;
    src = open(src_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (src < 0)
        return err_sys(err, errno, "%s", src_dir);
    pfd = open_parent(dst_dirfd, rel, &made, &last, err);
    rc =
        pfd < 0 ? -1 : copy_into(src, src_dir, pfd, last, rel, &made, lim, err);
    if (rc < 0 && made.fd >= 0)
        (void)rm_rf_at(made.fd, made.name, NULL);
    if (made.fd >= 0)
        close(made.fd);
    return rc;
}

int
admit__copy_tree(const char *src_dir, int dst_dirfd, const char *rel,
                 struct err *err)
{
    static const struct admit_copy_limits lim = {
        .bytes = ADMIT_COPY_BYTES,
        .entries = ADMIT_COPY_ENTRIES,
        .depth = ADMIT_COPY_DEPTH,
    };

    return admit__copy_tree_limits(src_dir, dst_dirfd, rel, &lim, err);
}

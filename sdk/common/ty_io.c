/*
 * ty_io.c — the one write loop, atomic write and mkdir -p (see ty_io.h).
 *
 * The atomic write works beneath a folder descriptor so that the runner's
 * link-free file handling (base/fsat.c) and plain paths share it: a path
 * is split into its folder, opened once, and its last component.
 */
#include "ty_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int
ty__write_all(int fd, const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* mkdir of the first len bytes of dir (copied into buf); 0 when a folder
 * is there after it. */
static int
mkdir_one(char *buf, const char *dir, size_t len, mode_t mode)
{
    struct stat st;

    memcpy(buf, dir, len);
    buf[len] = '\0';
    if (mkdir(buf, mode) == 0)
        return 0;
    if (errno != EEXIST)
        return -errno;
    if (stat(buf, &st) < 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int
ty__mkdir_p(const char *dir, mode_t mode, size_t *failed_len)
{
    char buf[PATH_MAX];
    size_t len = strlen(dir), i = 0;
    int rc = len == 0 ? -ENOENT : len >= sizeof(buf) ? -ENAMETOOLONG : 0;

    /* Each folder from the top down; repeated slashes make no empty step. */
    while (rc == 0 && i < len) {
        for (i++; i < len && (dir[i] != '/' || dir[i - 1] == '/'); i++)
            ;
        rc = mkdir_one(buf, dir, i, mode);
    }
    if (rc < 0 && failed_len != NULL)
        *failed_len = i > 0 ? i : len;
    return rc;
}

/* The folder holding path, opened to be synced or written beneath;
 * -errno when it cannot be. */
static int
open_folder(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    int fd;

    if (slash == NULL)
        snprintf(dir, sizeof(dir), ".");
    else if ((size_t)(slash - path) >= sizeof(dir))
        return -ENAMETOOLONG;
    else
        snprintf(dir, sizeof(dir), "%.*s",
                 slash == path ? 1 : (int)(slash - path), path);
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* fsync the folder that holds name (in dirfd), so a rename in it lasts;
 * file systems that cannot sync a folder (EINVAL) are taken as done. */
static int
sync_folder(int dirfd, const char *name)
{
    int fd = dirfd, rc = 0;

    if (dirfd == AT_FDCWD && (fd = open_folder(name)) < 0)
        return fd;
    if (fsync(fd) < 0 && errno != EINVAL)
        rc = -errno;
    if (fd != dirfd)
        close(fd);
    return rc;
}

int
ty__commit_at(int fd, int dirfd, const char *tmp, const char *name, bool sync)
{
    int rc = 0;

    if (sync && fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
        rc = -errno;
    if (rc < 0) {
        (void)unlinkat(dirfd, tmp, 0);
        return rc;
    }
    return sync ? sync_folder(dirfd, name) : 0;
}

int
ty__write_atomic_at(int dirfd, const char *name, const void *data, size_t len,
                    mode_t mode)
{
    char tmp[NAME_MAX + 1];
    int fd, rc, n;

    if (*name == '\0' || strchr(name, '/') != NULL)
        return -EINVAL;
    n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", name, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return -ENAMETOOLONG;
    fd = openat(dirfd, tmp,
                O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -errno;
    rc = ty__write_all(fd, data, len);
    if (rc < 0) {
        close(fd);
        (void)unlinkat(dirfd, tmp, 0);
        return rc;
    }
    return ty__commit_at(fd, dirfd, tmp, name, true);
}

int
ty__write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
    const char *slash = strrchr(path, '/');
    int dirfd = open_folder(path), rc;

    if (dirfd < 0)
        return dirfd;
    rc = ty__write_atomic_at(dirfd, slash ? slash + 1 : path, data, len, mode);
    close(dirfd);
    return rc;
}

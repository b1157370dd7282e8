/*
 * util.c — allocation, files, paths, and clocks (see base/util.h).
 */
#include "base/util.h"

#include "base/log.h"
#include "base/strbuf.h"
#include "ty_io.h"
#include "ty_time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

void *
xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (p == NULL)
        fatalx("out of memory allocating %zu bytes", n);
    return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

    if (p == NULL)
        fatalx("out of memory allocating %zu x %zu bytes", nmemb, size);
    return p;
}

void *
xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);

    if (q == NULL)
        fatalx("out of memory reallocating %zu bytes", n);
    return q;
}

void
xgrow(void *pp, size_t *cap, size_t need, size_t size)
{
    void **p = pp;
    size_t ncap = *cap ? *cap : 8;

    if (need <= *cap)
        return;
    while (ncap < need)
        ncap *= 2;
    *p = xrealloc(*p, ncap * size);
    *cap = ncap;
}

char *
xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *
xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);

    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *
xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s;

    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        fatalx("out of memory formatting a string");
    va_end(ap);
    return s;
}

void
cleanup_freep(void *p)
{
    free(*(void **)p);
}

void
cleanup_closep(int *fd)
{
    if (*fd >= 0)
        close(*fd);
}

char *
fd_read_all(int fd, const char *name, size_t max_bytes, size_t *len,
            struct err *err)
{
    struct strbuf sb;
    char chunk[65536];
    ssize_t n;

    strbuf_init(&sb);
    for (;;) {
        n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            err_sys(err, errno, "%s: read", name);
            strbuf_release(&sb);
            return NULL;
        }
        if (n == 0)
            break;
        if (sb.len + (size_t)n > max_bytes) {
            err_set(err, EFBIG, "%s: file is larger than %zu bytes", name,
                    max_bytes);
            strbuf_release(&sb);
            return NULL;
        }
        strbuf_add(&sb, chunk, (size_t)n);
    }
    if (len != NULL)
        *len = sb.len;
    return strbuf_detach(&sb);
}

char *
file_read(const char *path, size_t max_bytes, size_t *len, struct err *err)
{
    cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return err_sys(err, errno, "%s", path), NULL;
    return fd_read_all(fd, path, max_bytes, len, err);
}

int
fd_write_all(int fd, const void *data, size_t len)
{
    int rc = ty__write_all(fd, data, len);

    if (rc < 0) {
        errno = -rc;
        return -1;
    }
    return 0;
}

int
fd_append_whole(int fd, const void *data, size_t len)
{
    off_t at = lseek(fd, 0, SEEK_END);
    ssize_t n;
    int e;

    do
        n = write(fd, data, len);
    while (n < 0 && errno == EINTR);
    if (n == (ssize_t)len)
        return 0;
    e = n < 0 ? errno : ENOSPC;
    if (n > 0 && at >= 0 && ftruncate(fd, at) < 0)
        log_debug("cannot cut a short write back: %s", strerror(errno));
    errno = e;
    return -1;
}

int
file_write_atomic(const char *path, const void *data, size_t len,
                  struct err *err)
{
    int rc = ty__write_atomic(path, data, len, 0644);

    if (rc < 0) {
        err_sys(err, -rc, "cannot write %s", path);
        return err_status(err, err_io_status(-rc));
    }
    return 0;
}

int
mkdir_p(const char *dir, struct err *err)
{
    size_t at = 0;
    int rc = ty__mkdir_p(dir, 0755, &at);

    if (rc == -ENOTDIR)
        return err_set(err, ENOTDIR, "%.*s: not a directory", (int)at, dir);
    if (rc < 0)
        return err_sys(err, -rc, "mkdir %.*s", (int)at, dir);
    return 0;
}

/* Folders nested deeper than this are not removed: an instance could
 * make a tree deep enough to exhaust the stack or the descriptors. */
#define RM_RF_MAX_DEPTH 256

/* Remove name (in the folder at) and, when it is a folder, all it
 * holds. A link is removed, never followed: every folder is opened
 * relative to its parent with O_NOFOLLOW, so a link swapped in for a
 * folder while we walk fails to open as one and is unlinked instead. */
static int
rm_tree(int at, const char *name, const char *path, int depth, struct err *err)
{
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d;
    struct dirent *de;
    int rc = 0;

    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0 && (errno == ENOTDIR || errno == ELOOP)) {
        if (unlinkat(at, name, 0) < 0 && errno != ENOENT)
            return err_sys(err, errno, "unlink %s", path);
        return 0;
    }
    if (fd >= 0 && depth >= RM_RF_MAX_DEPTH) {
        close(fd);
        return err_set(err, ELOOP, "%s: nested deeper than %d folders", path,
                       RM_RF_MAX_DEPTH);
    }
    if (fd < 0 || (d = fdopendir(fd)) == NULL) {
        int e = errno;

        if (fd >= 0)
            close(fd);
        return err_sys(err, e, "open %s", path);
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        cleanup_free char *child = NULL;

        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        child = path_join(path, de->d_name);
        rc = rm_tree(dirfd(d), de->d_name, child, depth + 1, err);
    }
    closedir(d);
    if (rc == 0 && unlinkat(at, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return err_sys(err, errno, "rmdir %s", path);
    return rc;
}

int
rm_rf(const char *path, struct err *err)
{
    return rm_tree(AT_FDCWD, path, path, 0, err);
}

int
rm_rf_at(int dirfd, const char *name, struct err *err)
{
    return rm_tree(dirfd, name, name, 0, err);
}

long long
fd_limit_raise(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return -1;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0 &&
            getrlimit(RLIMIT_NOFILE, &rl) < 0)
            return -1;
    }
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > LLONG_MAX
               ? LLONG_MAX
               : (long long)rl.rlim_cur;
}

bool
path_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

bool
path_is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *
path_join(const char *a, const char *b)
{
    size_t la = strlen(a);

    if (la > 0 && a[la - 1] == '/')
        return xasprintf("%s%s", a, b);
    return xasprintf("%s/%s", a, b);
}

char *
path_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        return xstrdup(".");
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

char *
path_absolute(const char *path)
{
    char cwd[PATH_MAX];

    if (path[0] == '/')
        return xstrdup(path);
    if (getcwd(cwd, sizeof(cwd)) == NULL)
        return xstrdup(path);
    return path_join(cwd, path);
}

char *
exe_dir(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

    if (n <= 0)
        return xstrdup(".");
    buf[n] = '\0';
    return path_dirname(buf);
}

int64_t
now_mono_ns(void)
{
    return ty__now_ns();
}

int64_t
now_wall_ns(void)
{
    return ty__wall_ns();
}

void
time_rfc3339(int64_t wall_ns, char *buf, size_t size)
{
    ty__format_rfc3339(wall_ns, buf, size);
}

int64_t
time_parse_rfc3339(const char *s)
{
    int64_t ns;

    return ty__parse_rfc3339(s, &ns) == 0 ? ns : 0;
}

int64_t
i64_add_sat(int64_t a, int64_t b)
{
    int64_t sum;

    if (__builtin_add_overflow(a, b, &sum))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

/*
 * tar_tree.c — a folder tree into a tar writer (tar_add_tree, see base/tar.h).
 *
 * `collect` packs run folders that instances could write into, so the walk
 * follows nothing: the root is opened once, and every entry is looked at
 * with fstatat(AT_SYMLINK_NOFOLLOW) and opened with openat(O_NOFOLLOW)
 * beneath its folder's descriptor, so a folder swapped for a link halfway
 * through cannot lead the walk elsewhere. Links are archived as links only
 * when they point inside the tree (relative, never climbing above its
 * root); an absolute link or one that climbs out is left out and named to
 * the caller, so extracting the archive cannot plant a way out either.
 */
#include "base/tar.h"

#include "base/strvec.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TREE_MAX_DEPTH 256

struct walk {
    struct tar *t;
    void (*skipped)(void *arg, const char *name, const char *target);
    void *arg;
};

/* The entries of the folder fd (without . and ..), sorted into names
 * (the caller releases it). fd stays open. */
static int
list_dir(int fd, const char *name, struct strvec *names, struct err *err)
{
    int dfd = dup(fd);
    DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
    struct dirent *de;

    if (d == NULL) {
        err_sys(err, errno, "%s", name);
        if (dfd >= 0)
            close(dfd);
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        strvec_push(names, de->d_name);
    }
    closedir(d);
    strvec_sort_uniq(names);
    return 0;
}

/* A link target that, read from a folder depth levels below the root,
 * stays inside it. */
static bool
stays_inside(const char *target, int depth)
{
    const char *p = target;
    int level = depth;

    if (target[0] == '/' || target[0] == '\0')
        return false;
    while (*p != '\0') {
        size_t n = strcspn(p, "/");

        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (--level < 0)
                return false;
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            level++;
        }
        p += n;
        p += *p == '/';
    }
    return true;
}

static int add_entry(struct walk *w, const char *name, int dirfd,
                     const char *entry, int depth, struct err *err);

static int
add_children(struct walk *w, const char *name, int fd, int depth,
             struct err *err)
{
    struct strvec names = {0};
    int rc = list_dir(fd, name, &names, err);

    for (size_t i = 0; i < names.n && rc == 0; i++) {
        cleanup_free char *cname = path_join(name, names.v[i]);

        rc = add_entry(w, cname, fd, names.v[i], depth, err);
    }
    strvec_release(&names);
    return rc;
}

static int
add_dir(struct walk *w, const char *name, int dirfd, const char *entry,
        const struct stat *st, int depth, struct err *err)
{
    struct tar_meta m;
    cleanup_close int fd = -1;

    tar_meta_of(st, &m);
    if (tar_add_dir(w->t, name, &m, err) < 0)
        return -1;
    if (depth >= TREE_MAX_DEPTH)
        return err_set(err, ELOOP, "%s: folders nested too deep", name);
    fd = openat(dirfd, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return err_sys(err, errno, "%s", name);
    return add_children(w, name, fd, depth + 1, err);
}

static int
add_file(struct walk *w, const char *name, int dirfd, const char *entry,
         struct err *err)
{
    cleanup_close int fd =
        openat(dirfd, entry, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct tar_meta m;
    struct stat st;

    if (fd < 0 || fstat(fd, &st) < 0)
        return err_sys(err, errno, "%s", name);
    if (!S_ISREG(st.st_mode))
        return 0; /* swapped for something else since fstatat */
    tar_meta_of(&st, &m);
    return tar_add_fd(w->t, name, &m, fd, (uint64_t)st.st_size, err);
}

static int
add_link(struct walk *w, const char *name, int dirfd, const char *entry,
         const struct stat *st, int depth, struct err *err)
{
    char target[4096];
    ssize_t n = readlinkat(dirfd, entry, target, sizeof(target) - 1);
    struct tar_meta m;

    if (n < 0)
        return err_sys(err, errno, "%s", name);
    target[n] = '\0';
    if (!stays_inside(target, depth)) {
        if (w->skipped != NULL)
            w->skipped(w->arg, name, target);
        return 0;
    }
    tar_meta_of(st, &m);
    return tar_add_symlink(w->t, name, target, &m, err);
}

/* entry of the folder dirfd, depth levels below the root, as name. */
static int
add_entry(struct walk *w, const char *name, int dirfd, const char *entry,
          int depth, struct err *err)
{
    struct stat st;

    if (fstatat(dirfd, entry, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return err_sys(err, errno, "%s", name);
    if (S_ISDIR(st.st_mode))
        return add_dir(w, name, dirfd, entry, &st, depth, err);
    if (S_ISREG(st.st_mode))
        return add_file(w, name, dirfd, entry, err);
    if (S_ISLNK(st.st_mode))
        return add_link(w, name, dirfd, entry, &st, depth, err);
    return 0; /* sockets, fifos, devices */
}

int
tar_add_tree(struct tar *t, const char *name, const char *path,
             void (*skipped)(void *arg, const char *name, const char *target),
             void *skipped_arg, struct err *err)
{
    struct walk w = {t, skipped, skipped_arg};
    cleanup_free char *parent = path_dirname(path);
    const char *base = strrchr(path, '/');
    cleanup_close int pfd = -1;

    base = base && base[1] ? base + 1 : path;
    pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0)
        return err_sys(err, errno, "%s", parent);
    /* -1: the root's own entries are 0 levels below it. */
    return add_entry(&w, name, pfd, base, -1, err);
}

/*
 * leftovers.c — removing what a dead coordinator left (see leftovers.h).
 *
 * A run folder is the runner's at its top level, but below its group
 * folders and in .tmp/<group>/<index> it holds what instances wrote: a
 * container may have planted links, deep trees or files named like the
 * runner's. So the scratch is removed through directory descriptors only:
 * every name is looked at with AT_SYMLINK_NOFOLLOW, every directory opened
 * with O_NOFOLLOW relative to its parent's descriptor, a directory on
 * another file system is left alone and so is a tree deeper than
 * RM_MAX_DEPTH. A link is removed as a link; what it points at is never
 * touched. Instance folders themselves (their outputs, memory.csv.partial,
 * which the report reads) are kept.
 */
#include "backend/backend.h"
#include "backend/cgroup_int.h"

#include "base/strvec.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RM_MAX_DEPTH 128

/* ---- cgroups ----------------------------------------------------------- */

static int
remove_cgroup(const struct cgroup_sys *sys, const char *rel, struct err *err)
{
    struct cgroup *cg = cgroup__adopt(sys, rel, err);
    int rc;

    if (cg == NULL && err->code == ENOENT) {
        err_clear(err); /* gone already: nothing to remove */
        return 0;
    }
    if (cg == NULL)
        return -1;
    rc = cgroup__kill_all(cg, err) < 0 || cgroup__remove(cg, err) < 0 ? -1 : 0;
    cgroup__destroy(&cg);
    return rc;
}

int
leftovers_cgroups(const struct cgroup_sys *sys, const char *run_id, bool dry,
                  int *n, struct err *err)
{
    char **leaves = cgroup_list(sys, run_id);
    int rc = 0;

    *n = 0;
    for (size_t i = 0; leaves != NULL && leaves[i] != NULL; i++) {
        cleanup_free char *rel = xasprintf("%s/%s", run_id, leaves[i]);
        struct err e = {0};

        (*n)++;
        if (!dry && remove_cgroup(sys, rel, &e) < 0 && rc == 0) {
            *err = e;
            rc = -1;
        }
    }
    strv_free(leaves);
    /* The run's own level, when no instance cgroup was made below it. */
    if (!dry && rc == 0)
        rc = remove_cgroup(sys, run_id, err);
    return rc;
}

/* ---- scratch in the run folder ----------------------------------------- */

static int rm_at(int dfd, const char *name, dev_t dev, int depth,
                 struct err *err);

static int
rm_entries(int fd, dev_t dev, int depth, struct err *err)
{
    DIR *d = fdopendir(fd);
    struct dirent *de;
    int rc = 0;

    if (d == NULL) {
        close(fd);
        return err_sys(err, errno, "fdopendir");
    }
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        rc = rm_at(dirfd(d), de->d_name, dev, depth + 1, err);
        if (rc < 0)
            err_prefix(err, "%s", de->d_name);
    }
    closedir(d);
    return rc;
}

static int
rm_dir_at(int dfd, const char *name, dev_t dev, int depth, struct err *err)
{
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;

    if (fd < 0)
        return errno == ENOENT ? 0 : err_sys(err, errno, "open");
    if (fstat(fd, &st) < 0 || st.st_dev != dev) {
        close(fd);
        return err_set(err, EXDEV, "another file system; left alone");
    }
    if (rm_entries(fd, dev, depth, err) < 0)
        return -1;
    if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return err_sys(err, errno, "rmdir");
    return 0;
}

/* Remove name in dfd: a file or link is unlinked, a directory emptied the
 * same way and removed. */
static int
rm_at(int dfd, const char *name, dev_t dev, int depth, struct err *err)
{
    struct stat st;

    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : err_sys(err, errno, "stat");
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
            return err_sys(err, errno, "unlink");
        return 0;
    }
    if (st.st_dev != dev)
        return err_set(err, EXDEV, "another file system; left alone");
    if (depth >= RM_MAX_DEPTH)
        return err_set(err, ELOOP, "more than %d levels deep; left alone",
                       RM_MAX_DEPTH);
    return rm_dir_at(dfd, name, dev, depth, err);
}

/* A file the runner writes and renames: "x.partial", "x.tmp.<pid>". */
static bool
half_written(const char *name)
{
    size_t n = strlen(name);
    const char *t = strstr(name, ".tmp.");

    if (n > 8 && strcmp(name + n - 8, ".partial") == 0)
        return true;
    return t != NULL && t != name && t[5] != '\0' &&
           strspn(t + 5, "0123456789") == strlen(t + 5);
}

static int
top_files(int runfd, bool dry, int *n, struct err *err)
{
    int fd = openat(runfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    struct dirent *de;
    int rc = 0;

    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        return err_sys(err, errno, "read the run folder");
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;

        if (!half_written(de->d_name) ||
            fstatat(runfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISREG(st.st_mode))
            continue;
        (*n)++;
        if (!dry && unlinkat(runfd, de->d_name, 0) < 0 && rc == 0)
            rc = err_sys(err, errno, "unlink %s", de->d_name);
    }
    closedir(d);
    return rc;
}

/* Whether runfd holds a directory name (not a link to one). */
static bool
has_dir(int runfd, const char *name)
{
    struct stat st;

    return fstatat(runfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISDIR(st.st_mode);
}

static int
scratch_at(int runfd, bool dry, struct leftovers_scratch *out, struct err *err)
{
    static const char *const names[] = {".sync", ".tmp"};
    bool *found[] = {&out->sync, &out->tmp};
    struct stat st;

    if (fstat(runfd, &st) < 0)
        return err_sys(err, errno, "stat");
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        *found[i] = has_dir(runfd, names[i]);
        if (*found[i] && !dry && rm_at(runfd, names[i], st.st_dev, 0, err) < 0)
            return err_prefix(err, "%s", names[i]);
    }
    return top_files(runfd, dry, &out->partial, err);
}

int
leftovers_scratch(const char *runs, const char *id, bool dry,
                  struct leftovers_scratch *out, struct err *err)
{
    cleanup_close int runsfd = open(runs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_close int runfd = -1;

    memset(out, 0, sizeof(*out));
    if (runsfd < 0)
        return err_sys(err, errno, "%s", runs);
    runfd = openat(runsfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (runfd < 0)
        return err_sys(err, errno, "%s/%s", runs, id);
    if (scratch_at(runfd, dry, out, err) < 0)
        return err_prefix(err, "%s/%s", runs, id);
    return 0;
}

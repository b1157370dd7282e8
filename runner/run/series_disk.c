/*
 * series_disk.c — what a path really takes on disk, for disk.csv (see
 * run/series_int.h): the blocks allocated to every file and folder under
 * it, as du counts them (a sparse file counts what is written, a hard
 * link once), the apparent size of its regular files and their count.
 *
 * The tree is the instance's: each folder is opened beneath the one
 * before with O_NOFOLLOW | O_DIRECTORY and checked to be the entry that
 * was stat'ed, entries are stat'ed with AT_SYMLINK_NOFOLLOW (a link counts
 * its own block, never its target), nothing on another file system is
 * counted, and the walk stops at a number of entries and a depth.
 */
#include "run/series_int.h"

#include "base/fsat.h"
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct walk {
    struct series_du *u;
    struct series_seen *seen;
    dev_t dev;
    size_t entries, max_entries;
    int max_depth;
};

static size_t
seen_slot(const struct series_seen *s, uint64_t dev, uint64_t ino)
{
    uint64_t h = (dev * 0x9e3779b97f4a7c15u) ^ (ino * 0xc2b2ae3d27d4eb4fu);

    return (size_t)(h ^ (h >> 29)) & (s->cap - 1);
}

/* Whether (dev, ino) was not seen before; it is now. */
static bool
seen_add(struct series_seen *s, uint64_t dev, uint64_t ino)
{
    size_t i;

    if (ino == 0)
        ino = UINT64_MAX; /* 0 marks a free slot */
    if (2 * (s->n + 1) > s->cap) {
        struct series_seen g = {0};

        g.cap = s->cap ? s->cap * 2 : 256;
        g.key = xcalloc(g.cap, 2 * sizeof(*g.key));
        for (size_t j = 0; j < s->cap; j++)
            if (s->key[2 * j + 1] != 0)
                (void)seen_add(&g, s->key[2 * j], s->key[2 * j + 1]);
        free(s->key);
        *s = g;
    }
    for (i = seen_slot(s, dev, ino); s->key[2 * i + 1] != 0;
         i = (i + 1) & (s->cap - 1))
        if (s->key[2 * i] == dev && s->key[2 * i + 1] == ino)
            return false;
    s->key[2 * i] = dev;
    s->key[2 * i + 1] = ino;
    s->n++;
    return true;
}

void
series__seen_release(struct series_seen *s)
{
    free(s->key);
    memset(s, 0, sizeof(*s));
}

static void
count(struct walk *w, const struct stat *st)
{
    w->u->allocated += (int64_t)st->st_blocks * 512;
    if (S_ISREG(st->st_mode)) {
        w->u->apparent += st->st_size;
        w->u->files++;
    }
}

/* Whether an entry is counted: on the top's file system, and a file with
 * more than one link only the first time. */
static bool
counted(struct walk *w, const struct stat *st)
{
    if (st->st_dev != w->dev)
        return false;
    if (S_ISDIR(st->st_mode) || st->st_nlink <= 1)
        return true;
    return seen_add(w->seen, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
}

/* The folder name beneath dfd that was stat'ed as st, or -1. */
static int
open_sub(int dfd, const char *name, const struct stat *st)
{
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat now;

    if (fd < 0)
        return -1;
    if (fstat(fd, &now) < 0 || now.st_dev != st->st_dev ||
        now.st_ino != st->st_ino) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The entries of the folder fd (taken: closed here), depth levels down. */
static void
walk_dir(struct walk *w, int fd, int depth)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;

    if (d == NULL) {
        close(fd);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        int sub;

        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (w->entries >= w->max_entries) {
            w->u->truncated = true;
            break;
        }
        w->entries++;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !counted(w, &st))
            continue; /* gone since readdir, or not counted */
        count(w, &st);
        if (!S_ISDIR(st.st_mode))
            continue;
        if (depth >= w->max_depth) {
            w->u->truncated = true;
            continue;
        }
        if ((sub = open_sub(dirfd(d), e->d_name, &st)) >= 0)
            walk_dir(w, sub, depth + 1);
    }
    closedir(d);
}

/* rel when it is not a folder: the entry itself, stat'ed in its parent. */
static void
du_file(int basefd, const char *rel, struct series_du *out)
{
    const char *name;
    cleanup_close int dfd = fsat_parent(basefd, rel, false, 0, &name, NULL);
    struct stat st;

    if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        out->err = errno ? errno : ENOENT;
        return;
    }
    if (S_ISLNK(st.st_mode)) {
        out->err = ELOOP;
        return;
    }
    out->allocated = (int64_t)st.st_blocks * 512;
    if (S_ISREG(st.st_mode)) {
        out->apparent = st.st_size;
        out->files = 1;
    }
}

void
series__du(int basefd, const char *rel, size_t max_entries, int max_depth,
           struct series_seen *seen, struct series_du *out)
{
    struct err err = {0};
    struct walk w;
    struct stat st;
    int fd;

    memset(out, 0, sizeof(*out));
    w = (struct walk){out, seen, 0, 0, max_entries, max_depth};
    if (seen->key != NULL)
        memset(seen->key, 0, seen->cap * 2 * sizeof(*seen->key));
    seen->n = 0;
    fd = fsat_dir(basefd, rel, false, 0, &err);
    if (fd < 0 && err.code == ENOTDIR) {
        errno = 0;
        du_file(basefd, rel, out);
        return;
    }
    if (fd < 0 || fstat(fd, &st) < 0) {
        out->err = fd < 0 ? err.code : errno;
        if (fd >= 0)
            close(fd);
        return;
    }
    w.dev = st.st_dev;
    count(&w, &st);
    walk_dir(&w, fd, 1);
}

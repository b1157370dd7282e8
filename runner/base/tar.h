/*
 * base/tar.h — a streaming tar writer (ustar headers, pax extended headers for
 * what ustar cannot hold) with optional gzip through zlib.
 *
 * Entries are written as they are added; nothing is kept but one output
 * buffer, so an archive of any size streams to an fd (collect writes a .tgz
 * this way) or to a callback (the image builder hashes and spools a build
 * context through one). Names longer than ustar allows, link targets over
 * 100 bytes, sizes of 8 GiB and more and out-of-range mtimes or ids go into
 * a pax header, which GNU tar, bsdtar and Docker all read.
 *
 * Ownership: names, targets and data are borrowed for the duration of a
 * call; the fd passed to tar_new_fd stays the caller's (never closed here).
 * A writer that failed once stays failed: later calls return -1.
 */
#ifndef TY_TAR_H
#define TY_TAR_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct tar;

/* Metadata of one entry. mode holds permission bits only (07777). */
struct tar_meta {
    unsigned mode;
    int64_t mtime; /* seconds since the epoch */
    uint32_t uid;
    uint32_t gid;
};

/* A writer into fd, gzip-compressed when gzip is true. */
struct tar *tar_new_fd(int fd, bool gzip);
/* A writer into a callback that receives the archive's bytes and returns
 * 0, or -1 after filling err (arg is passed back unchanged). */
struct tar *tar_new_cb(int (*write)(void *arg, const void *data, size_t len,
                                    struct err *err),
                       void *arg, bool gzip);
void tar_destroy(struct tar **t);

/* A directory entry (name gets a trailing '/' if it has none). */
int tar_add_dir(struct tar *t, const char *name, const struct tar_meta *m,
                struct err *err);
/* A regular file with the given contents. */
int tar_add_data(struct tar *t, const char *name, const struct tar_meta *m,
                 const void *data, size_t len, struct err *err);
/* A regular file of `size` bytes read from fd (from its current offset).
 * A file that turns out shorter is padded with zeros and reported as an
 * error, so the archive stays readable. */
int tar_add_fd(struct tar *t, const char *name, const struct tar_meta *m,
               int fd, uint64_t size, struct err *err);
/* A symbolic link to target. */
int tar_add_symlink(struct tar *t, const char *name, const char *target,
                    const struct tar_meta *m, struct err *err);
/* One entry for the file system object at path (not followed if it is a
 * symlink; a directory's contents are not added). m overrides the metadata
 * from lstat when not NULL. Returns 0 when added, 1 when skipped because
 * it is a socket, fifo or device, -1 on error. */
int tar_add_path(struct tar *t, const char *name, const char *path,
                 const struct tar_meta *m, struct err *err);
/* path and everything under it, as name/..., in sorted order, with the
 * metadata read from the file system; sockets, fifos and devices are
 * skipped. Nothing is followed: every entry is opened beneath its folder's
 * descriptor with O_NOFOLLOW. A symbolic link is stored as a link when its
 * target is relative and stays inside the tree; one that is absolute or
 * climbs out of it is left out and passed to skipped (when not NULL) with
 * its archive name and target. */
int tar_add_tree(struct tar *t, const char *name, const char *path,
                 void (*skipped)(void *arg, const char *name,
                                 const char *target),
                 void *skipped_arg, struct err *err);
/* m from st: permission bits, mtime, owner. */
void tar_meta_of(const struct stat *st, struct tar_meta *m);
/* Write the end-of-archive blocks and flush (and end the gzip stream). */
int tar_finish(struct tar *t, struct err *err);

/* Entries added and bytes handed to the sink so far. */
uint64_t tar_entries(const struct tar *t);
uint64_t tar_bytes_out(const struct tar *t);

#endif

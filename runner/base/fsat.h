/*
 * base/fsat.h — opening files and folders beneath a folder descriptor without
 * following any link, for every file the coordinator (often root) touches
 * in a folder an instance can write.
 *
 * Every path given here is relative to a folder descriptor this process
 * opened itself (fsat_root), and is resolved with no symbolic link on any
 * component and no way out: absolute paths and ".." components are refused
 * (EXDEV), a link anywhere fails with ELOOP. openat2(2) with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does it where the kernel has it;
 * elsewhere each component is opened in turn with O_NOFOLLOW (and
 * O_DIRECTORY for folders).
 *
 * Ownership: descriptors returned are the caller's to close; paths are
 * borrowed.
 */
#ifndef TY_FSAT_H
#define TY_FSAT_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The folder at path (the user's or this process's own, so links in it
 * are followed), as a descriptor to resolve beneath. */
int fsat_root(const char *path, struct err *err);

/* Open rel beneath dirfd as openat(2) would with flags (O_CLOEXEC and
 * O_NOFOLLOW are added) and mode; its folders must exist. */
int fsat_open(int dirfd, const char *rel, int flags, mode_t mode,
              struct err *err);

/* The folder rel beneath dirfd ("" or "." is dirfd itself, reopened);
 * with create, it and its parents are made (mode) where missing. */
int fsat_dir(int dirfd, const char *rel, bool create, mode_t mode,
             struct err *err);

/* The folder holding rel's last component (made, with its parents, when
 * create), and that component in *base (pointing into rel). */
int fsat_parent(int dirfd, const char *rel, bool create, mode_t mode,
                const char **base, struct err *err);

/* A whole regular file beneath dirfd, NUL-terminated; *len its size. EFBIG
 * above max_bytes, EINVAL when it is not a regular file. Caller frees. */
char *fsat_read(int dirfd, const char *rel, size_t max_bytes, size_t *len,
                struct err *err);

/* Move from (a name in fromfd) to to (a name in tofd), replacing what is
 * there; a link under the name to is replaced, never followed. */
int fsat_move(int fromfd, const char *from, int tofd, const char *to,
              struct err *err);

/* Remove the empty folders of the tree rel beneath dirfd, deepest first;
 * anything else stays. */
void fsat_prune(int dirfd, const char *rel);

/* For tests: resolve component by component even where openat2 works. */
void fsat__force_walk(bool on);

#endif

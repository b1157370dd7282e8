/*
 * ty_io.h — the file helpers the runner and the SDK share: one write loop,
 * one atomic write (a temporary file, fsync, rename, fsync of the folder)
 * and one mkdir -p. The SDK writes outputs without a coordinator and heap
 * snapshots from the LD_PRELOAD library with them; the runner writes run
 * files, uploads, logs and archives. Internal to testyard.
 *
 * Every call returns 0 or a negative errno; none allocates, so the heap
 * profiler may call them from its snapshot thread. Paths are borrowed.
 */
#ifndef TY_IO_H
#define TY_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Write all len bytes, retrying short writes and EINTR. Returns 0, or
 * -errno of the write that failed (-EIO when write(2) wrote nothing). */
int ty__write_all(int fd, const void *data, size_t len);

/* Create dir and the folders above it (mode), as `mkdir -p`: existing
 * folders are fine, an existing file is -ENOTDIR. On failure *failed_len
 * (when not NULL) is the length of the prefix of dir that failed. */
int ty__mkdir_p(const char *dir, mode_t mode, size_t *failed_len);

/* Finish a file written under the name tmp in the folder dirfd: fsync it
 * (when sync), close fd, rename tmp over name (a link under name is
 * replaced, never followed), then fsync the folder (when sync; a file
 * system that cannot sync a folder counts as done; another error there is
 * returned, with name already in place). fd is closed and, on failure
 * before the rename, tmp removed, whatever happens. tmp and name are names in
 * dirfd, or paths when dirfd is AT_FDCWD. */
int ty__commit_at(int fd, int dirfd, const char *tmp, const char *name,
                  bool sync);

/* Write data as name (one component) in the folder dirfd, complete or not
 * at all: written to "<name>.tmp.<pid>" (opened without following a link),
 * then ty__commit_at with sync. -ENAMETOOLONG when name is too long for the
 * temporary name, -EINVAL when it is empty or holds a '/'. */
int ty__write_atomic_at(int dirfd, const char *name, const void *data,
                        size_t len, mode_t mode);

/* ty__write_atomic_at in the folder that holds path. */
int ty__write_atomic(const char *path, const void *data, size_t len,
                     mode_t mode);

#endif

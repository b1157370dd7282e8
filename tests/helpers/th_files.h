/*
 * th_files.h — files for tests: writing fixtures (compositions, manifests,
 * fake cgroup trees, run folders) and reading what the code under test
 * wrote.
 *
 * libc only, like every helper, because every test program links them. A
 * failure to write fails the current case. Returned strings are the
 * caller's to free.
 */
#ifndef TY_TH_FILES_H
#define TY_TH_FILES_H

#include <stddef.h>
#include <stdio.h>

/* Write text to dir/rel, creating the folders it needs. The file is
 * rewritten in place (truncated, not replaced), so a descriptor the code
 * under test holds open sees the new contents. */
void th_write(const char *dir, const char *rel, const char *text);
/* th_write under th_tmpdir(); returns the path. */
char *th_write_tmp(const char *rel, const char *text);
/* The rest of f, NUL-terminated (*len, when len is not NULL, says how
 * long). */
char *th_read_all(FILE *f, size_t *len);
/* The whole contents of path, NUL-terminated (binary data too: *len,
 * when len is not NULL, says how long); NULL when it cannot be read. */
char *th_read(const char *path, size_t *len);

#endif

/*
 * base/util.h — small helpers every runner module uses: allocation that dies on
 * exhaustion, cleanup attributes, files written whole or not at all, paths
 * and clocks.
 *
 * Ownership: every `char *` returned is the caller's to free(); `const char *`
 * arguments are borrowed.
 */
#ifndef TY_UTIL_H
#define TY_UTIL_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
/* Grow *p (an array of `size`-byte items with capacity *cap) to hold `need`. */
void xgrow(void *pp, size_t *cap, size_t need, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void cleanup_freep(void *p);
void cleanup_closep(int *fd);
#define cleanup_free __attribute__((cleanup(cleanup_freep)))
#define cleanup_close __attribute__((cleanup(cleanup_closep)))

/* Read a whole file; *len gets its size; the buffer is NUL-terminated.
 * Fails with EFBIG above max_bytes. Caller owns the result. */
char *file_read(const char *path, size_t max_bytes, size_t *len,
                struct err *err);
/* The rest of fd, like file_read; name is for messages. */
char *fd_read_all(int fd, const char *name, size_t max_bytes, size_t *len,
                  struct err *err);
/* Write all of data to fd, retrying short writes and EINTR; 0, or -1 with
 * errno set. */
int fd_write_all(int fd, const void *data, size_t len);
/* Append one whole record (a line of a log) to fd, opened O_APPEND by its
 * only writer, with one write(2); a short write is cut back to where the
 * file ended, so readers never see half a record. 0, or -1 with errno set
 * (ENOSPC for a short write). */
int fd_append_whole(int fd, const void *data, size_t len);
/* Write data to path through a temporary file in the same directory, fsync
 * and rename, so the file is complete or absent. On failure err names path
 * and carries the exit status err_io_status gives (73 or 74). */
int file_write_atomic(const char *path, const void *data, size_t len,
                      struct err *err);
/* Create dir and its parents (mode 0755); existing dirs are fine. */
int mkdir_p(const char *dir, struct err *err);
/* Remove a directory tree; a link in it is removed, never followed (the
 * last component of path too). Fails (ELOOP) on folders nested more than
 * 256 deep, leaving them. */
int rm_rf(const char *path, struct err *err);
/* rm_rf of name, one entry of the folder dirfd. */
int rm_rf_at(int dirfd, const char *name, struct err *err);
/* Raise the soft limit on open files (RLIMIT_NOFILE) to the hard one; the
 * soft limit in effect afterwards, or -1 when it cannot be read. */
long long fd_limit_raise(void);
bool path_exists(const char *path);
bool path_is_dir(const char *path);
/* a + "/" + b; caller owns the result. */
char *path_join(const char *a, const char *b);
/* Directory part of path ("." when none); caller owns the result. */
char *path_dirname(const char *path);
/* Absolute form of a path that may not exist yet; caller owns the result. */
char *path_absolute(const char *path);
/* Directory holding the running executable (from /proc/self/exe). */
char *exe_dir(void);

/* Clocks: monotonic for durations, wall clock for files; the SDK's
 * (sdk/common/ty_time.h), so the runner and plans agree. */
int64_t now_mono_ns(void);
int64_t now_wall_ns(void);
/* Format a wall-clock time as RFC 3339 UTC with milliseconds into buf
 * (at least 25 bytes): 2026-11-29T18:45:29.123Z; ty__format_rfc3339. */
void time_rfc3339(int64_t wall_ns, char *buf, size_t size);
/* An RFC 3339 time (fraction of any length, Z or +hh:mm) as nanoseconds
 * since the epoch; 0 for what ty__parse_rfc3339 refuses, as Docker's zero
 * time for "never" and anything before 1970 or past 2262. */
int64_t time_parse_rfc3339(const char *s);

/* a + b, held at INT64_MAX / INT64_MIN where it would overflow: for
 * totals of figures read from files an instance wrote (heap profiles,
 * sidecars), which may hold anything. */
int64_t i64_add_sat(int64_t a, int64_t b);

#endif

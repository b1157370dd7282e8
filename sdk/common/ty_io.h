/*
 * ty_io.h — writing a whole buffer to a file descriptor, shared by the
 * SDK (outputs written without a coordinator) and the runner (uploads,
 * logs, tar). Internal to testyard.
 */
#ifndef TY_IO_H
#define TY_IO_H

#include <stddef.h>

/* Write all len bytes, retrying short writes and EINTR. Returns 0, or
 * -errno of the write that failed. */
int ty__write_all(int fd, const void *data, size_t len);

#endif

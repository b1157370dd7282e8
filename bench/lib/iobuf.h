/*
 * iobuf.h — the byte buffer the benchmark's hand-written clients (Redis's
 * RESP, ZeroMQ's ZMTP) read into and write from over non-blocking sockets.
 * Held by value; iobuf_free releases it.
 */
#ifndef BENCH_IOBUF_H
#define BENCH_IOBUF_H

#include <stddef.h>
#include <sys/types.h>

struct iobuf {
    unsigned char *p;
    size_t len, cap, off; /* bytes [off, len) are pending */
};

/* Room for `more` bytes after len (moving pending bytes to the front
 * first); dies when out of memory. */
void iobuf_reserve(struct iobuf *b, size_t more);
void iobuf_add(struct iobuf *b, const void *data, size_t len);
/* Write what is pending: 0 all written, 1 the socket would block, -1 it
 * failed. */
int iobuf_flush(struct iobuf *b, int fd);
/* One read of up to `chunk` bytes appended to the buffer: the count, 0
 * when the socket would block, -1 at end of stream or on error. *room gets
 * how much the read could have taken (a shorter read drained the socket). */
ssize_t iobuf_read(struct iobuf *b, int fd, size_t chunk, size_t *room);
void iobuf_free(struct iobuf *b);

#endif

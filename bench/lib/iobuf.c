/*
 * iobuf.c — growable send/receive buffers for the benchmark clients (see
 * iobuf.h).
 */
#include "iobuf.h"

#include "bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void
iobuf_reserve(struct iobuf *b, size_t more)
{
    if (b->off > 0 && b->len + more > b->cap) {
        memmove(b->p, b->p + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
    }
    if (b->len + more <= b->cap)
        return;
    while (b->cap < b->len + more)
        b->cap = b->cap ? b->cap * 2 : 4096;
    b->p = realloc(b->p, b->cap);
    if (b->p == NULL)
        bench_die("out of memory");
}

void
iobuf_add(struct iobuf *b, const void *data, size_t len)
{
    iobuf_reserve(b, len);
    memcpy(b->p + b->len, data, len);
    b->len += len;
}

int
iobuf_flush(struct iobuf *b, int fd)
{
    while (b->off < b->len) {
        ssize_t n = write(fd, b->p + b->off, b->len - b->off);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 1;
        if (n <= 0)
            return -1;
        b->off += (size_t)n;
    }
    b->off = b->len = 0;
    return 0;
}

ssize_t
iobuf_read(struct iobuf *b, int fd, size_t chunk, size_t *room)
{
    for (;;) {
        ssize_t n;

        iobuf_reserve(b, chunk);
        *room = b->cap - b->len;
        n = read(fd, b->p + b->len, *room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return 0;
        if (n <= 0)
            return -1;
        b->len += (size_t)n;
        return n;
    }
}

void
iobuf_free(struct iobuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = b->off = 0;
}

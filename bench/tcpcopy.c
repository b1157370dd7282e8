/*
 * tcpcopy.c — the plainest way to move bytes between two programs on one
 * machine: a TCP connection on loopback, one thread writing --bytes in
 * --chunk writes, the other reading them. The transfer benchmark compares
 * memory-stress's provider-to-requestor throughput against this. With
 * --sha256 both ends also do the hashing memory-stress does: the sender
 * hashes each chunk before writing it (the provider names every block by
 * its SHA-256) and the receiver hashes each whole chunk it has read (the
 * requestor checks every block) — the floor for a transfer that verifies.
 *
 *   tcpcopy [--bytes B] [--chunk C] [--sha256]
 *
 * Prints result lines: the bytes moved, the seconds it took from the first
 * write to the last read, and the throughput in MiB/s.
 */
#include "lib/bench.h"
#include "testyard.h"
#include "ty_io.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct sender {
    int port;
    size_t bytes, chunk;
    bool sha256;
};

static void *
send_all(void *arg)
{
    const struct sender *s = arg;
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)s->port)};
    char *buf = bench_xcalloc(1, s->chunk);
    size_t left = s->bytes;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    memset(buf, 0x5a, s->chunk);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        bench_die("connect: %s", strerror(errno));
    while (left > 0) {
        size_t want = left < s->chunk ? left : s->chunk;
        uint8_t digest[32];
        int rc;

        if (s->sha256)
            ty_sha256(buf, want, digest);
        if ((rc = ty__write_all(fd, buf, want)) < 0)
            bench_die("write: %s", strerror(-rc));
        left -= want;
    }
    close(fd);
    free(buf);
    return NULL;
}

static int
listen_any(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(fd, 1) < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        bench_die("listen: %s", strerror(errno));
    *port = ntohs(sa.sin_port);
    return fd;
}

int
main(int argc, char **argv)
{
    struct sender s = {.bytes = 1ULL << 30, .chunk = 256 << 10};
    size_t got = 0;
    int lfd, fd;
    char *buf;
    pthread_t th;
    int64_t t0, t1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bytes") == 0)
            s.bytes = (size_t)bench_arg_long(argc, argv, &i);
        else if (strcmp(argv[i], "--chunk") == 0)
            s.chunk = (size_t)bench_arg_long(argc, argv, &i);
        else if (strcmp(argv[i], "--sha256") == 0)
            s.sha256 = true;
        else
            bench_die("usage: tcpcopy [--bytes B] [--chunk C] [--sha256]");
    }
    if (s.chunk == 0)
        bench_die("--chunk: expected at least 1 byte");
    lfd = listen_any(&s.port);
    buf = bench_xcalloc(1, s.chunk);
    t0 = bench_now_ns();
    if (pthread_create(&th, NULL, send_all, &s) != 0)
        bench_die("pthread_create failed");
    fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        bench_die("accept: %s", strerror(errno));
    for (size_t have = 0;;) {
        ssize_t n = read(fd, buf + have, s.chunk - have);
        uint8_t digest[32];

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            bench_die("read: %s", strerror(errno));
        if (n == 0) {
            if (s.sha256 && have > 0)
                ty_sha256(buf, have, digest);
            break;
        }
        got += (size_t)n;
        have += (size_t)n;
        if (have == s.chunk) {
            if (s.sha256)
                ty_sha256(buf, have, digest);
            have = 0;
        }
    }
    t1 = bench_now_ns();
    pthread_join(th, NULL);
    if (got != s.bytes)
        bench_die("received %zu of %zu bytes", got, s.bytes);
    bench_result("bytes", (double)got);
    bench_result("seconds", (double)(t1 - t0) / 1e9);
    bench_result("throughput_mib_per_s",
                 (double)got / (1 << 20) / ((double)(t1 - t0) / 1e9));
    close(fd);
    close(lfd);
    free(buf);
    return 0;
}

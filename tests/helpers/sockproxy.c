/*
 * sockproxy.c — a unix-socket relay between a client and the Docker
 * engine, for tests that make the engine go away mid-run: the coordinator
 * is pointed at the proxy (DOCKER_HOST=unix://PROXY), and the test kills
 * the proxy (the engine is gone: connections drop, new ones are refused),
 * stops it with SIGSTOP (the engine hangs: nothing answers) or starts it
 * again on the same path (the engine is back).
 *
 *     sockproxy LISTEN_PATH UPSTREAM_PATH
 *
 * Prints "ready" on stdout once it listens. One thread per connection
 * copies bytes both ways until either side closes. A program of its own,
 * not one of the helpers linked into the tests (the Makefile says so).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const char *upstream;

static int
unix_addr(const char *path, struct sockaddr_un *sa)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa->sun_path))
        return -1;
    strcpy(sa->sun_path, path);
    return 0;
}

/* Copy what one side has to the other; 0 at the end. */
static int
pump(int from, int to)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof(buf));

    if (n <= 0)
        return n < 0 && errno == EINTR ? 1 : 0;
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return 0;
        off += w;
    }
    return 1;
}

static void *
relay(void *arg)
{
    int client = (int)(intptr_t)arg;
    struct sockaddr_un sa;
    int up = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (up >= 0 && unix_addr(upstream, &sa) == 0 &&
        connect(up, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
        struct pollfd p[2] = {{client, POLLIN, 0}, {up, POLLIN, 0}};

        for (;;) {
            if (poll(p, 2, -1) < 0 && errno != EINTR)
                break;
            if ((p[0].revents && !pump(client, up)) ||
                (p[1].revents && !pump(up, client)))
                break;
        }
    }
    if (up >= 0)
        close(up);
    close(client);
    return NULL;
}

int
main(int argc, char **argv)
{
    struct sockaddr_un sa;
    int lfd;

    if (argc != 3) {
        fprintf(stderr, "usage: sockproxy LISTEN_PATH UPSTREAM_PATH\n");
        return 64;
    }
    upstream = argv[2];
    signal(SIGPIPE, SIG_IGN);
    lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (lfd < 0 || unix_addr(argv[1], &sa) < 0) {
        fprintf(stderr, "sockproxy: %s: bad path\n", argv[1]);
        return 1;
    }
    unlink(argv[1]);
    if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(lfd, 64) < 0) {
        fprintf(stderr, "sockproxy: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        pthread_t t;

        if (c < 0)
            continue;
        if (pthread_create(&t, NULL, relay, (void *)(intptr_t)c) != 0)
            close(c);
        else
            pthread_detach(t);
    }
}

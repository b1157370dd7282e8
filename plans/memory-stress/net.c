/*
 * net.c — clocks, deadlines and TCP for the memory-stress plan.
 *
 * Every read and write waits in poll() for at most the time left before a
 * deadline (the round's, or the run's), so an instance whose peer hangs
 * fails when its time is up instead of blocking forever; a peer that died
 * shows up at once as a closed or reset connection.
 */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_SLICE_NS 50000000LL

int64_t
ms_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t
ms_run_deadline(void)
{
    const char *v = getenv("TESTYARD_DEADLINE_MS");
    struct timespec wall;
    long long ms;
    char *end;

    if (v == NULL || *v == '\0')
        return MS_NO_DEADLINE;
    ms = strtoll(v, &end, 10);
    if (*end != '\0' || ms <= 0)
        return MS_NO_DEADLINE;
    clock_gettime(CLOCK_REALTIME, &wall);
    ms -= (long long)wall.tv_sec * 1000 + wall.tv_nsec / 1000000;
    return ms_now_ns() + (int64_t)ms * 1000000;
}

int64_t
ms_timeout_ms(int64_t deadline)
{
    int64_t left;

    if (deadline == MS_NO_DEADLINE)
        return -1;
    left = (deadline - ms_now_ns()) / 1000000;
    return left > 0 ? left : 0;
}

void
ms_sleep_until(int64_t at, const atomic_bool *stop)
{
    for (;;) {
        int64_t now = ms_now_ns(), step;
        struct timespec ts;

        if (now >= at || (stop != NULL && atomic_load(stop)))
            return;
        step = at - now < SLEEP_SLICE_NS ? at - now : SLEEP_SLICE_NS;
        ts.tv_sec = (time_t)(step / 1000000000);
        ts.tv_nsec = (long)(step % 1000000000);
        nanosleep(&ts, NULL);
    }
}

int
ms_listen(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

    if (fd < 0)
        return -errno;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(fd, 256) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
        err = errno;
        close(fd);
        return -err;
    }
    *port = ntohs(sa.sin_port);
    return fd;
}

/* The local side of a route to the sync service: 127.0.0.1 on host
 * networking, the container's address on a bridge. */
void
ms_advertised_host(char *buf, size_t size)
{
    const char *sync = getenv("SYNC_SERVICE_HOST");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (fd < 0 || sync == NULL || inet_pton(AF_INET, sync, &sa.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) < 0 ||
        inet_ntop(AF_INET, &sa.sin_addr, buf, (socklen_t)size) == NULL)
        snprintf(buf, size, "127.0.0.1");
    if (fd >= 0)
        close(fd);
}

/* Wait until fd is ready for events: 0, or -ETIMEDOUT. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
    struct pollfd p = {.fd = fd, .events = events};

    for (;;) {
        int64_t left = ms_timeout_ms(deadline);
        int n = poll(&p, 1, left > 1000 || left < 0 ? 1000 : (int)left);

        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -errno;
        if (deadline != MS_NO_DEADLINE && ms_now_ns() >= deadline)
            return -ETIMEDOUT;
    }
}

int
ms_connect(const char *host, int port, int64_t deadline)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int fd, one = 1, err = 0;
    socklen_t el = sizeof(err);

    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return -EINVAL;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        err = errno == EINPROGRESS ? -wait_fd(fd, POLLOUT, deadline) : errno;
        if (err == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
            err = errno;
    }
    if (err != 0) {
        close(fd);
        return -err;
    }
    return fd;
}

int
ms_read_full(int fd, void *buf, size_t len, int64_t deadline)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        int rc;

        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return -ENOTCONN;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -errno;
        if ((rc = wait_fd(fd, POLLIN, deadline)) < 0)
            return rc;
    }
    return 0;
}

int
ms_write_full(int fd, const void *buf, size_t len, int64_t deadline)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        int rc;

        if (n >= 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -errno;
        if ((rc = wait_fd(fd, POLLOUT, deadline)) < 0)
            return rc;
    }
    return 0;
}

const char *
ms_io_strerror(int rc)
{
    if (rc == -ENOTCONN)
        return "the other side closed the connection";
    if (rc == -ETIMEDOUT)
        return "the round's deadline passed";
    return strerror(-rc);
}

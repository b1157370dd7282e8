/*
 * bench.c — helpers the benchmark programs share (see bench.h).
 */
#include "bench.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

int64_t
bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

long
bench_rss_kib(pid_t pid)
{
    char path[64], line[256];
    long kib = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib;
}

/* Nanoseconds one task has run, the first field of its schedstat. */
static double
task_ns(const char *path)
{
    unsigned long long ns = 0;
    FILE *f = fopen(path, "r");

    if (f == NULL)
        return 0;
    if (fscanf(f, "%llu", &ns) != 1)
        ns = 0;
    fclose(f);
    return (double)ns;
}

double
bench_cpu_ms(pid_t pid)
{
    char path[300];
    struct dirent *de;
    double ns = 0;
    DIR *d;

    /* schedstat counts in nanoseconds, where /proc/<pid>/stat has clock
     * ticks (10 ms): too coarse for a few thousand short requests. */
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    d = opendir(path);
    if (d == NULL)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid,
                 de->d_name);
        ns += task_ns(path);
    }
    closedir(d);
    return ns / 1e6;
}

void
bench_result(const char *name, double value)
{
    printf("result %s %.6g\n", name, value);
    fflush(stdout);
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

double
bench_percentile(double *v, size_t n, double p)
{
    size_t rank;

    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_double);
    rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1];
}

void
bench_die(const char *fmt, ...)
{
    va_list ap;

    fputs("bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

void *
bench_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);

    if (p == NULL)
        bench_die("out of memory");
    return p;
}

long
bench_arg_long(int argc, char **argv, int *i)
{
    char *end;
    long v;

    if (*i + 1 >= argc)
        bench_die("%s: expected a number after it", argv[*i]);
    v = strtol(argv[*i + 1], &end, 10);
    if (*end != '\0' || v < 0)
        bench_die("%s: expected a number, got \"%s\"", argv[*i], argv[*i + 1]);
    (*i)++;
    return v;
}

int
bench_tcp_connect(const char *endpoint)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    const char *colon = strrchr(endpoint, ':');
    int one = 1, fd;

    if (strncmp(endpoint, "tcp://127.0.0.1:", 16) != 0 || colon == NULL)
        bench_die("endpoint %s is not tcp://127.0.0.1:<port>", endpoint);
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        bench_die("socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        bench_die("connect to %s: %s", endpoint, strerror(errno));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

/* ---- many ZeroMQ sockets, one epoll ------------------------------------ */

struct bench_zpoll {
    int ep;
    struct epoll_event *ev;
    int maxev;
};

struct bench_zpoll *
bench_zpoll_new(size_t nsockets)
{
    struct bench_zpoll *zp = bench_xcalloc(1, sizeof(*zp));

    zp->ep = epoll_create1(EPOLL_CLOEXEC);
    if (zp->ep < 0)
        bench_die("epoll_create1: %s", strerror(errno));
    zp->maxev = nsockets < 1024 ? (int)nsockets + 1 : 1024;
    zp->ev = bench_xcalloc((size_t)zp->maxev, sizeof(*zp->ev));
    return zp;
}

void
bench_zpoll_destroy(struct bench_zpoll **pzp)
{
    struct bench_zpoll *zp = *pzp;

    if (zp == NULL)
        return;
    close(zp->ep);
    free(zp->ev);
    free(zp);
    *pzp = NULL;
}

void
bench_zpoll_add(struct bench_zpoll *zp, void *sock, uint32_t index)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = index};
    size_t len = sizeof(int);
    int fd;

    if (zmq_getsockopt(sock, ZMQ_FD, &fd, &len) < 0)
        bench_die("ZMQ_FD: %s", zmq_strerror(errno));
    if (epoll_ctl(zp->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
        bench_die("epoll_ctl: %s", strerror(errno));
}

int
bench_zpoll_fd(const struct bench_zpoll *zp)
{
    return zp->ep;
}

int
bench_zpoll_wait(struct bench_zpoll *zp, uint32_t *idx, int max, int timeout_ms)
{
    int n;

    if (max > zp->maxev)
        max = zp->maxev;
    do
        n = epoll_wait(zp->ep, zp->ev, max, timeout_ms);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        bench_die("epoll_wait: %s", strerror(errno));
    for (int i = 0; i < n; i++)
        idx[i] = zp->ev[i].data.u32;
    return n;
}

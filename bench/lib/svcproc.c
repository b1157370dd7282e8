/*
 * svcproc.c — the server side of the client benchmarks in a child process
 * (see svcproc.h).
 *
 * The sync service child runs the loop the coordinator runs (run.c): poll
 * the ROUTER and the control pipe, syncsvc_handle, syncsvc_tick when a
 * deadline passes. The echo child receives whole messages on a ROUTER and
 * sends them straight back. The TCP barrier child counts lines on plain
 * sockets and answers all of them when the count reaches a multiple of N.
 * Each writes its endpoint into a pipe once bound and exits when the
 * control pipe reaches end of file (which poll reports as POLLHUP, not
 * POLLIN), or at once when the parent dies.
 */
#include "svcproc.h"

#include "bench.h"
#include "base/err.h"
#include "sync/sync.h"
#include "base/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

static void
report_endpoint(int fd, const char *ep)
{
    size_t len = strlen(ep) + 1;

    if (write(fd, ep, len) != (ssize_t)len)
        _exit(1);
    close(fd);
}

static void
run_sync(int ctl, int epfd, const char *run_id, size_t n, const char *dir)
{
    struct syncsvc_instance *si = bench_xcalloc(n, sizeof(*si));
    struct syncsvc_config cfg = {
        .run_id = run_id,
        .secret = SVCPROC_SECRET,
        .run_dir = dir,
        .bind = "tcp://127.0.0.1:0",
        .instances = si,
        .ninstances = n,
    };
    struct err err = {0};
    struct syncsvc *svc;
    char board[128];

    snprintf(board, sizeof(board), "%s/.sync", dir);
    cfg.board_dir = board;
    for (size_t i = 0; i < n; i++) {
        si[i].group = "g";
        si[i].group_index = (int)i;
        si[i].outdir = dir;
    }
    svc = syncsvc_new(&cfg, &err);
    if (svc == NULL)
        bench_die("sync service: %s", err.msg);
    report_endpoint(epfd, syncsvc_endpoint(svc));
    for (;;) {
        zmq_pollitem_t items[2] = {
            {syncsvc_socket(svc), 0, ZMQ_POLLIN, 0},
            {NULL, ctl, ZMQ_POLLIN, 0},
        };
        int64_t due = syncsvc_next_deadline_ms(svc);
        long timeout = 1000;

        if (due >= 0) {
            int64_t left = due - now_mono_ns() / 1000000;

            timeout = left < 0 ? 0 : left < 1000 ? (long)left : 1000;
        }
        if (zmq_poll(items, 2, timeout) < 0 && errno != EINTR)
            bench_die("zmq_poll: %s", zmq_strerror(errno));
        if (items[1].revents & (ZMQ_POLLIN | ZMQ_POLLERR))
            break;
        if (syncsvc_handle(svc, &err) < 0)
            bench_die("sync service: %s", err.msg);
        due = syncsvc_next_deadline_ms(svc);
        if (due >= 0 && due <= now_mono_ns() / 1000000)
            syncsvc_tick(svc);
    }
    syncsvc_destroy(&svc);
    free(si);
}

/* Receive every frame of one message and send them back unchanged. */
static int
echo_one(void *sock)
{
    zmq_msg_t part;
    int more = 1;

    while (more) {
        zmq_msg_init(&part);
        if (zmq_msg_recv(&part, sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&part);
            return -1;
        }
        more = zmq_msg_more(&part);
        if (zmq_msg_send(&part, sock, ZMQ_DONTWAIT | (more ? ZMQ_SNDMORE : 0)) <
            0)
            zmq_msg_close(&part);
    }
    return 0;
}

static void
run_echo(int ctl, int epfd)
{
    void *ctx = zmq_ctx_new();
    void *sock;
    int backlog = 4096, hwm = 10000, zero = 0;
    char ep[256];
    size_t eplen = sizeof(ep);

    /* as many I/O threads as the sync service uses (runner/sync/syncsvc.c) */
    zmq_ctx_set(ctx, ZMQ_IO_THREADS,
                sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1);
    sock = zmq_socket(ctx, ZMQ_ROUTER);
    zmq_setsockopt(sock, ZMQ_BACKLOG, &backlog, sizeof(backlog));
    zmq_setsockopt(sock, ZMQ_SNDHWM, &hwm, sizeof(hwm));
    zmq_setsockopt(sock, ZMQ_RCVHWM, &hwm, sizeof(hwm));
    zmq_setsockopt(sock, ZMQ_LINGER, &zero, sizeof(zero));
    if (zmq_bind(sock, "tcp://127.0.0.1:0") < 0 ||
        zmq_getsockopt(sock, ZMQ_LAST_ENDPOINT, ep, &eplen) < 0)
        bench_die("echo: bind: %s", zmq_strerror(errno));
    report_endpoint(epfd, ep);
    for (;;) {
        zmq_pollitem_t items[2] = {
            {sock, 0, ZMQ_POLLIN, 0},
            {NULL, ctl, ZMQ_POLLIN, 0},
        };

        if (zmq_poll(items, 2, 1000) < 0 && errno != EINTR)
            bench_die("zmq_poll: %s", zmq_strerror(errno));
        if (items[1].revents & (ZMQ_POLLIN | ZMQ_POLLERR))
            break;
        for (int i = 0; i < 4096 && echo_one(sock) == 0; i++)
            ;
    }
    zmq_close(sock);
    zmq_ctx_term(ctx);
}

/* ---- the TCP barrier ---------------------------------------------------- */

#define TCP_RELEASE "{\"id\":0,\"status\":\"ok\",\"seq\":0}\n"

struct tcpb {
    int ep, lfd;
    int *fds;
    size_t nfds, n;
    uint64_t lines; /* signals so far, over all rounds */
};

static int
tcp_listen(char *ep, size_t size)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(fd, 4096) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        bench_die("tcp barrier: listen: %s", strerror(errno));
    snprintf(ep, size, "tcp://127.0.0.1:%d", ntohs(sa.sin_port));
    return fd;
}

static void
tcp_accept(struct tcpb *t)
{
    int fd, one = 1;

    while ((fd = accept4(t->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >=
           0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

        if (t->nfds == t->n)
            bench_die("tcp barrier: more than %zu connections", t->n);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev);
        t->fds[t->nfds++] = fd;
    }
}

/* Every instance signalled: one line to each, as Redis's PUBLISH would. */
static void
tcp_release(struct tcpb *t)
{
    for (size_t i = 0; i < t->nfds; i++)
        if (write(t->fds[i], TCP_RELEASE, sizeof(TCP_RELEASE) - 1) < 0)
            bench_die("tcp barrier: write: %s", strerror(errno));
}

static void
tcp_read(struct tcpb *t, int fd)
{
    char buf[4096];
    ssize_t n;

    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] == '\n' && ++t->lines % t->n == 0)
                tcp_release(t);
        if ((size_t)n < sizeof(buf))
            return;
    }
    if (n == 0) {
        epoll_ctl(t->ep, EPOLL_CTL_DEL, fd, NULL);
        close(fd);
    }
}

static void
run_tcp(int ctl, int epfd, size_t n)
{
    struct tcpb t = {.n = n};
    struct epoll_event ev = {.events = EPOLLIN}, evs[256];
    char ep[64];

    t.fds = bench_xcalloc(n, sizeof(int));
    t.ep = epoll_create1(EPOLL_CLOEXEC);
    t.lfd = tcp_listen(ep, sizeof(ep));
    ev.data.fd = t.lfd;
    epoll_ctl(t.ep, EPOLL_CTL_ADD, t.lfd, &ev);
    ev.data.fd = ctl;
    epoll_ctl(t.ep, EPOLL_CTL_ADD, ctl, &ev);
    report_endpoint(epfd, ep);
    for (;;) {
        int k = epoll_wait(t.ep, evs, 256, 1000);

        for (int i = 0; i < k; i++) {
            if (evs[i].data.fd == ctl)
                return; /* the parent closed it: stop (fds die with us) */
            if (evs[i].data.fd == t.lfd)
                tcp_accept(&t);
            else
                tcp_read(&t, evs[i].data.fd);
        }
    }
}

void
svcproc_start(struct svcproc *sp, enum svcproc_kind kind, const char *run_id,
              size_t ninstances)
{
    int ctl[2], ep[2];
    pid_t parent;
    ssize_t n;

    memset(sp, 0, sizeof(*sp));
    snprintf(sp->run_dir, sizeof(sp->run_dir), "/tmp/testyard-bench.XXXXXX");
    if (mkdtemp(sp->run_dir) == NULL)
        bench_die("mkdtemp: %s", strerror(errno));
    if (pipe(ctl) < 0 || pipe(ep) < 0)
        bench_die("pipe: %s", strerror(errno));
    fflush(NULL);
    parent = getpid();
    sp->pid = fork();
    if (sp->pid < 0)
        bench_die("fork: %s", strerror(errno));
    if (sp->pid == 0) {
        /* A benchmark killed half-way must not leave its server behind. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
            _exit(1);
        close(ctl[1]);
        close(ep[0]);
        if (kind == SVCPROC_SYNC)
            run_sync(ctl[0], ep[1], run_id, ninstances, sp->run_dir);
        else if (kind == SVCPROC_ECHO)
            run_echo(ctl[0], ep[1]);
        else
            run_tcp(ctl[0], ep[1], ninstances);
        _exit(0);
    }
    close(ctl[0]);
    close(ep[1]);
    sp->ctl = ctl[1];
    n = read(ep[0], sp->endpoint, sizeof(sp->endpoint) - 1);
    close(ep[0]);
    if (n <= 1)
        bench_die("the server process did not start");
    sp->endpoint[n - 1] = '\0';
}

void
svcproc_stop(struct svcproc *sp)
{
    int status;

    if (sp->pid <= 0)
        return;
    close(sp->ctl);
    if (waitpid(sp->pid, &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        fprintf(stderr, "bench: the server process ended badly\n");
    rm_rf(sp->run_dir, NULL);
    sp->pid = 0;
}

/*
 * test_sdk_conn.c — the SDK's connection (sdk/ty_conn.c, sdk/ty_zmtp.c)
 * against a real sync service on a thread of the test process: a
 * coordinator that starts listening late, one that goes away mid-wait,
 * an endpoint that does not speak ZMTP, hello refused, no coordinator at
 * all, and more waits on one handle than it has release board slots.
 */
#include "sdk_fixture.h"
#include "th.h"
#include "ty_board.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A loopback port nobody listens on (bound, read, closed). */
static int
free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        th_skip("no loopback port");
    port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

struct connect_arg {
    int port;
    int rc;
    char msg[512];
    struct ty *ty;
};

/* Connect instance 0 of 1 to the port, as ty_main would. */
static void *
connect_thread(void *p)
{
    struct connect_arg *a = p;
    char url[64], why[256];

    snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", a->port);
    setenv("TESTYARD_SYNC_URL", url, 1);
    a->ty = ty__new_from_env(why, sizeof(why));
    a->rc = a->ty ? ty__sync_connect(a->ty) : -1;
    snprintf(a->msg, sizeof(a->msg), "%s", a->ty ? ty_errmsg(a->ty) : why);
    return NULL;
}

/* Instances may start before the coordinator listens: the connection
 * keeps trying, and hello goes out once it is up. */
static void
t_coordinator_late(void)
{
    struct connect_arg a = {.port = free_port()};
    char bind[64];
    pthread_t th;

    svc_start(1); /* only for the environment; the real one comes later */
    set_env(0, 1);
    svc_stop();
    pthread_create(&th, NULL, connect_thread, &a);
    usleep(400 * 1000); /* several refused attempts */
    snprintf(bind, sizeof(bind), "tcp://127.0.0.1:%d", a.port);
    svc_start_at(1, bind);
    pthread_join(th, NULL);
    CHECK_MSG(a.rc == 0, "connect: %d %s", a.rc, a.msg);
    CHECK_EQ_INT(S.hellos, 1);
    if (a.rc == 0)
        CHECK_EQ_INT(ty_signal_entry(a.ty, "up"), 1);
    ty__destroy(&a.ty);
    svc_stop();
}

/* A coordinator that goes away fails a wait at once, not at its deadline. */
static void
t_coordinator_gone(void)
{
    struct ty *ty;
    struct wait_arg a;
    pthread_t th;

    svc_start(2);
    ty = handle(0, 2);
    a = (struct wait_arg){ty, "never", 2, 30000, 0, 0, "", NULL};
    pthread_create(&th, NULL, wait_thread, &a);
    usleep(200 * 1000);
    svc_stop();
    pthread_join(th, NULL);
    CHECK_EQ_INT(a.rc, -ENOTCONN);
    CHECK_CONTAINS(a.msg, "coordinator closed the connection");
    CHECK_MSG(a.elapsed_ms < 5000, "took %lld ms", (long long)a.elapsed_ms);
    CHECK_EQ_INT(ty_signal_entry(ty, "after"), -ENOTCONN);
    ty__destroy(&ty);
}

struct garbage_arg {
    int lfd;
};

/* Accept one connection and answer with something that is not ZMTP. */
static void *
garbage_thread(void *p)
{
    struct garbage_arg *g = p;
    int fd = accept(g->lfd, NULL, NULL);
    static const char junk[80] = "HTTP/1.1 400 Bad Request\r\n\r\n";

    if (fd >= 0) {
        if (write(fd, junk, sizeof(junk)) < 0)
            (void)0;
        usleep(500 * 1000);
        close(fd);
    }
    return NULL;
}

/* An endpoint that is not a ZeroMQ peer: the connection says so. */
static void
t_not_zmtp(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    struct garbage_arg g;
    struct connect_arg a = {0};
    pthread_t srv, cli;
    int64_t t0;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    g.lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (g.lfd < 0 || bind(g.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(g.lfd, 1) < 0 ||
        getsockname(g.lfd, (struct sockaddr *)&sa, &len) < 0)
        th_skip("no loopback listener");
    a.port = ntohs(sa.sin_port);
    svc_start(1);
    set_env(0, 1);
    pthread_create(&srv, NULL, garbage_thread, &g);
    t0 = ty__now_ms();
    pthread_create(&cli, NULL, connect_thread, &a);
    pthread_join(cli, NULL);
    pthread_join(srv, NULL);
    CHECK_EQ_INT(a.rc, -ENOTCONN);
    CHECK_CONTAINS(a.msg, "not a ZeroMQ peer");
    CHECK_MSG(ty__now_ms() - t0 < 5000, "took %lld ms",
              (long long)(ty__now_ms() - t0));
    ty__destroy(&a.ty);
    close(g.lfd);
    svc_stop();
}

/* More waits at once on one handle than it has board slots: the rest
 * are answered by message, and every one completes. Without a usable
 * board everything goes by message. */
static void
t_barrier_board_slots(void)
{
    enum { W = TY_BOARD_AREA + 2 };
    struct ty *ty, *other;
    struct wait_arg a[W];
    pthread_t th[W];
    char states[W][16];

    svc_start(2);
    ty = handle(0, 2);
    other = handle(1, 2);
    for (int i = 0; i < W; i++) {
        snprintf(states[i], sizeof(states[i]), "s%d", i);
        a[i] = (struct wait_arg){ty, states[i], 2, 10000, 0, 0, "", NULL};
        pthread_create(&th[i], NULL, wait_thread, &a[i]);
    }
    usleep(300 * 1000); /* every wait parked at the coordinator */
    for (int i = 0; i < W; i++)
        CHECK_EQ_INT(ty_signal_entry(other, states[i]), 2);
    for (int i = 0; i < W; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(a[i].rc == 1, "%s: %lld %s", states[i], (long long)a[i].rc,
                  a[i].msg);
    }
    ty__destroy(&ty);
    ty__destroy(&other);
    svc_stop();
    CHECK_EQ_INT(on_board(), TY_BOARD_AREA);

    svc_start(2);
    S.board[0] = '\0'; /* the instances do not find the board */
    ty = handle(0, 2);
    other = handle(1, 2);
    a[0] = (struct wait_arg){ty, "x", 2, 10000, 0, 0, "", NULL};
    pthread_create(&th[0], NULL, wait_thread, &a[0]);
    usleep(100 * 1000);
    CHECK_EQ_INT(ty_signal_and_wait(other, "x", 2, 10000), 2);
    pthread_join(th[0], NULL);
    CHECK_EQ_INT(a[0].rc, 1);
    ty__destroy(&ty);
    ty__destroy(&other);
    svc_stop();
    CHECK_EQ_INT(on_board(), TY_BOARD_AREA); /* none more */
}

static void
t_hello_rejected(void)
{
    char why[256];
    struct ty *ty;

    svc_start(1);
    set_env(0, 1);
    setenv("TEST_RUN", "some-other-run", 1);
    ty = ty__new_from_env(why, sizeof(why));
    CHECK_EQ_INT(ty__sync_connect(ty), -EACCES);
    CHECK_CONTAINS(ty_errmsg(ty), "unknown run \"some-other-run\"");
    CHECK(ty->conn == NULL);
    CHECK_EQ_INT(ty_signal_entry(ty, "s"), -ENOTCONN);
    ty__destroy(&ty);
    svc_stop();
}

/* Nobody listens: hello gives up at the run's deadline. */
static void
t_no_coordinator(void)
{
    char why[256], buf[64];
    struct timespec now;
    struct ty *ty;
    int64_t t0;

    svc_start(1);
    set_env(0, 1);
    setenv("TESTYARD_SYNC_URL", "tcp://127.0.0.1:1", 1);
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(buf, sizeof(buf), "%lld",
             (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000 + 500);
    setenv("TESTYARD_DEADLINE_MS", buf, 1);
    ty = ty__new_from_env(why, sizeof(why));
    t0 = ty__now_ms();
    CHECK_EQ_INT(ty__sync_connect(ty), -ETIMEDOUT);
    CHECK(ty__now_ms() - t0 < 3000);
    CHECK_CONTAINS(ty_errmsg(ty), "no answer from the coordinator");
    ty__destroy(&ty);
    svc_stop();
}

static const struct th_case cases[] = {
    {"coordinator_late", t_coordinator_late},
    {"coordinator_gone", t_coordinator_gone},
    {"not_zmtp", t_not_zmtp},
    {"hello_rejected", t_hello_rejected},
    {"no_coordinator", t_no_coordinator},
    {"barrier_board_slots", t_barrier_board_slots},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

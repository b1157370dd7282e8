/*
 * barrier.c — N instances meet at a barrier, round after round, against
 * one of these servers:
 *
 *   testyard  the coordinator's sync service (runner/sync/syncsvc.c) in a child
 *             process; each instance is a DEALER that says hello, then
 *             sends signal_and_wait("round-<r>", N) every round. The
 *             instances speak ZMTP themselves over plain sockets
 *             (lib/zmtp.c): the bytes a libzmq DEALER sends, without
 *             libzmq's per-socket machinery on this side
 *   testyard-zmq  the same with a libzmq DEALER socket per instance
 *   redis     a Redis barrier as Testground's Redis-based sync service
 *             built it: INCR the state's counter; the instance whose INCR
 *             returns N PUBLISHes the release on a channel every instance
 *             SUBSCRIBEd to beforehand (two connections per instance)
 *   redis-poll  the barrier Testground's Go SDK actually ran on Redis: INCR,
 *             then GET the counter every --poll-ms (1 s in the SDK) until it
 *             reaches N; the INCR's answer counts as the first look
 *   floor     a ROUTER that echoes each message: one ZeroMQ round trip per
 *             instance with no barrier logic, the least any barrier on a
 *             libzmq ROUTER can cost (ZMTP clients; floor-zmq: libzmq ones)
 *   tcp       a plain epoll server that reads one line per instance and,
 *             once all N are in, writes one line to each: the least any
 *             barrier with one TCP connection per instance can cost here
 *
 * All N clients live in this process on one thread, waited on with one
 * epoll. Each round every client signals (in turn, as fast as the thread
 * can send), then the thread waits until every client is released. Per
 * round: release = last release − last signal, round = last release −
 * first signal. The first rounds are warm-up; the medians over the others
 * are printed, with the server's resident memory per connected instance
 * and the server's and this process's CPU time per signal.
 *
 * Every testyard answer is checked as it arrives: status ok, the id of
 * this round's request, and a seq from 1 to N that no other instance got
 * this round — so a run is also a test of the ZMTP client against the
 * real service.
 *
 *   barrier --system testyard|testyard-zmq|redis|redis-poll|floor|
 *           floor-zmq|tcp -n N [--rounds R] [--warmup W]
 *           [--redis-port P --redis-pid PID] [--poll-ms MS]
 */
#include "lib/barrier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Which clients each system uses, and which server (none: redis-server,
 * started by bench/run). */
static const struct {
    const char *name;
    const struct bar_ops *ops;
    int server; /* enum svcproc_kind, or -1 */
    bool check; /* testyard answers, checked one by one */
    bool board; /* releases on the release board */
} systems[] = {
    {"testyard", &bar_zmtp_ops, SVCPROC_SYNC, true, true},
    {"testyard-msg", &bar_zmtp_ops, SVCPROC_SYNC, true, false},
    {"testyard-zmq", &bar_zmq_ops, SVCPROC_SYNC, true, true},
    {"redis", &bar_redis_ops, -1, false, false},
    {"redis-poll", &bar_redis_ops, -1, false, false},
    {"floor", &bar_zmtp_ops, SVCPROC_ECHO, false, false},
    {"floor-zmq", &bar_zmq_ops, SVCPROC_ECHO, false, false},
    {"tcp", &bar_lines_ops, SVCPROC_TCP, false, false},
};

#define NSYSTEMS (sizeof(systems) / sizeof(systems[0]))

struct opts {
    size_t sys;
    int rounds, warmup;
    pid_t server_pid; /* redis */
};

static void usage(void) __attribute__((noreturn));

static void
usage(void)
{
    fprintf(stderr, "usage: barrier --system testyard|testyard-zmq|redis|"
                    "redis-poll|floor|floor-zmq|tcp -n N [--rounds R] "
                    "[--warmup W] [--redis-port P --redis-pid PID] "
                    "[--poll-ms MS]\n");
    exit(64);
}

static size_t
parse_system(const char *s)
{
    for (size_t i = 0; i < NSYSTEMS; i++)
        if (strcmp(s, systems[i].name) == 0)
            return i;
    usage();
}

static void
parse_args(struct bar *b, struct opts *o, int argc, char **argv)
{
    o->sys = NSYSTEMS;
    o->rounds = 50;
    o->warmup = 3;
    b->poll_ms = 1000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--system") == 0 && i + 1 < argc)
            o->sys = parse_system(argv[++i]);
        else if (strcmp(argv[i], "-n") == 0)
            b->n = (size_t)bench_arg_long(argc, argv, &i);
        else if (strcmp(argv[i], "--rounds") == 0)
            o->rounds = (int)bench_arg_long(argc, argv, &i);
        else if (strcmp(argv[i], "--warmup") == 0)
            o->warmup = (int)bench_arg_long(argc, argv, &i);
        else if (strcmp(argv[i], "--redis-port") == 0)
            b->redis_port = (int)bench_arg_long(argc, argv, &i);
        else if (strcmp(argv[i], "--poll-ms") == 0)
            b->poll_ms = (int)bench_arg_long(argc, argv, &i);
        else if (strcmp(argv[i], "--redis-pid") == 0)
            o->server_pid = (pid_t)bench_arg_long(argc, argv, &i);
        else
            usage();
    }
    if (o->sys == NSYSTEMS || b->n == 0 || o->rounds < 1 || b->poll_ms < 1 ||
        (systems[o->sys].server < 0 &&
         (b->redis_port == 0 || o->server_pid == 0)))
        usage();
    b->check = systems[o->sys].check;
    b->board = systems[o->sys].board;
    b->redis_poll = strcmp(systems[o->sys].name, "redis-poll") == 0;
}

static void
measure_round(const struct bar *b, double *release_ms, double *round_ms)
{
    int64_t first = INT64_MAX, last_sent = 0, last_rel = 0;

    for (size_t i = 0; i < b->n; i++) {
        const struct bar_client *c = &b->c[i];

        if (c->sent_ns < first)
            first = c->sent_ns;
        if (c->sent_ns > last_sent)
            last_sent = c->sent_ns;
        if (c->rel_ns > last_rel)
            last_rel = c->rel_ns;
    }
    *release_ms = (double)(last_rel - last_sent) / 1e6;
    *round_ms = (double)(last_rel - first) / 1e6;
}

/* CPU, memory and the medians over the measured rounds. */
struct totals {
    double *rel, *rnd;
    double cpu0, cpu1, ccpu0, ccpu1;
    long rss0, rss1, rss2;
};

static void
report(const struct bar *b, const struct opts *o, struct totals *t)
{
    double signals = (double)(o->warmup + o->rounds) * (double)b->n;

    bench_result("release_ms", bench_percentile(t->rel, (size_t)o->rounds, 50));
    bench_result("release_p90_ms",
                 bench_percentile(t->rel, (size_t)o->rounds, 90));
    bench_result("round_ms", bench_percentile(t->rnd, (size_t)o->rounds, 50));
    bench_result("server_cpu_us_per_signal",
                 (t->cpu1 - t->cpu0) * 1000.0 / signals);
    bench_result("client_cpu_us_per_signal",
                 (t->ccpu1 - t->ccpu0) * 1000.0 / signals);
    bench_result("server_rss_per_instance_bytes",
                 (double)(t->rss2 - t->rss0) * 1024.0 / (double)b->n);
    bench_result("server_rss_connected_per_instance_bytes",
                 (double)(t->rss1 - t->rss0) * 1024.0 / (double)b->n);
}

static void
run_rounds(struct bar *b, const struct bar_ops *ops, const struct opts *o,
           struct totals *t)
{
    for (b->round = 1; b->round <= o->warmup + o->rounds; b->round++) {
        int m = b->round - o->warmup - 1;

        snprintf(b->state, sizeof(b->state), "round-%d", b->round);
        b->released = 0;
        memset(b->seen, 0, b->n);
        ops->round(b);
        if (m >= 0)
            measure_round(b, &t->rel[m], &t->rnd[m]);
    }
}

int
main(int argc, char **argv)
{
    struct bar b = {0};
    struct opts o = {0};
    struct totals t = {0};
    const struct bar_ops *ops;
    pid_t server;
    int64_t t0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    parse_args(&b, &o, argc, argv);
    ops = systems[o.sys].ops;
    t.rel = bench_xcalloc((size_t)o.rounds, sizeof(double));
    t.rnd = bench_xcalloc((size_t)o.rounds, sizeof(double));
    b.c = bench_xcalloc(b.n, sizeof(*b.c));
    b.seen = bench_xcalloc(b.n, 1);
    for (size_t i = 0; i < b.n; i++)
        b.c[i].round = -1;
    if (systems[o.sys].server >= 0)
        svcproc_start(&b.sp, (enum svcproc_kind)systems[o.sys].server,
                      BAR_RUN_ID, b.n);
    server = systems[o.sys].server >= 0 ? b.sp.pid : o.server_pid;
    t.rss0 = bench_rss_kib(server);
    t0 = bench_now_ns();
    ops->connect(&b);
    bench_result("connect_ms", (double)(bench_now_ns() - t0) / 1e6);
    t.rss1 = bench_rss_kib(server);
    t.cpu0 = bench_cpu_ms(server);
    t.ccpu0 = bench_cpu_ms(getpid());
    run_rounds(&b, ops, &o, &t);
    t.cpu1 = bench_cpu_ms(server);
    t.ccpu1 = bench_cpu_ms(getpid());
    t.rss2 = bench_rss_kib(server);
    report(&b, &o, &t);
    ops->close(&b);
    svcproc_stop(&b.sp);
    free(t.rel);
    free(t.rnd);
    free(b.seen);
    free(b.c);
    return 0;
}

/*
 * test_syncsvc_restart.c — instances restarted by a stage action
 * (syncsvc_instance_restarting): barriers hold across the restart and
 * release when the new process signals; the new process's repeats of
 * signals an earlier one sent get the same numbers and count nothing, on
 * a second restart too; the order's memory is bounded; an instance that
 * restarts and then ends for good fails barriers as before; the new
 * process's hello is taken, and its old connection is refused.
 *
 * Client i is instance g/i; fix_replace gives a client the connection of
 * a new process (svc_fixture.h).
 */
#include "svc_fixture.h"
#include "th.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/* The response to a signal of state by client c: its seq (-1 when not
 * ok). */
static int64_t
signal_seq(int c, const char *state)
{
    cJSON *r;
    int64_t seq;

    sendf(c, "{\"id\":5,\"op\":\"signal\",\"state\":\"%s\"}", state);
    r = expect(c, "ok");
    seq = r != NULL ? int_of(r, "seq") : -1;
    cJSON_Delete(r);
    return seq;
}

static void
signal_wait(int c, const char *state, int target)
{
    sendf(c,
          "{\"id\":6,\"op\":\"signal_and_wait\",\"state\":\"%s\","
          "\"target\":%d,\"timeout_ms\":60000}",
          state, target);
}

/* Client c signals state and waits for target; the service has parked
 * it. */
static void
park(int c, const char *state, int target)
{
    signal_wait(c, state, target);
    for (int i = 0; i < 20; i++)
        pump(1);
    CHECK_EQ_INT(F.waiting, 1);
}

/* Nothing comes for client c within ms. */
static void
expect_nothing(int c, int ms)
{
    cJSON *r = recv_resp(c, ms);

    CHECK_MSG(r == NULL, "client %d: unexpected %s", c, r ? status_of(r) : "");
    cJSON_Delete(r);
}

/* Instance c restarts: the service is told, and its next process
 * connects (routing id rid) and says hello. The old connection is
 * closed. */
static void
restart(int c, const char *rid)
{
    syncsvc_instance_restarting(F.svc, c);
    zmq_close(fix_replace(c, rid));
    hello(c);
    expect_free(c, "ok");
}

static int64_t
expect_seq(int c, const char *st)
{
    cJSON *r = expect(c, st);
    int64_t seq = r != NULL ? int_of(r, "seq") : -1;

    cJSON_Delete(r);
    return seq;
}

static char *
barrier_log(void)
{
    cleanup_free char *path = path_join(F.dir, "barriers.jsonl");
    size_t len;

    return read_file_str(path, &len);
}

/* A barrier of 2: g/1 waits, g/0 restarts before it signalled. Nothing
 * fails; the new g/0's signal releases both. */
static void
t_barrier_holds(void)
{
    cleanup_free char *log = NULL;

    fix_start(2);
    hello_all();
    park(1, "s", 2);
    syncsvc_instance_restarting(F.svc, 0);
    CHECK_EQ_INT(F.failed, 0);
    expect_nothing(1, 200);
    zmq_close(fix_replace(0, "c0-second"));
    hello(0);
    expect_free(0, "ok");
    CHECK_EQ_INT(F.hellos, 3);
    signal_wait(0, "s", 2);
    CHECK_EQ_INT(expect_seq(0, "ok"), 2);
    CHECK_EQ_INT(expect_seq(1, "ok"), 1);
    CHECK_EQ_INT(F.released, 1);
    CHECK_EQ_INT(F.failed, 0);
    CHECK_EQ_INT(F.waiting, 0);
    log = barrier_log();
    CHECK_CONTAINS(log, "\"state\":\"s\",\"target\":2,\"count\":2,"
                        "\"result\":\"released\"");
    CHECK_MSG(log && strstr(log, "failed") == NULL, "%s", log);
    fix_stop();
}

/* g/0 signalled and waits when it restarts: the wait is dropped with no
 * answer; the new process's signal_and_wait is answered with the same seq
 * and counts nothing, so the barrier still needs the two others. */
static void
t_replay_same_seq(void)
{
    cleanup_free char *log = NULL;
    void *old;

    fix_start(3);
    hello_all();
    CHECK_EQ_INT(signal_seq(0, "lead"), 1);
    CHECK_EQ_INT(signal_seq(1, "lead"), 2);
    park(0, "b", 3);
    syncsvc_instance_restarting(F.svc, 0);
    CHECK_EQ_INT(F.waiting, 0);
    old = fix_replace(0, "c0-second");
    hello(0);
    expect_free(0, "ok");
    /* the dropped wait was never answered */
    {
        char buf[256];

        for (int i = 0; i < 50; i++)
            pump(2);
        CHECK(zmq_recv(old, buf, sizeof(buf), ZMQ_DONTWAIT) < 0);
    }
    zmq_close(old);
    CHECK_EQ_INT(signal_seq(0, "lead"), 1); /* replayed: the same number */
    CHECK_EQ_INT(signal_seq(0, "lead"), 3); /* past it: counted */
    CHECK_EQ_INT(signal_seq(1, "lead"), 4); /* the replay did not count */
    signal_wait(0, "b", 3);
    expect_nothing(0, 200); /* still 1 of 3 */
    signal_wait(1, "b", 3);
    expect_nothing(0, 100);
    signal_wait(2, "b", 3);
    CHECK_EQ_INT(expect_seq(2, "ok"), 3);
    CHECK_EQ_INT(expect_seq(0, "ok"), 1);
    CHECK_EQ_INT(expect_seq(1, "ok"), 2);
    /* a barrier whose target the replay already had is met at once */
    sendf(0, "{\"id\":7,\"op\":\"barrier\",\"state\":\"lead\",\"target\":4,"
             "\"timeout_ms\":60000}");
    expect_free(0, "ok");
    CHECK_EQ_INT(F.failed, 0);
    log = barrier_log();
    CHECK_CONTAINS(log, "\"state\":\"b\",\"target\":3,\"count\":3,"
                        "\"result\":\"released\",\"waiters\":2");
    CHECK_MSG(log && strstr(log, "\"state\":\"b\",\"target\":3,\"count\":1") ==
                         NULL,
              "%s", log);
    fix_stop();
}

/* Each incarnation replays every earlier signal of the instance, in
 * order, then counts. */
static void
t_second_restart(void)
{
    fix_start(2);
    hello_all();
    CHECK_EQ_INT(signal_seq(0, "s"), 1);
    CHECK_EQ_INT(signal_seq(0, "s"), 2); /* within one process: counted */
    CHECK_EQ_INT(signal_seq(1, "s"), 3);
    restart(0, "c0-second");
    CHECK_EQ_INT(signal_seq(0, "s"), 1);
    restart(0, "c0-third");
    CHECK_EQ_INT(signal_seq(0, "s"), 1);
    CHECK_EQ_INT(signal_seq(0, "s"), 2);
    signal_wait(0, "s", 3); /* the count is still 3: met at once */
    CHECK_EQ_INT(expect_seq(0, "ok"), 4);
    CHECK_EQ_INT(signal_seq(1, "s"), 5);
    restart(0, "c0-fourth");
    CHECK_EQ_INT(signal_seq(0, "s"), 1);
    CHECK_EQ_INT(signal_seq(0, "s"), 2);
    CHECK_EQ_INT(signal_seq(0, "s"), 4);
    CHECK_EQ_INT(signal_seq(0, "s"), 6);
    CHECK_EQ_INT(signal_seq(0, "other"), 1); /* a state it never signalled */
    fix_stop();
}

/* Restarted, then ended for good: its barriers fail as they always did. */
static void
t_restart_then_exit(void)
{
    cJSON *r;

    fix_start(2);
    hello_all();
    CHECK_EQ_INT(signal_seq(0, "before"), 1);
    park(1, "s", 2);
    restart(0, "c0-second");
    expect_nothing(1, 100);
    syncsvc_instance_exited(F.svc, 0, "exited with status 3");
    r = expect(1, "failed");
    CHECK_CONTAINS(error_of(r), "g/0 exited with status 3: barrier \"s\" can "
                                "no longer reach 2");
    cJSON_Delete(r);
    CHECK_EQ_INT(F.failed, 1);
    /* what it signalled before the restart still counts */
    signal_wait(1, "before", 2);
    CHECK_EQ_INT(expect_seq(1, "ok"), 2);
    /* and no new process of it is let in */
    zmq_close(fix_replace(0, "c0-third"));
    hello(0);
    r = expect(0, "denied");
    CHECK_CONTAINS(error_of(r), "g/0 already ended");
    cJSON_Delete(r);
    fix_stop();
}

/* The new process's hello is taken; the old connection, still open, is
 * refused whatever it sends — a hello too — and changes nothing. */
static void
t_hello_after_restart(void)
{
    cJSON *r;
    void *cur, *old, *open_[8];

    fix_start(1);
    hello_all();
    syncsvc_instance_restarting(F.svc, 0);
    old = fix_replace(0, "c0-second");
    hello(0);
    expect_free(0, "ok");
    CHECK_EQ_INT(F.hellos, 2);
    cur = F.cli[0];
    F.cli[0] = old;
    hello(0);
    r = expect(0, "denied");
    CHECK_CONTAINS(error_of(r), "g/0 was restarted: this connection was its "
                                "earlier process's");
    cJSON_Delete(r);
    sendf(0, "{\"id\":3,\"op\":\"signal\",\"state\":\"s\"}");
    expect_free(0, "denied");
    F.cli[0] = cur;
    CHECK_EQ_INT(F.hellos, 2);
    CHECK_EQ_INT(signal_seq(0, "s"), 1);
    /* Its slot was given back at the restart, while it is still open: the
     * new process and 7 more connections fit, a ninth does not. */
    for (int i = 0; i < 8; i++) {
        char rid[32];

        snprintf(rid, sizeof(rid), "more-%d", i);
        open_[i] = fix_replace(0, rid);
        hello(0);
        if (i < 7) {
            expect_free(0, "ok");
            continue;
        }
        r = expect(0, "busy");
        CHECK_CONTAINS(error_of(r), "too many connections for g/0");
        cJSON_Delete(r);
    }
    for (int i = 0; i < 8; i++)
        zmq_close(open_[i]);
    zmq_close(old);
    fix_stop();
}

/* The order of signals counts against the run's state bytes. */
static void
t_order_bounded(void)
{
    int ok = 0;
    cJSON *r;

    fix_bounds = (struct syncsvc_bounds){.state_bytes = 4096};
    fix_start(1);
    hello_all();
    for (int i = 0; i < 2000; i++) {
        sendf(0, "{\"id\":%d,\"op\":\"signal\",\"state\":\"s\"}", i + 1);
        r = recv_resp(0, 5000);
        if (r != NULL && strcmp(status_of(r), "ok") == 0)
            ok++;
        else if (r != NULL) {
            CHECK_EQ_STR(status_of(r), "full");
            CHECK_CONTAINS(error_of(r), "state \"s\" cannot remember another "
                                        "signal");
            cJSON_Delete(r);
            break;
        }
        cJSON_Delete(r);
    }
    CHECK_MSG(ok > 100 && ok < 1024, "%d signals fit in 4096 bytes", ok);
    fix_stop();
}

static const struct th_case cases[] = {
    {"barrier_holds", t_barrier_holds},
    {"replay_same_seq", t_replay_same_seq},
    {"second_restart", t_second_restart},
    {"restart_then_exit", t_restart_then_exit},
    {"hello_after_restart", t_hello_after_restart},
    {"order_bounded", t_order_bounded},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

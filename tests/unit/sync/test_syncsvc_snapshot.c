/*
 * test_syncsvc_snapshot.c — snapshot waits with raw DEALER clients: a wait
 * is held until the coordinator asks (syncsvc_snapshot_request) and then
 * answered ok; one per instance (busy); timeout at its timeout_ms;
 * canceled when its instance ends or the run does, and at once after
 * that; denied before hello; forgotten when its connection closes; and
 * answered by the memory monitor when usage crosses the threshold.
 *
 * The fixture (service, clients, pump) is tests/unit/sync/svc_fixture.c.
 */
#include "base/fsat.h"
#include "run/monitor_int.h"
#include "svc_fixture.h"
#include "th.h"
#include "th_files.h"
#include "base/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

static int64_t
now_ms(void)
{
    return now_mono_ns() / 1000000;
}

static void
snapshot_wait(int c, int id, int timeout_ms)
{
    sendf(c, "{\"id\":%d,\"op\":\"snapshot_wait\",\"timeout_ms\":%d}", id,
          timeout_ms);
}

/* Nothing arrives for client c within ms (the service pumped). */
static bool
quiet(int c, int ms)
{
    cJSON *r = recv_resp(c, ms);

    if (r == NULL)
        return true;
    th_fail(__FILE__, __LINE__, "client %d: unexpected %s (%s)", c,
            status_of(r), error_of(r));
    cJSON_Delete(r);
    return false;
}

static void
t_held_until_asked(void)
{
    cJSON *r;

    fix_start(2);
    hello_all();
    CHECK(!syncsvc_snapshot_request(F.svc, 0)); /* nothing pending yet */
    snapshot_wait(0, 7, 60000);
    snapshot_wait(1, 8, 60000);
    CHECK(quiet(0, 200));
    CHECK(syncsvc_snapshot_request(F.svc, 0));
    r = expect(0, "ok");
    CHECK_EQ_INT(int_of(r, "id"), 7);
    cJSON_Delete(r);
    /* Answered once: the next request finds nothing until a new wait. */
    CHECK(!syncsvc_snapshot_request(F.svc, 0));
    CHECK(quiet(1, 50)); /* the other instance is still held */
    snapshot_wait(0, 9, 60000);
    CHECK(quiet(0, 50));
    CHECK(syncsvc_snapshot_request(F.svc, 0));
    r = expect(0, "ok");
    CHECK_EQ_INT(int_of(r, "id"), 9);
    cJSON_Delete(r);
    CHECK(syncsvc_snapshot_request(F.svc, 1));
    expect_free(1, "ok");
    CHECK(!syncsvc_snapshot_request(F.svc, 2)); /* not an instance */
    CHECK(!syncsvc_snapshot_request(F.svc, -1));
    fix_stop();
}

static void
t_one_per_instance(void)
{
    cJSON *r;

    fix_start(1);
    hello_all();
    snapshot_wait(0, 2, 60000);
    snapshot_wait(0, 3, 60000);
    r = expect(0, "busy");
    CHECK_EQ_INT(int_of(r, "id"), 3);
    CHECK_CONTAINS(error_of(r), "g/0 already has a snapshot_wait pending");
    cJSON_Delete(r);
    /* The first one is still held, and answered. */
    CHECK(syncsvc_snapshot_request(F.svc, 0));
    r = expect(0, "ok");
    CHECK_EQ_INT(int_of(r, "id"), 2);
    cJSON_Delete(r);
    fix_stop();
}

static void
t_timeout(void)
{
    int64_t t0;
    cJSON *r;

    fix_start(1);
    hello_all();
    t0 = now_ms();
    snapshot_wait(0, 4, 150);
    CHECK(quiet(0, 20));
    CHECK(syncsvc_next_deadline_ms(F.svc) >= t0 + 150);
    r = expect(0, "timeout");
    CHECK_EQ_INT(int_of(r, "id"), 4);
    CHECK_CONTAINS(error_of(r), "no snapshot asked of g/0 before the deadline");
    CHECK_MSG(now_ms() - t0 >= 150, "timed out after %lld ms",
              (long long)(now_ms() - t0));
    cJSON_Delete(r);
    CHECK(!syncsvc_snapshot_request(F.svc, 0));
    CHECK_EQ_INT(syncsvc_next_deadline_ms(F.svc), -1);
    /* timeout_ms 0: answered at once, nothing held. */
    snapshot_wait(0, 5, 0);
    expect_free(0, "timeout");
    CHECK(!syncsvc_snapshot_request(F.svc, 0));
    fix_stop();
}

static void
t_canceled_when_instance_ends(void)
{
    cJSON *r;

    fix_start(2);
    hello_all();
    snapshot_wait(0, 6, 60000);
    snapshot_wait(1, 6, 60000);
    CHECK(quiet(0, 50));
    syncsvc_instance_exited(F.svc, 0, "exited with status 137 (oom)");
    r = expect(0, "canceled");
    CHECK_CONTAINS(error_of(r), "exited with status 137 (oom)");
    cJSON_Delete(r);
    CHECK(!syncsvc_snapshot_request(F.svc, 0));
    /* An ended instance's new wait is canceled at once. */
    snapshot_wait(0, 7, 60000);
    expect_free(0, "canceled");
    /* The other instance's wait is untouched. */
    CHECK(syncsvc_snapshot_request(F.svc, 1));
    expect_free(1, "ok");
    fix_stop();
}

static void
t_canceled_when_run_ends(void)
{
    cJSON *r;

    fix_start(2);
    hello_all();
    snapshot_wait(0, 3, 60000);
    snapshot_wait(1, 3, 60000);
    CHECK(quiet(0, 50));
    syncsvc_cancel_all(F.svc, "the run's deadline passed");
    for (int c = 0; c < 2; c++) {
        r = expect(c, "canceled");
        CHECK_CONTAINS(error_of(r), "the run's deadline passed");
        cJSON_Delete(r);
    }
    CHECK(!syncsvc_snapshot_request(F.svc, 0));
    snapshot_wait(1, 4, 60000);
    r = expect(1, "canceled");
    CHECK_CONTAINS(error_of(r), "the run is ending");
    cJSON_Delete(r);
    CHECK(!syncsvc_snapshot_request(F.svc, 1));
    CHECK_EQ_INT(syncsvc_next_deadline_ms(F.svc), -1);
    fix_stop();
}

static void
t_denied_before_hello(void)
{
    cJSON *r;

    fix_start(1);
    snapshot_wait(0, 1, 60000);
    r = expect(0, "denied");
    CHECK_EQ_STR(error_of(r), "denied: say hello with the run's secret first");
    cJSON_Delete(r);
    CHECK(!syncsvc_snapshot_request(F.svc, 0));
    CHECK_EQ_INT(syncsvc_next_deadline_ms(F.svc), -1);
    /* A malformed one is invalid, as for every op. */
    hello_all();
    sendf(0, "{\"id\":2,\"op\":\"snapshot_wait\"}");
    r = expect(0, "invalid");
    CHECK_CONTAINS(error_of(r), "timeout_ms");
    cJSON_Delete(r);
    fix_stop();
}

/* A wait whose connection closed is dropped with it, so the instance's
 * next connection can hold one (not busy). */
static void
t_forgotten_when_connection_closes(void)
{
    int64_t end;
    int linger = 0;
    cJSON *r = NULL;

    fix_start(1);
    hello_all();
    snapshot_wait(0, 5, 60000);
    CHECK(quiet(0, 50));
    zmq_close(F.cli[0]);
    F.cli[0] = zmq_socket(F.ctx, ZMQ_DEALER);
    zmq_setsockopt(F.cli[0], ZMQ_ROUTING_ID, "c0-again", 8);
    zmq_setsockopt(F.cli[0], ZMQ_LINGER, &linger, sizeof(linger));
    CHECK(zmq_connect(F.cli[0], syncsvc_endpoint(F.svc)) == 0);
    hello(0);
    expect_free(0, "ok");
    /* The service learns of the close from its socket monitor, maybe
     * after the new connection's first requests: ask until it has. */
    end = now_ms() + 5000;
    do {
        cJSON_Delete(r);
        snapshot_wait(0, 6, 60000);
        r = recv_resp(0, 100);
    } while (r != NULL && strcmp(status_of(r), "busy") == 0 && now_ms() < end);
    CHECK_MSG(r == NULL, "the new connection's wait: %s (%s)",
              r ? status_of(r) : "", r ? error_of(r) : "");
    cJSON_Delete(r);
    CHECK(syncsvc_snapshot_request(F.svc, 0));
    r = expect(0, "ok");
    CHECK_EQ_INT(int_of(r, "id"), 6);
    cJSON_Delete(r);
    fix_stop();
}

/* The memory monitor's ask() as the run has it, the sync way only. */
static enum monitor_via
ask_sync(void *arg, int id)
{
    return syncsvc_snapshot_request(arg, id) ? MONITOR_VIA_SYNC
                                             : MONITOR_VIA_NONE;
}

/* The monitor sees instance 0's cgroup cross 90 % of its limit and the
 * client holding a snapshot_wait is answered ok at that sample. */
static void
t_monitor_asks_over_sync(void)
{
    char *dir = path_join(th_tmpdir(), "cg");
    struct monitor_file f = {.partial = "memory.csv.partial",
                             .final = "memory.csv"};
    struct monitor *mon;
    struct monitor_inst *in;
    struct monitor_stats st;
    struct err err = {0};
    cJSON *r;

    fix_start(1);
    hello_all();
    f.dirfd = fsat_root(th_tmpdir(), NULL);
    mkdir_p(dir, NULL);
    th_write(dir, "memory.current", "1000\n");
    th_write(dir, "memory.max", "1000000\n");
    mon = monitor__new(250, 0);
    monitor__set_pre_oom(mon,
                         &(struct monitor_pre_oom_cfg){0.9, ask_sync, F.svc});
    in = monitor__add(mon, "g/0", dir, TY_CG_V2, &f, 0, &err);
    CHECK_MSG(in != NULL, "%s", err.msg);
    if (in == NULL)
        return;
    monitor__set_id(in, 0);
    /* Crossing with nothing pending asks no one. */
    th_write(dir, "memory.current", "950000\n");
    monitor__sample(mon, 250);
    snapshot_wait(0, 11, 60000);
    CHECK(quiet(0, 50));
    monitor__sample(mon, 500); /* within a second of the last try */
    CHECK(quiet(0, 50));
    monitor__sample(mon, 1250);
    r = expect(0, "ok");
    CHECK_EQ_INT(int_of(r, "id"), 11);
    cJSON_Delete(r);
    monitor__stats(in, &st);
    CHECK_EQ_INT(st.pre_oom.requests, 1);
    CHECK_EQ_INT(st.pre_oom.first_ms, 1250);
    CHECK_EQ_INT(st.pre_oom.via, MONITOR_VIA_SYNC);
    CHECK_EQ_INT(st.pre_oom.usage, 950000);
    monitor__destroy(&mon);
    close(f.dirfd);
    free(dir);
    fix_stop();
}

static const struct th_case cases[] = {
    {"held_until_asked", t_held_until_asked},
    {"one_per_instance", t_one_per_instance},
    {"timeout", t_timeout},
    {"canceled_when_instance_ends", t_canceled_when_instance_ends},
    {"canceled_when_run_ends", t_canceled_when_run_ends},
    {"denied_before_hello", t_denied_before_hello},
    {"forgotten_when_connection_closes", t_forgotten_when_connection_closes},
    {"monitor_asks_over_sync", t_monitor_asks_over_sync},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

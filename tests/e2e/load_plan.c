/*
 * load_plan.c — the SDK's load driver in a real run, for the suites that
 * check work.csv on local:exec (tests/e2e/load.sh) and local:docker
 * (tests/docker/load.sh); its manifest is load_manifest.yaml and
 * tests/helpers/load.sh runs it.
 *
 * The case "steady" runs the load "load" at `rate` tasks a second for
 * `duration` (open loop), then "load,stage=closed" with `concurrency`
 * workers for `cycles` tasks (closed loop), and says what each did in a
 * message ("load: N cycles ..."). A task hashes a small buffer (and in
 * the closed loop sleeps `pause`, so that it lasts seconds). The case
 * "killed" runs "load" at `rate` until cycle `kill_at` sends the instance
 * SIGKILL: what work.csv had by then must stay.
 */
#include "testyard.h"

#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

struct params {
    double rate;
    int64_t duration_ns, concurrency, cycles, kill_at, pause_ns;
    bool closed; /* the closed loop's tasks pause */
};

static int
hash_task(struct ty *ty, void *arg, int64_t cycle)
{
    const struct params *p = arg;
    uint8_t buf[256], out[32];

    (void)ty;
    memset(buf, (int)(cycle & 0xff), sizeof(buf));
    ty_sha256(buf, sizeof(buf), out);
    if (p->kill_at > 0 && cycle == p->kill_at)
        raise(SIGKILL);
    if (p->closed) {
        struct timespec ts = {(time_t)(p->pause_ns / 1000000000),
                              (long)(p->pause_ns % 1000000000)};

        nanosleep(&ts, NULL);
    }
    return 0;
}

static int
get_params(struct ty *ty, struct params *p)
{
    memset(p, 0, sizeof(*p));
    if (ty_param_float(ty, "rate", &p->rate) < 0 ||
        ty_param_duration(ty, "duration", &p->duration_ns) < 0 ||
        ty_param_int(ty, "concurrency", &p->concurrency) < 0 ||
        ty_param_int(ty, "cycles", &p->cycles) < 0 ||
        ty_param_int(ty, "kill_at", &p->kill_at) < 0 ||
        ty_param_duration(ty, "pause", &p->pause_ns) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    return 0;
}

/* Run one load and report it; the case's status. */
static int
run_one(struct ty *ty, const struct ty_load *o, struct params *p)
{
    struct ty_load_result r;

    if (ty_load_run(ty, o, hash_task, p, &r) < 0)
        return ty_fail(ty, "%s", ty_errmsg(ty));
    ty_message(ty,
               "%s: %lld cycles, %lld errors, %lld missed in %.2f s "
               "(%.1f a second), late by %.3f s at most",
               o->name, (long long)r.cycles, (long long)r.errors,
               (long long)r.missed, r.elapsed_s, r.rate, r.max_late_s);
    if (r.cycles == 0 || r.errors != 0)
        return ty_fail(ty, "%s: %lld cycles, %lld errors", o->name,
                       (long long)r.cycles, (long long)r.errors);
    return 0;
}

static int
run_steady(struct ty *ty)
{
    struct params p;
    struct ty_load open = {.name = "load"},
                   closed = {.name = "load,stage=closed"};

    if (get_params(ty, &p) < 0)
        return -1;
    p.kill_at = 0;
    open.rate = p.rate;
    open.duration_ns = p.duration_ns;
    closed.concurrency = (int)p.concurrency;
    closed.cycles = p.cycles;
    if (run_one(ty, &open, &p) < 0)
        return -1;
    p.closed = true;
    return run_one(ty, &closed, &p);
}

static int
run_killed(struct ty *ty)
{
    struct params p;
    struct ty_load open = {.name = "load"};

    if (get_params(ty, &p) < 0)
        return -1;
    open.rate = p.rate;
    open.cycles = p.kill_at + 1;
    run_one(ty, &open, &p);
    return ty_fail(ty, "cycle %lld did not kill the instance",
                   (long long)p.kill_at);
}

static const struct ty_case cases[] = {
    {"steady", run_steady},
    {"killed", run_killed},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}

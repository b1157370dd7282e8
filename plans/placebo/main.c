/*
 * placebo — a plan that does nothing useful on purpose, one case per
 * outcome the runner has to tell apart. The test suite runs it to check
 * that success, failure, crash, timeout and OOM kills are reported as
 * such, and that barriers hold many instances in step.
 *
 *   ok       returns at once
 *   fail     fails with a message
 *   crash    dies of SIGSEGV
 *   stall    sleeps for stall_for (a run deadline ends it first)
 *   oom      allocates and touches alloc_step at a time until killed,
 *            taking a heap snapshot every snapshot_every bytes (at most
 *            max_snapshots of them) on the way
 *   barrier  rounds × signal-and-wait on "round-<n>" by every instance,
 *            each round after round_time of (sleeping) work; with
 *            crash_at_round > 0 the instance crash_instance dies at the
 *            start of that round instead of signalling
 */
#include <testyard.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int
run_ok(struct ty *ty)
{
    ty_message(ty, "placebo ok: instance %d of %d", ty_global_index(ty),
               ty_instance_count(ty));
    return 0;
}

static int
run_fail(struct ty *ty)
{
    return ty_fail(ty, "placebo failed on purpose");
}

static int
run_crash(struct ty *ty)
{
    ty_message(ty, "about to crash");
    fflush(stdout);
    raise(SIGSEGV);
    return 0;
}

static void
sleep_ns(int64_t ns)
{
    struct timespec ts = {ns / 1000000000, ns % 1000000000};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static int
run_stall(struct ty *ty)
{
    int64_t ns = 3600LL * 1000000000;

    if (ty_param_has(ty, "stall_for") &&
        ty_param_duration(ty, "stall_for", &ns) < 0)
        return ty_fail(ty, "stall_for: %s", ty_errmsg(ty));
    ty_message(ty, "stalling");
    sleep_ns(ns);
    return 0;
}

/* Keep every chunk reachable so the heap profile shows them live. */
struct chunk {
    struct chunk *next;
};

static struct chunk *
grab(uint64_t step)
{
    struct chunk *c = malloc(step);

    if (c == NULL)
        return NULL;
    /* Touch every page so the memory is really charged to the cgroup. */
    memset(c, 0xa5, step);
    return c;
}

static int
run_oom(struct ty *ty)
{
    uint64_t step = 1 << 20, every = 0, total = 0, next_snap;
    int64_t max_snaps = 3, snaps = 0;
    struct chunk *head = NULL;

    if (ty_param_size(ty, "alloc_step", &step) < 0 || step < 64)
        step = 1 << 20;
    if (ty_param_has(ty, "snapshot_every"))
        ty_param_size(ty, "snapshot_every", &every);
    if (ty_param_has(ty, "max_snapshots"))
        ty_param_int(ty, "max_snapshots", &max_snaps);
    next_snap = every;
    for (;;) {
        struct chunk *c = grab(step);

        if (c == NULL)
            return ty_fail(ty, "malloc failed after %llu bytes",
                           (unsigned long long)total);
        c->next = head;
        head = c;
        total += step;
        if (every > 0 && snaps < max_snaps && total >= next_snap) {
            char label[64];

            snprintf(label, sizeof(label), "oom-%lld", (long long)++snaps);
            if (ty_heap_snapshot(ty, label) < 0)
                return ty_fail(ty, "snapshot: %s", ty_errmsg(ty));
            next_snap += every;
        }
    }
}

static int
crash_here(struct ty *ty, int64_t round)
{
    int64_t at = 0, who = 0;

    if (ty_param_has(ty, "crash_at_round"))
        ty_param_int(ty, "crash_at_round", &at);
    if (ty_param_has(ty, "crash_instance"))
        ty_param_int(ty, "crash_instance", &who);
    return at > 0 && at == round && who == ty_global_index(ty);
}

/* Every plan instance signals each round (programs of groups that run
 * their own, beside the plan, do not). */
static int
run_barrier(struct ty *ty)
{
    int64_t rounds = 3, work_ns = 0;
    int n = ty_plan_instance_count(ty);

    if (ty_param_has(ty, "rounds") && ty_param_int(ty, "rounds", &rounds) < 0)
        return ty_fail(ty, "rounds: %s", ty_errmsg(ty));
    if (ty_param_has(ty, "round_time") &&
        ty_param_duration(ty, "round_time", &work_ns) < 0)
        return ty_fail(ty, "round_time: %s", ty_errmsg(ty));
    for (int64_t r = 1; r <= rounds; r++) {
        char state[32];
        int64_t seq;

        if (work_ns > 0)
            sleep_ns(work_ns);
        if (crash_here(ty, r))
            run_crash(ty);
        snprintf(state, sizeof(state), "round-%lld", (long long)r);
        seq = ty_signal_and_wait(ty, state, n, -1);
        if (seq < 0)
            return ty_fail(ty, "%s: %s", state, ty_errmsg(ty));
    }
    ty_message(ty, "passed %lld barriers", (long long)rounds);
    return 0;
}

static const struct ty_case cases[] = {
    {"ok", run_ok},       {"fail", run_fail}, {"crash", run_crash},
    {"stall", run_stall}, {"oom", run_oom},   {"barrier", run_barrier},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}

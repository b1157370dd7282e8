/*
 * test_load.c — the load driver (sdk/ty_load.c): a fixed rate gives the
 * schedule's count, a stall shows in the open loop's latencies (counted
 * from when each task was due) and in its lateness, concurrency is a cap,
 * the cycles limit is exact, failures are counted, the load ends on *stop,
 * on a task's word and before the run's deadline, tags stay on the
 * metrics' names, and bad options name their field. Metrics are captured
 * in memory (metrics_cap.h). Timing bounds are only what the driver must
 * guarantee: a task due during a stall cannot start before it ends.
 */
#include "metrics_cap.h"
#include "th.h"
#include "ty_int.h"
#include "ty_metrics.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the tasks below share. */
struct task {
    _Atomic int calls, in_flight, max_in_flight;
    int stop;           /* as a plan would: set with __atomic_store_n */
    int stall_cycle;    /* that cycle sleeps stall_us; -1 = none */
    int stall_us;       /* ... */
    int sleep_us;       /* every cycle sleeps that long */
    int fail_every;     /* cycle % fail_every == 0 fails; 0 = none */
    int end_at;         /* that cycle returns 1; -1 = none */
    int stop_at;        /* that cycle sets stop; -1 = none */
    _Atomic char *seen; /* cycle numbers seen, when not NULL */
    int nseen;
};

static int
task_run(struct ty *ty, void *arg, int64_t cycle)
{
    struct task *t = arg;
    int now = atomic_fetch_add(&t->in_flight, 1) + 1;
    int max = atomic_load(&t->max_in_flight);

    (void)ty;
    while (now > max &&
           !atomic_compare_exchange_weak(&t->max_in_flight, &max, now))
        ;
    atomic_fetch_add(&t->calls, 1);
    if (t->seen != NULL && cycle >= 0 && cycle < t->nseen)
        atomic_fetch_add(&t->seen[cycle], 1);
    if (cycle == t->stall_cycle)
        usleep((useconds_t)t->stall_us);
    else if (t->sleep_us > 0)
        usleep((useconds_t)t->sleep_us);
    if (cycle == t->stop_at)
        __atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
    atomic_fetch_sub(&t->in_flight, 1);
    if (cycle == t->end_at)
        return 1;
    return t->fail_every > 0 && cycle % t->fail_every == 0 ? -EIO : 0;
}

static void
task_init(struct task *t)
{
    memset(t, 0, sizeof(*t));
    t->stall_cycle = t->end_at = t->stop_at = -1;
}

static int
run_load(struct ty *ty, const struct ty_load *o, struct task *t,
         struct ty_load_result *r)
{
    int rc = ty_load_run(ty, o, task_run, t, r);

    CHECK_MSG(rc == 0, "ty_load_run: %d %s", rc, ty_errmsg(ty));
    return rc;
}

/* A metric's figure in what results.out has after a flush. */
static double
figure(struct ty *ty, const char *type, const char *name, const char *key)
{
    cJSON *rec;
    double v;

    CHECK_EQ_INT(ty_metrics_flush(ty), 0);
    pthread_mutex_lock(&cap_lock);
    rec = last_record(cap_results.buf, type, name);
    pthread_mutex_unlock(&cap_lock);
    CHECK_MSG(rec != NULL, "no %s %s in results.out", type, name);
    v = measure(rec, key);
    cJSON_Delete(rec);
    return v;
}

/* ---- the open loop ------------------------------------------------------ */

/* 200 a second for 1 s: the schedule has 200 tasks (0 .. 199, due before
 * the end); what a noisy machine could not start in time is missed, never
 * run after the end. */
static void
t_rate(void)
{
    struct ty *ty = cap_handle("0");
    struct ty_load o = {
        .name = "open", .rate = 200, .duration_ns = 1000000000LL};
    struct ty_load_result r;
    struct task t;

    task_init(&t);
    run_load(ty, &o, &t, &r);
    CHECK_MSG(r.cycles >= 140 && r.cycles <= 201, "%lld cycles",
              (long long)r.cycles);
    CHECK_EQ_INT(r.cycles + r.missed, 200);
    CHECK_EQ_INT(t.calls, r.cycles);
    CHECK_EQ_INT(r.errors, 0);
    CHECK_MSG(r.elapsed_s >= 1.0 && r.rate >= 140 && r.rate <= 201,
              "%.3f s, %.1f/s", r.elapsed_s, r.rate);
    CHECK_EQ_INT(figure(ty, "counter", "open.cycles", "count"), r.cycles);
    CHECK_EQ_INT(figure(ty, "counter", "open.errors", "count"), 0);
    CHECK_EQ_INT(figure(ty, "histogram", "open.latency", "count"), r.cycles);
    /* Latency counts from the due time, so it holds the lateness. */
    CHECK(figure(ty, "histogram", "open.latency", "max") >= r.max_late_s);
    cap_handle_free(ty);
    cap_reset();
}

/* Cycle 5 of 100 (due 25 ms in) sleeps 200 ms. Every task due within the
 * next 100 ms (cycles 6 .. 25, 20 of them) cannot start before the stall
 * ends, so its latency is at least 100 ms: with the stalled one, 21 of 100
 * — p95 falls among them. The closed loop shows the stall in the stalled
 * task only (its max), and has no lateness. */
static void
t_stall(void)
{
    struct ty *ty = cap_handle("0");
    struct ty_load open = {.name = "open", .rate = 200, .cycles = 100};
    struct ty_load closed = {.name = "closed", .cycles = 100};
    struct ty_load_result r;
    struct task t;

    task_init(&t);
    t.stall_cycle = 5;
    t.stall_us = 200000;
    run_load(ty, &open, &t, &r);
    CHECK_EQ_INT(r.cycles, 100);
    CHECK_EQ_INT(r.missed, 0);
    CHECK_MSG(r.max_late_s >= 0.15, "max late %.3f s", r.max_late_s);
    CHECK(figure(ty, "histogram", "open.latency", "max") >= 0.2);
    CHECK_MSG(figure(ty, "histogram", "open.latency", "p95") >= 0.1,
              "p95 %.3f s", figure(ty, "histogram", "open.latency", "p95"));
    CHECK(figure(ty, "histogram", "open.latency", "max") >= r.max_late_s);

    task_init(&t);
    t.stall_cycle = 5;
    t.stall_us = 200000;
    run_load(ty, &closed, &t, &r);
    CHECK_EQ_INT(r.cycles, 100);
    CHECK(r.max_late_s == 0);
    CHECK(figure(ty, "histogram", "closed.latency", "max") >= 0.2);
    cap_handle_free(ty);
    cap_reset();
}

/* ---- concurrency, limits, failures ------------------------------------- */

static void
t_concurrency(void)
{
    struct ty *ty = cap_handle("0");
    struct ty_load closed = {.name = "c", .concurrency = 4, .cycles = 400};
    /* 3 at once of 2 ms each cannot keep 2000 a second: they fall
     * behind by at least 300/1500 - 300/2000 = 50 ms. */
    struct ty_load open = {
        .name = "o", .rate = 2000, .concurrency = 3, .cycles = 300};
    struct ty_load_result r;
    struct task t;

    task_init(&t);
    t.sleep_us = 1000;
    run_load(ty, &closed, &t, &r);
    CHECK_EQ_INT(r.cycles, 400);
    CHECK_MSG(t.max_in_flight >= 1 && t.max_in_flight <= 4, "%d at once",
              t.max_in_flight);

    task_init(&t);
    t.sleep_us = 2000;
    run_load(ty, &open, &t, &r);
    CHECK_EQ_INT(r.cycles, 300);
    CHECK_MSG(t.max_in_flight >= 1 && t.max_in_flight <= 3, "%d at once",
              t.max_in_flight);
    CHECK_MSG(r.max_late_s >= 0.04, "max late %.3f s", r.max_late_s);
    CHECK(figure(ty, "histogram", "o.latency", "max") >= r.max_late_s);
    cap_handle_free(ty);
    cap_reset();
}

/* Exactly `cycles` tasks, each number once, closed and open. */
static void
t_cycles_exact(void)
{
    struct ty *ty = cap_handle("0");
    struct ty_load closed = {.name = "c", .concurrency = 3, .cycles = 1000};
    struct ty_load open = {
        .name = "o", .rate = 1e6, .concurrency = 2, .cycles = 500};
    _Atomic char seen[1000];
    struct ty_load_result r;
    struct task t;
    int once = 0;

    task_init(&t);
    memset(seen, 0, sizeof(seen));
    t.seen = seen;
    t.nseen = 1000;
    run_load(ty, &closed, &t, &r);
    CHECK_EQ_INT(r.cycles, 1000);
    CHECK_EQ_INT(t.calls, 1000);
    for (int i = 0; i < 1000; i++)
        once += seen[i] == 1;
    CHECK_EQ_INT(once, 1000);
    CHECK_EQ_INT(figure(ty, "counter", "c.cycles", "count"), 1000);

    task_init(&t);
    run_load(ty, &open, &t, &r);
    CHECK_EQ_INT(r.cycles, 500);
    CHECK_EQ_INT(t.calls, 500);
    CHECK_EQ_INT(r.missed, 0);
    CHECK_EQ_INT(figure(ty, "counter", "o.cycles", "count"), 500);
    cap_handle_free(ty);
    cap_reset();
}

static void
t_errors(void)
{
    struct ty *ty = cap_handle("0");
    struct ty_load o = {.name = "e", .concurrency = 2, .cycles = 300};
    struct ty_load_result r;
    struct task t;

    task_init(&t);
    t.fail_every = 3;
    run_load(ty, &o, &t, &r);
    CHECK_EQ_INT(r.cycles, 300);
    CHECK_EQ_INT(r.errors, 100);
    CHECK_EQ_INT(figure(ty, "counter", "e.cycles", "count"), 300);
    CHECK_EQ_INT(figure(ty, "counter", "e.errors", "count"), 100);
    cap_handle_free(ty);
    cap_reset();
}

/* ---- ending early ------------------------------------------------------- */

static void *
set_stop_later(void *arg)
{
    struct task *t = arg;

    usleep(200000);
    __atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void
t_stop(void)
{
    struct ty *ty = cap_handle("0");
    struct task t;
    struct ty_load by_task = {.name = "a", .cycles = 1000};
    struct ty_load by_flag = {
        .name = "b", .duration_ns = 60000000000LL, .stop = &t.stop};
    /* One task every 100 s: the wait for the second is cut short. */
    struct ty_load waiting = {.name = "w", .rate = 0.01, .stop = &t.stop};
    struct ty_load_result r;
    pthread_t th;

    task_init(&t);
    t.end_at = 20;
    run_load(ty, &by_task, &t, &r);
    CHECK_EQ_INT(r.cycles, 20); /* cycle 20 said stop: not counted */
    CHECK_EQ_INT(t.calls, 21);

    task_init(&t);
    t.stop_at = 50;
    run_load(ty, &by_flag, &t, &r);
    CHECK_EQ_INT(r.cycles, 51);
    CHECK_MSG(r.elapsed_s < 30, "%.1f s", r.elapsed_s);

    task_init(&t);
    pthread_create(&th, NULL, set_stop_later, &t);
    run_load(ty, &waiting, &t, &r);
    pthread_join(th, NULL);
    CHECK_EQ_INT(r.cycles, 1);
    CHECK_MSG(r.elapsed_s < 30, "%.1f s", r.elapsed_s);
    cap_handle_free(ty);
    cap_reset();
}

/* The run's deadline 2.3 s away: the load ends 2 s before it. */
static void
t_deadline(void)
{
    struct ty *ty = cap_handle("0");
    struct ty_load o = {.name = "d", .rate = 100, .duration_ns = 60000000000LL};
    struct ty_load_result r;
    struct task t;

    task_init(&t);
    ty->deadline_ms = ty__now_ms() + 2300;
    run_load(ty, &o, &t, &r);
    CHECK_MSG(r.cycles > 0 && r.cycles <= 31, "%lld cycles",
              (long long)r.cycles);
    CHECK_MSG(r.elapsed_s < 30, "%.1f s", r.elapsed_s);
    cap_handle_free(ty);
    cap_reset();
}

/* ---- names and options ------------------------------------------------- */

static void
t_tags(void)
{
    struct ty *ty = cap_handle("0");
    struct ty_load o = {.name = "put,stage=2", .cycles = 7};
    struct ty_load_result r;
    struct task t;

    task_init(&t);
    t.fail_every = 7;
    run_load(ty, &o, &t, &r);
    CHECK_EQ_INT(figure(ty, "counter", "put.cycles,stage=2", "count"), 7);
    CHECK_EQ_INT(figure(ty, "counter", "put.errors,stage=2", "count"), 1);
    CHECK_EQ_INT(figure(ty, "histogram", "put.latency,stage=2", "count"), 7);
    pthread_mutex_lock(&cap_lock);
    CHECK_CONTAINS(cap_work.buf, ",\"put.cycles,stage=2\",7\n");
    pthread_mutex_unlock(&cap_lock);
    cap_handle_free(ty);
    cap_reset();
}

static void
bad(struct ty *ty, const struct ty_load *o, bool fn, const char *field)
{
    struct task t;
    struct ty_load_result r = {.cycles = 99};

    task_init(&t);
    CHECK_EQ_INT(ty_load_run(ty, o, fn ? task_run : NULL, &t, &r), -EINVAL);
    CHECK_CONTAINS(ty_errmsg(ty), field);
    CHECK_EQ_INT(t.calls, 0);
    CHECK_EQ_INT(r.cycles, 0);
}

static void
t_bad_options(void)
{
    struct ty *ty = cap_handle("0");
    int stop = 0;

    bad(ty, NULL, true, "expected options");
    bad(ty, &(struct ty_load){.cycles = 1}, true, "name:");
    bad(ty, &(struct ty_load){.name = "", .cycles = 1}, true, "name:");
    bad(ty, &(struct ty_load){.name = ",a=b", .cycles = 1}, true, "name:");
    bad(ty, &(struct ty_load){.name = "x", .cycles = 1}, false, "fn:");
    bad(ty, &(struct ty_load){.name = "x", .rate = -1, .cycles = 1}, true,
        "rate:");
    bad(ty, &(struct ty_load){.name = "x", .rate = NAN, .cycles = 1}, true,
        "rate:");
    bad(ty, &(struct ty_load){.name = "x", .rate = 2e9, .cycles = 1}, true,
        "rate:");
    bad(ty, &(struct ty_load){.name = "x", .concurrency = -1, .cycles = 1},
        true, "concurrency:");
    bad(ty, &(struct ty_load){.name = "x", .concurrency = 1025, .cycles = 1},
        true, "concurrency:");
    bad(ty, &(struct ty_load){.name = "x", .duration_ns = -1, .cycles = 1},
        true, "duration_ns:");
    bad(ty, &(struct ty_load){.name = "x", .cycles = -1}, true, "cycles:");
    CHECK_EQ_INT(ty_load_run(NULL, NULL, NULL, NULL, NULL), -EINVAL);
    /* stop alone bounds it. */
    stop = 1;
    CHECK_EQ_INT(ty_load_run(ty, &(struct ty_load){.name = "x", .stop = &stop},
                             task_run, NULL, NULL),
                 0);
    cap_handle_free(ty);
    cap_reset();
}

static const struct th_case cases[] = {
    {"rate", t_rate},
    {"stall", t_stall},
    {"concurrency", t_concurrency},
    {"cycles_exact", t_cycles_exact},
    {"errors", t_errors},
    {"stop", t_stop},
    {"deadline", t_deadline},
    {"tags", t_tags},
    {"bad_options", t_bad_options},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

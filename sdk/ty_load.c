/*
 * ty_load.c — the load driver: a plan's task run at a fixed rate (open
 * loop) or by a fixed number of workers back to back (closed loop), for a
 * duration or a number of cycles, counted into "<name>.cycles" and
 * "<name>.errors" (so the report can fit growth against the work done)
 * with every task's latency in the histogram "<name>.latency".
 *
 * The open loop keeps a schedule, not a pace: task i is due at
 * start + i / rate. Workers (at most `concurrency` tasks in flight) take
 * the next number from one atomic counter, sleep until it is due and run
 * it; one that takes a number already due runs it at once, late. Latency
 * counts from the due time, so a stall shows in the latency of every task
 * it held up, as a user waiting on the system would see it, instead of in
 * one sample among many (coordinated omission). When the rate cannot be
 * kept the tasks fall behind the schedule and their lateness grows; at
 * the end, what was due but never started is reported as missed rather
 * than run after the end, so a load never outlasts its duration by more
 * than the tasks in flight.
 *
 * Workers are the calling thread and concurrency - 1 threads made here;
 * each keeps the caller's signal mask, as a thread of the plan would.
 * Every wait is a sleep of at most WAIT_SLICE_NS, so *stop, a SIGTERM
 * (ty_stop.c) and the end are seen within that. A load with no duration,
 * cycles or stop lasts until the coordinator stops the instance or 2 s
 * before the run's deadline.
 */
#include "ty_int.h"

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CONCURRENCY 1024
#define MAX_RATE 1e9
#define DEADLINE_MARGIN_NS 2000000000LL /* time left to flush and report */
#define WAIT_SLICE_NS 50000000LL

struct load {
    struct ty *ty;
    const struct ty_load *o;
    int (*fn)(struct ty *ty, void *arg, int64_t cycle);
    void *arg;
    char *cycles_name, *errors_name, *latency_name;
    int64_t start_ns;
    int64_t end_ns;     /* no task starts from then; INT64_MAX: none */
    double interval_ns; /* open loop; 0 in the closed loop */
    _Atomic int64_t next;
    _Atomic int64_t started, done, errors, max_late_ns;
    _Atomic int64_t ended_ns; /* when *stop or a task ended it; 0: not */
};

/* ---- options ----------------------------------------------------------- */

static int
check_limits(struct ty *ty, const struct ty_load *o)
{
    if (!isfinite(o->rate) || o->rate < 0 || o->rate > MAX_RATE)
        return ty__seterr(ty, -EINVAL,
                          "load %s: rate: expected tasks a second from 0 "
                          "(a closed loop) to 1e9, got %g",
                          o->name, o->rate);
    if (o->concurrency < 0 || o->concurrency > MAX_CONCURRENCY)
        return ty__seterr(ty, -EINVAL,
                          "load %s: concurrency: expected tasks at once from "
                          "1 to %d (0 = 1), got %d",
                          o->name, MAX_CONCURRENCY, o->concurrency);
    if (o->duration_ns < 0)
        return ty__seterr(ty, -EINVAL,
                          "load %s: duration_ns: expected 0 (no limit) or "
                          "more, got %lld",
                          o->name, (long long)o->duration_ns);
    if (o->cycles < 0)
        return ty__seterr(ty, -EINVAL,
                          "load %s: cycles: expected 0 (no limit) or more, "
                          "got %lld",
                          o->name, (long long)o->cycles);
    return 0;
}

static int
check_options(struct ty *ty, const struct ty_load *o, bool have_fn)
{
    if (o == NULL)
        return ty__seterr(ty, -EINVAL, "load: expected options, got NULL");
    if (o->name == NULL || o->name[0] == '\0' || o->name[0] == ',')
        return ty__seterr(ty, -EINVAL,
                          "load: name: expected a metric name such as "
                          "\"put\" or \"put,stage=2\", got \"%s\"",
                          o->name ? o->name : "(null)");
    if (!have_fn)
        return ty__seterr(ty, -EINVAL,
                          "load %s: fn: expected a task function, got NULL",
                          o->name);
    return check_limits(ty, o);
}

/* "put,stage=2" + ".cycles" = "put.cycles,stage=2" (caller frees). */
static char *
suffixed(const char *name, const char *suffix)
{
    const char *tags = strchr(name, ',');
    int base = (int)(tags ? (size_t)(tags - name) : strlen(name));
    char *s = NULL;

    if (asprintf(&s, "%.*s%s%s", base, name, suffix, tags ? tags : "") < 0)
        return NULL;
    return s;
}

/* ---- the schedule ------------------------------------------------------ */

static void
mark_ended(struct load *l, int64_t now)
{
    int64_t zero = 0;

    atomic_compare_exchange_strong(&l->ended_ns, &zero, now > 0 ? now : 1);
}

static bool
should_end(struct load *l, int64_t now)
{
    if (atomic_load(&l->ended_ns) != 0)
        return true;
    if ((l->o->stop != NULL && __atomic_load_n(l->o->stop, __ATOMIC_ACQUIRE)) ||
        ty__stop_asked()) {
        mark_ended(l, now);
        return true;
    }
    return now >= l->end_ns;
}

/* Sleep until due; false when the load ended first. */
static bool
wait_until(struct load *l, int64_t due)
{
    for (;;) {
        int64_t now = ty__now_ns(), t;
        struct timespec ts;

        if (should_end(l, now))
            return false;
        if (now >= due)
            return true;
        t = due - now < WAIT_SLICE_NS ? due : now + WAIT_SLICE_NS;
        ts.tv_sec = (time_t)(t / 1000000000);
        ts.tv_nsec = (long)(t % 1000000000);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
}

static void
store_max(_Atomic int64_t *max, int64_t v)
{
    int64_t cur = atomic_load(max);

    while (v > cur && !atomic_compare_exchange_weak(max, &cur, v))
        ;
}

static void
record(struct load *l, int rc, int64_t late_ns, int64_t latency_ns)
{
    atomic_fetch_add(&l->done, 1);
    ty_counter_add(l->ty, l->cycles_name, 1);
    if (rc < 0) {
        atomic_fetch_add(&l->errors, 1);
        ty_counter_add(l->ty, l->errors_name, 1);
    }
    store_max(&l->max_late_ns, late_ns);
    ty_histogram_observe(l->ty, l->latency_name, (double)latency_ns / 1e9);
}

/* One worker: take the next cycle, wait until it is due (open loop), run
 * it, until the load ends. */
static void
run_tasks(struct load *l)
{
    for (;;) {
        int64_t i = atomic_fetch_add(&l->next, 1), due = 0, t0, t1;
        int rc;

        if (l->o->cycles > 0 && i >= l->o->cycles)
            return;
        if (l->interval_ns > 0) {
            due = l->start_ns + (int64_t)((double)i * l->interval_ns);
            if (due >= l->end_ns) {
                /* The schedule is done: the load lasts its duration. */
                (void)wait_until(l, l->end_ns);
                return;
            }
            if (!wait_until(l, due))
                return;
        }
        t0 = ty__now_ns();
        if (should_end(l, t0))
            return;
        if (l->interval_ns == 0)
            due = t0;
        atomic_fetch_add(&l->started, 1);
        rc = l->fn(l->ty, l->arg, i);
        t1 = ty__now_ns();
        if (rc > 0) {
            mark_ended(l, t1);
            return;
        }
        record(l, rc, t0 - due, t1 - due);
    }
}

static void *
worker_main(void *arg)
{
    run_tasks(arg);
    return NULL;
}

/* ---- running ----------------------------------------------------------- */

static int64_t
end_of(const struct ty *ty, const struct ty_load *o, int64_t start)
{
    int64_t end = INT64_MAX;

    if (o->duration_ns > 0 && o->duration_ns < INT64_MAX - start)
        end = start + o->duration_ns;
    if (ty->deadline_ms > 0) {
        int64_t d = ty->deadline_ms * 1000000 - DEADLINE_MARGIN_NS;

        if (d < end)
            end = d;
    }
    return end;
}

/* The open loop's tasks due before it ended that never started. */
static int64_t
missed(struct load *l)
{
    int64_t t = atomic_load(&l->ended_ns), n;

    if (l->interval_ns == 0)
        return 0;
    if (t == 0 || t > l->end_ns)
        t = l->end_ns;
    if (t == INT64_MAX)
        n = l->o->cycles;
    else
        n = t <= l->start_ns
                ? 0
                : (int64_t)ceil((double)(t - l->start_ns) / l->interval_ns);
    if (l->o->cycles > 0 && n > l->o->cycles)
        n = l->o->cycles;
    n -= atomic_load(&l->started);
    return n > 0 ? n : 0;
}

static void
fill_result(struct load *l, struct ty_load_result *out)
{
    double secs = (double)(ty__now_ns() - l->start_ns) / 1e9;

    if (out == NULL)
        return;
    out->cycles = atomic_load(&l->done);
    out->errors = atomic_load(&l->errors);
    out->missed = missed(l);
    out->elapsed_s = secs;
    out->rate = secs > 0 ? (double)out->cycles / secs : 0;
    out->max_late_s = (double)atomic_load(&l->max_late_ns) / 1e9;
}

/* concurrency - 1 threads and the caller as workers; 0, or the error of
 * the thread that could not be made (the others stopped and joined). */
static int
run_workers(struct load *l, int n)
{
    pthread_t *th = n > 1 ? calloc((size_t)n - 1, sizeof(*th)) : NULL;
    int made = 0, rc = 0;

    if (n > 1 && th == NULL)
        return ty__seterr(l->ty, -ENOMEM, "load %s: out of memory", l->o->name);
    while (made < n - 1 && rc == 0) {
        rc = pthread_create(&th[made], NULL, worker_main, l);
        made += rc == 0;
    }
    if (rc != 0)
        mark_ended(l, ty__now_ns());
    else
        run_tasks(l);
    for (int k = 0; k < made; k++)
        pthread_join(th[k], NULL);
    free(th);
    if (rc != 0)
        return ty__seterr(l->ty, -rc,
                          "load %s: worker %d of %d could not start: %s",
                          l->o->name, made + 1, n, strerror(rc));
    return 0;
}

static void
load_release(struct load *l)
{
    free(l->cycles_name);
    free(l->errors_name);
    free(l->latency_name);
}

TY_EXPORT int
ty_load_run(struct ty *ty, const struct ty_load *o,
            int (*fn)(struct ty *ty, void *arg, int64_t cycle), void *arg,
            struct ty_load_result *out)
{
    struct load l = {.ty = ty, .o = o, .fn = fn, .arg = arg};
    int rc;

    if (ty == NULL)
        return -EINVAL;
    if (out != NULL)
        memset(out, 0, sizeof(*out));
    rc = check_options(ty, o, fn != NULL);
    if (rc < 0)
        return rc;
    l.cycles_name = suffixed(o->name, ".cycles");
    l.errors_name = suffixed(o->name, ".errors");
    l.latency_name = suffixed(o->name, ".latency");
    if (!l.cycles_name || !l.errors_name || !l.latency_name) {
        load_release(&l);
        return ty__seterr(ty, -ENOMEM, "load %s: out of memory", o->name);
    }
    /* Both counters from the start, so work.csv has a first row at 0. */
    ty_counter_add(ty, l.cycles_name, 0);
    ty_counter_add(ty, l.errors_name, 0);
    l.interval_ns = o->rate > 0 ? 1e9 / o->rate : 0;
    l.start_ns = ty__now_ns();
    l.end_ns = end_of(ty, o, l.start_ns);
    ty__stop_load(+1);
    rc = run_workers(&l, o->concurrency > 0 ? o->concurrency : 1);
    ty__stop_load(-1);
    fill_result(&l, out);
    load_release(&l);
    return rc;
}

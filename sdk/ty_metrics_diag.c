/*
 * ty_metrics_diag.c — diagnostics.out: what the process costs, sampled by a
 * background thread every TESTYARD_DIAGNOSTICS_INTERVAL (5 s by default,
 * "0" turns it off), with a first sample when the case starts and a last
 * one when it ends.
 *
 * Testground's Go SDK writes the runtime's memory statistics there as
 * gauges every 5 s; a C program has no runtime to ask, so a sample here is
 * what the kernel says about the process — RSS, its high-water mark,
 * anonymous RSS, CPU time, threads — what glibc's allocator holds in use,
 * and the figures of the process's memory cgroup (ty_cgroup.c), each as a
 * gauge record sharing one timestamp.
 *
 * The same thread sends the results that changed every second, as the Go
 * SDK does, so they reach the coordinator even if an OOM kill follows.
 */
#include "ty_cgroup.h"
#include "ty_int.h"
#include "ty_metrics.h"
#include "ty_units.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define DEFAULT_INTERVAL_NS 5000000000LL
#define RESULTS_EVERY_NS 1000000000LL

struct ty__diag {
    struct ty *ty;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
    int64_t interval_ns;
    char *cg_dir;
    enum ty__cgver cg_ver;
};

int64_t
ty__diag_interval(const char *env)
{
    char why[128] = "expected a duration that is not negative";
    int64_t ns = -1;

    if (env == NULL || *env == '\0')
        return DEFAULT_INTERVAL_NS;
    if (ty__parse_duration(env, &ns, why, sizeof(why)) < 0 || ns < 0) {
        fprintf(stderr,
                "testyard: TESTYARD_DIAGNOSTICS_INTERVAL=\"%s\": %s; "
                "using 5s\n",
                env, why);
        return DEFAULT_INTERVAL_NS;
    }
    return ns;
}

/* ---- one sample -------------------------------------------------------- */

/* "Key:   1234 kB" lines of /proc/self/status, in bytes (or a count). */
static int64_t
status_value(const char *status, const char *key)
{
    size_t kl = strlen(key);

    for (const char *p = status; p != NULL && *p != '\0';) {
        if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
            char *end;
            long long v = strtoll(p + kl + 1, &end, 10);

            while (*end == ' ' || *end == '\t')
                end++;
            return strncmp(end, "kB", 2) == 0 ? v * 1024 : v;
        }
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return -1;
}

static void
read_status(struct ty__procstat *ps)
{
    char buf[8192];
    FILE *f = fopen("/proc/self/status", "re");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

    if (f != NULL)
        fclose(f);
    buf[n] = '\0';
    ps->rss = status_value(buf, "VmRSS");
    ps->hwm = status_value(buf, "VmHWM");
    ps->rss_anon = status_value(buf, "RssAnon");
    ps->threads = status_value(buf, "Threads");
}

void
ty__procstat_read(struct ty__procstat *ps, const char *cgroup_dir,
                  int cgroup_ver)
{
    struct rusage ru;
    struct mallinfo2 mi = mallinfo2();
    struct ty__cgmem cg;

    read_status(ps);
    ps->heap_inuse = (int64_t)(mi.uordblks + mi.hblkhd);
    ps->cpu_user = ps->cpu_sys = -1;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        ps->cpu_user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
        ps->cpu_sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    }
    if (cgroup_dir == NULL ||
        ty__cgroup_read_memory(cgroup_dir, (enum ty__cgver)cgroup_ver, &cg) < 0)
        cg.usage = cg.peak = cg.anon = cg.file = cg.limit = cg.oom_kills = -1;
    ps->cg_usage = cg.usage;
    ps->cg_peak = cg.peak;
    ps->cg_anon = cg.anon;
    ps->cg_file = cg.file;
    ps->cg_limit = cg.limit;
    ps->cg_oom_kills = cg.oom_kills;
}

static void
gauge(struct ty__buf *b, int64_t ts, const char *name, double v)
{
    if (v >= 0)
        ty__record_value(b, ts, TY__M_GAUGE, name, v);
}

void
ty__procstat_render(struct ty__buf *b, int64_t ts,
                    const struct ty__procstat *ps)
{
    gauge(b, ts, "process.rss_bytes", (double)ps->rss);
    gauge(b, ts, "process.rss_hwm_bytes", (double)ps->hwm);
    gauge(b, ts, "process.rss_anon_bytes", (double)ps->rss_anon);
    gauge(b, ts, "process.heap_inuse_bytes", (double)ps->heap_inuse);
    gauge(b, ts, "process.cpu_user_seconds", ps->cpu_user);
    gauge(b, ts, "process.cpu_system_seconds", ps->cpu_sys);
    gauge(b, ts, "process.threads", (double)ps->threads);
    gauge(b, ts, "cgroup.memory.usage_bytes", (double)ps->cg_usage);
    gauge(b, ts, "cgroup.memory.peak_bytes", (double)ps->cg_peak);
    gauge(b, ts, "cgroup.memory.anon_bytes", (double)ps->cg_anon);
    gauge(b, ts, "cgroup.memory.file_bytes", (double)ps->cg_file);
    gauge(b, ts, "cgroup.memory.limit_bytes", (double)ps->cg_limit);
    gauge(b, ts, "cgroup.memory.oom_kills", (double)ps->cg_oom_kills);
}

static void
diag_sample(struct ty__diag *d)
{
    struct ty__procstat ps;
    struct ty__buf b = {0};

    ty__procstat_read(&ps, d->cg_dir, d->cg_ver);
    ty__procstat_render(&b, ty__wall_ns(), &ps);
    (void)ty__metrics_emit(d->ty, "diagnostics.out", &b);
    ty__buf_release(&b);
}

/* ---- the thread -------------------------------------------------------- */

/* Wait until deadline (CLOCK_MONOTONIC ns) or a stop; lock held. */
static void
wait_until(struct ty__diag *d, int64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / 1000000000),
                          (long)(deadline % 1000000000)};

    while (!d->stop && ty__now_ns() < deadline)
        if (pthread_cond_timedwait(&d->cond, &d->lock, &ts) == ETIMEDOUT)
            break;
}

static void *
diag_main(void *arg)
{
    struct ty__diag *d = arg;
    int64_t now = ty__now_ns();
    int64_t next_results = now + RESULTS_EVERY_NS;
    int64_t next_diag = d->interval_ns > 0 ? now + d->interval_ns : INT64_MAX;

    pthread_mutex_lock(&d->lock);
    while (!d->stop) {
        wait_until(d, next_results < next_diag ? next_results : next_diag);
        if (d->stop)
            break;
        pthread_mutex_unlock(&d->lock);
        now = ty__now_ns();
        if (now >= next_results) {
            (void)ty__metrics_tick(d->ty, now);
            next_results = now + RESULTS_EVERY_NS;
        }
        if (now >= next_diag) {
            diag_sample(d);
            next_diag += d->interval_ns;
            if (next_diag <= now)
                next_diag = now + d->interval_ns;
        }
        pthread_mutex_lock(&d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

static void
diag_free(struct ty__diag *d)
{
    pthread_cond_destroy(&d->cond);
    pthread_mutex_destroy(&d->lock);
    free(d->cg_dir);
    free(d);
}

/* The thread blocks every signal, so a plan's handlers run on its own
 * threads. */
static int
diag_spawn(struct ty__diag *d)
{
    sigset_t all, old;
    int rc;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&d->thread, NULL, diag_main, d);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

struct ty__diag *
ty__diag_start(struct ty *ty, int64_t interval_ns)
{
    struct ty__diag *d = calloc(1, sizeof(*d));
    pthread_condattr_t ca;

    if (d == NULL)
        return NULL;
    d->ty = ty;
    d->interval_ns = interval_ns;
    if (interval_ns > 0)
        d->cg_dir = ty__cgroup_memory_dir(0, &d->cg_ver);
    pthread_mutex_init(&d->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (interval_ns > 0)
        diag_sample(d);
    if (diag_spawn(d) != 0) {
        diag_free(d);
        return NULL;
    }
    return d;
}

void
ty__diag_stop(struct ty__diag **dp)
{
    struct ty__diag *d = dp ? *dp : NULL;

    if (d == NULL)
        return;
    pthread_mutex_lock(&d->lock);
    d->stop = true;
    pthread_cond_signal(&d->cond);
    pthread_mutex_unlock(&d->lock);
    pthread_join(d->thread, NULL);
    if (d->interval_ns > 0)
        diag_sample(d);
    diag_free(d);
    *dp = NULL;
}

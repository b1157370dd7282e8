/*
 * test_heap_peak.c — when the profiler asks for a peak snapshot
 * (sdk/heap/ty_heap_peak.c): the estimate of heap in use against the
 * profile's inuse_space, one wake-up per crossing of the step, the
 * interval between peak snapshots, a crossing freed again before it was
 * taken, peak snapshots off, and a forked child that does not wake its
 * parent's thread. Driven with made-up block addresses, as
 * test_heap_sampler.c, so it runs in the sanitizer build and under
 * valgrind too.
 */
#include "th.h"
#include "ty_heap.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAKE_BASE ((uintptr_t)0x180000000000ULL)
#define MiB (1024ULL * 1024ULL)
#define SEC 1000000000LL

#define RA __builtin_return_address(0)
#define FRAME (((void **)__builtin_frame_address(0))[0])

static int fds[2] = {-1, -1};
static uintptr_t next_addr;

__attribute__((noinline)) static void
fake_alloc(uintptr_t addr, size_t n)
{
    if (ty__heap_tick(n))
        ty__heap_sample((void *)addr, n, RA, FRAME);
}

__attribute__((noinline)) static void
peak_site(size_t count, size_t size)
{
    for (size_t i = 0; i < count; i++, next_addr += size)
        fake_alloc(next_addr, size);
}

/* Free the newest count blocks of size (as peak_site made them). */
static void
free_last(size_t count, size_t size)
{
    for (size_t i = 0; i < count; i++) {
        next_addr -= size;
        ty__heap_forget((void *)next_addr);
    }
}

/* Bytes waiting in the pipe (read, so the pipe is empty after). */
static int
wakeups(void)
{
    char buf[64];
    int n = 0;
    ssize_t r;

    while ((r = read(fds[0], buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < r; i++)
            n += buf[i] == 'p';
    return n;
}

/* A clean slate at rate 1 (every block sampled, the estimate exact),
 * armed with step and interval. */
static void
setup(uint64_t step, int64_t interval_ns)
{
    ty__heap_start();
    ty__heap_set_rate(1);
    ty__heap_peak_reset();
    if (fds[0] < 0)
        CHECK(pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0);
    wakeups();
    next_addr = FAKE_BASE;
    ty__heap_peak_arm(fds[1], step, interval_ns);
}

static void
teardown(void)
{
    free_last((size_t)((next_addr - FAKE_BASE) / MiB), MiB);
    ty__heap_peak_reset();
    ty__heap_set_rate(TY_HEAP_DEFAULT_RATE);
}

/* Crossing the step wakes the thread once, however far the heap goes on
 * growing before the snapshot; the next peak is a step above that one. */
static void
t_crosses_once(void)
{
    setup(32 * MiB, SEC);
    peak_site(31, MiB);
    CHECK_EQ_INT(wakeups(), 0);
    CHECK_EQ_INT(ty__heap_peak_wait(100 * SEC), -1);
    peak_site(1, MiB);
    CHECK_EQ_INT(wakeups(), 1);
    peak_site(8, MiB);
    CHECK_EQ_INT(wakeups(), 0);
    CHECK_EQ_INT(ty__heap_inuse_estimate(), 40 * MiB);
    CHECK_EQ_INT(ty__heap_peak_wait(100 * SEC), 0); /* never taken: now */
    ty__heap_peak_taken(100 * SEC);
    CHECK_EQ_INT(ty__heap_peak_wait(100 * SEC), -1);
    peak_site(31, MiB);
    CHECK_EQ_INT(wakeups(), 0);
    peak_site(1, MiB);
    CHECK_EQ_INT(wakeups(), 1);
    CHECK_EQ_INT(ty__heap_peak_wait(102 * SEC), 0);
    CHECK_EQ_INT(ty__heap_inuse_high(), 72 * MiB);
    teardown();
}

/* At most one peak snapshot per interval: a crossing soon after one
 * waits for the rest of the interval. */
static void
t_rate_limit(void)
{
    setup(4 * MiB, SEC);
    peak_site(4, MiB);
    CHECK_EQ_INT(wakeups(), 1);
    ty__heap_peak_taken(10 * SEC);
    peak_site(4, MiB);
    CHECK_EQ_INT(wakeups(), 1);
    CHECK_EQ_INT(ty__heap_peak_wait(10 * SEC + SEC / 4), 3 * SEC / 4);
    CHECK_EQ_INT(ty__heap_peak_wait(11 * SEC), 0);
    teardown();
}

/* Freed below the step again before the interval let it be taken: no
 * snapshot, and the next crossing wakes again. The high-water mark stays. */
static void
t_freed_before_taken(void)
{
    setup(4 * MiB, SEC);
    peak_site(4, MiB);
    CHECK_EQ_INT(wakeups(), 1);
    ty__heap_peak_taken(10 * SEC);
    peak_site(4, MiB);
    CHECK_EQ_INT(wakeups(), 1);
    free_last(2, MiB);
    CHECK_EQ_INT(ty__heap_peak_wait(10 * SEC + SEC / 2), -1);
    CHECK_EQ_INT(ty__heap_inuse_high(), 8 * MiB);
    peak_site(2, MiB);
    CHECK_EQ_INT(wakeups(), 1);
    CHECK_EQ_INT(ty__heap_peak_wait(12 * SEC), 0);
    teardown();
}

/* Step 0 (TESTYARD_HEAP_PEAK_STEP=off): never a wake-up, nothing due;
 * the estimate is still kept. */
static void
t_off(void)
{
    setup(0, SEC);
    peak_site(64, MiB);
    CHECK_EQ_INT(wakeups(), 0);
    CHECK_EQ_INT(ty__heap_peak_wait(100 * SEC), -1);
    CHECK_EQ_INT(ty__heap_inuse_estimate(), 64 * MiB);
    teardown();
    /* disarmed: the same */
    setup(4 * MiB, SEC);
    ty__heap_peak_disarm(fds[1]);
    peak_site(8, MiB);
    CHECK_EQ_INT(wakeups(), 0);
    teardown();
}

/* At the default rate the estimate is what the profile says is in use. */
static void
t_estimate_is_inuse(void)
{
    struct ty__heap_files f;
    cJSON *j;
    double inuse;

    setup(0, SEC);
    ty__heap_set_rate(TY_HEAP_DEFAULT_RATE);
    peak_site(400, 256 * 1024);
    CHECK_EQ_INT(ty__heap_files_build("peak", -1, TY_HEAP_TRIGGER_PEAK, &f), 0);
    j = cJSON_ParseWithLength(f.json, f.json_len);
    CHECK(j != NULL);
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "trigger")),
                 "peak");
    inuse = cJSON_GetNumberValue(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "profile"), "inuse_bytes"));
    CHECK(inuse > 0);
    /* the same samples, give or take what the profile's own building
     * allocated and freed around it: at most a sample or two, each
     * weighing about the rate (seen: 514 KiB apart on 102 MiB) */
    CHECK_MSG(fabs((double)ty__heap_inuse_estimate() - inuse) <
                  inuse * 0.001 + 2.0 * TY_HEAP_DEFAULT_RATE,
              "estimate %lld, profile %.0f",
              (long long)ty__heap_inuse_estimate(), inuse);
    cJSON_Delete(j);
    ty__heap_files_release(&f);
    free_last(400, 256 * 1024);
    CHECK_EQ_INT(ty__heap_inuse_estimate(), 0);
    next_addr = FAKE_BASE;
    teardown();
}

/* A forked child starts disarmed: its growth does not wake the parent's
 * thread through the inherited pipe. */
static void
t_fork_child_disarmed(void)
{
    int status;
    pid_t pid;

    setup(4 * MiB, SEC);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        peak_site(16, MiB);
        free_last(16, MiB);
        _exit(0);
    }
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
    CHECK_EQ_INT(wakeups(), 0);
    peak_site(4, MiB);
    CHECK_EQ_INT(wakeups(), 1);
    teardown();
}

static const struct th_case cases[] = {
    {"crosses_once", t_crosses_once},
    {"rate_limit", t_rate_limit},
    {"freed_before_taken", t_freed_before_taken},
    {"off", t_off},
    {"estimate_is_inuse", t_estimate_is_inuse},
    {"fork_child_disarmed", t_fork_child_disarmed},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

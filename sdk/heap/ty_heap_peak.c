/*
 * ty_heap_peak.c — the estimate of heap in use, its high-water mark, and
 * when a peak snapshot is due (see "Peak snapshots" in ty_heap.h).
 *
 * The sampler counts each sampled block in and out as the profile would
 * (ty__heap_scale, Go's estimator, at the block's own size and rate), so
 * the estimate here is the inuse_space a snapshot taken now would show.
 * Only the sampler's slow path touches it: a sampled allocation or the
 * free of a sampled block, about once per rate bytes. Crossing the step
 * costs one non-blocking write of a byte to the snapshot thread's pipe,
 * and only the first crossing since the last peak snapshot writes: the
 * pending flag stays set until that thread has taken it. Whether the
 * interval allows a snapshot yet is the thread's question, so the malloc
 * path never reads a clock.
 */
#include "ty_heap.h"
#include "ty_pprof.h"

#include <errno.h>
#include <unistd.h>

#define NEVER INT64_MIN

static struct {
    _Atomic int64_t inuse, high, mark;
    _Atomic uint64_t step;
    _Atomic int64_t interval_ns;
    _Atomic int64_t last_ns; /* the last peak snapshot; NEVER */
    _Atomic int fd;          /* -1: disarmed */
    _Atomic bool pending;
} PK = {.fd = -1, .last_ns = NEVER};

static int64_t
block_bytes(size_t size, uint64_t rate)
{
    int64_t count, bytes;

    ty__heap_scale(1, size, rate, &count, &bytes);
    return bytes;
}

static void
raise_high(int64_t est)
{
    int64_t hw = atomic_load_explicit(&PK.high, memory_order_relaxed);

    while (est > hw &&
           !atomic_compare_exchange_weak_explicit(
               &PK.high, &hw, est, memory_order_relaxed, memory_order_relaxed))
        ;
}

static bool
past_step(int64_t est)
{
    uint64_t step = atomic_load_explicit(&PK.step, memory_order_relaxed);

    return step != 0 &&
           est - atomic_load_explicit(&PK.mark, memory_order_relaxed) >=
               (int64_t)step;
}

/* errno is the program's: the write's EAGAIN (a full pipe: the thread
 * is behind, and one byte is all it needs) must not leak into it. */
static void
wake(void)
{
    int fd = atomic_load_explicit(&PK.fd, memory_order_acquire);
    int e = errno;

    if (fd >= 0 && write(fd, "p", 1) < 0) {
        /* full or gone: a wake-up is pending anyway */
    }
    errno = e;
}

void
ty__heap_peak_count(size_t size, uint64_t rate, bool allocated)
{
    int64_t b = block_bytes(size, rate), est;

    if (!allocated) {
        atomic_fetch_sub_explicit(&PK.inuse, b, memory_order_relaxed);
        return;
    }
    est = atomic_fetch_add_explicit(&PK.inuse, b, memory_order_relaxed) + b;
    raise_high(est);
    if (past_step(est) &&
        !atomic_load_explicit(&PK.pending, memory_order_relaxed) &&
        !atomic_exchange_explicit(&PK.pending, true, memory_order_acq_rel))
        wake();
}

void
ty__heap_peak_arm(int fd, uint64_t step, int64_t interval_ns)
{
    atomic_store(&PK.step, step);
    atomic_store(&PK.interval_ns, interval_ns > 0 ? interval_ns : 0);
    atomic_store(&PK.pending, false);
    atomic_store_explicit(&PK.fd, step != 0 ? fd : -1, memory_order_release);
}

void
ty__heap_peak_disarm(int fd)
{
    int cur = fd;

    atomic_compare_exchange_strong(&PK.fd, &cur, -1);
}

void
ty__heap_peak_forked(void)
{
    atomic_store(&PK.fd, -1);
    atomic_store(&PK.pending, false);
}

int64_t
ty__heap_peak_wait(int64_t now_ns)
{
    int64_t last, next;

    if (!atomic_load(&PK.pending))
        return -1;
    if (!past_step(atomic_load(&PK.inuse))) {
        /* freed again before the interval let a snapshot be taken */
        atomic_store(&PK.pending, false);
        return -1;
    }
    last = atomic_load(&PK.last_ns);
    if (last == NEVER)
        return 0;
    next = last + atomic_load(&PK.interval_ns);
    return now_ns >= next ? 0 : next - now_ns;
}

void
ty__heap_peak_taken(int64_t now_ns)
{
    atomic_store(&PK.mark, atomic_load(&PK.inuse));
    atomic_store(&PK.last_ns, now_ns);
    atomic_store(&PK.pending, false);
}

int64_t
ty__heap_inuse_estimate(void)
{
    return atomic_load_explicit(&PK.inuse, memory_order_relaxed);
}

int64_t
ty__heap_inuse_high(void)
{
    return atomic_load_explicit(&PK.high, memory_order_relaxed);
}

void
ty__heap_peak_reset(void)
{
    atomic_store(&PK.fd, -1);
    atomic_store(&PK.step, 0);
    atomic_store(&PK.interval_ns, 0);
    atomic_store(&PK.inuse, 0);
    atomic_store(&PK.high, 0);
    atomic_store(&PK.mark, 0);
    atomic_store(&PK.last_ns, NEVER);
    atomic_store(&PK.pending, false);
}

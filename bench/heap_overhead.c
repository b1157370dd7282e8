/*
 * heap_overhead.c — an allocation-heavy workload for measuring what heap
 * profilers cost (bench/heap-overhead.sh runs it under each).
 *
 *     heap_overhead [threads] [ops per thread] [live slots per thread]
 *                   [pre-OOM requests]
 *
 * Each thread keeps a ring of live blocks and replaces one per operation:
 * free and malloc (seven times in eight) or realloc (once in eight), with
 * sizes mixed like a network daemon's — 70% of 16..256 bytes, 25% of
 * 256 B..8 KiB, 5% of 8..256 KiB — and writes the first bytes of each
 * block. The sequence is the same on every run (fixed seeds), so every
 * allocator sees the same requests. Prints one line:
 *
 *     <wall seconds> <CPU seconds> <max RSS in KiB> <bytes allocated>
 *
 * CPU seconds (user + system, all threads) are what a profiler adds to a
 * machine; they are also less disturbed than wall time by other load.
 *
 * With a count of pre-OOM requests (bench/heap-snapshots.sh, under
 * LD_PRELOAD=libtestyard-heap.so only: unprofiled, SIGUSR2 would end the
 * process), the first thread queues SIGUSR2 to the process that many
 * times, evenly over its operations, with the value the coordinator sends
 * when an instance nears its memory limit: each is a pre-OOM snapshot.
 *
 * Built by the Makefile linked with libtestyard.a (the way a plan is, so
 * with the profiler in), and by bench/heap-overhead.sh without it, for the
 * unprofiled baseline and the LD_PRELOAD runs.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* TY_WIRE_PREOOM_SIGVAL (sdk/common/ty_wire.h), written out: the
 * unprofiled build of this file sees no testyard header. */
#define PREOOM_SIGVAL 0x54594f4d

struct worker {
    pthread_t thread;
    uint64_t seed;
    long ops;
    size_t slots;
    long requests; /* pre-OOM requests to queue over the ops */
    uint64_t bytes;
};

static uint64_t
next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static size_t
pick_size(uint64_t r)
{
    unsigned kind = (unsigned)(r % 100);

    r >>= 8;
    if (kind < 70)
        return 16 + r % 241;
    if (kind < 95)
        return 256 + r % (8192 - 256);
    return 8192 + r % (256 * 1024 - 8192);
}

static void *
work(void *arg)
{
    struct worker *w = arg;
    void **ring = calloc(w->slots, sizeof(*ring));
    uint64_t x = w->seed;

    if (ring == NULL)
        return NULL;
    for (long i = 0; i < w->ops; i++) {
        uint64_t r = next(&x);
        size_t k = (size_t)(r % w->slots), size = pick_size(next(&x));

        if ((r >> 40) % 8 == 0 && ring[k] != NULL) {
            ring[k] = realloc(ring[k], size);
        } else {
            free(ring[k]);
            ring[k] = malloc(size);
        }
        if (ring[k] != NULL)
            memset(ring[k], (int)i, size < 64 ? size : 64);
        w->bytes += size;
        if (w->requests > 0 && w->requests <= w->ops &&
            (i + 1) % (w->ops / w->requests) == 0)
            sigqueue(getpid(), SIGUSR2,
                     (union sigval){.sival_int = PREOOM_SIGVAL});
    }
    for (size_t k = 0; k < w->slots; k++)
        free(ring[k]);
    free(ring);
    return NULL;
}

static double
seconds(const struct timeval *tv)
{
    return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6;
}

static long
arg(int argc, char **argv, int i, long dflt)
{
    return argc > i ? strtol(argv[i], NULL, 10) : dflt;
}

int
main(int argc, char **argv)
{
    long nthreads = arg(argc, argv, 1, 4);
    long ops = arg(argc, argv, 2, 2000000);
    long slots = arg(argc, argv, 3, 4096);
    long requests = arg(argc, argv, 4, 0);
    struct worker *w;
    struct timespec t0, t1;
    struct rusage ru;
    uint64_t bytes = 0;

    if (nthreads < 1 || ops < 1 || slots < 1 || requests < 0) {
        fprintf(stderr, "usage: heap_overhead [threads] [ops] [slots] "
                        "[pre-OOM requests]\n");
        return 64;
    }
    w = calloc((size_t)nthreads, sizeof(*w));
    if (w == NULL)
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < nthreads; i++) {
        w[i] = (struct worker){.seed = 0x9e3779b97f4a7c15ULL * (i + 1),
                               .ops = ops,
                               .slots = (size_t)slots,
                               .requests = i == 0 ? requests : 0};
        pthread_create(&w[i].thread, NULL, work, &w[i]);
    }
    for (long i = 0; i < nthreads; i++) {
        pthread_join(w[i].thread, NULL);
        bytes += w[i].bytes;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    getrusage(RUSAGE_SELF, &ru);
    printf("%.4f %.4f %ld %llu\n",
           (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9,
           seconds(&ru.ru_utime) + seconds(&ru.ru_stime), ru.ru_maxrss,
           (unsigned long long)bytes);
    free(w);
    return 0;
}

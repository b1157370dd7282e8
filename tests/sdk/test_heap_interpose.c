/*
 * test_heap_interpose.c — the heap profiler with the real allocator: this
 * program's malloc & co. are the SDK's interposer (linked from
 * libtestyard.a). Known allocation patterns must show up exactly at rate 1
 * and within the estimator's error at the default rate, by function name;
 * every allocation entry point keeps the books; threads, fork and both
 * unwinders hold up. Skipped in the sanitizer build, where the sanitizer
 * owns malloc.
 *
 * Pointers go to a global array so the compiler cannot drop a malloc/free
 * pair it can see through.
 */
#include "heap_snap.h"
#include "th.h"
#include "ty_heap.h"

#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KiB 1024ULL
#define MiB (1024ULL * 1024ULL)
#define NSLOTS 20000

void *volatile heap_slots[NSLOTS];
static volatile int site_marker;
/* Sizes no allocation can satisfy, hidden from the compiler's checks. */
static volatile size_t huge = SIZE_MAX, half_huge = SIZE_MAX / 2;
/* A realloc that fails leaves its block alive; called through these the
 * compiler does not assume otherwise. */
static void *(*volatile failing_realloc)(void *, size_t) = realloc;
static void *(*volatile failing_reallocarray)(void *, size_t,
                                              size_t) = reallocarray;

/* Skip unless this program's malloc is the SDK's: not in the sanitizer
 * build, and not under valgrind, whose memcheck replaces malloc & co. in
 * the executable too. Probed: one allocation at rate 1 must be recorded. */
static void
need_interposer(void)
{
    uint64_t rate = ty__heap_get_rate();
    size_t live;
    void *volatile p;
    bool ours;

#ifdef TY_SANITIZE
    th_skip("the sanitizer build has no malloc interposer");
#endif
    ty__heap_start();
    ty__heap_set_rate(1);
    live = ty__heap_live_count();
    p = malloc(16);
    ours = ty__heap_live_count() > live;
    free(p);
    ty__heap_set_rate(rate);
    if (!ours)
        th_skip("malloc is not the SDK's here (valgrind replaces it)");
}

/* A site's value in this test only: with TH_NOFORK=1 (valgrind) all cases
 * share one process, and a site's counts are cumulative. */
#define site(p, fn, v) heap_pb_sum_path((p), (fn), __func__, (v))

__attribute__((noinline)) static void
heap_alloc_small(size_t from, size_t count, size_t size)
{
    site_marker = 1;
    for (size_t i = from; i < from + count; i++)
        heap_slots[i] = malloc(size);
}

__attribute__((noinline)) static void
heap_alloc_big(size_t from, size_t count, size_t size)
{
    site_marker = 2;
    for (size_t i = from; i < from + count; i++)
        heap_slots[i] = malloc(size);
}

static void
free_range(size_t from, size_t count, size_t step)
{
    for (size_t i = from; i < from + count; i += step) {
        free(heap_slots[i]);
        heap_slots[i] = NULL;
    }
}

static void
t_rate1_exact(void)
{
    struct heap_pb p;

    need_interposer();
    ty__heap_set_rate(1);
    heap_alloc_small(0, 1000, 64 * KiB);
    heap_alloc_big(1000, 200, MiB);
    free_range(0, 1000, 2);
    free_range(1000, 200, 2);
    CHECK_EQ_INT(heap_snap_now(&p), 0);
    CHECK_EQ_INT(site(&p, "heap_alloc_small", HEAP_ALLOC_OBJECTS), 1000);
    CHECK_EQ_INT(site(&p, "heap_alloc_small", HEAP_ALLOC_SPACE),
                 1000 * 64 * KiB);
    CHECK_EQ_INT(site(&p, "heap_alloc_small", HEAP_INUSE_OBJECTS), 500);
    CHECK_EQ_INT(site(&p, "heap_alloc_small", HEAP_INUSE_SPACE),
                 500 * 64 * KiB);
    CHECK_EQ_INT(site(&p, "heap_alloc_big", HEAP_INUSE_OBJECTS), 100);
    CHECK_EQ_INT(site(&p, "heap_alloc_big", HEAP_INUSE_SPACE), 100 * MiB);
    CHECK(heap_pb_has_func(&p, "t_rate1_exact"));
    heap_pb_free(&p);
    free_range(0, 1200, 1);
}

static void
check_near(const char *what, int64_t got, double want, double rel)
{
    double err = fabs((double)got - want) / want;

    CHECK_MSG(err <= rel, "%s: %lld, expected %.0f within %.1f%%", what,
              (long long)got, want, rel * 100);
    printf("#   %s: %.2f%% off (bound %.1f%%)\n", what, err * 100, rel * 100);
}

/* The estimator's relative standard deviation for n live blocks of size s
 * at rate r is sqrt((1 - q) / (q n)) with q = 1 - exp(-s/r): 3.1% for
 * 8000 blocks of 64 KiB and 1.8% for 500 of 1 MiB at 512 KiB, 1.8% for
 * their sum (500 MiB each). Each bound is five standard deviations: with
 * three checks, a false failure about once in 600 000 runs. Only one page
 * per block is touched: ~35 MiB resident. */
static void
t_default_rate(void)
{
    struct heap_pb p;
    double small = 8000.0 * 64 * KiB, big = 500.0 * MiB;

    need_interposer();
    ty__heap_set_rate(TY_HEAP_DEFAULT_RATE);
    heap_alloc_small(0, 16000, 64 * KiB);
    heap_alloc_big(16000, 1000, MiB);
    free_range(0, 16000, 2);
    free_range(16000, 1000, 2);
    CHECK_EQ_INT(heap_snap_now(&p), 0);
    check_near("heap_alloc_small inuse_space",
               site(&p, "heap_alloc_small", HEAP_INUSE_SPACE), small, 0.155);
    check_near("heap_alloc_big inuse_space",
               site(&p, "heap_alloc_big", HEAP_INUSE_SPACE), big, 0.09);
    check_near("both inuse_space",
               site(&p, "heap_alloc_small", HEAP_INUSE_SPACE) +
                   site(&p, "heap_alloc_big", HEAP_INUSE_SPACE),
               small + big, 0.09);
    /* frame pointers took these stacks: the caller is there too */
    CHECK(heap_pb_has_func(&p, "t_default_rate"));
    heap_pb_free(&p);
    free_range(0, 17000, 1);
}

/* Every entry point, at rate 1: each successful allocation counted once
 * with its size; everything freed leaves nothing in use. */
__attribute__((noinline)) static void
heap_churn(int64_t *objects, int64_t *bytes)
{
    void *p = malloc(100), *q, *r;
    size_t n = 0;

#define COUNT(sz) (*objects += 1, *bytes += (int64_t)(sz))
    COUNT(100);
    r = realloc(p, 200000); /* moves: a new block */
    COUNT(200000);
    CHECK(r != NULL);
    p = r;
    r = realloc(p, 50);
    COUNT(50);
    CHECK(r != NULL);
    p = r;
    r = reallocarray(p, 10, 10);
    COUNT(100);
    CHECK(r != NULL);
    p = r;
    CHECK(failing_realloc(p, half_huge) == NULL); /* fails: p stays */
    CHECK(failing_reallocarray(p, huge, 2) == NULL && errno == ENOMEM);
    q = calloc(10, 100);
    COUNT(1000);
    r = calloc(huge, 2);
    CHECK(r == NULL);
    free(r);
    r = malloc(huge);
    CHECK(r == NULL);
    free(r);
    CHECK_EQ_INT(posix_memalign(&r, 64, 300), 0);
    COUNT(300);
    CHECK(((uintptr_t)r & 63) == 0);
    CHECK_EQ_INT(posix_memalign(&r, 3, 300), EINVAL); /* r untouched */
    free(r);
    r = aligned_alloc(256, 512);
    COUNT(512);
    CHECK(((uintptr_t)r & 255) == 0);
    free(r);
    r = memalign(4096, 10);
    COUNT(10);
    CHECK(((uintptr_t)r & 4095) == 0);
    free(r);
    r = valloc(1000);
    COUNT(1000);
    free(r);
    r = pvalloc(1000);
    COUNT(1000);
    free(r);
    r = realloc(NULL, 77);
    COUNT(77);
    r = realloc(r, 0); /* glibc: frees, returns NULL */
    CHECK(r == NULL);
    free(NULL);
    errno = 1234;
    /* realloc(r, 0) freed r above, which cppcheck does not know. */
    /* cppcheck-suppress memleak */
    r = malloc(10);
    COUNT(10);
    CHECK_EQ_INT(errno, 1234);
    n = malloc_usable_size(r);
    CHECK(n >= 10);
    free(r);
    free(q);
    free(p);
#undef COUNT
}

static void
t_entry_points(void)
{
    struct heap_pb p;
    int64_t objects = 0, bytes = 0;

    need_interposer();
    ty__heap_set_rate(1);
    heap_churn(&objects, &bytes);
    CHECK_EQ_INT(heap_snap_now(&p), 0);
    CHECK_EQ_INT(site(&p, "heap_churn", HEAP_ALLOC_OBJECTS), objects);
    CHECK(objects >= 12);
    CHECK_EQ_INT(site(&p, "heap_churn", HEAP_ALLOC_SPACE), bytes);
    CHECK_EQ_INT(site(&p, "heap_churn", HEAP_INUSE_OBJECTS), 0);
    CHECK_EQ_INT(site(&p, "heap_churn", HEAP_INUSE_SPACE), 0);
    heap_pb_free(&p);
}

/* An allocation made inside libc (strdup): the frame pointer walk cannot
 * go through libc, so backtrace() must, and the caller must be found. The
 * store after the call keeps it from being a tail call, which would take
 * this function's frame off the stack. */
static const char *volatile some_text = "some text";

__attribute__((noinline)) static char *
heap_via_libc(void)
{
    char *s = strdup(some_text);

    site_marker = 3;
    return s;
}

static void
t_through_libc(void)
{
    struct heap_pb p;
    struct ty__unwind_stats s0, s1;

    need_interposer();
    ty__heap_set_rate(1);
    ty__unwind_stats(&s0);
    heap_slots[0] = heap_via_libc();
    heap_alloc_small(1, 1, 100);
    ty__unwind_stats(&s1);
    CHECK(s1.bt > s0.bt);
    CHECK_EQ_INT(s1.bt_failed, s0.bt_failed);
    if (ty__unwind_mode() == TY_UNWIND_AUTO)
        CHECK(s1.fp > s0.fp);
    CHECK_EQ_INT(heap_snap_now(&p), 0);
    CHECK_EQ_INT(site(&p, "heap_via_libc", HEAP_INUSE_SPACE), 10);
    CHECK_EQ_INT(site(&p, "t_through_libc", HEAP_INUSE_SPACE) >= 110, 1);
    heap_pb_free(&p);
    free_range(0, 2, 1);
}

/* backtrace() stand-ins, each unusable in its own way. */
static int
bt_none(void **buf, int size)
{
    (void)buf;
    (void)size;
    return 0; /* as glibc's without libgcc_s.so.1 */
}

static int
bt_lost(void **buf, int size)
{
    for (int i = 0; i < size && i < 3; i++)
        buf[i] = (void *)(uintptr_t)(0x1000 + i);
    return size < 3 ? size : 3; /* frames, but not the allocating one */
}

static int
bt_short(void **buf, int size)
{
    int n = backtrace(buf, size);

    return n > 8 ? n - 5 : n; /* right, but shorter than the stack */
}

static const struct {
    const char *name;
    int (*bt)(void **, int);
    bool usable, libc_failed;
} unusable[] = {
    {"none", bt_none, false, true},
    {"lost", bt_lost, true, true},
    {"short", bt_short, true, false}, /* shorter than one frame: no */
};

/* A frame-pointer walk that ends in libc's call of main needs backtrace()
 * to vouch for it (the learned bottoms are forgotten each time). When
 * backtrace() is unusable, the frame-pointer stack is kept whole — this
 * function and the harness's th_main are in it — and counted as such; an
 * allocation inside libc, where there is no frame-pointer walk to keep,
 * is counted as failed unless backtrace() found anything. */
static void
t_backtrace_unusable(void)
{
    need_interposer();
    ty__heap_set_rate(1);
    for (size_t k = 0; k < sizeof(unusable) / sizeof(unusable[0]); k++) {
        struct ty__unwind_stats s0, s1;
        struct heap_pb p;

        ty__unwind_set_backtrace(unusable[k].bt);
        CHECK_EQ_INT(ty__unwind_backtrace_usable(), unusable[k].usable);
        ty__unwind_stats(&s0);
        heap_alloc_small(0, 10, 1000);
        ty__unwind_stats(&s1);
        CHECK_EQ_INT(heap_snap_now(&p), 0);
        CHECK_MSG(site(&p, "heap_alloc_small", HEAP_INUSE_SPACE) == 10000,
                  "%s: heap_alloc_small under t_backtrace_unusable: %lld",
                  unusable[k].name,
                  (long long)site(&p, "heap_alloc_small", HEAP_INUSE_SPACE));
        CHECK_MSG(heap_pb_has_func(&p, "th_main"), "%s: no th_main",
                  unusable[k].name);
        CHECK_MSG(s1.bt_failed - s0.bt_failed >= 10 && s1.bt == s0.bt,
                  "%s: %llu failed, %llu by backtrace", unusable[k].name,
                  (unsigned long long)(s1.bt_failed - s0.bt_failed),
                  (unsigned long long)(s1.bt - s0.bt));
        heap_pb_free(&p);
        free_range(0, 10, 1);
        heap_slots[0] = heap_via_libc();
        ty__unwind_stats(&s0);
        CHECK_MSG((s0.bt_failed > s1.bt_failed) == unusable[k].libc_failed,
                  "%s: libc", unusable[k].name);
        free_range(0, 1, 1);
    }
    ty__unwind_set_backtrace(NULL);
    CHECK(ty__unwind_backtrace_usable());
    ty__heap_set_rate(TY_HEAP_DEFAULT_RATE);
}

/* Eight threads: malloc, free and realloc of mixed sizes, while the main
 * thread takes profiles. */
static void *
heap_storm(void *arg)
{
    void *slot[64] = {0};
    uint64_t x = (uintptr_t)arg * 0x9e3779b97f4a7c15ULL;

    for (int i = 0; i < 200000; i++) {
        size_t k, sz;

        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        k = (x >> 33) % 64;
        sz = (x >> 40) % 5 == 0 ? (x >> 20) % (256 * KiB) : (x >> 24) % 512;
        if ((x >> 30) % 3 == 0)
            slot[k] = realloc(slot[k], sz);
        else {
            free(slot[k]);
            slot[k] = malloc(sz);
        }
    }
    for (int k = 0; k < 64; k++)
        free(slot[k]);
    return NULL;
}

static void
storm(uint64_t rate)
{
    pthread_t th[8];
    struct heap_pb p;

    ty__heap_set_rate(rate);
    for (uintptr_t i = 0; i < 8; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, heap_storm, (void *)(i + 1)),
                     0);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(heap_snap_now(&p), 0);
        heap_pb_free(&p);
    }
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_INT(heap_snap_now(&p), 0);
    CHECK(heap_pb_sum_func(&p, "heap_storm", HEAP_ALLOC_OBJECTS) > 0);
    CHECK_EQ_INT(heap_pb_sum_func(&p, "heap_storm", HEAP_INUSE_OBJECTS), 0);
    CHECK_EQ_INT(heap_pb_sum_func(&p, "heap_storm", HEAP_INUSE_SPACE), 0);
    heap_pb_free(&p);
}

static void
t_threads(void)
{
    need_interposer();
    storm(TY_HEAP_DEFAULT_RATE);
    storm(4096);
}

/* Forks while other threads allocate and one takes snapshots (as the
 * profiler's own thread does at a new peak): children allocate, take a
 * snapshot and exit; none may hang on a lock the fork caught held (the
 * heap's, the symbol cache's). */
static volatile int forking;

static void *
heap_fork_churn(void *arg)
{
    (void)arg;
    while (forking) {
        void *p = malloc(1000);

        heap_slots[NSLOTS - 1] = p;
        free(realloc(p, 5000));
    }
    return NULL;
}

static void *
heap_fork_snapper(void *arg)
{
    (void)arg;
    while (forking) {
        struct ty__heap_files f;

        if (ty__heap_files_build("snapper", -1, TY_HEAP_TRIGGER_PEAK, &f) == 0)
            ty__heap_files_release(&f);
    }
    return NULL;
}

static int
child_work(void)
{
    struct ty__heap_files f;
    int r;

    heap_alloc_small(0, 100, 1000);
    free_range(0, 100, 1);
    r = ty__heap_files_build("child", -1, TY_HEAP_TRIGGER_CALL, &f);
    ty__heap_files_release(&f);
    return r == 0 ? 0 : 1;
}

static void
t_fork(void)
{
    pthread_t th[4];

    need_interposer();
    ty__heap_set_rate(256);
    forking = 1;
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, heap_fork_churn, NULL);
    pthread_create(&th[3], NULL, heap_fork_snapper, NULL);
    for (int i = 0; i < 30; i++) {
        int status = -1;
        pid_t pid = fork();

        if (pid == 0)
            _exit(child_work());
        CHECK(pid > 0);
        alarm(20);
        waitpid(pid, &status, 0);
        alarm(0);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "child %d: status %d", i, status);
    }
    forking = 0;
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
}

/* Each unwinder, forced through TESTYARD_HEAP_UNWIND in a fresh process
 * (it is read at start-up). */
static int
unwind_child(void)
{
    struct heap_pb p;
    struct ty__unwind_stats st;
    int ok;

    ty__heap_set_rate(1);
    heap_alloc_small(0, 10, 1000);
    if (heap_snap_now(&p) < 0)
        return 2;
    ty__unwind_stats(&st);
    ok = site(&p, "heap_alloc_small", HEAP_INUSE_SPACE) == 10000 &&
         heap_pb_has_func(&p, "unwind_child") && st.bt_failed == 0;
    if (ty__unwind_mode() == TY_UNWIND_BACKTRACE)
        ok = ok && st.fp == 0 && st.bt > 0;
    if (ty__unwind_mode() == TY_UNWIND_FP)
        ok = ok && st.fp > 0 && st.bt == 0;
    heap_pb_free(&p);
    return ok ? 0 : 3;
}

static void
run_unwind_child(const char *mode)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    int status = -1;
    pid_t pid;

    need_interposer();
    CHECK(n > 0);
    self[n > 0 ? n : 0] = '\0';
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        setenv("TESTYARD_HEAP_UNWIND", mode, 1);
        setenv("HEAP_TEST_CHILD", "unwind", 1);
        execl(self, "child", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d",
              mode, status);
}

static void
t_unwind_backtrace(void)
{
    run_unwind_child("backtrace");
}

static void
t_unwind_fp(void)
{
    run_unwind_child("fp");
}

static const struct th_case cases[] = {
    {"rate1_exact", t_rate1_exact},
    {"default_rate", t_default_rate},
    {"entry_points", t_entry_points},
    {"through_libc", t_through_libc},
    {"backtrace_unusable", t_backtrace_unusable},
    {"threads", t_threads},
    {"fork", t_fork},
    {"unwind_backtrace", t_unwind_backtrace},
    {"unwind_fp", t_unwind_fp},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    if (getenv("HEAP_TEST_CHILD") != NULL)
        return unwind_child();
    return th_main(argc, argv, cases);
}

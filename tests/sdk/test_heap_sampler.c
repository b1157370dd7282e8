/*
 * test_heap_sampler.c — the sampler, its tables and the estimator, driven
 * with made-up block addresses exactly as the interposer drives them
 * (ty__heap_tick, then ty__heap_sample; ty__heap_maybe_sampled, then
 * ty__heap_forget). Nothing here needs malloc interposition, so it runs in
 * the sanitizer build and under valgrind too; test_heap_interpose.c does
 * the same with the real allocator.
 *
 * Made-up blocks live at FAKE_BASE and above, where no real allocation is.
 */
#include "heap_snap.h"
#include "th.h"
#include "ty_heap.h"
#include "ty_heap_os.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_BASE ((uintptr_t)0x100000000000ULL)
#define KiB 1024ULL
#define MiB (1024ULL * 1024ULL)

#define RA __builtin_return_address(0)
#define FRAME (((void **)__builtin_frame_address(0))[0])

/* Plays malloc for a made-up block. */
__attribute__((noinline)) static void
fake_alloc(uintptr_t addr, size_t n)
{
    if (ty__heap_tick(n))
        ty__heap_sample((void *)addr, n, RA, FRAME);
}

__attribute__((noinline)) static void
fake_free(uintptr_t addr)
{
    if (ty__heap_maybe_sampled((void *)addr))
        ty__heap_forget((void *)addr);
}

/* Two allocation sites, so that the profile can tell them apart (the
 * volatile stores keep the compiler from folding them into one). */
static volatile int site_marker;

__attribute__((noinline)) static void
sampler_site_small(uintptr_t base, size_t count, size_t size)
{
    site_marker = 1;
    for (size_t i = 0; i < count; i++)
        fake_alloc(base + i * size, size);
}

__attribute__((noinline)) static void
sampler_site_big(uintptr_t base, size_t count, size_t size)
{
    site_marker = 2;
    for (size_t i = 0; i < count; i++)
        fake_alloc(base + i * size, size);
}

static void
free_every_other(uintptr_t base, size_t count, size_t size)
{
    for (size_t i = 0; i < count; i += 2)
        fake_free(base + i * size);
}

/* A site's value in this test only: with TH_NOFORK=1 (valgrind) all cases
 * share one process, and a site's counts are cumulative. */
#define site(p, fn, v) heap_pb_sum_path((p), (fn), __func__, (v))

static void
t_rate1_exact(void)
{
    uintptr_t a = FAKE_BASE, b = FAKE_BASE + (1ULL << 36);
    struct heap_pb p;

    ty__heap_start();
    ty__heap_set_rate(1);
    sampler_site_small(a, 1000, 64 * KiB);
    sampler_site_big(b, 200, MiB);
    free_every_other(a, 1000, 64 * KiB);
    free_every_other(b, 200, MiB);
    if (heap_snap_now(&p) < 0) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(p.period, 1);
    CHECK_EQ_INT(site(&p, "sampler_site_small", HEAP_ALLOC_OBJECTS), 1000);
    CHECK_EQ_INT(site(&p, "sampler_site_small", HEAP_ALLOC_SPACE),
                 1000 * 64 * KiB);
    CHECK_EQ_INT(site(&p, "sampler_site_small", HEAP_INUSE_OBJECTS), 500);
    CHECK_EQ_INT(site(&p, "sampler_site_small", HEAP_INUSE_SPACE),
                 500 * 64 * KiB);
    CHECK_EQ_INT(site(&p, "sampler_site_big", HEAP_INUSE_OBJECTS), 100);
    CHECK_EQ_INT(site(&p, "sampler_site_big", HEAP_INUSE_SPACE), 100 * MiB);
    CHECK_EQ_INT(site(&p, "sampler_site_big", HEAP_ALLOC_SPACE), 200 * MiB);
    /* the caller of the allocating function is on the stack too */
    CHECK(heap_pb_has_func(&p, "t_rate1_exact"));
    heap_pb_free(&p);
}

/* Relative error bound for the estimated bytes of n live blocks of size s
 * at rate r: k standard deviations of the estimator. Each block is seen
 * with probability q = 1 - exp(-s/r) and counted as s/q, so the relative
 * standard deviation of the sum is sqrt((1 - q) / (q n)). */
static double
bound(double n, double s, double r, double k)
{
    double q = 1 - exp(-s / r);

    return k * sqrt((1 - q) / (q * n));
}

static void
check_near(const char *what, int64_t got, double want, double rel)
{
    double err = fabs((double)got - want) / want;

    CHECK_MSG(err <= rel,
              "%s: %lld, expected %.0f within %.1f%% (off by "
              "%.2f%%)",
              what, (long long)got, want, rel * 100, err * 100);
    printf("#   %s: %.2f%% off (bound %.1f%%)\n", what, err * 100, rel * 100);
}

/* 65536 blocks of 64 KiB and 4096 of 1 MiB, half of each freed: 2 GiB
 * live at each site, made up, so no memory is needed. Bounds are 5.5
 * standard deviations: with four checks, a false failure about once in six
 * million runs. */
static void
t_default_rate_estimate(void)
{
    uintptr_t a = FAKE_BASE, b = FAKE_BASE + (1ULL << 40);
    double rate = 512 * KiB;
    struct heap_pb p;

    ty__heap_start();
    ty__heap_set_rate(512 * KiB);
    sampler_site_small(a, 65536, 64 * KiB);
    sampler_site_big(b, 4096, MiB);
    free_every_other(a, 65536, 64 * KiB);
    free_every_other(b, 4096, MiB);
    if (heap_snap_now(&p) < 0) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(p.period, 512 * KiB);
    check_near("small inuse_space",
               site(&p, "sampler_site_small", HEAP_INUSE_SPACE),
               32768.0 * 64 * KiB, bound(32768, 64 * KiB, rate, 5.5));
    check_near("small alloc_objects",
               site(&p, "sampler_site_small", HEAP_ALLOC_OBJECTS), 65536,
               bound(65536, 64 * KiB, rate, 5.5));
    check_near("big inuse_space",
               site(&p, "sampler_site_big", HEAP_INUSE_SPACE), 2048.0 * MiB,
               bound(2048, MiB, rate, 5.5));
    check_near("big alloc_space",
               site(&p, "sampler_site_big", HEAP_ALLOC_SPACE), 4096.0 * MiB,
               bound(4096, MiB, rate, 5.5));
    heap_pb_free(&p);
}

static void
t_take_put_back(void)
{
    struct ty__heap_taken t;
    size_t live;

    ty__heap_start();
    ty__heap_set_rate(1);
    live = ty__heap_live_count();
    fake_alloc(FAKE_BASE + 4096, 100);
    CHECK_EQ_INT(ty__heap_live_count(), live + 1);
    CHECK(ty__heap_maybe_sampled((void *)(FAKE_BASE + 4096)));
    CHECK(ty__heap_take((void *)(FAKE_BASE + 4096), &t));
    CHECK_EQ_INT(t.size, 100);
    CHECK(!ty__heap_take((void *)(FAKE_BASE + 4096), &t));
    CHECK_EQ_INT(ty__heap_live_count(), live);
    ty__heap_put_back(&t);
    CHECK_EQ_INT(ty__heap_live_count(), live + 1);
    /* the same address sampled again replaces the record */
    fake_alloc(FAKE_BASE + 4096, 200);
    CHECK_EQ_INT(ty__heap_live_count(), live + 1);
    fake_free(FAKE_BASE + 4096);
    CHECK_EQ_INT(ty__heap_live_count(), live);
    CHECK(!ty__heap_maybe_sampled((void *)(FAKE_BASE + 4096)));
}

static void
t_rate_zero(void)
{
    size_t live;

    ty__heap_start();
    ty__heap_set_rate(0);
    CHECK_EQ_INT(ty__heap_get_rate(), 0);
    live = ty__heap_live_count();
    sampler_site_big(FAKE_BASE, 1000, MiB);
    CHECK_EQ_INT(ty__heap_live_count(), live);
    ty__heap_set_rate(1);
    sampler_site_big(FAKE_BASE, 10, MiB);
    CHECK_EQ_INT(ty__heap_live_count(), live + 10);
    free_every_other(FAKE_BASE, 10, MiB);
    free_every_other(FAKE_BASE + MiB, 10, MiB);
    CHECK_EQ_INT(ty__heap_live_count(), live);
}

/* Eight threads allocate and free made-up blocks of their own while the
 * main thread takes profiles. At rate 1 the 64K live records make the
 * shards' tables grow while other threads look into them. */
static void *
sampler_storm(void *arg)
{
    uintptr_t base = FAKE_BASE + ((uintptr_t)arg << 36);
    uint64_t x = (uintptr_t)arg * 2654435761u + 1;

    for (int round = 0; round < 10; round++) {
        for (size_t i = 0; i < 8000; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            fake_alloc(base + i * 65536, (size_t)(x >> 48) + 1);
        }
        for (size_t i = 0; i < 8000; i++)
            fake_free(base + i * 65536);
    }
    return NULL;
}

static void
t_threads(void)
{
    pthread_t th[8];
    struct heap_pb p;

    ty__heap_start();
    ty__heap_set_rate(1);
    for (uintptr_t i = 0; i < 8; i++)
        CHECK_EQ_INT(
            pthread_create(&th[i], NULL, sampler_storm, (void *)(i + 1)), 0);
    for (int i = 0; i < 5; i++) {
        CHECK_EQ_INT(heap_snap_now(&p), 0);
        heap_pb_free(&p);
    }
    for (int i = 0; i < 8; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_INT(heap_snap_now(&p), 0);
    CHECK(heap_pb_sum_func(&p, "sampler_storm", HEAP_ALLOC_OBJECTS) > 0);
    CHECK_EQ_INT(heap_pb_sum_func(&p, "sampler_storm", HEAP_INUSE_SPACE), 0);
    heap_pb_free(&p);
}

static void
t_labels(void)
{
    CHECK(ty__heap_label_ok("round-3-pre-trim"));
    CHECK(ty__heap_label_ok("a.b_c-D9"));
    CHECK(!ty__heap_label_ok(""));
    CHECK(!ty__heap_label_ok(NULL));
    CHECK(!ty__heap_label_ok(".hidden"));
    CHECK(!ty__heap_label_ok("a/b"));
    CHECK(!ty__heap_label_ok("a b"));
    CHECK(!ty__heap_label_ok(
        "0123456789012345678901234567890123456789012345678901234567890123456"
        "7890123456789012345678901234567890"));
}

static double
num(const cJSON *o, const char *path)
{
    char buf[128], *save = NULL;

    snprintf(buf, sizeof(buf), "%s", path);
    for (char *k = strtok_r(buf, ".", &save); k && o;
         k = strtok_r(NULL, ".", &save))
        o = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(o) ? o->valuedouble : -1;
}

static void
t_files(void)
{
    struct ty__heap_files f;
    struct heap_pb p;
    char err[128];
    cJSON *j;
    const cJSON *t, *cg;

    ty__heap_start();
    ty__heap_set_rate(1);
    sampler_site_big(FAKE_BASE, 3, MiB);
    CHECK_EQ_INT(
        ty__heap_files_build("round-7-pre-trim", 7, TY_HEAP_TRIGGER_ROUND, &f),
        0);
    CHECK_EQ_INT(heap_pb_parse_gz(f.pb, f.pb_len, &p, err, sizeof(err)), 0);
    CHECK_EQ_INT(site(&p, "sampler_site_big", HEAP_INUSE_SPACE), 3 * MiB);
    heap_pb_free(&p);
    j = cJSON_ParseWithLength(f.json, f.json_len);
    CHECK(j != NULL);
    t = cJSON_GetObjectItemCaseSensitive(j, "time");
    CHECK(cJSON_IsString(t) && strlen(t->valuestring) == 24 &&
          t->valuestring[10] == 'T' && t->valuestring[23] == 'Z');
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "label")),
                 "round-7-pre-trim");
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(j, "trigger")),
                 "round");
    CHECK_EQ_INT(num(j, "round"), 7);
    CHECK_EQ_INT(num(j, "rate"), 1);
    CHECK(num(j, "rss_bytes") > 0);
    CHECK(num(j, "vm_hwm_bytes") >= num(j, "rss_bytes"));
    CHECK(num(j, "rss_anon_bytes") > 0);
    CHECK(num(j, "mallinfo.arena") >= 0);
    CHECK(num(j, "mallinfo.uordblks") >= 0);
    CHECK(num(j, "mallinfo.keepcost") >= 0);
    CHECK(num(j, "profile.inuse_bytes") >= 3.0 * MiB);
    CHECK(num(j, "profile.alloc_objects") >= 3);
    CHECK(num(j, "profile.profiler_resident_bytes") > 0);
    CHECK(num(j, "profile.profiler_resident_bytes") <=
          num(j, "profile.profiler_bytes"));
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(
                     cJSON_GetObjectItem(j, "unwind"), "mode")),
                 "auto");
    CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItem(
                     cJSON_GetObjectItem(j, "unwind"), "backtrace")),
                 "usable");
    CHECK(num(j, "unwind.stacks_fp") + num(j, "unwind.stacks_backtrace") +
              num(j, "unwind.stacks_backtrace_failed") >=
          3);
    cg = cJSON_GetObjectItemCaseSensitive(j, "cgroup");
    CHECK(cJSON_IsNull(cg) || num(j, "cgroup.current_bytes") > 0);
    cJSON_Delete(j);
    ty__heap_files_release(&f);
    free_every_other(FAKE_BASE, 3, MiB);
    free_every_other(FAKE_BASE + MiB, 3, MiB);
}

/* The profiler's own memory: what it maps counts at once, what it touches
 * becomes resident page by page, and what it gives back leaves both. */
static void
t_own_memory(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), m0, r0, m1, r1, m2, r2;
    unsigned char *p;

    ty__heap_own_memory(&m0, &r0);
    CHECK(r0 <= m0);
    p = ty__heap_os_alloc(64 * page);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    ty__heap_own_memory(&m1, &r1);
    CHECK(m1 >= m0 + 64 * page); /* and the list's room, the first time */
    for (int i = 0; i < 5; i++)
        p[(size_t)i * 8 * page] = 1;
    ty__heap_own_memory(&m2, &r2);
    CHECK_EQ_INT(m2, m1);
    CHECK_MSG(r2 >= r1 + 5 * page && r2 <= r1 + 6 * page,
              "resident %zu, then %zu after touching 5 pages", r1, r2);
    CHECK(r2 <= m2);
    ty__heap_os_free(p, 64 * page);
    ty__heap_own_memory(&m2, &r2);
    CHECK_EQ_INT(m2, m1 - 64 * page);
    CHECK(r2 <= r1);
}

static const struct th_case cases[] = {
    {"rate1_exact", t_rate1_exact},
    {"default_rate_estimate", t_default_rate_estimate},
    {"take_put_back", t_take_put_back},
    {"rate_zero", t_rate_zero},
    {"threads", t_threads},
    {"labels", t_labels},
    {"files", t_files},
    {"own_memory", t_own_memory},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

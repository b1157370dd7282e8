/*
 * test_pprof.c — the profile.proto writer, the profile builder, gzip, Go's
 * estimator and heap profiles built from made-up snapshots, decoded by the
 * independent reader in tests/helpers/heap_pb.c. No malloc interposition:
 * these run in the sanitizer build and under valgrind.
 */
#include "heap_pb.h"
#include "th.h"
#include "ty_pprof.h"
#include "ty_symbols.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool
bytes_eq(const struct ty__buf *b, const uint8_t *want, size_t n)
{
    return !b->oom && b->len == n && memcmp(b->buf, want, n) == 0;
}

static void
t_varint(void)
{
    static const struct {
        uint64_t v;
        uint8_t enc[10];
        size_t n;
    } cases[] = {
        {0, {0x00}, 1},
        {1, {0x01}, 1},
        {127, {0x7f}, 1},
        {128, {0x80, 0x01}, 2},
        {300, {0xac, 0x02}, 2},
        {UINT64_MAX,
         {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
         10},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ty__buf b = {0};

        ty__pb_varint(&b, cases[i].v);
        CHECK_MSG(bytes_eq(&b, cases[i].enc, cases[i].n), "varint %llu",
                  (unsigned long long)cases[i].v);
        ty__buf_release(&b);
    }
}

/* The examples of the protobuf encoding guide. */
static void
t_fields(void)
{
    static const uint8_t f150[] = {0x08, 0x96, 0x01};
    static const uint8_t str[] = {0x12, 0x07, 't', 'e', 's',
                                  't',  'i',  'n', 'g'};
    static const uint8_t packed[] = {0x22, 0x06, 0x03, 0x8e,
                                     0x02, 0x9e, 0xa7, 0x05};
    static const uint64_t vals[] = {3, 270, 86942};
    struct ty__buf b = {0};

    ty__pb_uint(&b, 1, 150);
    ty__pb_uint(&b, 5, 0); /* proto3: zero is left out */
    ty__pb_bool(&b, 6, false);
    CHECK(bytes_eq(&b, f150, sizeof(f150)));
    ty__buf_release(&b);
    ty__pb_bytes(&b, 2, "testing", 7);
    CHECK(bytes_eq(&b, str, sizeof(str)));
    ty__buf_release(&b);
    ty__pb_packed(&b, 4, vals, 3);
    CHECK(bytes_eq(&b, packed, sizeof(packed)));
    ty__buf_release(&b);
    ty__pb_int(&b, 1, -1); /* int64 -1: ten bytes */
    CHECK_EQ_INT(b.len, 11);
    ty__buf_release(&b);
}

static void
t_strings_dedup(void)
{
    struct ty__pprof *p = ty__pprof_new();
    int64_t a = ty__pprof_str(p, "alpha"), b = ty__pprof_str(p, "beta");

    CHECK_EQ_INT(ty__pprof_str(p, ""), 0);
    CHECK_EQ_INT(ty__pprof_str(p, NULL), 0);
    CHECK(a > 0 && b > 0 && a != b);
    CHECK_EQ_INT(ty__pprof_str(p, "alpha"), a);
    CHECK_EQ_INT(ty__pprof_function(p, "f", NULL, "x.c"),
                 ty__pprof_function(p, "f", "f.part.0", "x.c"));
    CHECK(ty__pprof_function(p, "f", NULL, "y.c") !=
          ty__pprof_function(p, "f", NULL, "x.c"));
    /* many strings: the table grows and stays consistent */
    for (int i = 0; i < 5000; i++) {
        char s[32];

        snprintf(s, sizeof(s), "s%d", i);
        CHECK_EQ_INT(ty__pprof_str(p, s), ty__pprof_str(p, s));
    }
    CHECK_EQ_INT(ty__pprof_str(p, "beta"), b);
    ty__pprof_destroy(&p);
    CHECK(p == NULL);
}

/* Build a two-sample profile by hand and read it back. */
static void
t_roundtrip(void)
{
    struct ty__pprof *p = ty__pprof_new();
    struct ty__buf raw;
    struct heap_pb d;
    char err[128];
    uint64_t m, f1, f2, l1, l2, locs[2];
    int64_t v1[2] = {3, 300}, v2[2] = {1, 7};

    ty__pprof_sample_type(p, "objects", "count");
    ty__pprof_sample_type(p, "space", "bytes");
    ty__pprof_period(p, "space", "bytes", 4096);
    ty__pprof_time(p, 123456789);
    m = ty__pprof_mapping(p, 0x1000, 0x2000, 0, "/bin/x", "abcd");
    ty__pprof_mapping_has_functions(p, m, true);
    f1 = ty__pprof_function(p, "leaf", "leaf.isra.0", "x.c");
    f2 = ty__pprof_function(p, "root", NULL, NULL);
    l1 = ty__pprof_location(p, 0x1100, m, f1);
    l2 = ty__pprof_location(p, 0x1200, m, f2);
    CHECK_EQ_INT(ty__pprof_location_of(p, 0x1100), l1);
    CHECK_EQ_INT(ty__pprof_location_of(p, 0x1300), 0);
    locs[0] = l1;
    locs[1] = l2;
    ty__pprof_sample(p, locs, 2, v1, 2, "bytes", 100);
    ty__pprof_sample(p, &locs[1], 1, v2, 2, NULL, 0);
    CHECK_EQ_INT(ty__pprof_encode(p, &raw), 0);
    CHECK_EQ_INT(
        heap_pb_decode((const uint8_t *)raw.buf, raw.len, &d, err, sizeof(err)),
        0);
    CHECK_EQ_INT(d.ntypes, 2);
    CHECK_EQ_STR(heap_pb_str(&d, d.types[1][0]), "space");
    CHECK_EQ_STR(heap_pb_str(&d, d.period_type[1]), "bytes");
    CHECK_EQ_INT(d.period, 4096);
    CHECK_EQ_INT(d.time_nanos, 123456789);
    CHECK_EQ_INT(d.nsamples, 2);
    CHECK_EQ_INT(d.nlocs, 2);
    CHECK_EQ_INT(d.nmaps, 1);
    CHECK(d.nmaps == 1 && d.maps[0].has_functions);
    CHECK_EQ_STR(heap_pb_str(&d, d.maps[0].build_id), "abcd");
    CHECK_EQ_INT(heap_pb_sum_func(&d, "root", 1), 307);
    CHECK_EQ_INT(heap_pb_sum_func(&d, "leaf", 1), 300);
    CHECK_EQ_STR(heap_pb_str(&d, d.samples[0].label_key), "bytes");
    CHECK(d.nfuncs == 2 &&
          strcmp(heap_pb_str(&d, d.funcs[0].system_name), "leaf.isra.0") == 0);
    CHECK_EQ_INT(d.samples[0].label_num, 100);
    heap_pb_free(&d);
    ty__buf_release(&raw);
    ty__pprof_destroy(&p);
}

static void
t_gzip(void)
{
    char data[10000];
    void *gz;
    uint8_t *back;
    size_t gzlen, backlen;

    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (char)(i * 7 % 13);
    CHECK_EQ_INT(ty__gzip(data, sizeof(data), &gz, &gzlen), 0);
    CHECK(gzlen > 18 && gzlen < sizeof(data));
    CHECK(((uint8_t *)gz)[0] == 0x1f && ((uint8_t *)gz)[1] == 0x8b);
    CHECK_EQ_INT(heap_pb_gunzip(gz, gzlen, &back, &backlen), 0);
    CHECK_EQ_INT(backlen, sizeof(data));
    CHECK(memcmp(back, data, sizeof(data)) == 0);
    free(back);
    free(gz);
}

static void
t_scale(void)
{
    int64_t c, b;
    double p = 1 - exp(-65536.0 / 524288.0);

    ty__heap_scale(10, 655360, 524288, &c, &b);
    CHECK_EQ_INT(c, (int64_t)(10 / p));
    CHECK_EQ_INT(b, (int64_t)(655360 / p));
    ty__heap_scale(10, 655360, 1, &c, &b);
    CHECK(c == 10 && b == 655360);
    ty__heap_scale(0, 0, 524288, &c, &b);
    CHECK(c == 0 && b == 0);
    /* a block far above the rate is almost surely sampled: scale ~ 1 */
    ty__heap_scale(1, 64u << 20, 524288, &c, &b);
    CHECK_EQ_INT(c, 1);
    CHECK_EQ_INT(b, 64 << 20);
}

/* Stand-ins for allocating functions: their addresses make stacks. */
__attribute__((noinline)) static void
pprof_leaf(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void pprof_root(void);
__attribute__((noinline)) void
pprof_root(void)
{
    pprof_leaf();
    __asm__ volatile("" ::: "memory");
}

static struct heap_pb
profile_of(const struct ty__heap_rec *recs, size_t n, uint64_t rate)
{
    struct ty__heap_snap s = {(struct ty__heap_rec *)recs, n, n, rate, 42};
    struct ty__heap_totals tot;
    struct heap_pb d = {0};
    char err[128];
    void *gz = NULL;
    size_t len = 0;

    CHECK_EQ_INT(ty__heap_profile(&s, &gz, &len, &tot), 0);
    CHECK_MSG(heap_pb_parse_gz(gz, len, &d, err, sizeof(err)) == 0, "%s", err);
    CHECK_EQ_INT(tot.frames, d.nlocs);
    ty__heap_totals_release(&tot);
    free(gz);
    return d;
}

static void
t_heap_profile(void)
{
    uintptr_t pcs[] = {(uintptr_t)pprof_leaf + 1, (uintptr_t)pprof_root + 1};
    struct ty__heap_rec r = {pcs, 2, 1, 10, 10240, 4, 4096};
    struct heap_pb d = profile_of(&r, 1, 1);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    exe[n > 0 ? n : 0] = '\0';
    CHECK_EQ_INT(d.ntypes, 4);
    CHECK_EQ_INT(heap_pb_type(&d, "alloc_objects"), 0);
    CHECK_EQ_INT(heap_pb_type(&d, "alloc_space"), 1);
    CHECK_EQ_INT(heap_pb_type(&d, "inuse_objects"), 2);
    CHECK_EQ_INT(heap_pb_type(&d, "inuse_space"), 3);
    CHECK_EQ_STR(heap_pb_str(&d, d.types[3][1]), "bytes");
    CHECK_EQ_STR(heap_pb_str(&d, d.period_type[0]), "space");
    CHECK_EQ_INT(d.period, 1);
    CHECK_EQ_INT(d.time_nanos, 42);
    CHECK_EQ_INT(heap_pb_sum_func(&d, "pprof_leaf", 0), 10);
    CHECK_EQ_INT(heap_pb_sum_func(&d, "pprof_root", 1), 10240);
    CHECK_EQ_INT(heap_pb_sum_func(&d, "pprof_leaf", 2), 6);
    CHECK_EQ_INT(heap_pb_sum_func(&d, "pprof_leaf", 3), 6144);
    CHECK(d.nsamples == 1 && d.samples[0].label_num == 1024);
    /* pprof convention: return address - 1 */
    CHECK(d.nlocs == 2 && d.locs[0].address == pcs[0] - 1);
    /* the main program first, named, with a build id */
    CHECK(d.nmaps > 0);
    CHECK_EQ_STR(heap_pb_str(&d, d.maps[0].file), exe);
    CHECK(strlen(heap_pb_str(&d, d.maps[0].build_id)) >= 16);
    CHECK(d.maps[0].has_functions);
    CHECK(d.nlocs == 2 && d.locs[0].mapping_id == d.maps[0].id);
    /* a static function knows its source file */
    for (size_t i = 0; i < d.nfuncs; i++)
        if (strcmp(heap_pb_str(&d, d.funcs[i].name), "pprof_leaf") == 0)
            CHECK_EQ_STR(heap_pb_str(&d, d.funcs[i].filename), "test_pprof.c");
    heap_pb_free(&d);
}

/* Two rates in one snapshot: each bucket is scaled by its own. */
static void
t_heap_profile_rates(void)
{
    uintptr_t pcs[] = {(uintptr_t)pprof_leaf + 1};
    struct ty__heap_rec r[2] = {{pcs, 1, 1, 4, 4096, 0, 0},
                                {pcs, 1, 524288, 4, 4096, 0, 0}};
    struct heap_pb d = profile_of(r, 2, 524288);
    int64_t c, b;

    ty__heap_scale(4, 4096, 524288, &c, &b);
    CHECK_EQ_INT(d.nsamples, 2);
    CHECK_EQ_INT(heap_pb_total(&d, 3), 4096 + b);
    CHECK_EQ_INT(heap_pb_total(&d, 2), 4 + c);
    heap_pb_free(&d);
}

/* Addresses in no mapping and in no function stay, unnamed. */
static void
t_heap_profile_unknown(void)
{
    uintptr_t pcs[] = {0x10, (uintptr_t)pprof_root + 1};
    struct ty__heap_rec r = {pcs, 2, 1, 1, 100, 0, 0};
    struct heap_pb d = profile_of(&r, 1, 1);

    CHECK_EQ_INT(d.nlocs, 2);
    CHECK(d.nlocs == 2 && d.locs[0].mapping_id == 0 && d.locs[0].nlines == 0);
    CHECK_EQ_INT(heap_pb_sum_func(&d, "pprof_root", 3), 100);
    heap_pb_free(&d);
}

static void
t_empty_profile(void)
{
    struct heap_pb d = profile_of(NULL, 0, 524288);

    CHECK_EQ_INT(d.nsamples, 0);
    CHECK_EQ_INT(d.ntypes, 4);
    CHECK_EQ_INT(d.period, 524288);
    heap_pb_free(&d);
}

static void
t_symbolize(void)
{
    struct ty__symbolizer s;
    const char *name = NULL, *file = NULL;
    int m;

    CHECK_EQ_INT(ty__symbolizer_init(&s), 0);
    m = ty__symbolizer_find(&s, (uintptr_t)pprof_root + 1);
    CHECK_EQ_INT(m, 0);
    CHECK_EQ_INT(ty__symbolize(&s, m, (uintptr_t)pprof_root + 1, &name, &file),
                 0);
    CHECK_EQ_STR(name, "pprof_root");
    /* a libc function, through .dynsym */
    m = ty__symbolizer_find(&s, (uintptr_t)strtol + 1);
    CHECK(m > 0);
    if (m > 0 && ty__symbolize(&s, m, (uintptr_t)strtol + 1, &name, &file) == 0)
        CHECK(strstr(name, "strto") != NULL);
    CHECK_EQ_INT(ty__symbolizer_find(&s, 0x10), -1);
    ty__symbolizer_release(&s);
}

static void
t_frame_pointers(void)
{
    /* This program is built with -fno-omit-frame-pointer; libc is not. */
    struct ty__symbolizer s;
    char libc[4096] = "";
    int m;

    CHECK(!ty__elf_keeps_frame_pointers("/proc/self/exe", 0, 0, 0));
    CHECK_EQ_INT(ty__symbolizer_init(&s), 0);
    CHECK(s.n > 0 && ty__elf_keeps_frame_pointers(
                         "/proc/self/exe", s.maps[0].start - (s.maps[0].offset),
                         s.maps[0].start, s.maps[0].limit));
    m = ty__symbolizer_find(&s, (uintptr_t)strtol);
    if (m > 0) {
        snprintf(libc, sizeof(libc), "%s", s.maps[m].path);
        CHECK(!ty__elf_keeps_frame_pointers(libc,
                                            s.maps[m].start - s.maps[m].offset,
                                            s.maps[m].start, s.maps[m].limit));
    }
    ty__symbolizer_release(&s);
}

static const struct th_case cases[] = {
    {"varint", t_varint},
    {"fields", t_fields},
    {"strings_dedup", t_strings_dedup},
    {"roundtrip", t_roundtrip},
    {"gzip", t_gzip},
    {"scale", t_scale},
    {"heap_profile", t_heap_profile},
    {"heap_profile_rates", t_heap_profile_rates},
    {"heap_profile_unknown", t_heap_profile_unknown},
    {"empty_profile", t_empty_profile},
    {"symbolize", t_symbolize},
    {"frame_pointers", t_frame_pointers},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

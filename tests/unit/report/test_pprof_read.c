/*
 * test_pprof_read.c — the report's profile reader (runner/report/pprof_read.c)
 * against profiles made by the SDK's encoder (sdk/heap/ty_pprof.c): heap
 * profiles built from made-up snapshots whose stacks are real functions of
 * this program, so they are symbolized as a plan's would be; profiles put
 * together field by field to reach the corners (unpacked repeated fields,
 * inlined frames, frames without a function); and malformed input, which
 * must give an error naming the file and never a crash.
 */
#include "report/pprof_int.h"
#include "report/report_int.h"
#include "th.h"
#include "ty_pprof.h"
#include "base/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024 * 1024)

/* Stand-ins for a plan's functions: their addresses make stacks. */
__attribute__((noinline)) void test_leak_round(void);
__attribute__((noinline)) void
test_leak_round(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void test_make_blocks(void);
__attribute__((noinline)) void
test_make_blocks(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void test_plan_main(void);
__attribute__((noinline)) void
test_plan_main(void)
{
    __asm__ volatile("" ::: "memory");
}

/* Stand-ins for the SDK's code: a sync buffer grown under a barrier. */
__attribute__((noinline)) void ty__test_grow_buffer(void);
__attribute__((noinline)) void
ty__test_grow_buffer(void)
{
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void ty_test_barrier(void);
__attribute__((noinline)) void
ty_test_barrier(void)
{
    __asm__ volatile("" ::: "memory");
}

#define PC(f) ((uintptr_t)(f) + 1)

/* A gzipped heap profile of recs, as a snapshot writes it. */
static void *
heap_profile(const struct ty__heap_rec *recs, size_t n, size_t *len)
{
    struct ty__heap_snap s = {(struct ty__heap_rec *)recs, n, n, 1, 42};
    struct ty__heap_totals tot;
    void *gz = NULL;

    CHECK_EQ_INT(ty__heap_profile(&s, &gz, len, &tot), 0);
    return gz;
}

/* Three stacks: a leak straight from a plan function, a block made
 * through xmalloc (a wrapper), and a strdup inside the leaking function.
 * Rate 1: values are not scaled. */
static struct pprof_profile *
sdk_profile(void)
{
    static uintptr_t leak[] = {PC(test_leak_round), PC(test_plan_main)};
    static uintptr_t blocks[] = {PC(xmalloc), PC(test_make_blocks),
                                 PC(test_plan_main)};
    static uintptr_t dup[] = {PC(strdup), PC(test_leak_round),
                              PC(test_plan_main)};
    struct ty__heap_rec recs[] = {
        {leak, 2, 1, 16, 16 * MiB, 0, 0},
        {blocks, 3, 1, 8, 4 * MiB, 4, 3 * MiB},
        {dup, 3, 1, 1024, 64 * 1024, 0, 0},
    };
    struct err err = {0};
    size_t len = 0;
    cleanup_free void *gz = heap_profile(recs, 3, &len);
    struct pprof_profile *p = pprof__parse(gz, len, "sdk.pb.gz", &err);

    CHECK_MSG(p != NULL, "%s", err.msg);
    return p;
}

static const struct pprof_site *
site_named(const struct pprof_site *s, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s[i].function, name) == 0)
            return &s[i];
    return NULL;
}

static void
t_sdk_profile_totals(void)
{
    struct pprof_profile *p = sdk_profile();

    if (p == NULL)
        return;
    CHECK_EQ_INT(pprof__value_index(p, "alloc_objects"), 0);
    CHECK_EQ_INT(pprof__value_index(p, "inuse_space"), 3);
    CHECK_EQ_INT(pprof__value_index(p, "cpu"), -1);
    CHECK_EQ_INT(pprof__nsamples(p), 3);
    CHECK_EQ_INT(pprof__time_ns(p), 42);
    CHECK_EQ_INT(pprof__total(p, 3), 16 * MiB + 1 * MiB + 64 * 1024);
    CHECK_EQ_INT(pprof__total(p, 1), 16 * MiB + 4 * MiB + 64 * 1024);
    CHECK_EQ_INT(pprof__total(p, 2), 16 + 4 + 1024);
    CHECK_EQ_INT(pprof__total(p, 9), 0);
    pprof__destroy(&p);
    CHECK(p == NULL);
}

/* Sites look through xmalloc and strdup to the plan's functions. */
static void
t_sdk_profile_sites(void)
{
    struct pprof_profile *p = sdk_profile();
    struct pprof_site *s = NULL;
    size_t n;
    const struct pprof_site *leak, *blocks, *root;

    if (p == NULL)
        return;
    n = pprof__sites(p, pprof__value_index(p, "inuse_space"), &s);
    CHECK(n >= 3);
    CHECK(n > 0 && strcmp(s[0].function, "test_leak_round") == 0);
    leak = site_named(s, n, "test_leak_round");
    blocks = site_named(s, n, "test_make_blocks");
    root = site_named(s, n, "test_plan_main");
    CHECK(leak && leak->flat == 16 * MiB + 64 * 1024);
    CHECK(leak && leak->cum == 16 * MiB + 64 * 1024);
    CHECK(blocks && blocks->flat == 1 * MiB && blocks->cum == 1 * MiB);
    CHECK(root && root->flat == 0 && root->cum == 17 * MiB + 64 * 1024);
    CHECK(site_named(s, n, "xmalloc") == NULL);
    CHECK(site_named(s, n, "strdup") == NULL &&
          site_named(s, n, "__strdup") == NULL);
    for (size_t i = 1; i < n; i++)
        CHECK(s[i - 1].flat >= s[i].flat);
    free(s);
    /* By allocated bytes the order is the same, with more in blocks. */
    n = pprof__sites(p, pprof__value_index(p, "alloc_space"), &s);
    blocks = site_named(s, n, "test_make_blocks");
    CHECK(blocks && blocks->flat == 4 * MiB);
    free(s);
    pprof__destroy(&p);
}

/* The inuse_space sites of a profile encoded from recs (sampled every
 * rate bytes) and read back; *p to destroy, NULL when it does not parse. */
static size_t
sites_of_recs(struct ty__heap_rec *recs, size_t n, uint64_t rate,
              struct pprof_profile **p, struct pprof_site **s)
{
    struct ty__heap_snap snap = {recs, n, n, rate, 42};
    struct ty__heap_totals tot;
    void *gz = NULL;
    size_t len = 0;
    struct err err = {0};

    *s = NULL;
    CHECK_EQ_INT(ty__heap_profile(&snap, &gz, &len, &tot), 0);
    *p = pprof__parse(gz, len, "x.pb.gz", &err);
    free(gz);
    CHECK_MSG(*p != NULL, "%s", err.msg);
    if (*p == NULL)
        return 0;
    return pprof__sites(*p, pprof__value_index(*p, "inuse_space"), s);
}

/* Sampled every 512 KiB: one allocation of 1000 bytes is scaled up to
 * about 512 KiB, and the site says it rests on one sample; the SDK's
 * frames make a testyard site named after the SDK call the plan made. */
static void
t_samples_and_testyard(void)
{
    static uintptr_t sync[] = {PC(ty__test_grow_buffer), PC(ty_test_barrier),
                               PC(test_plan_main)};
    static uintptr_t leak[] = {PC(xmalloc), PC(test_leak_round),
                               PC(test_plan_main)};
    struct ty__heap_rec recs[] = {
        {sync, 3, 524288, 1, 1000, 0, 0},
        {leak, 3, 524288, 40, 40 * 65536, 0, 0},
    };
    struct pprof_profile *p;
    struct pprof_site *s;
    size_t n = sites_of_recs(recs, 2, 524288, &p, &s);
    const struct pprof_site *ty, *lk, *main_;

    if (p == NULL)
        return;
    ty = site_named(s, n, "ty_test_barrier");
    lk = site_named(s, n, "test_leak_round");
    main_ = site_named(s, n, "test_plan_main");
    CHECK(ty != NULL && ty->testyard && ty->flat > 500 * 1024);
    CHECK_MSG(ty && fabs(ty->samples - 1) < 0.05, "samples %.3f",
              ty ? ty->samples : -1);
    CHECK(lk != NULL && !lk->testyard);
    CHECK_MSG(lk && fabs(lk->samples - 40) < 0.1, "samples %.3f",
              lk ? lk->samples : -1);
    CHECK(main_ != NULL && !main_->testyard && main_->flat == 0);
    /* the SDK's inner frame is looked through to the call the plan made */
    CHECK(site_named(s, n, "ty__test_grow_buffer") == NULL ||
          site_named(s, n, "ty__test_grow_buffer")->flat == 0);
    free(s);
    pprof__destroy(&p);
}

/* An allocation in a library (libc's stdio here) is the site of whoever
 * called the library: testyard's when the first frame above it is the
 * SDK's, the library function's own when it is the plan's. */
static void
t_library_sites(void)
{
    static uintptr_t sdk[] = {PC(fputs), PC(ty_test_barrier),
                              PC(test_plan_main)};
    static uintptr_t plan[] = {PC(fwrite), PC(test_leak_round),
                               PC(test_plan_main)};
    struct ty__heap_rec recs[] = {
        {sdk, 3, 1, 1, 4096, 0, 0},
        {plan, 3, 1, 2, 8192, 0, 0},
    };
    struct pprof_profile *p;
    struct pprof_site *s;
    size_t n = sites_of_recs(recs, 2, 1, &p, &s);
    const struct pprof_site *ty, *lk;

    if (p == NULL)
        return;
    ty = site_named(s, n, "ty_test_barrier");
    CHECK(ty != NULL && ty->testyard && ty->flat == 4096);
    lk = site_named(s, n, "test_leak_round");
    CHECK(lk != NULL && lk->flat == 0);
    /* the plan's own call into libc stays libc's function, not testyard's */
    for (size_t i = 0; i < n; i++)
        if (s[i].flat == 8192)
            CHECK_MSG(!s[i].testyard, "%s", s[i].function);
    CHECK(n > 0 && !s[0].testyard && s[0].flat == 8192);
    free(s);
    pprof__destroy(&p);
}

static void
t_is_testyard(void)
{
    CHECK(pprof__is_testyard("ty_barrier", ""));
    CHECK(pprof__is_testyard("ty__zmtp_input", ""));
    CHECK(pprof__is_testyard("conn_grow", "sdk/ty_conn.c"));
    CHECK(pprof__is_testyard("conn_grow", "ty_conn.c"));
    CHECK(!pprof__is_testyard("conn_grow", "plans/x/conn.c"));
    CHECK(!pprof__is_testyard("leak_round", ""));
    CHECK(!pprof__is_testyard("typical", "main.c"));
}

static void
t_read_file(void)
{
    static uintptr_t leak[] = {PC(test_leak_round)};
    struct ty__heap_rec r = {leak, 1, 1, 2, 2048, 0, 0};
    size_t len = 0;
    cleanup_free void *gz = heap_profile(&r, 1, &len);
    cleanup_free char *path = path_join(th_tmpdir(), "heap-x.pb.gz");
    struct err err = {0};
    struct pprof_profile *p;

    CHECK_EQ_INT(file_write_atomic(path, gz, len, &err), 0);
    p = pprof__read_file(path, &err);
    CHECK_MSG(p != NULL, "%s", err.msg);
    CHECK(p && pprof__total(p, 3) == 2048);
    pprof__destroy(&p);
    free(path);
    path = path_join(th_tmpdir(), "absent.pb.gz");
    CHECK(pprof__read_file(path, &err) == NULL);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_CONTAINS(err.msg, "absent.pb.gz");
}

/* ---- profiles put together by hand ------------------------------------- */

static void
pb_msg(struct ty__buf *to, int field, struct ty__buf *m)
{
    ty__pb_message(to, field, m);
    ty__buf_release(m);
}

static void
add_strings(struct ty__buf *b, const char *const *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ty__pb_bytes(b, 6, s[i], strlen(s[i]));
}

static void
add_type(struct ty__buf *b, int64_t type, int64_t unit)
{
    struct ty__buf m = {0};

    ty__pb_int(&m, 1, type);
    ty__pb_int(&m, 2, unit);
    pb_msg(b, 1, &m);
}

static void
add_function(struct ty__buf *b, uint64_t id, int64_t name)
{
    struct ty__buf m = {0};

    ty__pb_uint(&m, 1, id);
    ty__pb_int(&m, 2, name);
    pb_msg(b, 5, &m);
}

/* A location with lines for fids (innermost first; 0 ends the list). */
static void
add_location(struct ty__buf *b, uint64_t id, uint64_t map, uint64_t addr,
             const uint64_t *fids)
{
    struct ty__buf m = {0};

    ty__pb_uint(&m, 1, id);
    ty__pb_uint(&m, 2, map);
    ty__pb_uint(&m, 3, addr);
    for (; fids != NULL && *fids != 0; fids++) {
        struct ty__buf line = {0};

        ty__pb_uint(&line, 1, *fids);
        ty__pb_uint(&line, 2, 10);
        pb_msg(&m, 4, &line);
    }
    pb_msg(b, 4, &m);
}

/* A sample with its repeated fields one key per element (unpacked). */
static void
add_sample_unpacked(struct ty__buf *b, const uint64_t *locs, size_t n,
                    int64_t value)
{
    struct ty__buf m = {0};

    for (size_t i = 0; i < n; i++) {
        ty__pb_varint(&m, 1 << 3 | 0);
        ty__pb_varint(&m, locs[i]);
    }
    ty__pb_varint(&m, 2 << 3 | 0);
    ty__pb_varint(&m, (uint64_t)value);
    pb_msg(b, 2, &m);
}

static void
add_sample(struct ty__buf *b, const uint64_t *locs, size_t n, int64_t value)
{
    struct ty__buf m = {0};
    uint64_t v = (uint64_t)value;

    ty__pb_packed(&m, 1, locs, n);
    ty__pb_packed(&m, 2, &v, 1);
    pb_msg(b, 2, &m);
}

static void
add_mapping(struct ty__buf *b, uint64_t id, int64_t file)
{
    struct ty__buf m = {0};

    ty__pb_uint(&m, 1, id);
    ty__pb_int(&m, 5, file);
    pb_msg(b, 3, &m);
}

static const char *const strs[] = {
    "",      "inuse_space", "bytes",  "inner",
    "outer", "root",        "malloc", "/usr/lib/libfoo.so.1"};
enum { S_INUSE = 1, S_BYTES, S_INNER, S_OUTER, S_ROOT, S_MALLOC, S_LIB };

/* inner() inlined into outer(), both in location 1; root in location 2;
 * location 3 has no function; malloc in location 4. Samples: [malloc,
 * 1, 2] = 100 (unpacked), [3, 2] = 7, [1, 1, 2] = 5 (recursion). */
static struct ty__buf
hand_profile(void)
{
    static const uint64_t l1[] = {1, 2, 0}, l2[] = {3, 0}, l4[] = {4, 0};
    static const uint64_t s1[] = {4, 1, 2}, s2[] = {3, 2}, s3[] = {1, 1, 2};
    struct ty__buf b = {0};

    add_type(&b, S_INUSE, S_BYTES);
    add_sample_unpacked(&b, s1, 3, 100);
    add_sample(&b, s2, 2, 7);
    add_sample(&b, s3, 3, 5);
    add_mapping(&b, 1, S_LIB);
    add_location(&b, 1, 0, 0x1000, l1);
    add_location(&b, 2, 0, 0x2000, l2);
    add_location(&b, 3, 1, 0x7f0012, NULL);
    add_location(&b, 4, 0, 0x3000, l4);
    add_function(&b, 1, S_INNER);
    add_function(&b, 2, S_OUTER);
    add_function(&b, 3, S_ROOT);
    add_function(&b, 4, S_MALLOC);
    add_strings(&b, strs, ARRAY_LEN(strs));
    ty__pb_uint(&b, 9, 1234);
    return b;
}

static void
t_hand_profile(void)
{
    struct ty__buf b = hand_profile();
    struct err err = {0};
    struct pprof_profile *p = pprof__parse(b.buf, b.len, "hand", &err);
    struct pprof_site *s = NULL;
    const struct pprof_site *x;
    size_t n;

    CHECK_MSG(p != NULL, "%s", err.msg);
    if (p == NULL) {
        ty__buf_release(&b);
        return;
    }
    CHECK_EQ_INT(pprof__time_ns(p), 1234);
    CHECK_EQ_INT(pprof__total(p, 0), 112);
    n = pprof__sites(p, 0, &s);
    CHECK(n > 0 && strcmp(s[0].function, "inner") == 0);
    x = site_named(s, n, "inner");
    CHECK(x && x->flat == 105 && x->cum == 105);
    x = site_named(s, n, "outer");
    CHECK(x && x->flat == 0 && x->cum == 105);
    x = site_named(s, n, "root");
    CHECK(x && x->flat == 0 && x->cum == 112);
    x = site_named(s, n, "libfoo.so.1+0x7f0012");
    CHECK(x && x->flat == 7);
    CHECK(site_named(s, n, "malloc") == NULL);
    free(s);
    pprof__destroy(&p);
    ty__buf_release(&b);
}

/* A stack of wrappers only is its own site (the innermost frame). */
static void
t_only_wrappers(void)
{
    static const uint64_t l1[] = {1, 0};
    static const uint64_t s1[] = {1};
    static const char *const st[] = {"", "inuse_space", "bytes", "malloc"};
    struct ty__buf b = {0};
    struct err err = {0};
    struct pprof_profile *p;
    struct pprof_site *s = NULL;

    add_type(&b, 1, 2);
    add_sample(&b, s1, 1, 64);
    add_location(&b, 1, 0, 0x10, l1);
    add_function(&b, 1, 3);
    add_strings(&b, st, 4);
    p = pprof__parse(b.buf, b.len, "w", &err);
    CHECK_MSG(p != NULL, "%s", err.msg);
    if (p != NULL) {
        CHECK_EQ_INT(pprof__sites(p, 0, &s), 1);
        CHECK(s && strcmp(s[0].function, "malloc") == 0 && s[0].flat == 64);
        free(s);
    }
    pprof__destroy(&p);
    ty__buf_release(&b);
}

static void
t_empty(void)
{
    static const char *const st[] = {"", "inuse_space", "bytes"};
    struct ty__buf b = {0};
    struct err err = {0};
    struct pprof_profile *p;
    struct pprof_site *s = (struct pprof_site *)&b;

    add_type(&b, 1, 2);
    add_strings(&b, st, 3);
    p = pprof__parse(b.buf, b.len, "e", &err);
    CHECK(p != NULL);
    if (p != NULL) {
        CHECK_EQ_INT(pprof__total(p, 0), 0);
        CHECK_EQ_INT(pprof__sites(p, 0, &s), 0);
        CHECK(s == NULL);
    }
    pprof__destroy(&p);
    pprof__destroy(&p); /* NULL-safe */
    ty__buf_release(&b);
}

static void
t_wrappers(void)
{
    static const struct {
        const char *name;
        bool wrapper;
    } cases[] = {
        {"malloc", true},
        {"calloc", true},
        {"realloc", true},
        {"strdup", true},
        {"__strdup", true},
        {"_Znwm", true},
        {"operator new", true},
        {"xmalloc", true},
        {"ty__heap_sample", false},
        {"ty__output_file", false},
        {"__libc_malloc", true},
        {"leak_round", false},
        {"mallocx_user", false},
        {"ty_publish", false},
        {"main", false},
        {"make_blocks", false},
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        CHECK_MSG(pprof__is_wrapper(cases[i].name) == cases[i].wrapper,
                  "%s: expected %s", cases[i].name,
                  cases[i].wrapper ? "a wrapper" : "a site");
}

/* ---- malformed input ---------------------------------------------------- */

static void
expect_error(const void *data, size_t len, const char *what, const char *want)
{
    struct err err = {0};
    struct pprof_profile *p = pprof__parse(data, len, "bad.pb", &err);

    CHECK_MSG(p == NULL, "%s: decoded", what);
    pprof__destroy(&p);
    CHECK_MSG(strstr(err.msg, want) != NULL &&
                  strncmp(err.msg, "bad.pb: ", 8) == 0,
              "%s: \"%s\" does not say \"%s\"", what, err.msg, want);
    CHECK_MSG(err.status == EXIT_DATAERR, "%s: status %d", what, err.status);
}

static void
t_malformed_bytes(void)
{
    static const struct {
        const char *what;
        uint8_t bytes[8];
        size_t len;
        const char *want;
    } cases[] = {
        {"no length", {0x0a}, 1, "byte 0: truncated length in Profile"},
        {"long field", {0x0a, 0x05, 0x08}, 3, "longer than its message"},
        {"group", {0x0b}, 1, "unsupported wire type"},
        {"varint", {0x48, 0xff}, 2, "truncated varint in Profile"},
        {"field 0", {0x00}, 1, "field number 0"},
        {"sample",
         {0x12, 0x02, 0x0a, 0x01},
         4,
         "byte 2: field longer than its message in Sample"},
        {"packed",
         {0x12, 0x03, 0x0a, 0x01, 0x80},
         5,
         "truncated packed varint in Sample.location_id"},
        {"time as bytes",
         {0x4a, 0x00},
         2,
         "expected a varint field in Profile.time_nanos"},
        {"sample as varint",
         {0x10, 0x01},
         2,
         "expected a message in Profile.sample"},
        {"strings", {0x32, 0x01, 'a'}, 3, "must start with \"\""},
        {"NUL", {0x32, 0x00, 0x32, 0x01, 0x00}, 5, "NUL byte"},
        {"empty", {0}, 0, "must start with \"\""},
        {"not gzip", {0x1f, 0x8b, 0x08, 0x00, 0x01, 0x02, 0x03}, 7, "gzip"},
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        expect_error(cases[i].bytes, cases[i].len, cases[i].what,
                     cases[i].want);
}

/* Profiles whose fields decode but do not fit together. */
static void
t_malformed_refs(void)
{
    static const char *const st[] = {"", "inuse_space", "bytes", "f"};
    static const uint64_t one[] = {1, 0}, nine[] = {9, 0};
    static const uint64_t l1[] = {1}, l5[] = {5};
    static const struct {
        const char *what, *want;
        int kind;
    } cases[] = {
        {"type string", "sample type 1: string index 40 out of range", 0},
        {"two values", "sample 1 has 2 values for 1 sample types", 1},
        {"no location", "refers to location 5", 2},
        {"no function", "location 1 refers to function 9", 3},
        {"same id", "two locations with id 1", 4},
        {"id 0", "location with id 0", 5},
        {"name string", "function 1: string index 77 out of range", 6},
        {"build id string", "mapping 1: string index 55 out of range", 7},
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct ty__buf b = {0}, m = {0};
        int k = cases[i].kind;
        uint64_t two[2] = {1, 2};

        add_type(&b, k == 0 ? 40 : 1, 2);
        add_strings(&b, st, 4);
        add_function(&b, 1, k == 6 ? 77 : 3);
        add_location(&b, k == 5 ? 0 : 1, 0, 0x10, k == 3 ? nine : one);
        if (k == 4)
            add_location(&b, 1, 0, 0x20, one);
        if (k == 7) {
            ty__pb_uint(&m, 1, 1);
            ty__pb_int(&m, 6, 55);
            pb_msg(&b, 3, &m);
        }
        if (k == 1) {
            ty__pb_packed(&m, 1, l1, 1);
            ty__pb_packed(&m, 2, two, 2);
            pb_msg(&b, 2, &m);
        } else {
            add_sample(&b, k == 2 ? l5 : l1, 1, 8);
        }
        expect_error(b.buf, b.len, cases[i].what, cases[i].want);
        ty__buf_release(&b);
    }
}

static void
t_malformed_gzip(void)
{
    struct ty__buf b = hand_profile();
    void *gz = NULL;
    size_t len = 0;

    CHECK_EQ_INT(ty__gzip(b.buf, b.len, &gz, &len), 0);
    expect_error(gz, len / 2, "cut gzip", "gzip data is cut short");
    ((uint8_t *)gz)[12] ^= 0xff;
    ((uint8_t *)gz)[13] ^= 0xff;
    expect_error(gz, len, "corrupt gzip", "gzip");
    free(gz);
    ty__buf_release(&b);
}

/* Every prefix of a valid profile, and thousands of corrupted copies,
 * decode or fail cleanly (the sanitizer build and valgrind watch). */
static void
t_fuzz(void)
{
    struct ty__buf b = hand_profile();
    cleanup_free uint8_t *copy = xmalloc(b.len);
    void *gz = NULL;
    size_t len = 0;
    uint64_t x = 0x9e3779b97f4a7c15ULL;

    CHECK_EQ_INT(ty__gzip(b.buf, b.len, &gz, &len), 0);
    for (size_t n = 0; n < len; n++) {
        struct err err = {0};
        struct pprof_profile *p = pprof__parse(gz, n, "cut", &err);

        CHECK_MSG(p == NULL && err.msg[0] != '\0', "gzip cut at %zu", n);
        pprof__destroy(&p);
    }
    for (int i = 0; i < 5000; i++) {
        struct err err = {0};
        struct pprof_profile *p;
        struct pprof_site *s = NULL;

        memcpy(copy, b.buf, b.len);
        for (int k = 0; k < 1 + i % 4; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            copy[x % b.len] ^= (uint8_t)(x >> 32);
        }
        p = pprof__parse(copy, b.len - (size_t)(i % 3), "fuzz", &err);
        CHECK_MSG(p != NULL || err.msg[0] != '\0', "case %d: no message", i);
        if (p != NULL) {
            pprof__sites(p, 0, &s);
            free(s);
        }
        pprof__destroy(&p);
    }
    free(gz);
    ty__buf_release(&b);
}

/* Two instances' profiles of a group add up, object by object, into the
 * words the report says once (report_syms.c). */
static void
report_words(const struct pprof_profile *p)
{
    struct report_site named = {.function = "main"},
                       bare = {.function = "memcached+0x1123"};
    struct report_group g = {.id = "providers", .sites = &named, .nsites = 1};
    char text[1024];

    report__syms_add(&g.syms, p, "providers/0/heap-x.pb.gz");
    report__syms_add(&g.syms, p, "providers/1/heap-x.pb.gz");
    CHECK_EQ_INT(g.syms.nprofiles, 2);
    CHECK_EQ_INT(g.syms.frames, 10);
    CHECK_EQ_INT(g.syms.unsymbolized, 8);
    CHECK_EQ_INT(g.syms.nobjects, 2);
    CHECK_EQ_STR(g.syms.objects[0].path, "/usr/bin/memcached");
    CHECK_EQ_INT(g.syms.objects[0].frames, 4);
    CHECK_EQ_INT(g.syms.objects[1].frames, 2);
    /* said only when a site shown is unnamed */
    report__syms_text(&g, text, sizeof(text));
    CHECK_EQ_STR(text, "");
    g.psites = &bare;
    g.npsites = 1;
    report__syms_text(&g, text, sizeof(text));
    CHECK_EQ_STR(text,
                 "8 of 10 frames in providers' profiles have no symbols: "
                 "/usr/bin/memcached (4) and /lib/libc.so.6 (2) have no "
                 "symbol table for them (install their debug symbols, e.g. "
                 "Debian's memcached-dbgsym, or point "
                 "TESTYARD_HEAP_DEBUG_DIRS at a folder with .build-id/; or "
                 "symbolize later: pprof /usr/bin/memcached "
                 "providers/0/heap-x.pb.gz)");
    report__syms_release(&g.syms);
    g.id = "db";
    report__syms_text(&g, text, sizeof(text));
    CHECK_EQ_STR(text, "");
    g.syms.frames = 9;
    g.syms.unsymbolized = 3;
    bare.function = "0x7f3a12c4";
    report__syms_text(&g, text, sizeof(text));
    CHECK_EQ_STR(text, "3 of 9 frames in db's profiles have no symbols: they "
                       "lie outside any file the program mapped (generated "
                       "code, or a file deleted since)");
}

/* A stripped program's profile as the SDK writes it: frames with an
 * address and a mapping (start, offset, file, build id) and no line. They
 * read "<object>+0x<file offset>", and pprof__symbols counts them per
 * object. */
static void
t_unsymbolized(void)
{
    static const char *const st[] = {
        "",       "inuse_space",   "bytes", "malloc", "/usr/bin/memcached",
        "abc123", "/lib/libc.so.6"};
    static const uint64_t lm[] = {1, 0};
    static const uint64_t s1[] = {1, 2, 3, 4}, s2[] = {1, 5, 4};
    struct ty__buf b = {0}, m = {0};
    struct err err = {0};
    struct pprof_profile *p;
    struct pprof_symbols sy;
    struct pprof_site *s = NULL;
    size_t n;

    add_type(&b, 1, 2);
    add_sample(&b, s1, 4, 300);
    add_sample(&b, s2, 3, 20);
    /* memcached's text mapped at 0x5000 from file offset 0x1000 */
    ty__pb_uint(&m, 1, 1);
    ty__pb_uint(&m, 2, 0x5000);
    ty__pb_uint(&m, 3, 0x9000);
    ty__pb_uint(&m, 4, 0x1000);
    ty__pb_int(&m, 5, 4);
    ty__pb_int(&m, 6, 5);
    pb_msg(&b, 3, &m);
    ty__pb_uint(&m, 1, 2);
    ty__pb_uint(&m, 2, 0x7f0000);
    ty__pb_int(&m, 5, 6);
    ty__pb_bool(&m, 7, true);
    pb_msg(&b, 3, &m);
    add_location(&b, 1, 2, 0x7f0010, lm);
    add_location(&b, 2, 1, 0x5123, NULL);
    add_location(&b, 3, 1, 0x6000, NULL);
    add_location(&b, 4, 2, 0x7f0400, NULL);
    add_location(&b, 5, 0, 0x42, NULL);
    add_function(&b, 1, 3);
    add_strings(&b, st, ARRAY_LEN(st));
    p = pprof__parse(b.buf, b.len, "stripped", &err);
    CHECK_MSG(p != NULL, "%s", err.msg);
    if (p != NULL) {
        n = pprof__sites(p, 0, &s);
        CHECK(n > 0 && strcmp(s[0].function, "memcached+0x1123") == 0);
        CHECK(site_named(s, n, "0x42") != NULL);
        CHECK(site_named(s, n, "memcached+0x2000") != NULL);
        pprof__symbols(p, &sy);
        CHECK_EQ_INT(sy.frames, 5);
        CHECK_EQ_INT(sy.unsymbolized, 4);
        CHECK_EQ_INT(sy.nobjects, 2);
        CHECK_EQ_STR(sy.objects[0].path, "/usr/bin/memcached");
        CHECK_EQ_STR(sy.objects[0].build_id, "abc123");
        CHECK_EQ_INT(sy.objects[0].frames, 2);
        CHECK_EQ_STR(sy.objects[1].path, "/lib/libc.so.6");
        CHECK_EQ_STR(sy.objects[1].build_id, "");
        CHECK_EQ_INT(sy.objects[1].frames, 1);
        free(s);
        report_words(p);
    }
    pprof__destroy(&p);
    ty__buf_release(&b);
}

static const struct th_case cases[] = {
    {"sdk_profile_totals", t_sdk_profile_totals},
    {"sdk_profile_sites", t_sdk_profile_sites},
    {"samples_and_testyard", t_samples_and_testyard},
    {"library_sites", t_library_sites},
    {"is_testyard", t_is_testyard},
    {"read_file", t_read_file},
    {"hand_profile", t_hand_profile},
    {"unsymbolized", t_unsymbolized},
    {"only_wrappers", t_only_wrappers},
    {"empty", t_empty},
    {"wrappers", t_wrappers},
    {"malformed_bytes", t_malformed_bytes},
    {"malformed_refs", t_malformed_refs},
    {"malformed_gzip", t_malformed_gzip},
    {"fuzz", t_fuzz},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

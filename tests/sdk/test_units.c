/*
 * test_units.c — sizes, durations, cpu amounts and signal names as users
 * write them.
 */
#include "th.h"
#include "ty_units.h"

#include <signal.h>
#include <string.h>

static uint64_t
size_of(const char *s)
{
    char why[256];
    uint64_t v = 0;

    if (ty__parse_size(s, &v, why, sizeof(why)) < 0)
        return UINT64_MAX;
    return v;
}

static void
t_sizes_iec(void)
{
    CHECK_EQ_INT(size_of("512Mi"), 512ULL << 20);
    CHECK_EQ_INT(size_of("2048Mi"), 2048ULL << 20);
    CHECK_EQ_INT(size_of("1GiB"), 1ULL << 30);
    CHECK_EQ_INT(size_of("1.5Gi"), 3ULL << 29);
    CHECK_EQ_INT(size_of("64Ki"), 65536);
    CHECK_EQ_INT(size_of("1Ti"), 1ULL << 40);
    CHECK_EQ_STR(ty__size_system("512Mi"), "IEC");
}

static void
t_sizes_si(void)
{
    CHECK_EQ_INT(size_of("512MB"), 512000000ULL);
    CHECK_EQ_INT(size_of("8GB"), 8000000000ULL);
    CHECK_EQ_INT(size_of("100k"), 100000);
    CHECK_EQ_INT(size_of("1M"), 1000000);
    CHECK_EQ_INT(size_of("4096"), 4096);
    CHECK_EQ_INT(size_of("4096B"), 4096);
    CHECK_EQ_INT(size_of("0"), 0);
    CHECK_EQ_STR(ty__size_system("512MB"), "SI");
    CHECK_EQ_STR(ty__size_system("12"), "bytes");
}

static void
t_sizes_bad(void)
{
    static const char *bad[] = {"",
                                "lots",
                                "12 MB",
                                " 12",
                                "1e3",
                                "0x10",
                                "-5",
                                "1.",
                                ".5Mi",
                                "5Mib",
                                "MB",
                                "1.5.5",
                                "99999999999999999999",
                                "20000000TiB"};
    char why[256];
    uint64_t v;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_MSG(ty__parse_size(bad[i], &v, why, sizeof(why)) < 0,
                  "\"%s\" accepted as %llu", bad[i], (unsigned long long)v);
    CHECK(ty__parse_size("512m", &v, why, sizeof(why)) < 0);
    CHECK_CONTAINS(why, "ambiguous");
    CHECK(ty__parse_size("lots", &v, why, sizeof(why)) < 0);
    CHECK_CONTAINS(why, "512Mi");
}

static int64_t
dur(const char *s)
{
    char why[256];
    int64_t v = 0;

    if (ty__parse_duration(s, &v, why, sizeof(why)) < 0)
        return -1;
    return v;
}

static void
t_durations(void)
{
    CHECK_EQ_INT(dur("250ms"), 250000000LL);
    CHECK_EQ_INT(dur("30s"), 30000000000LL);
    CHECK_EQ_INT(dur("10m"), 600000000000LL);
    CHECK_EQ_INT(dur("1h"), 3600000000000LL);
    CHECK_EQ_INT(dur("1m30s"), 90000000000LL);
    CHECK_EQ_INT(dur("1.5s"), 1500000000LL);
    CHECK_EQ_INT(dur("100us"), 100000);
    CHECK_EQ_INT(dur("7ns"), 7);
    CHECK_EQ_INT(dur("0"), 0);
    CHECK_EQ_INT(dur("0s"), 0);
    CHECK_EQ_INT(dur(""), -1);
    CHECK_EQ_INT(dur("30"), -1);
    CHECK_EQ_INT(dur("s"), -1);
    CHECK_EQ_INT(dur("5 s"), -1);
    CHECK_EQ_INT(dur("5d"), -1);
    CHECK_EQ_INT(dur("-5s"), -1);
    CHECK_EQ_INT(dur("9999999999h"), -1);
}

static int64_t
cpu(const char *s)
{
    char why[256];
    int64_t v = 0;

    if (ty__parse_cpu(s, &v, why, sizeof(why)) < 0)
        return -1;
    return v;
}

static void
t_cpu(void)
{
    CHECK_EQ_INT(cpu("1000m"), 1000);
    CHECK_EQ_INT(cpu("250m"), 250);
    CHECK_EQ_INT(cpu("0.5"), 500);
    CHECK_EQ_INT(cpu("2"), 2000);
    CHECK_EQ_INT(cpu("1.25"), 1250);
    CHECK_EQ_INT(cpu("0"), -1);
    CHECK_EQ_INT(cpu("0m"), -1);
    CHECK_EQ_INT(cpu("1.5m"), -1);
    CHECK_EQ_INT(cpu("two"), -1);
    CHECK_EQ_INT(cpu("2cpu"), -1);
    CHECK_EQ_INT(cpu("5000"), -1);
}

static void
t_format(void)
{
    char buf[64];

    ty__format_bytes(512ULL << 20, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "512.0 MiB");
    ty__format_bytes(100, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "100 B");
    ty__format_bytes_tick(0, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "0 B");
    ty__format_bytes_tick(512.0 * 1024, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "512 KiB");
    ty__format_bytes_tick(1.5 * 1024 * 1024, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "1.5 MiB");
}

/* Every duration testyard prints, at each edge between two forms. */
static void
t_format_duration(void)
{
    static const struct {
        int64_t ns;
        const char *want;
    } cases[] = {
        {-1, "-"},
        {0, "0 ns"},
        {999, "999 ns"},
        {1000, "1 us"},
        {1999, "1 us"},
        {999999, "999 us"},
        {1000000, "1 ms"},
        {850000000, "850 ms"},
        {999999999, "999 ms"},
        {1000000000, "1.0 s"},
        {1500000000, "1.5 s"},
        {12345000000, "12.3 s"},
        {30410000000, "30.4 s"},
        {599900000000, "599.9 s"},
        {600000000000, "10m00s"},
        {3723000000000, "62m03s"},
        {INT64_MAX, "153722867m16s"},
    };
    char buf[32];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ty__format_duration(cases[i].ns, buf, sizeof(buf));
        CHECK_MSG(strcmp(buf, cases[i].want) == 0,
                  "%lld ns: \"%s\", want \"%s\"", (long long)cases[i].ns, buf,
                  cases[i].want);
    }
}

/* TESTYARD_HEAP_SIGNAL's names, read by the profiler and by the
 * coordinator alike. */
static void
t_signals(void)
{
    CHECK_EQ_INT(ty__parse_signal("USR1"), SIGUSR1);
    CHECK_EQ_INT(ty__parse_signal("SIGUSR2"), SIGUSR2);
    CHECK_EQ_INT(ty__parse_signal("RTMIN+0"), SIGRTMIN);
    CHECK_EQ_INT(ty__parse_signal("RTMIN+3"), SIGRTMIN + 3);
    CHECK_EQ_INT(ty__parse_signal("12"), 12);
    CHECK_EQ_INT(ty__parse_signal("none"), 0);
    CHECK_EQ_INT(ty__parse_signal("0"), 0);
    CHECK_EQ_INT(ty__parse_signal("RTMIN+999"), -1);
    CHECK_EQ_INT(ty__parse_signal("RTMIN+"), -1);
    CHECK_EQ_INT(ty__parse_signal("999"), -1);
    CHECK_EQ_INT(ty__parse_signal(""), -1);
    CHECK_EQ_INT(ty__parse_signal("TERM"), -1);
}

static const struct th_case cases[] = {
    {"sizes_iec", t_sizes_iec},
    {"sizes_si", t_sizes_si},
    {"sizes_bad", t_sizes_bad},
    {"durations", t_durations},
    {"cpu", t_cpu},
    {"format", t_format},
    {"format_duration", t_format_duration},
    {"signals", t_signals},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

/*
 * test_time.c — RFC 3339 times as testyard writes them and as it reads
 * them back (reports, Docker's container states): offsets, fractions of
 * any length, and input that must be refused.
 */
#include "th.h"
#include "ty_time.h"

#include <errno.h>
#include <string.h>

#define NS INT64_C(1000000000)

/* The parse of s, or the negative errno it failed with. */
static int64_t
parse(const char *s)
{
    int64_t ns = -1;
    int rc = ty__parse_rfc3339(s, &ns);

    return rc < 0 ? rc : ns;
}

static void
t_utc(void)
{
    CHECK_EQ_INT(parse("1970-01-01T00:00:00Z"), 0);
    CHECK_EQ_INT(parse("1970-01-01T00:00:01Z"), NS);
    CHECK_EQ_INT(parse("2026-11-29T18:45:29Z"), 1795977929 * NS);
    CHECK_EQ_INT(parse("2000-02-29T00:00:00Z"), 951782400 * NS);
    CHECK_EQ_INT(parse("2026-11-29T18:45:29"), 1795977929 * NS);
}

static void
t_fractions(void)
{
    CHECK_EQ_INT(parse("1970-01-01T00:00:01.5Z"), 1500000000);
    CHECK_EQ_INT(parse("1970-01-01T00:00:00.123Z"), 123000000);
    CHECK_EQ_INT(parse("2026-11-29T18:55:35.765388609Z"),
                 1795978535 * NS + 765388609);
    /* past nanoseconds: dropped, not rounded */
    CHECK_EQ_INT(parse("1970-01-01T00:00:00.0000000019999Z"), 1);
}

static void
t_offsets(void)
{
    CHECK_EQ_INT(parse("2026-11-29T20:45:29+02:00"), 1795977929 * NS);
    CHECK_EQ_INT(parse("2026-11-29T13:15:29.25-05:30"),
                 1795977929 * NS + 250000000);
    CHECK_EQ_INT(parse("2026-11-29T18:45:29+00:00"), 1795977929 * NS);
    /* the offset moves the day */
    CHECK_EQ_INT(parse("2026-11-30T00:30:00+01:00"),
                 parse("2026-11-29T23:30:00Z"));
}

static void
t_range(void)
{
    CHECK_EQ_INT(parse("0001-01-01T00:00:00Z"), -ERANGE);
    CHECK_EQ_INT(parse("1969-12-31T23:59:59Z"), -ERANGE);
    CHECK_EQ_INT(parse("1970-01-01T00:30:00+01:00"), -ERANGE);
    CHECK(parse("2262-04-11T23:47:15Z") > 0);
    CHECK_EQ_INT(parse("2262-04-11T23:47:16Z"), -ERANGE);
    CHECK_EQ_INT(parse("9999-12-31T23:59:59Z"), -ERANGE);
}

static void
t_bad(void)
{
    static const char *const bad[] = {
        "",
        "2026-11-29",
        "2026-11-29 18:45:29Z",
        "2026-11-29T18:45Z",
        "2026-1-29T18:45:29Z",
        "2026-11-29T18:45:29.Z",
        "2026-11-29T18:45:29ZZ",
        "2026-11-29T18:45:29Z ",
        "2026-11-29T18:45:29+2:00",
        "2026-11-29T18:45:29+02",
        "2026-11-29T18:45:29+24:00",
        "2026-11-29T18:45:29 UTC",
        "2026-13-01T00:00:00Z",
        "2026-00-01T00:00:00Z",
        "2026-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-11-29T24:00:00Z",
        "2026-11-29T18:60:00Z",
        "2026-11-29T18:45:61Z",
        " 2026-11-29T18:45:29Z",
        "+026-11-29T18:45:29Z",
    };
    int64_t ns = 42;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK_MSG(parse(bad[i]) == -EINVAL, "\"%s\": %lld", bad[i],
                  (long long)parse(bad[i]));
    CHECK_EQ_INT(ty__parse_rfc3339(NULL, &ns), -EINVAL);
    CHECK_EQ_INT(ns, 42);
}

/* What the formatter writes, the parser reads back. */
static void
t_round_trip(void)
{
    static const int64_t times[] = {0, 1795977929123000000LL,
                                    951868800999000000LL};
    char buf[TY_RFC3339_LEN + 1];

    for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
        ty__format_rfc3339(times[i], buf, sizeof(buf));
        CHECK_MSG(parse(buf) == times[i], "%s: %lld", buf,
                  (long long)parse(buf));
    }
}

static const struct th_case cases[] = {
    {"utc", t_utc},         {"fractions", t_fractions},
    {"offsets", t_offsets}, {"range", t_range},
    {"bad", t_bad},         {"round_trip", t_round_trip},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

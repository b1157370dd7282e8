/*
 * test_schedule.c — recurring runs (daemon/schedule_int.h): cron parsing
 * and its errors, the next and the owed firing (month ends, Feb 29, the
 * day-of-month/day-of-week rule, names, steps, "every" anchoring), time
 * zones read from TZif against libc and across DST in Europe/Berlin and
 * America/New_York. What schedules keep and run (the database, the build,
 * the version, the clock) is test_schedule_db.c's.
 */
#include "daemon/schedule_int.h"

#include "base/util.h"
#include "sched_fixture.h"
#include "th.h"
#include "th_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK_TIME(got, want)                                                  \
    do {                                                                       \
        int64_t g_ = (got), w_ = (want);                                       \
        char gb_[32], wb_[32];                                                 \
        if (g_ != w_)                                                          \
            th_fail(__FILE__, __LINE__, "%s: %s, expected %s", #got,           \
                    fx_fmt(g_, gb_), fx_fmt(w_, wb_));                         \
    } while (0)

static bool
have_zone(const char *name)
{
    char *p = path_join("/usr/share/zoneinfo", name);
    bool ok = path_exists(p);

    free(p);
    return ok;
}

/* ---- cron parsing ---- */

static void
t_cron_valid(void)
{
    struct schedule_cron c;
    struct err err = {0};

    CHECK_EQ_INT(schedule__cron_parse("* * * * *", &c, &err), 0);
    CHECK(c.minute == (1ull << 60) - 1);
    CHECK_EQ_INT(c.hour, (1u << 24) - 1);
    CHECK_EQ_INT(c.dom, 0xfffffffeu);
    CHECK_EQ_INT(c.month, 0x1ffe);
    CHECK_EQ_INT(c.dow, 0x7f);
    CHECK(c.dom_any && c.dow_any && !c.fixed_time);

    CHECK_EQ_INT(schedule__cron_parse("0,30 2-4 */10 jan-MAR,Dec 7", &c, &err),
                 0);
    CHECK(c.minute == (1ull | 1ull << 30));
    CHECK_EQ_INT(c.hour, 0x1c);
    CHECK_EQ_INT(c.dom, 1u << 1 | 1u << 11 | 1u << 21 | 1u << 31);
    CHECK_EQ_INT(c.month, 1 << 1 | 1 << 2 | 1 << 3 | 1 << 12);
    CHECK_EQ_INT(c.dow, 1); /* 7 is Sunday */
    CHECK(!c.dom_any && !c.dow_any && c.fixed_time);

    CHECK_EQ_INT(schedule__cron_parse("  5-50/15\t*  1 * mon-fri ", &c, &err),
                 0);
    CHECK(c.minute == (1ull << 5 | 1ull << 20 | 1ull << 35 | 1ull << 50));
    CHECK_EQ_INT(c.dow, 0x3e);
    CHECK(!c.fixed_time && !c.dom_any && !c.dow_any);

    CHECK_EQ_INT(schedule__cron_parse("0 0 * * sat-7", &c, &err), 0);
    CHECK_EQ_INT(c.dow, 1 | 1 << 6);
    CHECK_EQ_INT(schedule__cron_parse("0 0 29 feb *", &c, &err), 0);
    CHECK_EQ_STR(err.msg, "");
}

static void
t_cron_errors(void)
{
    static const struct {
        const char *expr, *msg;
    } cases[] = {
        {"* * * *", "found 4 fields in \"* * * *\", expected 5: minute hour "
                    "day-of-month month day-of-week"},
        {"* * * * * *", "found 6 fields"},
        {"", "found 0 fields"},
        {"60 * * * *",
         "field 1 (minute): found \"60\", expected a number from 0 to 59"},
        {"* 24 * * *",
         "field 2 (hour): found \"24\", expected a number from 0 to 23"},
        {"* * 0 * *", "field 3 (day of month): found \"0\", expected a "
                      "number from 1 to 31"},
        {"* * 32 * *", "field 3 (day of month): found \"32\""},
        {"* * * 13 *", "field 4 (month): found \"13\", expected a number from "
                       "1 to 12 or jan to dec"},
        {"* * * janu *", "field 4 (month): found \"janu\""},
        {"* * * * 8", "field 5 (day of week): found \"8\", expected a number "
                      "from 0 to 7 (0 and 7 are Sunday) or sun to sat"},
        {"* * * * fri-sun",
         "field 5 (day of week): found \"fri-sun\", expected a range a-b "
         "with a not after b"},
        {"5-2 * * * *", "field 1 (minute): found \"5-2\""},
        {"*/0 * * * *",
         "field 1 (minute): found \"*/0\", expected a step from 1 to 59"},
        {"*/x * * * *", "field 1 (minute): found \"*/x\""},
        {"* */25 * * *", "field 2 (hour): found \"*/25\", expected a step "
                         "from 1 to 23"},
        {"5/10 * * * *", "field 1 (minute): found \"5/10\", expected a step "
                         "after * or a range a-b"},
        {"1,,2 * * * *",
         "field 1 (minute): found \"\", expected a value, a range or a step "
         "between commas"},
        {"1, * * * *", "field 1 (minute): found \"\""},
        {"a-5 * * * *",
         "field 1 (minute): found \"a-5\", expected a range a-b of a number "
         "from 0 to 59"},
        {"-1 * * * *", "field 1 (minute): found \"-1\""},
        {"0 0 31 apr,jun *",
         "field 3 (day of month): found \"31\", expected a day that the "
         "months of field 4 (\"apr,jun\") have"},
        {"0 0 30 2 *", "field 3 (day of month): found \"30\""},
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct schedule_cron c;
        struct err err = {0};

        CHECK_MSG(schedule__cron_parse(cases[i].expr, &c, &err) == -1,
                  "\"%s\" parsed", cases[i].expr);
        CHECK_EQ_INT(err.code, EINVAL);
        CHECK_CONTAINS(err.msg, cases[i].msg);
    }
}

static void
t_spec_text(void)
{
    struct schedule_spec s;
    struct err err = {0};

    CHECK_EQ_INT(schedule__spec_init(&s, "cron 0 3 * * *", NULL, 0, &err), 0);
    CHECK_EQ_INT(s.kind, SCHEDULE_CRON);
    CHECK_EQ_STR(schedule__tz_name(s.tz), "UTC");
    schedule__spec_release(&s);
    CHECK(s.tz == NULL);
    CHECK_EQ_INT(schedule__spec_init(&s, "every 1h30m", "UTC", 0, &err), 0);
    CHECK_EQ_INT(s.every_s, 5400);
    schedule__spec_release(&s);

    CHECK_EQ_INT(schedule__spec_init(&s, "daily", NULL, 0, &err), -1);
    CHECK_EQ_STR(err.msg, "schedule \"daily\": expected \"every DURATION\" "
                          "or \"cron M H DOM MON DOW\"");
    CHECK_EQ_INT(schedule__spec_init(&s, "cron 0 3 * *", NULL, 0, &err), -1);
    CHECK_CONTAINS(err.msg, "--cron: found 4 fields");
    CHECK_EQ_INT(schedule__spec_init(&s, "every 30s", NULL, 0, &err), -1);
    CHECK_EQ_STR(err.msg, "--every: found \"30s\", expected at least 1m (a "
                          "schedule fires at most once a minute)");
    CHECK_EQ_INT(schedule__spec_init(&s, "every 90500ms", NULL, 0, &err), -1);
    CHECK_CONTAINS(err.msg, "expected a whole number of seconds");
    CHECK_EQ_INT(schedule__spec_init(&s, "every soon", NULL, 0, &err), -1);
    CHECK_CONTAINS(err.msg, "--every: found \"soon\", expected");
    CHECK_EQ_INT(schedule__spec_init(&s, "every 24h", "Mars/Olympus", 0, &err),
                 -1);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK_CONTAINS(err.msg, "--tz: time zone \"Mars/Olympus\": no such zone");
    CHECK_EQ_INT(schedule__spec_init(&s, "every 24h", "../etc/passwd", 0, &err),
                 -1);
    CHECK_EQ_INT(err.code, EINVAL);
    CHECK_CONTAINS(err.msg, "expected an IANA name like Europe/Berlin, or UTC");
    CHECK_EQ_INT(
        schedule__spec_init(&s, "every 24h", "/etc/localtime", 0, &err), -1);
    CHECK_EQ_INT(err.code, EINVAL);
}

/* ---- next firing, UTC ---- */

static void
t_next_utc(void)
{
    static const struct {
        const char *expr, *after, *next;
    } cases[] = {
        {"* * * * *", "2026-03-01T10:00:00Z", "2026-03-01T10:01:00Z"},
        {"* * * * *", "2026-03-01T10:00:59Z", "2026-03-01T10:01:00Z"},
        {"30 2 * * *", "2026-03-01T02:30:00Z", "2026-03-02T02:30:00Z"},
        {"30 2 * * *", "2026-03-01T02:29:59Z", "2026-03-01T02:30:00Z"},
        {"*/15 * * * *", "2026-03-01T10:07:00Z", "2026-03-01T10:15:00Z"},
        {"5-50/15 * * * *", "2026-03-01T10:36:00Z", "2026-03-01T10:50:00Z"},
        {"5-50/15 * * * *", "2026-03-01T10:50:00Z", "2026-03-01T11:05:00Z"},
        /* month ends and the year's end */
        {"0 0 31 * *", "2026-04-01T00:00:00Z", "2026-05-31T00:00:00Z"},
        {"0 0 30 * *", "2026-01-30T00:00:00Z", "2026-03-30T00:00:00Z"},
        {"0 0 1 * *", "2026-12-15T00:00:00Z", "2027-01-01T00:00:00Z"},
        {"59 23 31 12 *", "2026-01-01T00:00:00Z", "2026-12-31T23:59:00Z"},
        /* Feb 29: leap years only, and 2100 is none */
        {"0 12 29 2 *", "2026-03-01T00:00:00Z", "2028-02-29T12:00:00Z"},
        {"0 12 29 feb *", "2096-03-01T00:00:00Z", "2104-02-29T12:00:00Z"},
        /* weekday names; 2026-03-01 is a Sunday */
        {"0 9 * * mon", "2026-03-01T10:00:00Z", "2026-03-02T09:00:00Z"},
        {"0 9 * * SAT,sun", "2026-03-02T00:00:00Z", "2026-03-07T09:00:00Z"},
        {"0 9 * * 7", "2026-03-02T00:00:00Z", "2026-03-08T09:00:00Z"},
        {"0 9 * * 1-5", "2026-03-06T09:00:00Z", "2026-03-09T09:00:00Z"},
        /* both day fields restricted: either matches */
        {"0 0 13 * fri", "2026-03-01T00:00:00Z", "2026-03-06T00:00:00Z"},
        {"0 0 13 * fri", "2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z"},
        {"0 0 13 * fri", "2026-03-13T00:00:00Z", "2026-03-20T00:00:00Z"},
        {"0 0 1 * mon", "2026-03-24T00:00:00Z", "2026-03-30T00:00:00Z"},
        {"0 0 1 * mon", "2026-03-30T00:00:00Z", "2026-04-01T00:00:00Z"},
        /* one of them "*": the other alone */
        {"0 0 * * fri", "2026-03-13T00:00:00Z", "2026-03-20T00:00:00Z"},
        {"0 0 13 * *", "2026-03-13T00:00:00Z", "2026-04-13T00:00:00Z"},
        /* a step in the day of month still restricts it */
        {"0 0 */10 * mon", "2026-03-02T00:00:00Z", "2026-03-09T00:00:00Z"},
        {"0 0 */10 * mon", "2026-03-09T00:00:00Z", "2026-03-11T00:00:00Z"},
        /* months and steps of months */
        {"0 0 1 */3 *", "2026-02-01T00:00:00Z", "2026-04-01T00:00:00Z"},
        {"0 6 15 jun,sep *", "2026-07-01T00:00:00Z", "2026-09-15T06:00:00Z"},
        {"0 0 31 jan,apr *", "2026-02-01T00:00:00Z", "2027-01-31T00:00:00Z"},
        {"0 */6 * * *", "2026-03-01T23:00:00Z", "2026-03-02T00:00:00Z"},
    };

    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct schedule_spec s;
        struct err err = {0};
        char *text = xasprintf("cron %s", cases[i].expr);
        int64_t next;

        CHECK_EQ_INT(schedule__spec_init(&s, text, "UTC", 0, &err), 0);
        next = schedule__next(&s, T(cases[i].after));
        CHECK_MSG(next == T(cases[i].next), "%s after %s: %s, expected %s",
                  cases[i].expr, cases[i].after, fx_fmt(next, (char[32]){0}),
                  cases[i].next);
        /* and back: the latest firing at that time is that time */
        CHECK_TIME(schedule__prev(&s, next), next);
        CHECK(schedule__prev(&s, next - 1) < next);
        schedule__spec_release(&s);
        free(text);
    }
}

static void
t_next_walk(void)
{
    /* every firing of a month, one after another: April 2026 has four
     * Fridays, and its 13th is a Monday */
    struct schedule_spec s;
    struct err err = {0};
    int64_t t = T("2026-04-01T00:00:00Z"), end = T("2026-05-01T00:00:00Z");
    int n = 0;

    CHECK_EQ_INT(schedule__spec_init(&s, "cron 0 0 13 * 5", NULL, 0, &err), 0);
    while ((t = schedule__next(&s, t)) < end)
        n++;
    CHECK_EQ_INT(n, 5);
    schedule__spec_release(&s);
}

static void
t_created_gates(void)
{
    struct schedule_spec s;
    struct err err = {0};
    int64_t created = T("2026-03-01T12:00:00Z");

    CHECK_EQ_INT(schedule__spec_init(&s, "cron 0 3 * * *", NULL, created, &err),
                 0);
    /* nothing before the schedule existed */
    CHECK_TIME(schedule__next(&s, T("2020-01-01T00:00:00Z")),
               T("2026-03-02T03:00:00Z"));
    CHECK_TIME(schedule__prev(&s, T("2026-03-02T02:59:59Z")), -1);
    schedule__spec_release(&s);
}

/* ---- every ---- */

static void
t_every_anchor(void)
{
    struct schedule_spec s;
    struct err err = {0};
    int64_t c = T("2026-03-01T14:05:17Z");
    int64_t fire;

    CHECK_EQ_INT(schedule__spec_init(&s, "every 24h", "Europe/Berlin", c, &err),
                 0);
    CHECK_TIME(schedule__next(&s, c), c + 86400);
    CHECK_TIME(schedule__next(&s, 0), c + 86400);
    CHECK_TIME(schedule__next(&s, c + 86400), c + 2 * 86400);
    CHECK_TIME(schedule__next(&s, c + 86399), c + 86400);
    /* whole periods from creation in UTC, whatever the zone's DST does */
    CHECK_TIME(schedule__next(&s, c + 40 * 86400 + 5), c + 41 * 86400);
    CHECK_TIME(schedule__prev(&s, c + 86399), -1);
    CHECK_TIME(schedule__prev(&s, c + 3 * 86400 + 7), c + 3 * 86400);
    /* three days down: one firing, the latest */
    CHECK_EQ_INT(schedule__due(&s, c + 86400, c + 4 * 86400 + 60, &fire), 1);
    CHECK_TIME(fire, c + 4 * 86400);
    CHECK_EQ_INT(schedule__due(&s, fire, c + 4 * 86400 + 120, &fire), 0);
    schedule__spec_release(&s);

    CHECK_EQ_INT(schedule__spec_init(&s, "every 1m", NULL, c, &err), 0);
    CHECK_TIME(schedule__next(&s, c + 30), c + 60);
    schedule__spec_release(&s);
}

static void
t_due_missed_once(void)
{
    struct schedule_spec s;
    struct err err = {0};
    int64_t c = T("2026-03-01T00:00:00Z"), fire = 0, now, last;
    int n = 0;

    CHECK_EQ_INT(schedule__spec_init(&s, "cron 0 3 * * *", NULL, c, &err), 0);
    /* never fired, before the first firing: nothing owed */
    CHECK_EQ_INT(schedule__due(&s, -1, T("2026-03-01T02:59:00Z"), &fire), 0);
    /* never fired, just after: that one */
    CHECK_EQ_INT(schedule__due(&s, -1, T("2026-03-01T03:00:00Z"), &fire), 1);
    CHECK_TIME(fire, T("2026-03-01T03:00:00Z"));
    /* down from March 1st 03:00 to March 4th noon: three missed, one due,
     * the latest; then nothing until the next */
    last = T("2026-03-01T03:00:00Z");
    now = T("2026-03-04T12:00:00Z");
    while (schedule__due(&s, last, now, &fire) == 1 && n < 10) {
        last = fire;
        n++;
    }
    CHECK_EQ_INT(n, 1);
    CHECK_TIME(last, T("2026-03-04T03:00:00Z"));
    CHECK_TIME(schedule__next(&s, now), T("2026-03-05T03:00:00Z"));
    /* a clock that went back owes nothing */
    CHECK_EQ_INT(schedule__due(&s, last, T("2026-03-02T12:00:00Z"), &fire), 0);
    schedule__spec_release(&s);

    /* every minute, down a day: still one */
    CHECK_EQ_INT(schedule__spec_init(&s, "cron * * * * *", NULL, c, &err), 0);
    CHECK_EQ_INT(schedule__due(&s, c + 60, c + 86400 + 30, &fire), 1);
    CHECK_TIME(fire, c + 86400);
    schedule__spec_release(&s);
}

/* ---- time zones ---- */

/* The offset libc gives at t under TZ=zone (a test is one thread). */
static long
libc_offset(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;

    localtime_r(&tt, &tm);
    return tm.tm_gmtoff;
}

/* The first second in (lo, hi] whose offset differs from lo's. */
static int64_t
libc_change(int64_t lo, int64_t hi)
{
    long before = libc_offset(lo);

    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;

        if (libc_offset(mid) == before)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

static void
t_tz_matches_libc(void)
{
    static const char *const zones[] = {
        "Europe/Berlin",       "America/New_York",  "Australia/Sydney",
        "Asia/Kolkata",        "America/Sao_Paulo", "Pacific/Chatham",
        "Australia/Lord_Howe", "Africa/Casablanca", "Europe/London",
        "America/St_Johns",
    };
    struct err err = {0};
    int checked = 0;

    for (size_t z = 0; z < ARRAY_LEN(zones); z++) {
        struct schedule_tz *tz;
        int bad = 0;

        if (!have_zone(zones[z]))
            continue;
        tz = schedule__tz_load(zones[z], &err);
        CHECK_MSG(tz != NULL, "%s: %s", zones[z], err.msg);
        if (tz == NULL)
            continue;
        setenv("TZ", zones[z], 1);
        tzset();
        /* 1970 to 2100 a day at a time, both sides of the tables' end
         * (2037); at each change libc finds the second it happens, and
         * both sides of it must agree */
        for (int64_t t = 0; t < 4102444800LL && bad < 3; t += 86400) {
            long want = libc_offset(t);
            int64_t at = t;

            if (t > 0 && libc_offset(t - 86400) != want)
                at = libc_change(t - 86400, t);
            for (int64_t u = at - 1; u <= at && bad < 3; u++) {
                if (schedule__tz_offset(tz, u) != libc_offset(u)) {
                    th_fail(__FILE__, __LINE__, "%s at %lld: %d, libc %ld",
                            zones[z], (long long)u, schedule__tz_offset(tz, u),
                            libc_offset(u));
                    bad++;
                }
            }
            checked++;
        }
        schedule__tz_destroy(&tz);
        CHECK(tz == NULL);
    }
    if (checked == 0)
        th_skip("no zones in /usr/share/zoneinfo");
}

static void
t_tz_bad_files(void)
{
    struct err err = {0};
    struct schedule_tz *tz;

    th_write(th_tmpdir(), "Bad/Zone", "not a zone file\n");
    th_write(th_tmpdir(), "Bad/Short", "TZif2");
    setenv("TZDIR", th_tmpdir(), 1);
    tz = schedule__tz_load("Bad/Zone", &err);
    CHECK(tz == NULL);
    CHECK_EQ_INT(err.code, EINVAL);
    CHECK_CONTAINS(err.msg, "time zone \"Bad/Zone\": ");
    CHECK_CONTAINS(err.msg, "is not a TZif file");
    CHECK(schedule__tz_load("Bad/Short", &err) == NULL);
    CHECK(schedule__tz_load("Bad/None", &err) == NULL);
    CHECK_EQ_INT(err.code, ENOENT);
    CHECK(schedule__tz_load("Bad//Zone", &err) == NULL);
    CHECK(schedule__tz_load("Bad/", &err) == NULL);
    CHECK(schedule__tz_load("Bad Zone", &err) == NULL);
    CHECK_EQ_INT(err.code, EINVAL);
    unsetenv("TZDIR");
    /* UTC is built in */
    tz = schedule__tz_load("UTC", &err);
    CHECK(tz != NULL);
    CHECK_EQ_INT(schedule__tz_offset(tz, T("2026-07-01T00:00:00Z")), 0);
    schedule__tz_destroy(&tz);
    schedule__tz_destroy(&tz);
}

struct dst_case {
    const char *expr, *after, *next;
};

static void
dst_cases(const char *zone, const struct dst_case *cases, size_t n)
{
    if (!have_zone(zone))
        th_skip("no tzdata for this zone in /usr/share/zoneinfo");
    for (size_t i = 0; i < n; i++) {
        struct schedule_spec s;
        struct err err = {0};
        char *text = xasprintf("cron %s", cases[i].expr);
        int64_t next;

        CHECK_EQ_INT(schedule__spec_init(&s, text, zone, 0, &err), 0);
        next = schedule__next(&s, T(cases[i].after));
        CHECK_MSG(next == T(cases[i].next), "%s %s after %s: %s, expected %s",
                  zone, cases[i].expr, cases[i].after,
                  fx_fmt(next, (char[32]){0}), cases[i].next);
        CHECK_TIME(schedule__prev(&s, next), next);
        schedule__spec_release(&s);
        free(text);
    }
}

/* Germany: forward 2026-03-29 02:00 CET → 03:00 CEST (01:00Z), back
 * 2026-10-25 03:00 CEST → 02:00 CET (01:00Z). */
static void
t_dst_berlin(void)
{
    static const struct dst_case cases[] = {
        /* an ordinary day: 02:30 CET is 01:30Z */
        {"30 2 * * *", "2026-03-27T12:00:00Z", "2026-03-28T01:30:00Z"},
        /* 02:30 does not exist on the 29th: it fires at the jump, 03:00
         * CEST, and the next day at 02:30 CEST again */
        {"30 2 * * *", "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z"},
        {"30 2 * * *", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"},
        {"0,30 2 * * *", "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z"},
        {"0,30 2 * * *", "2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z"},
        /* with '*' in minute or hour the missing times just do not fire */
        {"30 * * * *", "2026-03-29T00:30:00Z", "2026-03-29T01:30:00Z"},
        {"*/20 * * * *", "2026-03-29T00:40:00Z", "2026-03-29T01:00:00Z"},
        /* 03:00 exists: at the jump itself */
        {"0 3 * * *", "2026-03-28T12:00:00Z", "2026-03-29T01:00:00Z"},
        /* the repeated hour fires once, at the first 02:30 (CEST) */
        {"30 2 * * *", "2026-10-24T12:00:00Z", "2026-10-25T00:30:00Z"},
        {"30 2 * * *", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"},
        {"30 * * * *", "2026-10-25T00:30:00Z", "2026-10-25T02:30:00Z"},
        {"*/30 * * * *", "2026-10-25T00:30:00Z", "2026-10-25T02:00:00Z"},
        /* after the change, CET: 02:30 is 01:30Z */
        {"30 2 * * *", "2026-10-26T12:00:00Z", "2026-10-27T01:30:00Z"},
        /* past the 2037 end of the transition tables: the zone's rule */
        {"30 2 * * *", "2051-03-25T12:00:00Z", "2051-03-26T01:00:00Z"},
        {"0 12 1 7 *", "2060-06-01T00:00:00Z", "2060-07-01T10:00:00Z"},
    };

    dst_cases("Europe/Berlin", cases, ARRAY_LEN(cases));
}

/* New York: forward 2026-03-08 02:00 EST → 03:00 EDT (07:00Z), back
 * 2026-11-01 02:00 EDT → 01:00 EST (06:00Z). */
static void
t_dst_new_york(void)
{
    static const struct dst_case cases[] = {
        {"30 2 * * *", "2026-03-07T12:00:00Z", "2026-03-08T07:00:00Z"},
        {"30 2 * * *", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"},
        {"15 * * * *", "2026-03-08T06:15:00Z", "2026-03-08T07:15:00Z"},
        /* 01:30 comes twice on Nov 1st: once, EDT (05:30Z) */
        {"30 1 * * *", "2026-10-31T12:00:00Z", "2026-11-01T05:30:00Z"},
        {"30 1 * * *", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
        {"0 * * * *", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"},
        {"0 9 * * mon-fri", "2026-10-30T14:00:00Z", "2026-11-02T14:00:00Z"},
    };

    dst_cases("America/New_York", cases, ARRAY_LEN(cases));
}

static void
t_dst_due(void)
{
    /* down over the whole repeated hour: one firing, the first 02:30 */
    struct schedule_spec s;
    struct err err = {0};
    int64_t fire = 0;

    if (!have_zone("Europe/Berlin"))
        th_skip("no Europe/Berlin in /usr/share/zoneinfo");
    CHECK_EQ_INT(
        schedule__spec_init(&s, "cron 30 2 * * *", "Europe/Berlin", 0, &err),
        0);
    /* in the second 02:xx (CET, 01:40Z) the 02:30 owed is the first one */
    CHECK_EQ_INT(schedule__due(&s, T("2026-10-24T00:30:00Z"),
                               T("2026-10-25T01:40:00Z"), &fire),
                 1);
    CHECK_TIME(fire, T("2026-10-25T00:30:00Z"));
    CHECK_EQ_INT(schedule__due(&s, fire, T("2026-10-25T01:59:00Z"), &fire), 0);
    schedule__spec_release(&s);
    /* 02:45 came (CEST, 00:45Z) before the second 02:40 (CET, 01:40Z):
     * the latest firing is later on the wall clock than now */
    CHECK_EQ_INT(
        schedule__spec_init(&s, "cron 45 2 * * *", "Europe/Berlin", 0, &err),
        0);
    CHECK_TIME(schedule__prev(&s, T("2026-10-25T01:40:00Z")),
               T("2026-10-25T00:45:00Z"));
    CHECK_EQ_INT(schedule__due(&s, T("2026-10-24T00:45:00Z"),
                               T("2026-10-25T01:40:00Z"), &fire),
                 1);
    CHECK_TIME(fire, T("2026-10-25T00:45:00Z"));
    schedule__spec_release(&s);
    CHECK_EQ_INT(
        schedule__spec_init(&s, "cron 30 2 * * *", "Europe/Berlin", 0, &err),
        0);
    /* the skipped one is owed at the jump */
    CHECK_EQ_INT(schedule__due(&s, T("2026-03-28T01:30:00Z"),
                               T("2026-03-29T01:00:00Z"), &fire),
                 1);
    CHECK_TIME(fire, T("2026-03-29T01:00:00Z"));
    schedule__spec_release(&s);
}

static const struct th_case cases[] = {
    {"cron_valid", t_cron_valid},
    {"cron_errors", t_cron_errors},
    {"spec_text", t_spec_text},
    {"next_utc", t_next_utc},
    {"next_walk", t_next_walk},
    {"created_gates", t_created_gates},
    {"every_anchor", t_every_anchor},
    {"due_missed_once", t_due_missed_once},
    {"tz_matches_libc", t_tz_matches_libc},
    {"tz_bad_files", t_tz_bad_files},
    {"dst_berlin", t_dst_berlin},
    {"dst_new_york", t_dst_new_york},
    {"dst_due", t_dst_due},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

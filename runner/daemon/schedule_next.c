/*
 * schedule_next.c — when a schedule fires: the next firing after a time,
 * the latest one before it, and the one owed after missed ones.
 *
 * "every" schedules count whole periods from their creation, in UTC
 * seconds: a zone does not move them. Cron schedules match minutes of the
 * zone's wall clock: the search walks local minutes (days that match,
 * then hours, then minutes) and maps each to the instant it fires at:
 *
 *   - a local time that exists once fires then;
 *   - one that exists twice (the hour repeated when clocks fall back)
 *     fires once, at its first occurrence;
 *   - one that a spring-forward skips fires at the instant of the jump
 *     when the minute and hour fields are fixed (no '*': "30 2 * * *"
 *     still runs that day, at 03:00), and not at all otherwise (an hourly
 *     or every-minute schedule simply has no firings in the missing
 *     hour) — the rule of Vixie cron and cronie.
 *
 * That map never goes backwards as the local time goes forwards, so the
 * first local match whose instant is after `after` is the next firing.
 */
#include "daemon/schedule_int.h"

#include <stdint.h>

/* Nine years of days: Feb 29 can be eight years from the next one. */
#define DAYS_MAX (9 * 366)
/* Local minutes looked at past the first match; a repeated or skipped
 * hour or two is far below this. */
#define STEPS_MAX 10000
/* Wall clocks move by less than this at a transition. */
#define SHIFT_MAX (3 * 3600)

static bool
day_matches(const struct schedule_cron *c, int64_t day)
{
    int64_t y;
    int m, d, wd = (int)(((day + 4) % 7 + 7) % 7); /* 1970-01-01: Thu */
    bool dom, dow;

    schedule__civil_from_days(day, &y, &m, &d);
    if (!(c->month >> m & 1))
        return false;
    dom = c->dom >> d & 1;
    dow = c->dow >> wd & 1;
    if (c->dom_any || c->dow_any)
        return dom && dow;
    return dom || dow;
}

/* The first matching local minute at or after local time L (seconds). */
static int64_t
first_match(const struct schedule_cron *c, int64_t L)
{
    int64_t day = schedule__floor_div(L, 86400);
    int sec = (int)(L - day * 86400), h = sec / 3600, m = sec % 3600 / 60;

    if (sec % 60 != 0 && ++m == 60) {
        m = 0;
        if (++h == 24) {
            h = 0;
            day++;
        }
    }
    for (int i = 0; i < DAYS_MAX; i++, day++, h = 0, m = 0) {
        if (!day_matches(c, day))
            continue;
        for (; h < 24; h++, m = 0) {
            if (!(c->hour >> h & 1))
                continue;
            for (; m < 60; m++) {
                if (c->minute >> m & 1)
                    return day * 86400 + h * 3600 + m * 60;
            }
        }
    }
    return INT64_MAX;
}

/* The last matching local minute at or before local time L. */
static int64_t
last_match(const struct schedule_cron *c, int64_t L)
{
    int64_t day = schedule__floor_div(L, 86400);
    int sec = (int)(L - day * 86400), h = sec / 3600, m = sec % 3600 / 60;

    for (int i = 0; i < DAYS_MAX; i++, day--, h = 23, m = 59) {
        if (!day_matches(c, day))
            continue;
        for (; h >= 0; h--, m = 59) {
            if (!(c->hour >> h & 1))
                continue;
            for (; m >= 0; m--) {
                if (c->minute >> m & 1)
                    return day * 86400 + h * 3600 + m * 60;
            }
        }
    }
    return INT64_MIN;
}

/* The instant of the first change of offset in (lo, hi], lo's offset
 * being `before`. */
static int64_t
jump_instant(const struct schedule_tz *tz, int64_t lo, int64_t hi,
             int32_t before)
{
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;

        if (schedule__tz_offset(tz, mid) == before)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* The instant local time L fires at (see the top): true and *t, or false
 * when it does not fire. Real offsets lie within -12h..+14h, so L's
 * instants lie in [L - 14h, L + 12h]; the offsets just outside that
 * window are the two it can be read with. */
static bool
fire_instant(const struct schedule_spec *s, int64_t L, int64_t *t)
{
    int32_t oa = schedule__tz_offset(s->tz, L - 15 * 3600);
    int32_t ob = schedule__tz_offset(s->tz, L + 13 * 3600);
    int64_t ta = L - oa, tb = L - ob;
    bool va = schedule__tz_offset(s->tz, ta) == oa;
    bool vb = schedule__tz_offset(s->tz, tb) == ob;

    if (va || vb) {
        *t = va && vb ? (ta < tb ? ta : tb) : va ? ta : tb;
        return true;
    }
    if (oa >= ob) { /* two transitions within a day: not a gap we know */
        *t = ta;
        return true;
    }
    if (!s->cron.fixed_time)
        return false;
    *t = jump_instant(s->tz, tb, ta, oa);
    return true;
}

static int64_t
cron_next(const struct schedule_spec *s, int64_t after)
{
    int64_t L = after + schedule__tz_offset(s->tz, after), t;

    L = schedule__floor_div(L, 60) * 60 + 60;
    for (int i = 0; i < STEPS_MAX; i++) {
        L = first_match(&s->cron, L);
        if (L == INT64_MAX)
            return INT64_MAX;
        if (fire_instant(s, L, &t) && t > after)
            return t;
        L += 60;
    }
    return INT64_MAX;
}

/* The latest firing at or before now, or INT64_MIN. The search starts a
 * few hours ahead on the wall clock: in a repeated hour, local times
 * after now's may have fired before now (at their first occurrence). */
static int64_t
cron_prev(const struct schedule_spec *s, int64_t now)
{
    int64_t L = now + schedule__tz_offset(s->tz, now) + SHIFT_MAX, t;

    L = schedule__floor_div(L, 60) * 60;
    for (int i = 0; i < STEPS_MAX; i++) {
        L = last_match(&s->cron, L);
        if (L == INT64_MIN)
            return INT64_MIN;
        if (fire_instant(s, L, &t) && t <= now)
            return t;
        L -= 60;
    }
    return INT64_MIN;
}

int64_t
schedule__next(const struct schedule_spec *s, int64_t after_s)
{
    int64_t k;

    if (after_s < s->created_s)
        after_s = s->created_s;
    if (s->kind == SCHEDULE_CRON)
        return cron_next(s, after_s);
    k = (after_s - s->created_s) / s->every_s + 1;
    if (k > (INT64_MAX - s->created_s) / s->every_s)
        return INT64_MAX;
    return s->created_s + k * s->every_s;
}

int64_t
schedule__prev(const struct schedule_spec *s, int64_t now_s)
{
    int64_t t;

    if (now_s <= s->created_s)
        return -1;
    if (s->kind == SCHEDULE_CRON)
        t = cron_prev(s, now_s);
    else
        t = s->created_s + (now_s - s->created_s) / s->every_s * s->every_s;
    return t > s->created_s ? t : -1;
}

int
schedule__due(const struct schedule_spec *s, int64_t last_fired_s,
              int64_t now_s, int64_t *fire_s)
{
    int64_t base = last_fired_s < s->created_s ? s->created_s : last_fired_s;
    int64_t t = schedule__prev(s, now_s);

    if (t < 0 || t <= base)
        return 0;
    *fire_s = t;
    return 1;
}

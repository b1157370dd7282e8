/*
 * schedule_tz.c — time zones for schedules, read from TZif files.
 *
 * A cron schedule fires on the wall clock of its zone, so the daemon needs
 * the zone's UTC offset at any instant. libc answers that through the TZ
 * environment variable and tzset(), which is process-wide state: changing
 * TZ in a threaded daemon races with every getenv() and localtime() of the
 * other threads, and a mutex around our own calls does not cover libc's.
 * So the zone file is read here instead: TZif (RFC 8536) is small — a
 * table of transition times, a table of offsets, and a POSIX TZ string
 * ("CET-1CEST,M3.5.0,M10.5.0/3") for times past the last transition —
 * and each schedule holds its own zone, immutable once loaded, safe to
 * share between threads.
 *
 * Leap-second records (the "right/" zones) are skipped: schedules count
 * POSIX seconds like everything else.
 */
#include "daemon/schedule_int.h"

#include "base/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TZ_FILE_MAX (1u << 20)
#define TZ_NAME_MAX 128

struct tz_rule_date {
    char kind;      /* 'J' (1..365, no Feb 29), 'n' (0..365), 'M' */
    int n, m, w, d; /* J/n: n; M: month, week 1..5, weekday 0..6 */
    int32_t time;   /* seconds after local midnight (may be < 0 or > 24h) */
};

/* The POSIX TZ string of the footer, parsed. */
struct tz_rule {
    bool present;
    int32_t std_off, dst_off; /* seconds east of UTC */
    bool has_dst;
    struct tz_rule_date start, end;
};

struct schedule_tz {
    char name[TZ_NAME_MAX];
    size_t ntrans;
    int64_t *trans; /* transition instants, ascending */
    uint8_t *idx;   /* type in effect from trans[i] */
    size_t ntypes;
    int32_t *type_off; /* seconds east of UTC per type */
    struct tz_rule rule;
};

/* ---- civil dates (Howard Hinnant's algorithms) ---- */

int64_t
schedule__days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void
schedule__civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    int64_t era, doe, yoe, doy, mp;

    z += 719468;
    era = (z >= 0 ? z : z - 146096) / 146097;
    doe = z - era * 146097;
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static bool
leap_year(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
month_days(int64_t y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    return m == 2 && leap_year(y) ? 29 : days[m - 1];
}

int64_t
schedule__floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

#define floor_div schedule__floor_div

/* ---- the POSIX TZ string ---- */

/* A zone abbreviation: letters, or anything but '>' between < and >. */
static const char *
tzstr_name(const char *p)
{
    const char *s = p;

    if (*p == '<') {
        while (*p != '\0' && *p != '>')
            p++;
        return *p == '>' && p - s >= 4 ? p + 1 : NULL;
    }
    while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
        p++;
    return p - s >= 3 ? p : NULL;
}

/* [+-]hh[:mm[:ss]] as seconds; hours up to 167 (RFC 8536 allows it for
 * rule times). */
static const char *
tzstr_hms(const char *p, int32_t *out)
{
    int sign = 1, part = 0;
    int32_t v[3] = {0, 0, 0};

    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1 : 1;
    for (;;) {
        int digits = 0;

        while (*p >= '0' && *p <= '9' && digits < 3) {
            v[part] = v[part] * 10 + (*p++ - '0');
            digits++;
        }
        if (digits == 0 || v[0] > 167 || (part > 0 && v[part] > 59))
            return NULL;
        if (*p != ':' || part == 2)
            break;
        p++;
        part++;
    }
    *out = sign * (v[0] * 3600 + v[1] * 60 + v[2]);
    return p;
}

static const char *
tzstr_int(const char *p, int lo, int hi, int *out)
{
    int v = 0, digits = 0;

    while (*p >= '0' && *p <= '9' && digits < 4) {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (digits == 0 || v < lo || v > hi)
        return NULL;
    *out = v;
    return p;
}

static const char *
tzstr_date(const char *p, struct tz_rule_date *r)
{
    r->time = 7200;
    if (*p == 'J') {
        r->kind = 'J';
        p = tzstr_int(p + 1, 1, 365, &r->n);
    } else if (*p == 'M') {
        r->kind = 'M';
        p = tzstr_int(p + 1, 1, 12, &r->m);
        if (p != NULL && *p++ == '.')
            p = tzstr_int(p, 1, 5, &r->w);
        else
            p = NULL;
        if (p != NULL && *p++ == '.')
            p = tzstr_int(p, 0, 6, &r->d);
        else
            p = NULL;
    } else {
        r->kind = 'n';
        p = tzstr_int(p, 0, 365, &r->n);
    }
    if (p != NULL && *p == '/')
        p = tzstr_hms(p + 1, &r->time);
    return p;
}

/* ",start[/time],end[/time]" after the zone names. */
static bool
tzstr_rules(const char *p, struct tz_rule *r)
{
    if (*p++ != ',' || (p = tzstr_date(p, &r->start)) == NULL)
        return false;
    if (*p++ != ',' || (p = tzstr_date(p, &r->end)) == NULL)
        return false;
    return *p == '\0';
}

/* "CET-1CEST,M3.5.0,M10.5.0/3" → r; false when it is not such a string.
 * POSIX offsets count west of UTC, so their signs are turned here. */
static bool
tzstr_parse(const char *p, struct tz_rule *r)
{
    int32_t off;

    memset(r, 0, sizeof(*r));
    if ((p = tzstr_name(p)) == NULL || (p = tzstr_hms(p, &off)) == NULL)
        return false;
    r->std_off = -off;
    r->dst_off = r->std_off + 3600;
    r->present = true;
    if (*p == '\0')
        return true;
    if ((p = tzstr_name(p)) == NULL)
        return false;
    r->has_dst = true;
    if (*p != ',' && *p != '\0') {
        if ((p = tzstr_hms(p, &off)) == NULL)
            return false;
        r->dst_off = -off;
    }
    /* no rule: POSIX's default, the US one */
    return tzstr_rules(*p == '\0' ? ",M3.2.0,M11.1.0" : p, r);
}

/* The day (days since the epoch) a rule date falls on in year y. */
static int64_t
rule_day(const struct tz_rule_date *r, int64_t y)
{
    int64_t jan1 = schedule__days_from_civil(y, 1, 1), first;
    int wd1, day, mdays;

    if (r->kind == 'n')
        return jan1 + r->n;
    if (r->kind == 'J')
        return jan1 + r->n - 1 + (leap_year(y) && r->n >= 60);
    first = schedule__days_from_civil(y, r->m, 1);
    wd1 = (int)(((first + 4) % 7 + 7) % 7); /* 1970-01-01 was a Thursday */
    day = 1 + (r->d - wd1 + 7) % 7 + 7 * (r->w - 1);
    mdays = month_days(y, r->m);
    while (day > mdays)
        day -= 7;
    return first + day - 1;
}

/* The offset the footer's rule gives at t. The start time is read on
 * standard time, the end time on daylight time, as POSIX says. */
static int32_t
rule_offset(const struct tz_rule *r, int64_t t)
{
    int64_t y, start, end;
    int m, d;

    if (!r->has_dst)
        return r->std_off;
    schedule__civil_from_days(floor_div(t + r->std_off, 86400), &y, &m, &d);
    start = rule_day(&r->start, y) * 86400 + r->start.time - r->std_off;
    end = rule_day(&r->end, y) * 86400 + r->end.time - r->dst_off;
    if (start < end)
        return t >= start && t < end ? r->dst_off : r->std_off;
    return t >= end && t < start ? r->std_off : r->dst_off;
}

/* ---- TZif ---- */

struct tzif_reader {
    const unsigned char *p, *end;
};

static bool
rd_need(const struct tzif_reader *r, uint64_t n)
{
    return (uint64_t)(r->end - r->p) >= n;
}

static int64_t
rd_be(struct tzif_reader *r, int size)
{
    uint64_t v = 0;

    for (int i = 0; i < size; i++)
        v = v << 8 | r->p[i];
    r->p += size;
    if (size == 4)
        return (int32_t)(uint32_t)v;
    return (int64_t)v;
}

struct tzif_counts {
    uint32_t isut, isstd, leap, time, type, chars;
};

static bool
rd_header(struct tzif_reader *r, char *version, struct tzif_counts *c)
{
    if (!rd_need(r, 44) || memcmp(r->p, "TZif", 4) != 0)
        return false;
    *version = (char)r->p[4];
    r->p += 20;
    c->isut = (uint32_t)rd_be(r, 4);
    c->isstd = (uint32_t)rd_be(r, 4);
    c->leap = (uint32_t)rd_be(r, 4);
    c->time = (uint32_t)rd_be(r, 4);
    c->type = (uint32_t)rd_be(r, 4);
    c->chars = (uint32_t)rd_be(r, 4);
    return c->type > 0 && c->type <= 256;
}

static uint64_t
block_size(const struct tzif_counts *c, int tsize)
{
    return (uint64_t)c->time * (tsize + 1) + (uint64_t)c->type * 6 + c->chars +
           (uint64_t)c->leap * (tsize + 4) + c->isstd + c->isut;
}

/* The transitions and types of one data block (time size tsize). */
static bool
rd_block(struct tzif_reader *r, const struct tzif_counts *c, int tsize,
         struct schedule_tz *tz)
{
    if (!rd_need(r, block_size(c, tsize)))
        return false;
    tz->ntrans = c->time;
    tz->trans = xcalloc(c->time + 1, sizeof(*tz->trans));
    tz->idx = xcalloc(c->time + 1, 1);
    tz->ntypes = c->type;
    tz->type_off = xcalloc(c->type, sizeof(*tz->type_off));
    for (uint32_t i = 0; i < c->time; i++) {
        tz->trans[i] = rd_be(r, tsize);
        if (i > 0 && tz->trans[i] <= tz->trans[i - 1])
            return false;
    }
    for (uint32_t i = 0; i < c->time; i++) {
        tz->idx[i] = *r->p++;
        if (tz->idx[i] >= c->type)
            return false;
    }
    for (uint32_t i = 0; i < c->type; i++) {
        tz->type_off[i] = (int32_t)rd_be(r, 4);
        r->p += 2;
        if (tz->type_off[i] <= -25 * 3600 || tz->type_off[i] >= 26 * 3600)
            return false;
    }
    r->p += c->chars + (uint64_t)c->leap * (tsize + 4) + c->isstd + c->isut;
    return true;
}

/* The footer of a version 2+ file: "\nTZ-string\n" (may be empty). */
static bool
rd_footer(struct tzif_reader *r, struct tz_rule *rule)
{
    const unsigned char *nl;
    char buf[128];
    size_t n;

    if (!rd_need(r, 2) || *r->p != '\n')
        return false;
    nl = memchr(r->p + 1, '\n', (size_t)(r->end - r->p - 1));
    if (nl == NULL || (n = (size_t)(nl - r->p - 1)) >= sizeof(buf))
        return false;
    if (n == 0)
        return true;
    memcpy(buf, r->p + 1, n);
    buf[n] = '\0';
    return tzstr_parse(buf, rule);
}

static bool
tzif_parse(const unsigned char *data, size_t len, struct schedule_tz *tz)
{
    struct tzif_reader r = {data, data + len};
    struct tzif_counts c;
    char version;

    if (!rd_header(&r, &version, &c))
        return false;
    if (version == '\0')
        return rd_block(&r, &c, 4, tz);
    /* version 2 and later: skip the 32-bit block for the 64-bit one */
    if (!rd_need(&r, block_size(&c, 4)))
        return false;
    r.p += block_size(&c, 4);
    if (!rd_header(&r, &version, &c) || !rd_block(&r, &c, 8, tz))
        return false;
    return rd_footer(&r, &tz->rule);
}

/* ---- loading and asking ---- */

/* An IANA name: components of letters, digits, '_', '-', '+', no "..",
 * no leading '/'. */
static bool
zone_name_ok(const char *name)
{
    size_t len = strlen(name);

    if (len == 0 || len >= TZ_NAME_MAX || name[0] == '/' ||
        name[len - 1] == '/' || strstr(name, "..") != NULL ||
        strstr(name, "//") != NULL)
        return false;
    for (const char *p = name; *p != '\0'; p++) {
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || strchr("_-+/.", *p) != NULL))
            return false;
    }
    return true;
}

void
schedule__tz_destroy(struct schedule_tz **tz)
{
    if (tz == NULL || *tz == NULL)
        return;
    free((*tz)->trans);
    free((*tz)->idx);
    free((*tz)->type_off);
    free(*tz);
    *tz = NULL;
}

static struct schedule_tz *
tz_read(const char *name, struct err *err)
{
    const char *dir = getenv("TZDIR");
    cleanup_free char *path = NULL;
    cleanup_free unsigned char *data = NULL;
    struct schedule_tz *tz;
    size_t len;

    path = path_join(
        dir != NULL && dir[0] != '\0' ? dir : "/usr/share/zoneinfo", name);
    data = (unsigned char *)file_read(path, TZ_FILE_MAX, &len, err);
    if (data == NULL) {
        if (err != NULL && err->code == ENOENT)
            err_set(err, ENOENT, "time zone \"%s\": no such zone (%s)", name,
                    path);
        return NULL;
    }
    tz = xcalloc(1, sizeof(*tz));
    snprintf(tz->name, sizeof(tz->name), "%s", name);
    if (!tzif_parse(data, len, tz)) {
        schedule__tz_destroy(&tz);
        err_set(err, EINVAL, "time zone \"%s\": %s is not a TZif file", name,
                path);
    }
    return tz;
}

struct schedule_tz *
schedule__tz_load(const char *name, struct err *err)
{
    struct schedule_tz *tz;

    if (name == NULL || name[0] == '\0' || strcmp(name, "UTC") == 0) {
        tz = xcalloc(1, sizeof(*tz));
        snprintf(tz->name, sizeof(tz->name), "UTC");
        tz->ntypes = 1;
        tz->type_off = xcalloc(1, sizeof(*tz->type_off));
        return tz;
    }
    if (!zone_name_ok(name)) {
        err_set(err, EINVAL,
                "time zone \"%s\": expected an IANA name like "
                "Europe/Berlin, or UTC",
                name);
        return NULL;
    }
    return tz_read(name, err);
}

const char *
schedule__tz_name(const struct schedule_tz *tz)
{
    return tz != NULL ? tz->name : "UTC";
}

int32_t
schedule__tz_offset(const struct schedule_tz *tz, int64_t t)
{
    size_t lo = 0, hi;

    if (tz == NULL)
        return 0;
    if (tz->ntrans == 0 || t < tz->trans[0]) {
        if (tz->ntrans == 0 && tz->rule.present)
            return rule_offset(&tz->rule, t);
        return tz->type_off[0];
    }
    if (t >= tz->trans[tz->ntrans - 1] && tz->rule.present)
        return rule_offset(&tz->rule, t);
    /* the last transition at or before t */
    hi = tz->ntrans;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;

        if (tz->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return tz->type_off[tz->idx[lo]];
}

/*
 * schedule_spec.c — reading a schedule's spec: "every DURATION" or a
 * five-field cron expression.
 *
 * Cron fields are minute, hour, day of month, month and day of week; each
 * is a list of items, an item `*`, a number, a range a-b, or either with a
 * step (`*\/n`, `a-b/n`). Months and weekdays may be named (jan..dec,
 * sun..sat, any case) and 7 is Sunday as 0 is. The set of values each
 * field allows becomes a bit mask; when both day fields are restricted
 * (neither is `*`) a day matches when either does, as in every cron.
 * Errors name the field, what was found and what was expected, because a
 * user reading "bad cron" cannot tell which of five fields is wrong.
 */
#include "daemon/schedule_int.h"

#include "base/util.h"

#include "ty_units.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cron_field {
    const char *name;
    int lo, hi;
    const char *const *names; /* names[i] is value lo + i, NULL: none */
    const char *expected;
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may",
                                          "jun", "jul", "aug", "sep", "oct",
                                          "nov", "dec", NULL};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed",
                                        "thu", "fri", "sat", NULL};

static const struct cron_field fields[5] = {
    {"minute", 0, 59, NULL, "a number from 0 to 59"},
    {"hour", 0, 23, NULL, "a number from 0 to 23"},
    {"day of month", 1, 31, NULL, "a number from 1 to 31"},
    {"month", 1, 12, month_names, "a number from 1 to 12 or jan to dec"},
    {"day of week", 0, 7, dow_names,
     "a number from 0 to 7 (0 and 7 are Sunday) or sun to sat"},
};

#define ITEM_MAX 32

struct field_ctx {
    const struct cron_field *f;
    int index; /* 1-based */
    struct err *err;
};

static int
field_error(const struct field_ctx *c, const char *found, size_t len,
            const char *expected)
{
    return err_set(c->err, EINVAL, "field %d (%s): found \"%.*s\", expected %s",
                   c->index, c->f->name, (int)len, found, expected);
}

/* A value (a number or a name) of exactly len bytes at s; -1 if not. */
static int
field_value(const struct cron_field *f, const char *s, size_t len)
{
    int v = 0;

    if (len == 0)
        return -1;
    if (isdigit((unsigned char)s[0])) {
        for (size_t i = 0; i < len; i++) {
            if (!isdigit((unsigned char)s[i]) || v > 1000)
                return -1;
            v = v * 10 + (s[i] - '0');
        }
        return v >= f->lo && v <= f->hi ? v : -1;
    }
    for (int i = 0; f->names != NULL && f->names[i] != NULL; i++) {
        if (len == 3 && strncasecmp(s, f->names[i], 3) == 0)
            return f->lo + i;
    }
    return -1;
}

/* "a" or "a-b" at s (len bytes) → *lo, *hi. */
static int
item_range(const struct field_ctx *c, const char *s, size_t len, int *lo,
           int *hi)
{
    const char *dash = memchr(s, '-', len);
    char expected[160];

    if (dash == NULL) {
        *lo = *hi = field_value(c->f, s, len);
        return *lo < 0 ? field_error(c, s, len, c->f->expected) : 0;
    }
    *lo = field_value(c->f, s, (size_t)(dash - s));
    *hi = field_value(c->f, dash + 1, len - (size_t)(dash - s) - 1);
    if (*lo < 0 || *hi < 0) {
        snprintf(expected, sizeof(expected), "a range a-b of %s",
                 c->f->expected);
        return field_error(c, s, len, expected);
    }
    if (*lo > *hi)
        return field_error(c, s, len,
                           "a range a-b with a not after b (weekdays: "
                           "sun is 0 at the start or 7 at the end)");
    return 0;
}

/* One list item into *bits. */
static int
field_item(const struct field_ctx *c, const char *s, size_t len, uint64_t *bits)
{
    const char *slash = memchr(s, '/', len);
    size_t body = slash != NULL ? (size_t)(slash - s) : len;
    int lo, hi, step = 1;
    char expected[64];

    if (body == 1 && s[0] == '*') {
        lo = c->f->lo;
        hi = c->f->hi == 7 ? 6 : c->f->hi;
    } else if (item_range(c, s, body, &lo, &hi) < 0) {
        return -1;
    } else if (slash != NULL && lo == hi) {
        return field_error(c, s, len, "a step after * or a range a-b (a-b/n)");
    }
    if (slash != NULL) {
        const char *n = slash + 1;
        size_t nlen = len - body - 1;
        struct cron_field steps = {NULL, 1, c->f->hi, NULL, NULL};

        step = field_value(&steps, n, nlen);
        if (step < 0 || !isdigit((unsigned char)n[0])) {
            snprintf(expected, sizeof(expected), "a step from 1 to %d",
                     c->f->hi);
            return field_error(c, s, len, expected);
        }
    }
    for (int v = lo; v <= hi; v += step)
        *bits |= 1ull << v;
    return 0;
}

/* A comma-separated list (len bytes at s) into *bits. */
static int
field_parse(const struct field_ctx *c, const char *s, size_t len,
            uint64_t *bits)
{
    const char *end = s + len;

    *bits = 0;
    for (;;) {
        const char *comma = memchr(s, ',', (size_t)(end - s));
        const char *stop = comma != NULL ? comma : end;

        if (stop == s)
            return field_error(c, s, 0,
                               "a value, a range or a step "
                               "between commas");
        if (field_item(c, s, (size_t)(stop - s), bits) < 0)
            return -1;
        if (comma == NULL)
            return 0;
        s = comma + 1;
    }
}

/* Is there a day of month in dom that some month of month has (Feb 29
 * counts: leap years come)? */
static bool
dom_possible(uint32_t dom, uint16_t month)
{
    static const int most[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

    for (int m = 1; m <= 12; m++) {
        if ((month >> m & 1) && (dom & ((2u << most[m - 1]) - 2)) != 0)
            return true;
    }
    return false;
}

/* Split expr into five fields at blanks; 0, or -1 with the count found. */
static int
split_fields(const char *expr, const char *start[5], size_t len[5], int *found)
{
    const char *p = expr;
    int n = 0;

    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        if (n < 5)
            start[n] = p;
        while (*p != '\0' && *p != ' ' && *p != '\t')
            p++;
        if (n < 5)
            len[n] = (size_t)(p - start[n]);
        n++;
    }
    *found = n;
    return n == 5 ? 0 : -1;
}

static int
cron_store(struct schedule_cron *out, const uint64_t bits[5],
           const char *start[5], const size_t len[5])
{
    uint64_t dow = bits[4];

    if (dow >> 7 & 1)
        dow = (dow | 1) & 0x7f;
    out->minute = bits[0];
    out->hour = (uint32_t)bits[1];
    out->dom = (uint32_t)bits[2];
    out->month = (uint16_t)bits[3];
    out->dow = (uint8_t)dow;
    out->dom_any = len[2] == 1 && start[2][0] == '*';
    out->dow_any = len[4] == 1 && start[4][0] == '*';
    out->fixed_time = memchr(start[0], '*', len[0]) == NULL &&
                      memchr(start[1], '*', len[1]) == NULL;
    return 0;
}

int
schedule__cron_parse(const char *expr, struct schedule_cron *out,
                     struct err *err)
{
    const char *start[5];
    size_t len[5];
    uint64_t bits[5];
    int found;

    memset(out, 0, sizeof(*out));
    if (split_fields(expr, start, len, &found) < 0)
        return err_set(err, EINVAL,
                       "found %d field%s in \"%s\", expected 5: minute hour "
                       "day-of-month month day-of-week",
                       found, found == 1 ? "" : "s", expr);
    for (int i = 0; i < 5; i++) {
        struct field_ctx c = {&fields[i], i + 1, err};

        if (field_parse(&c, start[i], len[i], &bits[i]) < 0)
            return -1;
    }
    cron_store(out, bits, start, len);
    if (!out->dom_any && out->dow_any && !dom_possible(out->dom, out->month))
        return err_set(err, EINVAL,
                       "field 3 (day of month): found \"%.*s\", expected a "
                       "day that the months of field 4 (\"%.*s\") have",
                       (int)len[2], start[2], (int)len[3], start[3]);
    return 0;
}

int
schedule__every_parse(const char *dur, int64_t *every_s, struct err *err)
{
    char why[128];
    int64_t ns;

    if (ty__parse_duration(dur, &ns, why, sizeof(why)) < 0)
        return err_set(err, EINVAL, "found \"%s\", %s", dur, why);
    if (ns % 1000000000 != 0)
        return err_set(err, EINVAL,
                       "found \"%s\", expected a whole number of seconds", dur);
    if (ns < (int64_t)SCHEDULE_EVERY_MIN_S * 1000000000)
        return err_set(err, EINVAL,
                       "found \"%s\", expected at least 1m (a schedule "
                       "fires at most once a minute)",
                       dur);
    *every_s = ns / 1000000000;
    return 0;
}

int
schedule__spec_init(struct schedule_spec *spec, const char *text,
                    const char *tz, int64_t created_s, struct err *err)
{
    int rc;

    memset(spec, 0, sizeof(*spec));
    spec->created_s = created_s;
    if (strncmp(text, "every ", 6) == 0) {
        spec->kind = SCHEDULE_EVERY;
        rc = schedule__every_parse(text + 6, &spec->every_s, err);
    } else if (strncmp(text, "cron ", 5) == 0) {
        spec->kind = SCHEDULE_CRON;
        rc = schedule__cron_parse(text + 5, &spec->cron, err);
    } else {
        return err_set(err, EINVAL,
                       "schedule \"%s\": expected \"every DURATION\" or "
                       "\"cron M H DOM MON DOW\"",
                       text);
    }
    if (rc < 0)
        return err_prefix(err, "%s",
                          spec->kind == SCHEDULE_EVERY ? "--every" : "--cron");
    spec->tz = schedule__tz_load(tz, err);
    if (spec->tz == NULL)
        return err_prefix(err, "--tz");
    return 0;
}

void
schedule__spec_release(struct schedule_spec *spec)
{
    schedule__tz_destroy(&spec->tz);
}

/*
 * ty_time.c — clocks and RFC 3339 timestamps (see ty_time.h).
 *
 * The date is computed by hand rather than with gmtime_r, which may take
 * locks and is not async-signal-safe: the SDK's crash handler stamps its
 * last event line with this same formatter.
 */
#include "ty_time.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#define NS_PER_S INT64_C(1000000000)

static int64_t
clock_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

int64_t
ty__now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

int64_t
ty__now_ms(void)
{
    return ty__now_ns() / 1000000;
}

int64_t
ty__wall_ns(void)
{
    return clock_ns(CLOCK_REALTIME);
}

size_t
ty__put_digits(char *out, int64_t v, int width)
{
    for (int i = width - 1; i >= 0; i--, v /= 10)
        out[i] = (char)('0' + v % 10);
    return (size_t)width;
}

/* Days since 1970-01-01 to a civil date, as in Howard Hinnant's
 * days_from_civil inverse. */
static void
civil(int64_t days, int64_t *y, int64_t *m, int64_t *d)
{
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;

    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

/* The TY_RFC3339_LEN characters of day `days` (since the epoch), second
 * `sec` of that day and millisecond `ms`, without a NUL. */
static void
put_stamp(char *out, int64_t days, int64_t sec, int64_t ms)
{
    int64_t y, m, d;
    size_t n;

    civil(days, &y, &m, &d);
    n = ty__put_digits(out, y, 4);
    out[n++] = '-';
    n += ty__put_digits(out + n, m, 2);
    out[n++] = '-';
    n += ty__put_digits(out + n, d, 2);
    out[n++] = 'T';
    n += ty__put_digits(out + n, sec / 3600, 2);
    out[n++] = ':';
    n += ty__put_digits(out + n, sec / 60 % 60, 2);
    out[n++] = ':';
    n += ty__put_digits(out + n, sec % 60, 2);
    out[n++] = '.';
    n += ty__put_digits(out + n, ms, 3);
    out[n] = 'Z';
}

/* Division rounding towards minus infinity, so times before 1970 work. */
static int64_t
floor_div(int64_t a, int64_t b, int64_t *rem)
{
    int64_t q = a / b, r = a % b;

    if (r < 0) {
        r += b;
        q--;
    }
    *rem = r;
    return q;
}

void
ty__format_rfc3339(int64_t wall_ns, char *buf, size_t size)
{
    int64_t ns, sec;
    int64_t days = floor_div(floor_div(wall_ns, NS_PER_S, &ns), 86400, &sec);
    char out[TY_RFC3339_LEN];
    size_t n;

    if (size == 0)
        return;
    n = size - 1 < sizeof(out) ? size - 1 : sizeof(out);
    put_stamp(out, days, sec, ns / 1000000);
    for (size_t i = 0; i < n; i++)
        buf[i] = out[i];
    buf[n] = '\0';
}

/* The inverse of civil: days since 1970-01-01 of y-m-d. */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
    int64_t era, yoe, doy;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

/* Exactly n digits at *p into *v, moving *p past them. */
static bool
digits(const char **p, int n, int64_t *v)
{
    *v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return false;
        *v = *v * 10 + (**p - '0');
    }
    return true;
}

/* digits, then the character sep (none when sep is 0). */
static bool
field(const char **p, int n, char sep, int64_t *v)
{
    if (!digits(p, n, v))
        return false;
    if (sep != '\0' && *(*p)++ != sep)
        return false;
    return true;
}

/* ".123456789..." at *p as nanoseconds; digits past the ninth dropped. */
static bool
fraction(const char **p, int64_t *ns)
{
    int64_t scale = NS_PER_S;

    *ns = 0;
    if (**p != '.')
        return true;
    if ((*p)[1] < '0' || (*p)[1] > '9')
        return false;
    for ((*p)++; **p >= '0' && **p <= '9'; (*p)++)
        if (scale > 1) {
            scale /= 10;
            *ns += (**p - '0') * scale;
        }
    return true;
}

/* "Z", "+hh:mm", "-hh:mm" or nothing, as seconds east of UTC. */
static bool
zone(const char *p, int64_t *east)
{
    int64_t hh, mm;
    int sign = *p == '-' ? -1 : 1;

    *east = 0;
    if (*p == '\0' || strcmp(p, "Z") == 0)
        return true;
    if (*p != '+' && *p != '-')
        return false;
    p++;
    if (!field(&p, 2, ':', &hh) || !field(&p, 2, '\0', &mm) || *p != '\0' ||
        hh > 23 || mm > 59)
        return false;
    *east = sign * (hh * 3600 + mm * 60);
    return true;
}

/* Days in month m (1-12) of year y. */
static int64_t
month_days(int64_t y, int64_t m)
{
    static const int8_t days[] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[m - 1] + (m == 2 && leap);
}

int
ty__parse_rfc3339(const char *s, int64_t *wall_ns)
{
    int64_t y, mo, d, h, mi, sec, ns, east, t;

    if (s == NULL || !field(&s, 4, '-', &y) || !field(&s, 2, '-', &mo) ||
        !field(&s, 2, 'T', &d) || !field(&s, 2, ':', &h) ||
        !field(&s, 2, ':', &mi) || !field(&s, 2, '\0', &sec) ||
        !fraction(&s, &ns) || !zone(s, &east))
        return -EINVAL;
    /* 60: a leap second, which reads as the first second after it. */
    if (mo < 1 || mo > 12 || d < 1 || d > month_days(y, mo) || h > 23 ||
        mi > 59 || sec > 60)
        return -EINVAL;
    t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - east;
    if (t < 0 || t >= INT64_MAX / NS_PER_S)
        return -ERANGE;
    *wall_ns = t * NS_PER_S + ns;
    return 0;
}

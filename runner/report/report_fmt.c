/*
 * report_fmt.c — how the report writes bytes, rates and times for people
 * (the same units everywhere: KiB, MiB, GiB as the rest of testyard
 * prints them), escapes text for HTML, and reads the RFC 3339 times the
 * run folder's files carry.
 */
#include "report/report_int.h"

#include "base/strbuf.h"
#include "ty_units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void
report_fmt_bytes(int64_t v, char *buf, size_t size)
{
    if (v < 0)
        snprintf(buf, size, "-");
    else
        ty__format_bytes((uint64_t)v, buf, size);
}

int64_t
report_i64(double d)
{
    if (isnan(d))
        return -1;
    if (d >= 9223372036854775808.0) /* 2^63 */
        return INT64_MAX;
    return d < -9223372036854775808.0 ? INT64_MIN : (int64_t)d;
}

/* "+16.0 MiB/round", "-512.0 KiB/round", "+0 B/round". */
void
report_fmt_rate(double rate, char *buf, size_t size)
{
    char b[32];
    double a = fabs(rate);

    ty__format_bytes(a < 9e18 ? (uint64_t)llround(a) : UINT64_MAX, b,
                     sizeof(b));
    snprintf(buf, size, "%s%s/round", rate < 0 ? "-" : "+", b);
}

/* Milliseconds since the run started, as every duration is printed
 * (ty__format_duration): "850 ms", "12.3 s", "12m05s"; "-" below 0. */
void
report_fmt_ms(int64_t ms, char *buf, size_t size)
{
    int64_t ns;

    if (__builtin_mul_overflow(ms, 1000000, &ns))
        ns = ms < 0 ? -1 : INT64_MAX;
    ty__format_duration(ns, buf, size);
}

void
report_html_esc(struct strbuf *sb, const char *s)
{
    static const struct {
        char c;
        const char *ent;
    } ents[] = {{'&', "&amp;"},
                {'<', "&lt;"},
                {'>', "&gt;"},
                {'"', "&quot;"},
                {'\'', "&#39;"}};

    for (; s != NULL && *s != '\0'; s++) {
        size_t i = 0;

        while (i < ARRAY_LEN(ents) && ents[i].c != *s)
            i++;
        if (i < ARRAY_LEN(ents))
            strbuf_adds(sb, ents[i].ent);
        else
            strbuf_addc(sb, *s);
    }
}

/* "2026-11-29T18:45:29.123Z" (any number of fraction digits, Z or no
 * zone) to Unix nanoseconds; 0 when it is not such a time, or one before
 * 1970 or past what int64_t nanoseconds hold (the year 2262). */
int64_t
report_parse_time_ns(const char *s)
{
    struct tm tm = {0};
    int n = 0;
    int64_t frac = 0, scale = 1000000000;
    time_t t;

    if (s == NULL ||
        sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
               &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
        return 0;
    s += n;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            if (scale > 1) {
                scale /= 10;
                frac += (*s - '0') * scale;
            }
    if (*s != '\0' && strcmp(s, "Z") != 0)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    t = timegm(&tm);
    return t < 0 || t >= INT64_MAX / 1000000000
               ? 0
               : (int64_t)t * 1000000000 + frac;
}

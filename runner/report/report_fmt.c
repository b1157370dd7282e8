/*
 * report_fmt.c — how the report writes bytes, rates and times for people
 * (the same units everywhere: KiB, MiB, GiB as the rest of testyard
 * prints them) and escapes text for HTML. The RFC 3339 times the run
 * folder's files carry are read with time_parse_rfc3339 (base/util.h).
 */
#include "report/report_int.h"

#include "base/strbuf.h"
#include "ty_units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
report__fmt_bytes(int64_t v, char *buf, size_t size)
{
    if (v < 0)
        snprintf(buf, size, "-");
    else
        ty__format_bytes((uint64_t)v, buf, size);
}

int64_t
report__i64(double d)
{
    if (isnan(d))
        return -1;
    if (d >= 9223372036854775808.0) /* 2^63 */
        return INT64_MAX;
    return d < -9223372036854775808.0 ? INT64_MIN : (int64_t)d;
}

/* "+16.0 MiB/round", "-512.0 KiB/round", "+0 B/round". */
void
report__fmt_rate(double rate, char *buf, size_t size)
{
    char b[32];
    double a = fabs(rate);

    ty__format_bytes(a < 9e18 ? (uint64_t)llround(a) : UINT64_MAX, b,
                     sizeof(b));
    snprintf(buf, size, "%s%s/round", rate < 0 ? "-" : "+", b);
}

/* Milliseconds since the run started, as every duration is printed
 * (ty__format_duration): "850 ms", "12.3 s", "12m05s"; "-" below 0; the
 * report's times are whole milliseconds, so 0 is "0 ms". */
void
report__fmt_ms(int64_t ms, char *buf, size_t size)
{
    int64_t ns;

    if (ms == 0) {
        snprintf(buf, size, "0 ms");
        return;
    }
    if (__builtin_mul_overflow(ms, 1000000, &ns))
        ns = ms < 0 ? -1 : INT64_MAX;
    ty__format_duration(ns, buf, size);
}

void
report__html_cell(struct strbuf *sb, const char *cls, const char *text)
{
    strbuf_addf(sb, "<td%s%s%s>", cls ? " class=\"" : "", cls ? cls : "",
                cls ? "\"" : "");
    report__html_esc(sb, text ? text : "-");
    strbuf_adds(sb, "</td>");
}

void
report__html_esc(struct strbuf *sb, const char *s)
{
    strbuf_add_html(sb, s);
}

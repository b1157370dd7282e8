/*
 * sched_fixture.c — times for the schedule tests (see sched_fixture.h).
 */
#include "sched_fixture.h"

#include "th.h"

#include "ty_time.h"

#include <stdio.h>

int64_t
fx_time(const char *s)
{
    int64_t ns = 0;

    if (ty__parse_rfc3339(s, &ns) < 0)
        th_fail(__FILE__, __LINE__, "bad time literal %s", s);
    return ns / 1000000000;
}

const char *
fx_fmt(int64_t s, char buf[32])
{
    if (s < 0 || s == INT64_MAX)
        snprintf(buf, 32, "%lld", (long long)s);
    else
        ty__format_rfc3339(s * 1000000000, buf, 32);
    return buf;
}

/*
 * fuzz_schedule_cron.c — cron expressions as users write them
 * (runner/daemon/schedule_spec.c) and the firings found for them
 * (schedule_next.c), with the properties the daemon relies on: a spec
 * either parses or says which part is wrong; one that parses always has a
 * next firing, later than the time asked about, and the latest firing at
 * that instant is that instant, in UTC and in a zone with DST.
 */
#include "daemon/schedule_int.h"
#include "fuzz.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_spec(const struct schedule_spec *s, const char *expr, int64_t after)
{
    int64_t next = schedule__next(s, after), prev;

    if (next == INT64_MAX || next <= after)
        fuzz_fail("\"%s\" in %s after %lld: next %lld", expr,
                  schedule__tz_name(s->tz), (long long)after, (long long)next);
    prev = schedule__prev(s, next);
    if (prev != next)
        fuzz_fail("\"%s\" in %s: prev(next %lld) is %lld", expr,
                  schedule__tz_name(s->tz), (long long)next, (long long)prev);
    if (schedule__prev(s, next - 1) >= next)
        fuzz_fail("\"%s\": prev before %lld is not before it", expr,
                  (long long)next);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const zones[] = {"UTC", "Europe/Berlin"};
    /* 2026-03-29T00:30Z, just before Berlin's spring-forward, and
     * 2026-10-25T00:15Z, in its repeated hour */
    static const int64_t afters[] = {1774744200, 1792887300};
    char *expr = fuzz_cstr(data, size), *text;
    struct schedule_cron c;
    struct err err = {0};

    if (size > 200) {
        free(expr);
        return 0;
    }
    if (schedule__cron_parse(expr, &c, &err) < 0) {
        if (strncmp(err.msg, "field ", 6) != 0 &&
            strncmp(err.msg, "found ", 6) != 0)
            fuzz_fail("\"%s\" failed with \"%s\"", expr, err.msg);
        free(expr);
        return 0;
    }
    text = malloc(size + 6);
    memcpy(text, "cron ", 5);
    memcpy(text + 5, expr, size + 1);
    for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
        struct schedule_spec s;

        if (schedule__spec_init(&s, text, zones[z], 0, &err) < 0)
            continue; /* no tzdata for the zone */
        for (size_t a = 0; a < sizeof(afters) / sizeof(afters[0]); a++)
            check_spec(&s, expr, afters[a]);
        schedule__spec_release(&s);
    }
    free(text);
    free(expr);
    return 0;
}

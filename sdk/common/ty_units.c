/*
 * ty_units.c — parsing sizes, durations and CPU amounts (see ty_units.h).
 *
 * The number part is parsed by hand (digits, optional fraction) rather than
 * with strtod so that "1e3", " 12", "0x10", "inf" and locale commas are all
 * rejected, and so that "1.5Gi" is computed exactly in integers.
 */
#include "ty_units.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    const char *name;
    uint64_t mult;
    const char *system;
};

static const struct unit size_units[] = {
    {"", 1, "bytes"},
    {"B", 1, "bytes"},
    {"k", 1000ULL, "SI"},
    {"K", 1000ULL, "SI"},
    {"kB", 1000ULL, "SI"},
    {"KB", 1000ULL, "SI"},
    {"M", 1000000ULL, "SI"},
    {"MB", 1000000ULL, "SI"},
    {"G", 1000000000ULL, "SI"},
    {"GB", 1000000000ULL, "SI"},
    {"T", 1000000000000ULL, "SI"},
    {"TB", 1000000000000ULL, "SI"},
    {"Ki", 1ULL << 10, "IEC"},
    {"KiB", 1ULL << 10, "IEC"},
    {"Mi", 1ULL << 20, "IEC"},
    {"MiB", 1ULL << 20, "IEC"},
    {"Gi", 1ULL << 30, "IEC"},
    {"GiB", 1ULL << 30, "IEC"},
    {"Ti", 1ULL << 40, "IEC"},
    {"TiB", 1ULL << 40, "IEC"},
};

static const struct unit duration_units[] = {
    {"ns", 1, NULL},
    {"us", 1000, NULL},
    {"\xc2\xb5s", 1000, NULL},
    {"ms", 1000000, NULL},
    {"s", 1000000000ULL, NULL},
    {"m", 60000000000ULL, NULL},
    {"h", 3600000000000ULL, NULL},
};

/* A decimal number "123" or "1.25": integer part, fraction digits as an
 * integer and their count. Advances *p past it. */
struct decimal {
    uint64_t whole;
    uint64_t frac;
    int frac_digits;
};

static bool
parse_decimal(const char **p, struct decimal *d)
{
    const char *s = *p;
    bool any = false;

    d->whole = 0;
    d->frac = 0;
    d->frac_digits = 0;
    while (*s >= '0' && *s <= '9') {
        if (d->whole > (UINT64_MAX - 9) / 10)
            return false;
        d->whole = d->whole * 10 + (uint64_t)(*s++ - '0');
        any = true;
    }
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9') {
            if (d->frac_digits < 18) {
                d->frac = d->frac * 10 + (uint64_t)(*s - '0');
                d->frac_digits++;
            }
            s++;
        }
    }
    *p = s;
    return any;
}

/* whole*mult + frac*mult/10^digits, with overflow checks. */
static bool
scale_decimal(const struct decimal *d, uint64_t mult, uint64_t *out)
{
    uint64_t pow10 = 1, fracpart;
    unsigned __int128 f;

    if (mult != 0 && d->whole > UINT64_MAX / mult)
        return false;
    for (int i = 0; i < d->frac_digits; i++)
        pow10 *= 10;
    f = (unsigned __int128)d->frac * mult / pow10;
    fracpart = (uint64_t)f;
    if (d->whole * mult > UINT64_MAX - fracpart)
        return false;
    *out = d->whole * mult + fracpart;
    return true;
}

static const struct unit *
find_unit(const struct unit *units, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(units[i].name, name) == 0)
            return &units[i];
    return NULL;
}

int
ty__parse_size(const char *s, uint64_t *bytes, char *why, size_t whylen)
{
    const char *p = s;
    const struct unit *u;
    struct decimal d;

    if (!parse_decimal(&p, &d))
        goto bad;
    u = find_unit(size_units, sizeof(size_units) / sizeof(size_units[0]), p);
    if (u == NULL) {
        if (strcmp(p, "m") == 0 || strcmp(p, "mb") == 0 ||
            strcmp(p, "Mb") == 0 || strcmp(p, "g") == 0 ||
            strcmp(p, "gb") == 0) {
            snprintf(why, whylen,
                     "ambiguous size unit \"%s\": write MB/GB for powers "
                     "of 1000 or Mi/Gi for powers of 1024",
                     p);
            return -1;
        }
        goto bad;
    }
    if (!scale_decimal(&d, u->mult, bytes)) {
        snprintf(why, whylen, "size is too large");
        return -1;
    }
    return 0;
bad:
    snprintf(why, whylen,
             "expected a size like 512Mi, 1GiB (powers of 1024) or 512MB "
             "(powers of 1000)");
    return -1;
}

const char *
ty__size_system(const char *s)
{
    const char *p = s;
    const struct unit *u;
    struct decimal d;

    if (!parse_decimal(&p, &d))
        return "bytes";
    u = find_unit(size_units, sizeof(size_units) / sizeof(size_units[0]), p);
    return u ? u->system : "bytes";
}

static const struct unit *
match_duration_unit(const char **p)
{
    const struct unit *best = NULL;
    size_t bestlen = 0;
    size_t n = sizeof(duration_units) / sizeof(duration_units[0]);

    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(duration_units[i].name);

        if (strncmp(*p, duration_units[i].name, len) == 0 && len > bestlen) {
            best = &duration_units[i];
            bestlen = len;
        }
    }
    *p += bestlen;
    return best;
}

int
ty__parse_duration(const char *s, int64_t *ns, char *why, size_t whylen)
{
    const char *p = s;
    uint64_t total = 0;

    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return 0;
    }
    if (*p == '\0')
        goto bad;
    while (*p != '\0') {
        struct decimal d;
        const struct unit *u;
        uint64_t v;

        if (!parse_decimal(&p, &d))
            goto bad;
        u = match_duration_unit(&p);
        if (u == NULL)
            goto bad;
        if (!scale_decimal(&d, u->mult, &v) || total + v < total ||
            total + v > (uint64_t)INT64_MAX) {
            snprintf(why, whylen, "duration is too long");
            return -1;
        }
        total += v;
    }
    *ns = (int64_t)total;
    return 0;
bad:
    snprintf(why, whylen, "expected a duration like 250ms, 30s, 10m or 1m30s");
    return -1;
}

int
ty__parse_cpu(const char *s, int64_t *millicpus, char *why, size_t whylen)
{
    const char *p = s;
    struct decimal d;
    uint64_t v;

    if (!parse_decimal(&p, &d))
        goto bad;
    if (strcmp(p, "m") == 0) {
        if (d.frac_digits != 0)
            goto bad;
        v = d.whole;
    } else if (*p == '\0') {
        if (!scale_decimal(&d, 1000, &v))
            goto bad;
    } else {
        goto bad;
    }
    if (v == 0) {
        snprintf(why, whylen, "cpu must be more than 0");
        return -1;
    }
    if (v > 1000000) {
        snprintf(why, whylen, "cpu is too large (at most 1000 cpus)");
        return -1;
    }
    *millicpus = (int64_t)v;
    return 0;
bad:
    snprintf(why, whylen,
             "expected cpu like 1000m, 250m (millicpus), 0.5 or 2 (cpus)");
    return -1;
}

void
ty__format_bytes(uint64_t bytes, char *buf, size_t size)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)bytes;
    int i = 0;

    while (v >= 1024.0 && i < 5) {
        v /= 1024.0;
        i++;
    }
    if (i == 0)
        snprintf(buf, size, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, size, "%.1f %s", v, names[i]);
}

void
ty__format_bytes_tick(double v, char *buf, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;

    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    /* no floor(): the SDK does not make plans link libm */
    if (v == (double)(uint64_t)v)
        snprintf(buf, size, "%.0f %s", v, units[u]);
    else
        snprintf(buf, size, "%.1f %s", v, units[u]);
}

/* One form for every duration testyard prints (the run's summary line, the
 * report, the engine watch), chosen for reading at a glance: whole units
 * below a second, tenths of seconds below ten minutes, then minutes and
 * seconds the way durations are written in compositions. */
void
ty__format_duration(int64_t ns, char *buf, size_t size)
{
    if (ns < 0)
        snprintf(buf, size, "-");
    else if (ns < 1000)
        snprintf(buf, size, "%lld ns", (long long)ns);
    else if (ns < 1000000)
        snprintf(buf, size, "%lld us", (long long)(ns / 1000));
    else if (ns < 1000000000)
        snprintf(buf, size, "%lld ms", (long long)(ns / 1000000));
    else if (ns < 600 * 1000000000LL)
        snprintf(buf, size, "%.1f s", (double)ns / 1e9);
    else
        snprintf(buf, size, "%lldm%02llds", (long long)(ns / 60000000000LL),
                 (long long)(ns / 1000000000 % 60));
}

int
ty__parse_signal(const char *s)
{
    char *end;
    long n;

    if (strcmp(s, "none") == 0 || strcmp(s, "0") == 0)
        return 0;
    if (strncmp(s, "SIG", 3) == 0)
        s += 3;
    if (strcmp(s, "USR1") == 0)
        return SIGUSR1;
    if (strcmp(s, "USR2") == 0)
        return SIGUSR2;
    if (strncmp(s, "RTMIN+", 6) == 0) {
        n = strtol(s + 6, &end, 10);
        return *end == '\0' && end > s + 6 && n >= 0 && SIGRTMIN + n <= SIGRTMAX
                   ? SIGRTMIN + (int)n
                   : -1;
    }
    n = strtol(s, &end, 10);
    return end > s && *end == '\0' && n > 0 && n < NSIG ? (int)n : -1;
}

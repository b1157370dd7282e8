/*
 * admit.c — memory and CPU admission for the daemon's queue (see
 * admit_int.h).
 *
 * A task's need is what its limits let it take, not what it happens to
 * use: the kernel enforces count × limit per group, so tasks whose sums
 * fit the budget together cannot OOM each other whatever they do. The
 * budgets are parsed with the same units as compositions (ty_units), and
 * every figure a waiting task shows is printed with ty__format_bytes, as
 * the rest of testyard prints sizes.
 */
#include "daemon/admit_int.h"

#include "base/util.h"
#include "ty_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MEMINFO_MAX (1 << 20)

static uint64_t
u64_add_sat(uint64_t a, uint64_t b)
{
    uint64_t r;

    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t
u64_mul_sat(uint64_t a, uint64_t b)
{
    uint64_t r;

    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

static int64_t
i64_mul_sat(int64_t a, int64_t b)
{
    int64_t r;

    return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

void
admit__need(const struct composition *c, struct admit_need *need)
{
    memset(need, 0, sizeof(*need));
    for (size_t i = 0; i < c->ngroups; i++) {
        const struct composition_group *g = &c->groups[i];
        struct admit_need one = {0};

        if (g->memory_bytes == 0)
            one.unlimited_memory = true;
        else
            one.memory_bytes =
                u64_mul_sat((uint64_t)g->instances, g->memory_bytes);
        one.millicpu = i64_mul_sat(g->instances, g->millicpu);
        admit__need_add(need, &one);
    }
}

void
admit__need_add(struct admit_need *sum, const struct admit_need *n)
{
    sum->memory_bytes = u64_add_sat(sum->memory_bytes, n->memory_bytes);
    sum->millicpu = i64_add_sat(sum->millicpu, n->millicpu);
    sum->unlimited_memory = sum->unlimited_memory || n->unlimited_memory;
}

/* "75%": a whole percentage from 1 to 100, or -1 when s is not one. */
static int
parse_percent(const char *s)
{
    char *end;
    long v;

    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || strcmp(end, "%") != 0 || v < 1 || v > 100)
        return -1;
    return (int)v;
}

static int
percent_of(const char *s, int percent, uint64_t mem_available, uint64_t *out,
           struct err *err)
{
    *out =
        (uint64_t)((unsigned __int128)mem_available * (unsigned)percent / 100);
    if (*out > 0)
        return 0;
    err_set(err, EINVAL,
            "%s of MemAvailable is nothing (MemAvailable unknown or 0); give "
            "a size like 12GiB",
            s[0] ? s : "the default share");
    return err_status(err, EXIT_USAGE);
}

int
admit__parse_memory_budget(const char *s, uint64_t mem_available, uint64_t *out,
                           struct err *err)
{
    char why[256];
    int percent;

    if (s == NULL || s[0] == '\0')
        return percent_of("", ADMIT_DEFAULT_MEMORY_PERCENT, mem_available, out,
                          err);
    if (strchr(s, '%') != NULL) {
        percent = parse_percent(s);
        if (percent < 0) {
            err_set(err, EINVAL,
                    "expected a percentage of MemAvailable from 1%% to "
                    "100%% like 75%%, got \"%s\"",
                    s);
            return err_status(err, EXIT_USAGE);
        }
        return percent_of(s, percent, mem_available, out, err);
    }
    if (ty__parse_size(s, out, why, sizeof(why)) < 0) {
        err_set(err, EINVAL,
                "%s, or a percentage of MemAvailable like 75%%; got \"%s\"",
                why, s);
        return err_status(err, EXIT_USAGE);
    }
    if (*out > 0)
        return 0;
    err_set(err, EINVAL, "the memory budget must be more than 0, got \"%s\"",
            s);
    return err_status(err, EXIT_USAGE);
}

int
admit__parse_cpu_budget(const char *s, int64_t online_cpus, int64_t *out,
                        struct err *err)
{
    char why[256];

    if (s == NULL || s[0] == '\0') {
        *out = i64_mul_sat(online_cpus > 0 ? online_cpus : 1, 1000);
        return 0;
    }
    if (ty__parse_cpu(s, out, why, sizeof(why)) < 0) {
        err_set(err, EINVAL, "%s; got \"%s\"", why, s);
        return err_status(err, EXIT_USAGE);
    }
    return 0;
}

int
admit__budget(const char *memory, const char *cpu, struct admit_budget *b,
              struct err *err)
{
    uint64_t avail = 0;

    if ((memory == NULL || memory[0] == '\0' || strchr(memory, '%')) &&
        admit__mem_available(&avail, err) < 0)
        return err_prefix(err, "--memory-budget");
    if (admit__parse_memory_budget(memory, avail, &b->memory_bytes, err) < 0)
        return err_prefix(err, "--memory-budget");
    if (admit__parse_cpu_budget(cpu, sysconf(_SC_NPROCESSORS_ONLN),
                                &b->millicpu, err) < 0)
        return err_prefix(err, "--cpu-budget");
    return 0;
}

int
admit__parse_meminfo(const char *text, uint64_t *out, struct err *err)
{
    const char *p = strstr(text, "MemAvailable:");
    unsigned long long kb;
    char unit[8];

    while (p != NULL && p != text && p[-1] != '\n')
        p = strstr(p + 1, "MemAvailable:");
    if (p == NULL)
        return err_set(err, ENOENT,
                       "/proc/meminfo has no MemAvailable (Linux 3.14 or "
                       "later has it); give the memory budget as a size");
    if (sscanf(p, "MemAvailable: %llu %7s", &kb, unit) != 2 ||
        strcmp(unit, "kB") != 0 || kb > UINT64_MAX / 1024)
        return err_set(err, EINVAL,
                       "/proc/meminfo: expected \"MemAvailable: N kB\", got "
                       "\"%.40s\"",
                       p);
    *out = (uint64_t)kb * 1024;
    return 0;
}

int
admit__mem_available(uint64_t *out, struct err *err)
{
    cleanup_free char *text =
        file_read("/proc/meminfo", MEMINFO_MAX, NULL, err);

    if (text == NULL)
        return -1;
    return admit__parse_meminfo(text, out, err);
}

/* Millicpus as CPUs: 1500 → "1.5 CPU", 2000 → "2 CPU", 250 → "0.25 CPU". */
static void
format_cpu(uint64_t millicpu, char *buf, size_t size)
{
    char num[32];
    size_t len;

    snprintf(num, sizeof(num), "%llu.%03llu",
             (unsigned long long)(millicpu / 1000),
             (unsigned long long)(millicpu % 1000));
    len = strlen(num);
    while (num[len - 1] == '0')
        num[--len] = '\0';
    if (num[len - 1] == '.')
        num[--len] = '\0';
    snprintf(buf, size, "%s CPU", num);
}

/* An amount of memory (bytes) or CPU (millicpus) as a reason shows it; a
 * budget as the user likely wrote it: "12 GiB" rather than "12.0 GiB". */
static void
format_amount(uint64_t v, bool cpu, bool budget, char *buf, size_t size)
{
    char *dot;

    if (cpu) {
        format_cpu(v, buf, size);
        return;
    }
    ty__format_bytes(v, buf, size);
    dot = budget ? strstr(buf, ".0 ") : NULL;
    if (dot != NULL)
        memmove(dot, dot + 2, strlen(dot + 2) + 1);
}

static uint64_t
cpu_amount(int64_t millicpu)
{
    return millicpu > 0 ? (uint64_t)millicpu : 0;
}

/* need beside used within budget; else why says how far off it is. */
static bool
share_fits(uint64_t need, uint64_t used, uint64_t budget, bool cpu, char *why,
           size_t whylen)
{
    uint64_t free = budget > used ? budget - used : 0;
    char a[32], f[32], b[32];

    if (need <= free)
        return true;
    format_amount(need, cpu, false, a, sizeof(a));
    format_amount(free, cpu, false, f, sizeof(f));
    format_amount(budget, cpu, true, b, sizeof(b));
    snprintf(why, whylen, "needs %s, %s free of the %s budget", a, f, b);
    return false;
}

bool
admit__fits(const struct admit_need *need, const struct admit_need *used,
            const struct admit_budget *b, char *why, size_t whylen)
{
    bool running =
        used->unlimited_memory || used->memory_bytes > 0 || used->millicpu > 0;

    if (used->unlimited_memory) {
        snprintf(why, whylen,
                 "waits for a task that runs alone (a group "
                 "without a memory limit)");
        return false;
    }
    if (need->unlimited_memory && running) {
        snprintf(why, whylen, "runs alone: a group has no memory limit");
        return false;
    }
    if (!need->unlimited_memory &&
        !share_fits(need->memory_bytes, used->memory_bytes, b->memory_bytes,
                    false, why, whylen))
        return false;
    return share_fits(cpu_amount(need->millicpu), cpu_amount(used->millicpu),
                      cpu_amount(b->millicpu), true, why, whylen);
}

bool
admit__too_large(const struct admit_need *need, const struct admit_budget *b,
                 char *why, size_t whylen)
{
    bool mem = !need->unlimited_memory && need->memory_bytes > b->memory_bytes;
    bool cpu = need->millicpu > b->millicpu;
    char a[32], c[32];

    if (!mem && !cpu)
        return false;
    format_amount(mem ? need->memory_bytes : cpu_amount(need->millicpu), !mem,
                  false, a, sizeof(a));
    format_amount(mem ? b->memory_bytes : cpu_amount(b->millicpu), !mem, true,
                  c, sizeof(c));
    snprintf(why, whylen, "needs %s, more than the whole %s budget", a, c);
    return true;
}

/*
 * test_admit.c — admission: the need of a loaded composition (count ×
 * limit, a group without a memory limit), whether a task fits beside
 * what runs or is too large for the whole budget, with the exact reasons
 * a waiting or refused task shows, and the budgets as the daemon's
 * options give them, bad values included.
 */
#include "backend/backend.h"
#include "base/util.h"
#include "config/config.h"
#include "daemon/admit_int.h"
#include "th.h"
#include "th_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

static const char *const manifest = "name: ms\n"
                                    "build: {sources: [main.c]}\n"
                                    "cases:\n"
                                    "  - name: stress\n"
                                    "    instances: {min: 1, max: 100}\n";

static struct composition *
load(const char *text)
{
    struct composition_opts o = {.runners = backend_runners()};
    struct err err = {0};
    struct composition *c;
    char *path;

    free(th_write_tmp("plans/ms/manifest.yaml", manifest));
    path = th_write_tmp("comps/c.yaml", text);
    c = composition_load(path, &o, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    free(path);
    return c;
}

static void
t_need(void)
{
    struct composition *c =
        load("global: {plan: ms, case: stress, runner: local:exec}\n"
             "groups:\n"
             "  - id: providers\n"
             "    instances: {count: 2}\n"
             "    resources: {memory: 512Mi, cpu: 1500m}\n"
             "  - id: requestors\n"
             "    instances: {count: 3}\n"
             "    resources: {memory: 1GiB}\n");
    struct admit_need n;

    if (c == NULL)
        return;
    admit__need(c, &n);
    CHECK_EQ_INT(n.memory_bytes, 4 * GiB);
    CHECK_EQ_INT(n.millicpu, 3000);
    CHECK(!n.unlimited_memory);
    composition_destroy(&c);
}

static void
t_need_unlimited(void)
{
    struct composition *c =
        load("global: {plan: ms, case: stress, runner: local:exec}\n"
             "groups:\n"
             "  - id: providers\n"
             "    instances: {count: 4}\n"
             "    resources: {memory: 100Mi, cpu: 250m}\n"
             "  - id: free\n"
             "    instances: {count: 1}\n");
    struct admit_need n;

    if (c == NULL)
        return;
    admit__need(c, &n);
    CHECK(n.unlimited_memory);
    CHECK_EQ_INT(n.memory_bytes, 400 * MiB);
    CHECK_EQ_INT(n.millicpu, 1000);
    composition_destroy(&c);
}

static void
t_need_add(void)
{
    struct admit_need sum = {0};
    struct admit_need a = {.memory_bytes = GiB, .millicpu = 500};
    struct admit_need b = {.memory_bytes = UINT64_MAX,
                           .unlimited_memory = true};

    admit__need_add(&sum, &a);
    admit__need_add(&sum, &a);
    CHECK_EQ_INT(sum.memory_bytes, 2 * GiB);
    CHECK_EQ_INT(sum.millicpu, 1000);
    CHECK(!sum.unlimited_memory);
    admit__need_add(&sum, &b);
    CHECK(sum.memory_bytes == UINT64_MAX); /* held, not wrapped */
    CHECK(sum.unlimited_memory);
}

static const struct admit_budget budget = {.memory_bytes = 12 * GiB,
                                           .millicpu = 2000};

static void
t_fits_memory(void)
{
    struct admit_need need = {.memory_bytes = 4 * GiB, .millicpu = 1000};
    struct admit_need used = {.memory_bytes = 21 * GiB / 2};
    struct admit_need none = {0};
    char why[256] = "";

    CHECK(!admit__fits(&need, &used, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "needs 4.0 GiB, 1.5 GiB free of the 12 GiB budget");
    CHECK(admit__fits(&need, &none, &budget, why, sizeof(why)));
    /* exactly what is left fits */
    used.memory_bytes = 8 * GiB;
    CHECK(admit__fits(&need, &used, &budget, why, sizeof(why)));
    used.memory_bytes = 8 * GiB + 1;
    CHECK(!admit__fits(&need, &used, &budget, why, sizeof(why)));
    /* more in use than the budget (it was lowered): nothing free */
    used.memory_bytes = 13 * GiB;
    CHECK(!admit__fits(&need, &used, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "needs 4.0 GiB, 0 B free of the 12 GiB budget");
}

static void
t_fits_cpu(void)
{
    struct admit_need need = {.memory_bytes = GiB, .millicpu = 1500};
    struct admit_need used = {.memory_bytes = GiB, .millicpu = 1500};
    char why[256] = "";

    CHECK(!admit__fits(&need, &used, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "needs 1.5 CPU, 0.5 CPU free of the 2 CPU budget");
    used.millicpu = 500;
    CHECK(admit__fits(&need, &used, &budget, why, sizeof(why)));
    used.millicpu = 1750;
    need.millicpu = 1250;
    CHECK(!admit__fits(&need, &used, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "needs 1.25 CPU, 0.25 CPU free of the 2 CPU budget");
    /* a task without CPU quotas is charged nothing */
    need.millicpu = 0;
    used.millicpu = 2000;
    CHECK(admit__fits(&need, &used, &budget, why, sizeof(why)));
}

static void
t_fits_unlimited(void)
{
    struct admit_need alone = {.memory_bytes = GiB, .unlimited_memory = true};
    struct admit_need small = {.memory_bytes = 1, .millicpu = 0};
    struct admit_need cpu_only = {.millicpu = 100};
    struct admit_need none = {0};
    char why[256] = "";

    /* nothing runs: it starts, whatever the memory budget */
    CHECK(admit__fits(&alone, &none, &budget, why, sizeof(why)));
    CHECK(!admit__fits(&alone, &small, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "runs alone: a group has no memory limit");
    CHECK(!admit__fits(&alone, &cpu_only, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "runs alone: a group has no memory limit");
    /* and while it runs, nothing else starts */
    CHECK(!admit__fits(&small, &alone, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "waits for a task that runs alone (a group without a "
                      "memory limit)");
    CHECK(!admit__fits(&alone, &alone, &budget, why, sizeof(why)));
}

static void
t_too_large(void)
{
    struct admit_need n = {.memory_bytes = 20 * GiB};
    char why[256] = "";

    CHECK(admit__too_large(&n, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "needs 20.0 GiB, more than the whole 12 GiB budget");
    n.memory_bytes = 12 * GiB;
    CHECK(!admit__too_large(&n, &budget, why, sizeof(why)));
    n.memory_bytes = 12 * GiB + 1;
    CHECK(admit__too_large(&n, &budget, why, sizeof(why)));
    /* without a memory limit: never too large for memory */
    n.unlimited_memory = true;
    n.memory_bytes = 100 * GiB;
    CHECK(!admit__too_large(&n, &budget, why, sizeof(why)));
    /* but CPU still counts */
    n.millicpu = 2500;
    CHECK(admit__too_large(&n, &budget, why, sizeof(why)));
    CHECK_EQ_STR(why, "needs 2.5 CPU, more than the whole 2 CPU budget");
    n.millicpu = 2000;
    CHECK(!admit__too_large(&n, &budget, why, sizeof(why)));
}

static void
t_budget_memory(void)
{
    static const struct {
        const char *s;
        uint64_t avail, want;
    } ok[] = {
        {"12GiB", 0, 12 * GiB},           {"512Mi", 0, 512 * MiB},
        {"8GB", 0, UINT64_C(8000000000)}, {"1.5Gi", 0, 3 * GiB / 2},
        {"75%", 8 * GiB, 6 * GiB},        {"100%", 8 * GiB, 8 * GiB},
        {"1%", 100 * MiB, MiB},           {"", 16 * GiB, 12 * GiB},
    };
    struct err err = {0};

    for (size_t i = 0; i < ARRAY_LEN(ok); i++) {
        uint64_t v = 0;

        err_clear(&err);
        CHECK_MSG(admit__parse_memory_budget(ok[i].s, ok[i].avail, &v, &err) ==
                      0,
                  "\"%s\": %s", ok[i].s, err.msg);
        CHECK_MSG(v == ok[i].want, "\"%s\": %llu", ok[i].s,
                  (unsigned long long)v);
    }
}

static void
t_budget_memory_bad(void)
{
    static const struct {
        const char *s, *msg;
    } bad[] = {
        {"lots", "expected a size like 512Mi, 1GiB (powers of 1024) or 512MB "
                 "(powers of 1000), or a percentage of MemAvailable like 75%; "
                 "got \"lots\""},
        {"12g", "ambiguous size unit \"g\""},
        {"0", "the memory budget must be more than 0, got \"0\""},
        {"0%", "expected a percentage of MemAvailable from 1% to 100% like "
               "75%, got \"0%\""},
        {"150%", "got \"150%\""},
        {"7.5%", "got \"7.5%\""},
        {"%", "got \"%\""},
        {"75 %", "got \"75 %\""},
        {"-5%", "got \"-5%\""},
    };
    struct err err = {0};
    uint64_t none = 0;

    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        uint64_t v = 42;

        err_clear(&err);
        CHECK_MSG(admit__parse_memory_budget(bad[i].s, 8 * GiB, &v, &err) < 0,
                  "\"%s\" accepted", bad[i].s);
        CHECK_CONTAINS(err.msg, bad[i].msg);
        CHECK_EQ_INT(err.status, EXIT_USAGE);
    }
    /* a share of nothing is no budget */
    err_clear(&err);
    CHECK(admit__parse_memory_budget("", 0, &none, &err) < 0);
    CHECK_CONTAINS(err.msg, "give a size like 12GiB");
}

static void
t_budget_cpu(void)
{
    static const struct {
        const char *s;
        int64_t online, want;
    } ok[] = {
        {"2", 0, 2000},  {"1.5", 0, 1500}, {"1500m", 0, 1500}, {"", 8, 8000},
        {NULL, 3, 3000}, {"", 0, 1000},    {"0.25", 0, 250},
    };
    static const char *const bad[] = {"0",  "two",    "1.5m",
                                      "-1", "2 cpus", "1e3"};
    struct err err = {0};
    int64_t cpus = 0;

    for (size_t i = 0; i < ARRAY_LEN(ok); i++) {
        int64_t v = 0;

        err_clear(&err);
        CHECK_MSG(admit__parse_cpu_budget(ok[i].s, ok[i].online, &v, &err) == 0,
                  "\"%s\": %s", ok[i].s ? ok[i].s : "(null)", err.msg);
        CHECK_EQ_INT(v, ok[i].want);
    }
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        int64_t v = 0;
        char got[64];

        err_clear(&err);
        CHECK_MSG(admit__parse_cpu_budget(bad[i], 4, &v, &err) < 0,
                  "\"%s\" accepted", bad[i]);
        snprintf(got, sizeof(got), "; got \"%s\"", bad[i]);
        CHECK_CONTAINS(err.msg, got);
        CHECK_EQ_INT(err.status, EXIT_USAGE);
    }
    err_clear(&err);
    CHECK(admit__parse_cpu_budget("two", 4, &cpus, &err) < 0);
    CHECK_EQ_STR(err.msg, "expected cpu like 1000m, 250m (millicpus), 0.5 or "
                          "2 (cpus); got \"two\"");
}

static void
t_meminfo(void)
{
    struct err err = {0};
    uint64_t v = 0;

    CHECK(admit__parse_meminfo("MemTotal:       16314208 kB\n"
                               "MemFree:         1022744 kB\n"
                               "MemAvailable:    8000000 kB\n",
                               &v, &err) == 0);
    CHECK_EQ_INT(v, UINT64_C(8000000) * 1024);
    /* only a line's start counts */
    err_clear(&err);
    CHECK(admit__parse_meminfo("XMemAvailable: 5 kB\n", &v, &err) < 0);
    CHECK_CONTAINS(err.msg, "no MemAvailable");
    err_clear(&err);
    CHECK(admit__parse_meminfo("MemAvailable: lots\n", &v, &err) < 0);
    CHECK_CONTAINS(err.msg, "expected \"MemAvailable: N kB\"");
    /* this machine's */
    err_clear(&err);
    v = 0;
    CHECK_MSG(admit__mem_available(&v, &err) == 0, "%s", err.msg);
    CHECK(v > 0);
}

static void
t_budget(void)
{
    struct admit_budget b = {0};
    struct err err = {0};

    CHECK_MSG(admit__budget("3GiB", "1500m", &b, &err) == 0, "%s", err.msg);
    CHECK_EQ_INT(b.memory_bytes, 3 * GiB);
    CHECK_EQ_INT(b.millicpu, 1500);
    CHECK_MSG(admit__budget(NULL, NULL, &b, &err) == 0, "%s", err.msg);
    CHECK(b.memory_bytes > 0);
    CHECK(b.millicpu >= 1000 && b.millicpu % 1000 == 0);
    CHECK(admit__budget("3GiB", "x", &b, &err) < 0);
    CHECK_CONTAINS(err.msg, "--cpu-budget: expected cpu like");
    CHECK(admit__budget("3Gx", "1", &b, &err) < 0);
    CHECK_CONTAINS(err.msg, "--memory-budget: expected a size like");
}

static const struct th_case cases[] = {
    {"need", t_need},
    {"need_unlimited", t_need_unlimited},
    {"need_add", t_need_add},
    {"fits_memory", t_fits_memory},
    {"fits_cpu", t_fits_cpu},
    {"fits_unlimited", t_fits_unlimited},
    {"too_large", t_too_large},
    {"budget_memory", t_budget_memory},
    {"budget_memory_bad", t_budget_memory_bad},
    {"budget_cpu", t_budget_cpu},
    {"meminfo", t_meminfo},
    {"budget", t_budget},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

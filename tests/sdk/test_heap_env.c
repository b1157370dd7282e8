/*
 * test_heap_env.c — the heap profiler's TESTYARD_HEAP_* settings, read in
 * one place for the linked SDK and the LD_PRELOAD library: defaults, the
 * values users write, and the one line a bad value gets (both paths print
 * that line; tests/e2e/heap-pprof.sh checks they do).
 */
#include "th.h"
#include "ty_heap.h"
#include "ty_symbols.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const vars[] = {
    "TESTYARD_HEAP_RATE",          "TESTYARD_HEAP_PROFILE_INTERVAL",
    "TESTYARD_HEAP_UNWIND",        "TESTYARD_HEAP_SIGNAL",
    "TESTYARD_HEAP_AT_EXIT",       "TESTYARD_HEAP_DIR",
    "TEST_OUTPUTS_PATH",           "TESTYARD_HEAP_PEAK_STEP",
    "TESTYARD_HEAP_PEAK_INTERVAL", "TESTYARD_HEAP_DEBUG_DIRS",
};

/* The environment holds none of vars but the "NAME=value" of set (NULL
 * at its end), then *e is read from it; read(e, NULL) leaves it clear. */
static void
read_with(struct ty__heap_env *e, const char *const *set)
{
    char name[64];

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
    for (; set != NULL && *set != NULL; set++) {
        const char *eq = strchr(*set, '=');

        snprintf(name, sizeof(name), "%.*s", (int)(eq - *set), *set);
        setenv(name, eq + 1, 1);
    }
    ty__heap_env_read(e);
}

static void
t_defaults(void)
{
    struct ty__heap_env e;

    read_with(&e, NULL);
    CHECK(!e.rate_set);
    CHECK_EQ_INT(e.rate, TY_HEAP_DEFAULT_RATE);
    CHECK_EQ_INT(e.interval_ns, 0);
    CHECK_EQ_INT(e.unwind, TY_UNWIND_AUTO);
    CHECK_EQ_INT(e.sig, SIGUSR2);
    CHECK_EQ_INT(e.peak_step, 32 << 20);
    CHECK_EQ_INT(e.peak_interval_ns, 1000000000);
    CHECK(e.at_exit);
    CHECK_EQ_STR(e.dir, ".");
    CHECK(e.debug_dirs == NULL);
    for (int i = 0; i < TY_HEAP_VAR_N; i++)
        CHECK_EQ_STR(e.bad[i], "");
    /* empty is unset */
    read_with(&e,
              (const char *const[]){"TESTYARD_HEAP_RATE=", "TESTYARD_HEAP_DIR=",
                                    "TEST_OUTPUTS_PATH=/outputs", NULL});
    CHECK(!e.rate_set);
    CHECK_EQ_STR(e.dir, "/outputs");
    read_with(&e, NULL);
}

static void
t_values(void)
{
    struct ty__heap_env e;

    read_with(
        &e, (const char *const[]){
                "TESTYARD_HEAP_RATE=1Mi", "TESTYARD_HEAP_PROFILE_INTERVAL=1.5s",
                "TESTYARD_HEAP_UNWIND=backtrace",
                "TESTYARD_HEAP_SIGNAL=SIGUSR1", "TESTYARD_HEAP_AT_EXIT=0",
                "TESTYARD_HEAP_DIR=/prof", "TEST_OUTPUTS_PATH=/outputs", NULL});
    CHECK(e.rate_set);
    CHECK_EQ_INT(e.rate, 1 << 20);
    CHECK_EQ_INT(e.interval_ns, 1500000000);
    CHECK_EQ_INT(e.unwind, TY_UNWIND_BACKTRACE);
    CHECK_EQ_INT(e.sig, SIGUSR1);
    CHECK(!e.at_exit);
    CHECK_EQ_STR(e.dir, "/prof");
    read_with(&e, (const char *const[]){"TESTYARD_HEAP_RATE=0",
                                        "TESTYARD_HEAP_UNWIND=fp",
                                        "TESTYARD_HEAP_SIGNAL=RTMIN+3", NULL});
    CHECK(e.rate_set);
    CHECK_EQ_INT(e.rate, 0);
    CHECK_EQ_INT(e.unwind, TY_UNWIND_FP);
    CHECK_EQ_INT(e.sig, SIGRTMIN + 3);
    for (int i = 0; i < TY_HEAP_VAR_N; i++)
        CHECK_EQ_STR(e.bad[i], "");
    read_with(&e, (const char *const[]){"TESTYARD_HEAP_SIGNAL=none", NULL});
    CHECK_EQ_INT(e.sig, 0);
    read_with(&e,
              (const char *const[]){"TESTYARD_HEAP_PEAK_STEP=64Mi",
                                    "TESTYARD_HEAP_PEAK_INTERVAL=250ms", NULL});
    CHECK_EQ_INT(e.peak_step, 64 << 20);
    CHECK_EQ_INT(e.peak_interval_ns, 250000000);
    read_with(&e,
              (const char *const[]){"TESTYARD_HEAP_PEAK_STEP=off",
                                    "TESTYARD_HEAP_PEAK_INTERVAL=0s", NULL});
    CHECK_EQ_INT(e.peak_step, 0);
    CHECK_EQ_INT(e.peak_interval_ns, 0);
    read_with(&e, (const char *const[]){"TESTYARD_HEAP_PEAK_STEP=0", NULL});
    CHECK_EQ_INT(e.peak_step, 0);
    for (int i = 0; i < TY_HEAP_VAR_N; i++)
        CHECK_EQ_STR(e.bad[i], "");
    read_with(&e, NULL);
}

/* Each bad value: the default in its place and one line saying so. */
static void
t_bad(void)
{
    struct ty__heap_env e;

    read_with(&e,
              (const char *const[]){"TESTYARD_HEAP_RATE=lots",
                                    "TESTYARD_HEAP_PROFILE_INTERVAL=5 minutes",
                                    "TESTYARD_HEAP_UNWIND=dwarf",
                                    "TESTYARD_HEAP_SIGNAL=RTMIN+999",
                                    "TESTYARD_HEAP_PEAK_STEP=big",
                                    "TESTYARD_HEAP_PEAK_INTERVAL=often", NULL});
    CHECK(!e.rate_set);
    CHECK_EQ_INT(e.rate, TY_HEAP_DEFAULT_RATE);
    CHECK_EQ_INT(e.interval_ns, 0);
    CHECK_EQ_INT(e.unwind, TY_UNWIND_AUTO);
    CHECK_EQ_INT(e.sig, SIGUSR2);
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_RATE],
                 "TESTYARD_HEAP_RATE=\"lots\": expected a size like 512Mi, "
                 "1GiB (powers of 1024) or 512MB (powers of 1000); sampling "
                 "every 524288 bytes");
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_INTERVAL],
                 "TESTYARD_HEAP_PROFILE_INTERVAL=\"5 minutes\": expected a "
                 "duration like 250ms, 30s, 10m or 1m30s; no periodic "
                 "snapshots");
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_UNWIND],
                 "TESTYARD_HEAP_UNWIND=\"dwarf\": expected auto, fp or "
                 "backtrace; using auto");
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_SIGNAL],
                 "TESTYARD_HEAP_SIGNAL=\"RTMIN+999\": expected USR1, USR2, "
                 "RTMIN+n, a number or none; using USR2");
    CHECK_EQ_INT(e.peak_step, 32 << 20);
    CHECK_EQ_INT(e.peak_interval_ns, 1000000000);
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_PEAK_STEP],
                 "TESTYARD_HEAP_PEAK_STEP=\"big\": expected a size like "
                 "512Mi, 1GiB (powers of 1024) or 512MB (powers of 1000), or "
                 "off; a peak snapshot every 32 MiB the heap grows");
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_PEAK_INTERVAL],
                 "TESTYARD_HEAP_PEAK_INTERVAL=\"often\": expected a duration "
                 "like 250ms, 30s, 10m or 1m30s; at most one peak snapshot a "
                 "second");
    read_with(&e, NULL);
}

/* TESTYARD_HEAP_DEBUG_DIRS: absolute folders are kept as given; a
 * relative one is said (and skipped by the symbolizer); a list too long
 * to keep is said, and the default used. */
static void
t_debug_dirs(void)
{
    static char big[TY_SYMBOLS_DIRS_MAX + 40];
    const char *set[] = {big, NULL};
    struct ty__heap_env e;
    int n;

    read_with(&e,
              (const char *const[]){
                  "TESTYARD_HEAP_DEBUG_DIRS=/opt/dbg::/usr/lib/debug", NULL});
    CHECK_EQ_STR(e.debug_dirs, "/opt/dbg::/usr/lib/debug");
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_DEBUG_DIRS], "");
    read_with(&e, (const char *const[]){
                      "TESTYARD_HEAP_DEBUG_DIRS=/opt/dbg:debug:/x", NULL});
    CHECK_EQ_STR(e.debug_dirs, "/opt/dbg:debug:/x");
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_DEBUG_DIRS],
                 "TESTYARD_HEAP_DEBUG_DIRS: \"debug\" is not an absolute "
                 "path; left out");
    n = snprintf(big, sizeof(big), "TESTYARD_HEAP_DEBUG_DIRS=/");
    memset(big + n, 'd', sizeof(big) - (size_t)n - 1);
    big[sizeof(big) - 1] = '\0';
    read_with(&e, set);
    CHECK(e.debug_dirs == NULL);
    CHECK_EQ_STR(e.bad[TY_HEAP_VAR_DEBUG_DIRS],
                 "TESTYARD_HEAP_DEBUG_DIRS: longer than 4095 bytes; looking "
                 "for debug files under /usr/lib/debug");
    read_with(&e, NULL);
}

/* A long value is cut in the line, which still says what is used. */
static void
t_bad_long(void)
{
    char big[300];
    const char *set[] = {big, NULL};
    struct ty__heap_env e;
    int n = snprintf(big, sizeof(big), "TESTYARD_HEAP_SIGNAL=");

    memset(big + n, 'x', sizeof(big) - (size_t)n - 1);
    big[sizeof(big) - 1] = '\0';
    read_with(&e, set);
    CHECK(strlen(e.bad[TY_HEAP_VAR_SIGNAL]) < TY_HEAP_BAD_MAX);
    CHECK(strstr(e.bad[TY_HEAP_VAR_SIGNAL], "; using USR2") != NULL);
    read_with(&e, NULL);
}

static const struct th_case cases[] = {
    {"defaults", t_defaults}, {"values", t_values},         {"bad", t_bad},
    {"bad_long", t_bad_long}, {"debug_dirs", t_debug_dirs}, {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return th_main(argc, argv, cases);
}

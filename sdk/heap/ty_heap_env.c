/*
 * ty_heap_env.c — the heap profiler's settings from the environment.
 *
 * The profiler runs linked into a plan through the SDK and as an
 * LD_PRELOAD library for any program; both read the same TESTYARD_HEAP_*
 * variables here, with one validation and one set of defaults, so a bad
 * value gets the same words whichever way the profiler was loaded.
 * Nothing here allocates: the profiler's start, which reads the rate and
 * the unwinder, may be inside the first malloc.
 */
#include "ty_heap.h"
#include "ty_symbols.h"
#include "ty_units.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set, NUL-terminated and not empty. */
static const char *
var(const char *name)
{
    const char *s = getenv(name);

    return s != NULL && *s != '\0' ? s : NULL;
}

static void
read_rate(struct ty__heap_env *e)
{
    const char *s = var("TESTYARD_HEAP_RATE");
    char why[128];

    if (s == NULL)
        return;
    if (ty__parse_size(s, &e->rate, why, sizeof(why)) == 0) {
        e->rate_set = true;
        return;
    }
    e->rate = TY_HEAP_DEFAULT_RATE;
    snprintf(e->bad[TY_HEAP_VAR_RATE], TY_HEAP_BAD_MAX,
             "TESTYARD_HEAP_RATE=\"%.40s\": %s; sampling every %u bytes", s,
             why, TY_HEAP_DEFAULT_RATE);
}

static void
read_interval(struct ty__heap_env *e)
{
    const char *s = var("TESTYARD_HEAP_PROFILE_INTERVAL");
    char why[128];

    if (s == NULL ||
        ty__parse_duration(s, &e->interval_ns, why, sizeof(why)) == 0)
        return;
    e->interval_ns = 0;
    snprintf(e->bad[TY_HEAP_VAR_INTERVAL], TY_HEAP_BAD_MAX,
             "TESTYARD_HEAP_PROFILE_INTERVAL=\"%.40s\": %s; no periodic "
             "snapshots",
             s, why);
}

/* TESTYARD_HEAP_PEAK_STEP: a size, 0 or off. */
static void
read_peak_step(struct ty__heap_env *e)
{
    const char *s = var("TESTYARD_HEAP_PEAK_STEP");
    char why[128];

    if (s == NULL)
        return;
    if (strcmp(s, "off") == 0) {
        e->peak_step = 0;
        return;
    }
    if (ty__parse_size(s, &e->peak_step, why, sizeof(why)) == 0)
        return;
    e->peak_step = TY_HEAP_PEAK_STEP;
    snprintf(e->bad[TY_HEAP_VAR_PEAK_STEP], TY_HEAP_BAD_MAX,
             "TESTYARD_HEAP_PEAK_STEP=\"%.40s\": %s, or off; a peak "
             "snapshot every %llu MiB the heap grows",
             s, why, (unsigned long long)(TY_HEAP_PEAK_STEP >> 20));
}

static void
read_peak_interval(struct ty__heap_env *e)
{
    const char *s = var("TESTYARD_HEAP_PEAK_INTERVAL");
    char why[128];

    if (s == NULL ||
        ty__parse_duration(s, &e->peak_interval_ns, why, sizeof(why)) == 0)
        return;
    e->peak_interval_ns = TY_HEAP_PEAK_INTERVAL_NS;
    snprintf(e->bad[TY_HEAP_VAR_PEAK_INTERVAL], TY_HEAP_BAD_MAX,
             "TESTYARD_HEAP_PEAK_INTERVAL=\"%.40s\": %s; at most one peak "
             "snapshot a second",
             s, why);
}

static void
read_unwind(struct ty__heap_env *e)
{
    const char *s = var("TESTYARD_HEAP_UNWIND");

    if (s == NULL || strcmp(s, "auto") == 0)
        return;
    if (strcmp(s, "fp") == 0)
        e->unwind = TY_UNWIND_FP;
    else if (strcmp(s, "backtrace") == 0)
        e->unwind = TY_UNWIND_BACKTRACE;
    else
        snprintf(e->bad[TY_HEAP_VAR_UNWIND], TY_HEAP_BAD_MAX,
                 "TESTYARD_HEAP_UNWIND=\"%.40s\": expected auto, fp or "
                 "backtrace; using auto",
                 s);
}

static void
read_signal(struct ty__heap_env *e)
{
    const char *s = var("TESTYARD_HEAP_SIGNAL");

    if (s == NULL || (e->sig = ty__parse_signal(s)) >= 0)
        return;
    e->sig = SIGUSR2;
    snprintf(e->bad[TY_HEAP_VAR_SIGNAL], TY_HEAP_BAD_MAX,
             "TESTYARD_HEAP_SIGNAL=\"%.40s\": expected USR1, USR2, RTMIN+n, "
             "a number or none; using USR2",
             s);
}

/* TESTYARD_HEAP_DEBUG_DIRS: absolute folders, colon-separated; a relative
 * one would depend on the program's working directory and is left out. */
static void
read_debug_dirs(struct ty__heap_env *e)
{
    const char *s = var("TESTYARD_HEAP_DEBUG_DIRS");
    char *bad = e->bad[TY_HEAP_VAR_DEBUG_DIRS];

    if (s == NULL)
        return;
    if (strlen(s) >= TY_SYMBOLS_DIRS_MAX) {
        snprintf(bad, TY_HEAP_BAD_MAX,
                 "TESTYARD_HEAP_DEBUG_DIRS: longer than %d bytes; looking "
                 "for debug files under %s",
                 TY_SYMBOLS_DIRS_MAX - 1, TY_SYMBOLS_DEBUG_DIR);
        return;
    }
    e->debug_dirs = s;
    for (const char *p = s; *p != '\0'; p += strcspn(p, ":")) {
        size_t n;

        p += *p == ':';
        n = strcspn(p, ":");
        if (n > 0 && *p != '/') {
            snprintf(bad, TY_HEAP_BAD_MAX,
                     "TESTYARD_HEAP_DEBUG_DIRS: \"%.*s\" is not an absolute "
                     "path; left out",
                     (int)(n < 60 ? n : 60), p);
            return;
        }
    }
}

void
ty__heap_env_read(struct ty__heap_env *e)
{
    const char *s = getenv("TESTYARD_HEAP_AT_EXIT");

    memset(e, 0, sizeof(*e));
    e->rate = TY_HEAP_DEFAULT_RATE;
    e->unwind = TY_UNWIND_AUTO;
    e->sig = SIGUSR2;
    e->peak_step = TY_HEAP_PEAK_STEP;
    e->peak_interval_ns = TY_HEAP_PEAK_INTERVAL_NS;
    e->at_exit = s == NULL || strcmp(s, "0") != 0;
    e->dir = var("TESTYARD_HEAP_DIR");
    if (e->dir == NULL)
        e->dir = var("TEST_OUTPUTS_PATH");
    if (e->dir == NULL)
        e->dir = ".";
    read_rate(e);
    read_interval(e);
    read_unwind(e);
    read_signal(e);
    read_peak_step(e);
    read_peak_interval(e);
    read_debug_dirs(e);
}

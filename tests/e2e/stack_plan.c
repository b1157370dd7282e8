/*
 * stack_plan.c — a leak behind a shared allocation helper, for the heap
 * stack suites (tests/e2e/heap-stacks.sh on local:exec,
 * tests/docker/heap-stacks.sh on local:docker; its manifest is
 * stack_manifest.yaml). Half the blocks are allocated through main →
 * stk_plan_fill → stk_helper_alloc → malloc before ty_main, the other half
 * through ty_main → stk_case → stk_plan_fill → stk_helper_alloc → malloc;
 * each function is noinline with a name of its own, so a whole stack names
 * every one of them. (main's own frame is not on the second stack: it
 * tail-calls ty_main.) The case also copies a long text with strdup, in
 * libc, which keeps no frame pointers: only backtrace() finds
 * stk_dup_text above it.
 *
 * The case "peak" (tests/e2e/heap-peak.sh, tests/docker/heap-peak.sh)
 * keeps PEAK_BLOCKS MiB allocated, besides main's 32, for a while longer
 * than the peak snapshots' interval, frees them and ends: the heap-peak
 * profile must show the peak (128 MiB) the heap-end one no longer does.
 */
#include "testyard.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCKS 64
#define BLOCK (1 << 20)
#define DUPS 16
#define PEAK_BLOCKS 96

void *volatile stk_blocks[BLOCKS];
void *volatile stk_peak_blocks[PEAK_BLOCKS];
char *volatile stk_dups[DUPS];
static char stk_text[BLOCK];

__attribute__((noinline)) void *stk_helper_alloc(size_t n);
__attribute__((noinline)) void stk_plan_fill(int from, int to);
__attribute__((noinline)) void stk_dup_text(void);

void *
stk_helper_alloc(size_t n)
{
    void *p = malloc(n);

    if (p != NULL)
        memset(p, 1, n);
    return p;
}

void
stk_plan_fill(int from, int to)
{
    for (int i = from; i < to; i++)
        stk_blocks[i] = stk_helper_alloc(BLOCK);
}

/* 16 copies of 1 MiB: each is sampled with probability 1 - e^-2 at the
 * default rate, so some are. */
void
stk_dup_text(void)
{
    memset(stk_text, 'x', sizeof(stk_text) - 1);
    for (int i = 0; i < DUPS; i++)
        stk_dups[i] = strdup(stk_text);
}

static int
stk_case(struct ty *ty)
{
    stk_plan_fill(BLOCKS / 2, BLOCKS);
    stk_dup_text();
    if (ty_heap_snapshot(ty, "leak") < 0)
        return ty_fail(ty, "snapshot: %s", ty_errmsg(ty));
    return 0;
}

__attribute__((noinline)) static void
stk_peak_fill(void)
{
    for (int i = 0; i < PEAK_BLOCKS; i++)
        stk_peak_blocks[i] = stk_helper_alloc(BLOCK);
}

/* 96 MiB for 1.5 s: past the first step at once, and the interval (1 s)
 * passes while the heap stays at its high, so the last peak snapshot
 * shows all of it. */
static int
stk_peak(struct ty *ty)
{
    struct timespec hold = {1, 500000000};

    stk_peak_fill();
    nanosleep(&hold, NULL);
    for (int i = 0; i < PEAK_BLOCKS; i++) {
        free(stk_peak_blocks[i]);
        stk_peak_blocks[i] = NULL;
    }
    if (ty_heap_snapshot(ty, "end") < 0)
        return ty_fail(ty, "snapshot: %s", ty_errmsg(ty));
    return 0;
}

static const struct ty_case cases[] = {
    {"leak", stk_case}, {"peak", stk_peak}, {NULL, NULL}};

int
main(int argc, char **argv)
{
    stk_plan_fill(0, BLOCKS / 2);
    return ty_main(argc, argv, cases);
}

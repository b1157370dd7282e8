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
 */
#include "testyard.h"

#include <stdlib.h>
#include <string.h>

#define BLOCKS 64
#define BLOCK (1 << 20)
#define DUPS 16

void *volatile stk_blocks[BLOCKS];
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

static const struct ty_case cases[] = {{"leak", stk_case}, {NULL, NULL}};

int
main(int argc, char **argv)
{
    stk_plan_fill(0, BLOCKS / 2);
    return ty_main(argc, argv, cases);
}

/*
 * stack_plan.c — a leak behind a shared allocation helper, for the heap
 * stack suites (tests/e2e/heap-stacks.sh on local:exec,
 * tests/docker/heap-stacks.sh on local:docker; its manifest is
 * stack_manifest.yaml). Half the blocks are allocated through main →
 * stk_plan_fill → stk_helper_alloc → malloc before ty_main, the other half
 * through ty_main → stk_case → stk_plan_fill → stk_helper_alloc → malloc;
 * each function is noinline with a name of its own, so a whole stack names
 * every one of them. (main's own frame is not on the second stack: it
 * tail-calls ty_main.)
 */
#include "testyard.h"

#include <stdlib.h>
#include <string.h>

#define BLOCKS 64
#define BLOCK (1 << 20)

void *volatile stk_blocks[BLOCKS];

__attribute__((noinline)) void *stk_helper_alloc(size_t n);
__attribute__((noinline)) void stk_plan_fill(int from, int to);

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

static int
stk_case(struct ty *ty)
{
    stk_plan_fill(BLOCKS / 2, BLOCKS);
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

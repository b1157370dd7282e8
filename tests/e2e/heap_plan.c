/*
 * heap_plan.c — a test plan using the SDK's memory calls, built and run
 * standalone by tests/e2e/heap-pprof.sh (files land in TEST_OUTPUTS_PATH).
 */
#include "testyard.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

void *volatile plan_blocks[300];

__attribute__((noinline)) void plan_keep_blocks(void);

void
plan_keep_blocks(void)
{
    for (int i = 0; i < 300; i++)
        plan_blocks[i] = malloc(1 << 20);
}

static int
run_snap(struct ty *ty)
{
    int rc;

    plan_keep_blocks();
    if ((rc = ty_heap_snapshot(ty, "one")) < 0)
        return ty_fail(ty, "snapshot: %s", ty_errmsg(ty));
    for (int round = 1; round <= 2; round++)
        if ((rc = ty_memory_round_end(ty, round)) < 0)
            return ty_fail(ty, "round end: %s", ty_errmsg(ty));
    for (int i = 0; i < 4; i++)
        if ((rc = ty_memory_event(ty)) < 0)
            return ty_fail(ty, "event: %s", ty_errmsg(ty));
    if (ty_heap_snapshot(ty, "../escape") != -EINVAL)
        return ty_fail(ty, "a bad label was accepted");
    usleep(1000 * 1000); /* periodic snapshots, when asked for */
    return 0;
}

static const struct ty_case cases[] = {{"snap", run_snap}, {NULL, NULL}};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}

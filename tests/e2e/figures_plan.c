/*
 * figures_plan.c — the plan "figures" of tests/helpers/lib.sh
 * (check_figures): each of `rounds` rounds keeps 8 MiB more, touched, and
 * ends with ty_memory_round_end; then, with nothing changing for a while
 * on either side so that the coordinator's memory.csv samples the same
 * figure, a snapshot "hold" whose sidecar's cgroup reading can be set
 * against memory.csv.
 */
#include "testyard.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUND_BYTES (8 << 20)

static int
run_rounds(struct ty *ty)
{
    int64_t rounds = 3;

    if (ty_param_has(ty, "rounds") && ty_param_int(ty, "rounds", &rounds) < 0)
        return ty_fail(ty, "rounds: %s", ty_errmsg(ty));
    for (int r = 1; r <= rounds; r++) {
        char *block = malloc(ROUND_BYTES);

        if (block == NULL)
            return ty_fail(ty, "round %d: out of memory", r);
        memset(block, r, ROUND_BYTES); /* kept: 8 MiB more each round */
        if (ty_memory_round_end(ty, r) < 0)
            return ty_fail(ty, "round %d: %s", r, ty_errmsg(ty));
    }
    usleep(800 * 1000);
    if (ty_heap_snapshot(ty, "hold") < 0)
        return ty_fail(ty, "snapshot: %s", ty_errmsg(ty));
    usleep(800 * 1000);
    return 0;
}

static const struct ty_case cases[] = {{"rounds", run_rounds}, {NULL, NULL}};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}

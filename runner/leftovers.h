/*
 * leftovers.h — what a run whose coordinator died leaves on this host,
 * found and removed by `testyard clean`: its cgroups (local:exec) and the
 * runner's scratch in its run folder (.sync/, .tmp/, half-written files
 * at the folder's top level).
 *
 * Nothing here decides whether a coordinator is gone (run_lock.h does)
 * and nothing prints; the caller says what was done.
 */
#ifndef TY_RUNNER_LEFTOVERS_H
#define TY_RUNNER_LEFTOVERS_H

#include "cgroup.h"
#include "err.h"

#include <stdbool.h>

/* Kill what runs in the cgroups of run_id and remove them (with dry, only
 * count them); *n gets how many instance cgroups there were. */
int leftovers_cgroups(const struct cgroup_sys *sys, const char *run_id,
                      bool dry, int *n, struct err *err);

/* What the run folder held. */
struct leftovers_scratch {
    bool sync, tmp; /* .sync/, .tmp/ */
    int partial;    /* top-level *.partial and *.tmp.<pid> files */
};

/* Remove the scratch of the run folder named id in runs (no link is
 * followed, no mount point crossed; with dry, only look). */
int leftovers_scratch(const char *runs, const char *id, bool dry,
                      struct leftovers_scratch *out, struct err *err);

#endif

/*
 * memory-stress — one provider serves random files as DAGs of hashed
 * blocks, requestors fetch and verify every block over TCP, round after
 * round, while testyard watches both sides' memory. Modelled on
 * go-graphsync's stress test plan; docs/memory-stress.md describes it for
 * users.
 *
 * Roles follow the group id ("providers", "requestors"; the manifest's
 * case admits no other). Every instance goes through the same barriers:
 *
 *   next-<n>     the round starts
 *   ready-<n>    the provider has built the round's DAGs and published
 *                their roots on "roots-<n>"
 *   fetched-<n>  every requestor has every block (requestors only signal
 *                it; the provider waits for it, then stops serving)
 *   finish-<n>   the round is over: transfers done, the round's blocks
 *                freed and the memory snapshots taken (round-<n>-peak
 *                was taken earlier, while the blocks were live)
 *   done         after the last round
 *
 * Each wait ends by the round's deadline (round_timeout, else the run's),
 * and fails at once when another instance dies, naming it.
 */
#include "ms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum role { PROVIDER, REQUESTOR };

int
ms_sync(struct ty *ty, const char *state, int n, int64_t deadline)
{
    char name[64];

    if (n > 0)
        snprintf(name, sizeof(name), "%s-%d", state, n);
    else
        snprintf(name, sizeof(name), "%s", state);
    if (ty_signal_and_wait(ty, name, ty_plan_instance_count(ty),
                           ms_timeout_ms(deadline)) < 0)
        return ty_fail(ty, "%s: %s", name, ty_errmsg(ty));
    return 0;
}

void
ms_memory_event(struct ty *ty)
{
    static atomic_bool told;

    if (ty_memory_event(ty) < 0 && !atomic_exchange(&told, true))
        ty_message(ty, "memory snapshot: %s (further failures not shown)",
                   ty_errmsg(ty));
}

void
ms_round_peak(struct ty *ty, const struct ms_config *cfg, int n)
{
    char label[32];

    if (cfg->snapshots == MS_SNAP_NONE)
        return;
    snprintf(label, sizeof(label), "round-%d-peak", n);
    if (ty_heap_snapshot(ty, label) < 0)
        ty_message(ty, "round %d: peak snapshot: %s", n, ty_errmsg(ty));
}

/* The instance's role, after checking the run has exactly one provider. */
static int
pick_role(struct ty *ty, enum role *role)
{
    const char *g = ty_group_id(ty);
    int mine = ty_group_instance_count(ty), all = ty_plan_instance_count(ty);
    int providers;

    if (strcmp(g, "providers") == 0) {
        *role = PROVIDER;
        providers = mine;
    } else if (strcmp(g, "requestors") == 0) {
        *role = REQUESTOR;
        providers = all - mine;
    } else {
        return ty_fail(ty,
                       "group \"%s\": this plan's roles are the groups "
                       "\"providers\" and \"requestors\"",
                       g);
    }
    if (providers != 1)
        return ty_fail(ty,
                       "the run has %d providers; memory-stress serves "
                       "from exactly one (groups: providers with count 1, "
                       "requestors with any count)",
                       providers);
    if (all - providers < 1)
        return ty_fail(ty, "the run has no requestors");
    return 0;
}

static void
round_end_snapshots(struct ty *ty, int n)
{
    if (ty_memory_round_end(ty, n) < 0)
        ty_message(ty, "round %d: memory snapshots: %s", n, ty_errmsg(ty));
}

static int
run_rounds(struct ty *ty, const struct ms_config *cfg, enum role role,
           struct ms_provider *prov)
{
    int total = ms_config_total_rounds(cfg);

    for (int n = 1; n <= total; n++) {
        struct ms_round r;
        int rc;

        ms_round_init(cfg, n, &r);
        if (ms_sync(ty, "next", n, r.deadline) < 0)
            return -1;
        rc = role == PROVIDER ? ms_provider_round(prov, &r)
                              : ms_requestor_round(ty, cfg, &r);
        if (rc < 0)
            return -1;
        round_end_snapshots(ty, n);
        if (ms_sync(ty, "finish", n, r.deadline) < 0)
            return -1;
    }
    return ms_sync(ty, "done", 0, ms_run_deadline());
}

static int
run_stress(struct ty *ty)
{
    struct ms_config cfg;
    struct ms_provider *prov = NULL;
    enum role role = REQUESTOR;
    int rc;

    if (pick_role(ty, &role) < 0)
        return -1;
    if (ms_config_load(ty, &cfg) < 0) {
        ms_config_release(&cfg);
        return -1;
    }
    ty_message(ty,
               "%s: %d rounds (%d × %d latency/bandwidth points), "
               "%d files of %s per round, blocks of 2^%u bytes, %s leaves",
               role == PROVIDER ? "provider" : "requestor",
               ms_config_total_rounds(&cfg), cfg.rounds, cfg.nsweep,
               cfg.concurrency, cfg.size_tag, cfg.chunk_size,
               cfg.raw_leaves ? "raw" : "wrapped");
    if (role == PROVIDER && (prov = ms_provider_new(ty, &cfg)) == NULL)
        rc = -1;
    else
        rc = run_rounds(ty, &cfg, role, prov);
    ms_provider_destroy(&prov);
    ms_config_release(&cfg);
    return rc;
}

static const struct ty_case cases[] = {
    {"stress", run_stress},
    {NULL, NULL},
};

int
main(int argc, char **argv)
{
    return ty_main(argc, argv, cases);
}

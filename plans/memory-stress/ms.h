/*
 * ms.h — the memory-stress plan's parameters, rounds and roles.
 *
 * main.c reads the parameters (config.c), checks the roles, and runs the
 * rounds; provider.c and requestor.c do one round of their role each;
 * server.c is the provider's TCP responder and fetch.c a requestor's
 * transfers. Every round is framed by the same barriers for every
 * instance (see main.c).
 */
#ifndef MS_H
#define MS_H

#include "dag.h"
#include "net.h"

#include <testyard.h>

#include <stdbool.h>
#include <stdint.h>

#define MS_TAG_LEN 48
#define MS_MSG_LEN 1024

/* One point of the latency × bandwidth sweep. */
struct ms_net {
    int64_t latency_ns;
    uint64_t bandwidth; /* bytes per second, 0 = unlimited */
    char latency_tag[MS_TAG_LEN];
    char bandwidth_tag[MS_TAG_LEN];
};

enum ms_snapshots { MS_SNAP_NONE, MS_SNAP_SIMPLE, MS_SNAP_DETAILED };

struct ms_config {
    uint64_t size;
    int concurrency;
    unsigned chunk_size; /* log2 of the leaf size */
    uint32_t links_per_level;
    bool raw_leaves;
    uint64_t max_memory_per_peer, max_memory_total;
    int rounds; /* repeats of the sweep */
    struct ms_net *sweep;
    int nsweep;
    int64_t round_timeout_ns; /* 0: the run's deadline only */
    uint64_t leak_per_round;
    int64_t corrupt_block; /* -1: never */
    int hash_threads;
    enum ms_snapshots snapshots;
    char size_tag[MS_TAG_LEN];
};

/* What a round is: its number (from 1), its sweep point, its deadline and
 * the tags every metric of the round carries. */
struct ms_round {
    int n;
    const struct ms_net *net;
    int64_t deadline;
    char tags[4 * MS_TAG_LEN + 64];
};

/* config.c: read and check every parameter; 0, or ty_fail's -1. The
 * caller releases with ms_config_release. */
int ms_config_load(struct ty *ty, struct ms_config *cfg);
void ms_config_release(struct ms_config *cfg);
/* Rounds in the run: rounds × the sweep's points. */
int ms_config_total_rounds(const struct ms_config *cfg);
/* Set up round n (from 1): its sweep point, tags and deadline. */
void ms_round_init(const struct ms_config *cfg, int n, struct ms_round *r);
/* name + "," + the round's tags into buf, for a metric. */
const char *ms_metric(const struct ms_round *r, const char *name, char *buf,
                      size_t size);

/* The SDK's memory_snapshots helper for a per-block event; a failure is
 * reported once as a message, never fails the round. */
void ms_memory_event(struct ty *ty);

/* With memory snapshots on (simple or detailed), the heap snapshot
 * "round-<n>-peak" while the round's blocks are live — the provider's
 * halfway through serving, a requestor's once it has every block — so the
 * report shows what the round held at its peak. A failure is a message,
 * never the round's. */
void ms_round_peak(struct ty *ty, const struct ms_config *cfg, int n);

/* provider.c */
struct ms_provider;
struct ms_provider *ms_provider_new(struct ty *ty, const struct ms_config *cfg);
int ms_provider_round(struct ms_provider *p, const struct ms_round *r);
void ms_provider_destroy(struct ms_provider **p);

/* requestor.c */
int ms_requestor_round(struct ty *ty, const struct ms_config *cfg,
                       const struct ms_round *r);

/* main.c: signal state-<n> and wait for every instance, before the
 * round's deadline; 0 or ty_fail's -1 naming the state. */
int ms_sync(struct ty *ty, const char *state, int n, int64_t deadline);

#endif

/*
 * fetch.h — a requestor's transfers for one round: one TCP connection and
 * one thread per root, all at once, and a pool of threads that verify
 * leaves (protocol in net.h).
 *
 * Blocks arrive in pre-order; each is checked against the link that named
 * it (length, then SHA-256), tree nodes on the receiving thread before
 * their links are trusted, leaves in the pool. Verified blocks go into the
 * caller's store.
 */
#ifndef MS_FETCH_H
#define MS_FETCH_H

#include "ms.h"

/* What the requestor fetches from, as the provider published it. */
struct ms_source {
    char host[64];
    int port;
    struct ms_link *roots;
    int nroots;
};

struct ms_fetch_result {
    uint64_t blocks, bytes; /* verified */
    double *secs;           /* per root: how long its transfer took */
    bool lost;              /* the failure was a connection lost */
    char why[MS_MSG_LEN];   /* the first failure */
};

/* Fetch and verify every block under every root into store (which the
 * caller releases). 0, or -1 with res->why. res->secs has nroots slots
 * the caller provides. */
int ms_fetch_round(struct ty *ty, const struct ms_config *cfg,
                   const struct ms_round *r, const struct ms_source *src,
                   struct ms_store *store, struct ms_fetch_result *res);

#endif

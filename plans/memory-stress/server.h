/*
 * server.h — the provider's TCP responder (protocol in net.h).
 *
 * The server listens for the whole run and serves one round at a time:
 * ms_server_begin_round hands it the round's store (borrowed until
 * ms_server_end_round returns), and every connection of the round gets a
 * responder thread that walks the DAG and queues copies of the blocks as
 * response frames under the memory budget, and a sender thread that
 * writes them, delayed by the round's latency and paced by its bandwidth.
 */
#ifndef MS_SERVER_H
#define MS_SERVER_H

#include "ms.h"

struct ms_server;

/* What a round's connections did. */
struct ms_serve_stats {
    uint64_t blocks, bytes; /* blocks written, and their bytes */
    uint64_t transfers, failed;
    uint64_t queue_peak;   /* most bytes queued at once */
    uint64_t budget_waits; /* times a responder waited for budget */
    char why[MS_MSG_LEN];  /* the first failure, or "" */
};

/* Listen and start accepting; NULL with why filled in. The caller owns
 * the server (ms_server_destroy). */
struct ms_server *ms_server_new(struct ty *ty, const struct ms_config *cfg,
                                char *why, size_t whylen);
/* Where requestors connect: host is borrowed from the server. */
void ms_server_address(const struct ms_server *s, const char **host, int *port);
void ms_server_begin_round(struct ms_server *s, const struct ms_round *r,
                           const struct ms_store *store);
/* Wait for every connection of the round to end — at once when abort is
 * true (their sockets are shut down) — and forget the store. */
void ms_server_end_round(struct ms_server *s, bool abort,
                         struct ms_serve_stats *st);
void ms_server_destroy(struct ms_server **s);

#endif
